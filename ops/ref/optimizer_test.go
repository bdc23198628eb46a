package ref

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// Closed forms the optimizer reference must meet.
func TestOptimizerClosedForms(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	n := 50
	w0, gs := make([]float64, n), make([][]float64, 6)
	for i := range w0 {
		w0[i] = r.NormFloat64()
	}
	for s := range gs {
		gs[s] = make([]float64, n)
		for i := range gs[s] {
			gs[s][i] = r.NormFloat64() * math.Pow(10, float64(-r.Intn(7)))
		}
	}
	run := func(o Optimizer, lrs []float64) []float64 {
		w := append([]float64(nil), w0...)
		st := o.NewOptimizerState(n)
		for s, g := range gs {
			if lrs != nil {
				o.LearningRate = lrs[s]
			}
			require.NoError(t, o.Step(w, g, st))
		}
		return w
	}
	near := func(a, b []float64, tol float64) bool {
		for i := range a {
			if math.Abs(a[i]-b[i]) > tol*math.Max(1, math.Abs(b[i])) {
				return false
			}
		}
		return true
	}
	// SGD momentum: MPS's m is lr times PyTorch's under a constant rate,
	// and differs from it under a changing one.
	sgd := Optimizer{Type: SGD, LearningRate: 0.1, GradientRescale: 1, Momentum: 0.9}
	mps, torch := sgd, sgd
	torch.PyTorch = true
	require.True(t, near(run(mps, nil), run(torch, nil), 1e-12))
	lrs := []float64{0.1, 0.05, 0.025, 0.0125, 0.006, 0.003}
	require.False(t, near(run(mps, lrs), run(torch, lrs), 1e-6))
	// Nesterov ignores the form.
	sgd.Nesterov = true
	mps, torch = sgd, sgd
	torch.PyTorch = true
	require.Equal(t, run(mps, lrs), run(torch, lrs))

	// Adam's first step: m = (1-b1) g, v = (1-b2) g^2, so PyTorch moves each
	// value by lr*g/(|g| + eps) and MPS by lr*g/(|g| + eps/sqrt(1-b2)).
	adam := Optimizer{Type: Adam, LearningRate: 1e-3, GradientRescale: 1, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}
	for _, py := range []bool{false, true} {
		adam.PyTorch = py
		w := append([]float64(nil), w0...)
		require.NoError(t, adam.Step(w, gs[0], adam.NewOptimizerState(n)))
		eps := adam.Epsilon
		if !py {
			eps /= math.Sqrt(1 - adam.Beta2)
		}
		for i, g := range gs[0] {
			want := w0[i] - adam.LearningRate*g/(math.Abs(g)+eps)
			require.InDelta(t, want, w[i], 1e-15, "form pytorch=%v value %d", py, i)
		}
	}

	// Preprocessing order: clip, rescale, then regularize against w.
	o := Optimizer{GradientRescale: 2, Clip: true, ClipMin: -1, ClipMax: 0.5, Regularization: RegularizationL2, RegularizationScale: 0.1}
	require.Equal(t, 2*0.5+0.1*3, o.PreprocessGradient(7, 3))
	require.Equal(t, 2*-1+0.1*-3, o.PreprocessGradient(-7, -3))
	o.Regularization = RegularizationL1
	require.Equal(t, 2*0.25-0.1, o.PreprocessGradient(0.25, -3))
	require.Equal(t, 2*0.25, o.PreprocessGradient(0.25, 0))
	require.True(t, math.IsNaN(o.PreprocessGradient(math.NaN(), 1)))

	// State vectors of the wrong length are an error.
	require.ErrorIs(t, adam.Step(make([]float64, 3), make([]float64, 3), &OptimizerState{}), ErrOptimizer)
	require.ErrorIs(t, adam.Step(make([]float64, 3), make([]float64, 2), adam.NewOptimizerState(3)), ErrOptimizer)
}
