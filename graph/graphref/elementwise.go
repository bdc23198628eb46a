package graphref

import (
	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
)

// refNeuron is the reference form of a neuron descriptor; slopes, when
// given, are PReLU's (from its parameter image).
func refNeuron(d ops.NeuronDescriptor, slopes []float64) ref.Neuron {
	n := ref.Neuron{Type: ref.NeuronType(d.Type), A: float64(d.A), B: float64(d.B), C: float64(d.C)}
	if d.Type == ops.NeuronPReLU {
		n.PReLU = slopes
		if n.PReLU == nil {
			for _, a := range d.PReLU {
				n.PReLU = append(n.PReLU, float64(a))
			}
		}
	}
	return n
}

func setData(dst *ref.Tensor[float64], v []float64, err error) error {
	if err != nil {
		return err
	}
	copy(dst.Data, v)
	return nil
}

func refArithmetic(d ops.ArithmeticDescriptor) ref.Arithmetic {
	return ref.Arithmetic{Op: ref.ArithmeticOp(d.Op), PrimaryScale: float64(d.PrimaryScale), SecondaryScale: float64(d.SecondaryScale),
		Bias: float64(d.Bias), Minimum: float64(d.Minimum), Maximum: float64(d.Maximum)}
}

func init() {
	for _, op := range []ops.ArithmeticOp{ops.ArithmeticAdd, ops.ArithmeticSubtract, ops.ArithmeticMultiply, ops.ArithmeticDivide} {
		register(op.String(), func(c *evalCtx) error {
			o := c.n.Operation().(graph.ArithmeticOp)
			v, err := ref.ArithmeticForward(refArithmetic(o.Desc), c.src[0], c.src[1])
			return setData(&c.dst[0], v.Data, err)
		})
		register(op.String()+"-gradient", func(c *evalCtx) error {
			o := c.n.Operation().(graph.ArithmeticGradientOp)
			v, err := ref.ArithmeticGradient(refArithmetic(o.Desc), c.src[0], c.src[1], c.src[2], o.Secondary)
			return setData(&c.dst[0], v.Data, err)
		})
	}
	register("neuron", func(c *evalCtx) error {
		o := c.n.Operation().(graph.NeuronOp)
		var slopes []float64
		if len(c.src) > 1 {
			slopes = c.src[1].Data
		}
		v, err := ref.NeuronForward(refNeuron(o.Desc, slopes), c.src[0])
		return setData(&c.dst[0], v, err)
	})
	register("neuron-gradient", func(c *evalCtx) error {
		o := c.n.Operation().(graph.NeuronGradientOp)
		dy, src := c.src[0], c.src[1:]
		if o.SumDy { // two contributions to dy
			sum := dy
			sum.Data = append([]float64(nil), dy.Data...)
			for i, v := range src[0].Data {
				sum.Data[i] += v
			}
			dy, src = sum, src[1:]
		}
		var slopes []float64
		if len(src) > 1 {
			slopes = src[1].Data
		}
		v, err := ref.NeuronGradient(refNeuron(o.Desc, slopes), dy, src[0])
		return setData(&c.dst[0], v, err)
	})
	register("prelu-slope-gradient", func(c *evalCtx) error {
		v, err := ref.PReLUSlopeGradient(c.src[0], c.src[1])
		return setData(&c.dst[0], v, err)
	})
	for _, log := range []bool{false, true} {
		name := graph.SoftMaxOp{Log: log}.Name()
		register(name, func(c *evalCtx) error {
			v, err := ref.SoftMax(c.src[0], log)
			return setData(&c.dst[0], v, err)
		})
		register(name+"-gradient", func(c *evalCtx) error {
			v, err := ref.SoftMaxGradient(c.src[0], c.src[1], log)
			return setData(&c.dst[0], v, err)
		})
	}
}

func refUpsampling(d ops.UpsamplingDescriptor) ref.Upsampling {
	return ref.Upsampling{ScaleX: d.ScaleX, ScaleY: d.ScaleY, Bilinear: d.Bilinear, AlignCorners: d.AlignCorners}
}

func init() {
	for _, name := range []string{"upsample_nearest", "upsample_bilinear"} {
		register(name, func(c *evalCtx) error {
			o := c.n.Operation().(graph.UpsamplingOp)
			v, err := ref.Upsample(refUpsampling(o.Desc), c.src[0])
			return setData(&c.dst[0], v.Data, err)
		})
		register(name+"-gradient", func(c *evalCtx) error {
			o := c.n.Operation().(graph.UpsamplingGradientOp)
			v, err := ref.UpsampleGradient(refUpsampling(o.Desc), c.src[0], c.dst[0].Shape())
			return setData(&c.dst[0], v.Data, err)
		})
	}
}

// refDropout is the first draw of a dropout node's mask (a compiled
// graph's first run).
func refDropout(d ops.DropoutDescriptor) ref.Dropout {
	return ref.Dropout{KeepProbability: d.KeepProbability, Seed: d.Seed, StrideX: d.MaskStride.X, StrideY: d.MaskStride.Y, StrideC: d.MaskStride.FeatureChannel}
}

func init() {
	register("dropout", func(c *evalCtx) error {
		if c.mode != graph.ModeTraining {
			copy(c.dst[0].Data, c.src[0].Data)
			return nil
		}
		d := refDropout(c.n.Operation().(graph.DropoutOp).Desc)
		v, err := ref.DropoutForward(d, d.Mask(c.src[0].Shape()), c.src[0])
		return setData(&c.dst[0], v.Data, err)
	})
	register("dropout-gradient", func(c *evalCtx) error {
		if c.mode != graph.ModeTraining {
			copy(c.dst[0].Data, c.src[0].Data)
			return nil
		}
		d := refDropout(c.n.Operation().(graph.DropoutGradientOp).Desc)
		v, err := ref.DropoutGradient(d, d.Mask(c.src[0].Shape()), c.src[0])
		return setData(&c.dst[0], v.Data, err)
	})
}
