package graph

import (
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// ConcatOp concatenates its sources along the feature channels (JSON op
// "concat"); they must agree in batch size, height and width.
type ConcatOp struct{}

func (ConcatOp) Name() string { return "concat" }
func (ConcatOp) arity() int   { return -1 }

func (ConcatOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	out := src[0]
	for i, s := range src[1:] {
		if s.N != out.N || s.H != out.H || s.W != out.W {
			return nil, c.errorf(ErrShape, "source %d is %s, source 0 is %s (batch, height and width must agree)", i+1, descString(s), descString(src[0]))
		}
		out.C += s.C
	}
	return one(c.like(out), nil)
}

// A concatenation's gradient is a channel slice per source.
func (o ConcatOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	out := make([]*Image, len(n.sources))
	for i := range n.sources {
		if !wanted[i] {
			continue
		}
		gi, err := b.add(i, &ConcatGradientOp{Concat: n, Index: i}, dy)
		if err != nil {
			return nil, err
		}
		out[i] = gi
	}
	return out, nil
}

func (ConcatOp) build(b *buildCtx) error {
	src, dst := b.src, b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error {
		off := 0
		for _, s := range src {
			v, err := dst.ChannelView(off, s.C())
			if err != nil {
				return err
			}
			if err := ops.Copy(cb, s, v); err != nil {
				return err
			}
			off += s.C()
		}
		return nil
	})
	return nil
}

// SliceOp takes channels [Offset, Offset+Count) of its source (JSON op
// "slice").
type SliceOp struct{ Offset, Count int }

func (SliceOp) Name() string { return "slice" }
func (SliceOp) arity() int   { return 1 }

func (o SliceOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	if o.Offset < 0 || o.Count < 1 || o.Count > src[0].C || o.Offset > src[0].C-o.Count { // no overflow
		return nil, c.errorf(ErrShape, "channels [%d, %d) of %s", o.Offset, o.Offset+o.Count, descString(src[0]))
	}
	out := src[0]
	out.C = o.Count
	return one(c.like(out), nil)
}

func (o SliceOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	gi, err := b.add(0, &UnsliceOp{Slice: n}, dy)
	return []*Image{gi}, err
}

func (o SliceOp) build(b *buildCtx) error { return sliceStep(b, o.Offset, o.Count) }

func sliceStep(b *buildCtx, off, count int) error {
	src, dst := b.src[0], b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error {
		v, err := src.ChannelView(off, count)
		if err != nil {
			return err
		}
		return ops.Copy(cb, v, dst)
	})
	return nil
}

// ConcatGradientOp is the gradient of a concatenation for its source
// Index: the channels that source occupies in the concatenation.
type ConcatGradientOp struct {
	Concat *Node
	Index  int
}

func (*ConcatGradientOp) Name() string { return "slice" }
func (*ConcatGradientOp) arity() int   { return 1 }

// Span returns the channel offset and count of the source in the
// concatenation's result.
func (o *ConcatGradientOp) Span(node string, shapeOf func(*Image) (ops.ImageDescriptor, bool)) (int, int, error) {
	off := 0
	for i, s := range o.Concat.sources {
		d, ok := shapeOf(s)
		if !ok {
			return 0, 0, errorfNode(ErrGraph, node, "the shape of %s (source %d of %s) is unknown", s, i, o.Concat)
		}
		if i == o.Index {
			return off, d.C, nil
		}
		off += d.C
	}
	return 0, 0, errorfNode(ErrGraph, node, "%s has no source %d", o.Concat, o.Index)
}

func (o *ConcatGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	off, count, err := o.Span(c.node, c.shapeOf)
	if err != nil {
		return nil, err
	}
	if want, ok := c.shapeOf(o.Concat.Result()); ok && !sameDesc(want, src[0]) {
		return nil, c.errorf(ErrShape, "source gradient %s, but %s is %s", descString(src[0]), o.Concat, descString(want))
	}
	return SliceOp{Offset: off, Count: count}.infer(c, src)
}

func (o *ConcatGradientOp) build(b *buildCtx) error {
	off, count, err := o.Span(b.n.name, b.e.shapeOf)
	if err != nil {
		return err
	}
	return sliceStep(b, off, count)
}

// UnsliceOp is the gradient of a slice: the source gradient placed at the
// slice's channels of an image of the slice source's shape, zero elsewhere.
type UnsliceOp struct{ Slice *Node }

func (*UnsliceOp) Name() string { return "unslice" }
func (*UnsliceOp) arity() int   { return 1 }

func (o *UnsliceOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	full, ok := c.shapeOf(o.Slice.sources[0])
	if !ok {
		return nil, c.errorf(ErrGraph, "the shape of %s is unknown", o.Slice.sources[0])
	}
	so := o.Slice.op.(SliceOp)
	if src[0].N != full.N || src[0].H != full.H || src[0].W != full.W || src[0].C != so.Count {
		return nil, c.errorf(ErrShape, "source gradient %s does not fit channels [%d, %d) of %s",
			descString(src[0]), so.Offset, so.Offset+so.Count, descString(full))
	}
	return one(c.like(full), nil)
}

func (o *UnsliceOp) build(b *buildCtx) error {
	so := o.Slice.op.(SliceOp)
	src, dst := b.src[0], b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error {
		if err := ops.Fill(cb, dst, 0); err != nil {
			return err
		}
		v, err := dst.ChannelView(so.Offset, so.Count)
		if err != nil {
			return err
		}
		return ops.Copy(cb, src, v)
	})
	return nil
}

// Concat adds a node concatenating its sources along the feature channels
// (they must agree in batch size, height and width).
func (g *Graph) Concat(name string, sources ...*Image) (*Node, error) {
	return g.add(name, ConcatOp{}, sources, nil)
}

// Slice adds a node taking channels [offset, offset+count) of src.
func (g *Graph) Slice(name string, src *Image, offset, count int) (*Node, error) {
	if offset < 0 || count < 1 {
		return nil, errorfNode(ErrGraph, name, "slice of channels [%d, %d)", offset, offset+count)
	}
	return g.add(name, SliceOp{Offset: offset, Count: count}, []*Image{src}, nil)
}

type sliceSpec struct {
	specBase
	Offset int `json:"offset"`
	Count  int `json:"count"`
}

func init() {
	registerOp("concat", opSpec{sources: -1, doc: "concatenation along the channels",
		parse: func(p *parseCtx) error {
			if err := p.decode(&specBase{}); err != nil {
				return err
			}
			_, err := p.g.Concat(p.name, p.src...)
			return err
		}})
	registerOp("slice", opSpec{sources: 1, doc: "channels [offset, offset+count)",
		parse: func(p *parseCtx) error {
			var s sliceSpec
			if err := p.decode(&s); err != nil {
				return err
			}
			_, err := p.g.Slice(p.name, p.src[0], s.Offset, s.Count)
			return err
		}})
}
