package ref

import (
	"fmt"
	"math"

	"github.com/vkmps/vkmps/padding"
)

// ArithmeticOp is the operation of an arithmetic kernel (MPSCNNAdd,
// MPSCNNSubtract, MPSCNNMultiply, MPSCNNDivide); the values are
// ops.ArithmeticOp's.
type ArithmeticOp int

const (
	ArithmeticAdd ArithmeticOp = iota
	ArithmeticSubtract
	ArithmeticMultiply
	ArithmeticDivide
)

// Arithmetic is an arithmetic kernel's configuration in float64
// (ops.ArithmeticDescriptor): for primary x and secondary y,
//
//	z = clamp((PrimaryScale*x) op (SecondaryScale*y) + Bias, Minimum, Maximum)
//
// NewArithmetic gives the defaults (scales 1, bias 0, no clamp).
type Arithmetic struct {
	Op                                 ArithmeticOp
	PrimaryScale, SecondaryScale, Bias float64
	Minimum, Maximum                   float64
}

// NewArithmetic returns op with the defaults: scales 1, bias 0, minimum
// -Inf and maximum +Inf.
func NewArithmetic(op ArithmeticOp) Arithmetic {
	return Arithmetic{Op: op, PrimaryScale: 1, SecondaryScale: 1, Minimum: math.Inf(-1), Maximum: math.Inf(1)}
}

// Pre returns the value before the clamp.
func (a Arithmetic) Pre(x, y float64) float64 {
	u, v := a.PrimaryScale*x, a.SecondaryScale*y
	var r float64
	switch a.Op {
	case ArithmeticAdd:
		r = u + v
	case ArithmeticSubtract:
		r = u - v
	case ArithmeticMultiply:
		r = u * v
	case ArithmeticDivide:
		r = u / v
	}
	return r + a.Bias
}

// Value returns z. The clamp lets NaN through (as IEEE comparisons do).
func (a Arithmetic) Value(x, y float64) float64 {
	p := a.Pre(x, y)
	switch {
	case p < a.Minimum:
		return a.Minimum
	case p > a.Maximum:
		return a.Maximum
	}
	return p
}

// Passes reports whether the clamp passes the gradient at pre-clamp
// value p: Minimum <= p <= Maximum, the bounds included (PyTorch's clamp
// rule), where an infinite bound is no bound (a NaN passes it).
func (a Arithmetic) Passes(p float64) bool {
	lo := math.IsInf(a.Minimum, -1) || p >= a.Minimum
	hi := math.IsInf(a.Maximum, 1) || p <= a.Maximum
	return lo && hi
}

// Partials returns dz/dx and dz/dy at (x, y), zero where the clamp holds
// z at a bound.
func (a Arithmetic) Partials(x, y float64) (dx, dy float64) {
	if !a.Passes(a.Pre(x, y)) {
		return 0, 0
	}
	ps, ss := a.PrimaryScale, a.SecondaryScale
	switch a.Op {
	case ArithmeticAdd:
		return ps, ss
	case ArithmeticSubtract:
		return ps, -ss
	case ArithmeticMultiply:
		return ps * (ss * y), (ps * x) * ss
	default:
		v := ss * y
		return ps / v, -(ps * x) * ss / (v * v)
	}
}

// BroadcastShape returns the shape of an arithmetic result of sources of
// shapes a and b (MPS broadcasting): on each axis the sizes are equal, or
// one of them is 1 and the result takes the other.
func BroadcastShape(a, b padding.Descriptor) (padding.Descriptor, error) {
	if err := checkDesc("primary", a); err != nil {
		return padding.Descriptor{}, err
	}
	if err := checkDesc("secondary", b); err != nil {
		return padding.Descriptor{}, err
	}
	ax, bx := [4]int{a.N, a.C, a.H, a.W}, [4]int{b.N, b.C, b.H, b.W}
	var r [4]int
	for i := range r {
		switch {
		case ax[i] == bx[i] || bx[i] == 1:
			r[i] = ax[i]
		case ax[i] == 1:
			r[i] = bx[i]
		default:
			return padding.Descriptor{}, fmt.Errorf("%w: primary %v and secondary %v do not broadcast", ErrShape, a, b)
		}
	}
	return padding.Descriptor{N: r[0], C: r[1], H: r[2], W: r[3]}, nil
}

// broadcastIndex returns the index in t of the element broadcast to
// result position (n, c, y, x).
func broadcastIndex[T Float](t Tensor[T], n, c, y, x int) int {
	if t.N == 1 {
		n = 0
	}
	if t.C == 1 {
		c = 0
	}
	if t.H == 1 {
		y = 0
	}
	if t.W == 1 {
		x = 0
	}
	return t.Index(n, c, y, x)
}

// ArithmeticForward returns z for primary x and secondary y, broadcast to
// BroadcastShape of their shapes.
func ArithmeticForward[T Float](a Arithmetic, x, y Tensor[T]) (Tensor[float64], error) {
	if err := x.check("primary"); err != nil {
		return Tensor[float64]{}, err
	}
	if err := y.check("secondary"); err != nil {
		return Tensor[float64]{}, err
	}
	s, err := BroadcastShape(x.Shape(), y.Shape())
	if err != nil {
		return Tensor[float64]{}, err
	}
	z := NewTensor[float64](s.N, s.C, s.H, s.W)
	for n := 0; n < s.N; n++ {
		for c := 0; c < s.C; c++ {
			for h := 0; h < s.H; h++ {
				for w := 0; w < s.W; w++ {
					xv := float64(x.Data[broadcastIndex(x, n, c, h, w)])
					yv := float64(y.Data[broadcastIndex(y, n, c, h, w)])
					z.Set(n, c, h, w, a.Value(xv, yv))
				}
			}
		}
	}
	return z, nil
}

// ArithmeticGradient returns the gradient of the primary source x (of the
// secondary y when secondary is set) given dz, the gradient of the result:
// dz times Partials, summed over the axes along which that source was
// broadcast, in float64 and NCHW order; the result has the source's shape.
func ArithmeticGradient[T Float](a Arithmetic, dz, x, y Tensor[T], secondary bool) (Tensor[float64], error) {
	if err := x.check("primary"); err != nil {
		return Tensor[float64]{}, err
	}
	if err := y.check("secondary"); err != nil {
		return Tensor[float64]{}, err
	}
	if err := dz.check("source gradient"); err != nil {
		return Tensor[float64]{}, err
	}
	s, err := BroadcastShape(x.Shape(), y.Shape())
	if err != nil {
		return Tensor[float64]{}, err
	}
	if dz.Shape() != s {
		return Tensor[float64]{}, fmt.Errorf("%w: source gradient %v, want the result's shape %v", ErrShape, dz.Shape(), s)
	}
	src := x
	if secondary {
		src = y
	}
	g := NewTensor[float64](src.N, src.C, src.H, src.W)
	for n := 0; n < s.N; n++ {
		for c := 0; c < s.C; c++ {
			for h := 0; h < s.H; h++ {
				for w := 0; w < s.W; w++ {
					xv := float64(x.Data[broadcastIndex(x, n, c, h, w)])
					yv := float64(y.Data[broadcastIndex(y, n, c, h, w)])
					px, py := a.Partials(xv, yv)
					d := px
					if secondary {
						d = py
					}
					g.Data[broadcastIndex(g, n, c, h, w)] += float64(dz.At(n, c, h, w)) * d
				}
			}
		}
	}
	return g, nil
}
