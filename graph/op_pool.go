package graph

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// PoolingOp is a pooling node (MPSCNNPoolingMaxNode, ...AverageNode,
// ...L2NormNode, MPSCNNDilatedPoolingMaxNode): JSON ops "max", "avg",
// "l2", "dilated-max".
type PoolingOp struct {
	Kind     ops.PoolingKind
	Geometry ops.Geometry
	Padding  padding.Policy
	EdgeMode ops.EdgeMode
	ZeroPad  padding.Pads
}

var poolNames = map[ops.PoolingKind]string{ops.KindMax: "max", ops.KindAverage: "avg", ops.KindL2Norm: "l2", ops.KindDilatedMax: "dilated-max"}

func (o *PoolingOp) Name() string { return poolNames[o.Kind] }
func (o *PoolingOp) arity() int   { return 1 }

// Resolve applies the node's padding policy to a source of shape src, as
// the kernel's EncodeNew will.
func (o *PoolingOp) Resolve(node string, src ops.ImageDescriptor) (padding.Result, error) {
	g := o.Geometry
	r, err := padding.Resolve(o.Padding, []padding.Descriptor{src.Descriptor()}, nil, padding.Kernel{Name: node,
		KernelW: g.KernelWidth, KernelH: g.KernelHeight, StrideX: g.StrideX, StrideY: g.StrideY,
		DilationX: g.DilationX, DilationY: g.DilationY, EdgeMode: o.EdgeMode, ZeroPad: o.ZeroPad})
	if err != nil {
		return r, fmt.Errorf("%w: node %q: %v", ErrShape, node, err)
	}
	return r, nil
}

func (o *PoolingOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	r, err := o.Resolve(c.node, src[0])
	if err != nil {
		return nil, err
	}
	return one(c.like(ops.ImageDescriptor{N: r.Dest.N, C: r.Dest.C, H: r.Dest.H, W: r.Dest.W}), nil)
}

func (o *PoolingOp) needsState(gradient Op) bool { _, ok := gradient.(*PoolingGradientOp); return ok }

func (o *PoolingOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	gi, err := b.add(0, &PoolingGradientOp{Forward: o}, dy, n.sources[0])
	return []*Image{gi}, err
}

func (o *PoolingOp) build(b *buildCtx) error {
	k, err := ops.NewPooling(b.dev, o.Kind, o.Geometry)
	if err != nil {
		return err
	}
	p := k.Properties()
	p.Padding, p.EdgeMode, p.Allocator, p.Label = o.Padding, o.EdgeMode, planned{b.dst[0]}, b.n.name
	if a, ok := k.(*ops.PoolingAverage); ok {
		a.ZeroPad = o.ZeroPad
	}
	src, st := b.src[0], b.st
	if !b.needsState {
		b.encode(func(cb *vk.CommandBuffer) error {
			_, err := k.EncodeNew(cb, src)
			return err
		})
		return nil
	}
	if b.opts.RecordArgmax {
		k.SetRecordArgmax(true)
	}
	b.encode(func(cb *vk.CommandBuffer) error {
		_, s, err := k.EncodeNewWithState(cb, src)
		if err != nil {
			return err
		}
		st.setState(s)
		return nil
	})
	return nil
}

// PoolingGradientOp is the gradient of a pooling node; sources: the
// gradient of the forward result, the forward source.
type PoolingGradientOp struct{ Forward *PoolingOp }

func (o *PoolingGradientOp) Name() string { return o.Forward.Name() + "-gradient" }
func (o *PoolingGradientOp) arity() int   { return 2 }

func (o *PoolingGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	want, err := o.Forward.infer(c, src[1:2])
	if err != nil {
		return nil, err
	}
	if !sameDesc(src[0], want[0]) {
		return nil, c.errorf(ErrShape, "source gradient %s, but the forward result is %s", descString(src[0]), descString(want[0]))
	}
	return one(c.like(src[1]), nil)
}

func (o *PoolingGradientOp) build(b *buildCtx) error {
	k, err := ops.NewPoolingGradient(b.dev, o.Forward.Kind, o.Forward.Geometry)
	if err != nil {
		return err
	}
	p := k.Properties()
	p.Allocator, p.Label = planned{b.dst[0]}, b.n.name
	fwd, err := b.forwardStep()
	if err != nil {
		return err
	}
	dy, src := b.src[0], b.src[1]
	b.encode(func(cb *vk.CommandBuffer) error {
		s, _ := fwd.state.(*ops.PoolingGradientState)
		_, err := k.EncodeNew(cb, dy, src, s)
		return err
	})
	return nil
}

// PoolingOptions configure a pooling node. The zero value gives MPS's
// node defaults: padding.WithMethod(padding.Same) and EdgeClamp.
type PoolingOptions struct {
	// Padding sizes the result and places the windows; nil means
	// padding.WithMethod(padding.Same).
	Padding padding.Policy
	// EdgeMode; the graph's pooling nodes default to EdgeClamp (MPS), so
	// EdgeZero must be asked for with EdgeSet.
	EdgeMode ops.EdgeMode
	EdgeSet  bool
	// ZeroPad (average pooling under EdgeClamp).
	ZeroPad padding.Pads
}

// Pooling adds a pooling node (MPSCNNPoolingMaxNode, ...AverageNode,
// ...L2NormNode, MPSCNNDilatedPoolingMaxNode) of kind and geometry over src.
func (g *Graph) Pooling(name string, kind ops.PoolingKind, geom ops.Geometry, src *Image, o PoolingOptions) (*Node, error) {
	if _, ok := poolNames[kind]; !ok {
		return nil, fmt.Errorf("%w: node %q: unknown pooling kind %v", ErrGraph, name, kind)
	}
	if geom.DilationX == 0 {
		geom.DilationX = 1
	}
	if geom.DilationY == 0 {
		geom.DilationY = 1
	}
	if (kind == ops.KindAverage || kind == ops.KindL2Norm) && (geom.DilationX != 1 || geom.DilationY != 1) {
		return nil, fmt.Errorf("%w: node %q: %v has no dilation", ErrGraph, name, kind)
	}
	if kind == ops.KindMax && (geom.DilationX != 1 || geom.DilationY != 1) {
		kind = ops.KindDilatedMax
	}
	if err := validGeometry(name, geom); err != nil {
		return nil, err
	}
	edge := ops.EdgeClamp
	if o.EdgeSet {
		edge = o.EdgeMode
	}
	if !edge.Valid() {
		return nil, fmt.Errorf("%w: node %q: edge mode %v", ErrGraph, name, edge)
	}
	pol := o.Padding
	if pol == nil {
		pol = padding.WithMethod(padding.Same)
	}
	return g.add(name, &PoolingOp{Kind: kind, Geometry: geom, Padding: pol, EdgeMode: edge, ZeroPad: o.ZeroPad}, []*Image{src}, nil)
}

func validGeometry(name string, g ops.Geometry) error {
	for _, v := range []struct {
		what string
		n    int
	}{{"kernel width", g.KernelWidth}, {"kernel height", g.KernelHeight}, {"stride x", g.StrideX}, {"stride y", g.StrideY},
		{"dilation x", g.DilationX}, {"dilation y", g.DilationY}} {
		if v.n < 1 {
			return fmt.Errorf("%w: node %q: %s %d < 1", ErrGraph, name, v.what, v.n)
		}
	}
	return nil
}

// windowSpec is the JSON of a node with a window: pooling, convolution,
// binary convolution. Pairs are [H, W] or one number for both.
type windowSpec struct {
	Kernel   Ints            `json:"kernel,omitempty"`
	Stride   Ints            `json:"stride,omitempty"`
	Dilation Ints            `json:"dilation,omitempty"`
	Padding  json.RawMessage `json:"padding,omitempty"`
}

// strides returns the stride and dilation (default 1).
func (w windowSpec) strides() (sy, sx, dy, dx int, err error) {
	sy, sx, dy, dx = 1, 1, 1, 1
	if w.Stride != nil {
		if sy, sx, err = pair("stride", w.Stride, 1); err != nil {
			return
		}
	}
	if w.Dilation != nil {
		dy, dx, err = pair("dilation", w.Dilation, 1)
	}
	return
}

// poolSpec is the JSON of a pooling node.
type poolSpec struct {
	specBase
	windowSpec
	Edge    string `json:"edge,omitempty"`
	ZeroPad Ints   `json:"zero_pad,omitempty"`
}

var poolKinds = map[string]ops.PoolingKind{"max": ops.KindMax, "avg": ops.KindAverage, "l2": ops.KindL2Norm, "dilated-max": ops.KindDilatedMax}

func init() {
	for name, kind := range poolKinds {
		registerOp(name, opSpec{sources: 1, doc: "pooling: kernel, stride, dilation, padding, edge, zero_pad (avg)",
			parse: func(p *parseCtx) error { return parsePooling(p, kind) }})
	}
}

func parsePooling(p *parseCtx, kind ops.PoolingKind) error {
	var s poolSpec
	if err := p.decode(&s); err != nil {
		return err
	}
	var geom ops.Geometry
	var err error
	if s.Kernel == nil {
		return p.bad("kernel is required")
	}
	if geom.KernelHeight, geom.KernelWidth, err = pair("kernel", s.Kernel, 1); err != nil {
		return p.bad("%v", err)
	}
	if geom.StrideY, geom.StrideX, geom.DilationY, geom.DilationX, err = s.strides(); err != nil {
		return p.bad("%v", err)
	}
	var o PoolingOptions
	if o.Padding, err = parsePadding(s.Padding); err != nil {
		return p.bad("%v", err)
	}
	// {"pad": [...]} is PyTorch's padding: it refuses a pad over half the
	// window's extent (such windows would lie wholly in the padding).
	var ps paddingSpec
	if json.Unmarshal(s.Padding, &ps) == nil && ps.Pad != nil {
		pd, _ := pads("padding.pad", ps.Pad)
		keY := (geom.KernelHeight-1)*geom.DilationY + 1
		keX := (geom.KernelWidth-1)*geom.DilationX + 1
		for _, v := range []struct {
			side   string
			pad, k int
		}{{"top", pd.Top, keY}, {"bottom", pd.Bottom, keY}, {"left", pd.Left, keX}, {"right", pd.Right, keX}} {
			if v.pad > v.k/2 {
				return p.bad("padding: the %s pad %d is more than half the window's extent %d (PyTorch refuses it: windows would lie wholly in the padding)", v.side, v.pad, v.k)
			}
		}
	}
	switch strings.ToLower(s.Edge) {
	case "", "clamp":
	case "zero":
		o.EdgeMode, o.EdgeSet = ops.EdgeZero, true
	default:
		return p.bad("edge %q: want zero or clamp", s.Edge)
	}
	if s.ZeroPad != nil {
		if kind != ops.KindAverage {
			return p.bad("zero_pad applies to avg only")
		}
		if o.ZeroPad, err = pads("zero_pad", s.ZeroPad); err != nil {
			return p.bad("%v", err)
		}
	}
	_, err = p.g.Pooling(p.name, kind, geom, p.src[0], o)
	return err
}
