package ops

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// NeuronType is an activation function (MPSCNNNeuronType; the values are
// MPS's). With a, b, c the descriptor's parameters and x the input:
//
//	NeuronNone         x
//	NeuronReLU         x >= 0 ? x : a*x                 a = 0
//	NeuronLinear       a*x + b                          a = 1, b = 0
//	NeuronSigmoid      1 / (1 + exp(-x))
//	NeuronHardSigmoid  clamp(a*x + b, 0, 1)             a = 0.2, b = 0.5
//	NeuronTanH         a * tanh(b*x)                    a = 1, b = 1
//	NeuronAbsolute     |x|
//	NeuronSoftPlus     a * log(1 + exp(b*x))            a = 1, b = 1
//	NeuronSoftSign     x / (1 + |x|)
//	NeuronELU          x >= 0 ? x : a*(exp(x) - 1)      a = 1
//	NeuronPReLU        x >= 0 ? x : a[c]*x              a per feature channel
//	NeuronReLUN        min(x >= 0 ? x : a*x, b)         a = 0, b = 6
//	NeuronPower        (a*x + b)^c                      a = 1, b = 0, c = 1
//	NeuronExponential  c^(a*x + b), c = -1 means e      a = 1, b = 0, c = -1
//	NeuronLogarithm    log_c(a*x + b), c = -1 means e   a = 1, b = 0, c = -1
//	NeuronGeLU         0.5 * x * (1 + erf(x / sqrt 2))
//
// The defaults are MPS's where MPS states one (ReLU, hard sigmoid, tanh,
// softplus, ELU, ReLUN) and otherwise the ones that make the neuron its
// plain mathematical function. Derivatives take MPS's side at kinks: ReLU,
// ELU and PReLU have slope 1 at x = 0 (PyTorch's ReLU has 0 there); hard
// sigmoid and ReLUN have slope 0 where they clamp, the bounds included;
// |x| has slope 0 at 0. A power with a negative base and an integer
// exponent keeps the sign of the real power, a fractional one gives NaN.
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
	numNeuronTypes
)

// neuronNames are the graph JSON and CLI names (TRAINING.md).
var neuronNames = [numNeuronTypes]string{"none", "relu", "linear", "sigmoid", "hard_sigmoid", "tanh", "absolute",
	"softplus", "softsign", "elu", "prelu", "relun", "power", "exponential", "logarithm", "gelu"}

// String returns the neuron's graph JSON name ("relu", "hard_sigmoid", ...).
func (t NeuronType) String() string {
	if t >= 0 && t < numNeuronTypes {
		return neuronNames[t]
	}
	return fmt.Sprintf("NeuronType(%d)", int(t))
}

// Valid reports whether t is a known neuron type.
func (t NeuronType) Valid() bool { return t >= 0 && t < numNeuronTypes }

// ParseNeuronType returns the neuron type of a graph JSON name, case
// insensitive ("hard-sigmoid" is taken for "hard_sigmoid").
func ParseNeuronType(name string) (NeuronType, error) {
	n := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	for t, s := range neuronNames {
		if s == n {
			return NeuronType(t), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown neuron type %q (want one of %s)", ErrGeometry, name, strings.Join(neuronNames[:], ", "))
}

// NeuronDescriptor configures a neuron (MPSNNNeuronDescriptor): its type
// and parameters a, b, c (see NeuronType for each type's formula), and for
// NeuronPReLU one slope per feature channel in PReLU (a is then unused).
// The zero value is NeuronNone, the identity. NewNeuronDescriptor gives a
// type's defaults.
type NeuronDescriptor struct {
	Type    NeuronType
	A, B, C float32
	PReLU   []float32
}

// NewNeuronDescriptor returns t with its default parameters (NeuronType).
func NewNeuronDescriptor(t NeuronType) NeuronDescriptor {
	d := NeuronDescriptor{Type: t}
	switch t {
	case NeuronLinear, NeuronTanH, NeuronSoftPlus, NeuronELU:
		d.A, d.B = 1, 0
		if t == NeuronTanH || t == NeuronSoftPlus {
			d.B = 1
		}
	case NeuronHardSigmoid:
		d.A, d.B = 0.2, 0.5
	case NeuronReLUN:
		d.A, d.B = 0, 6
	case NeuronPower:
		d.A, d.B, d.C = 1, 0, 1
	case NeuronExponential, NeuronLogarithm:
		d.A, d.B, d.C = 1, 0, -1
	}
	return d
}

// IsIdentity reports whether the descriptor is NeuronNone.
func (d NeuronDescriptor) IsIdentity() bool { return d.Type == NeuronNone }

func (d NeuronDescriptor) String() string {
	switch d.Type {
	case NeuronNone, NeuronSigmoid, NeuronAbsolute, NeuronSoftSign, NeuronGeLU:
		return d.Type.String()
	case NeuronPReLU:
		return fmt.Sprintf("prelu(%d channels)", len(d.PReLU))
	}
	return fmt.Sprintf("%v(a=%g, b=%g, c=%g)", d.Type, d.A, d.B, d.C)
}

// Validate checks the descriptor for images of channels feature channels
// (channels <= 0 skips the PReLU length check): a known type, finite
// parameters, one PReLU slope per channel, and for the exponential and
// logarithm a base c that is -1 (e) or positive and not 1. label names the
// kernel or node in the error.
func (d NeuronDescriptor) Validate(label string, channels int) error {
	if !d.Type.Valid() {
		return fmt.Errorf("%w: %s: unknown neuron type %d", ErrGeometry, label, int(d.Type))
	}
	for _, p := range []struct {
		name string
		v    float32
	}{{"neuron a", d.A}, {"neuron b", d.B}, {"neuron c", d.C}} {
		if err := finite(label, p.name, p.v); err != nil {
			return err
		}
	}
	switch d.Type {
	case NeuronPReLU:
		if len(d.PReLU) == 0 {
			return fmt.Errorf("%w: %s: prelu needs one slope per feature channel, got none", ErrGeometry, label)
		}
		if channels > 0 && len(d.PReLU) != channels {
			return fmt.Errorf("%w: %s: prelu has %d slopes for %d feature channels", ErrShape, label, len(d.PReLU), channels)
		}
		for i, a := range d.PReLU {
			if err := finite(label, fmt.Sprintf("prelu slope %d", i), a); err != nil {
				return err
			}
		}
	case NeuronExponential, NeuronLogarithm:
		if d.C != -1 && (d.C <= 0 || d.C == 1) {
			return fmt.Errorf("%w: %s: %v base c = %g: want -1 (e) or a positive number other than 1", ErrGeometry, label, d.Type, d.C)
		}
	default:
		if len(d.PReLU) != 0 {
			return fmt.Errorf("%w: %s: prelu slopes given for a %v neuron", ErrGeometry, label, d.Type)
		}
	}
	return nil
}

// specConstants sets the neuron's specialization constants (glsl/neuron.glsl,
// IDs 20..23) in named, which pipeline passes to the shader.
func (d NeuronDescriptor) specConstants(named map[string]uint32) {
	named["NEURON"] = uint32(d.Type)
	named["NEURON_A"] = math.Float32bits(d.A)
	named["NEURON_B"] = math.Float32bits(d.B)
	named["NEURON_C"] = math.Float32bits(d.C)
}

// validateKernel is Validate for a Neuron or NeuronGradient kernel, whose
// PReLU slopes may come from an image instead of the list: an empty list
// is allowed there.
func (d NeuronDescriptor) validateKernel(label string, channels int) error {
	if d.Type == NeuronPReLU && len(d.PReLU) == 0 {
		d.PReLU = []float32{0}
		channels = 0
	}
	return d.Validate(label, channels)
}

// ResultDescriptor returns the shape of a neuron's result for a source of
// shape src: src's (the neuron is element-wise), with its format. It needs
// no device; it checks src and the descriptor (a PReLU list, when given,
// must hold src.C slopes).
func (d NeuronDescriptor) ResultDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	if err := src.validate(); err != nil {
		return ImageDescriptor{}, err
	}
	if err := d.validateKernel("Neuron("+d.Type.String()+")", src.C); err != nil {
		return ImageDescriptor{}, err
	}
	return ImageDescriptor{N: src.N, C: src.C, H: src.H, W: src.W, Format: src.Format}, nil
}

// neuronKernel is what Neuron and NeuronGradient share: the descriptor,
// the PReLU slopes and the pipelines.
type neuronKernel struct {
	desc  NeuronDescriptor
	dev   *vk.Device
	label string
	local int
	own   *Image // the descriptor's PReLU list on the device
}

func newNeuronKernel(dev *vk.Device, d NeuronDescriptor, label string) (neuronKernel, error) {
	k := neuronKernel{desc: d, label: label + "(" + d.Type.String() + ")"}
	if dev == nil {
		return k, fmt.Errorf("%w: %s: nil device", ErrDevice, k.label)
	}
	if err := d.validateKernel(k.label, 0); err != nil {
		return k, err
	}
	k.dev, k.local = dev, workgroup(dev.Limits())
	for k.local&(k.local-1) != 0 { // a power of two: the slope reduction halves it
		k.local &= k.local - 1
	}
	k.desc.PReLU = append([]float32(nil), d.PReLU...)
	if d.Type == NeuronPReLU && len(d.PReLU) > 0 {
		im, err := NewImage(dev, ImageDescriptor{N: 1, C: len(d.PReLU), H: 1, W: 1, Label: k.label + " slopes"})
		if err != nil {
			return k, err
		}
		if err := im.Write(context.Background(), d.PReLU); err != nil {
			im.Close()
			return k, err
		}
		k.own = im
	}
	return k, nil
}

// Descriptor returns the kernel's neuron.
func (k *neuronKernel) Descriptor() NeuronDescriptor {
	d := k.desc
	d.PReLU = append([]float32(nil), d.PReLU...)
	return d
}

// Close releases the slopes the constructor uploaded (not Slopes); safe
// twice.
func (k *neuronKernel) Close() error {
	if k.own == nil {
		return nil
	}
	err := k.own.Close()
	k.own = nil
	return err
}

// slopes returns the range to bind for PReLU's slopes, given (the
// kernel's Slopes field) or from the descriptor, for images like src (for
// other neuron types: a word of src, bound but never read), and the
// element index of channel 0's slope in it; outputs must not overlap the
// slopes.
func (k *neuronKernel) slopes(given, src *Image, outputs ...*Image) (vk.BufferRange, uint32, error) {
	if k.desc.Type != NeuronPReLU {
		return src.buf.Range(0, min(src.buf.Size(), 4)), 0, nil
	}
	s := given
	if s == nil {
		s = k.own
	}
	if s == nil {
		return vk.BufferRange{}, 0, fmt.Errorf("%w: %s: no slopes: set Slopes or give the descriptor a PReLU list", ErrGeometry, k.label)
	}
	if err := checkImages(k.dev, k.label, []string{"slopes"}, s); err != nil {
		return vk.BufferRange{}, 0, err
	}
	if s.format != Float32 {
		return vk.BufferRange{}, 0, fmt.Errorf("%w: %s: slopes %s are %v; parameters are float32", ErrFormat, k.label, s, s.format)
	}
	if s.n != 1 || s.c != src.c || s.h != 1 || s.w != 1 {
		return vk.BufferRange{}, 0, fmt.Errorf("%w: %s: slopes %s for %s: want 1x%dx1x1, one slope per feature channel", ErrShape, k.label, s, src, src.c)
	}
	for _, o := range outputs {
		if overlaps(s, o) {
			return vk.BufferRange{}, 0, fmt.Errorf("%w: %s: %s shares storage with the slopes %s", ErrAlias, k.label, o, s)
		}
	}
	lim := k.dev.Limits()
	r, base := bindRun(s.buf, max(lim.MinStorageBufferOffsetAlignment, 4), s.base*4, s.c)
	return r, base, nil
}

// pipeline returns the pipeline of sh (its f16 variant for float16
// images) specialised for the neuron, cached in *slot.
func (k *neuronKernel) pipeline(slot **vk.Pipeline, sh *spirv.Shader, f Format) (*vk.Pipeline, error) {
	return k.pipelineSpec(slot, sh, f, nil)
}

// pipelineSpec is pipeline with the shader's further specialization
// constants extra.
func (k *neuronKernel) pipelineSpec(slot **vk.Pipeline, sh *spirv.Shader, f Format, extra map[string]uint32) (*vk.Pipeline, error) {
	if *slot != nil {
		return *slot, nil
	}
	s, err := build(sh, f == Float16)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.label, err)
	}
	named := map[string]uint32{"local_size_x": uint32(k.local)}
	for n, v := range extra {
		named[n] = v
	}
	k.desc.specConstants(named)
	p, err := pipeline(k.dev, s, named)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.label, err)
	}
	*slot = p
	return p, nil
}

// Neuron applies an activation function to every value of an image
// (MPSCNNNeuron): dst = f(src), f the descriptor's neuron (NeuronType
// gives each formula and default). The images are NCHW, float32 or
// float16 (computed in float32, rounded once when stored), of one shape
// and format; either may be a channel view. PReLU takes channel c's slope
// from Slopes, or from the descriptor's list. The kernel is memory-bound:
// it streams each image once, in quads where aligned.
type Neuron struct {
	neuronKernel
	// Slopes holds PReLU's slope of each feature channel as a 1×C×1×1
	// float32 image (PyTorch's PReLU weight, C the channels of the images
	// encoded), which an optimizer may update on the GPU between encodes.
	// When nil, the descriptor's PReLU list is used, which the constructor
	// uploaded once. Other neuron types ignore it.
	Slopes *Image
	pipes  [2]*vk.Pipeline // by format
}

// NewNeuron makes a neuron kernel. The descriptor is checked (a known
// type, finite parameters, a valid base); a PReLU list is uploaded to the
// device once (Close releases it). A PReLU descriptor without a list
// needs Slopes set before Encode.
func NewNeuron(dev *vk.Device, d NeuronDescriptor) (*Neuron, error) {
	k, err := newNeuronKernel(dev, d, "Neuron")
	if err != nil {
		return nil, err
	}
	return &Neuron{neuronKernel: k}, nil
}

type neuronPush struct {
	Count, SrcBase, DstBase, SlopeBase uint32
	Plane, Channels, Chan0, Vec4s      uint32
}

// Encode records dst = f(src). src and dst have one shape and format and
// share no storage.
func (k *Neuron) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	roles := [2]string{"source", "destination"}
	ims := [2]*Image{src, dst}
	if err := checkElementwise(cb, k.dev, k.label, roles[:], ims[:], 1); err != nil {
		return err
	}
	if err := sameShape(k.label, src, dst); err != nil {
		return err
	}
	sr, sbase, err := k.slopes(k.Slopes, src, dst)
	if err != nil {
		return err
	}
	pl, err := k.pipeline(&k.pipes[src.format], spirv.Neuron, src.format)
	if err != nil {
		return err
	}
	lim := k.dev.Limits()
	pc := neuronPush{SlopeBase: sbase, Plane: uint32(src.h * src.w), Channels: uint32(src.c)}
	push := pushBytes(&pc)
	var binds [3]vk.BufferRange
	binds[2] = sr
	return neuronRuns(lim, ims[:], func(r neuronRun) error {
		binds[0], binds[1] = r.ranges[0], r.ranges[1]
		pc.Count, pc.SrcBase, pc.DstBase, pc.Chan0 = uint32(r.count), r.bases[0], r.bases[1], uint32(r.chan0)
		items := r.count
		pc.Vec4s = 0
		if r.aligned {
			pc.Vec4s, items = 1, max(r.count/4, 1)
		}
		if err := cb.Dispatch(pl, binds[:], push, [3]uint32{neuronGroups(lim, k.local, items), 1, 1}); err != nil {
			return fmt.Errorf("%s: %w", k.label, err)
		}
		return nil
	})
}
