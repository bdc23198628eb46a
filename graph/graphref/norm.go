package graphref

import (
	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops/ref"
)

func init() {
	register("batch_norm", func(c *evalCtx) error {
		o := c.n.Operation().(graph.BatchNormOp)
		b := ref.BatchNorm{Epsilon: float64(o.Desc.Epsilon), Neuron: refNeuron(o.Desc.Neuron, nil)}
		mean, variance := c.src[3].Data, c.src[4].Data
		if c.mode == graph.ModeTraining {
			mean, variance = ref.BatchNormStatistics(c.src[0])
		}
		return b.Forward(c.src[0], c.src[1].Data, c.src[2].Data, mean, variance, &c.dst[0])
	})
	register("batch_norm-gradient", func(c *evalCtx) error {
		o := c.n.Operation().(*graph.BatchNormGradientOp)
		fwd := c.n.Forward()
		src := fwd.Sources()
		// The parameters' values, as the forward node read them.
		vals := c.values
		gamma, beta := vals[src[1]].Data, vals[src[2]].Data
		mean, variance := vals[src[3]].Data, vals[src[4]].Data
		training := c.mode == graph.ModeTraining
		if training {
			mean, variance = ref.BatchNormStatistics(c.src[1])
		}
		b := ref.BatchNorm{Epsilon: float64(o.Forward.Desc.Epsilon), Neuron: refNeuron(o.Forward.Desc.Neuron, nil)}
		dgamma := make([]float64, len(gamma))
		dbeta := make([]float64, len(gamma))
		if err := b.Gradient(c.src[1], c.src[0], gamma, beta, mean, variance, training, &c.dst[0], dgamma, dbeta); err != nil {
			return err
		}
		i := 1
		if o.Gamma {
			copy(c.dst[i].Data, dgamma)
			i++
		}
		if o.Beta {
			copy(c.dst[i].Data, dbeta)
		}
		return nil
	})
}

func init() {
	register("instance_norm", func(c *evalCtx) error {
		o := c.n.Operation().(graph.InstanceNormOp)
		return ref.InstanceNorm{Epsilon: float64(o.Desc.Epsilon)}.Forward(c.src[0], c.src[1].Data, c.src[2].Data, &c.dst[0])
	})
	register("instance_norm-gradient", func(c *evalCtx) error {
		o := c.n.Operation().(*graph.InstanceNormGradientOp)
		gamma := c.values[c.n.Forward().Sources()[1]].Data
		dgamma, dbeta := make([]float64, len(gamma)), make([]float64, len(gamma))
		if err := (ref.InstanceNorm{Epsilon: float64(o.Forward.Desc.Epsilon)}).Gradient(c.src[1], c.src[0], gamma, &c.dst[0], dgamma, dbeta); err != nil {
			return err
		}
		i := 1
		if o.Gamma {
			copy(c.dst[i].Data, dgamma)
			i++
		}
		if o.Beta {
			copy(c.dst[i].Data, dbeta)
		}
		return nil
	})
	type windowRef interface {
		Forward(x ref.Tensor[float64], y *ref.Tensor[float64]) error
		Gradient(x, dy ref.Tensor[float64], dx *ref.Tensor[float64]) error
	}
	windowOf := func(o *graph.WindowNormOp) windowRef {
		switch o.Kind {
		case graph.CrossChannelNorm:
			d := o.CrossChannel
			return ref.CrossChannelNorm{Size: d.KernelSize, Alpha: float64(d.Alpha), Beta: float64(d.Beta), Delta: float64(d.Delta)}
		case graph.SpatialNorm:
			d := o.Spatial
			return ref.SpatialNorm{KernelW: d.KernelWidth, KernelH: d.KernelHeight, Alpha: float64(d.Alpha), Beta: float64(d.Beta), Delta: float64(d.Delta)}
		}
		d := o.LocalContrast
		return ref.LocalContrastNorm{KernelW: d.KernelWidth, KernelH: d.KernelHeight, Alpha: float64(d.Alpha), Beta: float64(d.Beta),
			Delta: float64(d.Delta), P0: float64(d.P0), PM: float64(d.PM), PS: float64(d.PS)}
	}
	for _, name := range []string{"cross_channel_norm", "spatial_norm", "local_contrast_norm"} {
		register(name, func(c *evalCtx) error {
			return windowOf(c.n.Operation().(*graph.WindowNormOp)).Forward(c.src[0], &c.dst[0])
		})
		register(name+"-gradient", func(c *evalCtx) error {
			return windowOf(c.n.Operation().(*graph.WindowNormGradientOp).Forward).Gradient(c.src[1], c.src[0], &c.dst[0])
		})
	}
}
