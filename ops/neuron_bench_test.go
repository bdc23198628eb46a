package ops_test

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// GPU time of the neuron, arithmetic and softmax kernels, float32 and
// float16, reported as gpu-us, GB/s of minimum traffic (each image read
// or written once) and copy% (that bandwidth as a percentage of the copy
// shader's, measured the same way on as many bytes in the same
// benchmark: the ceiling for these memory-bound kernels). Shapes: issue
// 14's 64x256x56x56 (softmax 1x1000x64x64, 1x1000x8x8 and 64x1000x1x1)
// with VKMPS_BENCH_LARGE=1, small ones otherwise (lavapipe).

// neuronBenchShape is the element-wise benchmarks' image.
func neuronBenchShape() padding.Descriptor {
	if os.Getenv("VKMPS_BENCH_LARGE") == "1" {
		return padding.Descriptor{N: 64, C: 256, H: 56, W: 56}
	}
	return padding.Descriptor{N: 2, C: 16, H: 56, W: 56}
}

// neuronCopyGBs returns the copy shader's bandwidth moving bytes bytes
// (read plus written), timed as the kernels are (gpuTime).
func neuronCopyGBs(b *testing.B, dev *vk.Device, bytes uint64) float64 {
	bytes = (bytes + 15) &^ 15
	src, err := dev.NewBuffer(bytes, "copy source")
	require.NoError(b, err)
	defer src.Close()
	dst, err := dev.NewBuffer(bytes, "copy destination")
	require.NoError(b, err)
	defer dst.Close()
	p, err := dev.Pipeline(spirv.Copy, 256)
	require.NoError(b, err)
	push := make([]byte, 12)
	binary.LittleEndian.PutUint32(push, uint32(bytes/16))
	groups := uint32(min((bytes/16+255)/256, uint64(dev.Limits().MaxComputeWorkGroupCount[0])))
	d := gpuTime(b, dev, 10, 7, func(cb *vk.CommandBuffer) error {
		return cb.Dispatch(p, []vk.BufferRange{src.Whole(), dst.Whole()}, push, [3]uint32{groups, 1, 1})
	})
	return float64(2*bytes) / d.Seconds() / 1e9
}

// neuronBench runs encode as a sub-benchmark and reports its GPU time,
// bandwidth for bytes of traffic and the fraction of copyGBs.
func neuronBench(b *testing.B, dev *vk.Device, name string, bytes, copyGBs float64, encode func(cb *vk.CommandBuffer) error) {
	b.Run(name, func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			d := gpuTime(b, dev, 10, 7, encode)
			neuronReport(b, d, bytes, copyGBs)
		}
	})
}

func neuronReport(b *testing.B, d time.Duration, bytes, copyGBs float64) {
	gbs := bytes / d.Seconds() / 1e9
	b.ReportMetric(float64(d.Nanoseconds())/1e3, "gpu-us")
	b.ReportMetric(gbs, "GB/s")
	b.ReportMetric(100*gbs/copyGBs, "copy%")
}

func neuronBenchDevice(b *testing.B) *vk.Device {
	dev := vktest.Open(b)
	if !dev.Limits().TimestampsSupported {
		b.Skip("no timestamps")
	}
	return dev
}

// BenchmarkNeuronGPU: forward and gradient of ReLU, PReLU (slopes from an
// image), tanh and GELU, and PReLU's slope gradient.
func BenchmarkNeuronGPU(b *testing.B) {
	dev := neuronBenchDevice(b)
	r := rand.New(rand.NewSource(1))
	sh := neuronBenchShape()
	n := sh.N * sh.C * sh.H * sh.W
	data := randomData(r, n)
	for _, f := range neuronFormats(dev) {
		bytes := float64(n * f.Size())
		copyGBs := neuronCopyGBs(b, dev, uint64(bytes))
		prefix := fmt.Sprintf("%dx%dx%dx%d/%v", sh.N, sh.C, sh.H, sh.W, f)
		b.Run(prefix+"/copy", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.ReportMetric(neuronCopyGBs(b, dev, uint64(bytes)), "GB/s")
			}
		})
		src, dst := neuronImage(b, dev, sh, data, f), neuronImage(b, dev, sh, nil, f)
		dy, dx := neuronImage(b, dev, sh, data, f), neuronImage(b, dev, sh, nil, f)
		slopes := newImage(b, dev, padding.Descriptor{N: 1, C: sh.C, H: 1, W: 1}, randomData(r, sh.C))
		for _, d := range []ops.NeuronDescriptor{ops.NewNeuronDescriptor(ops.NeuronReLU), {Type: ops.NeuronPReLU},
			ops.NewNeuronDescriptor(ops.NeuronTanH), {Type: ops.NeuronGeLU}} {
			k := must(ops.NewNeuron(dev, d))
			g := must(ops.NewNeuronGradient(dev, d))
			k.Slopes, g.Slopes = slopes, slopes
			neuronBench(b, dev, prefix+"/"+d.Type.String()+"/fwd", 2*bytes, copyGBs, func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) })
			neuronBench(b, dev, prefix+"/"+d.Type.String()+"/bwd", 3*bytes, copyGBs, func(cb *vk.CommandBuffer) error { return g.Encode(cb, dy, src, dx) })
			if d.Type == ops.NeuronPReLU {
				ds := newImage(b, dev, padding.Descriptor{N: 1, C: sh.C, H: 1, W: 1}, nil)
				neuronBench(b, dev, prefix+"/prelu/slopes", 2*bytes, copyGBs, func(cb *vk.CommandBuffer) error { return g.EncodeSlopeGradient(cb, dy, src, ds) })
			}
			g.Close()
		}
		for _, im := range []*ops.Image{src, dst, dy, dx} {
			im.Close()
		}
	}
}

// BenchmarkArithmeticGPU: addition of same-shape images, multiplication
// by a per-channel (1xCx1x1) image, and the gradients: the addition's
// primary (dy scaled), the multiplication's primary (dy * y) and its
// per-channel secondary (a reduction over N, H, W), clamped addition.
func BenchmarkArithmeticGPU(b *testing.B) {
	dev := neuronBenchDevice(b)
	r := rand.New(rand.NewSource(2))
	sh := neuronBenchShape()
	n := sh.N * sh.C * sh.H * sh.W
	data := randomData(r, n)
	pcD := padding.Descriptor{N: 1, C: sh.C, H: 1, W: 1}
	for _, f := range neuronFormats(dev) {
		bytes := float64(n * f.Size())
		copyGBs := neuronCopyGBs(b, dev, uint64(bytes))
		prefix := fmt.Sprintf("%dx%dx%dx%d/%v", sh.N, sh.C, sh.H, sh.W, f)
		b.Run(prefix+"/copy", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.ReportMetric(neuronCopyGBs(b, dev, uint64(bytes)), "GB/s")
			}
		})
		x, y, z := neuronImage(b, dev, sh, data, f), neuronImage(b, dev, sh, data, f), neuronImage(b, dev, sh, nil, f)
		dz, dx := neuronImage(b, dev, sh, data, f), neuronImage(b, dev, sh, nil, f)
		pc, dpc := neuronImage(b, dev, pcD, randomData(r, sh.C), f), neuronImage(b, dev, pcD, nil, f)
		add := ops.NewArithmeticDescriptor(ops.ArithmeticAdd)
		clamped := add
		clamped.Minimum, clamped.Maximum = 0, 6
		mul := ops.NewArithmeticDescriptor(ops.ArithmeticMultiply)
		fwd := func(name string, d ops.ArithmeticDescriptor, secondary *ops.Image, traffic float64) {
			k := must(ops.NewArithmetic(dev, d))
			neuronBench(b, dev, prefix+"/"+name+"/fwd", traffic, copyGBs, func(cb *vk.CommandBuffer) error { return k.Encode(cb, x, secondary, z) })
		}
		bwd := func(name string, d ops.ArithmeticDescriptor, secondary *ops.Image, side bool, out *ops.Image, traffic float64) {
			k := must(ops.NewArithmeticGradient(dev, d, side))
			neuronBench(b, dev, prefix+"/"+name, traffic, copyGBs, func(cb *vk.CommandBuffer) error { return k.Encode(cb, dz, x, secondary, out) })
			k.Close()
		}
		fwd("add", add, y, 3*bytes)
		fwd("add-clamped", clamped, y, 3*bytes)
		fwd("multiply-per-channel", mul, pc, 2*bytes)
		bwd("add/bwd-primary", add, y, false, dx, 2*bytes)
		bwd("add-clamped/bwd-primary", clamped, y, false, dx, 4*bytes)
		bwd("multiply/bwd-primary", mul, y, false, dx, 3*bytes)
		bwd("multiply-per-channel/bwd-primary", mul, pc, false, dx, 2*bytes)
		bwd("multiply-per-channel/bwd-secondary", mul, pc, true, dpc, 2*bytes)
		bwd("add-per-channel/bwd-secondary", add, pc, true, dpc, bytes)
		for _, im := range []*ops.Image{x, y, z, dz, dx} {
			im.Close()
		}
	}
}

// BenchmarkSoftMaxGPU: softmax and log-softmax over channels, forward and
// gradient, on many pixels, few pixels and 1x1 planes (logits). Traffic
// counts each image once: the kernels read their inputs twice, the second
// time mostly from cache.
func BenchmarkSoftMaxGPU(b *testing.B) {
	dev := neuronBenchDevice(b)
	r := rand.New(rand.NewSource(3))
	shapes := []padding.Descriptor{{N: 1, C: 1000, H: 16, W: 16}, {N: 1, C: 1000, H: 8, W: 8}, {N: 8, C: 1000, H: 1, W: 1}}
	if os.Getenv("VKMPS_BENCH_LARGE") == "1" {
		shapes = []padding.Descriptor{{N: 1, C: 1000, H: 64, W: 64}, {N: 1, C: 1000, H: 8, W: 8}, {N: 64, C: 1000, H: 1, W: 1}}
	}
	for _, f := range neuronFormats(dev) {
		for _, sh := range shapes {
			n := sh.N * sh.C * sh.H * sh.W
			bytes := float64(n * f.Size())
			copyGBs := neuronCopyGBs(b, dev, uint64(bytes))
			prefix := fmt.Sprintf("%dx%dx%dx%d/%v", sh.N, sh.C, sh.H, sh.W, f)
			x, y, dy, dx := neuronImage(b, dev, sh, randomData(r, n), f), neuronImage(b, dev, sh, nil, f),
				neuronImage(b, dev, sh, randomData(r, n), f), neuronImage(b, dev, sh, nil, f)
			sm, lsm := must(ops.NewSoftMax(dev)), must(ops.NewLogSoftMax(dev))
			smg, lsmg := must(ops.NewSoftMaxGradient(dev)), must(ops.NewLogSoftMaxGradient(dev))
			neuronBench(b, dev, prefix+"/softmax/fwd", 2*bytes, copyGBs, func(cb *vk.CommandBuffer) error { return sm.Encode(cb, x, y) })
			neuronBench(b, dev, prefix+"/softmax/bwd", 3*bytes, copyGBs, func(cb *vk.CommandBuffer) error { return smg.Encode(cb, dy, y, dx) })
			neuronBench(b, dev, prefix+"/log-softmax/fwd", 2*bytes, copyGBs, func(cb *vk.CommandBuffer) error { return lsm.Encode(cb, x, y) })
			neuronBench(b, dev, prefix+"/log-softmax/bwd", 3*bytes, copyGBs, func(cb *vk.CommandBuffer) error { return lsmg.Encode(cb, dy, y, dx) })
		}
	}
}
