package ops

import (
	"fmt"

	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// ConvolutionTransposePadding returns PyTorch ConvTranspose2d's padding
// as a padding policy for ConvolutionTranspose (a reverse filter): pads
// (top, left, bottom, right; PyTorch's padding, the rows and columns taken
// off the full output, which may differ per side) and output_padding
// (extra rows and columns at the bottom and right, each smaller than the
// stride or the dilation of its axis). Per axis:
//
//	dst    = (src-1)*stride - before - after + ke + outputPadding
//	offset = before + floor(ke/2) - (ke-1)
//
// (ke = (k-1)*dilation + 1), the offset being the window centre of
// destination pixel 0 in the zero-inserted source, as
// ConvolutionTranspose reads it. Method is Custom; Label
// "transpose(top,left,bottom,right out x,y)".
func ConvolutionTransposePadding(pads padding.Pads, outputPaddingX, outputPaddingY int) padding.Policy {
	return convTransposePolicy{pads: pads, opX: outputPaddingX, opY: outputPaddingY}
}

type convTransposePolicy struct {
	pads     padding.Pads
	opX, opY int
}

func (p convTransposePolicy) Method() padding.Method { return padding.Custom }

func (p convTransposePolicy) Label() string {
	return fmt.Sprintf("transpose(%v out %d,%d)", p.pads, p.opX, p.opY)
}

func (p convTransposePolicy) Destination(req padding.Request) (padding.Result, error) {
	bad := func(format string, args ...any) (padding.Result, error) {
		return padding.Result{}, &padding.Error{Err: padding.ErrInvalidGeometry, Msg: fmt.Sprintf(format, args...)}
	}
	k := req.Kernel
	if !k.Reverse {
		return bad("transpose padding applies to a reverse kernel (ConvolutionTranspose)")
	}
	if len(req.Sources) == 0 {
		return bad("no source image")
	}
	src := req.Sources[0]
	axis := func(name string, n, kernel, stride, dilation, before, after, op int) (dst, off int, err error) {
		if before < 0 || after < 0 {
			_, err = bad("negative %s pads %d, %d", name, before, after)
			return 0, 0, err
		}
		if op < 0 || (op >= stride && op >= dilation) {
			_, err = bad("%s output padding %d: want 0 <= it < stride %d or dilation %d", name, op, stride, dilation)
			return 0, 0, err
		}
		ke := (kernel-1)*dilation + 1
		dst = (n-1)*stride - before - after + ke + op
		if dst < 1 {
			return 0, 0, &padding.Error{Err: padding.ErrEmptyDestination, Msg: fmt.Sprintf("destination %s %d < 1", name, dst)}
		}
		return dst, before + ke/2 - (ke - 1), nil
	}
	w, ox, err := axis("width", src.W, k.KernelW, k.StrideX, k.DilationX, p.pads.Left, p.pads.Right, p.opX)
	if err != nil {
		return padding.Result{}, err
	}
	h, oy, err := axis("height", src.H, k.KernelH, k.StrideY, k.DilationY, p.pads.Top, p.pads.Bottom, p.opY)
	if err != nil {
		return padding.Result{}, err
	}
	return padding.Result{Dest: padding.Descriptor{N: src.N, C: src.C, H: h, W: w}, OffsetX: ox, OffsetY: oy, Pads: p.pads}, nil
}

// transposed returns the convolution a transpose convolution of d is the
// data gradient of: from its destination (O channels) to its source (I).
// Its weights, (I, O/G, KH, KW), are the transpose's as given.
func (d ConvolutionDescriptor) transposed() ConvolutionDescriptor {
	d = d.normalized()
	d.InputFeatureChannels, d.OutputFeatureChannels = d.OutputFeatureChannels, d.InputFeatureChannels
	return d
}

// TransposeWeightsDescriptor returns the shape of a transpose
// convolution's weights: I x O/Groups x KernelHeight x KernelWidth
// (PyTorch's ConvTranspose2d), float32.
func (d ConvolutionDescriptor) TransposeWeightsDescriptor() ImageDescriptor {
	d = d.normalized()
	return ImageDescriptor{N: d.InputFeatureChannels, C: d.OutputFeatureChannels / d.Groups, H: d.KernelHeight, W: d.KernelWidth}
}

// TransposeResultDescriptor returns the destination of a transpose
// convolution of src (I channels) under policy p (nil: padding.Same) and
// the policy's result, without a device. MPS policies give MPS's reverse
// size (src-1)*stride + 1 + style*(ke-1); ConvolutionTransposePadding
// gives PyTorch's.
func (d ConvolutionDescriptor) TransposeResultDescriptor(src ImageDescriptor, p padding.Policy) (ImageDescriptor, padding.Result, error) {
	const label = "ConvolutionTranspose"
	if err := d.Validate(label); err != nil {
		return ImageDescriptor{}, padding.Result{}, err
	}
	if src.C != d.InputFeatureChannels {
		return ImageDescriptor{}, padding.Result{}, fmt.Errorf("%w: %s: source has %d channels, the kernel reads %d", ErrShape, label, src.C, d.InputFeatureChannels)
	}
	if p == nil {
		p = padding.WithMethod(padding.Same)
	}
	k := d.PaddingKernel(label)
	k.Reverse = true
	r, err := padding.Resolve(p, []padding.Descriptor{src.Descriptor()}, nil, k)
	if err != nil {
		return ImageDescriptor{}, r, fmt.Errorf("%s: %w", label, err)
	}
	return ImageDescriptor{N: r.Dest.N, C: d.OutputFeatureChannels, H: r.Dest.H, W: r.Dest.W, Format: src.Format}, r, nil
}

// ConvolutionTranspose is a transpose convolution
// (MPSCNNConvolutionTranspose) with PyTorch's ConvTranspose2d semantics:
// weights (I, O/Groups, KH, KW), and each source pixel scatters its
// weighted kernel into the destination:
//
//	dst(n, o, p) = neuron(bias[o] + sum over i in o's group and source pixels q, taps t
//	               with p = first + q*stride + t*dilation of w[i][o][t] * src(n, i, q))
//
// i.e. a convolution over the source with zeros inserted between its
// pixels (stride-1 of them) and the kernel rotated by 180 degrees (MPS
// uses the weights unrotated; PyTorch's layout and orientation win here).
// Offset is the window centre, in that zero-inserted source, of
// destination pixel ClipRect origin: first = floor(ke/2) - (ke-1) - Offset
// is PyTorch's -padding. The padding policy (a reverse filter: MPS's
// methods give (src-1)*stride + 1 + style*(ke-1);
// ConvolutionTransposePadding gives PyTorch's padding and output_padding)
// sizes EncodeNew's destination and sets Offset. Channels, clip, formats,
// the fused neuron and determinism are as for Convolution (I channels read,
// O written).
type ConvolutionTranspose struct {
	Kernel
	desc ConvolutionDescriptor
	convFamily
}

// NewConvolutionTranspose makes a transpose convolution kernel for d
// (InputFeatureChannels I read, OutputFeatureChannels O written).
func NewConvolutionTranspose(dev *vk.Device, d ConvolutionDescriptor) (*ConvolutionTranspose, error) {
	k := &ConvolutionTranspose{desc: d.normalized()}
	k.Label = "ConvolutionTranspose"
	if dev == nil {
		return nil, fmt.Errorf("%w: %s: nil device", ErrDevice, k.Label)
	}
	if err := d.Validate(k.Label); err != nil {
		return nil, err
	}
	k.dev = dev
	var err error
	if err = k.newEngine(dev, &k.Label, k.desc.Neuron); err != nil {
		return nil, err
	}
	return k, nil
}

// Descriptor returns the kernel's descriptor.
func (k *ConvolutionTranspose) Descriptor() ConvolutionDescriptor { return k.desc }

// DestinationImageDescriptor applies the padding policy to src, sets
// Offset from it and returns the destination to create (its C includes
// DestinationFeatureChannelOffset).
func (k *ConvolutionTranspose) DestinationImageDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	sd := src
	sd.C -= k.SourceFeatureChannelOffset
	sd.N -= k.Offset.Z
	if sd.C < k.desc.InputFeatureChannels || k.SourceFeatureChannelOffset < 0 {
		return ImageDescriptor{}, fmt.Errorf("%w: %s: source of %d channels has no %d channels from channel %d", ErrChannelRange, k.Label,
			src.C, k.desc.InputFeatureChannels, k.SourceFeatureChannelOffset)
	}
	if sd.N < 1 || k.Offset.Z < 0 {
		return ImageDescriptor{}, fmt.Errorf("%w: %s: offset.z %d outside the %d batch images of the source", ErrShape, k.Label, k.Offset.Z, src.N)
	}
	sd.C = k.desc.InputFeatureChannels
	pk := k.desc.PaddingKernel(k.Label)
	pk.Reverse = true
	r, err := padding.Resolve(k.policy(), []padding.Descriptor{sd.Descriptor()}, nil, pk)
	if err != nil {
		return ImageDescriptor{}, fmt.Errorf("%s: %w", k.Label, err)
	}
	k.Offset.X, k.Offset.Y = r.OffsetX, r.OffsetY
	return ImageDescriptor{N: r.Dest.N, C: k.DestinationFeatureChannelOffset + k.desc.OutputFeatureChannels, H: r.Dest.H, W: r.Dest.W,
		Format: src.Format, Label: k.Label + " destination"}, nil
}

// Encode records the transpose convolution of src into dst with the
// kernel's properties as set. bias may be nil.
func (k *ConvolutionTranspose) Encode(cb *vk.CommandBuffer, src, weights, bias, dst *Image) error {
	_, err := k.encode(cb, src, weights, bias, dst, false)
	return err
}

// EncodeWithState is Encode that also returns the gradient state for
// ConvolutionTransposeGradient.
func (k *ConvolutionTranspose) EncodeWithState(cb *vk.CommandBuffer, src, weights, bias, dst *Image) (*ConvolutionGradientState, error) {
	return k.encode(cb, src, weights, bias, dst, true)
}

// EncodeNew sizes the destination with the padding policy, sets Offset and
// encodes into it. The caller closes the image.
func (k *ConvolutionTranspose) EncodeNew(cb *vk.CommandBuffer, src, weights, bias *Image) (*Image, error) {
	dst, _, err := encodeNewConv(&k.Kernel, k, cb, src, weights, bias, false, true)
	return dst, err
}

// EncodeNewWithState is EncodeNew that also returns the gradient state.
func (k *ConvolutionTranspose) EncodeNewWithState(cb *vk.CommandBuffer, src, weights, bias *Image) (*Image, *ConvolutionGradientState, error) {
	return encodeNewConv(&k.Kernel, k, cb, src, weights, bias, true, true)
}

// transposeFirst returns the destination-region position of the first
// tap of source pixel (0, 0): floor(ke/2) - (ke-1) - offset per axis.
func (d ConvolutionDescriptor) transposeFirst(offX, offY int) (int, int) {
	kx, ky := d.effective()
	return kx/2 - (kx - 1) - offX, ky/2 - (ky - 1) - offY
}

func (k *ConvolutionTranspose) encode(cb *vk.CommandBuffer, src, weights, bias, dst *Image, state bool) (*ConvolutionGradientState, error) {
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
	if err := convCheckParams(&k.Kernel, weights, bias, d.TransposeWeightsDescriptor(), 0, d.OutputFeatureChannels); err != nil {
		return nil, err
	}
	if overlaps(weights, dst) || (bias != nil && overlaps(bias, dst)) {
		return nil, fmt.Errorf("%w: %s: destination %s shares storage with the weights or bias", ErrAlias, k.Label, dst)
	}
	j.firstX, j.firstY = d.transposeFirst(j.offX, j.offY)
	out := convRegion{im: dst, n0: j.dstN0, c0: j.dstC0, channels: d.OutputFeatureChannels, x0: j.clipX, y0: j.clipY, w: j.clipW, h: j.clipH}
	neuron := !d.Neuron.IsIdentity()
	var st *ConvolutionGradientState
	if state {
		st = convNewState(convKindTranspose, d, &k.Kernel, &j, weights, bias)
		if neuron {
			if st.z, err = NewImage(k.dev, ImageDescriptor{N: j.batches, C: d.OutputFeatureChannels, H: j.clipH, W: j.clipW,
				Format: dst.format, Label: k.Label + " pre-activation"}); err != nil {
				return nil, fmt.Errorf("%s: %w", k.Label, err)
			}
			out = convWhole(st.z, 0, 0, d.OutputFeatureChannels)
		}
	}
	g := convDataGemm(d.transposed(), convWhole(src, j.srcN0, j.srcC0, d.InputFeatureChannels), out, j.firstX, j.firstY, j.batches, weights)
	g.bias = bias
	g.neuron = neuron && (st == nil || st.z == nil)
	if err := k.eng.encodeImageGemm(cb, &g); err != nil {
		st.Close()
		return nil, err
	}
	if st != nil && st.z != nil {
		zr := convWhole(st.z, 0, 0, d.OutputFeatureChannels)
		dr := convRegion{im: dst, n0: j.dstN0, c0: j.dstC0, channels: d.OutputFeatureChannels, x0: j.clipX, y0: j.clipY, w: j.clipW, h: j.clipH}
		if err := k.eng.encodeNeuron(cb, 0, zr, zr, dr, j.batches); err != nil {
			st.Close()
			return nil, err
		}
	}
	return st, nil
}

// ConvolutionTransposeGradient is the gradient of a ConvolutionTranspose:
// with dy w.r.t. its linear output,
//
//	dx      = the convolution of dy with the same weights (the transpose's source shape),
//	dW[i][o][t] = sum over n and source pixels q of src(n, i, q) * dy(n, o, first + q*stride + t*dilation),
//	db[o]   = sum of dy over the batch and the pixels,
//
// dW and db summed over the batch in a fixed order. The forms and their
// conventions are ConvolutionGradient's: EncodeData and EncodeWeights use
// whole images (dy's O channels from SourceFeatureChannelOffset, dx's I
// channels from DestinationFeatureChannelOffset) with the forward's Offset
// given by SetForwardOffset (-(Offset*stride + KernelOffset)), and
// EncodeWithState takes everything, the fused neuron included, from the
// forward's state.
type ConvolutionTransposeGradient struct {
	GradientKernel
	GradientOption ConvolutionGradientOption
	desc           ConvolutionDescriptor
	convFamily
}

// NewConvolutionTransposeGradient makes the gradient kernel of a transpose
// convolution of d.
func NewConvolutionTransposeGradient(dev *vk.Device, d ConvolutionDescriptor) (*ConvolutionTransposeGradient, error) {
	k := &ConvolutionTransposeGradient{desc: d.normalized()}
	k.Label = "ConvolutionTransposeGradient"
	if dev == nil {
		return nil, fmt.Errorf("%w: %s: nil device", ErrDevice, k.Label)
	}
	if err := d.Validate(k.Label); err != nil {
		return nil, err
	}
	k.dev = dev
	var err error
	if err = k.newEngine(dev, &k.Label, k.desc.Neuron); err != nil {
		return nil, err
	}
	return k, nil
}

// Descriptor returns the kernel's descriptor.
func (k *ConvolutionTransposeGradient) Descriptor() ConvolutionDescriptor { return k.desc }

// SetForwardOffset places the windows as a forward ConvolutionTranspose
// with Offset (x, y) did: Offset becomes 0 and KernelOffset -(x, y).
func (k *ConvolutionTransposeGradient) SetForwardOffset(x, y int) {
	k.Offset = Offset{}
	k.KernelOffsetX, k.KernelOffsetY = -x, -y
}

// transposeGradientFirst is the explicit forms' first tap.
func (k *ConvolutionTransposeGradient) first() (int, int, error) {
	if k.ClipRect != (Region{}) {
		return 0, 0, fmt.Errorf("%w: %s: clip rectangle %+v: the explicit gradient forms write whole images (use a zero ClipRect)", ErrGeometry, k.Label, k.ClipRect)
	}
	if k.Offset.Z != 0 {
		return 0, 0, fmt.Errorf("%w: %s: offset.z %d: the explicit gradient forms use every batch image", ErrShape, k.Label, k.Offset.Z)
	}
	d := k.desc
	ox := -(int64(k.Offset.X)*int64(d.StrideX) + int64(k.KernelOffsetX))
	oy := -(int64(k.Offset.Y)*int64(d.StrideY) + int64(k.KernelOffsetY))
	const lim = 1 << 29
	if ox < -lim || ox > lim || oy < -lim || oy > lim {
		return 0, 0, fmt.Errorf("%w: %s: offset (%d, %d) and kernel offset (%d, %d) place the windows beyond 2^29 pixels", ErrGeometry, k.Label,
			k.Offset.X, k.Offset.Y, k.KernelOffsetX, k.KernelOffsetY)
	}
	fx, fy := d.transposeFirst(int(ox), int(oy))
	return fx, fy, nil
}

// EncodeData records dx (the transpose's source shape: I channels from
// DestinationFeatureChannelOffset) from dy and the weights.
func (k *ConvolutionTransposeGradient) EncodeData(cb *vk.CommandBuffer, dy, weights, dx *Image) error {
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
	if err := convCheckParams(&k.Kernel, weights, nil, d.TransposeWeightsDescriptor(), 0, d.OutputFeatureChannels); err != nil {
		return err
	}
	if overlaps(dy, dx) || overlaps(weights, dx) {
		return fmt.Errorf("%w: %s: destination gradient %s shares storage with the source gradient or the weights", ErrAlias, k.Label, dx)
	}
	if err := convCheckChannels(&k.Kernel, "source gradient", dy, k.SourceFeatureChannelOffset, d.OutputFeatureChannels); err != nil {
		return err
	}
	if err := convCheckChannels(&k.Kernel, "destination gradient", dx, k.DestinationFeatureChannelOffset, d.InputFeatureChannels); err != nil {
		return err
	}
	if dy.n != dx.n {
		return fmt.Errorf("%w: %s: source gradient %s and destination gradient %s differ in batch size", ErrShape, k.Label, dy, dx)
	}
	fx, fy, err := k.first()
	if err != nil {
		return err
	}
	g := convForwardGemm(d.transposed(), convWhole(dy, 0, k.SourceFeatureChannelOffset, d.OutputFeatureChannels),
		convWhole(dx, 0, k.DestinationFeatureChannelOffset, d.InputFeatureChannels), fx, fy, dy.n, weights, nil)
	return k.eng.encodeImageGemm(cb, &g)
}

// EncodeWeights records dW (I x O/G x KH x KW) and, when db is not nil,
// db (1 x O x 1 x 1), float32, from dy and the transpose's source src (I
// channels, dy's batch size).
func (k *ConvolutionTransposeGradient) EncodeWeights(cb *vk.CommandBuffer, dy, src, dW, db *Image) error {
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
	if err := convCheckGradOutputs(&k.Kernel, dW, db, d.TransposeWeightsDescriptor(), 0, d.OutputFeatureChannels, dy, src); err != nil {
		return err
	}
	if err := convCheckChannels(&k.Kernel, "source gradient", dy, k.SourceFeatureChannelOffset, d.OutputFeatureChannels); err != nil {
		return err
	}
	if src.c != d.InputFeatureChannels || src.n != dy.n {
		return fmt.Errorf("%w: %s: source image %s, want %d channels and the %d batch images of source gradient %s", ErrShape, k.Label,
			src, d.InputFeatureChannels, dy.n, dy)
	}
	fx, fy, err := k.first()
	if err != nil {
		return err
	}
	dyR := convWhole(dy, 0, k.SourceFeatureChannelOffset, d.OutputFeatureChannels)
	j := convWeightsJob(d.transposed(), convWhole(src, 0, 0, d.InputFeatureChannels), dyR, fx, fy, dy.n, dW, db)
	j.biasFrom = dyR
	return k.eng.encodeWeightsGemm(cb, &j)
}

// EncodeWithState records the gradient of the forward encode that made st,
// as ConvolutionGradient.EncodeWithState does.
func (k *ConvolutionTransposeGradient) EncodeWithState(cb *vk.CommandBuffer, dy, src *Image, st *ConvolutionGradientState, dx *Image) error {
	if k.eng.dev == nil {
		return fmt.Errorf("%w: %s: kernel not made by its constructor (no device)", ErrDevice, k.Label)
	}
	if !k.GradientOption.valid() {
		return fmt.Errorf("%w: %s: unknown gradient option %d", ErrGeometry, k.Label, int(k.GradientOption))
	}
	if err := convCheckState(&k.Kernel, st, convKindTranspose, k.desc); err != nil {
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
	if k.GradientOption.data() {
		dxR := convWhole(dx, st.Offset.Z, st.SourceFeatureChannelOffset, d.InputFeatureChannels)
		jd := convForwardGemm(d.transposed(), g.dyR, dxR, st.firstX, st.firstY, g.batch, st.weights, nil)
		if err := k.eng.encodeImageGemm(cb, &jd); err != nil {
			return err
		}
	}
	if k.GradientOption.weights() {
		dW, db, err := convStateOutputs(&k.Kernel, st, d.TransposeWeightsDescriptor(), d.OutputFeatureChannels)
		if err != nil {
			return err
		}
		jw := convWeightsJob(d.transposed(), g.xR, g.dyR, st.firstX, st.firstY, g.batch, dW, db)
		jw.biasFrom = g.dyR
		if err := k.eng.encodeWeightsGemm(cb, &jw); err != nil {
			return err
		}
	}
	return nil
}

// EncodeNewWithState is EncodeWithState into a new dx of the forward
// source's shape (nil when the option has no data); values the forward did
// not read are 0.
func (k *ConvolutionTransposeGradient) EncodeNewWithState(cb *vk.CommandBuffer, dy, src *Image, st *ConvolutionGradientState) (*Image, error) {
	return convEncodeNewGrad(cb, &k.Kernel, st, dy, k.GradientOption, func(dx *Image) error { return k.EncodeWithState(cb, dy, src, st, dx) })
}
