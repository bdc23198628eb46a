package graph

import (
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// SumOp adds two images of one shape: the node Training adds where an
// image's gradient has several contributions (JSON and Graph.Add make
// ArithmeticOp nodes).
type SumOp struct{}

func (SumOp) Name() string { return "sum" }
func (SumOp) arity() int   { return 2 }

func (SumOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	if !sameDesc(src[0], src[1]) {
		return nil, c.errorf(ErrShape, "adds %s and %s", descString(src[0]), descString(src[1]))
	}
	d := src[0]
	if d.Format != src[1].Format {
		d.Format = ops.Float32
	}
	return one(d, nil)
}

// The gradient of a sum passes dy to each side, free: the gradient shares
// dy's memory.
func (SumOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	out := make([]*Image, 2)
	for i := range out {
		if !wanted[i] {
			continue
		}
		gi, err := b.add(i, IdentityOp{}, dy)
		if err != nil {
			return nil, err
		}
		out[i] = gi
	}
	return out, nil
}

func (SumOp) build(b *buildCtx) error {
	k, err := ops.NewArithmetic(b.dev, ops.NewArithmeticDescriptor(ops.ArithmeticAdd))
	if err != nil {
		return err
	}
	b.closer(k)
	x, y, dst := b.src[0], b.src[1], b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, x, y, dst) })
	return nil
}

// IdentityOp passes its source on: the gradient of an addition for each
// side. It costs nothing: its result shares the source's memory.
type IdentityOp struct{}

func (IdentityOp) Name() string { return "identity" }
func (IdentityOp) arity() int   { return 1 }
func (IdentityOp) aliasOf() int { return 0 }

func (IdentityOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	return one(src[0], nil)
}

func (IdentityOp) build(b *buildCtx) error {
	b.encode(func(*vk.CommandBuffer) error { return nil }) // the result is the source's storage
	return nil
}

// Add adds a node computing a + b (an ArithmeticOp with MPS's defaults:
// either may broadcast).
func (g *Graph) Add(name string, a, b *Image) (*Node, error) {
	return g.Arithmetic(name, ops.NewArithmeticDescriptor(ops.ArithmeticAdd), a, b)
}
