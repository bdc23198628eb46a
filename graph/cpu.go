package graph

import (
	"fmt"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
)

// EvalCPU runs the graph on the CPU in float64 with the reference kernels
// of ops/ref: the same shapes, padding policies and gradient rules as a
// compiled graph, for checking GPU results and taking finite differences.
// Inputs are given by name with their shapes; it returns the outputs (as
// Compile chooses them) by name.
func (g *Graph) EvalCPU(shapes map[string]ops.ImageDescriptor, feeds map[string][]float64, outputs ...*Image) (map[string][]float64, error) {
	outs := outputs
	if len(outs) == 0 {
		outs = g.sinks()
	}
	for _, o := range outs {
		if o == nil || o.g != g {
			return nil, fmt.Errorf("%w: EvalCPU: an output is nil or belongs to another graph", ErrGraph)
		}
	}
	order, err := g.selectNodes(outs)
	if err != nil {
		return nil, err
	}
	desc, err := inferShapes(g, order, outs, shapes)
	if err != nil {
		return nil, err
	}
	val := map[*Image]ref.Tensor[float64]{}
	for im, d := range desc {
		if im.producer != nil {
			continue
		}
		data, ok := feeds[im.name]
		if !ok {
			return nil, fmt.Errorf("%w: input %q not fed", ErrGraph, im.name)
		}
		t, err := ref.TensorOf(d.N, d.C, d.H, d.W, data)
		if err != nil {
			return nil, fmt.Errorf("%w: input %q: %v", ErrShape, im.name, err)
		}
		val[im] = t
	}
	for _, n := range order {
		d := desc[n.result]
		src := make([]ref.Tensor[float64], len(n.sources))
		for i, s := range n.sources {
			src[i] = val[s]
		}
		out, err := evalNode(n, src, d, desc)
		if err != nil {
			return nil, fmt.Errorf("node %q: %w", n.name, err)
		}
		val[n.result] = out
	}
	res := make(map[string][]float64, len(outs))
	for _, o := range outs {
		res[o.name] = val[o].Data
	}
	return res, nil
}

var refKinds = map[ops.PoolingKind]ref.Kind{ops.KindMax: ref.Max, ops.KindAverage: ref.Average, ops.KindL2Norm: ref.L2Norm, ops.KindDilatedMax: ref.DilatedMax}

// refGeometry is the reference geometry a pooling node runs with on a
// source of shape src: its padding policy's offset, edge mode and pads, set
// on the kernel exactly as ops does.
func (o *poolOp) refGeometry(node string, src ops.ImageDescriptor) (ref.Geometry, error) {
	r, err := o.resolve(node, src)
	if err != nil {
		return ref.Geometry{}, err
	}
	g := o.geom
	rg := ref.Geometry{Kind: refKinds[o.kind], KernelW: g.KernelWidth, KernelH: g.KernelHeight,
		StrideX: g.StrideX, StrideY: g.StrideY, DilationX: g.DilationX, DilationY: g.DilationY,
		OffsetX: r.OffsetX, OffsetY: r.OffsetY, EdgeMode: r.EdgeMode}
	if o.kind == ops.KindAverage {
		rg.ZeroPad, rg.ExcludeEdges, rg.Pads = r.ZeroPad, r.ExcludeEdges, r.Pads
	}
	return rg, nil
}

func evalNode(n *Node, src []ref.Tensor[float64], d ops.ImageDescriptor, desc map[*Image]ops.ImageDescriptor) (ref.Tensor[float64], error) {
	out := ref.NewTensor[float64](d.N, d.C, d.H, d.W)
	switch o := n.op.(type) {
	case *poolOp:
		rg, err := o.refGeometry(n.name, desc[n.sources[0]])
		if err != nil {
			return out, err
		}
		return out, ref.Pool(rg, src[0], &out)
	case *poolGradOp:
		rg, err := o.fwd.refGeometry(n.name, desc[n.sources[1]])
		if err != nil {
			return out, err
		}
		return out, ref.PoolGradient(rg, src[1], src[0], &out)
	case concatOp:
		off := 0
		for _, s := range src {
			copyChannels(s, 0, &out, off, s.C)
			off += s.C
		}
	case sliceOp:
		copyChannels(src[0], o.offset, &out, 0, o.count)
	case *concatSliceOp:
		off, count, err := o.span(n.name, func(im *Image) (ops.ImageDescriptor, bool) { v, ok := desc[im]; return v, ok })
		if err != nil {
			return out, err
		}
		copyChannels(src[0], off, &out, 0, count)
	case *unsliceOp:
		so := o.slice.op.(sliceOp)
		copyChannels(src[0], 0, &out, so.offset, so.count)
	case addOp:
		for i := range out.Data {
			out.Data[i] = src[0].Data[i] + src[1].Data[i]
		}
	case identityOp:
		copy(out.Data, src[0].Data)
	case lossOp:
		v, err := ref.Loss(ref.LossType(o.desc.Type), ref.Reduction(o.desc.Reduction), src[0], src[1])
		if err != nil {
			return out, err
		}
		w := weightOf(o.desc)
		for i := range out.Data {
			out.Data[i] = w * v[i]
		}
	case lossGradOp:
		v, err := ref.LossGradient(ref.LossType(o.desc.Type), ref.Reduction(o.desc.Reduction), src[0], src[1])
		if err != nil {
			return out, err
		}
		w := weightOf(o.desc)
		for i := range out.Data {
			out.Data[i] = w * v[i]
		}
	default:
		return out, fmt.Errorf("%w: no CPU implementation of %s", ErrGraph, n.op.name())
	}
	return out, nil
}

func weightOf(d ops.LossDescriptor) float64 {
	if d.Weight == 0 {
		return 1
	}
	return float64(d.Weight)
}

// copyChannels copies count channels of src from channel so into dst from
// channel do, for every batch image.
func copyChannels(src ref.Tensor[float64], so int, dst *ref.Tensor[float64], do, count int) {
	plane := src.H * src.W
	for b := 0; b < src.N; b++ {
		from := (b*src.C + so) * plane
		to := (b*dst.C + do) * plane
		copy(dst.Data[to:to+count*plane], src.Data[from:from+count*plane])
	}
}
