package ops

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// OptimizerType is an optimizer's update rule: one of MPSNNOptimizer's
// subclasses.
type OptimizerType int

const (
	// OptimizerStochasticGradientDescent is
	// MPSNNOptimizerStochasticGradientDescent: plain SGD, with momentum, or
	// with Nesterov momentum.
	OptimizerStochasticGradientDescent OptimizerType = iota
	// OptimizerRMSProp is MPSNNOptimizerRMSProp.
	OptimizerRMSProp
	// OptimizerAdam is MPSNNOptimizerAdam (and its AMSGrad variant).
	OptimizerAdam
)

func (t OptimizerType) String() string {
	switch t {
	case OptimizerStochasticGradientDescent:
		return "sgd"
	case OptimizerRMSProp:
		return "rmsprop"
	case OptimizerAdam:
		return "adam"
	}
	return fmt.Sprintf("OptimizerType(%d)", int(t))
}

// RegularizationType is MPSNNRegularizationType: a regularization whose
// loss gradient the optimizer adds to each gradient.
type RegularizationType int

const (
	// RegularizationNone adds nothing.
	RegularizationNone RegularizationType = iota
	// RegularizationL1 adds RegularizationScale * sign(w) (sign(0) = 0),
	// the gradient of RegularizationScale * |w|. (MPS's header says the
	// gradient "turns to be 1 scaled with regularizationScale": that is
	// the positive side of the same function.)
	RegularizationL1
	// RegularizationL2 adds RegularizationScale * w, PyTorch's
	// weight_decay (SGD, RMSprop and Adam, not AdamW).
	RegularizationL2
)

func (r RegularizationType) String() string {
	switch r {
	case RegularizationNone:
		return "none"
	case RegularizationL1:
		return "L1"
	case RegularizationL2:
		return "L2"
	}
	return fmt.Sprintf("RegularizationType(%d)", int(r))
}

// OptimizerForm chooses between MPS's and PyTorch's arithmetic where the
// two differ.
//
// SGD with momentum: MPS keeps m = mu*m + lr*g and steps w -= m; PyTorch
// keeps m = mu*m + g and steps w -= lr*m. Under a constant learning rate
// the two are the same sequence (MPS's m is lr times PyTorch's) up to
// float32 rounding; when the learning rate changes between steps, MPS's
// momentum carries the old rates and PyTorch's the new one. Nesterov
// momentum and RMSProp are the same in both.
//
// Adam: MPS steps w -= lr*sqrt(1-b2^t)/(1-b1^t) * m/(sqrt(v) + eps),
// PyTorch w -= lr/(1-b1^t) * m/(sqrt(v)/sqrt(1-b2^t) + eps). The first is
// the second with eps replaced by eps*sqrt(1-b2^t): a difference that shows
// whenever sqrt(v/(1-b2^t)) is not large against eps, i.e. for small
// gradients and early steps (at t = 1 with b2 = 0.999, MPS's effective
// epsilon is 31.6 times smaller; for gradients near 1e-6 the steps differ
// by tens of percent), also under a constant learning rate.
//
// To match PyTorch step by step (the end-to-end tests, `vkmps graph train`)
// use OptimizerFormPyTorch.
type OptimizerForm int

const (
	// OptimizerFormMPS is MPSNNOptimizers.h's arithmetic, the default.
	OptimizerFormMPS OptimizerForm = iota
	// OptimizerFormPyTorch is torch.optim's (SGD, RMSprop, Adam with
	// amsgrad; dampening 0, no centered RMSprop, no RMSprop momentum).
	OptimizerFormPyTorch
)

func (f OptimizerForm) String() string {
	switch f {
	case OptimizerFormMPS:
		return "mps"
	case OptimizerFormPyTorch:
		return "pytorch"
	}
	return fmt.Sprintf("OptimizerForm(%d)", int(f))
}

// OptimizerDescriptor configures an Optimizer: MPSNNOptimizerDescriptor's
// properties and those of the MPSNNOptimizer subclass chosen by Type.
// NewOptimizerDescriptor fills in MPS's defaults; a zero
// OptimizerDescriptor is not valid (its gradient rescale is 0).
//
// For every parameter value w and its gradient g, an update first
// preprocesses g in MPS's order: clip to [GradientClipMin,
// GradientClipMax] (when ApplyGradientClipping; a NaN gradient stays
// NaN), multiply by GradientRescale, add the regularization gradient
// (RegularizationType), and then applies the rule of Type (see
// OptimizerForm for where MPS and PyTorch differ):
//
//	SGD, MomentumScale 0, no Nesterov:  w -= lr*g  (no state)
//	SGD with momentum mu:               m = mu*m + lr*g; w -= m   (MPS form)
//	                                    m = mu*m + g; w -= lr*m   (PyTorch form)
//	SGD Nesterov:                       m = mu*m + g; w -= lr*(g + mu*m)
//	RMSProp:                            s = d*s + (1-d)*g^2; w -= lr*g/(sqrt(s) + eps)
//	Adam:  t = t+1;  m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g^2
//	       AMSGrad: vmax = max(vmax, v), used in place of v below
//	       w -= lr*sqrt(1-b2^t)/(1-b1^t) * m/(sqrt(v)+eps)          (MPS form)
//	       w -= lr/(1-b1^t) * m/(sqrt(v)/sqrt(1-b2^t) + eps)        (PyTorch form)
type OptimizerDescriptor struct {
	Type OptimizerType
	// LearningRate (lr) is finite and >= 0; MPS's default 1e-3.
	// Optimizer.SetLearningRate changes it between replays.
	LearningRate float32
	// GradientRescale multiplies every gradient after clipping; finite
	// and not 0. Default 1.
	GradientRescale float32
	// ApplyGradientClipping clamps every gradient to [GradientClipMin,
	// GradientClipMax] (finite, min <= max) before rescaling. Default off.
	ApplyGradientClipping            bool
	GradientClipMin, GradientClipMax float32
	// RegularizationType and RegularizationScale (finite, >= 0): default
	// none, 0. L2 with scale s is PyTorch's weight_decay s.
	RegularizationType  RegularizationType
	RegularizationScale float32

	// MomentumScale (SGD) is in [0, 1); default 0. With 0 and no Nesterov
	// SGD keeps no state.
	MomentumScale float32
	// UseNesterovMomentum (SGD) needs MomentumScale > 0. Default off.
	UseNesterovMomentum bool
	// Decay (RMSProp) is in [0, 1); MPS's default 0.9 (PyTorch's alpha
	// defaults to 0.99).
	Decay float64
	// Beta1 and Beta2 (Adam) are in [0, 1); defaults 0.9 and 0.999.
	Beta1, Beta2 float64
	// Epsilon (RMSProp, Adam) is finite and > 0; default 1e-8.
	Epsilon float32
	// AMSGrad (Adam) keeps the maximum of v and divides by it
	// (MPS's maximumVelocityVector encode; PyTorch's amsgrad).
	AMSGrad bool
	// TimeStep (Adam's t) is the number of updates already taken, >= 0:
	// the first update uses t = TimeStep+1. Default 0.
	TimeStep int
	// Form: MPS's arithmetic or PyTorch's (OptimizerForm). Default MPS.
	Form OptimizerForm
}

// NewOptimizerDescriptor returns the descriptor of an optimizer of type t
// with learning rate lr and every other property at MPS's default:
// gradient rescale 1, no clipping, no regularization, momentum 0 without
// Nesterov (SGD), decay 0.9 (RMSProp), beta1 0.9, beta2 0.999 (Adam),
// epsilon 1e-8, time step 0, MPS form.
func NewOptimizerDescriptor(t OptimizerType, lr float32) OptimizerDescriptor {
	return OptimizerDescriptor{Type: t, LearningRate: lr, GradientRescale: 1, Decay: 0.9, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}
}

// ParseOptimizer returns the descriptor that `vkmps graph train`'s flags
// name, in PyTorch's form and with PyTorch's defaults so that a run matches
// torch.optim step by step:
//
//	sgd        SGD with momentum (0 = plain; torch.optim.SGD(lr, momentum))
//	momentum   SGD with momentum (momentum 0 means 0.9)
//	nesterov   SGD with Nesterov momentum (momentum 0 means 0.9)
//	rmsprop    RMSProp, decay 0.99 (torch.optim.RMSprop's alpha), eps 1e-8
//	adam       Adam, betas 0.9 and 0.999, eps 1e-8
//
// weightDecay s > 0 adds L2 regularization with scale s (PyTorch's
// weight_decay). Names are case-insensitive. The descriptor is validated.
func ParseOptimizer(name string, lr, momentum, weightDecay float32) (OptimizerDescriptor, error) {
	var d OptimizerDescriptor
	switch strings.ToLower(name) {
	case "sgd":
		d = NewOptimizerDescriptor(OptimizerStochasticGradientDescent, lr)
		d.MomentumScale = momentum
	case "momentum", "nesterov":
		d = NewOptimizerDescriptor(OptimizerStochasticGradientDescent, lr)
		d.MomentumScale = momentum
		if momentum == 0 {
			d.MomentumScale = 0.9
		}
		d.UseNesterovMomentum = strings.EqualFold(name, "nesterov")
	case "rmsprop":
		d = NewOptimizerDescriptor(OptimizerRMSProp, lr)
		d.Decay = 0.99
	case "adam":
		d = NewOptimizerDescriptor(OptimizerAdam, lr)
	default:
		return d, fmt.Errorf("%w: unknown optimizer %q (want sgd, momentum, nesterov, rmsprop or adam)", ErrGeometry, name)
	}
	d.Form = OptimizerFormPyTorch
	if weightDecay != 0 {
		d.RegularizationType, d.RegularizationScale = RegularizationL2, weightDecay
	}
	return d, d.Validate()
}

// label names the optimizer in errors.
func (d OptimizerDescriptor) label() string {
	switch d.Type {
	case OptimizerStochasticGradientDescent:
		return "OptimizerStochasticGradientDescent"
	case OptimizerRMSProp:
		return "OptimizerRMSProp"
	case OptimizerAdam:
		return "OptimizerAdam"
	}
	return "Optimizer"
}

// sgdMomentum reports whether an SGD optimizer keeps a momentum buffer.
func (d OptimizerDescriptor) sgdMomentum() bool {
	return d.Type == OptimizerStochasticGradientDescent && (d.MomentumScale != 0 || d.UseNesterovMomentum)
}

// Validate checks the descriptor, in this order: type, learning rate,
// rescale, clipping, regularization, then the rule's own values. Every
// error wraps ErrGeometry.
func (d OptimizerDescriptor) Validate() error {
	l := d.label()
	if d.Type < OptimizerStochasticGradientDescent || d.Type > OptimizerAdam {
		return fmt.Errorf("%w: unknown optimizer type %d", ErrGeometry, int(d.Type))
	}
	if err := checkLearningRate(l, d.LearningRate); err != nil {
		return err
	}
	if err := finite(l, "gradient rescale", d.GradientRescale); err != nil {
		return err
	}
	if d.GradientRescale == 0 {
		return fmt.Errorf("%w: %s: gradient rescale 0 would zero every gradient (NewOptimizerDescriptor sets MPS's 1)", ErrGeometry, l)
	}
	if d.ApplyGradientClipping {
		if err := finite(l, "gradient clip min", d.GradientClipMin); err != nil {
			return err
		}
		if err := finite(l, "gradient clip max", d.GradientClipMax); err != nil {
			return err
		}
		if d.GradientClipMin > d.GradientClipMax {
			return fmt.Errorf("%w: %s: gradient clip min %g > max %g", ErrGeometry, l, d.GradientClipMin, d.GradientClipMax)
		}
	}
	if d.RegularizationType < RegularizationNone || d.RegularizationType > RegularizationL2 {
		return fmt.Errorf("%w: %s: unknown regularization type %d", ErrGeometry, l, int(d.RegularizationType))
	}
	if err := checkRegularizationScale(l, d.RegularizationScale); err != nil {
		return err
	}
	if d.Form != OptimizerFormMPS && d.Form != OptimizerFormPyTorch {
		return fmt.Errorf("%w: %s: unknown form %d", ErrGeometry, l, int(d.Form))
	}
	if d.TimeStep < 0 || int64(d.TimeStep) > math.MaxUint32-1 {
		return fmt.Errorf("%w: %s: time step %d outside [0, 2^32-1)", ErrGeometry, l, d.TimeStep)
	}
	unit := func(what string, v float64) error {
		if !(v >= 0 && v < 1) { // NaN fails too
			return fmt.Errorf("%w: %s: %s %v outside [0, 1)", ErrGeometry, l, what, v)
		}
		return nil
	}
	eps := func() error {
		if err := finite(l, "epsilon", d.Epsilon); err != nil {
			return err
		}
		if d.Epsilon <= 0 {
			return fmt.Errorf("%w: %s: epsilon %g <= 0", ErrGeometry, l, d.Epsilon)
		}
		return nil
	}
	switch d.Type {
	case OptimizerStochasticGradientDescent:
		if err := checkMomentumScale(l, d.MomentumScale); err != nil {
			return err
		}
		if d.UseNesterovMomentum && d.MomentumScale == 0 {
			return fmt.Errorf("%w: %s: Nesterov momentum needs a momentum scale > 0", ErrGeometry, l)
		}
	case OptimizerRMSProp:
		if err := unit("decay", d.Decay); err != nil {
			return err
		}
		return eps()
	case OptimizerAdam:
		if err := unit("beta1", d.Beta1); err != nil {
			return err
		}
		if err := unit("beta2", d.Beta2); err != nil {
			return err
		}
		return eps()
	}
	return nil
}

func checkLearningRate(label string, lr float32) error {
	if err := finite(label, "learning rate", lr); err != nil {
		return err
	}
	if lr < 0 {
		return fmt.Errorf("%w: %s: learning rate %g < 0", ErrGeometry, label, lr)
	}
	return nil
}

func checkMomentumScale(label string, mu float32) error {
	if !(mu >= 0 && mu < 1) {
		return fmt.Errorf("%w: %s: momentum scale %v outside [0, 1)", ErrGeometry, label, mu)
	}
	return nil
}

func checkRegularizationScale(label string, s float32) error {
	if err := finite(label, "regularization scale", s); err != nil {
		return err
	}
	if s < 0 {
		return fmt.Errorf("%w: %s: regularization scale %g < 0", ErrGeometry, label, s)
	}
	return nil
}

// Optimizer updates trainable parameters on the GPU (MPSNNOptimizer and its
// subclasses, chosen by the descriptor's Type): one Optimizer per training
// run, one OptimizerState per parameter image (weights, bias, gamma, beta,
// PReLU slopes), each parameter and its gradient a float32 image of one
// shape.
//
// # Training steps and replays
//
// A training step records, in its one command buffer, EncodeStep once and
// then Encode for every parameter. EncodeStep advances the time step t on
// the GPU (t lives in a small host-visible buffer the GPU increments) and
// fixes this step's coefficients (the learning rate, Adam's bias
// corrections) in a device buffer that every Encode of the step reads.
// Committing the same command buffer again therefore takes the next step,
// t+1, with no re-recording and no host work. Encode refuses a command
// buffer into which EncodeStep has not been recorded (ErrState).
//
// SetLearningRate, SetMomentumScale and SetRegularizationScale write the
// host-visible buffer: call them between replays (after Wait) to follow a
// schedule; the next EncodeStep to execute reads them. SetTimeStep and
// TimeStep set and read t (MPS's timeStep). Every parameter of the
// optimizer shares t, as in MPS, where timeStep is the optimizer's.
//
// Encoding allocates nothing once the pipelines exist (after the first
// EncodeStep and Encode). An Optimizer is used by one goroutine at a time.
// Close releases its buffers; it is safe twice.
type Optimizer struct {
	dev   *vk.Device
	desc  OptimizerDescriptor
	label string
	local int

	hyper *vk.Buffer // host-visible: lr, momentum, regularization scale, t
	coef  *vk.Buffer // device: this step's coefficients

	stepPipe, updatePipe *vk.Pipeline
	stepCB               *vk.CommandBuffer // the last command buffer EncodeStep recorded into
	push                 optimizerPush
	binds                [6]vk.BufferRange
	closed               atomic.Bool
}

// optimizerPush is glsl/optimizer.comp's push-constant block.
type optimizerPush struct {
	Count, GradBase, ParamBase, MomBase, VelBase, VMaxBase uint32
}

// Hyperparameter buffer layout (glsl/optimizer_step.comp).
const (
	optHyperLR       = 0
	optHyperMomentum = 4
	optHyperReg      = 8
	optHyperStep     = 12
	optHyperSize     = 16
	optCoefSize      = 16
)

// NewOptimizer makes an optimizer on dev from a validated descriptor.
func NewOptimizer(dev *vk.Device, d OptimizerDescriptor) (*Optimizer, error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: %s: nil device", ErrDevice, d.label())
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	o := &Optimizer{dev: dev, desc: d, label: d.label(), local: workgroup(dev.Limits())}
	var err error
	if o.hyper, err = dev.NewHostBuffer(optHyperSize, o.label+" hyperparameters"); err != nil {
		return nil, err
	}
	if o.coef, err = dev.NewBuffer(optCoefSize, o.label+" coefficients"); err != nil {
		o.hyper.Close()
		return nil, err
	}
	var h [optHyperSize]byte
	binary.LittleEndian.PutUint32(h[optHyperLR:], math.Float32bits(d.LearningRate))
	binary.LittleEndian.PutUint32(h[optHyperMomentum:], math.Float32bits(d.MomentumScale))
	binary.LittleEndian.PutUint32(h[optHyperReg:], math.Float32bits(d.RegularizationScale))
	binary.LittleEndian.PutUint32(h[optHyperStep:], uint32(d.TimeStep))
	if err := o.hyper.Write(context.Background(), 0, h[:]); err != nil {
		o.Close()
		return nil, err
	}
	return o, nil
}

// Descriptor returns the optimizer's configuration, with the learning
// rate, momentum and regularization scales last set.
func (o *Optimizer) Descriptor() OptimizerDescriptor { return o.desc }

// Device returns the optimizer's device.
func (o *Optimizer) Device() *vk.Device { return o.dev }

// Close releases the optimizer's buffers. States made by it stay usable
// for reading but cannot be encoded any more. Safe twice.
func (o *Optimizer) Close() error {
	if o == nil || o.closed.Swap(true) {
		return nil
	}
	var err error
	for _, b := range []*vk.Buffer{o.hyper, o.coef} {
		if b != nil {
			if e := b.Close(); e != nil && err == nil {
				err = e
			}
		}
	}
	return err
}

func (o *Optimizer) usable() error {
	if o == nil || o.dev == nil {
		return fmt.Errorf("%w: optimizer not made by NewOptimizer", ErrDevice)
	}
	if o.closed.Load() {
		return fmt.Errorf("%w: %s", ErrClosed, o.label)
	}
	return nil
}

func (o *Optimizer) writeHyper(ctx context.Context, off uint64, bits uint32) error {
	if err := o.usable(); err != nil {
		return err
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], bits)
	return o.hyper.Write(ctx, off, b[:])
}

// SetLearningRate sets the learning rate (finite, >= 0) that the next
// EncodeStep to execute uses (MPS's setLearningRate:). It waits for
// submitted work that reads the optimizer's hyperparameters.
func (o *Optimizer) SetLearningRate(ctx context.Context, lr float32) error {
	if err := checkLearningRate(o.label, lr); err != nil {
		return err
	}
	if err := o.writeHyper(ctx, optHyperLR, math.Float32bits(lr)); err != nil {
		return err
	}
	o.desc.LearningRate = lr
	return nil
}

// LearningRate returns the learning rate last set.
func (o *Optimizer) LearningRate() float32 { return o.desc.LearningRate }

// SetMomentumScale sets SGD's momentum scale (in [0, 1)) for the next
// steps, like SetLearningRate. An optimizer made without momentum keeps
// none: setting a scale on it is an ErrGeometry.
func (o *Optimizer) SetMomentumScale(ctx context.Context, mu float32) error {
	if err := checkMomentumScale(o.label, mu); err != nil {
		return err
	}
	if !o.desc.sgdMomentum() {
		return fmt.Errorf("%w: %s: made without momentum, it keeps no momentum to scale", ErrGeometry, o.label)
	}
	if err := o.writeHyper(ctx, optHyperMomentum, math.Float32bits(mu)); err != nil {
		return err
	}
	o.desc.MomentumScale = mu
	return nil
}

// SetRegularizationScale sets the regularization scale (finite, >= 0)
// for the next steps, like SetLearningRate.
func (o *Optimizer) SetRegularizationScale(ctx context.Context, s float32) error {
	if err := checkRegularizationScale(o.label, s); err != nil {
		return err
	}
	if err := o.writeHyper(ctx, optHyperReg, math.Float32bits(s)); err != nil {
		return err
	}
	o.desc.RegularizationScale = s
	return nil
}

// SetTimeStep sets the number of updates taken (MPS's timeStep): the next
// EncodeStep to execute uses t+1.
func (o *Optimizer) SetTimeStep(ctx context.Context, t int) error {
	if t < 0 || int64(t) > math.MaxUint32-1 {
		return fmt.Errorf("%w: %s: time step %d outside [0, 2^32-1)", ErrGeometry, o.label, t)
	}
	return o.writeHyper(ctx, optHyperStep, uint32(t))
}

// TimeStep returns the number of steps taken: the descriptor's TimeStep
// plus one per executed EncodeStep (or as last set). It waits for
// submitted work that uses the optimizer's hyperparameters.
func (o *Optimizer) TimeStep(ctx context.Context) (int, error) {
	if err := o.usable(); err != nil {
		return 0, err
	}
	var b [4]byte
	if err := o.hyper.Read(ctx, optHyperStep, b[:]); err != nil {
		return 0, err
	}
	return int(binary.LittleEndian.Uint32(b[:])), nil
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// f32bits returns float32(v)'s bits: float64 hyperparameters reach the
// shaders as float32, (1 - beta) computed in float64 first.
func f32bits(v float64) uint32 { return math.Float32bits(float32(v)) }

func (o *Optimizer) pipelines() error {
	d := o.desc
	if o.stepPipe == nil {
		p, err := pipeline(o.dev, spirv.OptimizerStep, map[string]uint32{
			"TYPE": uint32(d.Type), "FORM": uint32(d.Form),
			"ONE_MINUS_BETA1": f32bits(1 - d.Beta1), "ONE_MINUS_BETA2": f32bits(1 - d.Beta2),
		})
		if err != nil {
			return fmt.Errorf("%s: %w", o.label, err)
		}
		o.stepPipe = p
	}
	if o.updatePipe == nil {
		p, err := pipeline(o.dev, spirv.Optimizer, map[string]uint32{
			"local_size_x": uint32(o.local), "TYPE": uint32(d.Type),
			"MOMENTUM": b2u(d.sgdMomentum()), "NESTEROV": b2u(d.UseNesterovMomentum), "AMSGRAD": b2u(d.AMSGrad),
			"FORM": uint32(d.Form), "CLIP": b2u(d.ApplyGradientClipping), "REG": uint32(d.RegularizationType),
			"CLIP_MIN": math.Float32bits(d.GradientClipMin), "CLIP_MAX": math.Float32bits(d.GradientClipMax),
			"RESCALE": math.Float32bits(d.GradientRescale),
			"DECAY":   f32bits(d.Decay), "ONE_MINUS_DECAY": f32bits(1 - d.Decay),
			"BETA1": f32bits(d.Beta1), "ONE_MINUS_BETA1": f32bits(1 - d.Beta1),
			"BETA2": f32bits(d.Beta2), "ONE_MINUS_BETA2": f32bits(1 - d.Beta2),
			"EPSILON": math.Float32bits(d.Epsilon),
		})
		if err != nil {
			return fmt.Errorf("%s: %w", o.label, err)
		}
		o.updatePipe = p
	}
	return nil
}

// EncodeStep records the start of a training step: t = t+1 and this
// step's coefficients from the learning rate and scales last set. Record
// it once per training step, before that step's Encode calls.
func (o *Optimizer) EncodeStep(cb *vk.CommandBuffer) error {
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, o.label)
	}
	if err := o.usable(); err != nil {
		return err
	}
	if err := o.pipelines(); err != nil {
		return err
	}
	o.binds[0], o.binds[1] = o.hyper.Whole(), o.coef.Whole()
	if err := cb.Dispatch(o.stepPipe, o.binds[:2], nil, [3]uint32{1, 1, 1}); err != nil {
		return fmt.Errorf("%s: %w", o.label, err)
	}
	o.stepCB = cb
	return nil
}

// Encode records the update of param from grad and the parameter's state:
// param, and the state's moments, change in place. param and grad are
// float32 images of one shape (whole images, not channel views) that share
// no storage; state was made by this optimizer for param's shape.
// EncodeStep must have been recorded into cb first.
func (o *Optimizer) Encode(cb *vk.CommandBuffer, param, grad *Image, state *OptimizerState) error {
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, o.label)
	}
	if err := o.usable(); err != nil {
		return err
	}
	if err := o.checkParam(param, grad); err != nil {
		return err
	}
	if err := state.check(o, param); err != nil {
		return err
	}
	if o.stepCB != cb {
		return fmt.Errorf("%w: %s: EncodeStep was not recorded into this command buffer before the update of %s", ErrState, o.label, param)
	}
	lim := o.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	maxCount := int((lim.MaxStorageBufferRange - align) / 4)
	total := param.Len()
	push := unsafe.Slice((*byte)(unsafe.Pointer(&o.push)), unsafe.Sizeof(o.push))
	for done := 0; done < total; done += maxCount {
		n := min(maxCount, total-done)
		off := uint64(done) * 4
		o.binds[0] = o.coef.Whole()
		o.binds[1], o.push.GradBase = bindRun(grad.buf, align, grad.base*4+off, n)
		o.binds[2], o.push.ParamBase = bindRun(param.buf, align, param.base*4+off, n)
		// Slots a rule does not use bind the parameter again: a range the
		// dispatch writes anyway, so no extra barrier is needed.
		o.binds[3], o.push.MomBase = o.binds[2], o.push.ParamBase
		o.binds[4], o.push.VelBase = o.binds[2], o.push.ParamBase
		o.binds[5], o.push.VMaxBase = o.binds[2], o.push.ParamBase
		if m := state.momentum; m != nil {
			o.binds[3], o.push.MomBase = bindRun(m.buf, align, m.base*4+off, n)
		}
		if v := state.velocity; v != nil {
			o.binds[4], o.push.VelBase = bindRun(v.buf, align, v.base*4+off, n)
		}
		if x := state.maxVelocity; x != nil {
			o.binds[5], o.push.VMaxBase = bindRun(x.buf, align, x.base*4+off, n)
		}
		o.push.Count = uint32(n)
		g := min((n+o.local-1)/o.local, int(min(lim.MaxComputeWorkGroupCount[0], 65535)))
		if err := cb.Dispatch(o.updatePipe, o.binds[:], push, [3]uint32{uint32(g), 1, 1}); err != nil {
			return fmt.Errorf("%s: %w", o.label, err)
		}
	}
	return nil
}

// checkParam validates a parameter and its gradient: open images on the
// optimizer's device, float32, one shape, whole, no shared storage.
func (o *Optimizer) checkParam(param, grad *Image) error {
	roles := []string{"parameter", "gradient"}
	if err := checkImages(o.dev, o.label, roles, param, grad); err != nil {
		return err
	}
	if param.format != Float32 {
		return fmt.Errorf("%w: %s: parameter %s is %v; parameters (master weights) are float32", ErrFormat, o.label, param, param.format)
	}
	if grad.format != Float32 {
		return fmt.Errorf("%w: %s: gradient %s is %v; gradients of parameters are float32", ErrFormat, o.label, grad, grad.format)
	}
	if err := sameShape(o.label, param, grad); err != nil {
		return err
	}
	for i, im := range []*Image{param, grad} {
		if !im.contiguous() {
			return fmt.Errorf("%w: %s: %s %s is a channel view; the optimizer updates whole images", ErrShape, o.label, roles[i], im)
		}
	}
	if overlaps(param, grad) {
		return fmt.Errorf("%w: %s: parameter %s and gradient %s share storage", ErrAlias, o.label, param, grad)
	}
	return nil
}

// OptimizerState is one parameter's optimizer state (MPS's momentum,
// sum-of-squares, velocity and maximum-velocity vectors): float32 images of
// the parameter's shape, zero when made. Which exist depends on the
// optimizer: Momentum for SGD with momentum and Adam, Velocity for
// RMSProp (its sum of squares s) and Adam (v), MaximumVelocity for Adam
// with AMSGrad. Read or write them (checkpoints) between command buffers.
// Close releases them; it is safe twice.
type OptimizerState struct {
	opt                             *Optimizer
	n, c, h, w                      int
	momentum, velocity, maxVelocity *Image
	closed                          atomic.Bool
}

// NewState makes the zeroed state of one parameter shaped like param. It
// records the zeroing in a command buffer of its own and waits for it.
func (o *Optimizer) NewState(ctx context.Context, param *Image) (*OptimizerState, error) {
	if err := o.usable(); err != nil {
		return nil, err
	}
	if err := checkImages(o.dev, o.label, []string{"parameter"}, param); err != nil {
		return nil, err
	}
	if param.format != Float32 {
		return nil, fmt.Errorf("%w: %s: parameter %s is %v; parameters (master weights) are float32", ErrFormat, o.label, param, param.format)
	}
	s := &OptimizerState{opt: o, n: param.n, c: param.c, h: param.h, w: param.w}
	d := ImageDescriptor{N: param.n, C: param.c, H: param.h, W: param.w}
	mk := func(what string) (*Image, error) {
		d.Label = param.label + " " + what
		return NewImage(o.dev, d)
	}
	var err error
	if o.desc.sgdMomentum() || o.desc.Type == OptimizerAdam {
		if s.momentum, err = mk("momentum"); err != nil {
			return nil, err
		}
	}
	if o.desc.Type != OptimizerStochasticGradientDescent {
		what := "velocity"
		if o.desc.Type == OptimizerRMSProp {
			what = "sum of squares"
		}
		if s.velocity, err = mk(what); err != nil {
			s.Close()
			return nil, err
		}
	}
	if o.desc.Type == OptimizerAdam && o.desc.AMSGrad {
		if s.maxVelocity, err = mk("maximum velocity"); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.Reset(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// images returns the state's images that exist.
func (s *OptimizerState) images() []*Image {
	var out []*Image
	for _, im := range []*Image{s.momentum, s.velocity, s.maxVelocity} {
		if im != nil {
			out = append(out, im)
		}
	}
	return out
}

// Reset zeroes the state's images (a fresh start for this parameter) in a
// command buffer of its own and waits for it.
func (s *OptimizerState) Reset(ctx context.Context) error {
	if s == nil || s.closed.Load() {
		return fmt.Errorf("%w: optimizer state", ErrClosed)
	}
	ims := s.images()
	if len(ims) == 0 {
		return nil
	}
	cb, err := s.opt.dev.NewCommandBuffer(vk.WithLabel("optimizer state zeroing"))
	if err != nil {
		return err
	}
	defer cb.Close()
	for _, im := range ims {
		if err := Fill(cb, im, 0); err != nil {
			return err
		}
	}
	if err := cb.Commit(); err != nil {
		return err
	}
	return cb.Wait(ctx)
}

// Momentum returns SGD's or Adam's momentum m, or nil.
func (s *OptimizerState) Momentum() *Image { return s.momentum }

// Velocity returns Adam's velocity v or RMSProp's sum of squares s, or nil.
func (s *OptimizerState) Velocity() *Image { return s.velocity }

// MaximumVelocity returns AMSGrad's maximum velocity, or nil.
func (s *OptimizerState) MaximumVelocity() *Image { return s.maxVelocity }

// Close releases the state's images; safe twice.
func (s *OptimizerState) Close() error {
	if s == nil || s.closed.Swap(true) {
		return nil
	}
	var err error
	for _, im := range s.images() {
		if e := im.Close(); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// check validates a state for an update of param by o.
func (s *OptimizerState) check(o *Optimizer, param *Image) error {
	if s == nil {
		return fmt.Errorf("%w: %s: nil optimizer state for %s", ErrState, o.label, param)
	}
	if s.closed.Load() {
		return fmt.Errorf("%w: %s: optimizer state of %s", ErrClosed, o.label, param)
	}
	if s.opt != o {
		return fmt.Errorf("%w: %s: the state given for %s was made by another optimizer", ErrState, o.label, param)
	}
	if s.n != param.n || s.c != param.c || s.h != param.h || s.w != param.w {
		return fmt.Errorf("%w: %s: state of a %dx%dx%dx%d parameter given for %s", ErrState, o.label, s.n, s.c, s.h, s.w, param)
	}
	return nil
}
