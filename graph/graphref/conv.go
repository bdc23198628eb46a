package graphref

import (
	"fmt"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
)

// refConv returns the reference geometry of a convolution-family node on a
// source of shape src: PyTorch's first-tap pads from the padding result.
func refConv(o *graph.ConvolutionOp, node string, src ops.ImageDescriptor) (ref.Conv, error) {
	d := o.Desc
	if o.Kind == graph.ConvFullyConnected {
		return ref.Conv{}, nil
	}
	var res struct{ x, y int }
	if o.Kind == graph.ConvForward {
		_, r, err := d.ResultDescriptor(src, o.Padding)
		if err != nil {
			return ref.Conv{}, err
		}
		res.x, res.y = r.OffsetX, r.OffsetY
	} else {
		_, r, err := d.TransposeResultDescriptor(src, o.Padding)
		if err != nil {
			return ref.Conv{}, err
		}
		res.x, res.y = r.OffsetX, r.OffsetY
	}
	keX := (d.KernelWidth-1)*d.DilationX + 1
	keY := (d.KernelHeight-1)*d.DilationY + 1
	g := ref.Conv{KernelW: d.KernelWidth, KernelH: d.KernelHeight, StrideX: d.StrideX, StrideY: d.StrideY,
		DilationX: d.DilationX, DilationY: d.DilationY, Groups: d.Groups}
	if o.Kind == graph.ConvForward {
		g.PadLeft, g.PadTop = keX/2-res.x, keY/2-res.y
	} else {
		// ops: offset = before + floor(ke/2) - (ke-1).
		g.PadLeft, g.PadTop = res.x-keX/2+keX-1, res.y-keY/2+keY-1
	}
	return g, nil
}

func bias(src []ref.Tensor[float64]) []float64 {
	if len(src) > 2 {
		return src[2].Data
	}
	return nil
}

func init() {
	for _, name := range []string{"conv", "conv_transpose", "fully_connected"} {
		register(name, func(c *evalCtx) error {
			o := c.n.Operation().(*graph.ConvolutionOp)
			x, w := c.src[0], c.src[1]
			switch o.Kind {
			case graph.ConvForward:
				g, err := refConv(o, c.n.Name(), c.srcDesc(0))
				if err != nil {
					return err
				}
				return ref.ConvForward(g, x, w, bias(c.src), &c.dst[0])
			case graph.ConvTranspose:
				g, err := refConv(o, c.n.Name(), c.srcDesc(0))
				if err != nil {
					return err
				}
				return ref.ConvTransposeForward(g, x, w, bias(c.src), &c.dst[0])
			}
			return ref.FullyConnected(x, w, bias(c.src), ref.Neuron{}, &c.dst[0])
		})
		register(name+"-data-gradient", func(c *evalCtx) error {
			o := c.n.Operation().(*graph.ConvolutionDataGradientOp)
			xd := c.desc[o.Node.Sources()[0]]
			dy, w := c.src[0], c.src[1]
			switch o.Forward.Kind {
			case graph.ConvForward:
				g, err := refConv(o.Forward, c.n.Name(), xd)
				if err != nil {
					return err
				}
				return ref.ConvGradData(g, dy, w, &c.dst[0])
			case graph.ConvTranspose:
				g, err := refConv(o.Forward, c.n.Name(), xd)
				if err != nil {
					return err
				}
				return ref.ConvTransposeGradData(g, dy, w, &c.dst[0])
			}
			wt := ref.Tensor[float64]{N: w.N, C: w.C * w.H * w.W, H: 1, W: 1, Data: w.Data}
			x := ref.NewTensor[float64](xd.N, xd.C, xd.H, xd.W)
			if err := ref.FullyConnectedGrad(x, wt, dy, &c.dst[0], nil, nil); err != nil {
				return err
			}
			return nil
		})
		register(name+"-weights-gradient", func(c *evalCtx) error {
			o := c.n.Operation().(*graph.ConvolutionWeightsGradientOp)
			dy, x := c.src[0], c.src[1]
			var dw *ref.Tensor[float64]
			var db []float64
			k := 0
			if o.Weights {
				dw, k = &c.dst[0], 1
			}
			if o.Bias {
				db = c.dst[k].Data
			}
			if dw == nil {
				return fmt.Errorf("a bias gradient without the weights' is not supported")
			}
			switch o.Forward.Kind {
			case graph.ConvForward:
				g, err := refConv(o.Forward, c.n.Name(), c.srcDesc(1))
				if err != nil {
					return err
				}
				return ref.ConvGradWeights(g, x, dy, dw, db)
			case graph.ConvTranspose:
				g, err := refConv(o.Forward, c.n.Name(), c.srcDesc(1))
				if err != nil {
					return err
				}
				return ref.ConvTransposeGradWeights(g, x, dy, dw, db)
			}
			w := ref.Tensor[float64]{N: dw.N, C: dw.C * dw.H * dw.W, H: 1, W: 1, Data: dw.Data}
			return ref.FullyConnectedGrad(x, w, dy, nil, &w, db)
		})
	}
}

func float64s(v []float32) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func init() {
	register("binary_conv", func(c *evalCtx) error {
		o := c.n.Operation().(*graph.BinaryConvolutionOp)
		d := o.Desc
		r, err := d.PaddingFor(c.srcDesc(0).Descriptor(), o.Padding)
		if err != nil {
			return err
		}
		keX := (d.KernelWidth-1)*d.DilationX + 1
		keY := (d.KernelHeight-1)*d.DilationY + 1
		b := ref.BinaryConv{Type: ref.BinaryConvType(d.Type), BetaScaling: d.Flags&ops.BinaryConvolutionUseBetaScaling != 0,
			KernelW: d.KernelWidth, KernelH: d.KernelHeight, StrideX: d.StrideX, StrideY: d.StrideY, DilationX: d.DilationX, DilationY: d.DilationY,
			PadLeft: keX/2 - r.OffsetX, PadTop: keY/2 - r.OffsetY, Weights: float64s(o.Weights.Weights),
			Scale: float64s(o.Weights.OutputScale), Bias: float64s(o.Weights.OutputBias), InputBias: float64s(o.Weights.InputBias),
			InputScale: float64s(o.Weights.InputScale), Neuron: refNeuron(d.Neuron, nil)}
		return ref.BinaryConvolution(b, c.src[0], &c.dst[0])
	})
}
