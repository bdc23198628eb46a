package graph

import (
	"fmt"
	"sort"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// BatchNormOp is a batch normalization (MPSCNNBatchNormalizationNode, JSON
// op "batch_norm"); sources: the image and its parameters "NODE.gamma",
// "NODE.beta" (trainable) and "NODE.running_mean", "NODE.running_var"
// (statistics, updated in place by training runs). A graph compiled for
// training normalizes with the batch's statistics, for inference with the
// running ones. A fused neuron (not PReLU) is applied in the same pass and
// differentiated by the gradient.
type BatchNormOp struct {
	Desc ops.BatchNormalizationDescriptor
}

func (BatchNormOp) Name() string { return "batch_norm" }
func (BatchNormOp) arity() int   { return 5 }

// constSource: the running statistics take no gradient.
func (BatchNormOp) constSource(i int) bool { return i >= 3 }

func (o BatchNormOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	if src[0].C != o.Desc.Channels {
		return nil, c.errorf(ErrShape, "source %s has %d channels, the parameters %d", descString(src[0]), src[0].C, o.Desc.Channels)
	}
	d, err := o.Desc.ResultDescriptor(c.like(src[0]))
	if err != nil {
		return nil, c.errorf(ErrShape, "%v", err)
	}
	return one(c.like(d), nil)
}

func (o BatchNormOp) needsState(gradient Op) bool {
	_, ok := gradient.(*BatchNormGradientOp)
	return ok
}

// bnState is what a compiled batch normalization keeps between its forward
// and gradient steps: the kernel and its state (statistics).
type bnState struct {
	bn *ops.BatchNormalization
	st *ops.BatchNormalizationState
}

func (s *bnState) Close() error {
	err := s.st.Close()
	if e := s.bn.Close(); err == nil {
		err = e
	}
	return err
}

func (o BatchNormOp) build(b *buildCtx) error {
	if x := b.e.desc[b.n.sources[0]]; b.training() && x.N*x.H*x.W == 1 {
		return fmt.Errorf("%w: batch normalization in training on one value per channel (N*H*W == 1): its variance is undefined", ErrShape)
	}
	bn, err := ops.NewBatchNormalization(b.dev, o.Desc, b.src[1], b.src[2], b.src[3], b.src[4])
	if err != nil {
		return err
	}
	st, err := bn.NewState()
	if err != nil {
		bn.Close()
		return err
	}
	b.st.setState(&bnState{bn: bn, st: st})
	src, dst := b.src[0], b.dst[0]
	if b.training() {
		b.encode(func(cb *vk.CommandBuffer) error { return bn.EncodeTraining(cb, src, st, dst) })
		return nil
	}
	b.encode(func(cb *vk.CommandBuffer) error { return bn.EncodeInference(cb, src, dst, st) })
	return nil
}

func (o BatchNormOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	// One node computes dx, dgamma and dbeta in one pass; dx always (the
	// kernel writes it), the parameters' where wanted.
	return normGradients(b, n, dy, wanted, &BatchNormGradientOp{Forward: o, Gamma: wanted[1], Beta: wanted[2]})
}

// BatchNormGradientOp is a batch normalization's gradient (dx, and dgamma
// and dbeta where wanted, in one pass); sources: dy, the forward source;
// the statistics come from the forward step's state.
type BatchNormGradientOp struct {
	Forward     BatchNormOp
	Gamma, Beta bool
}

func (*BatchNormGradientOp) Name() string { return "batch_norm-gradient" }
func (*BatchNormGradientOp) arity() int   { return 2 }

func (o *BatchNormGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	return normGradInfer(c, src, o.Forward.Desc.Channels, o.Gamma, o.Beta)
}

func (o *BatchNormGradientOp) build(b *buildCtx) error {
	s, err := normForwardState[*bnState](b, "batch normalization")
	if err != nil {
		return err
	}
	k, err := ops.NewBatchNormalizationGradient(s.bn)
	if err != nil {
		return err
	}
	b.closer(k)
	dy, x, dx, dgamma, dbeta := b.normGradImages(o.Gamma, o.Beta)
	b.encode(func(cb *vk.CommandBuffer) error { return k.EncodeAll(cb, dy, x, s.st, dx, dgamma, dbeta) })
	return nil
}

// BatchNormOptions give a batch normalization's first parameter values;
// nil means PyTorch's defaults (gamma 1, beta 0, running mean 0, running
// variance 1).
type BatchNormOptions struct {
	Gamma, Beta, RunningMean, RunningVariance *Init
}

// BatchNormalization adds a batch normalization over src with d.Channels
// channels, its parameters named "NAME.gamma", "NAME.beta",
// "NAME.running_mean" and "NAME.running_var". A PReLU neuron becomes its
// own node after it.
func (g *Graph) BatchNormalization(name string, src *Image, d ops.BatchNormalizationDescriptor, o BatchNormOptions) (*Node, error) {
	neuron := d.Neuron
	if neuron.Type == ops.NeuronPReLU {
		d.Neuron = ops.NeuronDescriptor{}
	}
	if err := d.Validate(); err != nil {
		return nil, errorfNode(ErrGraph, name, "%v", err)
	}
	layer := name
	if neuron.Type == ops.NeuronPReLU {
		layer = name + ".linear"
	}
	params, err := g.normParams(name, d.Channels, []normParam{{"gamma", o.Gamma, InitOnes, true}, {"beta", o.Beta, InitZeros, true},
		{"running_mean", o.RunningMean, InitZeros, false}, {"running_var", o.RunningVariance, InitOnes, false}})
	if err != nil {
		return nil, err
	}
	n, err := g.addNorm(layer, BatchNormOp{Desc: d}, src, params)
	if err != nil {
		return nil, err
	}
	if layer == name {
		return n, nil
	}
	return g.Neuron(name, neuron, n.Result())
}

// normSpec is the JSON of batch_norm and instance_norm: parameter files
// (or, without them, "channels" and PyTorch's default values), epsilon,
// momentum (batch_norm), a fused neuron.
type normSpec struct {
	specBase
	Gamma       string      `json:"gamma,omitempty"`
	Beta        string      `json:"beta,omitempty"`
	RunningMean string      `json:"running_mean,omitempty"`
	RunningVar  string      `json:"running_var,omitempty"`
	Channels    int         `json:"channels,omitempty"`
	Epsilon     *float32    `json:"epsilon,omitempty"`
	Momentum    *float32    `json:"momentum,omitempty"`
	Neuron      *neuronSpec `json:"neuron,omitempty"`
}

// vectors reads the named per-channel parameter files; it returns their
// values by field (nil where not given) and the channel count they agree
// on (or s.Channels).
func (s normSpec) vectors(p *parseCtx, fields map[string]string) (map[string]*Init, int, error) {
	out := map[string]*Init{}
	c := s.Channels
	names := make([]string, 0, len(fields))
	for field := range fields {
		names = append(names, field)
	}
	sort.Strings(names) // errors name the same file on every run
	for _, field := range names {
		file := fields[field]
		if file == "" {
			continue
		}
		v, _, err := readParamFile(p.fsys, p.name, field, file)
		if err != nil {
			return nil, 0, err
		}
		if c != 0 && len(v) != c {
			return nil, 0, p.bad("%s %s has %d values, want %d (one per channel)", field, file, len(v), c)
		}
		c = len(v)
		out[field] = &Init{Data: v}
	}
	if c < 1 {
		return nil, 0, p.bad("give the parameter files or \"channels\"")
	}
	return out, c, nil
}

func init() {
	registerOp("batch_norm", opSpec{sources: 1, doc: "gamma, beta, running_mean, running_var, epsilon, momentum, channels, neuron", parse: func(p *parseCtx) error {
		var s normSpec
		if err := p.decode(&s); err != nil {
			return err
		}
		files, c, err := s.vectors(p, map[string]string{"gamma": s.Gamma, "beta": s.Beta, "running_mean": s.RunningMean, "running_var": s.RunningVar})
		if err != nil {
			return err
		}
		d := ops.NewBatchNormalizationDescriptor(c)
		if s.Epsilon != nil {
			d.Epsilon = *s.Epsilon
		}
		if s.Momentum != nil {
			d.Momentum = *s.Momentum
		}
		if s.Neuron != nil {
			if d.Neuron, err = s.Neuron.descriptor(); err != nil {
				return p.bad("neuron: %v", err)
			}
		}
		_, err = p.g.BatchNormalization(p.name, p.src[0], d, BatchNormOptions{Gamma: files["gamma"], Beta: files["beta"],
			RunningMean: files["running_mean"], RunningVariance: files["running_var"]})
		return err
	}})
}
