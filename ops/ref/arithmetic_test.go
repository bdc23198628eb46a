package ref

import (
	"math"
	"math/rand"
	"testing"

	"github.com/vkmps/vkmps/padding"
)

// arithmeticShapes are primary and secondary shapes covering every
// broadcast pattern: none, each axis alone, several, and a source that
// broadcasts on some axes while the other does on others.
var arithmeticShapes = [][2]padding.Descriptor{
	{{N: 2, C: 3, H: 2, W: 3}, {N: 2, C: 3, H: 2, W: 3}},
	{{N: 2, C: 3, H: 2, W: 3}, {N: 1, C: 3, H: 2, W: 3}},
	{{N: 2, C: 3, H: 2, W: 3}, {N: 2, C: 1, H: 2, W: 3}},
	{{N: 2, C: 3, H: 2, W: 3}, {N: 2, C: 3, H: 1, W: 3}},
	{{N: 2, C: 3, H: 2, W: 3}, {N: 2, C: 3, H: 2, W: 1}},
	{{N: 2, C: 3, H: 2, W: 3}, {N: 1, C: 3, H: 1, W: 1}},
	{{N: 1, C: 1, H: 1, W: 1}, {N: 2, C: 3, H: 2, W: 3}},
	{{N: 2, C: 1, H: 2, W: 1}, {N: 1, C: 3, H: 1, W: 3}},
}

// TestArithmeticGradientFiniteDifferences checks both gradients of every
// op against central differences of sum(dz * z(x, y)), with scales, bias,
// broadcasting and clamping; entries whose step crosses a clamp bound are
// skipped (the gradient jumps there).
func TestArithmeticGradientFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	const h = 1e-6
	for _, op := range []ArithmeticOp{ArithmeticAdd, ArithmeticSubtract, ArithmeticMultiply, ArithmeticDivide} {
		for si, sh := range arithmeticShapes {
			for _, clamp := range []bool{false, true} {
				a := NewArithmetic(op)
				a.PrimaryScale, a.SecondaryScale, a.Bias = 1.5, -0.75, 0.25
				if clamp {
					a.Minimum, a.Maximum = -0.5, 1
				}
				x := NewTensor[float64](sh[0].N, sh[0].C, sh[0].H, sh[0].W)
				y := NewTensor[float64](sh[1].N, sh[1].C, sh[1].H, sh[1].W)
				for i := range x.Data {
					x.Data[i] = r.NormFloat64()
				}
				for i := range y.Data {
					y.Data[i] = r.NormFloat64()
					if op == ArithmeticDivide { // away from 0
						y.Data[i] = math.Copysign(0.5+math.Abs(y.Data[i]), y.Data[i])
					}
				}
				s, err := BroadcastShape(x.Shape(), y.Shape())
				if err != nil {
					t.Fatal(err)
				}
				dz := NewTensor[float64](s.N, s.C, s.H, s.W)
				for i := range dz.Data {
					dz.Data[i] = r.NormFloat64()
				}
				eval := func() (float64, []bool) {
					z, err := ArithmeticForward(a, x, y)
					if err != nil {
						t.Fatal(err)
					}
					l := 0.0
					mask := make([]bool, len(z.Data))
					for i := range z.Data {
						l += dz.Data[i] * z.Data[i]
						mask[i] = z.Data[i] == a.Minimum || z.Data[i] == a.Maximum
					}
					return l, mask
				}
				for side, src := range []Tensor[float64]{x, y} {
					got, err := ArithmeticGradient(a, dz, x, y, side == 1)
					if err != nil {
						t.Fatal(err)
					}
					if got.Shape() != src.Shape() {
						t.Fatalf("gradient shape %v, source %v", got.Shape(), src.Shape())
					}
					for i := range src.Data {
						v := src.Data[i]
						src.Data[i] = v + h
						up, mu := eval()
						src.Data[i] = v - h
						down, md := eval()
						src.Data[i] = v
						crossed := false
						for j := range mu {
							crossed = crossed || mu[j] != md[j]
						}
						if crossed {
							continue
						}
						num := (up - down) / (2 * h)
						if math.Abs(num-got.Data[i]) > 1e-5*math.Max(1, math.Abs(num)) {
							t.Errorf("op %d shapes %d clamp %v side %d [%d]: %g, finite difference %g", op, si, clamp, side, i, got.Data[i], num)
						}
					}
				}
			}
		}
	}
}

// TestArithmeticClampAndShapes pins the clamp's gradient rule at the bounds
// (passed, PyTorch's), NaN through the clamp, and shapes that do not
// broadcast.
func TestArithmeticClampAndShapes(t *testing.T) {
	a := NewArithmetic(ArithmeticAdd)
	a.Minimum, a.Maximum = 0, 1
	if dx, dy := a.Partials(0.5, 0.5); dx != 1 || dy != 1 {
		t.Errorf("at the maximum: partials %g %g, want 1 1", dx, dy)
	}
	if dx, _ := a.Partials(0.75, 0.5); dx != 0 {
		t.Errorf("above the maximum: partial %g, want 0", dx)
	}
	if v := a.Value(math.NaN(), 0); !math.IsNaN(v) {
		t.Errorf("clamp(NaN) = %g, want NaN", v)
	}
	if dx, _ := NewArithmetic(ArithmeticAdd).Partials(math.NaN(), 0); dx != 1 {
		t.Errorf("unclamped NaN: partial %g, want 1", dx)
	}
	if _, err := BroadcastShape(padding.Descriptor{N: 1, C: 2, H: 3, W: 4}, padding.Descriptor{N: 1, C: 3, H: 3, W: 4}); err == nil {
		t.Error("C 2 and 3 broadcast")
	}
	s, err := BroadcastShape(padding.Descriptor{N: 4, C: 1, H: 3, W: 1}, padding.Descriptor{N: 1, C: 2, H: 1, W: 5})
	if err != nil || s != (padding.Descriptor{N: 4, C: 2, H: 3, W: 5}) {
		t.Errorf("broadcast shape %v, %v", s, err)
	}
}
