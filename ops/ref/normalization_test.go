package ref

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every normalization gradient against central finite differences of the
// scalar L = sum(w * y) for random weights w (so that dy = w), in float64.

const normFDStep = 1e-5

func normRandTensor(r *rand.Rand, n, c, h, w int, scale, shift float64) Tensor[float64] {
	t := NewTensor[float64](n, c, h, w)
	for i := range t.Data {
		t.Data[i] = r.NormFloat64()*scale + shift
	}
	return t
}

func normRandVec(r *rand.Rand, n int, scale, shift float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()*scale + shift
	}
	return v
}

func normDot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// normCheckFD compares analytic with the central difference of loss
// w.r.t. each element of v.
func normCheckFD(t *testing.T, what string, v []float64, analytic []float64, loss func() float64, tol float64) {
	t.Helper()
	for i := range v {
		old := v[i]
		v[i] = old + normFDStep
		lp := loss()
		v[i] = old - normFDStep
		lm := loss()
		v[i] = old
		num := (lp - lm) / (2 * normFDStep)
		require.InDelta(t, num, analytic[i], tol*math.Max(1, math.Abs(num)), "%s[%d]", what, i)
	}
}

func TestBatchNormGradientFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, tc := range []struct {
		name     string
		n, c     int
		h, w     int
		training bool
		neuron   Neuron
	}{
		{"training", 3, 4, 3, 2, true, Neuron{}},
		{"training batch1", 1, 3, 2, 3, true, Neuron{}},
		{"training tanh", 2, 3, 2, 2, true, Neuron{Type: NeuronTanH, A: 1, B: 1}},
		{"training sigmoid 1x1", 5, 2, 1, 1, true, Neuron{Type: NeuronSigmoid}},
		{"inference", 2, 3, 3, 3, false, Neuron{}},
		{"inference softplus", 2, 2, 2, 3, false, Neuron{Type: NeuronSoftPlus, A: 1, B: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := normRandTensor(r, tc.n, tc.c, tc.h, tc.w, 2, 1)
			gamma, beta := normRandVec(r, tc.c, 1, 0.5), normRandVec(r, tc.c, 1, 0)
			rm, rv := normRandVec(r, tc.c, 0.5, 0), normRandVec(r, tc.c, 0, 1.5)
			w := normRandVec(r, len(x.Data), 1, 0)
			b := BatchNorm{Epsilon: 1e-3, Neuron: tc.neuron}
			stats := func() ([]float64, []float64) {
				if tc.training {
					return BatchNormStatistics(x)
				}
				return rm, rv
			}
			loss := func() float64 {
				m, v := stats()
				y := NewTensor[float64](x.N, x.C, x.H, x.W)
				require.NoError(t, b.Forward(x, gamma, beta, m, v, &y))
				return normDot(w, y.Data)
			}
			dy, err := TensorOf(x.N, x.C, x.H, x.W, w)
			require.NoError(t, err)
			dx := NewTensor[float64](x.N, x.C, x.H, x.W)
			dg, db := make([]float64, tc.c), make([]float64, tc.c)
			m, v := stats()
			require.NoError(t, b.Gradient(x, dy, gamma, beta, m, v, tc.training, &dx, dg, db))
			normCheckFD(t, "dx", x.Data, dx.Data, loss, 1e-6)
			normCheckFD(t, "dgamma", gamma, dg, loss, 1e-6)
			normCheckFD(t, "dbeta", beta, db, loss, 1e-6)
		})
	}
}

func TestBatchNormStatisticsAndRunning(t *testing.T) {
	x, err := TensorOf(2, 1, 1, 2, []float64{1, 2, 3, 6})
	require.NoError(t, err)
	m, v := BatchNormStatistics(x)
	require.Equal(t, []float64{3}, m)
	require.InDelta(t, 3.5, v[0], 1e-12) // (4+1+0+9)/4
	rm, rv := []float64{0}, []float64{1}
	UpdateRunning(rm, rv, m, v, 4, 0.1)
	require.InDelta(t, 0.3, rm[0], 1e-12)
	require.InDelta(t, 0.9+0.1*3.5*4/3, rv[0], 1e-12)
}

func TestInstanceNormGradientFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	x := normRandTensor(r, 3, 2, 3, 4, 1.5, -1)
	gamma, beta := normRandVec(r, 2, 1, 0.5), normRandVec(r, 2, 1, 0)
	w := normRandVec(r, len(x.Data), 1, 0)
	in := InstanceNorm{Epsilon: 1e-3}
	loss := func() float64 {
		y := NewTensor[float64](x.N, x.C, x.H, x.W)
		require.NoError(t, in.Forward(x, gamma, beta, &y))
		return normDot(w, y.Data)
	}
	dy, err := TensorOf(x.N, x.C, x.H, x.W, w)
	require.NoError(t, err)
	dx := NewTensor[float64](x.N, x.C, x.H, x.W)
	dg, db := make([]float64, 2), make([]float64, 2)
	require.NoError(t, in.Gradient(x, dy, gamma, &dx, dg, db))
	normCheckFD(t, "dx", x.Data, dx.Data, loss, 1e-6)
	normCheckFD(t, "dgamma", gamma, dg, loss, 1e-6)
	normCheckFD(t, "dbeta", beta, db, loss, 1e-6)
}

func TestCrossChannelNormGradientFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, l := range []CrossChannelNorm{
		{Size: 5, Alpha: 1e-4, Beta: 0.75, Delta: 1},
		{Size: 3, Alpha: 0.5, Beta: 0.75, Delta: 1},
		{Size: 4, Alpha: 2, Beta: 1.5, Delta: 0.5},
		{Size: 1, Alpha: 1, Beta: 0.5, Delta: 2},
		{Size: 9, Alpha: 0.3, Beta: 0.6, Delta: 1},
	} {
		x := normRandTensor(r, 2, 7, 2, 3, 1, 0)
		w := normRandVec(r, len(x.Data), 1, 0)
		loss := func() float64 {
			y := NewTensor[float64](x.N, x.C, x.H, x.W)
			require.NoError(t, l.Forward(x, &y))
			return normDot(w, y.Data)
		}
		dy, _ := TensorOf(x.N, x.C, x.H, x.W, w)
		dx := NewTensor[float64](x.N, x.C, x.H, x.W)
		require.NoError(t, l.Gradient(x, dy, &dx))
		normCheckFD(t, "dx", x.Data, dx.Data, loss, 1e-6)
	}
}

// TestCrossChannelNormWindow pins the window: size 4 at channel c reads
// c-2 .. c+1.
func TestCrossChannelNormWindow(t *testing.T) {
	x, _ := TensorOf(1, 5, 1, 1, []float64{1, 2, 3, 4, 5})
	y := NewTensor[float64](1, 5, 1, 1)
	l := CrossChannelNorm{Size: 4, Alpha: 4, Beta: 1, Delta: 0}
	require.NoError(t, l.Forward(x, &y))
	// channel 2: window 0..3, sum of squares 30, T = 30.
	require.InDelta(t, 3.0/30, y.Data[2], 1e-12)
	// channel 0: window 0..1 (2 outside), T = 5.
	require.InDelta(t, 1.0/5, y.Data[0], 1e-12)
}

func TestSpatialNormGradientFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for _, s := range []SpatialNorm{
		{KernelW: 3, KernelH: 3, Alpha: 1, Beta: 5, Delta: 1},
		{KernelW: 2, KernelH: 4, Alpha: 0.7, Beta: 0.75, Delta: 1.5},
		{KernelW: 1, KernelH: 1, Alpha: 1, Beta: 0.5, Delta: 1},
		{KernelW: 5, KernelH: 2, Alpha: 2, Beta: 1, Delta: 0.3},
	} {
		x := normRandTensor(r, 2, 2, 4, 5, 1, 0)
		w := normRandVec(r, len(x.Data), 1, 0)
		loss := func() float64 {
			y := NewTensor[float64](x.N, x.C, x.H, x.W)
			require.NoError(t, s.Forward(x, &y))
			return normDot(w, y.Data)
		}
		dy, _ := TensorOf(x.N, x.C, x.H, x.W, w)
		dx := NewTensor[float64](x.N, x.C, x.H, x.W)
		require.NoError(t, s.Gradient(x, dy, &dx))
		normCheckFD(t, "dx", x.Data, dx.Data, loss, 1e-6)
	}
}

func TestLocalContrastNormGradientFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, l := range []LocalContrastNorm{
		{KernelW: 3, KernelH: 3, Alpha: 1, Beta: 0.5, Delta: 1.0 / 1024, P0: 1, PM: 0, PS: 1},
		{KernelW: 2, KernelH: 3, Alpha: 0.5, Beta: 0.75, Delta: 0.5, P0: 0.7, PM: 0.2, PS: 1.3},
		{KernelW: 4, KernelH: 1, Alpha: 0, Beta: 0.5, Delta: 1, P0: 1, PM: 0, PS: 1},
		{KernelW: 5, KernelH: 5, Alpha: 2, Beta: 1, Delta: 0.25, P0: 1, PM: -1, PS: 0.5},
	} {
		x := normRandTensor(r, 2, 2, 4, 5, 1, 0.3)
		w := normRandVec(r, len(x.Data), 1, 0)
		loss := func() float64 {
			y := NewTensor[float64](x.N, x.C, x.H, x.W)
			require.NoError(t, l.Forward(x, &y))
			return normDot(w, y.Data)
		}
		dy, _ := TensorOf(x.N, x.C, x.H, x.W, w)
		dx := NewTensor[float64](x.N, x.C, x.H, x.W)
		require.NoError(t, l.Gradient(x, dy, &dx))
		normCheckFD(t, "dx", x.Data, dx.Data, loss, 2e-6)
	}
}

// TestLocalContrastNormUnitVariance checks MPS's example: pm=0, ps=1, p0=1,
// delta=0, alpha=1, beta=0.5 over a window covering the whole (1-pixel
// padded) image gives (x - M)/sqrt(VAR).
func TestLocalContrastNormUnitVariance(t *testing.T) {
	x, _ := TensorOf(1, 1, 1, 3, []float64{1, 2, 6})
	y := NewTensor[float64](1, 1, 1, 3)
	l := LocalContrastNorm{KernelW: 5, KernelH: 1, Alpha: 1, Beta: 0.5, P0: 1, PS: 1}
	require.NoError(t, l.Forward(x, &y))
	// pixel 1: window -1..3 holds 0,1,2,6,0: M = 9/5, VAR = 41/5 - 81/25.
	m, v := 9.0/5, 41.0/5-81.0/25
	require.InDelta(t, (2-m)/math.Sqrt(v), y.Data[1], 1e-12)
}

func TestNormalizationRefBadInput(t *testing.T) {
	x := NewTensor[float64](1, 2, 2, 2)
	y := NewTensor[float64](1, 2, 2, 3)
	require.ErrorIs(t, BatchNorm{}.Forward(x, []float64{1}, []float64{1, 2}, []float64{1, 2}, []float64{1, 2}, &x), ErrShape)
	require.ErrorIs(t, CrossChannelNorm{Size: 0}.Forward(x, &x), ErrGeometry)
	require.ErrorIs(t, CrossChannelNorm{Size: 2}.Forward(x, &y), ErrShape)
	require.ErrorIs(t, SpatialNorm{KernelW: 0, KernelH: 1}.Forward(x, &x), ErrGeometry)
	require.ErrorIs(t, InstanceNorm{}.Forward(x, []float64{1, 2}, []float64{1, 2}, nil), ErrShape)
}
