package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/progress"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

func init() {
	register(&command{
		name:    "selfcheck",
		summary: "check the device's results against the CPU reference (is my driver right?)",
		usage: `[--device D] [--cases N] [--seed S]

Runs every pooling kernel forward and backward on the chosen device over a
randomised table and compares each result with vkmps's CPU reference: max
kernels exactly, the sums (average, L2 norm) within a relative 2e-5
(ref.SumTolerance). Per kernel family, N random cases (default 20): kernel
sizes 1-7 and 15, strides 1-4, dilations 1-3, both edge modes, every
MPSNNPaddingMethod, the TensorFlow, Caffe and PyTorch padding presets, zero
pads, ExcludeEdges, offsets and clip rectangles, batches and odd channel
counts, ties and NaNs for max, argmax recorded or recomputed. The same seed
gives the same table; cases are drawn as they run, so any N takes little
memory (Ctrl-C stops it). When run inside the vkmps source tree, the 180 PyTorch
cases of ops/testdata/torch/pool_cases.json are checked too (they are not
built into the binary).

A progress bar goes to stderr when it is a terminal; then a table of the
kernels, passed or failed, and the first failures. The exit status is 0
when every kernel passed, 1 when one failed, 2 on any other error.

examples:
  vkmps selfcheck
  vkmps selfcheck --device 1 --cases 200 --seed 7`,
		run: runSelfcheck,
	})
}

// torchCasesFile is where the PyTorch cases live in the source tree.
var torchCasesFile = filepath.Join("ops", "testdata", "torch", "pool_cases.json")

// selfcheckHook, when set (by tests), may change a GPU result before it is
// compared: kernel is the kernel's name, e.g. "PoolingAverageGradient".
var selfcheckHook func(kernel string, got []float32)

// kernelTally counts the checks of one kernel.
type kernelTally struct {
	name                  string
	random, torch, failed int
	failures              []string // the first few
}

func (t *kernelTally) add(c checkCase, err error) {
	if c.wantY != nil {
		t.torch++
	} else {
		t.random++
	}
	if err != nil {
		t.failed++
		if len(t.failures) < 3 {
			t.failures = append(t.failures, fmt.Sprintf("%s: %s: %v", t.name, c.name, err))
		}
	}
}

func runSelfcheck(ctx context.Context, e *env, args []string) (err error) {
	c := commands["selfcheck"]
	fs := newFlags(c, e)
	sel := fs.String("device", "", "device `D`: index or part of its name (default $VKMPS_DEVICE, then the best)")
	n := fs.Int("cases", 20, "random cases per kernel family `N`")
	seed := fs.Int64("seed", 1, "random seed `S` of the table")
	if err := parse(c, e, fs, args); err != nil {
		return err
	}
	if *n < 0 || *n > 1_000_000 {
		return usageError(c, fmt.Errorf("--cases: %d is out of range: want 0 to 1000000", *n))
	}

	// The random cases are drawn one at a time as they run (the table's
	// memory does not grow with --cases); the same seed gives the same
	// table. The PyTorch cases, a fixed file, run after them.
	r := rand.New(rand.NewSource(*seed))
	var tcs []ref.TorchCase
	torchNote := "PyTorch cases: not found (run from the vkmps source tree to check them too)"
	if path, ok := findUp(torchCasesFile); ok {
		if tcs, err = ref.LoadTorchCases(path); err != nil {
			return err
		}
		torchNote = fmt.Sprintf("PyTorch cases: %d from %s", len(tcs), path)
	}
	total := len(checkKinds)**n + len(tcs)
	next := func(i int) checkCase {
		if i < len(checkKinds)**n {
			return randomCase(r, checkKinds[i / *n], i%*n)
		}
		return torchCase(tcs[i-len(checkKinds)**n], i-len(checkKinds)**n)
	}

	dev, err := openCmdDevice(*sel)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeCmdDevice(dev); err == nil {
			err = cerr
		}
	}()
	tallies := map[string]*kernelTally{}
	var order []string
	tally := func(name string) *kernelTally {
		if tallies[name] == nil {
			tallies[name] = &kernelTally{name: name}
			order = append(order, name)
		}
		return tallies[name]
	}
	for _, kind := range checkKinds {
		tally(kind.String())
		tally(kind.String() + "Gradient")
	}

	fmt.Fprintf(e.stdout, "selfcheck on %s: %d random cases per kernel (seed %d); %s\n", dev.Info().Name, *n, *seed, torchNote)
	bar := progress.New(e.stderr, total, "selfcheck", progress.Options{})
	lost := false
	for i := 0; i < total; i++ {
		cs := next(i)
		bar.Describe(cs.kind.String())
		fwdErr, gradErr := checkOne(ctx, dev, r, cs)
		if ctx.Err() != nil {
			bar.Finish()
			return ctx.Err()
		}
		tally(cs.kind.String()).add(cs, fwdErr)
		tally(cs.kind.String()+"Gradient").add(cs, gradErr)
		bar.Add(1)
		if errors.Is(fwdErr, vk.ErrDeviceLost) || errors.Is(gradErr, vk.ErrDeviceLost) {
			lost = true
			break
		}
	}
	bar.Finish()

	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kernel\trandom\tPyTorch\tresult")
	failed := 0
	for _, name := range order {
		t := tallies[name]
		result := "ok"
		if t.failed > 0 {
			result = fmt.Sprintf("FAIL (%d of %d)", t.failed, t.random+t.torch)
			failed++
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", name, t.random, t.torch, result)
	}
	tw.Flush()
	for _, name := range order {
		for _, f := range tallies[name].failures {
			fmt.Fprintln(e.stdout, "  "+f)
		}
	}
	switch {
	case lost:
		return fmt.Errorf("%w: the device was lost during the check", errCheckFailed)
	case failed > 0:
		return fmt.Errorf("%w: %d of %d kernels gave wrong results on %s", errCheckFailed, failed, len(order), dev.Info().Name)
	}
	fmt.Fprintf(e.stdout, "all %d kernels agree with the reference on %s\n", len(order), dev.Info().Name)
	return nil
}

// findUp looks for rel in the working directory and its parents.
func findUp(rel string) (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		p := filepath.Join(dir, rel)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// checkOne runs c forward (with its gradient state) and backward on dev
// in one command buffer and compares both results; an error of the run
// itself counts against both.
func checkOne(ctx context.Context, dev *vk.Device, r *rand.Rand, c checkCase) (fwdErr, gradErr error) {
	y, dx, dy, g, d, err := runCheckCase(ctx, dev, r, c)
	if err != nil {
		return err, err
	}
	kind := refKind(c.kind)
	if selfcheckHook != nil {
		selfcheckHook(c.kind.String(), y)
		selfcheckHook(c.kind.String()+"Gradient", dx)
	}
	if c.wantY != nil {
		return ref.Compare(kind, y, c.wantY), ref.Compare(kind, dx, c.wantDx)
	}

	s := c.src
	in, err := ref.TensorOf(s.N, s.C, s.H, s.W, c.input)
	if err != nil {
		return err, err
	}
	want := ref.NewTensor[float32](d.N, d.C, d.H, d.W)
	if c.policy == nil {
		fill(want.Data, poison)
	}
	if fwdErr = ref.Pool(g, in, &want); fwdErr == nil {
		fwdErr = ref.Compare(kind, y, want.Data)
	}
	dyT, err := ref.TensorOf(d.N, d.C, d.H, d.W, dy)
	if err != nil {
		return fwdErr, err
	}
	wantDx := ref.NewTensor[float32](s.N, s.C, s.H, s.W)
	if gradErr = ref.PoolGradient(g, in, dyT, &wantDx); gradErr == nil {
		gradErr = ref.Compare(kind, dx, wantDx.Data)
	}
	return fwdErr, gradErr
}

// poison fills destinations of the explicit form before the kernel runs,
// so pixels outside the clip, which must stay untouched, show.
const poison = 12345.5

func fill(d []float32, v float32) {
	for i := range d {
		d[i] = v
	}
}

// runCheckCase runs c on dev and returns the forward output y, the
// gradient dx for dy (c.dy, or drawn from r for the destination's size),
// and the reference geometry and destination shape of what the forward
// encode used (from its gradient state).
func runCheckCase(ctx context.Context, dev *vk.Device, r *rand.Rand, c checkCase) (y, dx, dy []float32, g ref.Geometry, d padding.Descriptor, err error) {
	k, err := ops.NewPooling(dev, c.kind, c.geom)
	if err != nil {
		return
	}
	props := k.Properties()
	props.EdgeMode = c.edge
	k.SetRecordArgmax(c.argmax)
	avg, _ := k.(*ops.PoolingAverage)
	if avg != nil {
		avg.ZeroPad = c.zeroPad
	}
	gk, err := ops.NewPoolingGradient(dev, c.kind, c.geom)
	if err != nil {
		return
	}
	s := c.src
	src, err := newImageFrom(ctx, dev, tensorOf(s.N, s.C, s.H, s.W, c.input), "source")
	if err != nil {
		return
	}
	defer src.Close()
	cb, err := dev.NewCommandBuffer()
	if err != nil {
		return
	}
	defer cb.Close()

	var dst *ops.Image
	var state *ops.PoolingGradientState
	if c.policy != nil {
		props.Padding = c.policy
		dst, state, err = k.EncodeNewWithState(cb, src)
	} else {
		props.Offset, props.ClipRect = c.off, c.clip
		avg, _ := k.(*ops.PoolingAverage)
		if avg != nil {
			avg.ExcludeEdges, avg.EdgePads = c.exclude, c.edgePads
		}
		dd := c.dst
		init := make([]float32, dd.N*dd.C*dd.H*dd.W)
		fill(init, poison)
		if dst, err = newImageFrom(ctx, dev, tensorOf(dd.N, dd.C, dd.H, dd.W, init), "destination"); err != nil {
			return
		}
		state, err = k.EncodeWithState(cb, src, dst)
	}
	if dst != nil {
		defer dst.Close()
	}
	if err != nil {
		return
	}
	defer state.Close()
	dd := dst.Descriptor()
	dy = c.dy
	if dy == nil {
		dy = ref.Normal(r, dd.N*dd.C*dd.H*dd.W)
	}
	dyIm, err := newImageFrom(ctx, dev, tensorOf(dd.N, dd.C, dd.H, dd.W, dy), "dy")
	if err != nil {
		return
	}
	defer dyIm.Close()
	dxIm, err := gk.EncodeNew(cb, dyIm, src, state)
	if err != nil {
		return
	}
	defer dxIm.Close()
	if err = cb.Commit(); err != nil {
		return
	}
	if err = cb.Wait(ctx); err != nil {
		return
	}
	if y, err = dst.Read(ctx); err != nil {
		return
	}
	if dx, err = dxIm.Read(ctx); err != nil {
		return
	}
	return y, dx, dy, stateGeometry(state), state.Destination, nil
}

func tensorOf(n, c, h, w int, data []float32) tensorio.Tensor {
	return tensorio.Tensor{N: n, C: c, H: h, W: w, Data: data, Rank: 4}
}
