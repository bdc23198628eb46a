package main

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

//go:generate go run ./internal/demoimage/render -o assets/demo.png

// demoPNG is the picture the demo pools (internal/demoimage draws it).
//
//go:embed assets/demo.png
var demoPNG []byte

func init() {
	register(&command{
		name:    "demo",
		summary: "pool a picture with every kernel, forward and backward, and write PNGs",
		usage: `[--device D] [--out DIR]

Runs the pooling family on a 256x256 RGB picture built into vkmps: max,
average, L2-norm and dilated max (dilation 2), each with a 3x3 window,
stride 2, "same" padding and clamped edges, forward and then backward with
the gradient of the loss L = sum(y^2)/2 (so dy = y). It prints the device,
the GPU time of each pass (from timestamps, or the wall clock where the
device has none), the shapes and value ranges, and whether the results
agree with the CPU reference (max exactly, the sums within 2e-5), and writes
into DIR (created if missing):

  input.png                       the picture
  max.png avg.png l2.png dilated-max.png                  the outputs
  max-grad.png avg-grad.png l2-grad.png dilated-max-grad.png
                                  the gradients dL/dx, as heatmaps: one
                                  panel per channel, red positive

The exit status is 1 if a result disagrees with the reference.

examples:
  vkmps demo
  vkmps demo --out /tmp/pooled --device llvmpipe
  make demo`,
		run: runDemo,
	})
}

// demoOps are the kernels the demo runs, with their file names.
var demoOps = []struct {
	file string
	kind ops.PoolingKind
	dil  int
}{
	{"max", ops.KindMax, 1}, {"avg", ops.KindAverage, 1}, {"l2", ops.KindL2Norm, 1}, {"dilated-max", ops.KindDilatedMax, 2},
}

// demoResult is one kernel's run.
type demoResult struct {
	y, dx            tensorio.Tensor
	fwd, bwd         time.Duration
	fwdDiff, bwdDiff float64 // largest |GPU - CPU reference|
	fwdErr, bwdErr   error   // the reference comparisons
	kernel           string
}

func runDemo(ctx context.Context, e *env, args []string) (err error) {
	c := commands["demo"]
	fs := newFlags(c, e)
	sel := fs.String("device", "", "device `D`: index or part of its name (default $VKMPS_DEVICE, then the best)")
	outDir := fs.String("out", "vkmps-demo", "output directory `DIR` (created if missing)")
	if err := parse(c, e, fs, args); err != nil {
		return err
	}
	x, err := tensorio.ReadPNG(bytes.NewReader(demoPNG))
	if err != nil {
		return fmt.Errorf("the built-in picture: %w", err)
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
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
	clock := "GPU time"
	if !dev.Limits().TimestampsSupported {
		clock = "wall time"
	}
	fmt.Fprintf(e.stdout, "vkmps demo on %s\n", dev.Info().Name)
	fmt.Fprintf(e.stdout, "input: the built-in picture %s, values [0, 1]; kernels 3x3, stride 2, padding same, edge clamp; dy = y\n\n", x.ShapeString())

	written := []string{"input.png"}
	if err := tensorio.WriteFile(filepath.Join(*outDir, "input.png"), func(w io.Writer) error {
		_, err := w.Write(demoPNG)
		return err
	}); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "kernel\toutput\ty range\tdx range\tforward\tbackward\tvs CPU reference\n")
	bad := 0
	var failures []string
	for _, op := range demoOps {
		r, err := demoRun(ctx, dev, op.kind, op.dil, x)
		if err != nil {
			return err
		}
		check := "exact"
		if r.fwdErr != nil || r.bwdErr != nil {
			check = "DIFFERS"
			bad++
		} else if r.fwdDiff > 0 || r.bwdDiff > 0 {
			check = fmt.Sprintf("max |diff| %.1e", math.Max(r.fwdDiff, r.bwdDiff))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.kernel, r.y.ShapeString(), valueRange(r.y.Data), valueRange(r.dx.Data),
			fmtDuration(r.fwd), fmtDuration(r.bwd), check)
		for _, w := range []struct {
			name string
			t    tensorio.Tensor
			kind tensorio.Kind
		}{{op.file + ".png", r.y, tensorio.Image}, {op.file + "-grad.png", r.dx, tensorio.Heatmap}} {
			if err := tensorio.Write(filepath.Join(*outDir, w.name), w.t, w.kind); err != nil {
				return err
			}
			written = append(written, w.name)
		}
		for _, err := range []error{r.fwdErr, r.bwdErr} {
			if err != nil {
				failures = append(failures, fmt.Sprintf("  %s: %v\n", r.kernel, err))
			}
		}
	}
	tw.Flush()
	fmt.Fprint(e.stdout, strings.Join(failures, ""))
	fmt.Fprintf(e.stdout, "(times: %s)\n\nwrote %d PNGs to %s: %s\n", clock, len(written), *outDir, strings.Join(written, " "))
	if bad > 0 {
		return fmt.Errorf("%w: %d kernel(s) disagree with the CPU reference on %s", errCheckFailed, bad, dev.Info().Name)
	}
	return nil
}

// demoRun pools x with kind on dev, forward then backward with dy = y, in
// two command buffers so that each pass is timed, and checks both against
// the CPU reference.
func demoRun(ctx context.Context, dev *vk.Device, kind ops.PoolingKind, dil int, x tensorio.Tensor) (res demoResult, err error) {
	g := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: dil, DilationY: dil}
	cfg := poolConfig{kind: kind, geom: g, policy: padding.WithMethod(padding.Same), edge: ops.EdgeClamp}
	k, err := cfg.newKernel(dev)
	if err != nil {
		return res, err
	}
	gk, err := ops.NewPoolingGradient(dev, k.Kind(), g)
	if err != nil {
		return res, err
	}
	res.kernel = k.Kind().String()
	src, err := newImageFrom(ctx, dev, x, "demo picture")
	if err != nil {
		return res, err
	}
	defer src.Close()

	var dst, dx *ops.Image
	var st *ops.PoolingGradientState
	res.fwd, err = timed(ctx, dev, func(cb *vk.CommandBuffer) (err error) {
		dst, st, err = k.EncodeNewWithState(cb, src)
		return err
	})
	if dst != nil {
		defer dst.Close()
		defer st.Close()
	}
	if err != nil {
		return res, err
	}
	// dy = y: the gradient of sum(y^2)/2 is y itself, so the output image
	// is the gradient's source.
	res.bwd, err = timed(ctx, dev, func(cb *vk.CommandBuffer) (err error) {
		dx, err = gk.EncodeNew(cb, dst, src, st)
		return err
	})
	if dx != nil {
		defer dx.Close()
	}
	if err != nil {
		return res, err
	}
	d := dst.Descriptor()
	res.y = tensorio.Tensor{N: d.N, C: d.C, H: d.H, W: d.W, Rank: x.Rank}
	if res.y.Data, err = dst.Read(ctx); err != nil {
		return res, err
	}
	res.dx = tensorio.Tensor{N: x.N, C: x.C, H: x.H, W: x.W, Rank: x.Rank}
	if res.dx.Data, err = dx.Read(ctx); err != nil {
		return res, err
	}

	// The CPU reference of the same encode.
	geom := stateGeometry(st)
	in, err := ref.TensorOf(x.N, x.C, x.H, x.W, x.Data)
	if err != nil {
		return res, err
	}
	want := ref.NewTensor[float32](d.N, d.C, d.H, d.W)
	if res.fwdErr = ref.Pool(geom, in, &want); res.fwdErr == nil {
		res.fwdErr = ref.Compare(refKind(kind), res.y.Data, want.Data)
		res.fwdDiff = maxDiff(res.y.Data, want.Data)
	}
	dy, err := ref.TensorOf(d.N, d.C, d.H, d.W, res.y.Data)
	if err != nil {
		return res, err
	}
	wantDx := ref.NewTensor[float32](x.N, x.C, x.H, x.W)
	if res.bwdErr = ref.PoolGradient(geom, in, dy, &wantDx); res.bwdErr == nil {
		res.bwdErr = ref.Compare(refKind(kind), res.dx.Data, wantDx.Data)
		res.bwdDiff = maxDiff(res.dx.Data, wantDx.Data)
	}
	return res, nil
}

// timed records encode on a command buffer, runs it and returns its GPU
// time (from timestamps where the device has them, else the wall clock
// from commit to completion).
func timed(ctx context.Context, dev *vk.Device, encode func(cb *vk.CommandBuffer) error) (time.Duration, error) {
	var opts []vk.CommandBufferOption
	ts := dev.Limits().TimestampsSupported
	if ts {
		opts = append(opts, vk.WithTimestamps())
	}
	cb, err := dev.NewCommandBuffer(opts...)
	if err != nil {
		return 0, err
	}
	defer cb.Close()
	if err := encode(cb); err != nil {
		return 0, err
	}
	start := time.Now()
	if err := cb.Commit(); err != nil {
		return 0, err
	}
	if err := cb.Wait(ctx); err != nil {
		return 0, err
	}
	wall := time.Since(start)
	if ts {
		if d, err := cb.GPUTime(); err == nil {
			return d, nil
		}
	}
	return wall, nil
}

// valueRange formats the least and greatest values of d.
func valueRange(d []float32) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range d {
		lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
	}
	return fmt.Sprintf("[%.3g, %.3g]", lo, hi)
}

// maxDiff is the largest |a[i] - b[i]|.
func maxDiff(a, b []float32) float64 {
	m := 0.0
	for i := range min(len(a), len(b)) {
		m = math.Max(m, math.Abs(float64(a[i])-float64(b[i])))
	}
	return m
}
