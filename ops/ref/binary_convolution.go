package ref

import (
	"errors"
	"fmt"
	"math"
)

// ErrBinaryConv reports an invalid binary convolution reference call.
var ErrBinaryConv = errors.New("ref: invalid binary convolution")

// BinaryConvType is MPSCNNBinaryConvolutionType (ops.BinaryConvolutionType
// has the same values).
type BinaryConvType int

const (
	// BinaryWeights: S = sum x~ * sgn(w) (the input is not binarized).
	BinaryWeights BinaryConvType = iota
	// XNOR: S = sum sgn(x~) * sgn(w).
	XNOR
	// AND: S = sum [x~ >= 0] * [w >= 0].
	AND
)

// BinaryConv is a binary convolution (MPSCNNBinaryConvolution, groups 1):
//
//	x~[n,c,y,x] = (x[n,c,y,x] + InputBias[c]) * InputScale[c]
//	y[n,o,oy,ox] = Neuron(Scale[o] * beta[n,oy,ox] * S[n,o,oy,ox] + Bias[o])
//
// with sgn(v) = v >= 0 ? +1 : -1 and S summed over the I input channels
// and the KernelH x KernelW taps of the window whose first tap is at
// (oy*StrideY - PadTop, ox*StrideX - PadLeft), taps stepping by the
// dilation. A tap outside x reads x = 0, so it contributes
// x~ = InputBias[c] * InputScale[c] (binarized like any other value).
// beta = 1, or with BetaScaling the mean over the KernelH*KernelW taps of
// A[n,y,x] = sum_c |x~[n,c,y,x]| / I (outside taps included, with their
// x~). x~ is computed in the tensor's element type, as the GPU does, so
// that values binarize alike; sums are float64.
//
// Weights are (O, I, KH, KW) floats of which only the sign counts
// (w >= 0 is +1). Scale and Bias have O values (nil: 1 and 0), InputBias
// and InputScale I values (nil: 0 and 1).
type BinaryConv struct {
	Type                 BinaryConvType
	BetaScaling          bool
	KernelW, KernelH     int
	StrideX, StrideY     int
	DilationX, DilationY int
	PadTop, PadLeft      int
	Weights              []float64
	Scale, Bias          []float64
	InputBias            []float64
	InputScale           []float64
	Neuron               Neuron
}

// BinaryConvolution computes y from x; y's shape (N, O, OH, OW) sets the
// output size.
func BinaryConvolution[T Float](b BinaryConv, x Tensor[T], y *Tensor[T]) error {
	if err := x.check("source"); err != nil {
		return err
	}
	if y == nil {
		return fmt.Errorf("%w: nil destination", ErrBinaryConv)
	}
	if err := y.check("destination"); err != nil {
		return err
	}
	for _, v := range []struct {
		name string
		n    int
	}{{"kernel width", b.KernelW}, {"kernel height", b.KernelH}, {"stride x", b.StrideX}, {"stride y", b.StrideY},
		{"dilation x", b.DilationX}, {"dilation y", b.DilationY}} {
		if v.n < 1 {
			return fmt.Errorf("%w: %s %d < 1", ErrBinaryConv, v.name, v.n)
		}
	}
	if b.Type < BinaryWeights || b.Type > AND {
		return fmt.Errorf("%w: unknown type %d", ErrBinaryConv, int(b.Type))
	}
	in, out := x.C, y.C
	if y.N != x.N {
		return fmt.Errorf("%w: %d source and %d destination images", ErrBinaryConv, x.N, y.N)
	}
	if len(b.Weights) != out*in*b.KernelH*b.KernelW {
		return fmt.Errorf("%w: %d weights, want %dx%dx%dx%d", ErrBinaryConv, len(b.Weights), out, in, b.KernelH, b.KernelW)
	}
	for _, v := range []struct {
		name string
		v    []float64
		n    int
	}{{"scale", b.Scale, out}, {"bias", b.Bias, out}, {"input bias", b.InputBias, in}, {"input scale", b.InputScale, in}} {
		if v.v != nil && len(v.v) != v.n {
			return fmt.Errorf("%w: %d %s values, want %d", ErrBinaryConv, len(v.v), v.name, v.n)
		}
	}
	at := func(v []float64, i int, def float64) float64 {
		if v == nil {
			return def
		}
		return v[i]
	}
	// x~ of every input value, and of an outside tap per channel.
	xt := make([]T, len(x.Data))
	pad := make([]T, in)
	for c := 0; c < in; c++ {
		ib, is := T(at(b.InputBias, c, 0)), T(at(b.InputScale, c, 1))
		pad[c] = (0 + ib) * is
		for n := 0; n < x.N; n++ {
			for i := x.Index(n, c, 0, 0); i < x.Index(n, c, 0, 0)+x.H*x.W; i++ {
				xt[i] = (x.Data[i] + ib) * is
			}
		}
	}
	sgn := func(v float64) float64 {
		if v >= 0 {
			return 1
		}
		return -1
	}
	taps := float64(b.KernelH * b.KernelW)
	for n := 0; n < y.N; n++ {
		for oy := 0; oy < y.H; oy++ {
			for ox := 0; ox < y.W; ox++ {
				// value returns x~ at channel c of tap (ky, kx).
				value := func(c, ky, kx int) float64 {
					sy, sx := oy*b.StrideY-b.PadTop+ky*b.DilationY, ox*b.StrideX-b.PadLeft+kx*b.DilationX
					if sy < 0 || sy >= x.H || sx < 0 || sx >= x.W {
						return float64(pad[c])
					}
					return float64(xt[x.Index(n, c, sy, sx)])
				}
				beta := 1.0
				if b.BetaScaling {
					sum := 0.0
					for ky := 0; ky < b.KernelH; ky++ {
						for kx := 0; kx < b.KernelW; kx++ {
							a := 0.0
							for c := 0; c < in; c++ {
								a += math.Abs(value(c, ky, kx))
							}
							sum += a / float64(in)
						}
					}
					beta = sum / taps
				}
				for o := 0; o < out; o++ {
					s := 0.0
					for c := 0; c < in; c++ {
						for ky := 0; ky < b.KernelH; ky++ {
							for kx := 0; kx < b.KernelW; kx++ {
								w := sgn(b.Weights[((o*in+c)*b.KernelH+ky)*b.KernelW+kx])
								v := value(c, ky, kx)
								switch b.Type {
								case BinaryWeights:
									s += v * w
								case XNOR:
									s += sgn(v) * w
								case AND:
									if v >= 0 && w > 0 {
										s++
									}
								}
							}
						}
					}
					r := at(b.Scale, o, 1)*beta*s + at(b.Bias, o, 0)
					if b.Neuron.Type != NeuronNone {
						r = b.Neuron.Forward(r, o)
					}
					y.Set(n, o, oy, ox, T(r))
				}
			}
		}
	}
	return nil
}
