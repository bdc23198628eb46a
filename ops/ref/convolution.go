package ref

import (
	"errors"
	"fmt"
	"math"
)

// ErrConv reports an invalid convolution reference call: a geometry < 1,
// groups not dividing the channels, or tensors whose shapes do not fit.
var ErrConv = errors.New("ref: invalid convolution")

// Conv is the geometry of a 2-D convolution in PyTorch's terms (F.conv2d,
// F.conv_transpose2d), which the vkmps kernels reproduce:
//
//	conv:       y[n, o, oy, ox] = neuron(bias[o] + sum over i in o's group, ky, kx of
//	            w[o, i - g*I/G, ky, kx] * x[n, i, oy*StrideY - PadTop + ky*DilationY,
//	                                               ox*StrideX - PadLeft + kx*DilationX])
//	transpose:  y[n, o, iy*StrideY - PadTop + ky*DilationY, ...] += x[n, i, iy, ix] * w[i, o - g*O/G, ky, kx]
//
// Reads outside x are 0. PadTop/PadLeft place the first tap of output 0 at
// -PadTop/-PadLeft (MPS: offset = floor(ke/2) - pad); the bottom and right
// pads, and PyTorch's output_padding, only size the output, which callers
// pass in. Groups 0 means 1.
type Conv struct {
	KernelW, KernelH     int
	StrideX, StrideY     int
	DilationX, DilationY int
	Groups               int
	PadTop, PadLeft      int
	// Neuron is applied to the forward result (fused); gradients are those
	// of the linear convolution (w.r.t. its pre-activation output).
	Neuron Neuron
}

func (g Conv) groups() int {
	if g.Groups == 0 {
		return 1
	}
	return g.Groups
}

func (g Conv) validate() error {
	for _, v := range []struct {
		name string
		n    int
	}{{"kernel width", g.KernelW}, {"kernel height", g.KernelH}, {"stride x", g.StrideX}, {"stride y", g.StrideY},
		{"dilation x", g.DilationX}, {"dilation y", g.DilationY}, {"groups", g.groups()}} {
		if v.n < 1 {
			return fmt.Errorf("%w: %s %d < 1", ErrConv, v.name, v.n)
		}
	}
	return nil
}

// ConvOutputSize is PyTorch's conv2d output size of one axis:
// floor((src + before + after - dilation*(kernel-1) - 1) / stride) + 1.
// A window larger than the padded source gives 0.
func ConvOutputSize(src, kernel, stride, dilation, before, after int) int {
	n := src + before + after - dilation*(kernel-1) - 1
	if n < 0 {
		return 0
	}
	return n/stride + 1
}

// ConvTransposeOutputSize is PyTorch's conv_transpose2d output size of one
// axis: (src-1)*stride - before - after + dilation*(kernel-1) + outputPadding + 1.
func ConvTransposeOutputSize(src, kernel, stride, dilation, before, after, outputPadding int) int {
	return (src-1)*stride - before - after + dilation*(kernel-1) + outputPadding + 1
}

// checkConv validates the convolution x (N, C, H, W) * w (O, C/G, KH, KW)
// -> y (N, O, OH, OW) with bias of length O (or nil).
func (g Conv) checkConv(x, w, y padShape, bias int) error {
	if err := g.validate(); err != nil {
		return err
	}
	gr := g.groups()
	switch {
	case x.c%gr != 0 || w.n%gr != 0:
		return fmt.Errorf("%w: %d groups do not divide %d input and %d output channels", ErrConv, gr, x.c, w.n)
	case w.c != x.c/gr || w.h != g.KernelH || w.w != g.KernelW:
		return fmt.Errorf("%w: weights %v, want %dx%dx%dx%d", ErrConv, w, w.n, x.c/gr, g.KernelH, g.KernelW)
	case y.n != x.n || y.c != w.n:
		return fmt.Errorf("%w: output %v for input %v and %d output channels", ErrConv, y, x, w.n)
	case bias >= 0 && bias != w.n:
		return fmt.Errorf("%w: bias of %d values for %d output channels", ErrConv, bias, w.n)
	}
	return nil
}

type padShape struct{ n, c, h, w int }

func (s padShape) String() string { return fmt.Sprintf("%dx%dx%dx%d", s.n, s.c, s.h, s.w) }

func shapeOf[T Float](t Tensor[T]) padShape { return padShape{t.N, t.C, t.H, t.W} }

func biasLen[T Float](b []T) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// ConvForward computes the convolution of x with w (O, C/G, KH, KW) plus
// bias (length O, or nil) into y, whose shape the caller chooses (N, O,
// OH, OW), then the fused neuron. Sums in float64, rounded once.
func ConvForward[T Float](g Conv, x, w Tensor[T], bias []T, y *Tensor[T]) error {
	if err := g.checkConv(shapeOf(x), shapeOf(w), shapeOf(*y), biasLen(bias)); err != nil {
		return err
	}
	icg, ocg := x.C/g.groups(), y.C/g.groups()
	for n := 0; n < y.N; n++ {
		for o := 0; o < y.C; o++ {
			i0 := o / ocg * icg
			for oy := 0; oy < y.H; oy++ {
				for ox := 0; ox < y.W; ox++ {
					var s float64
					if bias != nil {
						s = float64(bias[o])
					}
					for i := 0; i < icg; i++ {
						for ky := 0; ky < g.KernelH; ky++ {
							iy := oy*g.StrideY - g.PadTop + ky*g.DilationY
							if iy < 0 || iy >= x.H {
								continue
							}
							for kx := 0; kx < g.KernelW; kx++ {
								ix := ox*g.StrideX - g.PadLeft + kx*g.DilationX
								if ix < 0 || ix >= x.W {
									continue
								}
								s += float64(w.At(o, i, ky, kx)) * float64(x.At(n, i0+i, iy, ix))
							}
						}
					}
					y.Set(n, o, oy, ox, T(g.Neuron.Forward(s, o)))
				}
			}
		}
	}
	return nil
}

// ConvGradData computes dx, the gradient of sum(dy * conv(x)) w.r.t. x
// (the linear convolution's), from dy (N, O, OH, OW) and w; dx has x's
// shape and is overwritten.
func ConvGradData[T Float](g Conv, dy, w Tensor[T], dx *Tensor[T]) error {
	if err := g.checkConv(shapeOf(*dx), shapeOf(w), shapeOf(dy), -1); err != nil {
		return err
	}
	acc := make([]float64, len(dx.Data))
	icg, ocg := dx.C/g.groups(), dy.C/g.groups()
	for n := 0; n < dy.N; n++ {
		for o := 0; o < dy.C; o++ {
			i0 := o / ocg * icg
			for oy := 0; oy < dy.H; oy++ {
				for ox := 0; ox < dy.W; ox++ {
					d := float64(dy.At(n, o, oy, ox))
					for i := 0; i < icg; i++ {
						for ky := 0; ky < g.KernelH; ky++ {
							iy := oy*g.StrideY - g.PadTop + ky*g.DilationY
							if iy < 0 || iy >= dx.H {
								continue
							}
							for kx := 0; kx < g.KernelW; kx++ {
								ix := ox*g.StrideX - g.PadLeft + kx*g.DilationX
								if ix < 0 || ix >= dx.W {
									continue
								}
								acc[dx.Index(n, i0+i, iy, ix)] += d * float64(w.At(o, i, ky, kx))
							}
						}
					}
				}
			}
		}
	}
	for i, v := range acc {
		dx.Data[i] = T(v)
	}
	return nil
}

// ConvGradWeights computes dw (O, C/G, KH, KW) and, when db is not nil, db
// (length O): the gradients of sum(dy * conv(x)) w.r.t. the weights and
// the bias, summed over the batch. Both are overwritten.
func ConvGradWeights[T Float](g Conv, x, dy Tensor[T], dw *Tensor[T], db []T) error {
	if err := g.checkConv(shapeOf(x), shapeOf(*dw), shapeOf(dy), biasLen(db)); err != nil {
		return err
	}
	acc := make([]float64, len(dw.Data))
	bacc := make([]float64, dy.C)
	icg, ocg := x.C/g.groups(), dy.C/g.groups()
	for n := 0; n < dy.N; n++ {
		for o := 0; o < dy.C; o++ {
			i0 := o / ocg * icg
			for oy := 0; oy < dy.H; oy++ {
				for ox := 0; ox < dy.W; ox++ {
					d := float64(dy.At(n, o, oy, ox))
					bacc[o] += d
					for i := 0; i < icg; i++ {
						for ky := 0; ky < g.KernelH; ky++ {
							iy := oy*g.StrideY - g.PadTop + ky*g.DilationY
							if iy < 0 || iy >= x.H {
								continue
							}
							for kx := 0; kx < g.KernelW; kx++ {
								ix := ox*g.StrideX - g.PadLeft + kx*g.DilationX
								if ix < 0 || ix >= x.W {
									continue
								}
								acc[dw.Index(o, i, ky, kx)] += d * float64(x.At(n, i0+i, iy, ix))
							}
						}
					}
				}
			}
		}
	}
	for i, v := range acc {
		dw.Data[i] = T(v)
	}
	for i := range db {
		db[i] = T(bacc[i])
	}
	return nil
}

// ConvTransposeForward computes PyTorch's conv_transpose2d of x (N, I, H,
// W) with w (I, O/G, KH, KW) plus bias (length O, or nil) into y (N, O, OH,
// OW: the caller sizes it, output_padding included), then the fused
// neuron. It is the data gradient of the convolution y -> x whose weights
// are w as they are (conv2d's layout (out=I, in/G=O/G, KH, KW)), so it is
// computed as one.
func ConvTransposeForward[T Float](g Conv, x, w Tensor[T], bias []T, y *Tensor[T]) error {
	if bias != nil && len(bias) != y.C {
		return fmt.Errorf("%w: conv transpose: bias of %d values for %d output channels", ErrConv, len(bias), y.C)
	}
	z := Tensor[float64]{N: y.N, C: y.C, H: y.H, W: y.W, Data: make([]float64, len(y.Data))}
	if err := ConvGradData(g, to64(x), to64(w), &z); err != nil {
		return fmt.Errorf("conv transpose: %w", err)
	}
	plane := y.H * y.W
	for i, v := range z.Data {
		o := i / plane % y.C
		if bias != nil {
			v += float64(bias[o])
		}
		y.Data[i] = T(g.Neuron.Forward(v, o))
	}
	return nil
}

func to64[T Float](t Tensor[T]) Tensor[float64] {
	out := Tensor[float64]{N: t.N, C: t.C, H: t.H, W: t.W, Data: make([]float64, len(t.Data))}
	for i, v := range t.Data {
		out.Data[i] = float64(v)
	}
	return out
}

// ConvTransposeGradData computes dx (N, I, H, W), the gradient of
// sum(dy * conv_transpose(x)) w.r.t. x: the convolution of dy with the
// same weights. Overwritten.
func ConvTransposeGradData[T Float](g Conv, dy, w Tensor[T], dx *Tensor[T]) error {
	g.Neuron = Neuron{}
	return ConvForward(g, dy, w, nil, dx)
}

// ConvTransposeGradWeights computes dw (I, O/G, KH, KW) and, when db is
// not nil, db (length O), summed over the batch: the weight gradient of
// the convolution dy -> x. Overwritten.
func ConvTransposeGradWeights[T Float](g Conv, x, dy Tensor[T], dw *Tensor[T], db []T) error {
	if err := ConvGradWeights(g, dy, x, dw, nil); err != nil {
		return fmt.Errorf("conv transpose: %w", err)
	}
	if db == nil {
		return nil
	}
	if len(db) != dy.C {
		return fmt.Errorf("%w: conv transpose: bias of %d values for %d output channels", ErrConv, len(db), dy.C)
	}
	plane := dy.H * dy.W
	for o := 0; o < dy.C; o++ {
		var s float64
		for n := 0; n < dy.N; n++ {
			for p := 0; p < plane; p++ {
				s += float64(dy.Data[(n*dy.C+o)*plane+p])
			}
		}
		db[o] = T(s)
	}
	return nil
}

// FullyConnected computes y[n, o] = neuron(bias[o] + sum_k w[o, k] *
// x[n, k]) where k runs over the C*H*W values of batch image n (nn.Linear
// after a C,H,W flatten). w has O rows of C*H*W values (any 4-D shape with
// N = O); y is N x O x 1 x 1.
func FullyConnected[T Float](x, w Tensor[T], bias []T, neuron Neuron, y *Tensor[T]) error {
	k := x.C * x.H * x.W
	if len(w.Data) != w.N*k || y.N != x.N || y.C != w.N || y.H != 1 || y.W != 1 || (bias != nil && len(bias) != w.N) {
		return fmt.Errorf("%w: fully connected %v x weights %v -> %v", ErrConv, shapeOf(x), shapeOf(w), shapeOf(*y))
	}
	for n := 0; n < x.N; n++ {
		for o := 0; o < w.N; o++ {
			var s float64
			if bias != nil {
				s = float64(bias[o])
			}
			for i := 0; i < k; i++ {
				s += float64(w.Data[o*k+i]) * float64(x.Data[n*k+i])
			}
			y.Data[n*w.N+o] = T(neuron.Forward(s, o))
		}
	}
	return nil
}

// FullyConnectedGrad computes the gradients of sum(dy * fc(x)) (the linear
// part): dx (x's shape) when not nil, dw (w's shape) and db (length O)
// when not nil, dw and db summed over the batch. Outputs are overwritten.
func FullyConnectedGrad[T Float](x, w, dy Tensor[T], dx, dw *Tensor[T], db []T) error {
	k := x.C * x.H * x.W
	o := w.N
	if len(w.Data) != o*k || dy.N != x.N || dy.C != o || len(dy.Data) != x.N*o {
		return fmt.Errorf("%w: fully connected gradient: x %v, weights %v, dy %v", ErrConv, shapeOf(x), shapeOf(w), shapeOf(dy))
	}
	if dx != nil {
		if len(dx.Data) != len(x.Data) {
			return fmt.Errorf("%w: dx %v for x %v", ErrConv, shapeOf(*dx), shapeOf(x))
		}
		for n := 0; n < x.N; n++ {
			for i := 0; i < k; i++ {
				var s float64
				for j := 0; j < o; j++ {
					s += float64(w.Data[j*k+i]) * float64(dy.Data[n*o+j])
				}
				dx.Data[n*k+i] = T(s)
			}
		}
	}
	if dw != nil {
		if len(dw.Data) != len(w.Data) {
			return fmt.Errorf("%w: dw %v for weights %v", ErrConv, shapeOf(*dw), shapeOf(w))
		}
		for j := 0; j < o; j++ {
			for i := 0; i < k; i++ {
				var s float64
				for n := 0; n < x.N; n++ {
					s += float64(dy.Data[n*o+j]) * float64(x.Data[n*k+i])
				}
				dw.Data[j*k+i] = T(s)
			}
		}
	}
	if db != nil {
		if len(db) != o {
			return fmt.Errorf("%w: db of %d values for %d outputs", ErrConv, len(db), o)
		}
		for j := 0; j < o; j++ {
			var s float64
			for n := 0; n < x.N; n++ {
				s += float64(dy.Data[n*o+j])
			}
			db[j] = T(s)
		}
	}
	return nil
}

// NeuronGrad turns dy (w.r.t. a fused neuron's output) into the gradient
// w.r.t. its input z: dz = dy * f'(z), feature channel c of each value
// being its index's channel for the shape of z.
func NeuronGrad[T Float](n Neuron, z, dy Tensor[T], dz *Tensor[T]) {
	plane := z.H * z.W
	for i := range dz.Data {
		c := i / plane % z.C
		dz.Data[i] = T(float64(dy.Data[i]) * n.Derivative(float64(z.Data[i]), c))
	}
}

// ConvTolerance is the tolerance of a float32 convolution sum of K
// products against this package's float64 reference:
// |got - want| <= ConvTolerance(K) * (1 + sum |products|) is what float32
// accumulation in any order guarantees (K rounding errors of at most
// 2^-24 of the running magnitude each, with slack).
func ConvTolerance(k int) float64 { return float64(k+8) * 0x1p-23 }

// CompareConv checks got against want where mag[i] bounds the sum of the
// magnitudes of the products behind value i: |got - want| <= tol*(1+mag)
// (NaN matches NaN). It names the first mismatch.
func CompareConv[T Float](got, want, mag []T, tol float64) error {
	if len(got) != len(want) || len(mag) != len(want) {
		return fmt.Errorf("%w: got %d values, want %d (%d magnitudes)", ErrConv, len(got), len(want), len(mag))
	}
	bad, first := 0, -1
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		ok := g == w || math.IsNaN(g) && math.IsNaN(w) || math.Abs(g-w) <= tol*(1+float64(mag[i]))
		if !ok {
			if bad == 0 {
				first = i
			}
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d of %d values differ; first at %d: got %v, want %v (tolerance %g)",
		ErrConv, bad, len(got), first, got[first], want[first], tol*(1+float64(mag[first])))
}

// Abs returns a copy of t with every value replaced by its magnitude:
// running a reference on Abs inputs gives the sums of magnitudes
// CompareConv takes.
func Abs[T Float](t Tensor[T]) Tensor[T] {
	out := Tensor[T]{N: t.N, C: t.C, H: t.H, W: t.W, Data: make([]T, len(t.Data))}
	for i, v := range t.Data {
		out.Data[i] = T(math.Abs(float64(v)))
	}
	return out
}
