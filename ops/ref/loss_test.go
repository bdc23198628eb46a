package ref

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nearKink reports whether value i sits within 1e-3 of a point where the
// loss of type d is not differentiable (the finite difference straddles
// it there).
func nearKink(d LossDescriptor, y, t float64) bool {
	d = d.resolved(1)
	switch d.Type {
	case MeanAbsoluteError:
		return math.Abs(y-t) < 1e-3
	case Hinge:
		return math.Abs(1-(2*t-1)*y) < 1e-3
	case Huber:
		return math.Abs(math.Abs(y-t)-d.Delta) < 1e-3
	}
	return false
}

// lossDescriptors returns the configurations the tests run for type t and
// reduction r: the defaults, then a weight, and the type's own parameters.
func lossDescriptors(t LossType, r Reduction) []LossDescriptor {
	ds := []LossDescriptor{{Type: t, Reduction: r}, {Type: t, Reduction: r, Weight: 1.5}}
	switch t {
	case SoftmaxCrossEntropy:
		ds = append(ds, LossDescriptor{Type: t, Reduction: r, LabelSmoothing: 0.2}, LossDescriptor{Type: t, Reduction: r, LabelSmoothing: 0.1, NumberOfClasses: 10, Weight: 0.5})
	case SigmoidCrossEntropy:
		ds = append(ds, LossDescriptor{Type: t, Reduction: r, LabelSmoothing: 0.3, Weight: 2})
	case Huber:
		ds = append(ds, LossDescriptor{Type: t, Reduction: r, Delta: 0.6}, LossDescriptor{Type: t, Reduction: r, Delta: 2.5, Weight: 0.75})
	case Log:
		ds = append(ds, LossDescriptor{Type: t, Reduction: r, Epsilon: 0.01})
	}
	return ds
}

// TestLossGradientFiniteDifferences checks every loss gradient (every
// type and reduction, the scalar weight, label smoothing, delta, epsilon
// and per-item weights) against central differences of LossWith (for
// ReduceNone, of the sum of its items), away from kinks.
func TestLossGradientFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	const n, c, h, w = 2, 3, 2, 3
	const step = 1e-6
	for typ := LossType(0); typ < numLossTypes; typ++ {
		for red := Reduction(0); red < numReductions; red++ {
			for _, d := range lossDescriptors(typ, red) {
				for _, weighted := range []bool{false, true} {
					name := fmt.Sprintf("%+v weighted=%v", d, weighted)
					pv, lv := lossInputs64(r, typ, n, c, h, w)
					var ws []float64
					if weighted {
						for _, x := range LossWeights(r, typ, n, c, h, w) {
							ws = append(ws, float64(x))
						}
					}
					pred, _ := TensorOf(n, c, h, w, pv)
					labels, _ := TensorOf(n, c, h, w, lv)
					g, err := LossGradientWith(d, pred, labels, ws)
					require.NoError(t, err, name)
					total := func() float64 {
						v, err := LossWith(d, pred, labels, ws)
						require.NoError(t, err, name)
						s := 0.0
						for _, x := range v {
							s += x
						}
						return s
					}
					for i := range pv {
						if nearKink(d, pv[i], lv[i]) {
							continue
						}
						y := pv[i]
						pv[i] = y + step
						up := total()
						pv[i] = y - step
						down := total()
						pv[i] = y
						num := (up - down) / (2 * step)
						require.InDelta(t, num, g[i], 1e-5*math.Max(1, math.Abs(num)), "%s: value %d", name, i)
					}
				}
			}
		}
	}
}

// TestLossFormulas pins values worked out by hand: the formulas, label
// smoothing, the means over values or pixels, sum by nonzero weights and
// the zero-label conventions.
func TestLossFormulas(t *testing.T) {
	one := func(typ LossType, y, l float64) float64 {
		pred, _ := TensorOf(1, 1, 1, 1, []float64{y})
		labels, _ := TensorOf(1, 1, 1, 1, []float64{l})
		v, err := Loss(typ, ReduceSum, pred, labels)
		require.NoError(t, err)
		return v[0]
	}
	assert.InDelta(t, 2.25, one(MeanSquaredError, 2, 0.5), 1e-15)
	assert.InDelta(t, 1.5, one(MeanAbsoluteError, 2, 0.5), 1e-15)
	assert.InDelta(t, 0.5*0.25, one(Huber, 1, 0.5), 1e-15)
	assert.InDelta(t, 2.5-0.5, one(Huber, 3, 0.5), 1e-15, "delta*(|d| - delta/2)")
	assert.InDelta(t, 0, one(Hinge, 2, 1), 1e-15)
	assert.InDelta(t, 1.5, one(Hinge, 0.5, 0), 1e-15, "label 0 is -1: max(1 + y, 0)")
	assert.InDelta(t, math.Log(1+math.Exp(-2))+2-2*0.25, one(SigmoidCrossEntropy, 2, 0.25), 1e-15)
	assert.InDelta(t, -0.3*math.Log(0.6+1e-7)-0.7*math.Log(0.4+1e-7), one(Log, 0.6, 0.3), 1e-15)
	assert.InDelta(t, 0.5*(math.Log(0.5)+1), one(KullbackLeiblerDivergence, -1, 0.5), 1e-15)
	assert.Equal(t, 0.0, one(KullbackLeiblerDivergence, -1, 0), "t log t = 0 at t = 0")

	// Two pixels of three channels: per-pixel losses, mean over pixels.
	y := []float64{1, 0.1, 2, 0.2, 3, 0.7}
	l := []float64{0, 1, 1, 0, 0, 0}
	pred, _ := TensorOf(1, 3, 1, 2, y)
	labels, _ := TensorOf(1, 3, 1, 2, l)
	lse := math.Log(math.Exp(1) + math.Exp(2) + math.Exp(3))
	v, err := LossWith(LossDescriptor{Type: SoftmaxCrossEntropy}, pred, labels, nil)
	require.NoError(t, err)
	assert.InDelta(t, lse-2, v[0], 1e-12)
	v, err = LossWith(LossDescriptor{Type: SoftmaxCrossEntropy, Reduction: ReduceMean, LabelSmoothing: 0.3}, pred, labels, nil)
	require.NoError(t, err)
	lse1 := math.Log(math.Exp(0.1) + math.Exp(0.2) + math.Exp(0.7))
	p0 := 0.1*(lse-1) + 0.8*(lse-2) + 0.1*(lse-3)
	p1 := 0.8*(lse1-0.1) + 0.1*(lse1-0.2) + 0.1*(lse1-0.7)
	assert.InDelta(t, (p0+p1)/2, v[0], 1e-12, "t(1-ls) + ls/C, mean over 2 pixels")
	v, err = LossWith(LossDescriptor{Type: CategoricalCrossEntropy, Reduction: ReduceSum}, pred, labels, nil)
	require.NoError(t, err)
	assert.InDelta(t, -math.Log(2)-math.Log(0.1), v[0], 1e-12, "zero labels contribute 0")
	v, err = LossWith(LossDescriptor{Type: CosineDistance, Reduction: ReduceNone, Weight: 2}, pred, labels, nil)
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{2 * (1 - 2), 2 * (1 - 0.1)}, v, 1e-12)

	// Sum by nonzero weights: divides by the count of nonzero weights, 0
	// when all are 0; without weights it is the mean.
	v, err = LossWith(LossDescriptor{Type: CosineDistance, Reduction: ReduceSumByNonZeroWeights, Weight: 3}, pred, labels, []float64{0, 2})
	require.NoError(t, err)
	assert.InDelta(t, 3*2*0.9, v[0], 1e-12)
	v, err = LossWith(LossDescriptor{Type: CosineDistance, Reduction: ReduceSumByNonZeroWeights}, pred, labels, []float64{0, 0})
	require.NoError(t, err)
	assert.Equal(t, []float64{0}, v)
	g, err := LossGradientWith(LossDescriptor{Type: CosineDistance, Reduction: ReduceSumByNonZeroWeights}, pred, labels, []float64{0, 0})
	require.NoError(t, err)
	assert.Equal(t, make([]float64, 6), g)
	mean, err := LossWith(LossDescriptor{Type: MeanSquaredError, Reduction: ReduceMean}, pred, labels, nil)
	require.NoError(t, err)
	byNonZero, err := LossWith(LossDescriptor{Type: MeanSquaredError, Reduction: ReduceSumByNonZeroWeights}, pred, labels, nil)
	require.NoError(t, err)
	assert.Equal(t, mean, byNonZero)
	assert.Equal(t, 2, SoftmaxCrossEntropy.Items(1, 3, 1, 2))
	assert.Equal(t, 6, KullbackLeiblerDivergence.Items(1, 3, 1, 2))

	// Categorical cross-entropy with a zero prediction where the label is
	// 0: no NaN, in the loss or the gradient.
	pred, _ = TensorOf(1, 2, 1, 1, []float64{0, 1})
	labels, _ = TensorOf(1, 2, 1, 1, []float64{0, 1})
	v, err = LossWith(LossDescriptor{Type: CategoricalCrossEntropy}, pred, labels, nil)
	require.NoError(t, err)
	assert.Equal(t, []float64{0}, v)
	g, err = LossGradientWith(LossDescriptor{Type: CategoricalCrossEntropy}, pred, labels, nil)
	require.NoError(t, err)
	assert.Equal(t, []float64{0, -1}, g)
}

func TestLossBadInput(t *testing.T) {
	p, _ := TensorOf(1, 2, 1, 1, []float64{0, 1})
	q, _ := TensorOf(1, 1, 1, 2, []float64{0, 1})
	for _, c := range []struct {
		d       LossDescriptor
		labels  Tensor[float64]
		weights []float64
		want    error
	}{
		{LossDescriptor{Type: numLossTypes}, p, nil, ErrGeometry},
		{LossDescriptor{Reduction: -1}, p, nil, ErrGeometry},
		{LossDescriptor{LabelSmoothing: 1.5}, p, nil, ErrGeometry},
		{LossDescriptor{LabelSmoothing: math.NaN()}, p, nil, ErrGeometry},
		{LossDescriptor{Delta: -1}, p, nil, ErrGeometry},
		{LossDescriptor{Epsilon: -1}, p, nil, ErrGeometry},
		{LossDescriptor{NumberOfClasses: -1}, p, nil, ErrGeometry},
		{LossDescriptor{}, q, nil, ErrShape},
		{LossDescriptor{}, p, []float64{1}, ErrShape},
		{LossDescriptor{Type: SoftmaxCrossEntropy}, p, []float64{1, 1}, ErrShape},
	} {
		_, err := LossWith(c.d, p, c.labels, c.weights)
		assert.ErrorIs(t, err, c.want, "%+v", c.d)
		_, err = LossGradientWith(c.d, p, c.labels, c.weights)
		assert.ErrorIs(t, err, c.want, "%+v", c.d)
	}
}

const torchLossCasesPath = "../testdata/torch/loss_cases.json"

// TestLossMatchesPyTorch: the reference reproduces every PyTorch case
// (computed in float64 from the same float32 inputs, stored rounded to
// float32), loss and gradient, to 1e-6 relative.
func TestLossMatchesPyTorch(t *testing.T) {
	cases, err := LoadTorchLossCases(torchLossCasesPath)
	require.NoError(t, err)
	require.Len(t, cases, 70)
	seen := map[LossType]int{}
	for _, c := range cases {
		pred, labels := c.Tensors()
		loss, err := LossWith(c.Descriptor, pred, labels, c.Weights)
		require.NoError(t, err, c.Name)
		grad, err := LossGradientWith(c.Descriptor, pred, labels, c.Weights)
		require.NoError(t, err, c.Name)
		for i, w := range c.Result {
			assert.InDelta(t, float64(w), loss[i], 1e-6*math.Max(1, math.Abs(float64(w))), "%s (%s) loss[%d]", c.Name, c.Torch, i)
		}
		for i, w := range c.Grad {
			assert.InDelta(t, float64(w), grad[i], 1e-6*math.Max(1, math.Abs(float64(w))), "%s (%s) grad[%d]", c.Name, c.Torch, i)
		}
		seen[c.Descriptor.Type]++
	}
	assert.Len(t, seen, int(numLossTypes), "every loss type")
}
