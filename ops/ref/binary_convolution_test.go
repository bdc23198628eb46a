package ref

import (
	"math"
	"math/bits"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// The reference's XNOR and AND sums equal MPS's word formulas: per 32-bit
// word of packed signs, 32 - 2*popcount(x ^ w) (XNOR, bits beyond the
// channels masked) and popcount(x & w) (AND).
func TestBinaryConvolutionPopcountIdentity(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, in := range []int{1, 5, 32, 33, 70} {
		n, out, h, w, k := 2, 3, 5, 4, 3
		x := NewTensor[float32](n, in, h, w)
		for i := range x.Data {
			x.Data[i] = float32(r.NormFloat64())
		}
		wt := make([]float64, out*in*k*k)
		for i := range wt {
			wt[i] = r.NormFloat64()
		}
		words := (in + 31) / 32
		pack := func(sign func(c int) bool) []uint32 {
			p := make([]uint32, words)
			for c := 0; c < in; c++ {
				if sign(c) {
					p[c/32] |= 1 << (c % 32)
				}
			}
			return p
		}
		for _, typ := range []BinaryConvType{XNOR, AND} {
			b := BinaryConv{Type: typ, KernelW: k, KernelH: k, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, PadTop: 1, PadLeft: 1, Weights: wt}
			y := NewTensor[float64](n, out, h, w)
			xd := NewTensor[float64](n, in, h, w)
			for i, v := range x.Data {
				xd.Data[i] = float64(v)
			}
			require.NoError(t, BinaryConvolution(b, xd, &y))
			for nn := 0; nn < n; nn++ {
				for o := 0; o < out; o++ {
					for oy := 0; oy < h; oy++ {
						for ox := 0; ox < w; ox++ {
							s := 0
							for ky := 0; ky < k; ky++ {
								for kx := 0; kx < k; kx++ {
									sy, sx := oy-1+ky, ox-1+kx
									xb := pack(func(c int) bool {
										if sy < 0 || sy >= h || sx < 0 || sx >= w {
											return true // x = 0 binarizes to +1
										}
										return x.At(nn, c, sy, sx) >= 0
									})
									wb := pack(func(c int) bool { return wt[((o*in+c)*k+ky)*k+kx] >= 0 })
									for i := range xb {
										valid := min(32, in-32*i)
										if typ == XNOR {
											s += valid - 2*bits.OnesCount32(xb[i]^wb[i])
										} else {
											s += bits.OnesCount32(xb[i] & wb[i])
										}
									}
								}
							}
							require.Equal(t, float64(s), y.At(nn, o, oy, ox), "%v I=%d", typ, in)
						}
					}
				}
			}
		}
	}
}

// Beta is the window mean of A = sum_c |x~| / I, padded taps reading
// x~ = inBias * inScale; the output is scale * beta * S + bias.
func TestBinaryConvolutionBeta(t *testing.T) {
	x, err := TensorOf(1, 2, 1, 2, []float64{1, -3, 2, 0})
	require.NoError(t, err)
	b := BinaryConv{Type: XNOR, BetaScaling: true, KernelW: 3, KernelH: 1, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, PadLeft: 1,
		Weights: []float64{1, 1, 1, -1, -1, -1}, Scale: []float64{2}, Bias: []float64{0.5},
		InputBias: []float64{0.5, -1}, InputScale: []float64{1, 2}}
	y := NewTensor[float64](1, 1, 1, 2)
	require.NoError(t, BinaryConvolution(b, x, &y))
	// x~: channel 0: 1.5, -2.5 (pad 0.5); channel 1: (2-1)*2 = 2, (0-1)*2 = -2 (pad -2).
	pad, p0, p1 := (0.5+2)/2, (1.5+2)/2, (2.5+2)/2
	// Output 0 reads pad, pixel 0, pixel 1; output 1 reads pixel 0, pixel 1, pad.
	// Weights +1 on channel 0 and -1 on channel 1: a tap adds
	// sgn(x~0) - sgn(x~1): pad 1+1, pixel 0 1-1, pixel 1 -1+1.
	s := 2.0
	require.InDelta(t, 2*(pad+p0+p1)/3*s+0.5, y.Data[0], 1e-12)
	require.InDelta(t, 2*(p0+p1+pad)/3*s+0.5, y.Data[1], 1e-12)
	require.False(t, math.IsNaN(y.Data[1]))

	// Errors.
	bad := b
	bad.Weights = bad.Weights[1:]
	require.ErrorIs(t, BinaryConvolution(bad, x, &y), ErrBinaryConv)
	bad = b
	bad.StrideX = 0
	require.ErrorIs(t, BinaryConvolution(bad, x, &y), ErrBinaryConv)
	bad = b
	bad.Scale = []float64{1, 2}
	require.ErrorIs(t, BinaryConvolution(bad, x, &y), ErrBinaryConv)
	require.ErrorIs(t, BinaryConvolution(b, x, nil), ErrBinaryConv)
}
