package ref

import (
	"math/rand/v2"
	"testing"

	"github.com/vkmps/vkmps/padding"
)

// Benchmarks over a 8x16x32x32 float32 batch, 3x3 stride 2, as selfcheck
// tables run it.
func benchSetup(k Kind) (Geometry, Tensor[float32], Tensor[float32], Tensor[float32]) {
	rng := rand.New(rand.NewPCG(1, 2))
	g := Geometry{Kind: k, KernelW: 3, KernelH: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1,
		OffsetX: 1, OffsetY: 1, EdgeMode: padding.EdgeClamp}
	src := randTensor(padding.Descriptor{N: 8, C: 16, H: 32, W: 32}, func() float32 { return rng.Float32() })
	dst := NewTensor[float32](8, 16, 16, 16)
	dx := NewTensor[float32](8, 16, 32, 32)
	return g, src, dst, dx
}

func BenchmarkPool(b *testing.B) {
	for _, k := range []Kind{Max, Average, L2Norm} {
		b.Run(k.String(), func(b *testing.B) {
			g, src, dst, _ := benchSetup(k)
			b.ReportAllocs()
			for b.Loop() {
				if err := Pool(g, src, &dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPoolGradient(b *testing.B) {
	for _, k := range []Kind{Max, Average, L2Norm} {
		b.Run(k.String(), func(b *testing.B) {
			g, src, dy, dx := benchSetup(k)
			b.ReportAllocs()
			for b.Loop() {
				if err := PoolGradient(g, src, dy, &dx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
