package graph

import (
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// DropoutOp is dropout (MPSCNNDropoutNode, JSON op "dropout" with
// "keep_probability", "seed" and "mask_stride" [x, y, feature channel],
// MPS's maskStrideInPixels order, default [1, 1, 1]). A graph compiled for
// training drops (a new mask every run, drawn on the GPU; the gradient
// reads the forward's mask from its state); one compiled for inference
// passes its source on at no cost (the result shares its memory).
type DropoutOp struct{ Desc ops.DropoutDescriptor }

func (DropoutOp) Name() string { return "dropout" }
func (DropoutOp) arity() int   { return 1 }

func (o DropoutOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	d, err := o.Desc.ResultDescriptor(c.like(src[0]))
	if err != nil {
		return nil, c.errorf(ErrShape, "%v", err)
	}
	return one(c.like(d), nil)
}

// aliasIf: in inference dropout is the identity.
func (DropoutOp) aliasIf(opts *CompileOptions, _, _ []ops.ImageDescriptor) (int, bool) {
	return 0, opts.Mode != ModeTraining
}

func (o DropoutOp) needsState(gradient Op) bool { _, ok := gradient.(DropoutGradientOp); return ok }

func (o DropoutOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	gi, err := b.add(0, DropoutGradientOp(o), dy)
	return []*Image{gi}, err
}

func (o DropoutOp) build(b *buildCtx) error {
	if b.aliased {
		b.encode(func(*vk.CommandBuffer) error { return nil })
		return nil
	}
	k, err := ops.NewDropout(b.dev, o.Desc)
	if err != nil {
		return err
	}
	b.closer(k)
	k.Label = b.n.name
	src, dst := b.src[0], b.dst[0]
	st, err := k.NewGradientState(src.Descriptor())
	if err != nil {
		return err
	}
	b.st.setState(st)
	b.encode(func(cb *vk.CommandBuffer) error { return k.EncodeToState(cb, src, st, dst) })
	return nil
}

// DropoutGradientOp is dropout's gradient: dy where the forward kept, scaled
// by 1/keep, else 0; source: dy (the mask comes from the forward's state).
// In inference it is the identity.
type DropoutGradientOp struct{ Desc ops.DropoutDescriptor }

func (DropoutGradientOp) Name() string { return "dropout-gradient" }
func (DropoutGradientOp) arity() int   { return 1 }

func (DropoutGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	return one(c.like(src[0]), nil)
}

func (DropoutGradientOp) aliasIf(opts *CompileOptions, _, _ []ops.ImageDescriptor) (int, bool) {
	return 0, opts.Mode != ModeTraining
}

func (o DropoutGradientOp) build(b *buildCtx) error {
	if b.aliased {
		b.encode(func(*vk.CommandBuffer) error { return nil })
		return nil
	}
	fwd, err := b.forwardStep()
	if err != nil {
		return err
	}
	st, _ := fwd.state.(*ops.DropoutGradientState)
	k, err := ops.NewDropoutGradient(b.dev, o.Desc)
	if err != nil {
		return err
	}
	dy, dx := b.src[0], b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, dy, st, dx) })
	return nil
}

// Dropout adds a dropout node over src.
func (g *Graph) Dropout(name string, src *Image, d ops.DropoutDescriptor) (*Node, error) {
	if err := d.Validate(); err != nil {
		return nil, errorfNode(ErrGraph, name, "%v", err)
	}
	return g.add(name, DropoutOp{Desc: d}, []*Image{src}, nil)
}

type dropoutSpec struct {
	specBase
	KeepProbability *float32 `json:"keep_probability"`
	Seed            uint64   `json:"seed,omitempty"`
	MaskStride      Ints     `json:"mask_stride,omitempty"`
}

func init() {
	registerOp("dropout", opSpec{sources: 1, doc: "keep_probability, seed, mask_stride [x, y, channel]", parse: func(p *parseCtx) error {
		var s dropoutSpec
		if err := p.decode(&s); err != nil {
			return err
		}
		if s.KeepProbability == nil {
			return p.bad("keep_probability is required")
		}
		d := ops.DropoutDescriptor{KeepProbability: *s.KeepProbability, Seed: s.Seed, MaskStride: ops.DefaultMaskStride}
		if s.MaskStride != nil {
			if len(s.MaskStride) != 3 {
				return p.bad("mask_stride: want [x, y, feature channel], each 0 or 1")
			}
			d.MaskStride = ops.MaskStride{X: s.MaskStride[0], Y: s.MaskStride[1], FeatureChannel: s.MaskStride[2]}
		}
		_, err := p.g.Dropout(p.name, p.src[0], d)
		return err
	}})
}
