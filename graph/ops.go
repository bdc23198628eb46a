package graph

import (
	"fmt"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
)

// op is a node's operation: its arity, shape inference, and (in
// executor.go and cpu.go) how it runs.
type op interface {
	name() string
	// arity is the number of sources, or -1 for one or more.
	arity() int
	// infer returns the result's shape from the sources' shapes; shapeOf
	// gives the shapes of other images already inferred.
	infer(node string, src []ops.ImageDescriptor, shapeOf shapeFunc) (ops.ImageDescriptor, error)
}

// shapeFunc returns an inferred image shape, false when not known.
type shapeFunc func(*Image) (ops.ImageDescriptor, bool)

// poolOp is a forward pooling node.
type poolOp struct {
	kind    ops.PoolingKind
	geom    ops.Geometry
	policy  padding.Policy
	edge    ops.EdgeMode
	zeroPad padding.Pads
}

var poolNames = map[ops.PoolingKind]string{ops.KindMax: "max", ops.KindAverage: "avg", ops.KindL2Norm: "l2", ops.KindDilatedMax: "dilated-max"}

func (o *poolOp) name() string { return poolNames[o.kind] }
func (o *poolOp) arity() int   { return 1 }

// resolve applies the node's padding policy to its source shape, as the
// kernel's EncodeNew will.
func (o *poolOp) resolve(node string, src ops.ImageDescriptor) (padding.Result, error) {
	g := o.geom
	r, err := padding.Resolve(o.policy, []padding.Descriptor{src.Descriptor()}, nil, padding.Kernel{Name: node,
		KernelW: g.KernelWidth, KernelH: g.KernelHeight, StrideX: g.StrideX, StrideY: g.StrideY,
		DilationX: g.DilationX, DilationY: g.DilationY, EdgeMode: o.edge, ZeroPad: o.zeroPad})
	if err != nil {
		return r, fmt.Errorf("%w: node %q: %v", ErrShape, node, err)
	}
	return r, nil
}

func (o *poolOp) infer(node string, src []ops.ImageDescriptor, _ shapeFunc) (ops.ImageDescriptor, error) {
	r, err := o.resolve(node, src[0])
	if err != nil {
		return ops.ImageDescriptor{}, err
	}
	return ops.ImageDescriptor{N: r.Dest.N, C: r.Dest.C, H: r.Dest.H, W: r.Dest.W}, nil
}

// poolGradOp is the gradient of a pooling node; sources: the gradient of
// the forward result, the forward source.
type poolGradOp struct{ fwd *poolOp }

func (o *poolGradOp) name() string { return o.fwd.name() + "-gradient" }
func (o *poolGradOp) arity() int   { return 2 }

func (o *poolGradOp) infer(node string, src []ops.ImageDescriptor, _ shapeFunc) (ops.ImageDescriptor, error) {
	want, err := o.fwd.infer(node, src[1:2], nil)
	if err != nil {
		return want, err
	}
	if !sameDesc(src[0], want) {
		return want, fmt.Errorf("%w: node %q: source gradient %s, but the forward result is %s", ErrShape, node, descString(src[0]), descString(want))
	}
	return src[1], nil
}

// concatOp concatenates along the feature channels.
type concatOp struct{}

func (concatOp) name() string { return "concat" }
func (concatOp) arity() int   { return -1 }

func (concatOp) infer(node string, src []ops.ImageDescriptor, _ shapeFunc) (ops.ImageDescriptor, error) {
	out := src[0]
	for i, s := range src[1:] {
		if s.N != out.N || s.H != out.H || s.W != out.W {
			return out, fmt.Errorf("%w: node %q: source %d is %s, source 0 is %s (batch, height and width must agree)", ErrShape, node, i+1, descString(s), descString(src[0]))
		}
		out.C += s.C
	}
	return out, nil
}

// sliceOp takes channels [offset, offset+count) of its source: the
// gradient of a concatenation for one of its sources.
type sliceOp struct{ offset, count int }

func (sliceOp) name() string { return "slice" }
func (sliceOp) arity() int   { return 1 }

func (o sliceOp) infer(node string, src []ops.ImageDescriptor, _ shapeFunc) (ops.ImageDescriptor, error) {
	if o.offset < 0 || o.count < 1 || o.count > src[0].C || o.offset > src[0].C-o.count { // no overflow
		return src[0], fmt.Errorf("%w: node %q: channels [%d, %d) of %s", ErrShape, node, o.offset, o.offset+o.count, descString(src[0]))
	}
	out := src[0]
	out.C = o.count
	return out, nil
}

// concatSliceOp is the gradient of a concatenation for its source index:
// the channels that source occupies in the concatenation.
type concatSliceOp struct {
	concat *Node
	index  int
}

func (*concatSliceOp) name() string { return "slice" }
func (*concatSliceOp) arity() int   { return 1 }

// span returns the channel offset and count of the source in the
// concatenation's result.
func (o *concatSliceOp) span(node string, shapeOf shapeFunc) (int, int, error) {
	off := 0
	for i, s := range o.concat.sources {
		d, ok := shapeOf(s)
		if !ok {
			return 0, 0, fmt.Errorf("%w: node %q: the shape of %s (source %d of %s) is unknown", ErrGraph, node, s, i, o.concat)
		}
		if i == o.index {
			return off, d.C, nil
		}
		off += d.C
	}
	return 0, 0, fmt.Errorf("%w: node %q: %s has no source %d", ErrGraph, node, o.concat, o.index)
}

func (o *concatSliceOp) infer(node string, src []ops.ImageDescriptor, shapeOf shapeFunc) (ops.ImageDescriptor, error) {
	off, count, err := o.span(node, shapeOf)
	if err != nil {
		return src[0], err
	}
	if want, ok := shapeOf(o.concat.result); ok && !sameDesc(want, src[0]) {
		return src[0], fmt.Errorf("%w: node %q: source gradient %s, but %s is %s", ErrShape, node, descString(src[0]), o.concat, descString(want))
	}
	return sliceOp{offset: off, count: count}.infer(node, src, shapeOf)
}

// unsliceOp is the gradient of a slice: the source gradient placed at the
// slice's channels of an image of the slice source's shape, zero elsewhere.
type unsliceOp struct{ slice *Node }

func (*unsliceOp) name() string { return "unslice" }
func (*unsliceOp) arity() int   { return 1 }

func (o *unsliceOp) infer(node string, src []ops.ImageDescriptor, shapeOf shapeFunc) (ops.ImageDescriptor, error) {
	full, ok := shapeOf(o.slice.sources[0])
	if !ok {
		return src[0], fmt.Errorf("%w: node %q: the shape of %s is unknown", ErrGraph, node, o.slice.sources[0])
	}
	so := o.slice.op.(sliceOp)
	if src[0].N != full.N || src[0].H != full.H || src[0].W != full.W || src[0].C != so.count {
		return src[0], fmt.Errorf("%w: node %q: source gradient %s does not fit channels [%d, %d) of %s", ErrShape, node,
			descString(src[0]), so.offset, so.offset+so.count, descString(full))
	}
	return full, nil
}

// addOp adds two images of one shape.
type addOp struct{}

func (addOp) name() string { return "add" }
func (addOp) arity() int   { return 2 }

func (addOp) infer(node string, src []ops.ImageDescriptor, _ shapeFunc) (ops.ImageDescriptor, error) {
	if !sameDesc(src[0], src[1]) {
		return src[0], fmt.Errorf("%w: node %q: adds %s and %s", ErrShape, node, descString(src[0]), descString(src[1]))
	}
	return src[0], nil
}

// identityOp passes its source on: the gradient of an addition for each
// side. It costs nothing: its result shares the source's memory.
type identityOp struct{}

func (identityOp) name() string { return "identity" }
func (identityOp) arity() int   { return 1 }

func (identityOp) infer(node string, src []ops.ImageDescriptor, _ shapeFunc) (ops.ImageDescriptor, error) {
	return src[0], nil
}

// lossOp is a loss node; sources: prediction, labels.
type lossOp struct{ desc ops.LossDescriptor }

func (o lossOp) name() string { return "loss" }
func (lossOp) arity() int     { return 2 }

func (o lossOp) infer(node string, src []ops.ImageDescriptor, _ shapeFunc) (ops.ImageDescriptor, error) {
	if !sameDesc(src[0], src[1]) {
		return src[0], fmt.Errorf("%w: node %q: prediction %s and labels %s differ", ErrShape, node, descString(src[0]), descString(src[1]))
	}
	return lossResult(o.desc, src[0]), nil
}

// lossResult is ops.Loss.ResultDescriptor without a device.
func lossResult(d ops.LossDescriptor, pred ops.ImageDescriptor) ops.ImageDescriptor {
	switch {
	case d.Reduction != ops.ReductionNone:
		return ops.ImageDescriptor{N: 1, C: 1, H: 1, W: 1}
	case d.Type == ops.LossSoftmaxCrossEntropy:
		return ops.ImageDescriptor{N: pred.N, C: 1, H: pred.H, W: pred.W}
	}
	return ops.ImageDescriptor{N: pred.N, C: pred.C, H: pred.H, W: pred.W}
}

// lossGradOp is the gradient of a loss with respect to its prediction;
// sources: prediction, labels.
type lossGradOp struct{ desc ops.LossDescriptor }

func (lossGradOp) name() string { return "loss-gradient" }
func (lossGradOp) arity() int   { return 2 }

func (o lossGradOp) infer(node string, src []ops.ImageDescriptor, _ shapeFunc) (ops.ImageDescriptor, error) {
	if !sameDesc(src[0], src[1]) {
		return src[0], fmt.Errorf("%w: node %q: prediction %s and labels %s differ", ErrShape, node, descString(src[0]), descString(src[1]))
	}
	return src[0], nil
}

func sameDesc(a, b ops.ImageDescriptor) bool {
	return a.N == b.N && a.C == b.C && a.H == b.H && a.W == b.W
}

func descString(d ops.ImageDescriptor) string { return fmt.Sprintf("%dx%dx%dx%d", d.N, d.C, d.H, d.W) }
