package graph

import (
	"errors"
	"fmt"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// BinaryConvolutionOp is a binary convolution (MPSCNNBinaryConvolutionNode,
// JSON op "binary_conv"), inference only as in MPS: its weights and terms
// are constants of the node (not parameters), and training through it is
// an error.
type BinaryConvolutionOp struct {
	Desc    ops.BinaryConvolutionDescriptor
	Weights ops.BinaryConvolutionWeights
	Padding padding.Policy
}

func (*BinaryConvolutionOp) Name() string { return "binary_conv" }
func (*BinaryConvolutionOp) arity() int   { return 1 }

func (o *BinaryConvolutionOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	if src[0].C != o.Desc.InputFeatureChannels {
		return nil, c.errorf(ErrShape, "source %s has %d channels, the weights want %d", descString(src[0]), src[0].C, o.Desc.InputFeatureChannels)
	}
	d, err := o.Desc.ResultDescriptor(c.like(src[0]), o.Padding)
	if err != nil {
		return nil, c.errorf(ErrShape, "%v", err)
	}
	return one(c.like(d), nil)
}

func (o *BinaryConvolutionOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	return nil, fmt.Errorf("%w: %s: binary convolution is inference only, as in MPS (%w)", ErrGraph, n, errors.ErrUnsupported)
}

func (o *BinaryConvolutionOp) build(b *buildCtx) error {
	k, err := ops.NewBinaryConvolution(b.dev, o.Desc, o.Weights)
	if err != nil {
		return err
	}
	b.closer(k)
	k.Padding, k.Allocator, k.Label = o.Padding, planned{b.dst[0]}, b.n.name
	src := b.src[0]
	b.encode(func(cb *vk.CommandBuffer) error {
		_, err := k.EncodeNew(cb, src)
		return err
	})
	return nil
}

// BinaryConvolution adds a binary convolution over src.
func (g *Graph) BinaryConvolution(name string, src *Image, d ops.BinaryConvolutionDescriptor, w ops.BinaryConvolutionWeights, pol padding.Policy) (*Node, error) {
	if err := d.Validate(); err != nil {
		return nil, errorfNode(ErrGraph, name, "%v", err)
	}
	if pol == nil {
		pol = padding.Explicit(padding.Pads{}, false, false)
	}
	return g.add(name, &BinaryConvolutionOp{Desc: d, Weights: w, Padding: pol}, []*Image{src}, nil)
}

type binaryConvSpec struct {
	specBase
	windowSpec
	Type        string      `json:"type"`
	Weights     string      `json:"weights"`
	Bias        string      `json:"bias,omitempty"`
	Scale       string      `json:"scale,omitempty"`
	BetaScaling bool        `json:"beta_scaling,omitempty"`
	InputBias   string      `json:"input_bias,omitempty"`
	InputScale  string      `json:"input_scale,omitempty"`
	Neuron      *neuronSpec `json:"neuron,omitempty"`
}

func init() {
	registerOp("binary_conv", opSpec{sources: 1, doc: "type, weights, bias, scale, beta_scaling, input_bias, input_scale, stride, dilation, padding, neuron (inference only)",
		parse: func(p *parseCtx) error {
			var s binaryConvSpec
			if err := p.decode(&s); err != nil {
				return err
			}
			t, err := ops.ParseBinaryConvolutionType(s.Type)
			if err != nil {
				return p.bad("type: %v", err)
			}
			if s.Weights == "" {
				return p.bad("weights is required")
			}
			wv, shape, err := readParamFile(p.fsys, p.name, "weights", s.Weights)
			if err != nil {
				return err
			}
			if len(shape) != 4 {
				return p.bad("weights %s has shape %v: want (O, I, KH, KW)", s.Weights, shape)
			}
			var flags ops.BinaryConvolutionFlags
			if s.BetaScaling {
				flags = ops.BinaryConvolutionUseBetaScaling
			}
			d := ops.NewBinaryConvolutionDescriptor(shape[3], shape[2], shape[1], shape[0], t, flags)
			if d.StrideY, d.StrideX, d.DilationY, d.DilationX, err = s.strides(); err != nil {
				return p.bad("%v", err)
			}
			if s.Neuron != nil {
				if d.Neuron, err = s.Neuron.descriptor(); err != nil {
					return p.bad("neuron: %v", err)
				}
			}
			w := ops.BinaryConvolutionWeights{Weights: wv}
			for _, f := range []struct {
				field, file string
				dst         *[]float32
				n           int
			}{{"bias", s.Bias, &w.OutputBias, shape[0]}, {"scale", s.Scale, &w.OutputScale, shape[0]},
				{"input_bias", s.InputBias, &w.InputBias, shape[1]}, {"input_scale", s.InputScale, &w.InputScale, shape[1]}} {
				if f.file == "" {
					continue
				}
				v, _, err := readParamFile(p.fsys, p.name, f.field, f.file)
				if err != nil {
					return err
				}
				if len(v) != f.n {
					return p.bad("%s %s has %d values, want %d", f.field, f.file, len(v), f.n)
				}
				*f.dst = v
			}
			pol, err := parsePadding(s.Padding)
			if err != nil {
				return p.bad("%v", err)
			}
			_, err = p.g.BinaryConvolution(p.name, p.src[0], d, w, pol)
			return err
		}})
}
