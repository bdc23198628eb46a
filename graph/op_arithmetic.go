package graph

import (
	"math"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// ArithmeticOp is an element-wise arithmetic node (MPSNNAdditionNode,
// ...SubtractionNode, ...MultiplicationNode, ...DivisionNode; JSON ops
// "add", "subtract", "multiply", "divide"): clamp((ps*x) op (ss*y) + bias,
// minimum, maximum), either source broadcast along axes of size 1.
type ArithmeticOp struct{ Desc ops.ArithmeticDescriptor }

func (o ArithmeticOp) Name() string { return o.Desc.Op.String() }
func (ArithmeticOp) arity() int     { return 2 }

func (o ArithmeticOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	a, b := c.like(src[0]), c.like(src[1])
	d, err := o.Desc.ResultDescriptor(a, b)
	if err != nil {
		return nil, c.errorf(ErrShape, "%v", err)
	}
	return one(c.like(d), nil)
}

// plain reports whether d is a bare a + b: its gradient is dy itself for
// each side that was not broadcast.
func plain(d ops.ArithmeticDescriptor) bool {
	return d.Op == ops.ArithmeticAdd && d.PrimaryScale == 1 && d.SecondaryScale == 1 && d.Bias == 0 &&
		math.IsInf(float64(d.Minimum), -1) && math.IsInf(float64(d.Maximum), 1)
}

func (o ArithmeticOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	out := make([]*Image, 2)
	for i := range out {
		if !wanted[i] {
			continue
		}
		gi, err := b.add(i, ArithmeticGradientOp{Desc: o.Desc, Secondary: i == 1}, dy, n.sources[0], n.sources[1])
		if err != nil {
			return nil, err
		}
		out[i] = gi
	}
	return out, nil
}

func (o ArithmeticOp) build(b *buildCtx) error {
	k, err := ops.NewArithmetic(b.dev, o.Desc)
	if err != nil {
		return err
	}
	x, y, dst := b.src[0], b.src[1], b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, x, y, dst) })
	return nil
}

// ArithmeticGradientOp is an arithmetic node's gradient for its primary
// or (Secondary) its secondary source (MPSCNNArithmeticGradient); sources:
// dy and both forward sources. A bare same-shape addition's gradient
// is dy itself and costs nothing (its result shares dy's memory).
type ArithmeticGradientOp struct {
	Desc      ops.ArithmeticDescriptor
	Secondary bool
}

func (o ArithmeticGradientOp) Name() string { return o.Desc.Op.String() + "-gradient" }
func (ArithmeticGradientOp) arity() int     { return 3 }

func (o ArithmeticGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	i := 1
	if o.Secondary {
		i = 2
	}
	return one(c.like(src[i]), nil)
}

// aliasIf: a bare addition's gradient for a side of dy's shape is dy.
func (o ArithmeticGradientOp) aliasIf(opts *CompileOptions, src, res []ops.ImageDescriptor) (int, bool) {
	return 0, plain(o.Desc) && sameDesc(src[0], res[0]) && src[0].Format == res[0].Format
}

func (o ArithmeticGradientOp) build(b *buildCtx) error {
	if b.aliased {
		b.encode(func(*vk.CommandBuffer) error { return nil }) // the result is dy's storage
		return nil
	}
	dy, x, y, dst := b.src[0], b.src[1], b.src[2], b.dst[0]
	k, err := ops.NewArithmeticGradient(b.dev, o.Desc, o.Secondary)
	if err != nil {
		return err
	}
	b.closer(k)
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, dy, x, y, dst) })
	return nil
}

// Arithmetic adds an arithmetic node computing d over primary and
// secondary (start from ops.NewArithmeticDescriptor).
func (g *Graph) Arithmetic(name string, d ops.ArithmeticDescriptor, primary, secondary *Image) (*Node, error) {
	if err := d.Validate(name); err != nil {
		return nil, errorfNode(ErrGraph, name, "%v", err)
	}
	return g.add(name, ArithmeticOp{Desc: d}, []*Image{primary, secondary}, nil)
}

// arithmeticSpec is the JSON of an arithmetic node; omitted fields take
// MPS's defaults (scales 1, bias 0, no clamp).
type arithmeticSpec struct {
	specBase
	PrimaryScale   *float32 `json:"primary_scale,omitempty"`
	SecondaryScale *float32 `json:"secondary_scale,omitempty"`
	Bias           *float32 `json:"bias,omitempty"`
	Minimum        *float64 `json:"minimum,omitempty"`
	Maximum        *float64 `json:"maximum,omitempty"`
}

func init() {
	for _, op := range []ops.ArithmeticOp{ops.ArithmeticAdd, ops.ArithmeticSubtract, ops.ArithmeticMultiply, ops.ArithmeticDivide} {
		registerOp(op.String(), opSpec{sources: 2, doc: "primary_scale, secondary_scale, bias, minimum, maximum; broadcasting", parse: func(p *parseCtx) error {
			var s arithmeticSpec
			if err := p.decode(&s); err != nil {
				return err
			}
			d := ops.NewArithmeticDescriptor(op)
			set := func(dst *float32, v *float32) {
				if v != nil {
					*dst = *v
				}
			}
			set(&d.PrimaryScale, s.PrimaryScale)
			set(&d.SecondaryScale, s.SecondaryScale)
			set(&d.Bias, s.Bias)
			if s.Minimum != nil {
				d.Minimum = float32(*s.Minimum)
			}
			if s.Maximum != nil {
				d.Maximum = float32(*s.Maximum)
			}
			_, err := p.g.Arithmetic(p.name, d, p.src[0], p.src[1])
			return err
		}})
	}
}
