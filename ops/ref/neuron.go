package ref

import (
	"fmt"
	"math"
)

// NeuronType is an activation function; the values are MPSCNNNeuronType's
// (and ops.NeuronType's).
type NeuronType int

const (
	NeuronNone NeuronType = iota
	NeuronReLU
	NeuronLinear
	NeuronSigmoid
	NeuronHardSigmoid
	NeuronTanH
	NeuronAbsolute
	NeuronSoftPlus
	NeuronSoftSign
	NeuronELU
	NeuronPReLU
	NeuronReLUN
	NeuronPower
	NeuronExponential
	NeuronLogarithm
	NeuronGeLU
	NumNeuronTypes
)

// Neuron is an activation with its parameters (ops.NeuronDescriptor in
// float64): the formulas are ops.NeuronType's. PReLU holds the slope of
// each feature channel.
type Neuron struct {
	Type    NeuronType
	A, B, C float64
	PReLU   []float64
}

func (n Neuron) lnBase() float64 {
	if n.C == -1 {
		return 1
	}
	return math.Log(n.C)
}

// realPow is v^p with the sign rule of real powers for an integer p and
// v < 0; NaN for a fractional p and v < 0 (C's pow).
func realPow(v, p float64) float64 { return math.Pow(v, p) }

// Forward returns f(x) for feature channel c.
func (n Neuron) Forward(x float64, c int) float64 {
	a, b := n.A, n.B
	switch n.Type {
	case NeuronReLU:
		if x >= 0 {
			return x
		}
		return a * x
	case NeuronLinear:
		return a*x + b
	case NeuronSigmoid:
		return 1 / (1 + math.Exp(-x))
	case NeuronHardSigmoid:
		return math.Min(math.Max(a*x+b, 0), 1)
	case NeuronTanH:
		return a * math.Tanh(b*x)
	case NeuronAbsolute:
		return math.Abs(x)
	case NeuronSoftPlus:
		v := b * x
		return a * (math.Max(v, 0) + math.Log1p(math.Exp(-math.Abs(v))))
	case NeuronSoftSign:
		return x / (1 + math.Abs(x))
	case NeuronELU:
		if x >= 0 {
			return x
		}
		return a * math.Expm1(x)
	case NeuronPReLU:
		if x >= 0 {
			return x
		}
		return n.PReLU[c] * x
	case NeuronReLUN:
		r := x
		if x < 0 {
			r = a * x
		}
		return math.Min(r, b)
	case NeuronPower:
		return realPow(a*x+b, n.C)
	case NeuronExponential:
		return math.Exp((a*x + b) * n.lnBase())
	case NeuronLogarithm:
		return math.Log(a*x+b) / n.lnBase()
	case NeuronGeLU:
		return 0.5 * x * math.Erfc(-x/math.Sqrt2)
	}
	return x
}

// Derivative returns df/dx at x for feature channel c, with MPS's choices
// at kinks (ops.NeuronType): slope 1 at 0 for ReLU, ELU and PReLU, 0 where
// hard sigmoid and ReLUN clamp (bounds included), 0 for |x| at 0.
func (n Neuron) Derivative(x float64, c int) float64 {
	a, b := n.A, n.B
	switch n.Type {
	case NeuronReLU:
		if x >= 0 {
			return 1
		}
		return a
	case NeuronLinear:
		return a
	case NeuronSigmoid:
		s := 1 / (1 + math.Exp(-x))
		return s * (1 - s)
	case NeuronHardSigmoid:
		if v := a*x + b; v > 0 && v < 1 {
			return a
		}
		return 0
	case NeuronTanH:
		t := math.Tanh(b * x)
		return a * b * (1 - t*t)
	case NeuronAbsolute:
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	case NeuronSoftPlus:
		return a * b / (1 + math.Exp(-b*x))
	case NeuronSoftSign:
		d := 1 + math.Abs(x)
		return 1 / (d * d)
	case NeuronELU:
		if x >= 0 {
			return 1
		}
		return a * math.Exp(x)
	case NeuronPReLU:
		if x >= 0 {
			return 1
		}
		return n.PReLU[c]
	case NeuronReLUN:
		r, s := x, 1.0
		if x < 0 {
			r, s = a*x, a
		}
		if r < b {
			return s
		}
		return 0
	case NeuronPower:
		return n.C * a * realPow(a*x+b, n.C-1)
	case NeuronExponential:
		l := n.lnBase()
		return a * l * math.Exp((a*x+b)*l)
	case NeuronLogarithm:
		return a / ((a*x + b) * n.lnBase())
	case NeuronGeLU:
		return 0.5*math.Erfc(-x/math.Sqrt2) + x*math.Exp(-0.5*x*x)/math.Sqrt(2*math.Pi)
	}
	return 1
}

// SlopeGradient returns d f / d a[c] of PReLU at x: x where x < 0, else 0
// (the gradient of a channel's slope sums dy times this over its pixels).
func (n Neuron) SlopeGradient(x float64) float64 {
	if x < 0 {
		return x
	}
	return 0
}

// checkNeuron reports a PReLU slope list whose length is not x's channel
// count.
func checkNeuron[T Float](n Neuron, x Tensor[T]) error {
	if err := x.check("source"); err != nil {
		return err
	}
	if n.Type < 0 || n.Type >= NumNeuronTypes {
		return fmt.Errorf("%w: unknown neuron type %d", ErrGeometry, int(n.Type))
	}
	if n.Type == NeuronPReLU && len(n.PReLU) != x.C {
		return fmt.Errorf("%w: prelu has %d slopes for %d feature channels", ErrShape, len(n.PReLU), x.C)
	}
	return nil
}

// NeuronForward returns f(x) for every value of x (MPSCNNNeuron), NCHW, in
// float64; PReLU takes channel c's slope for the values of channel c.
func NeuronForward[T Float](n Neuron, x Tensor[T]) ([]float64, error) {
	if err := checkNeuron(n, x); err != nil {
		return nil, err
	}
	out := make([]float64, len(x.Data))
	plane := x.H * x.W
	for i, v := range x.Data {
		out[i] = n.Forward(float64(v), i/plane%x.C)
	}
	return out, nil
}

// NeuronGradient returns dx = dy * f'(x) (MPSCNNNeuronGradient), where x is
// the forward's source; dy and x have one shape.
func NeuronGradient[T Float](n Neuron, dy, x Tensor[T]) ([]float64, error) {
	if err := checkNeuron(n, x); err != nil {
		return nil, err
	}
	if err := dy.check("source gradient"); err != nil {
		return nil, err
	}
	if dy.Shape() != x.Shape() {
		return nil, fmt.Errorf("%w: source gradient %v and source %v differ", ErrShape, dy.Shape(), x.Shape())
	}
	out := make([]float64, len(x.Data))
	plane := x.H * x.W
	for i, v := range x.Data {
		out[i] = float64(dy.Data[i]) * n.Derivative(float64(v), i/plane%x.C)
	}
	return out, nil
}

// PReLUSlopeGradient returns the gradient of PReLU's slopes, one per
// feature channel: dSlopes[c] = sum over n, h, w of dy * (x < 0 ? x : 0),
// summed in float64 in NCHW order.
func PReLUSlopeGradient[T Float](dy, x Tensor[T]) ([]float64, error) {
	if err := x.check("source"); err != nil {
		return nil, err
	}
	if err := dy.check("source gradient"); err != nil {
		return nil, err
	}
	if dy.Shape() != x.Shape() {
		return nil, fmt.Errorf("%w: source gradient %v and source %v differ", ErrShape, dy.Shape(), x.Shape())
	}
	out := make([]float64, x.C)
	plane := x.H * x.W
	for i, v := range x.Data {
		out[i/plane%x.C] += float64(dy.Data[i]) * Neuron{}.SlopeGradient(float64(v))
	}
	return out, nil
}
