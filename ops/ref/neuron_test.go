package ref

import (
	"math"
	"math/rand"
	"testing"
)

// neuronCases are every type with non-default parameters, so that a and b
// matter.
var neuronCases = []Neuron{
	{Type: NeuronNone},
	{Type: NeuronReLU, A: 0.1},
	{Type: NeuronLinear, A: -1.5, B: 0.25},
	{Type: NeuronSigmoid},
	{Type: NeuronHardSigmoid, A: 0.2, B: 0.5},
	{Type: NeuronTanH, A: 1.7, B: 0.6},
	{Type: NeuronAbsolute},
	{Type: NeuronSoftPlus, A: 0.8, B: 1.3},
	{Type: NeuronSoftSign},
	{Type: NeuronELU, A: 0.7},
	{Type: NeuronPReLU, PReLU: []float64{0.25, -0.5}},
	{Type: NeuronReLUN, A: 0.05, B: 1.5},
	{Type: NeuronPower, A: 0.5, B: 3, C: 2.5},
	{Type: NeuronPower, A: 1, B: 0, C: 3},
	{Type: NeuronExponential, A: 0.5, B: 0.1, C: -1},
	{Type: NeuronExponential, A: 1, B: 0, C: 2},
	{Type: NeuronLogarithm, A: 2, B: 5, C: -1},
	{Type: NeuronLogarithm, A: 1, B: 4, C: 10},
	{Type: NeuronGeLU},
}

// TestNeuronDerivativeFiniteDifferences checks every derivative against a
// central difference away from kinks.
func TestNeuronDerivativeFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	const h = 1e-6
	kinks := []float64{0, -2.5, 2.5, 1.5, 1.5 / 0.05}
	for _, n := range neuronCases {
		for i := 0; i < 200; i++ {
			x := r.NormFloat64() * 2
			near := false
			for _, k := range kinks {
				near = near || math.Abs(x-k) < 1e-3
			}
			if near {
				continue
			}
			c := i % 2
			num := (n.Forward(x+h, c) - n.Forward(x-h, c)) / (2 * h)
			got := n.Derivative(x, c)
			if math.IsNaN(num) && math.IsNaN(got) {
				continue
			}
			if math.Abs(num-got) > 1e-5*math.Max(1, math.Abs(num)) {
				t.Errorf("%+v at %g: derivative %g, finite difference %g", n, x, got, num)
			}
		}
	}
}

// TestNeuronKinks pins the choices at kinks (MPS's side).
func TestNeuronKinks(t *testing.T) {
	for _, c := range []struct {
		n    Neuron
		x, d float64
	}{
		{Neuron{Type: NeuronReLU}, 0, 1},
		{Neuron{Type: NeuronELU, A: 1}, 0, 1},
		{Neuron{Type: NeuronPReLU, PReLU: []float64{0.3}}, 0, 1},
		{Neuron{Type: NeuronAbsolute}, 0, 0},
		{Neuron{Type: NeuronHardSigmoid, A: 0.2, B: 0.5}, 2.5, 0},
		{Neuron{Type: NeuronHardSigmoid, A: 0.2, B: 0.5}, -2.5, 0},
		{Neuron{Type: NeuronReLUN, A: 0, B: 6}, 6, 0},
	} {
		if got := c.n.Derivative(c.x, 0); got != c.d {
			t.Errorf("%+v at %g: derivative %g, want %g", c.n, c.x, got, c.d)
		}
	}
	if v := (Neuron{Type: NeuronPower, A: 1, C: 3}).Forward(-2, 0); v != -8 {
		t.Errorf("(-2)^3 = %g", v)
	}
	if v := (Neuron{Type: NeuronPower, A: 1, C: 0.5}).Forward(-2, 0); !math.IsNaN(v) {
		t.Errorf("(-2)^0.5 = %g, want NaN", v)
	}
}

// TestNeuronTensorGradients checks NeuronGradient and PReLUSlopeGradient on
// tensors against central differences of sum(dy * f(x)).
func TestNeuronTensorGradients(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	const h = 1e-6
	x := NewTensor[float64](2, 3, 2, 3)
	dy := NewTensor[float64](2, 3, 2, 3)
	for i := range x.Data {
		x.Data[i] = r.NormFloat64()
		for math.Abs(x.Data[i]) < 1e-3 { // away from the kinks at 0
			x.Data[i] = r.NormFloat64()
		}
		dy.Data[i] = r.NormFloat64()
	}
	loss := func(n Neuron) float64 {
		y, err := NeuronForward(n, x)
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for i := range y {
			s += dy.Data[i] * y[i]
		}
		return s
	}
	for _, n := range append(neuronCases, Neuron{Type: NeuronPReLU, PReLU: []float64{0.25, -0.5, 2}}) {
		if n.Type == NeuronPReLU && len(n.PReLU) != x.C {
			continue
		}
		if n.Type == NeuronLogarithm || (n.Type == NeuronPower && n.C != 3) {
			continue // domain a*x + b > 0 does not hold for every x here
		}
		got, err := NeuronGradient(n, dy, x)
		if err != nil {
			t.Fatal(err)
		}
		for i := range x.Data {
			v := x.Data[i]
			x.Data[i] = v + h
			up := loss(n)
			x.Data[i] = v - h
			down := loss(n)
			x.Data[i] = v
			num := (up - down) / (2 * h)
			if math.Abs(num-got[i]) > 1e-5*math.Max(1, math.Abs(num)) {
				t.Errorf("%+v dx[%d]: %g, finite difference %g", n, i, got[i], num)
			}
		}
		if n.Type != NeuronPReLU {
			continue
		}
		ds, err := PReLUSlopeGradient(dy, x)
		if err != nil {
			t.Fatal(err)
		}
		for c := range n.PReLU {
			a := n.PReLU[c]
			n.PReLU[c] = a + h
			up := loss(n)
			n.PReLU[c] = a - h
			down := loss(n)
			n.PReLU[c] = a
			num := (up - down) / (2 * h)
			if math.Abs(num-ds[c]) > 1e-5*math.Max(1, math.Abs(num)) {
				t.Errorf("dSlopes[%d]: %g, finite difference %g", c, ds[c], num)
			}
		}
	}
	if _, err := NeuronForward(Neuron{Type: NeuronPReLU, PReLU: []float64{1}}, x); err == nil {
		t.Error("a prelu with 1 slope for 3 channels was accepted")
	}
	if _, err := NeuronGradient(Neuron{Type: NeuronReLU}, NewTensor[float64](1, 1, 1, 1), x); err == nil {
		t.Error("a gradient of another shape was accepted")
	}
}
