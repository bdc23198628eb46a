package graph

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/vkmps/vkmps/ops"
)

// param is what the graph knows of a parameter image.
type param struct {
	desc      ops.ImageDescriptor
	init      Init
	trainable bool
	frozen    bool
	owner     *Node // the node that reads it, for messages; nil when shared
	// shape is the parameter's shape in PyTorch's layout (a bias is (O,),
	// a linear layer's weights (O, K)): the shape its .npy files have.
	shape []int
}

// InitKind says how a parameter's first value is made.
type InitKind int

const (
	// InitZeros: every value 0.
	InitZeros InitKind = iota
	// InitOnes: every value 1.
	InitOnes
	// InitConstant: every value Init.Value.
	InitConstant
	// InitUniform: uniform in [-Init.Bound, Init.Bound).
	InitUniform
	// InitNormal: normal with mean 0 and standard deviation Init.Std.
	InitNormal
	// InitKaimingUniform is PyTorch's default for Conv2d, ConvTranspose2d and
	// Linear weights and biases (kaiming_uniform_ with a = sqrt(5), and the
	// bias rule): uniform in [-1/sqrt(FanIn), 1/sqrt(FanIn)).
	InitKaimingUniform
	// InitHeNormal: He (Kaiming) normal for ReLU networks, std =
	// sqrt(2/FanOut) (torchvision's ResNet: mode fan_out).
	InitHeNormal
	// InitGlorotUniform: Glorot (Xavier) uniform, bound =
	// sqrt(6/(FanIn+FanOut)).
	InitGlorotUniform
)

var initNames = map[InitKind]string{InitZeros: "zeros", InitOnes: "ones", InitConstant: "constant", InitUniform: "uniform",
	InitNormal: "normal", InitKaimingUniform: "kaiming_uniform", InitHeNormal: "he_normal", InitGlorotUniform: "glorot_uniform"}

func (k InitKind) String() string {
	if s, ok := initNames[k]; ok {
		return s
	}
	return fmt.Sprintf("InitKind(%d)", int(k))
}

// ParseInitKind returns the initializer called name ("zeros", "ones",
// "kaiming_uniform", "he_normal", "glorot_uniform", "uniform", "normal",
// "constant").
func ParseInitKind(name string) (InitKind, error) {
	for k, s := range initNames {
		if s == name {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown initializer %q (want zeros, ones, constant, uniform, normal, kaiming_uniform, he_normal or glorot_uniform)", ErrGraph, name)
}

// Init is a parameter's first value: Data when it is set (N*C*H*W values,
// NCHW, in the parameter's PyTorch layout), else values made by Kind from
// a generator seeded with Seed and the parameter's name, so that a graph
// built twice starts from the same values.
type Init struct {
	Data  []float32
	Kind  InitKind
	Value float64 // InitConstant
	Bound float64 // InitUniform
	Std   float64 // InitNormal
	// FanIn and FanOut are the layer's fans (for a convolution with
	// weights (O, I/g, KH, KW): FanIn = I/g*KH*KW, FanOut = O*KH*KW).
	FanIn, FanOut int
	Seed          uint64
}

// Values returns the n values of the parameter called name.
func (in Init) Values(name string, n int) ([]float32, error) {
	if in.Data != nil {
		if len(in.Data) != n {
			return nil, fmt.Errorf("%w: parameter %q: %d values given, its shape holds %d", ErrShape, name, len(in.Data), n)
		}
		return in.Data, nil
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	r := rand.New(rand.NewPCG(in.Seed, h.Sum64()))
	out := make([]float32, n)
	fan := func(f int) (float64, error) {
		if f < 1 {
			return 0, fmt.Errorf("%w: parameter %q: %v needs a fan > 0", ErrGraph, name, in.Kind)
		}
		return float64(f), nil
	}
	uniform := func(b float64) {
		for i := range out {
			out[i] = float32((2*r.Float64() - 1) * b)
		}
	}
	switch in.Kind {
	case InitZeros:
	case InitOnes:
		for i := range out {
			out[i] = 1
		}
	case InitConstant:
		for i := range out {
			out[i] = float32(in.Value)
		}
	case InitUniform:
		uniform(in.Bound)
	case InitNormal:
		for i := range out {
			out[i] = float32(r.NormFloat64() * in.Std)
		}
	case InitKaimingUniform:
		f, err := fan(in.FanIn)
		if err != nil {
			return nil, err
		}
		uniform(1 / math.Sqrt(f))
	case InitHeNormal:
		f, err := fan(in.FanOut)
		if err != nil {
			return nil, err
		}
		std := math.Sqrt(2 / f)
		for i := range out {
			out[i] = float32(r.NormFloat64() * std)
		}
	case InitGlorotUniform:
		f, err := fan(in.FanIn + in.FanOut)
		if err != nil {
			return nil, err
		}
		uniform(math.Sqrt(6 / f))
	default:
		return nil, fmt.Errorf("%w: parameter %q: unknown initializer %d", ErrGraph, name, int(in.Kind))
	}
	return out, nil
}

// Parameter adds a parameter image of shape d that the graph owns: a
// compiled graph keeps it on the device from its first run on, nodes read
// it like any image, and when trainable, Training derives its gradient and
// an optimizer updates it. Parameters are float32 whatever the graph's
// image format. Layer constructors (Convolution, BatchNormalization, ...)
// make their own, named "NODE.weights", "NODE.bias", "NODE.gamma", ...
func (g *Graph) Parameter(name string, d ops.ImageDescriptor, init Init, trainable bool) (*Image, error) {
	if err := g.checkName(name); err != nil {
		return nil, err
	}
	if d.N < 1 || d.C < 1 || d.H < 1 || d.W < 1 || tooLarge(d) {
		return nil, fmt.Errorf("%w: parameter %q: shape %s", ErrShape, name, descString(d))
	}
	if init.Data != nil && len(init.Data) != d.N*d.C*d.H*d.W {
		return nil, fmt.Errorf("%w: parameter %q: %d values given for shape %s", ErrShape, name, len(init.Data), descString(d))
	}
	d.Format, d.Label = ops.Float32, name
	im := g.newImage(name, nil)
	im.param = &param{desc: d, init: init, trainable: trainable}
	return im, nil
}

// Trainable reports whether the image is a parameter that takes a gradient
// (trainable and not frozen).
func (im *Image) Trainable() bool { return im.param != nil && im.param.trainable && !im.param.frozen }

// Freeze stops (or, with false, resumes) training of a trainable
// parameter: Training derives no gradient for a frozen one and optimizers
// leave it unchanged.
func (im *Image) Freeze(frozen bool) error {
	if im.param == nil || !im.param.trainable {
		return fmt.Errorf("%w: %s is not a trainable parameter", ErrGraph, im)
	}
	im.param.frozen = frozen
	return nil
}

// ParameterShape returns a parameter's shape; false for other images.
func (im *Image) ParameterShape() (ops.ImageDescriptor, bool) { return im.paramDesc() }

// InitialValues returns a parameter's first values (its Init made
// concrete); an error for other images.
func (im *Image) InitialValues() ([]float32, error) {
	if im.param == nil {
		return nil, fmt.Errorf("%w: %s is not a parameter", ErrGraph, im)
	}
	d := im.param.desc
	return im.param.init.Values(im.name, d.N*d.C*d.H*d.W)
}

// SetInitialValues replaces a parameter's first values with data (N*C*H*W
// values in its layout): a graph loaded from a file, or a checkpoint.
func (im *Image) SetInitialValues(data []float32) error {
	if im.param == nil {
		return fmt.Errorf("%w: %s is not a parameter", ErrGraph, im)
	}
	d := im.param.desc
	if len(data) != d.N*d.C*d.H*d.W {
		return fmt.Errorf("%w: parameter %q: %d values given for shape %s", ErrShape, im.name, len(data), descString(d))
	}
	im.param.init = Init{Data: data}
	return nil
}

// SeedParameters sets the seed of every parameter that starts from an
// initializer (not from given values), so that one graph file gives
// different, reproducible starting points.
func (g *Graph) SeedParameters(seed uint64) {
	for _, im := range g.images {
		if im.param != nil && im.param.init.Data == nil {
			im.param.init.Seed = seed
		}
	}
}
