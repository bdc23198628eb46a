package ref

import (
	"math"
	"math/rand"
	"testing"
)

// TestSoftMaxGradientFiniteDifferences checks both gradients against
// central differences of sum(dy * y(x)), and the forward against the
// definition (rows sum to 1; log-softmax is the log of softmax).
func TestSoftMaxGradientFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	const h = 1e-6
	x := NewTensor[float64](2, 5, 2, 3)
	dy := NewTensor[float64](2, 5, 2, 3)
	for i := range x.Data {
		x.Data[i] = 3 * r.NormFloat64()
		dy.Data[i] = r.NormFloat64()
	}
	for _, log := range []bool{false, true} {
		loss := func() float64 {
			y, err := SoftMax(x, log)
			if err != nil {
				t.Fatal(err)
			}
			s := 0.0
			for i := range y {
				s += dy.Data[i] * y[i]
			}
			return s
		}
		y, err := SoftMax(x, log)
		if err != nil {
			t.Fatal(err)
		}
		yt, _ := TensorOf(x.N, x.C, x.H, x.W, y)
		got, err := SoftMaxGradient(dy, yt, log)
		if err != nil {
			t.Fatal(err)
		}
		for i := range x.Data {
			v := x.Data[i]
			x.Data[i] = v + h
			up := loss()
			x.Data[i] = v - h
			down := loss()
			x.Data[i] = v
			num := (up - down) / (2 * h)
			if math.Abs(num-got[i]) > 1e-6*math.Max(1, math.Abs(num)) {
				t.Errorf("log=%v dx[%d]: %g, finite difference %g", log, i, got[i], num)
			}
		}
	}
	sm, _ := SoftMax(x, false)
	lsm, _ := SoftMax(x, true)
	plane := x.H * x.W
	for n := 0; n < x.N; n++ {
		for p := 0; p < plane; p++ {
			s := 0.0
			for c := 0; c < x.C; c++ {
				i := (n*x.C+c)*plane + p
				s += sm[i]
				if math.Abs(math.Log(sm[i])-lsm[i]) > 1e-12 {
					t.Errorf("log softmax[%d] = %g, log of softmax %g", i, lsm[i], math.Log(sm[i]))
				}
			}
			if math.Abs(s-1) > 1e-12 {
				t.Errorf("pixel %d/%d sums to %g", n, p, s)
			}
		}
	}
	// Stable for large inputs.
	big, _ := TensorOf(1, 2, 1, 1, []float64{1000, 999})
	y, _ := SoftMax(big, false)
	if math.Abs(y[0]-1/(1+math.Exp(-1))) > 1e-15 {
		t.Errorf("softmax(1000, 999) = %v", y)
	}
}
