package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/flagx"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/progress"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

func init() {
	register(&command{
		name:    "bench",
		summary: "time every kernel forward and backward, and the device's copy bandwidth",
		usage: `[--small] [--shapes LIST] [--ops LIST] [--dtype LIST] [--iters N] [--argmax=false]
             [--json FILE|-] [--plot FILE.png] [--plot-metric gbps|us] [--device D]
       vkmps bench --conv [--small] [--dtype LIST] [--conv-tuning KEY=N,...] [--json FILE|-] ...

Times vkmps's pooling kernels (max, avg, l2, dilated-max) forward and backward
with GPU timestamps on standard NCHW float32 shapes, and measures the device's
copy bandwidth with vkmps's own copy shader in the same run: the ceiling of
these memory-bound kernels.

--dtype float16 times the same kernels on float16 images (half storage,
float32 arithmetic; the device needs 16-bit storage), as
torch_pool_baseline.py --dtype float16 does; --dtype float32,float16 runs
both, and the table ends with the float16 speed-up over float32 (float32
time / float16 time) per kernel. Rows of float16 say "f16" after the op.

Shapes (issue 9; N,C,H,W kernel stride pad), as ../shared/bench/torch_pool_baseline.py:
  32,64,112,112 k3 s2 p1    64,256,56,56 k2 s2 p0    8,512,28,28 k3 s1 p1
The ops are PyTorch's: max is max_pool2d(x, k, s, p) (explicit pads, which
max ignores); avg is avg_pool2d(x, k, s, p), whose divisor counts the pads
(count_include_pad); dilated-max is max_pool2d with dilation 2; l2 is
lp_pool2d(x, 2, k, s), which has no padding: its rows run unpadded but keep
the shape's pad in "pad" (their "pads" field says what ran) so that they
join PyTorch's. --small is a quick set (seconds on lavapipe).
--shapes takes semicolon-separated N,C,H,W,K,S,P[,D] (D: dilated-max's
dilation, default 2), e.g. --shapes "32,64,112,112,3,2,1;8,512,28,28,3,1,1".

Method: each measurement is one command buffer holding K back-to-back
encodes of the kernel (with the barriers their hazards need), K chosen so
that it runs at least --min-time on the GPU (at most --max-reps); it is
committed once to warm up, then --iters times; the time per kernel is the
GPU time (timestamps) / K, and the table gives the median and the minimum.
A backward measurement times the gradient kernel alone, with a state made
once by a forward. With --argmax (the default) max and dilated-max also get
a row whose forward records the argmax indices and whose backward reads
them instead of the input.

Traffic (GB/s = bytes / median time): forward = input + output; backward =
input + output gradient + input gradient (argmax rows: the argmax indices
instead of the input; their forward also writes them), at 4 bytes a value,
2 for float16; %copy = GB/s / the copy bandwidth (bytes read + written by
the copy shader / its time).

Output: a table on stdout (device, driver, date first); --json writes one JSON
object per line (a header, a row per kernel, the copy bandwidth last; "-" is
stdout instead of the table); --plot draws a bar chart (PNG) of GB/s (with the
copy bandwidth as a line) or of microseconds per kernel. Both replace only a
file bench wrote before (its JSON lines, a PNG), never another, and must be
two files. A run in which no case could run (every shape beyond the device
or without output) is an error. A progress bar goes to stderr when it is a
terminal.

--conv times the convolution section instead: bench/torch_training_baseline.py's
layers (the ResNet-18/50 stem, 3x3 and 1x1 layers, VGG's 3x3 at 112x112, a
depthwise 3x3), forward without bias, data gradient, and weight gradient
without bias gradient, as PyTorch's rows; the table gives µs and TFLOP/s
(2 x the direct definition's multiply-adds over the time: an effective rate
for Winograd) and the forward's GB/s against the copy bandwidth; --json
rows carry PyTorch's "conv" and "mode" (fp32, fp16) keys, so that
bench/compare_conv.py joins them. --conv-tuning sets ops.ConvolutionTuning
on every kernel (winograd=0, tile=2, winocoop=0, ...).

examples:
  vkmps bench
  vkmps bench --conv --dtype float32,float16 --json conv.jsonl
  vkmps bench --json h100.jsonl --plot h100.png
  vkmps bench --small --iters 5
  vkmps bench --shapes "16,64,56,56,3,2,1" --ops max,avg
  vkmps bench --dtype float32,float16 --json both.jsonl`,
		run: runBench,
	})
}

// benchShape is a benchmark case: input N×C×H×W, square kernel K, stride
// S and pad P (PyTorch's, on every side), and the dilation D of dilated-max.
type benchShape struct{ N, C, H, W, K, S, P, D int }

func (s benchShape) String() string { return fmt.Sprintf("%dx%dx%dx%d", s.N, s.C, s.H, s.W) }

// benchStandard are issue 9's shapes; benchSmall a quick set with odd sizes.
var (
	benchStandard = []benchShape{
		{32, 64, 112, 112, 3, 2, 1, 2},
		{64, 256, 56, 56, 2, 2, 0, 2},
		{8, 512, 28, 28, 3, 1, 1, 2},
	}
	benchSmall = []benchShape{
		{2, 8, 33, 33, 3, 2, 1, 2},
		{2, 16, 16, 16, 2, 2, 0, 2},
		{1, 32, 12, 12, 3, 1, 1, 2},
	}
)

// benchOps are the ops in PyTorch's names, in the order of the table.
var benchOps = []string{"max", "avg", "l2", "dilated-max"}

// parseBenchShapes parses --shapes: semicolon-separated N,C,H,W,K,S,P[,D].
func parseBenchShapes(s string) ([]benchShape, error) {
	var out []benchShape
	for _, item := range strings.Split(s, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		fields := strings.Split(item, ",")
		if len(fields) != 7 && len(fields) != 8 {
			return nil, fmt.Errorf("--shapes: %q has %d numbers: want N,C,H,W,K,S,P or N,C,H,W,K,S,P,D", item, len(fields))
		}
		v := make([]int, 8)
		v[7] = 2
		for i, f := range fields {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return nil, fmt.Errorf("--shapes: %q: %q is not a number", item, f)
			}
			min := 1
			if i == 6 {
				min = 0
			}
			if n < min || n > flagx.MaxValue {
				return nil, fmt.Errorf("--shapes: %q: %d is out of range", item, n)
			}
			v[i] = n
		}
		out = append(out, benchShape{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--shapes: no shape in %q", s)
	}
	return out, nil
}

// parseBenchOps parses --ops, a comma-separated subset of benchOps.
func parseBenchOps(s string) ([]string, error) {
	want := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		known := false
		for _, o := range benchOps {
			known = known || o == f
		}
		if !known {
			return nil, fmt.Errorf("--ops: unknown op %q: want some of %s", f, strings.Join(benchOps, ","))
		}
		want[f] = true
	}
	var out []string
	for _, o := range benchOps {
		if want[o] {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--ops: no op in %q", s)
	}
	return out, nil
}

// parseBenchDtypes parses --dtype, a comma-separated subset of float32
// and float16, in that order.
func parseBenchDtypes(s string) ([]ops.Format, error) {
	want := map[ops.Format]bool{}
	for _, f := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "":
		case "float32", "fp32", "f32":
			want[ops.Float32] = true
		case "float16", "fp16", "f16", "half":
			want[ops.Float16] = true
		default:
			return nil, fmt.Errorf("--dtype: unknown type %q: want float32, float16 or both", f)
		}
	}
	var out []ops.Format
	for _, f := range []ops.Format{ops.Float32, ops.Float16} {
		if want[f] {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--dtype: no type in %q", s)
	}
	return out, nil
}

// benchCase is one row: an op on a shape and image format, optionally
// with argmax.
type benchCase struct {
	shape  benchShape
	op     string
	argmax bool
	dtype  ops.Format
}

// label is the row's op as the table and chart show it.
func (c benchCase) label() string {
	l := c.op
	if c.argmax {
		l += "+argmax"
	}
	if c.dtype == ops.Float16 {
		l += " f16"
	}
	return l
}

// setup returns the kernel kind, geometry and padding of the case, as
// PyTorch defines the op (see the usage).
func (c benchCase) setup() (ops.PoolingKind, ops.Geometry, padding.Pads, padding.Policy) {
	s := c.shape
	g := ops.Geometry{KernelWidth: s.K, KernelHeight: s.K, StrideX: s.S, StrideY: s.S, DilationX: 1, DilationY: 1}
	p := padding.Pads{Top: s.P, Left: s.P, Bottom: s.P, Right: s.P}
	switch c.op {
	case "avg":
		return ops.KindAverage, g, p, padding.Explicit(p, false, true)
	case "l2":
		return ops.KindL2Norm, g, padding.Pads{}, padding.Explicit(padding.Pads{}, false, false)
	case "dilated-max":
		g.DilationX, g.DilationY = s.D, s.D
		return ops.KindDilatedMax, g, p, padding.Explicit(p, false, false)
	}
	return ops.KindMax, g, p, padding.Explicit(p, false, false)
}

// benchConfig is what the flags ask for.
type benchConfig struct {
	shapes     []benchShape
	ops        []string
	dtypes     []ops.Format
	argmax     bool
	iters      int
	repeat     int // passes over the cases, best kept
	minTime    time.Duration
	warmup     time.Duration // < 0: the default for the device
	maxReps    int
	copyBytes  uint64 // 0: chosen from the device
	jsonPath   string
	plotPath   string
	plotMetric string
	stats      bool // --pipeline-stats
	device     string
	tuning     ops.Tuning // $VKMPS_TUNE (cmdTuning)
	// convLayers: --conv's layers (nil: the pooling section runs);
	// convTuning: --conv-tuning.
	convLayers []benchConvLayer
	convTuning ops.ConvolutionTuning
}

func runBench(ctx context.Context, e *env, args []string) error {
	c := commands["bench"]
	fs := newFlags(c, e)
	small := fs.Bool("small", false, "a quick set of small shapes, 5 iterations, 4 MiB copies (tests, CI, lavapipe)")
	shapes := fs.String("shapes", "", "shapes to run instead of the standard ones: `N,C,H,W,K,S,P[,D];...`")
	opsFlag := fs.String("ops", strings.Join(benchOps, ","), "ops to run, comma-separated")
	dtype := fs.String("dtype", "float32", "image formats to run, comma-separated: float32, float16")
	argmax := fs.Bool("argmax", true, "add max and dilated-max rows that record and use the argmax state")
	iters := fs.Int("iters", 20, "timed runs per measurement (median and min reported)")
	repeat := fs.Int("repeat", 1, "passes over every case; each row keeps its best pass (filters transient slow phases of a shared or busy GPU)")
	minTime := fs.Duration("min-time", time.Millisecond, "GPU time each timed command buffer should reach")
	warmup := fs.Duration("warmup", -1, "GPU time each measurement runs before it is timed, so that the GPU's clocks are up (default 200ms, 0 on a CPU device and with --small)")
	maxReps := fs.Int("max-reps", 1000, "most encodes in one timed command buffer")
	copyMiB := fs.Int("copy-mib", 0, "size of each copy buffer in MiB (0: 256, or 32 on a CPU device, 4 with --small)")
	jsonPath := fs.String("json", "", "write JSON lines to `FILE` (\"-\": stdout, instead of the table)")
	plotPath := fs.String("plot", "", "draw a bar chart to `FILE.png`")
	metric := flagx.NewChoice(fs, "plot-metric", "gbps", []string{"gbps", "us"}, "what the chart shows")
	device := fs.String("device", "", "device index or part of its name (default $VKMPS_DEVICE, then the best)")
	stats := fs.Bool("pipeline-stats", false, "after the table, print the driver compiler's statistics of every pipeline used (registers, instructions; where the device offers them)")
	conv := fs.Bool("conv", false, "time the convolution section instead: ResNet, VGG and depthwise layers, forward, data and weight gradients")
	var convTuning ops.ConvolutionTuning
	convTuningFlag(fs, &convTuning)
	if pos, err := parseInterleaved(c, e, fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usageError(c, fmt.Errorf("unexpected argument %q", pos[0]))
	}
	cfg := benchConfig{argmax: *argmax, iters: *iters, repeat: *repeat, minTime: *minTime, warmup: *warmup, maxReps: *maxReps,
		jsonPath: *jsonPath, plotPath: *plotPath, plotMetric: metric.Value, device: *device, stats: *stats}
	cfg.shapes = benchStandard
	if *conv {
		cfg.convLayers, cfg.convTuning = benchConvStandard, convTuning
		for _, f := range []string{"shapes", "ops", "argmax", "plot", "plot-metric"} {
			if flagx.WasSet(fs, f) {
				return usageError(c, fmt.Errorf("--%s is the pooling section's: not with --conv", f))
			}
		}
	} else if flagx.WasSet(fs, "conv-tuning") {
		return usageError(c, errors.New("--conv-tuning is the convolution section's: give --conv too"))
	}
	if *small {
		cfg.shapes = benchSmall
		if *conv {
			cfg.convLayers = benchConvSmall
		}
		if !flagx.WasSet(fs, "iters") {
			cfg.iters = 5
		}
		if !flagx.WasSet(fs, "min-time") {
			cfg.minTime = 200 * time.Microsecond
		}
		if !flagx.WasSet(fs, "warmup") {
			cfg.warmup = 0
		}
	}
	var err error
	if *shapes != "" {
		if cfg.shapes, err = parseBenchShapes(*shapes); err != nil {
			return usageError(c, err)
		}
	}
	if cfg.ops, err = parseBenchOps(*opsFlag); err != nil {
		return usageError(c, err)
	}
	if cfg.dtypes, err = parseBenchDtypes(*dtype); err != nil {
		return usageError(c, err)
	}
	switch {
	case cfg.iters < 1:
		return usageError(c, fmt.Errorf("--iters: %d is too small: must be >= 1", cfg.iters))
	case cfg.repeat < 1 || cfg.repeat > 100:
		return usageError(c, fmt.Errorf("--repeat: %d is out of range 1..100", cfg.repeat))
	case cfg.maxReps < 1:
		return usageError(c, fmt.Errorf("--max-reps: %d is too small: must be >= 1", cfg.maxReps))
	case cfg.minTime < 0:
		return usageError(c, fmt.Errorf("--min-time: %v is negative", cfg.minTime))
	case flagx.WasSet(fs, "warmup") && (cfg.warmup < 0 || cfg.warmup > time.Minute):
		return usageError(c, fmt.Errorf("--warmup: %v is out of range 0..1m", cfg.warmup))
	case *copyMiB < 0 || *copyMiB > 1<<16:
		return usageError(c, fmt.Errorf("--copy-mib: %d is out of range 0..65536", *copyMiB))
	}
	cfg.copyBytes = uint64(*copyMiB) << 20
	if *small && *copyMiB == 0 {
		cfg.copyBytes = 4 << 20
	}
	if cfg.jsonPath != "" && cfg.jsonPath != "-" {
		if f, err := tensorio.FormatOf(cfg.jsonPath); err == nil {
			return usageError(c, fmt.Errorf("--json %s: a %s name for JSON lines: give FILE.jsonl (or -)", cfg.jsonPath, map[tensorio.Format]string{tensorio.NPY: ".npy", tensorio.PNG: ".png"}[f]))
		}
		if err := checkReportOutput("json", cfg.jsonPath, isBenchJSON); err != nil {
			return err
		}
	}
	if cfg.plotPath != "" {
		if f, err := tensorio.FormatOf(cfg.plotPath); err != nil || f != tensorio.PNG {
			return usageError(c, fmt.Errorf("--plot: %q: want a .png file", cfg.plotPath))
		}
		if sameFile(cfg.plotPath, cfg.jsonPath) {
			return usageError(c, fmt.Errorf("--json and --plot name the same file %s: give each its own", cfg.plotPath))
		}
		if err := checkReportOutput("plot", cfg.plotPath, isPNG); err != nil {
			return err
		}
	}
	return benchRun(ctx, e, cfg)
}

// benchRun opens the device, measures and reports.
func benchRun(ctx context.Context, e *env, cfg benchConfig) (err error) {
	if cfg.tuning, err = cmdTuning(); err != nil {
		return err
	}
	dev, err := openCmdDeviceWith(vk.Options{Device: cfg.device, PipelineStatistics: cfg.stats})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeCmdDevice(dev); err == nil {
			err = cerr
		}
	}()
	info := dev.Info()
	if !info.Limits.TimestampsSupported {
		return fmt.Errorf("%s: %w: its compute queue has no timestamps", info.Name, vk.ErrUnsupported)
	}
	for _, f := range cfg.dtypes {
		if f == ops.Float16 && !info.Limits.Float16Storage {
			return fmt.Errorf("%s: %w: --dtype float16 needs 16-bit storage buffer access, which it lacks", info.Name, vk.ErrUnsupported)
		}
	}
	if cfg.stats && !dev.PipelineStatistics() {
		return fmt.Errorf("--pipeline-stats: %s: %w: no pipeline statistics (VK_KHR_pipeline_executable_properties)", info.Name, vk.ErrUnsupported)
	}
	head := newBenchHeader(info, cfg)
	var cases []benchCase
	for _, s := range cfg.shapes {
		for _, dt := range cfg.dtypes {
			for _, op := range cfg.ops {
				cases = append(cases, benchCase{shape: s, op: op, dtype: dt})
				if cfg.argmax && (op == "max" || op == "dilated-max") {
					cases = append(cases, benchCase{shape: s, op: op, argmax: true, dtype: dt})
				}
			}
		}
	}
	steps := 2 + 2*len(cases)*max(1, cfg.repeat) + 4*min(1, cfg.repeat-1)
	if cfg.convLayers != nil {
		steps = 2 + 3*len(cfg.convLayers)*len(cfg.dtypes)*max(1, cfg.repeat)
	}
	bar := progress.New(e.stderr, steps, "bench", progress.Options{})
	defer bar.Finish()
	if cfg.warmup < 0 {
		cfg.warmup = 200 * time.Millisecond
		if info.Type == vk.DeviceCPU {
			cfg.warmup = 0
		}
	}
	head.WarmupMs = float64(cfg.warmup) / 1e6
	r := &benchRunner{ctx: ctx, dev: dev, tuning: cfg.tuning, iters: cfg.iters, minTime: cfg.minTime, warmup: cfg.warmup, maxReps: cfg.maxReps, bar: bar,
		rng: rand.New(rand.NewPCG(1, 2))}
	if cfg.convLayers != nil {
		if err := benchConvRun(e, r, info, cfg, head); err != nil {
			return err
		}
		if cfg.stats {
			return benchPipelineStats(e.stdout, dev)
		}
		return nil
	}

	bar.Describe("copy bandwidth")
	cp, err := r.copyBandwidth(benchCopySize(info, cfg), cfg.repeat > 1)
	if err != nil {
		return fmt.Errorf("copy bandwidth: %w", err)
	}
	if cfg.repeat > 1 {
		defer r.closeCopy()
	}
	var rows []benchRow
	for pass := 0; pass < cfg.repeat; pass++ {
		var got []benchRow
		for i := 0; i < len(cases); {
			s, dt := cases[i].shape, cases[i].dtype
			j := i
			for j < len(cases) && cases[j].shape == s && cases[j].dtype == dt {
				j++
			}
			part, err := r.shape(cases[i:j], cp)
			if err != nil {
				return err
			}
			got = append(got, part...)
			i = j
		}
		rows = bestRows(rows, got)
	}
	if cfg.repeat > 1 {
		// The copy again, after every pass: a ceiling that moved says the
		// GPU's state did.
		bar.Describe("copy bandwidth (end)")
		again, err := r.copyAgain()
		if err != nil {
			return fmt.Errorf("copy bandwidth: %w", err)
		}
		fresh, err := r.copyBandwidth(cp.Bytes, false)
		if err != nil {
			return fmt.Errorf("copy bandwidth: %w", err)
		}
		head.CopyEndGBps, head.CopyEndFreshGBps = again.GBps, fresh.GBps
	}
	bar.Finish()
	if err := allSkipped(rows); err != nil {
		return err
	}
	if cfg.jsonPath != "-" {
		benchTable(e.stdout, head, rows, cp)
	}
	if cfg.jsonPath != "" {
		if err := benchWriteJSON(e.stdout, cfg.jsonPath, head, rows, cp); err != nil {
			return err
		}
	}
	if cfg.plotPath != "" {
		if err := benchPlot(cfg.plotPath, head, rows, cp, cfg.plotMetric); err != nil {
			return err
		}
	}
	if cfg.stats {
		w := e.stdout
		if cfg.jsonPath == "-" {
			w = e.stderr // stdout holds the JSON
		}
		return benchPipelineStats(w, dev)
	}
	return nil
}

// bestRows merges a pass's rows into the best so far (nil before the
// first pass): per row and direction, the timing with the lower median.
func bestRows(best, pass []benchRow) []benchRow {
	if best == nil {
		return pass
	}
	for i := range best {
		b, p := &best[i], pass[i]
		if p.Skipped != "" || b.Skipped != "" {
			continue
		}
		if p.Fwd.Median > 0 && p.Fwd.Median < b.Fwd.Median {
			b.Fwd, b.FwdGBps = p.Fwd, p.FwdGBps
		}
		if p.Bwd.Median > 0 && p.Bwd.Median < b.Bwd.Median {
			b.Bwd, b.BwdGBps = p.Bwd, p.BwdGBps
		}
	}
	return best
}

// benchPipelineStats prints the compiler statistics of the device's
// pipelines, a block per pipeline named by its shader and constants.
func benchPipelineStats(w io.Writer, dev *vk.Device) error {
	for _, p := range dev.Pipelines() {
		st, err := p.Statistics()
		if err != nil {
			return fmt.Errorf("--pipeline-stats: %w", err)
		}
		fmt.Fprintf(w, "pipeline %s\n", p)
		for _, l := range strings.Split(strings.TrimSpace(st), "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	return nil
}

// benchCopySize is the size of each copy buffer: --copy-mib, else 256 MiB
// (32 MiB on a CPU device), at most an eighth of the device-local memory
// and the largest allocation, a multiple of 1 MiB.
func benchCopySize(info vk.Info, cfg benchConfig) uint64 {
	size := cfg.copyBytes
	if size == 0 {
		size = 256 << 20
		if info.Type == vk.DeviceCPU {
			size = 32 << 20
		}
		if l := info.Limits.DeviceLocalBytes / 8; l > 0 && size > l {
			size = l
		}
	}
	if l := info.Limits.MaxMemoryAllocationSize; l > 0 && size > l {
		size = l
	}
	return max(size>>20<<20, 1<<20)
}
