package ref

import (
	"fmt"
	"math"
)

// LossType is the loss function (MPSCNNLossType); the values are
// ops.LossType's (not MPS's). For a prediction y and a label t (see
// ops.LossType for the choices where MPS and PyTorch differ):
//
//	MeanSquaredError           (y - t)^2                                      per value
//	SoftmaxCrossEntropy        sum_c t'_c (logsumexp(y) - y_c)                per pixel
//	MeanAbsoluteError          |y - t|                                        per value
//	SigmoidCrossEntropy        max(y, 0) - y t' + log(1 + exp(-|y|))          per value
//	CategoricalCrossEntropy    -sum_c t_c log(y_c), t_c = 0 terms are 0       per pixel
//	Hinge                      max(1 - (2t - 1) y, 0), labels 0 or 1          per value
//	Huber                      |d| <= delta ? d^2/2 : delta (|d| - delta/2)   per value, d = y - t
//	CosineDistance             1 - sum_c y_c t_c                              per pixel
//	Log                        -t log(y + eps) - (1 - t) log(1 - y + eps)     per value
//	KullbackLeiblerDivergence  t (log t - y), 0 where t = 0; y log-probs      per value
//
// with smoothed labels t' = t (1 - ls) + ls/K (softmax, K classes) or
// t (1 - ls) + ls/2 (sigmoid) when the label smoothing ls is > 0.
type LossType int

const (
	MeanSquaredError LossType = iota
	SoftmaxCrossEntropy
	MeanAbsoluteError
	SigmoidCrossEntropy
	CategoricalCrossEntropy
	Hinge
	Huber
	CosineDistance
	Log
	KullbackLeiblerDivergence
	numLossTypes
)

// Reduction says how per-item losses combine (MPSCNNReductionType); the
// values are ops.Reduction's.
type Reduction int

const (
	// ReduceNone keeps one loss per item (value or pixel).
	ReduceNone Reduction = iota
	// ReduceSum adds them.
	ReduceSum
	// ReduceMean divides the sum by the number of items (values, or
	// pixels N*H*W for the per-pixel losses).
	ReduceMean
	// ReduceSumByNonZeroWeights divides the sum by the number of items
	// whose weight is not 0 (all of them without per-item weights); 0 when
	// every weight is 0.
	ReduceSumByNonZeroWeights
	numReductions
)

// PerPixel reports whether the loss reduces over the feature channels of
// a pixel (softmax and categorical cross-entropy, cosine distance): its
// items are the N*H*W pixels, else the N*C*H*W values.
func (t LossType) PerPixel() bool {
	return t == SoftmaxCrossEntropy || t == CategoricalCrossEntropy || t == CosineDistance
}

// Items returns the number of loss items of an N×C×H×W prediction.
func (t LossType) Items(n, c, h, w int) int {
	if t.PerPixel() {
		return n * h * w
	}
	return n * c * h * w
}

// LossDescriptor is a loss's configuration in float64
// (ops.LossDescriptor). Zero values mean the defaults, as in package ops:
// Weight 1, Delta 1, Epsilon 1e-7, NumberOfClasses the channel count.
type LossDescriptor struct {
	Type            LossType
	Reduction       Reduction
	Weight          float64 // scales every item; 0 means 1
	LabelSmoothing  float64 // softmax and sigmoid cross-entropy only, in [0, 1]
	NumberOfClasses int     // softmax smoothing's K; 0 means C
	Delta           float64 // Huber; 0 means 1
	Epsilon         float64 // Log; 0 means 1e-7
}

// resolved returns d with its defaults filled in for c channels.
func (d LossDescriptor) resolved(c int) LossDescriptor {
	if d.Weight == 0 {
		d.Weight = 1
	}
	if d.Delta == 0 {
		d.Delta = 1
	}
	if d.Epsilon == 0 {
		d.Epsilon = 1e-7
	}
	if d.NumberOfClasses == 0 {
		d.NumberOfClasses = c
	}
	return d
}

func (d LossDescriptor) check() error {
	switch {
	case d.Type < 0 || d.Type >= numLossTypes:
		return fmt.Errorf("%w: unknown loss type %d", ErrGeometry, int(d.Type))
	case d.Reduction < 0 || d.Reduction >= numReductions:
		return fmt.Errorf("%w: unknown reduction %d", ErrGeometry, int(d.Reduction))
	case !(d.LabelSmoothing >= 0 && d.LabelSmoothing <= 1):
		return fmt.Errorf("%w: label smoothing %g outside [0, 1]", ErrGeometry, d.LabelSmoothing)
	case !(d.Delta >= 0) || !(d.Epsilon >= 0) || d.NumberOfClasses < 0:
		return fmt.Errorf("%w: negative delta %g, epsilon %g or number of classes %d", ErrGeometry, d.Delta, d.Epsilon, d.NumberOfClasses)
	}
	return nil
}

// smooth returns the label t after label smoothing (softmax and sigmoid
// cross-entropy; other types and ls = 0 leave t as it is).
func (d LossDescriptor) smooth(t float64) float64 {
	if d.LabelSmoothing <= 0 {
		return t
	}
	switch d.Type {
	case SoftmaxCrossEntropy:
		return t*(1-d.LabelSmoothing) + d.LabelSmoothing/float64(d.NumberOfClasses)
	case SigmoidCrossEntropy:
		return t*(1-d.LabelSmoothing) + d.LabelSmoothing/2
	}
	return t
}

// ValueLoss returns the loss of one value of an element-wise loss type.
func (d LossDescriptor) ValueLoss(y, t float64) float64 {
	d = d.resolved(1)
	t = d.smooth(t)
	switch d.Type {
	case MeanSquaredError:
		return (y - t) * (y - t)
	case MeanAbsoluteError:
		return math.Abs(y - t)
	case SigmoidCrossEntropy:
		return math.Max(y, 0) - y*t + math.Log1p(math.Exp(-math.Abs(y)))
	case Hinge:
		v := 1 - (2*t-1)*y
		if v > 0 || math.IsNaN(v) {
			return v
		}
		return 0
	case Huber:
		a := math.Abs(y - t)
		if a <= d.Delta {
			return 0.5 * a * a
		}
		return d.Delta * (a - 0.5*d.Delta)
	case Log:
		return -t*math.Log(y+d.Epsilon) - (1-t)*math.Log(1-y+d.Epsilon)
	case KullbackLeiblerDivergence:
		if t == 0 {
			return 0
		}
		return t * (math.Log(t) - y)
	}
	return math.NaN()
}

// ValueGradient returns dValueLoss/dy.
func (d LossDescriptor) ValueGradient(y, t float64) float64 {
	d = d.resolved(1)
	t = d.smooth(t)
	switch d.Type {
	case MeanSquaredError:
		return 2 * (y - t)
	case MeanAbsoluteError:
		return sign(y - t)
	case SigmoidCrossEntropy:
		return 1/(1+math.Exp(-y)) - t
	case Hinge:
		s := 2*t - 1
		if v := 1 - s*y; v > 0 {
			return -s
		} else if math.IsNaN(v) {
			return v
		}
		return 0
	case Huber:
		dd := y - t
		if math.Abs(dd) <= d.Delta {
			return dd
		}
		return d.Delta * sign(dd)
	case Log:
		e := d.Epsilon
		return (y + e - t - 2*e*t) / ((y + e) * (1 - y + e))
	case KullbackLeiblerDivergence:
		return -t
	}
	return math.NaN()
}

// sign is -1, 0 or 1 (NaN for NaN).
func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return v * 0
}

// pixelLoss returns the loss of pixel px of batch image n of a per-pixel
// type, and with g non-nil adds scale * its gradient to g.
func pixelLoss[T Float](d LossDescriptor, pred, labels Tensor[T], n, px int, g []float64, scale float64) float64 {
	plane := pred.H * pred.W
	at := func(c int) int { return (n*pred.C+c)*plane + px }
	y := func(c int) float64 { return float64(pred.Data[at(c)]) }
	t := func(c int) float64 { return d.smooth(float64(labels.Data[at(c)])) }
	l := 0.0
	switch d.Type {
	case SoftmaxCrossEntropy:
		m := math.Inf(-1)
		for c := 0; c < pred.C; c++ {
			m = math.Max(m, y(c))
		}
		s, ts := 0.0, 0.0
		for c := 0; c < pred.C; c++ {
			s += math.Exp(y(c) - m)
			ts += t(c)
		}
		lse := m + math.Log(s)
		for c := 0; c < pred.C; c++ {
			l += t(c) * (lse - y(c))
			if g != nil {
				g[at(c)] += scale * (math.Exp(y(c)-m)/s*ts - t(c))
			}
		}
	case CategoricalCrossEntropy:
		for c := 0; c < pred.C; c++ {
			if tc := t(c); tc != 0 {
				l -= tc * math.Log(y(c))
				if g != nil {
					g[at(c)] -= scale * tc / y(c)
				}
			}
		}
	case CosineDistance:
		l = 1
		for c := 0; c < pred.C; c++ {
			l -= y(c) * t(c)
			if g != nil {
				g[at(c)] -= scale * t(c)
			}
		}
	}
	return l
}

func checkLoss[T Float](d LossDescriptor, pred, labels Tensor[T], weights []T) error {
	if err := d.check(); err != nil {
		return err
	}
	if err := pred.check("prediction"); err != nil {
		return err
	}
	if err := labels.check("labels"); err != nil {
		return err
	}
	if pred.Shape() != labels.Shape() {
		return fmt.Errorf("%w: prediction %v and labels %v differ", ErrShape, pred.Shape(), labels.Shape())
	}
	if items := d.Type.Items(pred.N, pred.C, pred.H, pred.W); weights != nil && len(weights) != items {
		return fmt.Errorf("%w: %d weights for %d loss items", ErrShape, len(weights), items)
	}
	return nil
}

// itemWeight returns per-item weight i (1 without weights).
func itemWeight[T Float](weights []T, i int) float64 {
	if weights == nil {
		return 1
	}
	return float64(weights[i])
}

// lossDivisor returns what the reduced sum is divided by: 1 (none, sum),
// the number of items (mean) or of nonzero weights (0 when there are
// none).
func lossDivisor[T Float](r Reduction, items int, weights []T) float64 {
	switch r {
	case ReduceMean:
		return float64(items)
	case ReduceSumByNonZeroWeights:
		if weights == nil {
			return float64(items)
		}
		k := 0
		for _, w := range weights {
			if w != 0 {
				k++
			}
		}
		return float64(k)
	}
	return 1
}

// LossWith returns the weighted per-item losses Weight * w_i * l_i
// (ReduceNone) or their sum divided as the reduction says, in float64.
// weights holds one weight per item (nil: all 1): pred's shape for the
// element-wise types, N×1×H×W for the per-pixel ones.
func LossWith[T Float](d LossDescriptor, pred, labels Tensor[T], weights []T) ([]float64, error) {
	if err := checkLoss(d, pred, labels, weights); err != nil {
		return nil, err
	}
	d = d.resolved(pred.C)
	items := d.Type.Items(pred.N, pred.C, pred.H, pred.W)
	out := make([]float64, items)
	plane := pred.H * pred.W
	sum := 0.0
	for i := range out {
		var l float64
		if d.Type.PerPixel() {
			l = pixelLoss(d, pred, labels, i/plane, i%plane, nil, 0)
		} else {
			l = d.ValueLoss(float64(pred.Data[i]), float64(labels.Data[i]))
		}
		out[i] = d.Weight * itemWeight(weights, i) * l
		sum += itemWeight(weights, i) * l
	}
	if d.Reduction == ReduceNone {
		return out, nil
	}
	div := lossDivisor(d.Reduction, items, weights)
	if div == 0 {
		return []float64{0}, nil
	}
	return []float64{d.Weight * sum / div}, nil
}

// LossGradientWith returns dLoss/dpred of LossWith's result (for
// ReduceNone, of the sum of the items), in float64, pred's shape.
func LossGradientWith[T Float](d LossDescriptor, pred, labels Tensor[T], weights []T) ([]float64, error) {
	if err := checkLoss(d, pred, labels, weights); err != nil {
		return nil, err
	}
	d = d.resolved(pred.C)
	items := d.Type.Items(pred.N, pred.C, pred.H, pred.W)
	g := make([]float64, len(pred.Data))
	div := lossDivisor(d.Reduction, items, weights)
	if div == 0 {
		return g, nil
	}
	scale := d.Weight / div
	if d.Type.PerPixel() {
		plane := pred.H * pred.W
		for i := 0; i < items; i++ {
			pixelLoss(d, pred, labels, i/plane, i%plane, g, scale*itemWeight(weights, i))
		}
		return g, nil
	}
	for i := range g {
		g[i] = scale * itemWeight(weights, i) * d.ValueGradient(float64(pred.Data[i]), float64(labels.Data[i]))
	}
	return g, nil
}

// Loss is LossWith with the type and reduction alone (weight 1, no
// smoothing, default delta and epsilon, no per-item weights).
func Loss[T Float](t LossType, r Reduction, pred, labels Tensor[T]) ([]float64, error) {
	return LossWith(LossDescriptor{Type: t, Reduction: r}, pred, labels, nil)
}

// LossGradient is LossGradientWith with the type and reduction alone.
func LossGradient[T Float](t LossType, r Reduction, pred, labels Tensor[T]) ([]float64, error) {
	return LossGradientWith(LossDescriptor{Type: t, Reduction: r}, pred, labels, nil)
}
