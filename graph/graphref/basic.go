package graphref

import (
	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
)

var refKinds = map[ops.PoolingKind]ref.Kind{ops.KindMax: ref.Max, ops.KindAverage: ref.Average, ops.KindL2Norm: ref.L2Norm, ops.KindDilatedMax: ref.DilatedMax}

// poolGeometry is the reference geometry a pooling node runs with on a
// source of shape src: its padding policy's offset, edge mode and pads,
// set on the kernel exactly as ops does.
func poolGeometry(o *graph.PoolingOp, node string, src ops.ImageDescriptor) (ref.Geometry, error) {
	r, err := o.Resolve(node, src)
	if err != nil {
		return ref.Geometry{}, err
	}
	g := o.Geometry
	rg := ref.Geometry{Kind: refKinds[o.Kind], KernelW: g.KernelWidth, KernelH: g.KernelHeight,
		StrideX: g.StrideX, StrideY: g.StrideY, DilationX: g.DilationX, DilationY: g.DilationY,
		OffsetX: r.OffsetX, OffsetY: r.OffsetY, EdgeMode: r.EdgeMode}
	if o.Kind == ops.KindAverage {
		rg.ZeroPad, rg.ExcludeEdges, rg.Pads = r.ZeroPad, r.ExcludeEdges, r.Pads
	}
	return rg, nil
}

func init() {
	for _, name := range []string{"max", "avg", "l2", "dilated-max"} {
		register(name, func(c *evalCtx) error {
			o := c.n.Operation().(*graph.PoolingOp)
			rg, err := poolGeometry(o, c.n.Name(), c.srcDesc(0))
			if err != nil {
				return err
			}
			return ref.Pool(rg, c.src[0], &c.dst[0])
		})
		register(name+"-gradient", func(c *evalCtx) error {
			o := c.n.Operation().(*graph.PoolingGradientOp)
			rg, err := poolGeometry(o.Forward, c.n.Name(), c.srcDesc(1))
			if err != nil {
				return err
			}
			return ref.PoolGradient(rg, c.src[1], c.src[0], &c.dst[0])
		})
	}
	register("concat", func(c *evalCtx) error {
		off := 0
		for _, s := range c.src {
			copyChannels(s, 0, &c.dst[0], off, s.C)
			off += s.C
		}
		return nil
	})
	register("slice", func(c *evalCtx) error {
		switch o := c.n.Operation().(type) {
		case graph.SliceOp:
			copyChannels(c.src[0], o.Offset, &c.dst[0], 0, o.Count)
		case *graph.ConcatGradientOp:
			off, count, err := o.Span(c.n.Name(), c.shapeOf)
			if err != nil {
				return err
			}
			copyChannels(c.src[0], off, &c.dst[0], 0, count)
		}
		return nil
	})
	register("unslice", func(c *evalCtx) error {
		so := c.n.Operation().(*graph.UnsliceOp).Slice.Operation().(graph.SliceOp)
		copyChannels(c.src[0], 0, &c.dst[0], so.Offset, so.Count)
		return nil
	})
	register("sum", func(c *evalCtx) error {
		for i := range c.dst[0].Data {
			c.dst[0].Data[i] = c.src[0].Data[i] + c.src[1].Data[i]
		}
		return nil
	})
	register("identity", func(c *evalCtx) error {
		copy(c.dst[0].Data, c.src[0].Data)
		return nil
	})
	register("loss", func(c *evalCtx) error {
		d := c.n.Operation().(graph.LossOp).Desc
		v, err := ref.LossWith(refLoss(d), c.src[0], c.src[1], weights(c.src))
		return setData(&c.dst[0], v, err)
	})
	register("loss-gradient", func(c *evalCtx) error {
		d := c.n.Operation().(graph.LossGradientOp).Desc
		v, err := ref.LossGradientWith(refLoss(d), c.src[0], c.src[1], weights(c.src))
		return setData(&c.dst[0], v, err)
	})
}

// weights returns a loss's per-item weights, its third source, or nil.
func weights(src []ref.Tensor[float64]) []float64 {
	if len(src) > 2 {
		return src[2].Data
	}
	return nil
}

func refLoss(d ops.LossDescriptor) ref.LossDescriptor {
	return ref.LossDescriptor{Type: ref.LossType(d.Type), Reduction: ref.Reduction(d.Reduction), Weight: float64(d.Weight),
		LabelSmoothing: float64(d.LabelSmoothing), NumberOfClasses: d.NumberOfClasses, Delta: float64(d.Delta), Epsilon: float64(d.Epsilon)}
}
