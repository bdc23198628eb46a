package graph

import (
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// SoftMaxOp is a softmax (or, with Log, log-softmax) over the feature
// channels of each pixel (MPSCNNSoftMaxNode, MPSCNNLogSoftMaxNode; JSON
// ops "softmax" and "log_softmax").
type SoftMaxOp struct{ Log bool }

func (o SoftMaxOp) Name() string {
	if o.Log {
		return "log_softmax"
	}
	return "softmax"
}
func (SoftMaxOp) arity() int { return 1 }

func (SoftMaxOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	return one(c.like(src[0]), nil)
}

// The gradient reads the forward's result (MPS's convention).
func (o SoftMaxOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	gi, err := b.add(0, SoftMaxGradientOp{Log: o.Log}, dy, n.Result())
	return []*Image{gi}, err
}

func (o SoftMaxOp) build(b *buildCtx) error {
	src, dst := b.src[0], b.dst[0]
	if o.Log {
		k, err := ops.NewLogSoftMax(b.dev)
		if err != nil {
			return err
		}
		b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) })
		return nil
	}
	k, err := ops.NewSoftMax(b.dev)
	if err != nil {
		return err
	}
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) })
	return nil
}

// SoftMaxGradientOp is a softmax's (or log-softmax's) gradient; sources:
// dy and the forward's result.
type SoftMaxGradientOp struct{ Log bool }

func (o SoftMaxGradientOp) Name() string { return SoftMaxOp(o).Name() + "-gradient" }
func (SoftMaxGradientOp) arity() int     { return 2 }

func (SoftMaxGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	if !sameDesc(src[0], src[1]) {
		return nil, c.errorf(ErrShape, "source gradient %s, forward result %s", descString(src[0]), descString(src[1]))
	}
	return one(c.like(src[0]), nil)
}

func (o SoftMaxGradientOp) build(b *buildCtx) error {
	dy, y, dx := b.src[0], b.src[1], b.dst[0]
	if o.Log {
		k, err := ops.NewLogSoftMaxGradient(b.dev)
		if err != nil {
			return err
		}
		b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, dy, y, dx) })
		return nil
	}
	k, err := ops.NewSoftMaxGradient(b.dev)
	if err != nil {
		return err
	}
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, dy, y, dx) })
	return nil
}

// SoftMax adds a softmax (log: log-softmax) over src's feature channels.
func (g *Graph) SoftMax(name string, src *Image, log bool) (*Node, error) {
	return g.add(name, SoftMaxOp{Log: log}, []*Image{src}, nil)
}

func init() {
	for _, log := range []bool{false, true} {
		registerOp(SoftMaxOp{Log: log}.Name(), opSpec{sources: 1, doc: "over the feature channels", parse: func(p *parseCtx) error {
			if err := p.decode(&specBase{}); err != nil {
				return err
			}
			_, err := p.g.SoftMax(p.name, p.src[0], log)
			return err
		}})
	}
}
