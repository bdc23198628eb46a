package graph

import (
	"encoding/json"
	"fmt"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// NeuronOp is an activation node (MPSCNNNeuronNode, JSON op "neuron");
// sources: the image, and for PReLU its slopes, the trainable parameter
// "NODE.a" (1×C×1×1).
type NeuronOp struct{ Desc ops.NeuronDescriptor }

func (NeuronOp) Name() string { return "neuron" }
func (o NeuronOp) arity() int {
	if o.Desc.Type == ops.NeuronPReLU {
		return 2
	}
	return 1
}

func (o NeuronOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	if o.Desc.Type == ops.NeuronPReLU && src[1].C != src[0].C {
		return nil, c.errorf(ErrShape, "prelu has %d slopes for %d feature channels", src[1].C, src[0].C)
	}
	return one(c.like(src[0]), nil)
}

func (o NeuronOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	out := make([]*Image, len(n.sources))
	var err error
	if wanted[0] {
		op, srcs := NeuronGradientOp{Desc: o.Desc}, sourceImages([]*Image{dy}, n.sources...)
		// Two contributions to dy (the result feeds two nodes, as a
		// residual block's output does): the gradient adds them itself
		// instead of after a sum node of their own. Not PReLU's, whose
		// slope gradient reads dy too.
		if len(n.sources) == 1 {
			if a, c, ok := b.g.absorbSum(dy); ok {
				op.SumDy, srcs = true, []*Image{a, c, n.sources[0]}
			}
		}
		if out[0], err = b.add(0, op, srcs...); err != nil {
			return nil, err
		}
	}
	if len(n.sources) > 1 && wanted[1] {
		if out[1], err = b.add(1, PReLUSlopeGradientOp{}, dy, n.sources[0]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (o NeuronOp) build(b *buildCtx) error {
	d := o.Desc
	d.PReLU = nil // the slopes are the parameter image
	k, err := ops.NewNeuron(b.dev, d)
	if err != nil {
		return err
	}
	b.closer(k)
	if len(b.src) > 1 {
		k.Slopes = b.src[1]
	}
	src, dst := b.src[0], b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) })
	return nil
}

// NeuronGradientOp is a neuron's gradient with respect to its source;
// sources: dy, the forward source, and for PReLU the slopes. With SumDy
// (Training's, where the neuron's result has two consumers) dy comes as
// its two contributions: sources dy, dy2 and the forward source, and the
// kernel adds them (ops.NeuronGradient.EncodeSum) where a sum node would.
type NeuronGradientOp struct {
	Desc  ops.NeuronDescriptor
	SumDy bool
}

func (NeuronGradientOp) Name() string { return "neuron-gradient" }
func (o NeuronGradientOp) arity() int {
	if o.SumDy {
		return NeuronOp{Desc: o.Desc}.arity() + 2
	}
	return NeuronOp{Desc: o.Desc}.arity() + 1
}

func (o NeuronGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	x := 1
	if o.SumDy {
		x = 2
		if !sameDesc(src[0], src[1]) || src[0].Format != src[1].Format || src[0].Format != src[2].Format {
			return nil, c.errorf(ErrShape, "source gradients %s (%v) and %s (%v), forward source %s (%v)",
				descString(src[0]), src[0].Format, descString(src[1]), src[1].Format, descString(src[2]), src[2].Format)
		}
	}
	if !sameDesc(src[0], src[x]) {
		return nil, c.errorf(ErrShape, "source gradient %s, forward source %s", descString(src[0]), descString(src[x]))
	}
	return one(c.like(src[x]), nil)
}

func (o NeuronGradientOp) build(b *buildCtx) error {
	d := o.Desc
	d.PReLU = nil
	k, err := ops.NewNeuronGradient(b.dev, d)
	if err != nil {
		return err
	}
	b.closer(k)
	x := 1
	if o.SumDy {
		x = 2
	}
	if len(b.src) > x+1 {
		k.Slopes = b.src[x+1]
	}
	dy, src, dx := b.src[0], b.src[x], b.dst[0]
	if o.SumDy {
		dy2 := b.src[1]
		b.encode(func(cb *vk.CommandBuffer) error { return k.EncodeSum(cb, dy, dy2, src, dx) })
		return nil
	}
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, dy, src, dx) })
	return nil
}

// PReLUSlopeGradientOp is the gradient of a PReLU's slopes (the parameter
// "NODE.a"): sum over n, h, w of dy * min(x, 0); sources: dy, the forward
// source.
type PReLUSlopeGradientOp struct{}

func (PReLUSlopeGradientOp) Name() string { return "prelu-slope-gradient" }
func (PReLUSlopeGradientOp) arity() int   { return 2 }

func (PReLUSlopeGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	return one(ops.ImageDescriptor{N: 1, C: src[1].C, H: 1, W: 1}, nil)
}

func (PReLUSlopeGradientOp) build(b *buildCtx) error {
	k, err := ops.NewNeuronGradient(b.dev, ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: make([]float32, b.src[1].C())})
	if err != nil {
		return err
	}
	b.closer(k)
	dy, x, ds := b.src[0], b.src[1], b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error { return k.EncodeSlopeGradient(cb, dy, x, ds) })
	return nil
}

// Neuron adds an activation node over src. For PReLU, d.PReLU gives the
// first slopes (one per channel) of the trainable parameter "NAME.a".
func (g *Graph) Neuron(name string, d ops.NeuronDescriptor, src *Image) (*Node, error) {
	if err := d.Validate(name, 0); err != nil {
		return nil, fmt.Errorf("%w: node %q: %v", ErrGraph, name, err)
	}
	sources := []*Image{src}
	if d.Type == ops.NeuronPReLU {
		a, err := g.Parameter(name+".a", ops.ImageDescriptor{N: 1, C: len(d.PReLU), H: 1, W: 1},
			Init{Data: append([]float32(nil), d.PReLU...)}, true)
		if err != nil {
			return nil, err
		}
		a.param.shape = []int{len(d.PReLU)}
		sources = append(sources, a)
	}
	n, err := g.add(name, NeuronOp{Desc: d}, sources, nil)
	if err != nil {
		return nil, err
	}
	for _, s := range sources[1:] {
		s.param.owner = n
	}
	return n, nil
}

// neuronSpec is the JSON of a neuron, as a node ("op": "neuron") or fused
// into another ("neuron": {...}): "type", and "a" (a number, or for prelu
// a list of one slope per channel), "b", "c"; omitted parameters take the
// type's defaults (ops.NewNeuronDescriptor).
type neuronSpec struct {
	Type string          `json:"type"`
	A    json.RawMessage `json:"a,omitempty"`
	B    *float32        `json:"b,omitempty"`
	C    *float32        `json:"c,omitempty"`
}

func (s neuronSpec) descriptor() (ops.NeuronDescriptor, error) {
	t, err := ops.ParseNeuronType(s.Type)
	if err != nil {
		return ops.NeuronDescriptor{}, err
	}
	d := ops.NewNeuronDescriptor(t)
	if len(s.A) > 0 {
		if t == ops.NeuronPReLU {
			if err := json.Unmarshal(s.A, &d.PReLU); err != nil {
				return d, fmt.Errorf("neuron a: prelu wants a list of slopes, one per channel: %v", err)
			}
		} else if err := json.Unmarshal(s.A, &d.A); err != nil {
			return d, fmt.Errorf("neuron a: want a number: %v", err)
		}
	}
	if t == ops.NeuronPReLU && len(d.PReLU) == 0 {
		return d, fmt.Errorf("neuron a: prelu needs a list of slopes, one per channel")
	}
	if s.B != nil {
		d.B = *s.B
	}
	if s.C != nil {
		d.C = *s.C
	}
	return d, d.Validate("neuron", 0)
}

type neuronNodeSpec struct {
	specBase
	neuronSpec
}

func init() {
	registerOp("neuron", opSpec{sources: 1, doc: "activation: type, a, b, c (prelu: a is a list)", parse: func(p *parseCtx) error {
		var s neuronNodeSpec
		if err := p.decode(&s); err != nil {
			return err
		}
		d, err := s.descriptor()
		if err != nil {
			return p.bad("%v", err)
		}
		_, err = p.g.Neuron(p.name, d, p.src[0])
		return err
	}})
}
