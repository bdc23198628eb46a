package graph

import (
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// UpsamplingOp upsamples by integer factors (MPSCNNUpsamplingNearestNode,
// MPSCNNUpsamplingBilinearNode; JSON ops "upsample_nearest" and
// "upsample_bilinear" with "scale" [H, W] or one number, and
// "align_corners" for bilinear).
type UpsamplingOp struct{ Desc ops.UpsamplingDescriptor }

func (o UpsamplingOp) Name() string {
	if o.Desc.Bilinear {
		return "upsample_bilinear"
	}
	return "upsample_nearest"
}
func (UpsamplingOp) arity() int { return 1 }

func (o UpsamplingOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	d, err := o.Desc.ResultDescriptor(src[0])
	if err != nil {
		return nil, c.errorf(ErrShape, "%v", err)
	}
	return one(c.like(d), nil)
}

func (o UpsamplingOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	gi, err := b.add(0, UpsamplingGradientOp(o), dy)
	return []*Image{gi}, err
}

func (o UpsamplingOp) build(b *buildCtx) error {
	k, err := ops.NewUpsampling(b.dev, o.Desc)
	if err != nil {
		return err
	}
	src, dst := b.src[0], b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) })
	return nil
}

// UpsamplingGradientOp is an upsampling's gradient; source: dy (the
// gradient depends on the shapes only).
type UpsamplingGradientOp struct{ Desc ops.UpsamplingDescriptor }

func (o UpsamplingGradientOp) Name() string { return UpsamplingOp(o).Name() + "-gradient" }
func (UpsamplingGradientOp) arity() int     { return 1 }

func (o UpsamplingGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	d, err := o.Desc.GradientResultDescriptor(src[0])
	if err != nil {
		return nil, c.errorf(ErrShape, "%v", err)
	}
	return one(c.like(d), nil)
}

func (o UpsamplingGradientOp) build(b *buildCtx) error {
	k, err := ops.NewUpsamplingGradient(b.dev, o.Desc)
	if err != nil {
		return err
	}
	dy, dx := b.src[0], b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, dy, dx) })
	return nil
}

// Upsampling adds an upsampling node over src.
func (g *Graph) Upsampling(name string, d ops.UpsamplingDescriptor, src *Image) (*Node, error) {
	if err := d.Validate(); err != nil {
		return nil, errorfNode(ErrGraph, name, "%v", err)
	}
	return g.add(name, UpsamplingOp{Desc: d}, []*Image{src}, nil)
}

type upsamplingSpec struct {
	specBase
	Scale        Ints `json:"scale"`
	AlignCorners bool `json:"align_corners,omitempty"`
}

func init() {
	for _, bilinear := range []bool{false, true} {
		registerOp(UpsamplingOp{Desc: ops.UpsamplingDescriptor{Bilinear: bilinear}}.Name(), opSpec{sources: 1, doc: "scale [H, W], align_corners (bilinear)",
			parse: func(p *parseCtx) error {
				var s upsamplingSpec
				if err := p.decode(&s); err != nil {
					return err
				}
				if s.Scale == nil {
					return p.bad("scale is required")
				}
				d := ops.UpsamplingDescriptor{Bilinear: bilinear, AlignCorners: s.AlignCorners}
				var err error
				if d.ScaleY, d.ScaleX, err = pair("scale", s.Scale, 1); err != nil {
					return p.bad("%v", err)
				}
				if s.AlignCorners && !bilinear {
					return p.bad("align_corners applies to upsample_bilinear only")
				}
				_, err = p.g.Upsampling(p.name, d, p.src[0])
				return err
			}})
	}
}
