package ref

import (
	"fmt"
	"math"
)

// LossType is the loss function (MPSCNNLossType).
type LossType int

const (
	// MeanSquaredError: (pred - label)^2 per value.
	MeanSquaredError LossType = iota
	// SoftmaxCrossEntropy: per pixel, sum over channels of
	// label_c * (logsumexp(pred) - pred_c).
	SoftmaxCrossEntropy
)

// Reduction says how per-item losses combine (MPSCNNReductionType).
type Reduction int

const (
	// ReduceNone keeps one loss per item (value for MSE, pixel for
	// cross-entropy).
	ReduceNone Reduction = iota
	// ReduceSum adds them.
	ReduceSum
	// ReduceMean divides the sum by the number of items (PyTorch's
	// convention: values for MSE, pixels N*H*W for cross-entropy).
	ReduceMean
)

// Items returns the number of loss items of an N×C×H×W prediction.
func (t LossType) Items(n, c, h, w int) int {
	if t == SoftmaxCrossEntropy {
		return n * h * w
	}
	return n * c * h * w
}

func itemLoss[T Float](t LossType, pred, labels Tensor[T], item int) float64 {
	if t == MeanSquaredError {
		d := float64(pred.Data[item]) - float64(labels.Data[item])
		return d * d
	}
	plane := pred.H * pred.W
	n, px := item/plane, item%plane
	at := func(c int) int { return (n*pred.C+c)*plane + px }
	m := math.Inf(-1)
	for c := 0; c < pred.C; c++ {
		m = math.Max(m, float64(pred.Data[at(c)]))
	}
	s := 0.0
	for c := 0; c < pred.C; c++ {
		s += math.Exp(float64(pred.Data[at(c)]) - m)
	}
	lse := m + math.Log(s)
	l := 0.0
	for c := 0; c < pred.C; c++ {
		l += float64(labels.Data[at(c)]) * (lse - float64(pred.Data[at(c)]))
	}
	return l
}

func checkLoss[T Float](pred, labels Tensor[T]) error {
	if err := pred.check("prediction"); err != nil {
		return err
	}
	if err := labels.check("labels"); err != nil {
		return err
	}
	if pred.Shape() != labels.Shape() {
		return fmt.Errorf("%w: prediction %v and labels %v differ", ErrShape, pred.Shape(), labels.Shape())
	}
	return nil
}

// Loss returns the per-item losses (ReduceNone) or their sum or mean, in
// float64.
func Loss[T Float](t LossType, r Reduction, pred, labels Tensor[T]) ([]float64, error) {
	if err := checkLoss(pred, labels); err != nil {
		return nil, err
	}
	items := t.Items(pred.N, pred.C, pred.H, pred.W)
	out := make([]float64, items)
	sum := 0.0
	for i := range out {
		out[i] = itemLoss(t, pred, labels, i)
		sum += out[i]
	}
	switch r {
	case ReduceSum:
		return []float64{sum}, nil
	case ReduceMean:
		return []float64{sum / float64(items)}, nil
	}
	return out, nil
}

// LossGradient returns dLoss/dpred for the reduced loss (for ReduceNone,
// the gradient of the sum of the items), in float64.
func LossGradient[T Float](t LossType, r Reduction, pred, labels Tensor[T]) ([]float64, error) {
	if err := checkLoss(pred, labels); err != nil {
		return nil, err
	}
	scale := 1.0
	if r == ReduceMean {
		scale = 1 / float64(t.Items(pred.N, pred.C, pred.H, pred.W))
	}
	g := make([]float64, len(pred.Data))
	if t == MeanSquaredError {
		for i := range g {
			g[i] = scale * 2 * (float64(pred.Data[i]) - float64(labels.Data[i]))
		}
		return g, nil
	}
	plane := pred.H * pred.W
	for n := 0; n < pred.N; n++ {
		for px := 0; px < plane; px++ {
			at := func(c int) int { return (n*pred.C+c)*plane + px }
			m := math.Inf(-1)
			for c := 0; c < pred.C; c++ {
				m = math.Max(m, float64(pred.Data[at(c)]))
			}
			s, ls := 0.0, 0.0
			for c := 0; c < pred.C; c++ {
				s += math.Exp(float64(pred.Data[at(c)]) - m)
				ls += float64(labels.Data[at(c)])
			}
			for c := 0; c < pred.C; c++ {
				p := math.Exp(float64(pred.Data[at(c)])-m) / s
				g[at(c)] = scale * (p*ls - float64(labels.Data[at(c)]))
			}
		}
	}
	return g, nil
}
