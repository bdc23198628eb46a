package ops_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// GPU time of dropout (keep 0.5, every element its own mask value) on
// 2x16x56x56 (VKMPS_BENCH_LARGE=1: issue 16's 64x256x56x56), float32 or
// float16 (VKMPS_BENCH_DTYPE=float16): the forward keeping its mask
// (EncodeToState, as training does), the forward without a state
// (Encode), and the gradient. Each reports gpu-us, MB (the minimum
// traffic: the image read once and written once, plus the mask bits
// written or read once), GB/s and %copy, the bandwidth as a percentage of
// a copy moving as many bytes ("copy"). The forward's time includes the
// draw counter's one-invocation dispatch and its barrier.
func BenchmarkDropoutGPU(b *testing.B) {
	dev := vktest.Open(b)
	if !dev.Limits().TimestampsSupported {
		b.Skip("no timestamps")
	}
	format := benchFormat(b, dev)
	sd := padding.Descriptor{N: 2, C: 16, H: 56, W: 56}
	if upLarge() {
		sd = padding.Descriptor{N: 64, C: 256, H: 56, W: 56}
	}
	r := rand.New(rand.NewSource(1))
	n := sd.N * sd.C * sd.H * sd.W
	src := upImage(b, dev, sd, format, 0, randomData(r, n))
	dst := upImage(b, dev, sd, format, 0, nil)
	dx := upImage(b, dev, sd, format, 0, nil)
	desc := ops.DropoutDescriptor{KeepProbability: 0.5, Seed: 1, MaskStride: ops.DefaultMaskStride}
	k := must(ops.NewDropout(dev, desc))
	defer k.Close()
	g := must(ops.NewDropoutGradient(dev, desc))
	st := must(k.NewGradientState(src.Descriptor()))
	defer st.Close()
	image := float64(2*n) * float64(format.Size())
	mask := float64(sd.N*sd.C*sd.H*((sd.W+31)/32)) * 4
	copyGBs := upCopyGBs(b, dev, image+mask)
	name := fmt.Sprintf("%dx%dx%dx%d-%v", sd.N, sd.C, sd.H, sd.W, format)
	b.Run(name+"/fwd", func(b *testing.B) {
		upReport(b, dev, image+mask, copyGBs, func(cb *vk.CommandBuffer) error { return k.EncodeToState(cb, src, st, dst) })
	})
	b.Run(name+"/fwd-nomask", func(b *testing.B) {
		upReport(b, dev, image, copyGBs, func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) })
	})
	b.Run(name+"/bwd", func(b *testing.B) {
		upReport(b, dev, image+mask, copyGBs, func(cb *vk.CommandBuffer) error { return g.Encode(cb, dst, st, dx) })
	})
}

// Host cost of encoding dropout with a state and its gradient (no
// allocation in steady state).
func BenchmarkDropoutEncode(b *testing.B) {
	dev := vktest.Open(b)
	d := padding.Descriptor{N: 2, C: 16, H: 32, W: 32}
	src, dst := newImage(b, dev, d, nil), newImage(b, dev, d, nil)
	desc := ops.DropoutDescriptor{KeepProbability: 0.5, Seed: 1, MaskStride: ops.DefaultMaskStride}
	k := must(ops.NewDropout(dev, desc))
	defer k.Close()
	g := must(ops.NewDropoutGradient(dev, desc))
	st := must(k.NewGradientState(src.Descriptor()))
	defer st.Close()
	cb, err := dev.NewCommandBuffer()
	require.NoError(b, err)
	defer func() { cb.Close() }()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%300 == 299 {
			b.StopTimer()
			require.NoError(b, cb.Reset())
			b.StartTimer()
		}
		if err := k.EncodeToState(cb, src, st, dst); err != nil {
			b.Fatal(err)
		}
		if err := g.Encode(cb, dst, st, src); err != nil {
			b.Fatal(err)
		}
	}
}
