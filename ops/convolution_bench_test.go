package ops_test

import (
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// convBenchShape is one benchmark shape: a convolution of n x c x h x w
// with o outputs, a k x k kernel, stride s, pad p (PyTorch's), groups g;
// fc marks a fully connected layer of c inputs (h = w = 1).
type convBenchShape struct {
	name             string
	n, c, h, w, o, k int
	s, p, g          int
	fc               bool
}

// convBenchShapes are issue 15's shapes (the targets are cuDNN's times on
// an H100, float32, TF32 off; bench/torch_training_baseline.py measures
// them) with VKMPS_BENCH_LARGE=1, and LeNet-5's layers; else the same
// layers at a size lavapipe runs in seconds.
func convBenchShapes() []convBenchShape {
	large := []convBenchShape{
		{"resnet3x3-64", 32, 64, 56, 56, 64, 3, 1, 1, 1, false},
		{"resnet3x3-128", 32, 128, 28, 28, 128, 3, 1, 1, 1, false},
		{"resnet3x3-256", 32, 256, 14, 14, 256, 3, 1, 1, 1, false},
		{"resnet3x3-512", 32, 512, 7, 7, 512, 3, 1, 1, 1, false},
		{"resnet1x1-512-2048", 32, 512, 7, 7, 2048, 1, 1, 0, 1, false},
		{"resnet1x1-512-512", 32, 512, 7, 7, 512, 1, 1, 0, 1, false},
		// A GEMM of 1024 x 25088 x 1024 (52.6 GFLOP a pass): the
		// engines' throughput on operands that all load as quads.
		{"gemm1x1-1024", 32, 1024, 28, 28, 1024, 1, 1, 0, 1, false},
		{"stem7x7s2", 32, 3, 224, 224, 64, 7, 2, 3, 1, false},
		// ResNet-18's stride-2 3x3 layers (each stage's first) and its
		// 1x1 stride-2 downsampling, 56 -> 28.
		{"resnet3x3s2-128", 32, 64, 56, 56, 128, 3, 2, 1, 1, false},
		{"resnet3x3s2-256", 32, 128, 28, 28, 256, 3, 2, 1, 1, false},
		{"resnet3x3s2-512", 32, 256, 14, 14, 512, 3, 2, 1, 1, false},
		{"resnet1x1s2-128", 32, 64, 56, 56, 128, 1, 2, 0, 1, false},
		// Its other two, 28 -> 14 and 14 -> 7: their data gradients' one
		// phase that sums (of 4) has few tiles.
		{"resnet1x1s2-256", 32, 128, 28, 28, 256, 1, 2, 0, 1, false},
		{"resnet1x1s2-512", 32, 256, 14, 14, 512, 1, 2, 0, 1, false},
		// ResNet-50's 1x1 layers (bottleneck reductions and expansions)
		// at 56x56, 28x28 and 14x14; 512 -> 2048 at 7x7 is above.
		{"resnet50-1x1-256-64", 32, 256, 56, 56, 64, 1, 1, 0, 1, false},
		{"resnet50-1x1-64-256", 32, 64, 56, 56, 256, 1, 1, 0, 1, false},
		{"resnet50-1x1-512-128", 32, 512, 28, 28, 128, 1, 1, 0, 1, false},
		{"resnet50-1x1-128-512", 32, 128, 28, 28, 512, 1, 1, 0, 1, false},
		{"resnet50-1x1-1024-256", 32, 1024, 14, 14, 256, 1, 1, 0, 1, false},
		{"resnet50-1x1-256-1024", 32, 256, 14, 14, 1024, 1, 1, 0, 1, false},
		{"depthwise3x3-256", 32, 256, 56, 56, 256, 3, 1, 1, 256, false},
		// MobileNet's 14x14 depthwise layers: rows of 14, not quads.
		{"depthwise3x3-512-14", 32, 512, 14, 14, 512, 3, 1, 1, 512, false},
		// MobileNetV2's last depthwise layers: 7x7 planes, a block of 4
		// rows covers half of one.
		{"depthwise3x3-960-7", 32, 960, 7, 7, 960, 3, 1, 1, 960, false},
		{"vgg3x3-128", 16, 128, 112, 112, 128, 3, 1, 1, 1, false},
		// ResNet's classifier: 512 features to 1000 classes at batch 32.
		{"resnet-fc512-1000", 32, 512, 1, 1, 1000, 1, 1, 0, 1, true},
		{"lenet-conv1-b64", 64, 1, 28, 28, 6, 5, 1, 0, 1, false},
		{"lenet-conv2-b64", 64, 6, 12, 12, 16, 5, 1, 0, 1, false},
		{"lenet-fc256-120-b64", 64, 256, 1, 1, 120, 1, 1, 0, 1, true},
		{"lenet-fc120-84-b64", 64, 120, 1, 1, 84, 1, 1, 0, 1, true},
		{"lenet-fc84-10-b64", 64, 84, 1, 1, 10, 1, 1, 0, 1, true},
		{"lenet-fc256-120-b512", 512, 256, 1, 1, 120, 1, 1, 0, 1, true},
		{"lenet-fc120-84-b512", 512, 120, 1, 1, 84, 1, 1, 0, 1, true},
		{"lenet-fc84-10-b512", 512, 84, 1, 1, 10, 1, 1, 0, 1, true},
	}
	if os.Getenv("VKMPS_BENCH_LARGE") == "1" {
		return large
	}
	small := make([]convBenchShape, 0, len(large))
	for _, s := range large {
		s.n = 1
		if !s.fc {
			s.h, s.w = max(s.h/4, 7), max(s.w/4, 7)
			s.c, s.o = max(s.c/4, min(s.c, 3)), max(s.o/4, 1)
			if s.g > 1 {
				s.g, s.o = s.c, s.c
			}
		}
		small = append(small, s)
	}
	return small
}

// GPU time and TFLOP/s (2 * multiply-adds of the direct definition /
// GPU time) of the convolution family's forward, data gradient (dx) and
// weight gradient (dW and db) on issue 15's shapes; GB/s of minimum
// traffic for the depthwise ones (compare BenchmarkGPU/copy). Images are
// float32 (or float16 with VKMPS_BENCH_DTYPE=float16; weights stay
// float32). On the GPU machine:
//
//	VKMPS_BENCH_LARGE=1 go test ./ops -run XXX -bench BenchmarkConvolutionGPU -benchtime 1x
//
// $VKMPS_GEMM holds a ConvolutionTuning (ops.ParseConvolutionTuning's
// text: tile=N, direct=1, coopmat=0|1, cooptile=N, splits=N, units=N,
// small=0, winograd=0|1) set on every kernel; VKMPS_BENCH_SHAPES, a
// regular expression, keeps the shapes whose names it matches (their
// kernels alone are made and run: a tuning one shape needs, such as a
// split count, may not suit the others). VKMPS_BENCH_PASSES=1 logs
// each pass's dispatch profile (logProfile) after its timing. VKMPS_BENCH_SWEEP=1 runs every pass also
// under each tile forced (its split count chosen, and unsplit), under
// split counts 1, 2, 4, 8 (weight gradients: 1, 8, 32, 128) with the tile
// chosen, data gradients without the few-channels gather, forward and
// data-gradient passes without Winograd (winograd=0) and with it on each
// tile (winograd=1,tile=N), and float16
// forward and data-gradient passes without cooperative matrices and with
// them on each cooperative-matrix tile the device runs (coopmat=1 is tile
// 0, cooptile=N tile N; the log names each tile's shape; sub-benchmarks
// are named after the setting, "default" the kernel's choice). To rank
// the cooperative-matrix tiles on the GPU machine:
//
//	VKMPS_BENCH_LARGE=1 VKMPS_BENCH_SWEEP=1 VKMPS_BENCH_DTYPE=float16 go test ./ops -run XXX -bench BenchmarkConvolutionGPU -benchtime 1x
func BenchmarkConvolutionGPU(b *testing.B) {
	dev := vktest.Open(b)
	if !dev.Limits().TimestampsSupported {
		b.Skip("no timestamps")
	}
	format := benchFormat(b, dev)
	tune, err := ops.ParseConvolutionTuning(os.Getenv("VKMPS_GEMM"))
	require.NoError(b, err, "VKMPS_GEMM")
	b.Logf("%s: compute units %d, cooperative matrices %v", dev.Info().Name, dev.Limits().ComputeUnits, dev.Limits().CooperativeMatrixNV)
	var coop []int // the cooperative-matrix tiles the device runs
	for i := 0; i < ops.ConvolutionCoopTileCount(); i++ {
		if on := ops.ConvCoopTileOn(dev.Limits(), i, false); on != "" {
			coop = append(coop, i)
			b.Logf("cooptile=%d: %s", i, on)
		} else {
			b.Logf("cooptile=%d: %s: not on this device", i, ops.ConvolutionCoopTileName(i))
		}
	}
	only, err := regexp.Compile(os.Getenv("VKMPS_BENCH_SHAPES"))
	require.NoError(b, err, "VKMPS_BENCH_SHAPES")
	r := rand.New(rand.NewSource(1))
	for _, sh := range convBenchShapes() {
		if !only.MatchString(sh.name) {
			continue
		}
		convBenchOne(b, dev, format, r, sh, tune, os.Getenv("VKMPS_BENCH_SWEEP") == "1", coop)
	}
}

// convBenchTunings are the settings a pass runs under: base alone, or in
// a sweep base and every tile forced, split counts for weight gradients,
// cooperative matrices off and on each tile of coop for float16.
func convBenchTunings(base ops.ConvolutionTuning, sweep bool, pass string, format ops.Format, coop []int) []ops.ConvolutionTuning {
	ts := []ops.ConvolutionTuning{base}
	if !sweep {
		return ts
	}
	splits := []int{1, 2, 4, 8}
	if pass == "dW" {
		splits = []int{1, 8, 32, 128}
	}
	for i := 0; i < ops.ConvolutionTileCount(); i++ {
		ts = append(ts, ops.ConvolutionTuning{Path: ops.ConvolutionPathTiled, Tile: i, ComputeUnits: base.ComputeUnits},
			ops.ConvolutionTuning{Path: ops.ConvolutionPathTiled, Tile: i, Splits: 1, ComputeUnits: base.ComputeUnits})
	}
	for _, s := range splits {
		ts = append(ts, ops.ConvolutionTuning{Splits: s, ComputeUnits: base.ComputeUnits})
	}
	if pass == "dx" {
		ts = append(ts, ops.ConvolutionTuning{NoSmallChannels: true, ComputeUnits: base.ComputeUnits})
	}
	if pass != "dW" {
		ts = append(ts, ops.ConvolutionTuning{NoWinograd: true, ComputeUnits: base.ComputeUnits})
		for i := 0; i < ops.ConvolutionTileCount(); i++ {
			ts = append(ts, ops.ConvolutionTuning{Winograd: true, Path: ops.ConvolutionPathTiled, Tile: i, ComputeUnits: base.ComputeUnits})
		}
	}
	if format == ops.Float16 && pass != "dW" {
		ts = append(ts, ops.ConvolutionTuning{NoCoopMat: true, ComputeUnits: base.ComputeUnits})
		for _, i := range coop {
			ts = append(ts, ops.ConvolutionTuning{Path: ops.ConvolutionPathCoopMat, CoopTile: i, ComputeUnits: base.ComputeUnits})
		}
	}
	return ts
}

func convBenchOne(b *testing.B, dev *vk.Device, format ops.Format, r *rand.Rand, sh convBenchShape, tune ops.ConvolutionTuning, sweep bool, coop []int) {
	newIm := func(d padding.Descriptor, data bool) *ops.Image {
		var v []float32
		if data {
			v = randomData(r, d.N*d.C*d.H*d.W)
		}
		if format == ops.Float16 {
			return newHalfImage(b, dev, d, v)
		}
		return newImage(b, dev, d, v)
	}
	d := ops.ConvolutionDescriptor{KernelWidth: sh.k, KernelHeight: sh.k, InputFeatureChannels: sh.c, OutputFeatureChannels: sh.o,
		Groups: sh.g, StrideX: sh.s, StrideY: sh.s}
	src := newIm(padding.Descriptor{N: sh.n, C: sh.c, H: sh.h, W: sh.w}, true)
	wd := d.WeightsDescriptor()
	w := newImage(b, dev, padding.Descriptor{N: wd.N, C: wd.C, H: wd.H, W: wd.W}, randomData(r, wd.N*wd.C*wd.H*wd.W))
	bias := newImage(b, dev, padding.Descriptor{N: 1, C: sh.o, H: 1, W: 1}, randomData(r, sh.o))
	dW := newImage(b, dev, padding.Descriptor{N: wd.N, C: wd.C, H: wd.H, W: wd.W}, nil)
	db := newImage(b, dev, padding.Descriptor{N: 1, C: sh.o, H: 1, W: 1}, nil)
	dx := newIm(padding.Descriptor{N: sh.n, C: sh.c, H: sh.h, W: sh.w}, false)
	var fwd, data, weights func(cb *vk.CommandBuffer) error
	var tuners [2]interface {
		SetTuning(ops.ConvolutionTuning) error
	} // forward, gradient
	var oh, ow int
	if sh.fc {
		d.KernelWidth, d.KernelHeight = sh.w, sh.h
		k := must(ops.NewFullyConnected(dev, d))
		b.Cleanup(func() { k.Close() })
		g := must(ops.NewFullyConnectedGradient(dev, d))
		b.Cleanup(func() { g.Close() })
		oh, ow = 1, 1
		tuners = [2]interface {
			SetTuning(ops.ConvolutionTuning) error
		}{k, g}
		dst := newIm(padding.Descriptor{N: sh.n, C: sh.o, H: 1, W: 1}, false)
		dy := newIm(padding.Descriptor{N: sh.n, C: sh.o, H: 1, W: 1}, true)
		fwd = func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, w, bias, dst) }
		data = func(cb *vk.CommandBuffer) error { return g.EncodeData(cb, dy, w, dx) }
		weights = func(cb *vk.CommandBuffer) error { return g.EncodeWeights(cb, dy, src, dW, db) }
	} else {
		k := must(ops.NewConvolution(dev, d))
		b.Cleanup(func() { k.Close() })
		g := must(ops.NewConvolutionGradient(dev, d))
		b.Cleanup(func() { g.Close() })
		tuners = [2]interface {
			SetTuning(ops.ConvolutionTuning) error
		}{k, g}
		k.Padding = padding.Explicit(padding.Pads{Top: sh.p, Left: sh.p, Bottom: sh.p, Right: sh.p}, false, false)
		dd, err := k.DestinationImageDescriptor(src.Descriptor())
		require.NoError(b, err)
		oh, ow = dd.H, dd.W
		g.SetForwardOffset(k.Offset.X, k.Offset.Y)
		dst := newIm(padding.Descriptor{N: sh.n, C: sh.o, H: oh, W: ow}, false)
		dy := newIm(padding.Descriptor{N: sh.n, C: sh.o, H: oh, W: ow}, true)
		fwd = func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, w, bias, dst) }
		data = func(cb *vk.CommandBuffer) error { return g.EncodeData(cb, dy, w, dx) }
		weights = func(cb *vk.CommandBuffer) error { return g.EncodeWeights(cb, dy, src, dW, db) }
	}
	macs := float64(sh.n) * float64(sh.o) * float64(oh*ow) * float64(sh.c/max(sh.g, 1)) * float64(d.KernelWidth*d.KernelHeight)
	esize := float64(format.Size())
	traffic := map[string]float64{ // minimum bytes moved
		"fwd": esize * float64(sh.n) * (float64(sh.c*sh.h*sh.w) + float64(sh.o*oh*ow)),
		"dx":  esize * float64(sh.n) * (float64(sh.c*sh.h*sh.w) + float64(sh.o*oh*ow)),
		"dW":  esize * float64(sh.n) * (float64(sh.c*sh.h*sh.w) + float64(sh.o*oh*ow)),
	}
	name := fmt.Sprintf("%s/%dx%dx%dx%d-k%ds%d-o%d", sh.name, sh.n, sh.c, sh.h, sh.w, d.KernelWidth, sh.s, sh.o)
	if format != ops.Float32 {
		name += "-" + format.String()
	}
	for _, pass := range []struct {
		name string
		enc  func(cb *vk.CommandBuffer) error
	}{{"fwd", fwd}, {"dx", data}, {"dW", weights}} {
		for ti, t := range convBenchTunings(tune, sweep, pass.name, format, coop) {
			for _, k := range tuners {
				require.NoError(b, k.SetTuning(t))
			}
			require.NoError(b, run(b, dev, pass.enc), "%s %s %v", name, pass.name, t) // pipelines, scratch
			sub := name + "/" + pass.name
			if sweep {
				setting := t.String()
				if ti == 0 {
					setting = "default"
					if t.String() != "" {
						setting = t.String()
					}
				}
				sub += "/" + setting
			}
			ran := false
			b.Run(sub, func(b *testing.B) {
				ran = true
				for i := 0; i < b.N; i++ {
					t := gpuTime(b, dev, 10, 5, pass.enc)
					b.ReportMetric(float64(t.Nanoseconds())/1e3, "gpu-us")
					b.ReportMetric(2*macs/t.Seconds()/1e12, "TFLOP/s")
					if sh.g > 1 {
						b.ReportMetric(traffic[pass.name]/t.Seconds()/1e9, "GB/s")
					}
				}
			})
			if ran && benchPasses() {
				logProfile(b, dev, sub, pass.enc)
			}
		}
	}
}
