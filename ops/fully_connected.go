package ops

import (
	"fmt"

	"github.com/vkmps/vkmps/vk"
)

// FullyConnectedResultDescriptor returns the destination of a fully
// connected layer of d over src, N x O x 1 x 1 (src's format), without a
// device. src must have I channels of KernelHeight x KernelWidth pixels.
func (d ConvolutionDescriptor) FullyConnectedResultDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	const label = "FullyConnected"
	if err := d.validateFC(label); err != nil {
		return ImageDescriptor{}, err
	}
	if src.C != d.InputFeatureChannels || src.H != d.KernelHeight || src.W != d.KernelWidth {
		return ImageDescriptor{}, fmt.Errorf("%w: %s: source %dx%dx%d, the layer reads %dx%dx%d (channels x height x width)", ErrShape, label,
			src.C, src.H, src.W, d.InputFeatureChannels, d.KernelHeight, d.KernelWidth)
	}
	if src.N < 1 {
		return ImageDescriptor{}, fmt.Errorf("%w: %s: source batch size %d < 1", ErrShape, label, src.N)
	}
	return ImageDescriptor{N: src.N, C: d.OutputFeatureChannels, H: 1, W: 1, Format: src.Format}, nil
}

// validateFC checks a fully connected descriptor: Validate, and no groups,
// strides or dilations other than 1.
func (d ConvolutionDescriptor) validateFC(label string) error {
	if err := d.Validate(label); err != nil {
		return err
	}
	n := d.normalized()
	if n.Groups != 1 || n.StrideX != 1 || n.StrideY != 1 || n.DilationX != 1 || n.DilationY != 1 {
		return fmt.Errorf("%w: %s: groups %d, strides %dx%d, dilations %dx%d: a fully connected layer has none", ErrGeometry, label,
			n.Groups, n.StrideX, n.StrideY, n.DilationX, n.DilationY)
	}
	return nil
}

// fcInputs returns K = I*KH*KW, the values of one batch image.
func (d ConvolutionDescriptor) fcInputs() int {
	return d.InputFeatureChannels * d.KernelHeight * d.KernelWidth
}

// FullyConnected is a fully connected layer (MPSCNNFullyConnected): a
// convolution whose window is the whole source. With the source's C*H*W
// values of batch image n flattened in C, H, W order (x[n, k]):
//
//	dst(n, o, 0, 0) = neuron(bias[o] + sum over k of weights[o][k] * x[n, k])
//
// which is PyTorch's nn.Linear after a flatten. The descriptor's
// KernelWidth and KernelHeight are the source's width and height,
// InputFeatureChannels its channels, OutputFeatureChannels O; groups,
// strides and dilations are 1. Weights are a float32 image of O rows of
// C*H*W values, O x (C*H*W) x 1 x 1 or O x C x H x W; the bias 1 x O x 1 x 1
// or nil. The source is read whole (C channels from
// SourceFeatureChannelOffset; Offset.X/Y are not used), the destination is
// N x (>= O) x 1 x 1 (O channels from DestinationFeatureChannelOffset);
// ClipRect and Offset.Z select batch images as for every kernel. Formats,
// the fused neuron and determinism are as for Convolution.
type FullyConnected struct {
	Kernel
	desc ConvolutionDescriptor
	convFamily
}

// NewFullyConnected makes a fully connected layer of d
// (MPS initWithDevice:convolutionDescriptor:...).
func NewFullyConnected(dev *vk.Device, d ConvolutionDescriptor) (*FullyConnected, error) {
	k := &FullyConnected{desc: d.normalized()}
	k.Label = "FullyConnected"
	if dev == nil {
		return nil, fmt.Errorf("%w: %s: nil device", ErrDevice, k.Label)
	}
	if err := d.validateFC(k.Label); err != nil {
		return nil, err
	}
	k.dev = dev
	var err error
	if err = k.newEngine(dev, &k.Label, k.desc.Neuron); err != nil {
		return nil, err
	}
	return k, nil
}

// Descriptor returns the layer's descriptor.
func (k *FullyConnected) Descriptor() ConvolutionDescriptor { return k.desc }

// DestinationImageDescriptor returns the destination for src (batch
// images from Offset.Z; C includes DestinationFeatureChannelOffset).
func (k *FullyConnected) DestinationImageDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	d := k.desc
	if src.C-k.SourceFeatureChannelOffset < d.InputFeatureChannels || k.SourceFeatureChannelOffset < 0 || src.H != d.KernelHeight || src.W != d.KernelWidth {
		return ImageDescriptor{}, fmt.Errorf("%w: %s: source %dx%dx%d has no %dx%dx%d from channel %d", ErrShape, k.Label,
			src.C, src.H, src.W, d.InputFeatureChannels, d.KernelHeight, d.KernelWidth, k.SourceFeatureChannelOffset)
	}
	if src.N-k.Offset.Z < 1 || k.Offset.Z < 0 {
		return ImageDescriptor{}, fmt.Errorf("%w: %s: offset.z %d outside the %d batch images of the source", ErrShape, k.Label, k.Offset.Z, src.N)
	}
	return ImageDescriptor{N: src.N - k.Offset.Z, C: k.DestinationFeatureChannelOffset + d.OutputFeatureChannels, H: 1, W: 1,
		Format: src.Format, Label: k.Label + " destination"}, nil
}

// Encode records the layer from src into dst. bias may be nil.
func (k *FullyConnected) Encode(cb *vk.CommandBuffer, src, weights, bias, dst *Image) error {
	_, err := k.encode(cb, src, weights, bias, dst, false)
	return err
}

// EncodeWithState is Encode that also returns the gradient state for
// FullyConnectedGradient.
func (k *FullyConnected) EncodeWithState(cb *vk.CommandBuffer, src, weights, bias, dst *Image) (*ConvolutionGradientState, error) {
	return k.encode(cb, src, weights, bias, dst, true)
}

// EncodeNew encodes into a new N x O x 1 x 1 destination; the caller
// closes it.
func (k *FullyConnected) EncodeNew(cb *vk.CommandBuffer, src, weights, bias *Image) (*Image, error) {
	dst, _, err := encodeNewConv(&k.Kernel, k, cb, src, weights, bias, false, false)
	return dst, err
}

// EncodeNewWithState is EncodeNew that also returns the gradient state.
func (k *FullyConnected) EncodeNewWithState(cb *vk.CommandBuffer, src, weights, bias *Image) (*Image, *ConvolutionGradientState, error) {
	return encodeNewConv(&k.Kernel, k, cb, src, weights, bias, true, false)
}

func (k *FullyConnected) encode(cb *vk.CommandBuffer, src, weights, bias, dst *Image, state bool) (*ConvolutionGradientState, error) {
	if cb == nil {
		return nil, fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.Label)
	}
	if k.eng.dev == nil {
		return nil, fmt.Errorf("%w: %s: kernel not made by its constructor (no device)", ErrDevice, k.Label)
	}
	d := k.desc
	j, err := convResolve(&k.Kernel, src, dst, d.InputFeatureChannels, d.OutputFeatureChannels)
	if err != nil {
		return nil, err
	}
	if src.h != d.KernelHeight || src.w != d.KernelWidth {
		return nil, fmt.Errorf("%w: %s: source %s is not %dx%d, the layer's window", ErrShape, k.Label, src, d.KernelHeight, d.KernelWidth)
	}
	if dst.h != 1 || dst.w != 1 {
		return nil, fmt.Errorf("%w: %s: destination %s is not N x C x 1 x 1", ErrShape, k.Label, dst)
	}
	if err := convCheckParams(&k.Kernel, weights, bias, d.WeightsDescriptor(), d.fcInputs(), d.OutputFeatureChannels); err != nil {
		return nil, err
	}
	if overlaps(weights, dst) || (bias != nil && overlaps(bias, dst)) {
		return nil, fmt.Errorf("%w: %s: destination %s shares storage with the weights or bias", ErrAlias, k.Label, dst)
	}
	out := convWhole(dst, j.dstN0, j.dstC0, d.OutputFeatureChannels)
	neuron := !d.Neuron.IsIdentity()
	var st *ConvolutionGradientState
	if state {
		st = convNewState(convKindFullyConnected, d, &k.Kernel, &j, weights, bias)
		if neuron {
			if st.z, err = NewImage(k.dev, ImageDescriptor{N: j.batches, C: d.OutputFeatureChannels, H: 1, W: 1,
				Format: dst.format, Label: k.Label + " pre-activation"}); err != nil {
				return nil, fmt.Errorf("%s: %w", k.Label, err)
			}
			out = convWhole(st.z, 0, 0, d.OutputFeatureChannels)
		}
	}
	g := convImageGemm{modeA: gemmAWeights, modeB: gemmBRows, groups: 1, m: d.OutputFeatureChannels, k: d.fcInputs(),
		in: convFlat(src, j.srcN0, j.srcC0, d.InputFeatureChannels), out: out, batches: j.batches,
		weights: weights, bias: bias, neuron: neuron && (st == nil || st.z == nil), geom: [6]int32{1, 1, 1, 1, 1, 1}}
	if err := k.eng.encodeImageGemm(cb, &g); err != nil {
		st.Close()
		return nil, err
	}
	if st != nil && st.z != nil {
		zr := convWhole(st.z, 0, 0, d.OutputFeatureChannels)
		if err := k.eng.encodeNeuron(cb, 0, zr, zr, convWhole(dst, j.dstN0, j.dstC0, d.OutputFeatureChannels), j.batches); err != nil {
			st.Close()
			return nil, err
		}
	}
	return st, nil
}

// fcDataGemm is dx[n][k] = sum over o of w[o][k] * dy[n][o].
func fcDataGemm(d ConvolutionDescriptor, dyR, dxR convRegion, batches int, weights *Image) convImageGemm {
	return convImageGemm{modeA: gemmAColumns, modeB: gemmBRows, groups: 1, m: d.fcInputs(), k: d.OutputFeatureChannels,
		ld: d.fcInputs(), in: dyR, out: dxR, batches: batches, weights: weights, geom: [6]int32{1, 1, 1, 1, 1, 1}}
}

// fcWeightsJob is dW[o][k] = sum over n of dy[n][o] * x[n][k] and db.
func fcWeightsJob(d ConvolutionDescriptor, dyR, xR convRegion, batches int, dW, db *Image) convWeightsGemm {
	return convWeightsGemm{fc: true, groups: 1, m: d.OutputFeatureChannels, n: d.fcInputs(), dy: dyR, x: xR, batches: batches,
		geom: [6]int32{1, 1, 1, 1, 1, 1}, dW: dW, db: db, biasFrom: dyR}
}

// FullyConnectedGradient is the gradient of a FullyConnected layer
// (MPSCNNFullyConnectedGradient): with dy (N x O x 1 x 1) w.r.t. its linear
// output and x[n, k] the flattened source,
//
//	dx[n, k]  = sum over o of w[o][k] * dy[n, o]
//	dW[o][k]  = sum over n of dy[n, o] * x[n, k]
//	db[o]     = sum over n of dy[n, o]
//
// dW and db summed over the batch in a fixed order, float32, in the
// weights' (any O-row) and the bias' shapes. Forms as ConvolutionGradient:
// EncodeData and EncodeWeights use whole images (dy's O channels from
// SourceFeatureChannelOffset, dx's I channels from
// DestinationFeatureChannelOffset); EncodeWithState uses the forward's
// state, fused neuron included.
type FullyConnectedGradient struct {
	GradientKernel
	GradientOption ConvolutionGradientOption
	desc           ConvolutionDescriptor
	convFamily
}

// NewFullyConnectedGradient makes the gradient kernel of a fully connected
// layer of d.
func NewFullyConnectedGradient(dev *vk.Device, d ConvolutionDescriptor) (*FullyConnectedGradient, error) {
	k := &FullyConnectedGradient{desc: d.normalized()}
	k.Label = "FullyConnectedGradient"
	if dev == nil {
		return nil, fmt.Errorf("%w: %s: nil device", ErrDevice, k.Label)
	}
	if err := d.validateFC(k.Label); err != nil {
		return nil, err
	}
	k.dev = dev
	var err error
	if err = k.newEngine(dev, &k.Label, k.desc.Neuron); err != nil {
		return nil, err
	}
	return k, nil
}

// Descriptor returns the layer's descriptor.
func (k *FullyConnectedGradient) Descriptor() ConvolutionDescriptor { return k.desc }

// EncodeData records dx (N x (>= I) x KH x KW) from dy and the weights.
func (k *FullyConnectedGradient) EncodeData(cb *vk.CommandBuffer, dy, weights, dx *Image) error {
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.Label)
	}
	if k.eng.dev == nil {
		return fmt.Errorf("%w: %s: kernel not made by its constructor (no device)", ErrDevice, k.Label)
	}
	d := k.desc
	if err := convCheckGradImages(&k.Kernel, []string{"source gradient", "destination gradient"}, dy, dx); err != nil {
		return err
	}
	if err := convCheckParams(&k.Kernel, weights, nil, d.WeightsDescriptor(), d.fcInputs(), d.OutputFeatureChannels); err != nil {
		return err
	}
	if overlaps(dy, dx) || overlaps(weights, dx) {
		return fmt.Errorf("%w: %s: destination gradient %s shares storage with the source gradient or the weights", ErrAlias, k.Label, dx)
	}
	if err := k.checkFCImages(dy, dx, "destination gradient"); err != nil {
		return err
	}
	g := fcDataGemm(d, convFlat(dy, 0, k.SourceFeatureChannelOffset, d.OutputFeatureChannels),
		convFlat(dx, 0, k.DestinationFeatureChannelOffset, d.InputFeatureChannels), dy.n, weights)
	return k.eng.encodeImageGemm(cb, &g)
}

// checkFCImages checks dy (N x (>= O) x 1 x 1 from SourceFeatureChannelOffset)
// and x (the source or dx: N x I' x KH x KW).
func (k *FullyConnectedGradient) checkFCImages(dy, x *Image, role string) error {
	d := k.desc
	if dy.h != 1 || dy.w != 1 {
		return fmt.Errorf("%w: %s: source gradient %s is not N x C x 1 x 1", ErrShape, k.Label, dy)
	}
	if err := convCheckChannels(&k.Kernel, "source gradient", dy, k.SourceFeatureChannelOffset, d.OutputFeatureChannels); err != nil {
		return err
	}
	off := k.DestinationFeatureChannelOffset
	if role != "destination gradient" {
		off = 0
	}
	if err := convCheckChannels(&k.Kernel, role, x, off, d.InputFeatureChannels); err != nil {
		return err
	}
	if x.h != d.KernelHeight || x.w != d.KernelWidth || x.n != dy.n {
		return fmt.Errorf("%w: %s: %s %s is not %d x C x %d x %d (the source gradient's batch and the layer's window)", ErrShape, k.Label,
			role, x, dy.n, d.KernelHeight, d.KernelWidth)
	}
	return nil
}

// EncodeWeights records dW (the weights' rows) and, when db is not nil,
// db (1 x O x 1 x 1), float32, from dy and the source src (I channels).
func (k *FullyConnectedGradient) EncodeWeights(cb *vk.CommandBuffer, dy, src, dW, db *Image) error {
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.Label)
	}
	if k.eng.dev == nil {
		return fmt.Errorf("%w: %s: kernel not made by its constructor (no device)", ErrDevice, k.Label)
	}
	d := k.desc
	if err := convCheckGradImages(&k.Kernel, []string{"source gradient", "source image"}, dy, src); err != nil {
		return err
	}
	if err := convCheckGradOutputs(&k.Kernel, dW, db, d.WeightsDescriptor(), d.fcInputs(), d.OutputFeatureChannels, dy, src); err != nil {
		return err
	}
	if err := k.checkFCImages(dy, src, "source image"); err != nil {
		return err
	}
	if src.c != d.InputFeatureChannels {
		return fmt.Errorf("%w: %s: source image %s, want %d channels", ErrShape, k.Label, src, d.InputFeatureChannels)
	}
	j := fcWeightsJob(d, convFlat(dy, 0, k.SourceFeatureChannelOffset, d.OutputFeatureChannels), convFlat(src, 0, 0, d.InputFeatureChannels), dy.n, dW, db)
	return k.eng.encodeWeightsGemm(cb, &j)
}

// EncodeWithState records the gradient of the forward encode that made st,
// as ConvolutionGradient.EncodeWithState does (dy w.r.t. the neuron's
// output when one was fused).
func (k *FullyConnectedGradient) EncodeWithState(cb *vk.CommandBuffer, dy, src *Image, st *ConvolutionGradientState, dx *Image) error {
	if k.eng.dev == nil {
		return fmt.Errorf("%w: %s: kernel not made by its constructor (no device)", ErrDevice, k.Label)
	}
	if !k.GradientOption.valid() {
		return fmt.Errorf("%w: %s: unknown gradient option %d", ErrGeometry, k.Label, int(k.GradientOption))
	}
	if err := convCheckState(&k.Kernel, st, convKindFullyConnected, k.desc); err != nil {
		return err
	}
	d := k.desc
	if k.GradientOption.data() {
		if err := convCheckGradImages(&k.Kernel, []string{"source gradient", "destination gradient"}, dy, dx); err != nil {
			return err
		}
		if dx.Descriptor().Descriptor() != st.Source {
			return fmt.Errorf("%w: %s: destination gradient %s is not the size of the forward source, %v", ErrShape, k.Label, dx, st.Source)
		}
		if overlaps(dy, dx) || overlaps(src, dx) || overlaps(st.weights, dx) {
			return fmt.Errorf("%w: %s: destination gradient %s shares storage with an input", ErrAlias, k.Label, dx)
		}
	}
	g, err := convPrepareState(cb, &k.Kernel, &k.eng, st, dy, src, d.InputFeatureChannels, d.OutputFeatureChannels)
	if err != nil {
		return err
	}
	g.xR = convFlat(src, st.Offset.Z, st.SourceFeatureChannelOffset, d.InputFeatureChannels)
	dyR := g.dyR
	dyR.flat, dyR.w, dyR.h, dyR.x0, dyR.y0 = true, 1, 1, 0, 0
	if k.GradientOption.data() {
		jd := fcDataGemm(d, dyR, convFlat(dx, st.Offset.Z, st.SourceFeatureChannelOffset, d.InputFeatureChannels), g.batch, st.weights)
		if err := k.eng.encodeImageGemm(cb, &jd); err != nil {
			return err
		}
	}
	if k.GradientOption.weights() {
		dW, db, err := convStateOutputs(&k.Kernel, st, st.weights.Descriptor(), d.OutputFeatureChannels)
		if err != nil {
			return err
		}
		jw := fcWeightsJob(d, dyR, g.xR, g.batch, dW, db)
		if err := k.eng.encodeWeightsGemm(cb, &jw); err != nil {
			return err
		}
	}
	return nil
}

// EncodeNewWithState is EncodeWithState into a new dx of the forward
// source's shape (nil when the option has no data); values the forward did
// not read are 0.
func (k *FullyConnectedGradient) EncodeNewWithState(cb *vk.CommandBuffer, dy, src *Image, st *ConvolutionGradientState) (*Image, error) {
	return convEncodeNewGrad(cb, &k.Kernel, st, dy, k.GradientOption, func(dx *Image) error { return k.EncodeWithState(cb, dy, src, st, dx) })
}
