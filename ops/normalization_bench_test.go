package ops_test

import (
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// bnBenchShapes are issue 16's batch normalization shapes with
// VKMPS_BENCH_LARGE=1 (cuDNN through PyTorch 2.11 on an H100: 252+634 us
// and 133+513 us forward+backward), small ones otherwise.
func bnBenchShapes() []padding.Descriptor {
	if os.Getenv("VKMPS_BENCH_LARGE") == "1" {
		// ResNet-18's first and last layers at batch 32, and a 14x14 and a
		// 7x7 one, whose training passes run fused (bnFusedValues).
		return []padding.Descriptor{{N: 32, C: 64, H: 112, W: 112}, {N: 32, C: 256, H: 56, W: 56},
			{N: 32, C: 256, H: 14, W: 14}, {N: 32, C: 512, H: 7, W: 7}}
	}
	return []padding.Descriptor{{N: 4, C: 16, H: 28, W: 28}, {N: 2, C: 32, H: 14, W: 14}}
}

// BenchmarkBatchNormalizationGPU reports the GPU time of a training batch
// normalization forward (statistics, merge with the running update,
// normalization), its gradient (sums, merge into dgamma and dbeta, dx),
// both, and the inference forward, as gpu-us and GB/s of the traffic the
// passes need (forward: x read twice and y written, 3 tensors; gradient:
// x and dy read twice and dx written, 5; both 8; inference: x read and y
// written, 2; parameters not counted). Images are float32, or float16
// with VKMPS_BENCH_DTYPE=float16. With VKMPS_BENCH_BN_SWEEP=1 it also
// measures fixed chunk sizes (bytes of input per statistics chunk).
func BenchmarkBatchNormalizationGPU(b *testing.B) {
	dev := vktest.Open(b)
	if !dev.Limits().TimestampsSupported {
		b.Skip("no timestamps")
	}
	format := benchFormat(b, dev)
	r := rand.New(rand.NewSource(1))
	chunks := []int{0}
	if os.Getenv("VKMPS_BENCH_BN_SWEEP") == "1" {
		chunks = append(chunks, 4<<10, 8<<10, 16<<10, 32<<10, 64<<10, 128<<10)
	}
	for _, d := range bnBenchShapes() {
		cnt := d.N * d.C * d.H * d.W
		data := randomData(r, cnt)
		x, dy := bnImage(b, dev, format, d, data), bnImage(b, dev, format, d, data)
		y, dx := bnImage(b, dev, format, d, nil), bnImage(b, dev, format, d, nil)
		p := func(v float32) *ops.Image { return bnParam(b, dev, filled(d.C, v)) }
		gamma, beta, rm, rv, dg, db := p(1), p(0), p(0), p(1), p(0), p(0)
		bn := must(ops.NewBatchNormalization(dev, ops.NewBatchNormalizationDescriptor(d.C), gamma, beta, rm, rv))
		g := must(ops.NewBatchNormalizationGradient(bn))
		st := must(bn.NewState())
		require.NoError(b, run(b, dev, func(cb *vk.CommandBuffer) error { return bn.EncodeTraining(cb, x, st, y) }))
		bytes := float64(cnt * format.Size())
		name := fmt.Sprintf("%dx%dx%dx%d", d.N, d.C, d.H, d.W)
		if format != ops.Float32 {
			name += "-" + format.String()
		}
		for _, chunk := range chunks {
			restoreF, restoreG := ops.SetBNChunkBytes(bn, chunk), ops.SetBNChunkBytes(g, chunk)
			prefix := name
			if chunk != 0 {
				prefix += fmt.Sprintf("/chunk%dK", chunk>>10)
			}
			for _, m := range []struct {
				name    string
				traffic float64
				encode  func(cb *vk.CommandBuffer) error
			}{
				{"fwd", 3 * bytes, func(cb *vk.CommandBuffer) error { return bn.EncodeTraining(cb, x, st, y) }},
				{"bwd", 5 * bytes, func(cb *vk.CommandBuffer) error { return g.EncodeAll(cb, dy, x, st, dx, dg, db) }},
				{"fwd+bwd", 8 * bytes, func(cb *vk.CommandBuffer) error {
					if err := bn.EncodeTraining(cb, x, st, y); err != nil {
						return err
					}
					return g.EncodeAll(cb, dy, x, st, dx, dg, db)
				}},
				{"inference", 2 * bytes, func(cb *vk.CommandBuffer) error { return bn.EncodeInference(cb, x, y, nil) }},
			} {
				b.Run(prefix+"/"+m.name, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						t := gpuTime(b, dev, 10, 7, m.encode)
						b.ReportMetric(float64(t.Nanoseconds())/1e3, "gpu-us")
						b.ReportMetric(m.traffic/t.Seconds()/1e9, "GB/s")
					}
				})
			}
			restoreF()
			restoreG()
		}
		st.Close()
		g.Close()
		bn.Close()
	}
}

// BenchmarkNormalizationEncode is the host-side cost of encoding a
// training batch normalization and its gradient (issue 9: no allocation).
func BenchmarkNormalizationEncode(b *testing.B) {
	dev := vktest.Open(b)
	d := padding.Descriptor{N: 2, C: 16, H: 32, W: 32}
	x, dy := newImage(b, dev, d, nil), newImage(b, dev, d, nil)
	y, dx := newImage(b, dev, d, nil), newImage(b, dev, d, nil)
	p := func() *ops.Image { return bnParam(b, dev, make([]float32, d.C)) }
	bn := must(ops.NewBatchNormalization(dev, ops.NewBatchNormalizationDescriptor(d.C), p(), p(), p(), p()))
	defer bn.Close()
	g := must(ops.NewBatchNormalizationGradient(bn))
	defer g.Close()
	st := must(bn.NewState())
	defer st.Close()
	dg, db := p(), p()
	cb := must(dev.NewCommandBuffer())
	defer func() { cb.Close() }()
	require.NoError(b, bn.EncodeTraining(cb, x, st, y))
	require.NoError(b, g.EncodeAll(cb, dy, x, st, dx, dg, db))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%200 == 199 {
			b.StopTimer()
			require.NoError(b, cb.Reset())
			b.StartTimer()
		}
		if err := bn.EncodeTraining(cb, x, st, y); err != nil {
			b.Fatal(err)
		}
		if err := g.EncodeAll(cb, dy, x, st, dx, dg, db); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInstanceNormalizationGPU reports the GPU time of an instance
// normalization forward, its gradient (dx, dgamma, dbeta) and both, as
// gpu-us and GB/s counted as for batch normalization (forward 3 tensors,
// gradient 5, both 8). With VKMPS_BENCH_LARGE=1 the shapes are a
// 32x64x112x112 batch (49 KiB planes, chunked), 8x64x128x128 (64 KiB
// planes) and 1x32x512x512 (32 planes of 1 MiB: one workgroup per plane
// would leave most of the GPU idle), else small ones.
func BenchmarkInstanceNormalizationGPU(b *testing.B) {
	dev := vktest.Open(b)
	if !dev.Limits().TimestampsSupported {
		b.Skip("no timestamps")
	}
	format := benchFormat(b, dev)
	r := rand.New(rand.NewSource(1))
	shapes := []padding.Descriptor{{N: 4, C: 16, H: 28, W: 28}, {N: 1, C: 8, H: 96, W: 96}}
	if os.Getenv("VKMPS_BENCH_LARGE") == "1" {
		shapes = []padding.Descriptor{{N: 32, C: 64, H: 112, W: 112}, {N: 8, C: 64, H: 128, W: 128}, {N: 1, C: 32, H: 512, W: 512}}
	}
	for _, d := range shapes {
		cnt := d.N * d.C * d.H * d.W
		data := randomData(r, cnt)
		x, dy := bnImage(b, dev, format, d, data), bnImage(b, dev, format, d, data)
		y, dx := bnImage(b, dev, format, d, nil), bnImage(b, dev, format, d, nil)
		p := func(v float32) *ops.Image { return bnParam(b, dev, filled(d.C, v)) }
		gamma, beta, dg, db := p(1), p(0), p(0), p(0)
		in := must(ops.NewInstanceNormalization(dev, ops.NewInstanceNormalizationDescriptor(d.C), gamma, beta))
		g := must(ops.NewInstanceNormalizationGradient(in))
		bytes := float64(cnt * format.Size())
		name := fmt.Sprintf("%dx%dx%dx%d", d.N, d.C, d.H, d.W)
		if format != ops.Float32 {
			name += "-" + format.String()
		}
		for _, m := range []struct {
			name    string
			traffic float64
			encode  func(cb *vk.CommandBuffer) error
		}{
			{"fwd", 3 * bytes, func(cb *vk.CommandBuffer) error { return in.Encode(cb, x, y) }},
			{"bwd", 5 * bytes, func(cb *vk.CommandBuffer) error { return g.Encode(cb, dy, x, dx, dg, db) }},
			{"fwd+bwd", 8 * bytes, func(cb *vk.CommandBuffer) error {
				if err := in.Encode(cb, x, y); err != nil {
					return err
				}
				return g.Encode(cb, dy, x, dx, dg, db)
			}},
		} {
			b.Run(name+"/"+m.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					t := gpuTime(b, dev, 10, 7, m.encode)
					b.ReportMetric(float64(t.Nanoseconds())/1e3, "gpu-us")
					b.ReportMetric(m.traffic/t.Seconds()/1e9, "GB/s")
				}
			})
		}
		g.Close()
		in.Close()
	}
}
