package ref

import (
	"errors"
	"fmt"
	"math"
)

// OptimizerType is an optimizer's update rule (MPSNNOptimizer's
// subclasses; ops.OptimizerType has the same values).
type OptimizerType int

const (
	// SGD: MPSNNOptimizerStochasticGradientDescent (plain, momentum or
	// Nesterov).
	SGD OptimizerType = iota
	// RMSProp: MPSNNOptimizerRMSProp.
	RMSProp
	// Adam: MPSNNOptimizerAdam (and AMSGrad).
	Adam
)

// Regularization is MPSNNRegularizationType.
type Regularization int

const (
	RegularizationNone Regularization = iota
	RegularizationL1
	RegularizationL2
)

// ErrOptimizer reports an optimizer step that cannot be taken: state
// vectors missing or of another length than the parameter.
var ErrOptimizer = errors.New("ref: optimizer state mismatch")

// Optimizer is one optimizer configuration in float64 (ops.OptimizerDescriptor
// with its learning rate and schedule scalars). Every value is used as is:
// no field has a default here.
//
// Each step preprocesses the gradient in MPS's order and then applies the
// rule, element by element (w the parameter, g its gradient):
//
//	g = clamp(g, ClipMin, ClipMax)           if Clip (NaN stays NaN)
//	g = GradientRescale * g
//	g = g + RegularizationScale * sign(w)    L1 (sign(0) = 0)
//	g = g + RegularizationScale * w          L2 (PyTorch's weight_decay)
//
// and then, with lr = LearningRate and mu = Momentum:
//
//	SGD, mu = 0 and not Nesterov:  w -= lr*g                (no state)
//	SGD momentum, MPS form:        m = mu*m + lr*g;  w -= m
//	SGD momentum, PyTorch form:    m = mu*m + g;     w -= lr*m
//	SGD Nesterov (both forms):     m = mu*m + g;     w -= lr*(g + mu*m)
//	RMSProp:                       s = d*s + (1-d)*g^2;  w -= lr*g/(sqrt(s)+eps)
//	Adam:  t = t+1;  m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g^2
//	       AMSGrad: vmax = max(vmax, v), and vmax replaces v below
//	       MPS form:     w -= lr*sqrt(1-b2^t)/(1-b1^t) * m/(sqrt(v)+eps)
//	       PyTorch form: w -= lr/(1-b1^t) * m/(sqrt(v)/sqrt(1-b2^t)+eps)
//
// The forms differ only where the learning rate changes between steps
// (SGD momentum) and in where Adam's epsilon sits (MPS adds it to sqrt(v),
// PyTorch to the bias-corrected sqrt(v/(1-b2^t)), a difference that shows
// when sqrt(v) is not large against eps/sqrt(1-b2^t)).
type Optimizer struct {
	Type                OptimizerType
	LearningRate        float64
	GradientRescale     float64
	Clip                bool
	ClipMin, ClipMax    float64
	Regularization      Regularization
	RegularizationScale float64
	Momentum            float64 // SGD
	Nesterov            bool    // SGD
	Decay               float64 // RMSProp
	Beta1, Beta2        float64 // Adam
	AMSGrad             bool    // Adam
	Epsilon             float64 // RMSProp, Adam
	PyTorch             bool    // the PyTorch form (see above)
}

// OptimizerState is one parameter's optimizer state: Momentum (SGD's m,
// Adam's m), Velocity (RMSProp's sum of squares s, Adam's v),
// MaximumVelocity (AMSGrad) and Step, the updates taken so far (Adam's t
// before the next update). Vectors a rule does not use may be nil.
type OptimizerState struct {
	Momentum, Velocity, MaximumVelocity []float64
	Step                                int
}

// NewOptimizerState returns a zeroed state for n values with the vectors
// o's rule needs.
func (o Optimizer) NewOptimizerState(n int) *OptimizerState {
	s := &OptimizerState{}
	switch o.Type {
	case SGD:
		if o.Momentum != 0 || o.Nesterov {
			s.Momentum = make([]float64, n)
		}
	case RMSProp:
		s.Velocity = make([]float64, n)
	case Adam:
		s.Momentum, s.Velocity = make([]float64, n), make([]float64, n)
		if o.AMSGrad {
			s.MaximumVelocity = make([]float64, n)
		}
	}
	return s
}

// PreprocessGradient returns g after clipping, rescaling and
// regularization against the parameter value w.
func (o Optimizer) PreprocessGradient(g, w float64) float64 {
	if o.Clip {
		if g < o.ClipMin {
			g = o.ClipMin
		} else if g > o.ClipMax {
			g = o.ClipMax
		}
	}
	g *= o.GradientRescale
	switch o.Regularization {
	case RegularizationL1:
		s := 0.0
		if w > 0 {
			s = 1
		} else if w < 0 {
			s = -1
		}
		g += o.RegularizationScale * s
	case RegularizationL2:
		g += o.RegularizationScale * w
	}
	return g
}

// Step updates param in place from grad and advances st by one update.
func (o Optimizer) Step(param, grad []float64, st *OptimizerState) error {
	n := len(param)
	if len(grad) != n {
		return fmt.Errorf("%w: %d gradients for %d parameters", ErrOptimizer, len(grad), n)
	}
	need := func(name string, v []float64) error {
		if len(v) != n {
			return fmt.Errorf("%w: %s has %d values for %d parameters", ErrOptimizer, name, len(v), n)
		}
		return nil
	}
	momentum := o.Type == SGD && (o.Momentum != 0 || o.Nesterov)
	if momentum || o.Type == Adam {
		if err := need("momentum", st.Momentum); err != nil {
			return err
		}
	}
	if o.Type != SGD {
		if err := need("velocity", st.Velocity); err != nil {
			return err
		}
	}
	if o.Type == Adam && o.AMSGrad {
		if err := need("maximum velocity", st.MaximumVelocity); err != nil {
			return err
		}
	}
	st.Step++
	t := float64(st.Step)
	bc1 := -math.Expm1(t * math.Log(o.Beta1)) // 1 - beta1^t
	bc2 := -math.Expm1(t * math.Log(o.Beta2))
	lr, mu := o.LearningRate, o.Momentum
	for i := range param {
		w := param[i]
		g := o.PreprocessGradient(grad[i], w)
		switch o.Type {
		case SGD:
			switch {
			case !momentum:
				w -= lr * g
			case o.Nesterov:
				m := mu*st.Momentum[i] + g
				st.Momentum[i] = m
				w -= lr * (g + mu*m)
			case o.PyTorch:
				m := mu*st.Momentum[i] + g
				st.Momentum[i] = m
				w -= lr * m
			default:
				m := mu*st.Momentum[i] + lr*g
				st.Momentum[i] = m
				w -= m
			}
		case RMSProp:
			s := o.Decay*st.Velocity[i] + (1-o.Decay)*g*g
			st.Velocity[i] = s
			w -= lr * g / (math.Sqrt(s) + o.Epsilon)
		case Adam:
			m := o.Beta1*st.Momentum[i] + (1-o.Beta1)*g
			v := o.Beta2*st.Velocity[i] + (1-o.Beta2)*g*g
			st.Momentum[i], st.Velocity[i] = m, v
			if o.AMSGrad {
				v = math.Max(st.MaximumVelocity[i], v) // NaN propagates
				st.MaximumVelocity[i] = v
			}
			if o.PyTorch {
				w -= lr / bc1 * m / (math.Sqrt(v)/math.Sqrt(bc2) + o.Epsilon)
			} else {
				w -= lr * math.Sqrt(bc2) / bc1 * m / (math.Sqrt(v) + o.Epsilon)
			}
		}
		param[i] = w
	}
	return nil
}
