package graph

import (
	"encoding/json"
	"fmt"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// ConvKind says which of the convolution family a node is.
type ConvKind int

const (
	// ConvForward is a convolution (MPSCNNConvolution, JSON op "conv"):
	// weights (O, I/g, KH, KW).
	ConvForward ConvKind = iota
	// ConvTranspose is a transpose convolution (MPSCNNConvolutionTranspose,
	// JSON op "conv_transpose"): weights (I, O/g, KH, KW).
	ConvTranspose
	// ConvFullyConnected is a fully connected layer
	// (MPSCNNFullyConnected, JSON op "fully_connected"): weights (O, C*H*W)
	// after a C,H,W flatten, as nn.Linear.
	ConvFullyConnected
)

var convNames = [...]string{"conv", "conv_transpose", "fully_connected"}

func (k ConvKind) String() string { return convNames[k] }

// ConvolutionOp is a node of the convolution family; sources: the image,
// its weights and (when it has one) its bias, both parameters. A fused
// neuron is its own NeuronOp node after it (so that training
// differentiates it), named as the layer; the linear result is
// "NODE.linear". For a fully connected layer Desc's kernel size and input
// channels are the source's, set when shapes are known; InFeatures is
// C*H*W.
type ConvolutionOp struct {
	Kind       ConvKind
	Desc       ops.ConvolutionDescriptor
	Padding    padding.Policy
	InFeatures int
}

func (o *ConvolutionOp) Name() string { return o.Kind.String() }
func (o *ConvolutionOp) arity() int   { return -1 }

// resolved returns the descriptor for a source of shape src (a fully
// connected layer's kernel covers the source) and the padding result.
func (o *ConvolutionOp) resolved(node string, src ops.ImageDescriptor) (ops.ConvolutionDescriptor, ops.ImageDescriptor, padding.Result, error) {
	d := o.Desc
	switch o.Kind {
	case ConvForward:
		if src.C != d.InputFeatureChannels {
			return d, src, padding.Result{}, errorfNode(ErrShape, node, "source %s has %d channels, the weights want %d", descString(src), src.C, d.InputFeatureChannels)
		}
		r, res, err := d.ResultDescriptor(src, o.Padding)
		if err != nil {
			return d, r, res, errorfNode(ErrShape, node, "%v", err)
		}
		return d, r, res, nil
	case ConvTranspose:
		if src.C != d.InputFeatureChannels {
			return d, src, padding.Result{}, errorfNode(ErrShape, node, "source %s has %d channels, the weights want %d", descString(src), src.C, d.InputFeatureChannels)
		}
		r, res, err := d.TransposeResultDescriptor(src, o.Padding)
		if err != nil {
			return d, r, res, errorfNode(ErrShape, node, "%v", err)
		}
		return d, r, res, nil
	}
	if src.C*src.H*src.W != o.InFeatures {
		return d, src, padding.Result{}, errorfNode(ErrShape, node, "source %s flattens to %d features, the weights want %d", descString(src), src.C*src.H*src.W, o.InFeatures)
	}
	d.KernelWidth, d.KernelHeight, d.InputFeatureChannels = src.W, src.H, src.C
	r, err := d.FullyConnectedResultDescriptor(src)
	if err != nil {
		return d, r, padding.Result{}, errorfNode(ErrShape, node, "%v", err)
	}
	return d, r, padding.Result{}, nil
}

func (o *ConvolutionOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	_, r, _, err := o.resolved(c.node, src[0])
	if err != nil {
		return nil, err
	}
	return one(c.like(r), nil)
}

func (o *ConvolutionOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	out := make([]*Image, len(n.sources))
	var err error
	if wanted[0] {
		if out[0], err = b.add(0, &ConvolutionDataGradientOp{Forward: o, Node: n}, dy, n.sources[1]); err != nil {
			return nil, err
		}
	}
	var idx []int
	for i := 1; i < len(n.sources); i++ {
		if wanted[i] {
			idx = append(idx, i)
		}
	}
	if len(idx) > 0 {
		wg := &ConvolutionWeightsGradientOp{Forward: o, Weights: wanted[1], Bias: len(n.sources) > 2 && wanted[2]}
		ims, err := b.addMulti(idx, wg, dy, n.sources[0])
		if err != nil {
			return nil, err
		}
		for k, i := range idx {
			out[i] = ims[k]
		}
	}
	return out, nil
}

func (o *ConvolutionOp) build(b *buildCtx) error {
	d, _, res, err := o.resolved(b.n.name, b.e.desc[b.n.sources[0]])
	if err != nil {
		return err
	}
	src, w, dst := b.src[0], b.src[1], b.dst[0]
	var bias *ops.Image
	if len(b.src) > 2 {
		bias = b.src[2]
	}
	type conv interface {
		Encode(cb *vk.CommandBuffer, src, weights, bias, dst *ops.Image) error
		Close() error
	}
	var k conv
	switch o.Kind {
	case ConvForward:
		c, err := ops.NewConvolution(b.dev, d)
		if err != nil {
			return err
		}
		c.Offset = ops.Offset{X: res.OffsetX, Y: res.OffsetY}
		c.Label, k = b.n.name, c
	case ConvTranspose:
		c, err := ops.NewConvolutionTranspose(b.dev, d)
		if err != nil {
			return err
		}
		c.Offset = ops.Offset{X: res.OffsetX, Y: res.OffsetY}
		c.Label, k = b.n.name, c
	default:
		c, err := ops.NewFullyConnected(b.dev, d)
		if err != nil {
			return err
		}
		c.Label, k = b.n.name, c
	}
	b.closer(k)
	if err := b.setupConv(k); err != nil {
		return err
	}
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, w, bias, dst) })
	return nil
}

// ConvolutionDataGradientOp is the gradient of a convolution-family node
// with respect to its source; sources: dy, the weights.
type ConvolutionDataGradientOp struct {
	Forward *ConvolutionOp
	Node    *Node // the forward node (its source's shape)
}

func (o *ConvolutionDataGradientOp) Name() string { return o.Forward.Name() + "-data-gradient" }
func (o *ConvolutionDataGradientOp) arity() int   { return 2 }

func (o *ConvolutionDataGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	x, ok := c.shapeOf(o.Node.sources[0])
	if !ok {
		return nil, c.errorf(ErrGraph, "the shape of %s is unknown", o.Node.sources[0])
	}
	_, want, _, err := o.Forward.resolved(c.node, x)
	if err != nil {
		return nil, err
	}
	if !sameDesc(want, src[0]) {
		return nil, c.errorf(ErrShape, "source gradient %s, but the forward result is %s", descString(src[0]), descString(want))
	}
	return one(c.like(x), nil)
}

func (o *ConvolutionDataGradientOp) build(b *buildCtx) error {
	x := b.e.desc[o.Node.sources[0]]
	d, _, res, err := o.Forward.resolved(b.n.name, x)
	if err != nil {
		return err
	}
	dy, w, dx := b.src[0], b.src[1], b.dst[0]
	type grad interface {
		EncodeData(cb *vk.CommandBuffer, dy, weights, dx *ops.Image) error
		Close() error
	}
	var k grad
	switch o.Forward.Kind {
	case ConvForward:
		g, err := ops.NewConvolutionGradient(b.dev, d)
		if err != nil {
			return err
		}
		g.SetForwardOffset(res.OffsetX, res.OffsetY)
		g.Label, k = b.n.name, g
	case ConvTranspose:
		g, err := ops.NewConvolutionTransposeGradient(b.dev, d)
		if err != nil {
			return err
		}
		g.SetForwardOffset(res.OffsetX, res.OffsetY)
		g.Label, k = b.n.name, g
	default:
		g, err := ops.NewFullyConnectedGradient(b.dev, d)
		if err != nil {
			return err
		}
		g.Label, k = b.n.name, g
	}
	b.closer(k)
	if err := b.setupConv(k); err != nil {
		return err
	}
	b.encode(func(cb *vk.CommandBuffer) error { return k.EncodeData(cb, dy, w, dx) })
	return nil
}

// ConvolutionWeightsGradientOp is the gradient of a convolution-family
// node's weights and bias (sums over the batch); sources: dy and the
// forward source; results: the weights' gradient and, with Bias, the
// bias's (float32, in the parameters' layouts).
type ConvolutionWeightsGradientOp struct {
	Forward       *ConvolutionOp
	Weights, Bias bool
}

func (o *ConvolutionWeightsGradientOp) Name() string { return o.Forward.Name() + "-weights-gradient" }
func (o *ConvolutionWeightsGradientOp) arity() int   { return 2 }

func (o *ConvolutionWeightsGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	d, want, _, err := o.Forward.resolved(c.node, src[1])
	if err != nil {
		return nil, err
	}
	if !sameDesc(want, src[0]) {
		return nil, c.errorf(ErrShape, "source gradient %s, but the forward result is %s", descString(src[0]), descString(want))
	}
	var out []ops.ImageDescriptor
	if o.Weights {
		w := d.WeightsDescriptor()
		switch o.Forward.Kind {
		case ConvTranspose:
			w = d.TransposeWeightsDescriptor()
		case ConvFullyConnected:
			w = ops.ImageDescriptor{N: d.OutputFeatureChannels, C: o.Forward.InFeatures, H: 1, W: 1}
		}
		w.Format = ops.Float32
		out = append(out, w)
	}
	if o.Bias {
		out = append(out, d.BiasDescriptor())
	}
	return out, nil
}

func (o *ConvolutionWeightsGradientOp) build(b *buildCtx) error {
	d, _, res, err := o.Forward.resolved(b.n.name, b.e.desc[b.n.sources[1]])
	if err != nil {
		return err
	}
	dy, x := b.src[0], b.src[1]
	var dW, db *ops.Image
	k := 0
	if o.Weights {
		dW, k = b.dst[0], 1
	}
	if o.Bias {
		db = b.dst[k]
	}
	type grad interface {
		EncodeWeights(cb *vk.CommandBuffer, dy, src, dW, db *ops.Image) error
		Close() error
	}
	var g grad
	switch o.Forward.Kind {
	case ConvForward:
		c, err := ops.NewConvolutionGradient(b.dev, d)
		if err != nil {
			return err
		}
		c.SetForwardOffset(res.OffsetX, res.OffsetY)
		c.Label, g = b.n.name, c
	case ConvTranspose:
		c, err := ops.NewConvolutionTransposeGradient(b.dev, d)
		if err != nil {
			return err
		}
		c.SetForwardOffset(res.OffsetX, res.OffsetY)
		c.Label, g = b.n.name, c
	default:
		c, err := ops.NewFullyConnectedGradient(b.dev, d)
		if err != nil {
			return err
		}
		c.Label, g = b.n.name, c
	}
	b.closer(g)
	if err := b.setupConv(g); err != nil {
		return err
	}
	if dW == nil {
		return fmt.Errorf("%w: node %q: a bias gradient without the weights' is not supported (freeze both or neither)", ErrGraph, b.n.name)
	}
	b.encode(func(cb *vk.CommandBuffer) error { return g.EncodeWeights(cb, dy, x, dW, db) })
	return nil
}

// ConvolutionOptions configure a convolution-family node.
type ConvolutionOptions struct {
	// Padding sizes the result and places the windows; nil means explicit
	// zero pads of 0 (PyTorch's default). For ConvolutionTranspose use
	// ops.ConvolutionTransposePadding for PyTorch's padding and
	// output_padding, or an MPS policy (reverse size rule).
	Padding padding.Policy
	// Weights and Bias are the parameters' first values; nil means
	// PyTorch's default initialization (InitKaimingUniform with the
	// layer's fan-in). NoBias leaves the bias out.
	Weights, Bias *Init
	NoBias        bool
}

// Convolution adds a convolution node over src: d's kernel size, channels,
// groups, stride and dilation (its Neuron becomes a NeuronOp node after
// it), with trainable parameters "NAME.weights" (O, I/g, KH, KW) and
// "NAME.bias" (O). It returns the layer's last node.
func (g *Graph) Convolution(name string, src *Image, d ops.ConvolutionDescriptor, o ConvolutionOptions) (*Node, error) {
	return g.convLayer(name, ConvForward, src, d, 0, o)
}

// ConvolutionTranspose adds a transpose convolution node: weights
// "NAME.weights" (I, O/g, KH, KW) as PyTorch's ConvTranspose2d.
func (g *Graph) ConvolutionTranspose(name string, src *Image, d ops.ConvolutionDescriptor, o ConvolutionOptions) (*Node, error) {
	return g.convLayer(name, ConvTranspose, src, d, 0, o)
}

// FullyConnected adds a fully connected layer of inFeatures (the source's
// C*H*W) to outFeatures, weights "NAME.weights" (O, inFeatures) as
// nn.Linear's and a bias; neuron (may be the zero value) after it.
func (g *Graph) FullyConnected(name string, src *Image, inFeatures, outFeatures int, neuron ops.NeuronDescriptor, o ConvolutionOptions) (*Node, error) {
	d := ops.ConvolutionDescriptor{KernelWidth: 1, KernelHeight: 1, InputFeatureChannels: inFeatures, OutputFeatureChannels: outFeatures, Neuron: neuron}
	return g.convLayer(name, ConvFullyConnected, src, d, inFeatures, o)
}

func (g *Graph) convLayer(name string, kind ConvKind, src *Image, d ops.ConvolutionDescriptor, inFeatures int, o ConvolutionOptions) (*Node, error) {
	if d.Groups == 0 {
		d.Groups = 1
	}
	for _, v := range []*int{&d.StrideX, &d.StrideY, &d.DilationX, &d.DilationY} {
		if *v == 0 {
			*v = 1
		}
	}
	if err := d.Validate(name); err != nil {
		return nil, errorfNode(ErrGraph, name, "%v", err)
	}
	if kind == ConvFullyConnected && (d.Groups != 1 || inFeatures < 1) {
		return nil, errorfNode(ErrGraph, name, "a fully connected layer has groups 1 and in_features >= 1")
	}
	neuron := d.Neuron
	d.Neuron = ops.NeuronDescriptor{}
	pol := o.Padding
	if pol == nil && kind != ConvFullyConnected {
		pol = padding.Explicit(padding.Pads{}, false, false)
	}
	op := &ConvolutionOp{Kind: kind, Desc: d, Padding: pol, InFeatures: inFeatures}
	var wd ops.ImageDescriptor
	var wshape []int
	fanIn := d.InputFeatureChannels / d.Groups * d.KernelHeight * d.KernelWidth
	switch kind {
	case ConvForward:
		wd = d.WeightsDescriptor()
		wshape = []int{wd.N, wd.C, wd.H, wd.W}
	case ConvTranspose:
		wd = d.TransposeWeightsDescriptor()
		wshape = []int{wd.N, wd.C, wd.H, wd.W}
		fanIn = wd.C * d.KernelHeight * d.KernelWidth // PyTorch: weight.size(1) * receptive field
	default:
		wd = ops.ImageDescriptor{N: d.OutputFeatureChannels, C: inFeatures, H: 1, W: 1}
		wshape = []int{d.OutputFeatureChannels, inFeatures}
		fanIn = inFeatures
	}
	def := Init{Kind: InitKaimingUniform, FanIn: fanIn}
	winit, binit := def, def
	if o.Weights != nil {
		winit = *o.Weights
	}
	if o.Bias != nil {
		binit = *o.Bias
	}
	layer := name
	if !neuron.IsIdentity() {
		layer = name + ".linear"
	}
	w, err := g.Parameter(name+".weights", wd, winit, true)
	if err != nil {
		return nil, err
	}
	w.param.shape = wshape
	sources := []*Image{src, w}
	if !o.NoBias {
		b, err := g.Parameter(name+".bias", ops.ImageDescriptor{N: 1, C: d.OutputFeatureChannels, H: 1, W: 1}, binit, true)
		if err != nil {
			return nil, err
		}
		b.param.shape = []int{d.OutputFeatureChannels}
		sources = append(sources, b)
	}
	n, err := g.add(layer, op, sources, nil)
	if err != nil {
		return nil, err
	}
	for _, p := range sources[1:] {
		p.param.owner = n
	}
	if neuron.IsIdentity() {
		return n, nil
	}
	if neuron.Type == ops.NeuronPReLU {
		return g.Neuron(name, neuron, n.Result())
	}
	return g.add(name, NeuronOp{Desc: neuron}, []*Image{n.Result()}, nil)
}

// convSpec is the JSON of a convolution-family node. "weights" and
// "bias" name .npy files beside the graph file (bias may also be true,
// the default, or false); without a weights file the layer needs its
// sizes ("in_channels", "out_channels", "kernel"; for fully_connected
// "in_features", "out_features") and starts from PyTorch's default
// initialization ("init" changes it, "seed" seeds it).
type convSpec struct {
	specBase
	windowSpec
	Weights       string          `json:"weights,omitempty"`
	Bias          json.RawMessage `json:"bias,omitempty"`
	Groups        int             `json:"groups,omitempty"`
	Neuron        *neuronSpec     `json:"neuron,omitempty"`
	OutputPadding Ints            `json:"output_padding,omitempty"`
	InChannels    int             `json:"in_channels,omitempty"`
	OutChannels   int             `json:"out_channels,omitempty"`
	InFeatures    int             `json:"in_features,omitempty"`
	OutFeatures   int             `json:"out_features,omitempty"`
	Init          string          `json:"init,omitempty"`
	Seed          uint64          `json:"seed,omitempty"`
}

func init() {
	for _, k := range []ConvKind{ConvForward, ConvTranspose, ConvFullyConnected} {
		registerOp(k.String(), opSpec{sources: 1, doc: "weights, bias, groups, neuron, stride, dilation, padding", parse: func(p *parseCtx) error { return parseConv(p, k) }})
	}
}

func parseConv(p *parseCtx, kind ConvKind) error {
	var s convSpec
	if err := p.decode(&s); err != nil {
		return err
	}
	d := ops.ConvolutionDescriptor{Groups: s.Groups}
	if d.Groups == 0 {
		d.Groups = 1
	}
	var err error
	if kind != ConvFullyConnected {
		if d.StrideY, d.StrideX, d.DilationY, d.DilationX, err = s.strides(); err != nil {
			return p.bad("%v", err)
		}
	} else if s.Stride != nil || s.Dilation != nil || len(s.Padding) > 0 || s.Kernel != nil || s.Groups > 1 {
		return p.bad("fully_connected takes no kernel, stride, dilation, padding or groups")
	}
	if s.Neuron != nil {
		if d.Neuron, err = s.Neuron.descriptor(); err != nil {
			return p.bad("neuron: %v", err)
		}
	}
	var o ConvolutionOptions
	seed := s.Seed
	initKind := InitKaimingUniform
	if s.Init != "" {
		if initKind, err = ParseInitKind(s.Init); err != nil {
			return p.bad("init: %v", err)
		}
	}
	inFeatures := s.InFeatures
	var wshape []int
	if s.Weights != "" {
		v, shape, err := readParamFile(p.fsys, p.name, "weights", s.Weights)
		if err != nil {
			return err
		}
		switch {
		case kind == ConvFullyConnected && len(shape) == 2:
			d.OutputFeatureChannels, inFeatures = shape[0], shape[1]
		case kind == ConvFullyConnected && len(shape) == 4:
			d.OutputFeatureChannels, inFeatures = shape[0], shape[1]*shape[2]*shape[3]
		case kind != ConvFullyConnected && len(shape) == 4:
			d.KernelHeight, d.KernelWidth = shape[2], shape[3]
			if kind == ConvForward {
				d.OutputFeatureChannels, d.InputFeatureChannels = shape[0], shape[1]*d.Groups
			} else {
				d.InputFeatureChannels, d.OutputFeatureChannels = shape[0], shape[1]*d.Groups
			}
		default:
			return p.bad("weights %s has shape %v: want %s", s.Weights, shape, map[bool]string{true: "(O, K) or (O, C, H, W)", false: "4 dimensions"}[kind == ConvFullyConnected])
		}
		o.Weights = &Init{Data: v}
		wshape = shape
		if s.Kernel != nil {
			kh, kw, err := pair("kernel", s.Kernel, 1)
			if err != nil || kh != d.KernelHeight || kw != d.KernelWidth {
				return p.bad("kernel %v does not match the weights' %dx%d", []int(s.Kernel), d.KernelHeight, d.KernelWidth)
			}
		}
	} else {
		if kind == ConvFullyConnected {
			if s.InFeatures < 1 || s.OutFeatures < 1 {
				return p.bad("without a weights file, give in_features and out_features")
			}
			d.OutputFeatureChannels = s.OutFeatures
		} else {
			if s.InChannels < 1 || s.OutChannels < 1 || s.Kernel == nil {
				return p.bad("without a weights file, give in_channels, out_channels and kernel")
			}
			d.InputFeatureChannels, d.OutputFeatureChannels = s.InChannels, s.OutChannels
			if d.KernelHeight, d.KernelWidth, err = pair("kernel", s.Kernel, 1); err != nil {
				return p.bad("%v", err)
			}
		}
	}
	if o.Weights == nil {
		o.Weights = &Init{Kind: initKind, Seed: seed}
	}
	if kind == ConvFullyConnected {
		d.KernelWidth, d.KernelHeight, d.InputFeatureChannels = 1, 1, inFeatures
	}
	// Fans for the initializers (PyTorch's).
	fanIn := d.InputFeatureChannels / max(d.Groups, 1) * d.KernelHeight * d.KernelWidth
	fanOut := d.OutputFeatureChannels / max(d.Groups, 1) * d.KernelHeight * d.KernelWidth
	if kind == ConvTranspose {
		fanIn, fanOut = fanOut, fanIn
	}
	if kind == ConvFullyConnected {
		fanIn, fanOut = inFeatures, d.OutputFeatureChannels
	}
	if o.Weights.Data == nil {
		o.Weights.FanIn, o.Weights.FanOut = fanIn, fanOut
	}
	o.Bias = &Init{Kind: InitKaimingUniform, FanIn: fanIn, Seed: seed}
	if len(s.Bias) > 0 {
		var file string
		var on bool
		switch {
		case json.Unmarshal(s.Bias, &file) == nil:
			v, shape, err := readParamFile(p.fsys, p.name, "bias", file)
			if err != nil {
				return err
			}
			n := 1
			for _, x := range shape {
				n *= x
			}
			if n != d.OutputFeatureChannels {
				return p.bad("bias %s has %d values for %d output channels", file, n, d.OutputFeatureChannels)
			}
			o.Bias = &Init{Data: v}
		case json.Unmarshal(s.Bias, &on) == nil:
			o.NoBias = !on
		default:
			return p.bad("bias: want a .npy file name, true or false")
		}
	}
	switch kind {
	case ConvForward:
		if o.Padding, err = parsePadding(s.Padding); err != nil {
			return p.bad("%v", err)
		}
		if s.OutputPadding != nil {
			return p.bad("output_padding applies to conv_transpose only")
		}
	case ConvTranspose:
		// {"pad": [t, l, b, r]} is ConvTranspose2d's padding (rows and
		// columns taken off the full output), with output_padding; a
		// named policy or {"method": N} is MPS's reverse size rule.
		var ps paddingSpec
		explicit := len(s.Padding) == 0 || (json.Unmarshal(s.Padding, &ps) == nil && ps.Pad != nil)
		if !explicit {
			if s.OutputPadding != nil {
				return p.bad("output_padding goes with explicit pads {\"pad\": [...]}")
			}
			if o.Padding, err = parsePadding(s.Padding); err != nil {
				return p.bad("%v", err)
			}
			break
		}
		var pd padding.Pads
		if ps.Pad != nil {
			if ps.CeilMode || ps.CountIncludePad {
				return p.bad("padding: ceil_mode and count_include_pad do not apply to conv_transpose")
			}
			if pd, err = pads("padding.pad", ps.Pad); err != nil {
				return p.bad("%v", err)
			}
		}
		opY, opX := 0, 0
		if s.OutputPadding != nil {
			if opY, opX, err = pair("output_padding", s.OutputPadding, 0); err != nil {
				return p.bad("%v", err)
			}
		}
		o.Padding = ops.ConvolutionTransposePadding(pd, opX, opY)
	}
	switch kind {
	case ConvTranspose:
		_, err = p.g.ConvolutionTranspose(p.name, p.src[0], d, o)
	case ConvFullyConnected:
		neuron := d.Neuron
		_, err = p.g.FullyConnected(p.name, p.src[0], inFeatures, d.OutputFeatureChannels, neuron, o)
	default:
		_, err = p.g.Convolution(p.name, p.src[0], d, o)
	}
	if err != nil {
		return err
	}
	if s.Weights != "" && wshape != nil {
		p.g.Image(p.name + ".weights").param.shape = wshape // the layout it was read in
	}
	return nil
}
