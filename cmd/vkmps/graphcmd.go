package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
)

// graphUsage follows "usage: vkmps graph"; the subcommands' usage follows
// "usage: vkmps graph run" and "usage: vkmps graph train".
var (
	graphUsage      = "run|train " + graphUsageRun + "\n       vkmps graph train ... [--loss NAME] [--argmax=false]" + graphUsageBody
	graphUsageRun   = "FILE.json --in NAME=FILE.npy... [--out DIR] [--fetch NAME]... [--iters N] [--device D]"
	graphUsageTrain = graphUsageRun + "\n                         [--loss NAME] [--argmax=false]" +
		"\n                         [--optimizer sgd|momentum|nesterov|rmsprop|adam --lr F [--momentum F] [--weight-decay F]" +
		"\n                          --steps N | --epochs N --batch N [--seed N] [--log FILE.jsonl] [--save DIR] [--load DIR] [--plot FILE.png]]"
)

// graphUsageBody is completed with the graph package's op names at start-up.
var graphUsageBody = `

Runs a graph written in vkmps's JSON format (see the graph package
documentation) on the GPU, with inputs and outputs as NumPy .npy files
(NCHW float32). Its nodes are any of these ops:
` + wrapWords(strings.Join(graph.OpNames(), ", "), "  ", 74) + `
Trainable parameters (convolution weights and biases, batch-norm gamma and
beta, PReLU slopes) start from PyTorch's initializers and are named
NODE.weights, NODE.bias, ...

  run    computes the graph's outputs ("outputs" in FILE, else its sinks).
  train  derives the training graph from the loss node ("loss" in FILE, or
         --loss), runs it, prints the loss, and computes the gradient of
         every input the loss depends on (labels excepted) and the outputs.
         With --optimizer it also updates the parameters: --steps N steps
         on the given inputs, or --epochs N over them as a data set cut
         into shuffled mini-batches of --batch N; --save DIR writes the
         trained parameters (.npy and checkpoint.safetensors), --load DIR
         starts from them, --log and --plot record the loss per step.

Every input the results depend on needs --in NAME=FILE.npy (.png also
works); its shape comes from the file ((N,C,H,W), (C,H,W) or (H,W)) and
must equal FILE's "inputs" shape where that is given. --fetch NAME also
returns an intermediate image. With --out DIR (created when missing) each
result is written to DIR/NAME.npy as float32 (N,C,H,W), NAME with every
character outside [A-Za-z0-9._-] replaced by '_': the gradient "grad(x)"
goes to grad_x_.npy. Files are written atomically, only after the whole
run succeeded, and never over an input. Without --out a summary is printed.
--iters N (at most 10^9) runs the graph N times (the executor records its one
command buffer on the first run and replays it) and prints the time per run.

examples:
  vkmps graph run pool.json --in x=x.npy --out out
  vkmps graph run pool.json --in x=x.npy --fetch p1 --out out
  vkmps graph train pool.json --in x=x.npy --in labels=y.npy --out grads
  vkmps graph train pool.json --in x=x.npy --in labels=y.npy --iters 100
  vkmps graph train net.json --in x=images.npy --in labels=onehot.npy \
      --optimizer adam --lr 0.001 --epochs 5 --batch 64 --save trained --plot loss.png`

// wrapWords breaks s at spaces into lines of at most width, each indented.
func wrapWords(s, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(s) {
		if len(line) > len(indent) && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	return b.String() + line + "\n"
}

func init() {
	register(&command{
		name:    "graph",
		summary: "run a JSON graph on .npy inputs, or train it: loss and gradients",
		usage:   graphUsage,
		run:     runGraph,
	})
}

// graphInFlag is the repeatable --in NAME=FILE.
type graphInFlag struct {
	names []string
	paths map[string]string
}

func (f *graphInFlag) String() string {
	var parts []string
	for _, n := range f.names {
		parts = append(parts, n+"="+f.paths[n])
	}
	return strings.Join(parts, " ")
}

func (f *graphInFlag) Set(s string) error {
	name, path, ok := strings.Cut(s, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("%q: want NAME=FILE.npy", s)
	}
	if f.paths == nil {
		f.paths = map[string]string{}
	}
	if _, dup := f.paths[name]; dup {
		return fmt.Errorf("input %q given twice", name)
	}
	f.names = append(f.names, name)
	f.paths[name] = path
	return nil
}

// graphListFlag is a repeatable flag of names.
type graphListFlag []string

func (f *graphListFlag) String() string { return strings.Join(*f, ",") }

func (f *graphListFlag) Set(s string) error {
	if s == "" {
		return errors.New("empty name")
	}
	*f = append(*f, s)
	return nil
}

// graphJob is one `vkmps graph run|train`.
type graphJob struct {
	cmd    *command // "graph run" or "graph train", for messages
	train  bool
	file   string
	in     graphInFlag
	fetch  graphListFlag
	out    string
	iters  int
	loss   string
	argmax bool
	opt    trainFlags
	tuning ops.ConvolutionTuning // --conv-tuning
	device string
	ld     *lazyDevice // graph run and train without --optimizer

	g       *graph.Graph
	spec    *graph.File
	lossImg *graph.Image
	outputs []*graph.Image
	inputs  map[string]tensorio.Tensor // needed inputs, read
	paths   map[*graph.Image]string    // output files, with --out
}

func runGraph(ctx context.Context, e *env, args []string) (err error) {
	c := commands["graph"]
	if len(args) == 0 {
		return usageError(c, errors.New("want `vkmps graph run FILE.json ...` or `vkmps graph train FILE.json ...`"))
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(e.stdout, "usage: vkmps graph %s\n", c.usage)
		return flag.ErrHelp
	case "run", "train":
	default:
		return usageError(c, fmt.Errorf("unknown subcommand %q: want run or train", args[0]))
	}
	sub := &command{name: "graph " + args[0], usage: graphUsageRun + graphUsageBody}
	if args[0] == "train" {
		sub.usage = graphUsageTrain + graphUsageBody
	}
	j := &graphJob{cmd: sub, train: args[0] == "train"}
	fs := newFlags(sub, e)
	fs.Var(&j.in, "in", "an input: `NAME=FILE.npy` (repeat for each input)")
	fs.Var(&j.fetch, "fetch", "also return the image `NAME` (repeatable)")
	fs.StringVar(&j.out, "out", "", "write each result to `DIR`/NAME.npy")
	fs.IntVar(&j.iters, "iters", 1, "run the graph `N` times and print the time per run")
	fs.StringVar(&j.device, "device", "", "device index or part of its name (default $VKMPS_DEVICE, then the best)")
	convTuningFlag(fs, &j.tuning)
	if j.train {
		fs.StringVar(&j.loss, "loss", "", "the loss node to train from (default: \"loss\" in FILE)")
		argmaxFlag(fs, &j.argmax)
		j.opt.register(fs)
	}
	pos, err := parseInterleaved(sub, e, fs, args[1:])
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return usageError(sub, errors.New("missing FILE.json"))
	case len(pos) > 1:
		return usageError(sub, fmt.Errorf("unexpected argument %q", pos[1]))
	case j.iters < 1:
		return usageError(sub, fmt.Errorf("--iters: %d is too small: must be >= 1", j.iters))
	case j.iters > maxIters:
		return usageError(sub, fmt.Errorf("--iters: %d is more than %d", j.iters, maxIters))
	}
	j.file = pos[0]
	if err := j.opt.check(sub); err != nil {
		return err
	}
	if j.opt.enabled() {
		return j.runTraining(ctx, e)
	}
	j.ld = &lazyDevice{sel: j.device} // opened by the first input's check
	defer func() {
		if cerr := j.ld.close(); err == nil {
			err = cerr
		}
	}()
	if err := j.prepare(ctx); err != nil {
		return err
	}
	return j.run(ctx, e)
}

// prepare loads the graph, derives the training graph, chooses the
// outputs, checks the output paths and reads the inputs: every error
// that does not need the GPU, before any work.
func (j *graphJob) prepare(ctx context.Context) error {
	var err error
	j.g, j.spec, err = graph.LoadFile(j.file)
	if err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
	}
	for _, name := range j.in.names {
		if im := j.g.Image(name); im == nil || !im.IsInput() {
			return usageError(j.cmd, fmt.Errorf("--in %s: %s has no input %q (its inputs: %s)", name, j.file, name, j.inputNames()))
		}
	}
	// The forward graph's results, before Training adds gradient nodes.
	var results []*graph.Image
	for _, name := range j.spec.Outputs {
		results = append(results, j.g.Image(name))
	}
	if len(results) == 0 {
		results = graphSinks(j.g)
	}
	if j.train {
		name := j.loss
		if name == "" {
			name = j.spec.Loss
		}
		if name == "" {
			return usageError(j.cmd, fmt.Errorf("%s names no loss node: give --loss NAME", j.file))
		}
		j.lossImg = j.g.Image(name)
		if j.lossImg == nil || j.lossImg.Producer() == nil || j.lossImg.Producer().Op() != "loss" {
			return usageError(j.cmd, fmt.Errorf("--loss %s: %s has no loss node %q", name, j.file, name))
		}
		grads, err := j.g.Training(j.lossImg.Producer())
		if err != nil {
			return fmt.Errorf("%s: %w", j.file, err)
		}
		j.outputs = append(j.outputs, j.lossImg)
		// The inputs' gradients (in name order), then the trainable
		// parameters' (grad(NODE.weights), ..., in creation order).
		for _, in := range append(j.g.Inputs(), j.g.Parameters()...) {
			if gi := grads[in]; gi != nil {
				j.outputs = append(j.outputs, gi)
			}
		}
	}
	j.outputs = append(j.outputs, results...)
	for _, name := range j.fetch {
		im := j.g.Image(name)
		if im == nil {
			return usageError(j.cmd, fmt.Errorf("--fetch %s: %s has no image %q", name, j.file, name))
		}
		j.outputs = append(j.outputs, im)
	}
	j.outputs = graphDedupe(j.outputs)

	needed := graphNeededInputs(j.outputs)
	var inPaths []string
	for _, name := range j.in.names {
		inPaths = append(inPaths, j.in.paths[name])
	}
	if err := j.checkOutputs(append(inPaths, j.file)); err != nil {
		return err
	}
	shapes, err := j.spec.Shapes()
	if err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
	}
	j.inputs = map[string]tensorio.Tensor{}
	for _, im := range needed {
		name := im.Name()
		path, ok := j.in.paths[name]
		if !ok {
			return usageError(j.cmd, fmt.Errorf("input %q needs --in %s=FILE.npy", name, name))
		}
		t, err := readInput(ctx, path, j.ld.check(func(n, c, h, w int) uint64 { return 0 }))
		if err != nil {
			return fmt.Errorf("input %q: %w", name, err)
		}
		if want, ok := shapes[name]; ok && (want.N != t.N || want.C != t.C || want.H != t.H || want.W != t.W) {
			return fmt.Errorf("%w: input %q: %s has shape (%d, %d, %d, %d), but %s says [%d, %d, %d, %d]",
				graph.ErrShape, name, path, t.N, t.C, t.H, t.W, j.file, want.N, want.C, want.H, want.W)
		}
		j.inputs[name] = t
	}
	return nil
}

func (j *graphJob) inputNames() string {
	var names []string
	for _, im := range j.g.Inputs() {
		names = append(names, im.Name())
	}
	return strings.Join(names, ", ")
}

// checkOutputs chooses the output files with --out and refuses names that
// collide, and paths that are inputs.
func (j *graphJob) checkOutputs(inputs []string) error {
	if j.out == "" {
		return nil
	}
	if st, err := os.Stat(j.out); err == nil && !st.IsDir() {
		return fmt.Errorf("%w: --out %s: not a directory", tensorio.ErrOutput, j.out)
	}
	j.paths = map[*graph.Image]string{}
	byFile := map[string]string{}
	for _, im := range j.outputs {
		file := graphFileName(im.Name())
		if other, dup := byFile[file]; dup {
			return fmt.Errorf("%w: images %q and %q would both be written to %s", tensorio.ErrOutput, other, im.Name(), file)
		}
		byFile[file] = im.Name()
		path := filepath.Join(j.out, file)
		if _, err := os.Stat(j.out); err == nil {
			if err := tensorio.CheckOutput(path, inputs...); err != nil {
				return err
			}
		}
		j.paths[im] = path
	}
	return nil
}

// graphFileName is the file an image is written to: its name with every
// character outside [A-Za-z0-9._-] replaced by '_', then ".npy".
func graphFileName(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b) + ".npy"
}

// graphSinks returns the images of g that no node reads, in node order:
// the default outputs of a graph without "outputs".
func graphSinks(g *graph.Graph) []*graph.Image {
	read := map[*graph.Image]bool{}
	for _, n := range g.Nodes() {
		for _, s := range n.Sources() {
			read[s] = true
		}
	}
	var out []*graph.Image
	for _, n := range g.Nodes() {
		if !read[n.Result()] {
			out = append(out, n.Result())
		}
	}
	return out
}

func graphDedupe(ims []*graph.Image) []*graph.Image {
	seen := map[*graph.Image]bool{}
	out := ims[:0]
	for _, im := range ims {
		if !seen[im] {
			seen[im] = true
			out = append(out, im)
		}
	}
	return out
}

// graphNeededInputs returns the inputs the outputs depend on, by name: the
// sources of their producers, transitively, and for gradient nodes those
// of the forward node whose state they use.
func graphNeededInputs(outputs []*graph.Image) []*graph.Image {
	seen := map[*graph.Image]bool{}
	done := map[*graph.Node]bool{}
	var inputs []*graph.Image
	var visitNode func(n *graph.Node)
	visit := func(im *graph.Image) {
		if seen[im] {
			return
		}
		seen[im] = true
		if im.IsInput() {
			inputs = append(inputs, im)
			return
		}
		visitNode(im.Producer())
	}
	visitNode = func(n *graph.Node) {
		if n == nil || done[n] {
			return
		}
		done[n] = true
		for _, s := range n.Sources() {
			visit(s)
		}
		visitNode(n.Forward())
	}
	for _, o := range outputs {
		visit(o)
	}
	sort.Slice(inputs, func(a, b int) bool { return inputs[a].Name() < inputs[b].Name() })
	return inputs
}

// run compiles and runs the graph, prints the results and writes them.
func (j *graphJob) run(ctx context.Context, e *env) (err error) {
	descs := map[string]ops.ImageDescriptor{}
	feeds := map[string][]float32{}
	for name, t := range j.inputs {
		descs[name] = ops.ImageDescriptor{N: t.N, C: t.C, H: t.H, W: t.W}
		feeds[name] = t.Data
	}
	shapes, err := j.g.InferShapes(descs, j.outputs...) // before any GPU work
	if err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
	}
	dev, err := j.ld.get() // runGraph closes it
	if err != nil {
		return err
	}
	mode := graph.ModeInference // graph run: batch norm uses its running statistics, dropout is off
	if j.train {
		mode = graph.ModeTraining
	}
	ex, err := j.g.Compile(dev, graph.CompileOptions{Inputs: descs, Outputs: j.outputs, RecordArgmax: j.argmax, Mode: mode,
		ConvolutionTuning: j.tuning})
	if err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
	}
	defer ex.Close()
	var res map[string][]float32
	var first time.Duration
	var times timeSample // of the runs after the first
	var subs uint64      // queue submissions of the runs after the first
	for i := 0; i < j.iters; i++ {
		before := dev.Submissions()
		start := time.Now()
		if res, err = ex.Run(ctx, feeds); err != nil {
			return fmt.Errorf("%s: %w", j.file, err)
		}
		if i == 0 {
			first = time.Since(start)
		} else {
			times.add(time.Since(start))
			subs += dev.Submissions() - before
		}
	}
	for _, im := range j.outputs {
		d := shapes[im]
		if n := d.N * d.C * d.H * d.W; n != len(res[im.Name()]) {
			return fmt.Errorf("internal error: image %q: %d values for shape %dx%dx%dx%d (please report it)", im.Name(), len(res[im.Name()]), d.N, d.C, d.H, d.W)
		}
	}

	if j.train {
		graphPrintLoss(e, j.lossImg.Name(), res[j.lossImg.Name()])
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "image\tshape\tmin\tmax\tmean\tfile")
	for _, im := range j.outputs {
		d, v := shapes[im], res[im.Name()]
		lo, hi, mean := graphStats(v)
		file := j.paths[im]
		if file == "" {
			file = "-"
		}
		fmt.Fprintf(tw, "%s\t(%d, %d, %d, %d)\t%.6g\t%.6g\t%.6g\t%s\n", im.Name(), d.N, d.C, d.H, d.W, lo, hi, mean, file)
	}
	tw.Flush()
	if j.iters > 1 {
		fmt.Fprintf(e.stdout, "time: first run %s (records the command buffer), then %s per run (median of %s; queue submissions per run: %.3g)\n",
			first.Round(time.Microsecond), times.median().Round(time.Microsecond), times.describe(), float64(subs)/float64(times.n))
	}
	if j.out == "" {
		return nil
	}
	if err := os.MkdirAll(j.out, 0o755); err != nil {
		return err
	}
	for _, im := range j.outputs {
		d := shapes[im]
		t := tensorio.Tensor{N: d.N, C: d.C, H: d.H, W: d.W, Data: res[im.Name()], Rank: 4}
		if err := tensorio.Write(j.paths[im], t, tensorio.Image); err != nil {
			return err
		}
	}
	return nil
}

// graphPrintLoss prints the loss: its value, or for a loss without
// reduction its values (at most 16) or their sum and mean.
func graphPrintLoss(e *env, name string, v []float32) {
	switch {
	case len(v) == 1:
		fmt.Fprintf(e.stdout, "loss: %.9g (node %q)\n", v[0], name)
	case len(v) <= 16:
		fmt.Fprintf(e.stdout, "loss: %v (node %q)\n", v, name)
	default:
		sum := 0.0
		for _, x := range v {
			sum += float64(x)
		}
		fmt.Fprintf(e.stdout, "loss: %d values, sum %.9g, mean %.9g (node %q)\n", len(v), sum, sum/float64(len(v)), name)
	}
}

func graphStats(v []float32) (lo, hi, mean float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	sum := 0.0
	for _, x := range v {
		f := float64(x)
		lo, hi, sum = math.Min(lo, f), math.Max(hi, f), sum+f
	}
	if len(v) > 0 {
		mean = sum / float64(len(v))
	}
	return lo, hi, mean
}
