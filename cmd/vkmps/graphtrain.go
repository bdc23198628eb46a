package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/progress"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
)

// trainFlags are the optimizer flags of `vkmps graph train` (TRAINING.md:
// a contract other tools use).
type trainFlags struct {
	optimizer   string
	lr          float64
	momentum    float64
	weightDecay float64
	steps       int
	epochs      int
	batch       int
	seed        uint64
	log         string
	save        string
	load        string
	plot        string
}

func (f *trainFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.optimizer, "optimizer", "", "train with `OPT`: sgd, momentum, nesterov, rmsprop or adam (PyTorch's update rules and defaults)")
	fs.Float64Var(&f.lr, "lr", 0.01, "learning `RATE`")
	fs.Float64Var(&f.momentum, "momentum", 0, "momentum `MU` (sgd; momentum and nesterov default to 0.9)")
	fs.Float64Var(&f.weightDecay, "weight-decay", 0, "L2 regularization `SCALE` (PyTorch's weight_decay)")
	fs.IntVar(&f.steps, "steps", 0, "take `N` training steps (default 1, or --epochs' worth)")
	fs.IntVar(&f.epochs, "epochs", 0, "with --batch: `N` passes over the data set")
	fs.IntVar(&f.batch, "batch", 0, "treat the --in files as a data set (first axis: samples) and train on mini-batches of `N`")
	fs.Uint64Var(&f.seed, "seed", 1, "the mini-batch shuffle's `SEED`")
	fs.StringVar(&f.log, "log", "", "write {\"step\": i, \"loss\": v} per step to `FILE.jsonl`")
	fs.StringVar(&f.save, "save", "", "after the last step write every parameter to `DIR`/NODE.weights.npy ... and DIR/checkpoint.safetensors")
	fs.StringVar(&f.load, "load", "", "start from `DIR`'s checkpoint.safetensors (parameters and optimizer state) or its parameter .npy files")
	fs.StringVar(&f.plot, "plot", "", "draw the loss curve to `FILE.png`")
}

// enabled reports whether an optimizer was asked for.
func (f *trainFlags) enabled() bool { return f.optimizer != "" }

// check refuses flag combinations that make no sense, before any work.
func (f *trainFlags) check(c *command) error {
	if !f.enabled() {
		for _, v := range []struct {
			name string
			set  bool
		}{{"--steps", f.steps != 0}, {"--epochs", f.epochs != 0}, {"--batch", f.batch != 0}, {"--log", f.log != ""},
			{"--save", f.save != ""}, {"--load", f.load != ""}, {"--plot", f.plot != ""}} {
			if v.set {
				return usageError(c, fmt.Errorf("%s needs --optimizer", v.name))
			}
		}
		return nil
	}
	switch {
	case f.steps < 0:
		return usageError(c, fmt.Errorf("--steps: %d < 0", f.steps))
	case f.epochs < 0:
		return usageError(c, fmt.Errorf("--epochs: %d < 0", f.epochs))
	case f.batch < 0:
		return usageError(c, fmt.Errorf("--batch: %d < 0", f.batch))
	case f.epochs > 0 && f.batch == 0:
		return usageError(c, errors.New("--epochs needs --batch"))
	case f.steps > 100_000_000:
		return usageError(c, fmt.Errorf("--steps: %d is more than 10^8", f.steps))
	case f.epochs > 1_000_000:
		return usageError(c, fmt.Errorf("--epochs: %d is more than 10^6", f.epochs))
	}
	return nil
}

// descriptor returns the optimizer the flags name.
func (f *trainFlags) descriptor() (ops.OptimizerDescriptor, error) {
	return ops.ParseOptimizer(f.optimizer, float32(f.lr), float32(f.momentum), float32(f.weightDecay))
}

// restore loads --load DIR into ex: its checkpoint when there is one,
// else its parameter files.
func (f *trainFlags) restore(ctx context.Context, ex *graph.Executor) error {
	if f.load == "" {
		return nil
	}
	ckpt := filepath.Join(f.load, "checkpoint.safetensors")
	if _, err := os.Stat(ckpt); err == nil {
		return ex.LoadCheckpoint(ctx, ckpt)
	}
	if err := ex.LoadParameters(ctx, f.load); err != nil {
		return fmt.Errorf("--load %s: %w", f.load, err)
	}
	return nil
}

// persist writes --save DIR.
func (f *trainFlags) persist(ctx context.Context, ex *graph.Executor) error {
	if f.save == "" {
		return nil
	}
	if err := ex.SaveParameters(ctx, f.save); err != nil {
		return fmt.Errorf("--save %s: %w", f.save, err)
	}
	return ex.SaveCheckpoint(ctx, filepath.Join(f.save, "checkpoint.safetensors"))
}

// runTraining is `vkmps graph train` with --optimizer: it trains the
// graph's parameters for the steps asked, one queue submission per step.
func (j *graphJob) runTraining(ctx context.Context, e *env) (err error) {
	if j.out != "" || j.iters != 1 {
		return usageError(j.cmd, errors.New("--out and --iters do not go with --optimizer: use --save DIR for the trained parameters"))
	}
	desc, err := j.opt.descriptor()
	if err != nil {
		return usageError(j.cmd, fmt.Errorf("--optimizer: %v", err))
	}
	if j.g, j.spec, err = graph.LoadFile(j.file); err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
	}
	lossNode, err := j.lossNode()
	if err != nil {
		return err
	}
	updates, err := j.g.Optimize(lossNode, desc)
	if err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
	}
	outs := []*graph.Image{lossNode.Result()}
	for _, name := range j.fetch {
		im := j.g.Image(name)
		if im == nil {
			return usageError(j.cmd, fmt.Errorf("--fetch %s: %s has no image %q", name, j.file, name))
		}
		outs = append(outs, im)
	}
	needed := graphNeededInputs(append(append([]*graph.Image(nil), outs...), updates...))
	var inPaths []string
	for _, name := range j.in.names {
		if im := j.g.Image(name); im == nil || !im.IsInput() {
			return usageError(j.cmd, fmt.Errorf("--in %s: %s has no input %q (its inputs: %s)", name, j.file, name, j.inputNames()))
		}
		inPaths = append(inPaths, j.in.paths[name])
	}
	for _, p := range []string{j.opt.log, j.opt.plot} {
		if p != "" {
			if err := tensorio.CheckOutput(p, append(inPaths, j.file)...); err != nil {
				return err
			}
		}
	}
	fileShapes, err := j.spec.Shapes()
	if err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
	}
	loop := &trainLoop{loss: lossNode.Result().Name()}
	shapes := map[string]ops.ImageDescriptor{}
	if j.opt.batch > 0 {
		paths := map[string]string{}
		for _, im := range needed {
			p, ok := j.in.paths[im.Name()]
			if !ok {
				return usageError(j.cmd, fmt.Errorf("input %q needs --in %s=FILE.npy", im.Name(), im.Name()))
			}
			paths[im.Name()] = p
		}
		if err := checkDataSetFiles(paths); err != nil { // no FIFO: LoadNPYDataSet would wait without ctx
			return err
		}
		ds, err := graph.LoadNPYDataSet(paths)
		if err != nil {
			return err
		}
		shapes = ds.BatchShapes(j.opt.batch)
		for name, want := range fileShapes {
			if got, ok := shapes[name]; ok && (got.C != want.C || got.H != want.H || got.W != want.W) {
				return fmt.Errorf("%w: input %q: the data set's samples are %dx%dx%d, %s says [_, %d, %d, %d]", graph.ErrShape, name, got.C, got.H, got.W, j.file, want.C, want.H, want.W)
			}
		}
		loop.batches = &graph.Batches{Data: ds, Size: j.opt.batch, Shuffle: true, Seed: j.opt.seed}
		if loop.batches.BatchesPerEpoch() == 0 {
			return fmt.Errorf("%w: --batch %d exceeds the %d samples of the data set", graph.ErrShape, j.opt.batch, ds.Len())
		}
		loop.steps = j.opt.steps
		if j.opt.epochs > 0 {
			loop.steps = j.opt.epochs * loop.batches.BatchesPerEpoch()
			if j.opt.steps > 0 {
				loop.steps = min(loop.steps, j.opt.steps)
			}
			if loop.steps > 100_000_000 { // as --steps: the losses are kept
				return usageError(j.cmd, fmt.Errorf("--epochs %d of %d batches are %d steps, more than 10^8", j.opt.epochs, loop.batches.BatchesPerEpoch(), loop.steps))
			}
		}
	} else {
		loop.feeds = map[string][]float32{}
		for _, im := range needed {
			name := im.Name()
			path, ok := j.in.paths[name]
			if !ok {
				return usageError(j.cmd, fmt.Errorf("input %q needs --in %s=FILE.npy", name, name))
			}
			t, err := readInput(ctx, path, nil) // ctx: Ctrl-C ends a wait on a pipe
			if err != nil {
				return fmt.Errorf("input %q: %w", name, err)
			}
			if want, ok := fileShapes[name]; ok && (want.N != t.N || want.C != t.C || want.H != t.H || want.W != t.W) {
				return fmt.Errorf("%w: input %q: %s has shape (%d, %d, %d, %d), but %s says [%d, %d, %d, %d]",
					graph.ErrShape, name, path, t.N, t.C, t.H, t.W, j.file, want.N, want.C, want.H, want.W)
			}
			shapes[name] = ops.ImageDescriptor{N: t.N, C: t.C, H: t.H, W: t.W}
			loop.feeds[name] = t.Data
		}
		loop.steps = j.opt.steps
	}
	if loop.steps == 0 {
		loop.steps = 1
	}
	if _, err := j.g.InferShapes(shapes, append(outs, updates...)...); err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
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
	ex, err := j.g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: outs, Compute: updates,
		Mode: graph.ModeTraining, Pipelined: true, RecordArgmax: j.argmax, Timestamps: dev.Limits().TimestampsSupported,
		ConvolutionTuning: j.tuning})
	if err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
	}
	defer ex.Close()
	loop.ex = ex
	if err := j.opt.restore(ctx, ex); err != nil {
		return err
	}
	logf, err := openLog(j.opt.log, append(inPaths, j.file)...)
	if err != nil {
		return err
	}
	if logf != nil {
		defer logf.Close()
		loop.log = logf
	}
	loop.bar = progress.New(e.stderr, loop.steps, "training", progress.Options{})
	perStep := loop.steps <= 1000
	if perStep {
		loop.afterStep = func(step int, loss float64) { fmt.Fprintf(e.stdout, "step %d loss %.9g\n", step, loss) }
	}
	if err := loop.run(ctx); err != nil {
		return err
	}
	loop.bar.Finish()
	if logf != nil {
		if err := logf.Close(); err != nil {
			return fmt.Errorf("--log: %w", err)
		}
	}
	if err := j.opt.persist(ctx, ex); err != nil {
		return err
	}
	if j.opt.plot != "" {
		if err := plotCurves(j.opt.plot, fmt.Sprintf("vkmps graph train %s: %s, lr %g", filepath.Base(j.file), j.opt.optimizer, j.opt.lr), loop.losses, "", nil); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	per := loop.wall / time.Duration(loop.steps)
	fmt.Fprintf(e.stdout, "%d steps, %s per step (one queue submission each), final loss %.6g", loop.steps, per.Round(time.Microsecond), loop.losses[len(loop.losses)-1])
	if j.opt.batch > 0 {
		fmt.Fprintf(e.stdout, ", %.0f samples/s", float64(j.opt.batch)/per.Seconds())
	}
	if loop.gpu > 0 {
		fmt.Fprintf(e.stdout, ", GPU busy %.0f%% of the time", 100*loop.gpu.Seconds()/loop.wall.Seconds())
	}
	fmt.Fprintln(e.stdout)
	if j.opt.save != "" {
		names := ex.Parameters()
		sort.Strings(names)
		fmt.Fprintf(e.stdout, "saved %d parameters and checkpoint.safetensors to %s\n", len(names), j.opt.save)
	}
	return nil
}

// lossNode returns the loss node named by --loss or the file.
func (j *graphJob) lossNode() (*graph.Node, error) {
	name := j.loss
	if name == "" {
		name = j.spec.Loss
	}
	if name == "" {
		return nil, usageError(j.cmd, fmt.Errorf("%s names no loss node: give --loss NAME", j.file))
	}
	im := j.g.Image(name)
	if im == nil || im.Producer() == nil || im.Producer().Op() != "loss" {
		return nil, usageError(j.cmd, fmt.Errorf("--loss %s: %s has no loss node %q", name, j.file, name))
	}
	return im.Producer(), nil
}
