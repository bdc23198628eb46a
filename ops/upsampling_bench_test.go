package ops_test

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// upLarge reports whether the benchmarks run issue 16's shapes
// (VKMPS_BENCH_LARGE=1) rather than small ones for lavapipe.
func upLarge() bool { return os.Getenv("VKMPS_BENCH_LARGE") == "1" }

// upCopyGBs measures the device's copy bandwidth moving traffic bytes in
// all (a copy of traffic/2 bytes: as many bytes read and written as the
// kernel compared with it), with the copy shader BenchmarkGPU uses, and
// reports it as the sub-benchmark "copy".
func upCopyGBs(b *testing.B, dev *vk.Device, traffic float64) float64 {
	size := uint64(traffic/2) &^ 15
	size = min(size, dev.Limits().MaxStorageBufferRange&^15)
	a, err := dev.NewBuffer(size, "copy a")
	require.NoError(b, err)
	defer a.Close()
	c, err := dev.NewBuffer(size, "copy b")
	require.NoError(b, err)
	defer c.Close()
	p, err := dev.Pipeline(spirv.Copy, 256)
	require.NoError(b, err)
	push := make([]byte, 12)
	binary.LittleEndian.PutUint32(push, uint32(size/16))
	groups := uint32(min((size/16+255)/256, uint64(dev.Limits().MaxComputeWorkGroupCount[0])))
	var gbs float64
	b.Run("copy", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			d := gpuTime(b, dev, 10, 7, func(cb *vk.CommandBuffer) error {
				return cb.Dispatch(p, []vk.BufferRange{a.Whole(), c.Whole()}, push, [3]uint32{groups, 1, 1})
			})
			gbs = float64(2*size) / d.Seconds() / 1e9
			b.ReportMetric(float64(d.Nanoseconds())/1e3, "gpu-us")
			b.ReportMetric(float64(2*size)/1e6, "MB")
			b.ReportMetric(gbs, "GB/s")
		}
	})
	return gbs
}

// upReport reports a kernel's GPU time, its minimum traffic (bytes read
// and written once) and bandwidth, and that bandwidth as a percentage of
// the copy's measured alike.
func upReport(b *testing.B, dev *vk.Device, traffic, copyGBs float64, encode func(cb *vk.CommandBuffer) error) {
	for i := 0; i < b.N; i++ {
		d := gpuTime(b, dev, 10, 7, encode)
		gbs := traffic / d.Seconds() / 1e9
		b.ReportMetric(float64(d.Nanoseconds())/1e3, "gpu-us")
		b.ReportMetric(traffic/1e6, "MB")
		b.ReportMetric(gbs, "GB/s")
		if copyGBs > 0 {
			b.ReportMetric(100*gbs/copyGBs, "%copy")
		}
	}
}

// GPU time of every upsampling mode, forward and gradient, by 2x2 from
// 2x16x28x28 (VKMPS_BENCH_LARGE=1: issue 16's 32x256x56x56), float32 or
// float16 (VKMPS_BENCH_DTYPE=float16). Each sub-benchmark reports gpu-us,
// MB (the minimum traffic: source read once, destination written once),
// GB/s and %copy, the bandwidth as a percentage of a copy moving as many
// bytes, measured just before ("copy").
func BenchmarkUpsamplingGPU(b *testing.B) {
	dev := vktest.Open(b)
	if !dev.Limits().TimestampsSupported {
		b.Skip("no timestamps")
	}
	format := benchFormat(b, dev)
	sd := padding.Descriptor{N: 2, C: 16, H: 28, W: 28}
	if upLarge() {
		sd = padding.Descriptor{N: 32, C: 256, H: 56, W: 56}
	}
	r := rand.New(rand.NewSource(1))
	n := sd.N * sd.C * sd.H * sd.W
	src := upImage(b, dev, sd, format, 0, randomData(r, n))
	od := padding.Descriptor{N: sd.N, C: sd.C, H: 2 * sd.H, W: 2 * sd.W}
	dst := upImage(b, dev, od, format, 0, nil)
	dy := upImage(b, dev, od, format, 0, randomData(r, 4*n))
	traffic := float64(5*n) * float64(format.Size())
	copyGBs := upCopyGBs(b, dev, traffic)
	for _, d := range []ops.UpsamplingDescriptor{{ScaleX: 2, ScaleY: 2}, {ScaleX: 2, ScaleY: 2, Bilinear: true},
		{ScaleX: 2, ScaleY: 2, Bilinear: true, AlignCorners: true}} {
		name := fmt.Sprintf("%s/%dx%dx%dx%d-%v", map[bool]string{false: "nearest", true: "bilinear"}[d.Bilinear], sd.N, sd.C, sd.H, sd.W, format)
		if d.AlignCorners {
			name += "-align"
		}
		k := must(ops.NewUpsampling(dev, d))
		g := must(ops.NewUpsamplingGradient(dev, d))
		b.Run(name+"/fwd", func(b *testing.B) {
			upReport(b, dev, traffic, copyGBs, func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) })
		})
		b.Run(name+"/bwd", func(b *testing.B) {
			upReport(b, dev, traffic, copyGBs, func(cb *vk.CommandBuffer) error { return g.Encode(cb, dy, src) })
		})
	}
}

// Host cost of encoding an upsampling kernel and its gradient (no
// allocation in steady state).
func BenchmarkUpsamplingEncode(b *testing.B) {
	dev := vktest.Open(b)
	src := newImage(b, dev, padding.Descriptor{N: 2, C: 16, H: 32, W: 32}, nil)
	dst := newImage(b, dev, padding.Descriptor{N: 2, C: 16, H: 64, W: 64}, nil)
	k := must(ops.NewUpsamplingBilinear(dev, 2, 2, false))
	g := must(ops.NewUpsamplingBilinearGradient(dev, 2, 2, false))
	cb, err := dev.NewCommandBuffer()
	require.NoError(b, err)
	defer func() { cb.Close() }()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%500 == 499 {
			b.StopTimer()
			require.NoError(b, cb.Reset())
			b.StartTimer()
		}
		if err := k.Encode(cb, src, dst); err != nil {
			b.Fatal(err)
		}
		if err := g.Encode(cb, dst, src); err != nil {
			b.Fatal(err)
		}
	}
}
