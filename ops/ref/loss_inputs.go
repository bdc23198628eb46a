package ref

import (
	"math"
	"math/rand"
)

// LossInputs returns a prediction and labels of shape n×c×h×w in the
// domain of loss type t, for the tests and benchmarks:
//
//   - MSE, MAE, Huber: normal predictions and labels;
//   - sigmoid cross-entropy: normal logits, labels in [0, 1];
//   - hinge: normal predictions, labels 0 or 1;
//   - log: predictions in [0.05, 0.95], labels in [0, 1];
//   - softmax cross-entropy: normal logits, labels a probability
//     distribution over the channels of each pixel (one-hot on even
//     pixels);
//   - categorical cross-entropy: predictions a softmax over channels,
//     labels as for softmax cross-entropy;
//   - cosine distance: both unit vectors over the channels of each pixel;
//   - KL divergence: predictions log-probabilities, labels probabilities
//     with some zeros.
func LossInputs(r *rand.Rand, t LossType, n, c, h, w int) (pred, labels []float32) {
	p, l := lossInputs64(r, t, n, c, h, w)
	return f32(p), f32(l)
}

func lossInputs64(r *rand.Rand, t LossType, n, c, h, w int) (pred, labels []float64) {
	size := n * c * h * w
	pred, labels = make([]float64, size), make([]float64, size)
	plane := h * w
	perPixel := func(fill func(vals []float64, px int)) []float64 {
		out := make([]float64, size)
		vals := make([]float64, c)
		for b := 0; b < n; b++ {
			for px := 0; px < plane; px++ {
				fill(vals, b*plane+px)
				for ch := 0; ch < c; ch++ {
					out[(b*c+ch)*plane+px] = vals[ch]
				}
			}
		}
		return out
	}
	probs := func(oneHot bool) func(vals []float64, px int) {
		return func(vals []float64, px int) {
			s := 0.0
			for i := range vals {
				vals[i] = r.Float64()
				if oneHot && px%2 == 0 {
					vals[i] = 0
				}
				s += vals[i]
			}
			if oneHot && px%2 == 0 {
				vals[r.Intn(len(vals))], s = 1, 1
			}
			for i := range vals {
				vals[i] /= s
			}
		}
	}
	softmax := func(vals []float64, _ int) {
		m, s := math.Inf(-1), 0.0
		for i := range vals {
			vals[i] = 1.5 * r.NormFloat64()
			m = math.Max(m, vals[i])
		}
		for i := range vals {
			vals[i] = math.Exp(vals[i] - m)
			s += vals[i]
		}
		for i := range vals {
			vals[i] /= s
		}
	}
	unit := func(vals []float64, _ int) {
		s := 0.0
		for i := range vals {
			vals[i] = r.NormFloat64()
			s += vals[i] * vals[i]
		}
		for i := range vals {
			vals[i] /= math.Sqrt(s)
		}
	}
	for i := range pred {
		pred[i] = 1.5 * r.NormFloat64()
		labels[i] = r.NormFloat64()
	}
	switch t {
	case SigmoidCrossEntropy:
		for i := range labels {
			labels[i] = r.Float64()
		}
	case Hinge:
		for i := range labels {
			labels[i] = float64(r.Intn(2))
		}
	case Log:
		for i := range pred {
			pred[i], labels[i] = 0.05+0.9*r.Float64(), r.Float64()
		}
	case SoftmaxCrossEntropy:
		labels = perPixel(probs(true))
	case CategoricalCrossEntropy:
		pred, labels = perPixel(softmax), perPixel(probs(true))
	case CosineDistance:
		pred, labels = perPixel(unit), perPixel(unit)
	case KullbackLeiblerDivergence:
		pred, labels = perPixel(softmax), perPixel(probs(true))
		for i := range pred {
			pred[i] = math.Log(pred[i])
		}
	}
	return pred, labels
}

// LossWeights returns one weight per item of t (LossType.Items), a third
// of them 0 and the rest in [0.25, 1.25).
func LossWeights(r *rand.Rand, t LossType, n, c, h, w int) []float32 {
	ws := make([]float32, t.Items(n, c, h, w))
	for i := range ws {
		if r.Intn(3) > 0 {
			ws[i] = float32(0.25 + r.Float64())
		}
	}
	return ws
}
