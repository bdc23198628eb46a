package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
)

// slowestNodes is how many of the profiled step's nodes train synthetic
// prints, slowest first (its JSON has every node's time).
const slowestNodes = 12

const syntheticUsage = `FILE.json [--input NAME=N,C,H,W]... [--batch N] [--steps N] [--warmup D] [--dtype float32|float16]
                   [--optimizer OPT] [--lr F] [--momentum F] [--conv-tuning KEY=N,...] [--argmax=false] [--scratch-per-kernel]
                   [--upload] [--json FILE.jsonl] [--device D]

Measures training steps of a model on random data: the inputs the loss
depends on get normal random values (a softmax or categorical
cross-entropy's labels one-hot classes), shapes from the file's "inputs" or
--input (N defaults to --batch), written to the device once (--upload: fed
to every step). Prints the time per step (one queue
submission each: forward, gradients, every update), the GPU's busy time, and
the commands and barriers a step records, and the GPU time of one profiled
step split by op kind (from timestamps between the nodes' work) with its
slowest nodes (--json: every node's).

examples:
  vkmps train synthetic cmd/vkmps/models/resnet18.json --input x=32,3,224,224 --input labels=32,1000,1,1
  vkmps train synthetic resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --dtype float16`

type syntheticJob struct {
	file, dtype, json, device string
	batch, steps              int
	warmup                    time.Duration // --warmup
	inputs                    map[string][]int
	opt                       trainFlags
	tuning                    ops.ConvolutionTuning // --conv-tuning
	scratchPerKernel          bool
	upload                    bool // --upload: feed the inputs to every step
	argmax                    bool // --argmax: max pooling records its argmax
}

func runSynthetic(ctx context.Context, e *env, args []string) (err error) {
	sub := &command{name: "train synthetic", usage: syntheticUsage}
	j := &syntheticJob{inputs: map[string][]int{}}
	fs := newFlags(sub, e)
	fs.Func("input", "an input's shape `NAME=N,C,H,W` (or C,H,W: N = --batch)", func(s string) error {
		name, dims, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return fmt.Errorf("%q: want NAME=N,C,H,W", s)
		}
		var v []int
		for _, d := range strings.Split(dims, ",") {
			var n int
			if _, err := fmt.Sscan(d, &n); err != nil || n < 1 || n > 1<<20 {
				return fmt.Errorf("%q: sizes are numbers from 1 to 2^20", s)
			}
			v = append(v, n)
		}
		if len(v) != 3 && len(v) != 4 {
			return fmt.Errorf("%q: want 3 or 4 sizes", s)
		}
		j.inputs[name] = v
		return nil
	})
	fs.IntVar(&j.batch, "batch", 32, "batch size `N` for inputs given without one")
	fs.IntVar(&j.steps, "steps", 20, "timed training steps `N` (after the warm-up)")
	fs.DurationVar(&j.warmup, "warmup", time.Second, "after 10 warm-up steps, warm up for `D` of wall time more before the timed steps, so that the GPU's clocks are up")
	fs.StringVar(&j.dtype, "dtype", "float32", "image `TYPE`: float32 or float16 (parameters stay float32)")
	fs.StringVar(&j.opt.optimizer, "optimizer", "momentum", "`OPT`: sgd, momentum, nesterov, rmsprop or adam")
	fs.Float64Var(&j.opt.lr, "lr", 0.01, "learning `RATE`")
	fs.Float64Var(&j.opt.momentum, "momentum", 0.9, "momentum `MU`")
	fs.StringVar(&j.json, "json", "", "append the results as one JSON line to `FILE.jsonl`")
	fs.StringVar(&j.device, "device", "", "device index or part of its name")
	convTuningFlag(fs, &j.tuning)
	argmaxFlag(fs, &j.argmax)
	fs.BoolVar(&j.scratchPerKernel, "scratch-per-kernel", false, "give every convolution-family kernel its own scratch (default: one shared)")
	fs.BoolVar(&j.upload, "upload", false, "upload the random inputs to every step, as training on a data set does (default: written once, they stay on the device, as PyTorch's bench/torch_resnet18.py keeps its batch)")
	pos, err := parseInterleaved(sub, e, fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		return usageError(sub, errors.New("want one FILE.json"))
	case j.steps < 1 || j.steps > 100000:
		return usageError(sub, fmt.Errorf("--steps %d: want 1..100000", j.steps))
	case j.warmup < 0 || j.warmup > time.Minute:
		return usageError(sub, fmt.Errorf("--warmup %v: want 0s..1m", j.warmup))
	case j.batch < 1 || j.batch > 65536:
		return usageError(sub, fmt.Errorf("--batch %d: want 1..65536", j.batch))
	case j.dtype != "float32" && j.dtype != "float16":
		return usageError(sub, fmt.Errorf("--dtype %q: want float32 or float16", j.dtype))
	}
	j.file = pos[0]
	desc, err := j.opt.descriptor()
	if err != nil {
		return usageError(sub, fmt.Errorf("--optimizer: %v", err))
	}
	g, spec, err := graph.LoadFile(j.file)
	if err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
	}
	lossIm := g.Image(spec.Loss)
	if lossIm == nil || lossIm.Producer() == nil || lossIm.Producer().Op() != "loss" {
		return fmt.Errorf("%s names no loss node", j.file)
	}
	updates, err := g.Optimize(lossIm.Producer(), desc)
	if err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
	}
	shapes, err := spec.Shapes()
	if err != nil {
		return err
	}
	for name, v := range j.inputs {
		if len(v) == 3 {
			v = append([]int{j.batch}, v...)
		}
		shapes[name] = ops.ImageDescriptor{N: v[0], C: v[1], H: v[2], W: v[3]}
	}
	classLabels := map[string]bool{}
	if d := lossIm.Producer().Operation().(graph.LossOp).Desc; d.Type == ops.LossSoftmaxCrossEntropy || d.Type == ops.LossCategoricalCrossEntropy {
		classLabels[lossIm.Producer().Sources()[1].Name()] = true
	}
	feeds := map[string][]float32{}
	r := rand.New(rand.NewPCG(1, 2))
	for _, im := range g.Inputs() {
		d, ok := shapes[im.Name()]
		if !ok {
			continue
		}
		v := make([]float32, d.N*d.C*d.H*d.W)
		if classLabels[im.Name()] {
			for n := 0; n < d.N; n++ {
				for p := 0; p < d.H*d.W; p++ {
					v[(n*d.C+r.IntN(d.C))*d.H*d.W+p] = 1
				}
			}
		} else {
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
		}
		feeds[im.Name()] = v
	}
	format := ops.Float32
	if j.dtype == "float16" {
		format = ops.Float16
	}
	dev, err := openCmdDevice(j.device)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeCmdDevice(dev); err == nil {
			err = cerr
		}
	}()
	opts := graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{lossIm}, Compute: updates, Mode: graph.ModeTraining,
		Pipelined: true, Timestamps: dev.Limits().TimestampsSupported, Format: format, ConvolutionTuning: j.tuning,
		ScratchPerKernel: j.scratchPerKernel, RecordArgmax: j.argmax}
	stepFeeds := feeds // what each step is fed
	if !j.upload {
		stepFeeds = map[string][]float32{}
		for name := range feeds {
			opts.Resident = append(opts.Resident, name)
		}
		sort.Strings(opts.Resident)
	}
	ex, err := g.Compile(dev, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
	}
	defer ex.Close()
	if err := writeResident(ctx, ex, opts.Resident, feeds); err != nil {
		return err
	}
	// Warm-up, then the timed steps, each submitted while the previous
	// runs. On an H100 the steps of a new process's first ~0.3 s took 3
	// times the steady step (ResNet-18, float16: 20.8 ms, then 7.05), so
	// the warm-up runs 10 steps (the first records the step and makes its
	// pipelines: over a second on lavapipe, hundreds of milliseconds on
	// an H100) and then more, 5 at a time, until --warmup has passed since
	// those 10.
	warm := &trainLoop{ex: ex, loss: lossIm.Name(), steps: 10, feeds: stepFeeds}
	if err := warm.run(ctx); err != nil {
		return err
	}
	warmStart, warmSteps, firstLoss := time.Now(), warm.steps, warm.losses[0]
	for warmSteps < 10_000 && time.Since(warmStart) < j.warmup {
		warm = &trainLoop{ex: ex, loss: lossIm.Name(), steps: 5, feeds: stepFeeds}
		if err := warm.run(ctx); err != nil {
			return err
		}
		warmSteps += warm.steps
	}
	subs := dev.Submissions()
	loop := &trainLoop{ex: ex, loss: lossIm.Name(), steps: j.steps, feeds: stepFeeds}
	if err := loop.run(ctx); err != nil {
		return err
	}
	subs = dev.Submissions() - subs
	per := loop.wall / time.Duration(loop.steps)
	busy := loop.gpu.Seconds() / loop.wall.Seconds()
	fmt.Fprintf(e.stdout, "%s on %s, %s: %s per training step (%.3g submissions each), GPU busy %.0f%% (GPU %s per step), loss %.4g -> %.4g\n",
		j.file, dev.Info().Name, j.dtype, per.Round(time.Microsecond), float64(subs)/float64(loop.steps), 100*busy,
		(loop.gpu / time.Duration(loop.steps)).Round(time.Microsecond), firstLoss, loop.losses[len(loop.losses)-1])
	cmds, barriers := ex.Recorded()
	inputs := "inputs kept on the device"
	if j.upload {
		inputs = "inputs uploaded"
	}
	fmt.Fprintf(e.stdout, "each step: %s, %d commands, %d barriers between them\n", inputs, cmds, barriers)
	if t := j.tuning.String(); t != "" {
		fmt.Fprintf(e.stdout, "convolution tuning: %s\n", t)
	}
	// Device memory before the profiled copy below adds its own.
	mem, plan, scratch := dev.MemoryStats().Bytes, ex.Plan(), ex.ScratchSize()
	const mib = 1 << 20
	fmt.Fprintf(e.stdout, "device memory: %.1f MiB (intermediate images %.1f MiB, shared convolution scratch %.1f MiB)\n",
		float64(mem)/mib, float64(plan.Arena)/mib, float64(scratch)/mib)
	// One profiled step on a second compiled copy: the GPU time per op kind.
	prof := map[string]time.Duration{}
	var total time.Duration
	var nodes []graph.NodeTime
	if dev.Limits().TimestampsSupported {
		pg, pspec, err := graph.LoadFile(j.file)
		if err != nil {
			return err
		}
		pl := pg.Image(pspec.Loss)
		pupd, err := pg.Optimize(pl.Producer(), desc)
		if err != nil {
			return err
		}
		popts := opts
		popts.Outputs, popts.Compute, popts.Pipelined, popts.Profile = []*graph.Image{pl}, pupd, false, true
		pex, err := pg.Compile(dev, popts)
		if err != nil {
			return err
		}
		defer pex.Close()
		if err := writeResident(ctx, pex, popts.Resident, feeds); err != nil {
			return err
		}
		var p *graph.Pending
		for i := 0; i < 3; i++ {
			if p, err = pex.Start(ctx, stepFeeds); err != nil {
				return err
			}
			if _, err := p.Wait(ctx); err != nil {
				return err
			}
		}
		nodes = p.Profile()
		for _, nt := range nodes {
			prof[nt.Node.Op()] += nt.Time
			total += nt.Time
		}
		kinds := make([]string, 0, len(prof))
		for k := range prof {
			kinds = append(kinds, k)
		}
		sort.Slice(kinds, func(a, b int) bool { return prof[kinds[a]] > prof[kinds[b]] })
		fmt.Fprintf(e.stdout, "GPU time of one profiled step, %s, by op kind:\n", total.Round(time.Microsecond))
		for _, k := range kinds {
			fmt.Fprintf(e.stdout, "  %-28s %9s  %5.1f%%\n", k, prof[k].Round(time.Microsecond), 100*prof[k].Seconds()/total.Seconds())
		}
		slow := append([]graph.NodeTime(nil), nodes...)
		sort.SliceStable(slow, func(a, b int) bool { return slow[a].Time > slow[b].Time })
		fmt.Fprintf(e.stdout, "its %d slowest nodes:\n", min(len(slow), slowestNodes))
		for _, nt := range slow[:min(len(slow), slowestNodes)] {
			fmt.Fprintf(e.stdout, "  %-40s %9s  %5.1f%%\n", nt.Node.Name(), nt.Time.Round(time.Microsecond), 100*nt.Time.Seconds()/total.Seconds())
		}
	}
	if j.json == "" {
		return nil
	}
	rec := map[string]any{"model": j.file, "device": dev.Info().Name, "driver": dev.Info().DriverVersion, "dtype": j.dtype, "optimizer": j.opt.optimizer,
		"steps": loop.steps, "warmup_steps": warmSteps, "ms_per_step": per.Seconds() * 1e3, "gpu_ms_per_step": loop.gpu.Seconds() * 1e3 / float64(loop.steps),
		"gpu_busy": busy, "submissions_per_step": float64(subs) / float64(loop.steps), "date": time.Now().UTC().Format(time.RFC3339),
		"argmax": j.argmax}
	split := map[string]float64{}
	for k, v := range prof {
		split[k] = v.Seconds() * 1e3
	}
	rec["profile_ms"] = split
	if len(nodes) > 0 {
		type nodeMS struct {
			Name string  `json:"name"`
			Op   string  `json:"op"`
			MS   float64 `json:"ms"`
		}
		per := make([]nodeMS, len(nodes))
		for i, nt := range nodes {
			per[i] = nodeMS{nt.Node.Name(), nt.Node.Op(), nt.Time.Seconds() * 1e3}
		}
		rec["profile_nodes"] = per
	}
	rec["commands_per_step"], rec["barriers_per_step"] = cmds, barriers
	steps := make([]float64, len(loop.stepGPU))
	for i, d := range loop.stepGPU {
		steps[i] = d.Seconds() * 1e3
	}
	rec["gpu_ms_steps"] = steps
	if t := j.tuning.String(); t != "" {
		rec["conv_tuning"] = t
	}
	rec["device_memory_mib"], rec["arena_mib"], rec["scratch_mib"] = float64(mem)/mib, float64(plan.Arena)/mib, float64(scratch)/mib
	if j.scratchPerKernel {
		rec["scratch_per_kernel"] = true
	}
	rec["upload"] = j.upload
	b, _ := json.Marshal(rec)
	if err := tensorio.CheckOutput(j.json, j.file); err != nil {
		return err
	}
	f, err := os.OpenFile(j.json, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s\n", b)
	return err
}

// writeResident writes the values of the resident inputs names from feeds.
func writeResident(ctx context.Context, ex *graph.Executor, names []string, feeds map[string][]float32) error {
	for _, name := range names {
		if err := ex.WriteInput(ctx, name, feeds[name]); err != nil {
			return err
		}
	}
	return nil
}
