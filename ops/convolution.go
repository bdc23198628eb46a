package ops

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// ConvolutionDescriptor describes a convolution (MPSCNNConvolutionDescriptor)
// and, read as below, a transpose convolution and a fully connected layer.
// Zero Groups, strides and dilations mean 1.
//
// Convolution: InputFeatureChannels I in, OutputFeatureChannels O out,
// weights (O, I/Groups, KernelHeight, KernelWidth) as PyTorch's Conv2d,
// given as an image N=O, C=I/Groups, H=KernelHeight, W=KernelWidth.
// Groups split the channels into that many independent convolutions;
// Groups == I is a depthwise convolution (O a multiple of I).
//
// Neuron is fused: applied to every result in the same pass
// (MPSCNNConvolutionDescriptor's fused neuron), PReLU with one slope per
// output channel.
type ConvolutionDescriptor struct {
	KernelWidth, KernelHeight                   int
	InputFeatureChannels, OutputFeatureChannels int
	Groups                                      int
	StrideX, StrideY                            int
	DilationX, DilationY                        int
	Neuron                                      NeuronDescriptor
}

// normalized returns d with zero groups, strides and dilations set to 1.
func (d ConvolutionDescriptor) normalized() ConvolutionDescriptor {
	for _, p := range []*int{&d.Groups, &d.StrideX, &d.StrideY, &d.DilationX, &d.DilationY} {
		if *p == 0 {
			*p = 1
		}
	}
	return d
}

// Validate checks the descriptor; label names the kernel in errors.
// Sizes must be 1..32768, Groups must divide both channel counts, and the
// neuron must be valid for O channels. Errors wrap ErrGeometry.
func (d ConvolutionDescriptor) Validate(label string) error {
	d = d.normalized()
	for _, v := range []struct {
		what string
		n    int
	}{{"kernel width", d.KernelWidth}, {"kernel height", d.KernelHeight},
		{"input feature channels", d.InputFeatureChannels}, {"output feature channels", d.OutputFeatureChannels},
		{"groups", d.Groups}, {"stride x", d.StrideX}, {"stride y", d.StrideY},
		{"dilation x", d.DilationX}, {"dilation y", d.DilationY}} {
		if v.n < 1 {
			return fmt.Errorf("%w: %s: %s %d < 1", ErrGeometry, label, v.what, v.n)
		}
		if v.n > 1<<15 && v.what != "input feature channels" && v.what != "output feature channels" && v.what != "groups" {
			return fmt.Errorf("%w: %s: %s %d > %d", ErrGeometry, label, v.what, v.n, 1<<15)
		}
		if v.n > 1<<24 {
			return fmt.Errorf("%w: %s: %s %d > %d", ErrGeometry, label, v.what, v.n, 1<<24)
		}
	}
	if d.InputFeatureChannels%d.Groups != 0 || d.OutputFeatureChannels%d.Groups != 0 {
		return fmt.Errorf("%w: %s: %d groups do not divide %d input and %d output feature channels", ErrGeometry, label,
			d.Groups, d.InputFeatureChannels, d.OutputFeatureChannels)
	}
	kx, ky := d.effective()
	if kx > 1<<15 || ky > 1<<15 {
		return fmt.Errorf("%w: %s: window extent %dx%d over %d", ErrGeometry, label, kx, ky, 1<<15)
	}
	return d.Neuron.Validate(label, d.OutputFeatureChannels)
}

// effective returns the window's extent per axis, (k-1)*d+1.
func (d ConvolutionDescriptor) effective() (int, int) {
	d = d.normalized()
	return (d.KernelWidth-1)*d.DilationX + 1, (d.KernelHeight-1)*d.DilationY + 1
}

// WeightsDescriptor returns the shape of the convolution's weights:
// O x I/Groups x KernelHeight x KernelWidth, float32.
func (d ConvolutionDescriptor) WeightsDescriptor() ImageDescriptor {
	d = d.normalized()
	return ImageDescriptor{N: d.OutputFeatureChannels, C: d.InputFeatureChannels / d.Groups, H: d.KernelHeight, W: d.KernelWidth}
}

// BiasDescriptor returns the shape of the bias: 1 x O x 1 x 1, float32.
func (d ConvolutionDescriptor) BiasDescriptor() ImageDescriptor {
	return ImageDescriptor{N: 1, C: d.OutputFeatureChannels, H: 1, W: 1}
}

// PaddingKernel describes the convolution to a padding policy (edge mode
// zero). name labels it in errors.
func (d ConvolutionDescriptor) PaddingKernel(name string) padding.Kernel {
	d = d.normalized()
	return padding.Kernel{Name: name, KernelW: d.KernelWidth, KernelH: d.KernelHeight, StrideX: d.StrideX, StrideY: d.StrideY,
		DilationX: d.DilationX, DilationY: d.DilationY}
}

// ResultDescriptor returns the destination of a convolution of src under
// policy p (nil: MPS's default, padding.Same), and the policy's result
// (Result.OffsetX/Y is the kernel offset to set). It needs no device. src
// must have I channels. Explicit pads (padding.Explicit) reproduce
// PyTorch's Conv2d: H = floor((H + top + bottom - ke) / stride) + 1.
func (d ConvolutionDescriptor) ResultDescriptor(src ImageDescriptor, p padding.Policy) (ImageDescriptor, padding.Result, error) {
	const label = "Convolution"
	if err := d.Validate(label); err != nil {
		return ImageDescriptor{}, padding.Result{}, err
	}
	if src.C != d.InputFeatureChannels {
		return ImageDescriptor{}, padding.Result{}, fmt.Errorf("%w: %s: source has %d channels, the convolution reads %d", ErrShape, label, src.C, d.InputFeatureChannels)
	}
	if p == nil {
		p = padding.WithMethod(padding.Same)
	}
	r, err := padding.Resolve(p, []padding.Descriptor{src.Descriptor()}, nil, d.PaddingKernel(label))
	if err != nil {
		return ImageDescriptor{}, r, fmt.Errorf("%s: %w", label, err)
	}
	return ImageDescriptor{N: r.Dest.N, C: d.OutputFeatureChannels, H: r.Dest.H, W: r.Dest.W, Format: src.Format}, r, nil
}

// convShape is a descriptor without its neuron (comparable).
type convShape struct {
	KernelWidth, KernelHeight                   int
	InputFeatureChannels, OutputFeatureChannels int
	Groups                                      int
	StrideX, StrideY                            int
	DilationX, DilationY                        int
}

func (d ConvolutionDescriptor) shape() convShape {
	d = d.normalized()
	return convShape{d.KernelWidth, d.KernelHeight, d.InputFeatureChannels, d.OutputFeatureChannels, d.Groups,
		d.StrideX, d.StrideY, d.DilationX, d.DilationY}
}

// depthwise reports whether the convolution is depthwise: one input
// channel per group.
func (d ConvolutionDescriptor) depthwise() bool {
	d = d.normalized()
	return d.Groups == d.InputFeatureChannels
}

func (d ConvolutionDescriptor) geom() [6]int32 {
	d = d.normalized()
	return [6]int32{int32(d.KernelWidth), int32(d.KernelHeight), int32(d.StrideX), int32(d.StrideY), int32(d.DilationX), int32(d.DilationY)}
}

// Convolution is a 2-D convolution (MPSCNNConvolution) with an optional
// bias and fused neuron:
//
//	dst(n, o, x, y) = neuron(bias[o] + sum over i in o's group, ky, kx of
//	    weights[o][i][ky][kx] * src(n, i, first + (x*StrideX + kx*DilationX, y*StrideY + ky*DilationY)))
//
// where first = Offset - floor(ke/2) (ke = (k-1)*dilation + 1) is the
// first tap of the clip origin's window, as for pooling: Offset is the
// source position of the window centre of destination pixel ClipRect
// origin, and even windows lean to the top left. Reads outside the source
// are 0 under either edge mode (for a weighted sum SPEC.md's EdgeClamp,
// which shrinks the window to its in-image taps, is the same). The padding
// policy (default padding.Same) sizes EncodeNew's destination and sets
// Offset; padding.Explicit reproduces PyTorch's Conv2d padding.
//
// The kernel reads I channels from SourceFeatureChannelOffset (a
// SourceFeatureChannelMaxCount under I is an error) and writes O channels
// from DestinationFeatureChannelOffset, so it can write into a channel
// view; only ClipRect's pixels and batch images are written. Weights and
// bias are float32 images (WeightsDescriptor, BiasDescriptor) read on
// every encode, so an optimizer may update them on the GPU; source and
// destination are float32 or float16 images of one format (float16 is
// storage: products are added in float32 and rounded once). Sums run in a
// fixed order: results repeat bit for bit on a device.
type Convolution struct {
	Kernel
	desc ConvolutionDescriptor
	convFamily
}

// NewConvolution makes a convolution kernel for d.
func NewConvolution(dev *vk.Device, d ConvolutionDescriptor) (*Convolution, error) {
	k := &Convolution{desc: d.normalized()}
	k.Label = "Convolution"
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

// Descriptor returns the kernel's descriptor (zero fields normalized to 1).
func (k *Convolution) Descriptor() ConvolutionDescriptor { return k.desc }

// DestinationImageDescriptor applies the padding policy to src (the
// channels and batch images the kernel reads), sets Offset from it and
// returns the destination to create (its C includes
// DestinationFeatureChannelOffset), as MPS's
// destinationImageDescriptorForSourceImages does.
func (k *Convolution) DestinationImageDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	r, err := k.resolvePadding(src)
	if err != nil {
		return ImageDescriptor{}, err
	}
	k.Offset.X, k.Offset.Y = r.OffsetX, r.OffsetY
	return ImageDescriptor{N: r.Dest.N, C: k.DestinationFeatureChannelOffset + k.desc.OutputFeatureChannels, H: r.Dest.H, W: r.Dest.W,
		Format: src.Format, Label: k.Label + " destination"}, nil
}

func (k *Convolution) resolvePadding(src ImageDescriptor) (padding.Result, error) {
	sd := src
	sd.C -= k.SourceFeatureChannelOffset
	sd.N -= k.Offset.Z
	if sd.C < k.desc.InputFeatureChannels || k.SourceFeatureChannelOffset < 0 {
		return padding.Result{}, fmt.Errorf("%w: %s: source of %d channels has no %d channels from channel %d", ErrChannelRange, k.Label,
			src.C, k.desc.InputFeatureChannels, k.SourceFeatureChannelOffset)
	}
	if sd.N < 1 || k.Offset.Z < 0 {
		return padding.Result{}, fmt.Errorf("%w: %s: offset.z %d outside the %d batch images of the source", ErrShape, k.Label, k.Offset.Z, src.N)
	}
	sd.C = k.desc.InputFeatureChannels
	r, err := padding.Resolve(k.policy(), []padding.Descriptor{sd.Descriptor()}, nil, k.desc.PaddingKernel(k.Label))
	if err != nil {
		return r, fmt.Errorf("%s: %w", k.Label, err)
	}
	return r, nil
}

// Encode records the convolution of src into dst with the kernel's
// properties as set. bias may be nil.
func (k *Convolution) Encode(cb *vk.CommandBuffer, src, weights, bias, dst *Image) error {
	_, err := k.encode(cb, src, weights, bias, dst, false)
	return err
}

// EncodeWithState is Encode that also returns the state
// ConvolutionGradient.EncodeWithState needs (it keeps the pre-activation
// values when a neuron is fused). The caller closes the state.
func (k *Convolution) EncodeWithState(cb *vk.CommandBuffer, src, weights, bias, dst *Image) (*ConvolutionGradientState, error) {
	return k.encode(cb, src, weights, bias, dst, true)
}

// EncodeNew sizes a destination with the padding policy, sets Offset from
// it, and encodes into it. The caller closes the returned image.
func (k *Convolution) EncodeNew(cb *vk.CommandBuffer, src, weights, bias *Image) (*Image, error) {
	dst, _, err := encodeNewConv(&k.Kernel, k, cb, src, weights, bias, false, true)
	return dst, err
}

// EncodeNewWithState is EncodeNew that also returns the gradient state.
func (k *Convolution) EncodeNewWithState(cb *vk.CommandBuffer, src, weights, bias *Image) (*Image, *ConvolutionGradientState, error) {
	return encodeNewConv(&k.Kernel, k, cb, src, weights, bias, true, true)
}

// convJob is a forward encode resolved against its images.
type convJob struct {
	src, dst       *Image
	srcC0, dstC0   int
	srcN0, dstN0   int
	batches        int
	clipX, clipY   int
	clipW, clipH   int
	offX, offY     int
	firstX, firstY int // source position of the first tap of the clip origin's window
}

// convCheckParams validates the weights and bias of a family kernel: float32,
// contiguous, of the given shape (weights: any shape of n values per row
// when rowValues > 0, the fully connected layout), not aliasing dst.
func convCheckParams(k *Kernel, weights, bias *Image, want ImageDescriptor, rowValues, outputs int) error {
	if err := k.checkImage("weights", weights); err != nil {
		return err
	}
	if weights.format != Float32 {
		return fmt.Errorf("%w: %s: weights %s are %v; weights are float32", ErrFormat, k.Label, weights, weights.format)
	}
	if rowValues > 0 {
		if weights.n != want.N || weights.c*weights.h*weights.w != rowValues {
			return fmt.Errorf("%w: %s: weights %s, want %d rows of %d values (%dx%dx1x1 or %dx%dx%dx%d)", ErrShape, k.Label, weights,
				want.N, rowValues, want.N, rowValues, want.N, want.C, want.H, want.W)
		}
	} else if weights.n != want.N || weights.c != want.C || weights.h != want.H || weights.w != want.W {
		return fmt.Errorf("%w: %s: weights %s, want %dx%dx%dx%d", ErrShape, k.Label, weights, want.N, want.C, want.H, want.W)
	}
	if !weights.contiguous() {
		return fmt.Errorf("%w: %s: weights %s are a channel view; weights must be one run of values", ErrShape, k.Label, weights)
	}
	if bias == nil {
		return nil
	}
	if err := k.checkImage("bias", bias); err != nil {
		return err
	}
	if bias.format != Float32 {
		return fmt.Errorf("%w: %s: bias %s is %v; the bias is float32", ErrFormat, k.Label, bias, bias.format)
	}
	if bias.Len() != outputs || !bias.contiguous() {
		return fmt.Errorf("%w: %s: bias %s has %d values, want %d (1x%dx1x1)", ErrShape, k.Label, bias, bias.Len(), outputs, outputs)
	}
	return nil
}

// convResolve checks the images of a forward encode against the kernel's
// properties: in channels read from src, out channels written into dst.
// Checks run in a fixed order: images, device, format, parameters,
// aliasing, channels, batch, clip, offset.
func convResolve(k *Kernel, src, dst *Image, in, out int) (convJob, error) {
	var j convJob
	if err := k.checkImage("source", src); err != nil {
		return j, err
	}
	if err := k.checkImage("destination", dst); err != nil {
		return j, err
	}
	if err := k.sameFormat("source", src, "destination", dst); err != nil {
		return j, err
	}
	if overlaps(src, dst) {
		return j, fmt.Errorf("%w: %s: source %s and destination %s share storage", ErrAlias, k.Label, src, dst)
	}
	so, do := k.SourceFeatureChannelOffset, k.DestinationFeatureChannelOffset
	if so < 0 || so > src.c-in {
		return j, fmt.Errorf("%w: %s: source %s has no %d channels from channel offset %d", ErrChannelRange, k.Label, src, in, so)
	}
	if m := k.SourceFeatureChannelMaxCount; m < 0 || (m > 0 && m < in) {
		return j, fmt.Errorf("%w: %s: source channel max count %d, the kernel reads %d channels", ErrChannelRange, k.Label, m, in)
	}
	if do < 0 || do > dst.c-out {
		return j, fmt.Errorf("%w: %s: %d channels from channel offset %d do not fit destination %s", ErrChannelRange, k.Label, out, do, dst)
	}
	j.srcC0, j.dstC0 = so, do
	cr := k.ClipRect
	if cr.X < 0 || cr.Y < 0 || cr.Z < 0 || cr.Width < 0 || cr.Height < 0 || cr.Depth < 0 {
		return j, fmt.Errorf("%w: %s: clip rectangle %+v has a negative field", ErrGeometry, k.Label, cr)
	}
	if cr.Z >= dst.n {
		return j, fmt.Errorf("%w: %s: clip rectangle starts at batch image %d of a destination with %d", ErrShape, k.Label, cr.Z, dst.n)
	}
	j.batches = dst.n - cr.Z
	if cr.Depth > 0 && cr.Depth < j.batches {
		j.batches = cr.Depth
	}
	if k.Offset.Z < 0 || k.Offset.Z > src.n-j.batches {
		return j, fmt.Errorf("%w: %s: %d batch images from source image %d, but source %s has %d", ErrShape, k.Label, j.batches, k.Offset.Z, src, src.n)
	}
	j.srcN0, j.dstN0 = k.Offset.Z, cr.Z
	if cr.X >= dst.w || cr.Y >= dst.h {
		return j, fmt.Errorf("%w: %s: clip rectangle origin (%d, %d) lies outside destination %s", ErrGeometry, k.Label, cr.X, cr.Y, dst)
	}
	j.clipX, j.clipY = cr.X, cr.Y
	j.clipW, j.clipH = dst.w-cr.X, dst.h-cr.Y
	if cr.Width > 0 && cr.Width < j.clipW {
		j.clipW = cr.Width
	}
	if cr.Height > 0 && cr.Height < j.clipH {
		j.clipH = cr.Height
	}
	if lim := 1 << 30; k.Offset.X < -lim || k.Offset.X > lim || k.Offset.Y < -lim || k.Offset.Y > lim {
		return j, fmt.Errorf("%w: %s: offset (%d, %d) outside ±2^30", ErrGeometry, k.Label, k.Offset.X, k.Offset.Y)
	}
	j.offX, j.offY = k.Offset.X, k.Offset.Y
	j.src, j.dst = src, dst
	return j, nil
}

func (k *Convolution) encode(cb *vk.CommandBuffer, src, weights, bias, dst *Image, state bool) (*ConvolutionGradientState, error) {
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
	if err := convCheckParams(&k.Kernel, weights, bias, d.WeightsDescriptor(), 0, d.OutputFeatureChannels); err != nil {
		return nil, err
	}
	if overlaps(weights, dst) || (bias != nil && overlaps(bias, dst)) {
		return nil, fmt.Errorf("%w: %s: destination %s shares storage with the weights or bias", ErrAlias, k.Label, dst)
	}
	kx, ky := d.effective()
	j.firstX, j.firstY = j.offX-kx/2, j.offY-ky/2
	out := convRegion{im: dst, n0: j.dstN0, c0: j.dstC0, channels: d.OutputFeatureChannels, x0: j.clipX, y0: j.clipY, w: j.clipW, h: j.clipH}
	var st *ConvolutionGradientState
	neuron := !d.Neuron.IsIdentity()
	if state {
		st = convNewState(convKindConvolution, d, &k.Kernel, &j, weights, bias)
		if neuron {
			// The pre-activation goes to the state; the neuron pass then
			// writes dst from it.
			if st.z, err = NewImage(k.dev, ImageDescriptor{N: j.batches, C: d.OutputFeatureChannels, H: j.clipH, W: j.clipW,
				Format: dst.format, Label: k.Label + " pre-activation"}); err != nil {
				return nil, fmt.Errorf("%s: %w", k.Label, err)
			}
			out = convWhole(st.z, 0, 0, d.OutputFeatureChannels)
		}
	}
	g := convForwardGemm(d, convWhole(src, j.srcN0, j.srcC0, d.InputFeatureChannels), out, j.firstX, j.firstY, j.batches, weights, bias)
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

// convForwardGemm is the GEMM of a convolution of d from in to out:
// depthwise when each group has one input channel, else the im2col GEMM.
func convForwardGemm(d ConvolutionDescriptor, in, out convRegion, firstX, firstY, batches int, weights, bias *Image) convImageGemm {
	g := convImageGemm{
		modeA: gemmAWeights, modeB: gemmBIm2col, groups: d.Groups,
		m: d.OutputFeatureChannels / d.Groups, k: d.InputFeatureChannels / d.Groups * d.KernelWidth * d.KernelHeight,
		cinG: d.InputFeatureChannels / d.Groups, in: in, out: out, firstX: firstX, firstY: firstY, batches: batches,
		weights: weights, bias: bias, geom: d.geom(),
	}
	if d.depthwise() {
		g.depthwise, g.mult = true, d.OutputFeatureChannels/d.InputFeatureChannels
	}
	return g
}

// convDataGemm is the GEMM of the data gradient of a convolution of d: dx
// (region out, the forward source's channels) from dy (region in), the
// forward windows' first tap of dy pixel (0, 0) at (firstX, firstY) of out.
// A stride-1 depthwise convolution with one output per channel runs the
// depthwise kernel over dy with the taps reversed.
func convDataGemm(d ConvolutionDescriptor, in, out convRegion, firstX, firstY, batches int, weights *Image) convImageGemm {
	khw := d.KernelWidth * d.KernelHeight
	g := convImageGemm{
		modeA: gemmATransposed, modeB: gemmBGather, groups: d.Groups,
		m: d.InputFeatureChannels / d.Groups, k: d.OutputFeatureChannels / d.Groups * khw,
		cinG: d.OutputFeatureChannels / d.Groups, in: in, out: out, firstX: firstX, firstY: firstY, batches: batches,
		weights: weights, geom: d.geom(),
	}
	if d.depthwise() && d.OutputFeatureChannels == d.InputFeatureChannels && d.StrideX == 1 && d.StrideY == 1 {
		g.depthwise, g.flip, g.mult = true, true, 1
	}
	if (d.StrideX > 1 || d.StrideY > 1) && d.DilationX == 1 && d.DilationY == 1 {
		// Only every stride-th tap reaches a given dx pixel: one GEMM per
		// phase of the stride over just those taps.
		g.modeB = gemmBPhases
	}
	if khw == 1 && d.StrideX == 1 && d.StrideY == 1 && d.Groups == 1 && g.m > convSmallMax {
		// A 1x1 stride-1 data gradient is the forward's GEMM with the
		// weights read by columns: A[m][k] = W[k][m] (row k of the
		// weights, ld = I), B = dy as a 1x1 im2col from dy pixel
		// -first, so that both load as quads where the planes allow
		// (convVecA, convVecB). On an H100 (bench/results/
		// h100-2026-11-27-packed, run 2) float32 gains everywhere (1x1
		// 512 -> 2048 at 7x7: 212 -> 157 us), float16 on cooperative
		// matrices only where dy's planes load as quads too (1024 ->
		// 1024 at 28x28: 1424 -> 558 us; at 7x7, 49 pixels, 140 -> 209):
		// float16 keeps the transposed weights there.
		c := g
		c.modeA, c.modeB, c.ld = gemmAColumns, gemmBIm2col, g.m
		c.firstX, c.firstY = -firstX, -firstY
		if out.im.format != Float16 || convVecB(&c) {
			g = c
		}
	}
	return g
}

// convWeightsJob is the weight gradient GEMM of a convolution of d: dW
// from dy (region dyR) and x (region xR), the first tap of dy pixel (0, 0)
// at (firstX, firstY) of xR.
func convWeightsJob(d ConvolutionDescriptor, dyR, xR convRegion, firstX, firstY, batches int, dW, db *Image) convWeightsGemm {
	return convWeightsGemm{
		groups: d.Groups, m: d.OutputFeatureChannels / d.Groups,
		n:    d.InputFeatureChannels / d.Groups * d.KernelWidth * d.KernelHeight,
		cinG: d.InputFeatureChannels / d.Groups, dy: dyR, x: xR, firstX: firstX, firstY: firstY, batches: batches,
		geom: d.geom(), depthwise: d.depthwise(), mult: d.OutputFeatureChannels / d.InputFeatureChannels,
		dW: dW, db: db, biasFrom: dyR,
	}
}

// convKind is the forward kernel a gradient state comes from.
type convKind int

const (
	convKindConvolution convKind = iota
	convKindTranspose
	convKindFullyConnected
)

func (c convKind) String() string {
	switch c {
	case convKindTranspose:
		return "ConvolutionTranspose"
	case convKindFullyConnected:
		return "FullyConnected"
	}
	return "Convolution"
}

// ConvolutionGradientState records what a forward encode of the
// convolution family used, for its gradient kernel
// (MPSCNNConvolutionGradientState): the descriptor, the window placement,
// the clip, the channel ranges, the source and destination shapes, and
// references to the source, weights and bias images (the caller keeps
// them alive and unchanged until the gradient is encoded). With a fused
// neuron it holds the pre-activation values. The gradient kernel's
// EncodeWithState writes the weight and bias gradients into images the
// state owns (GradientForWeights, GradientForBiases).
//
// Close releases the state's images; close it after the command buffers
// that use it are committed. Close is safe twice.
type ConvolutionGradientState struct {
	// Descriptor is the forward kernel's.
	Descriptor ConvolutionDescriptor
	// Offset is the forward kernel's (Z the first source batch image).
	Offset Offset
	// Clip is the destination region the forward wrote, resolved.
	Clip Region
	// Padding is the policy EncodeNewWithState sized the destination
	// with; nil after EncodeWithState.
	Padding padding.Policy
	// Source and Destination are the forward images' shapes.
	Source, Destination padding.Descriptor
	// The forward read its input channels from SourceFeatureChannelOffset
	// and wrote from DestinationFeatureChannelOffset.
	SourceFeatureChannelOffset      int
	DestinationFeatureChannelOffset int

	kind             convKind
	firstX, firstY   int // see convJob
	dev              *vk.Device
	src              *Image
	weights, bias    *Image
	z, dz            *Image // pre-activation and its gradient (fused neuron)
	gradW, gradB     *Image
	closed           atomic.Bool
	outputW, outputH int
}

func convNewState(kind convKind, d ConvolutionDescriptor, k *Kernel, j *convJob, weights, bias *Image) *ConvolutionGradientState {
	return &ConvolutionGradientState{
		Descriptor: d, Offset: Offset{X: j.offX, Y: j.offY, Z: j.srcN0},
		Clip:   Region{X: j.clipX, Y: j.clipY, Z: j.dstN0, Width: j.clipW, Height: j.clipH, Depth: j.batches},
		Source: j.src.Descriptor().Descriptor(), Destination: j.dst.Descriptor().Descriptor(),
		SourceFeatureChannelOffset: j.srcC0, DestinationFeatureChannelOffset: j.dstC0,
		kind: kind, firstX: j.firstX, firstY: j.firstY, dev: k.dev, src: j.src, weights: weights, bias: bias,
	}
}

// SourceDescriptor returns the forward source's shape (padding.SizeState).
func (s *ConvolutionGradientState) SourceDescriptor() padding.Descriptor { return s.Source }

// Weights and Bias return the images the forward read (Bias nil when it
// had none).
func (s *ConvolutionGradientState) Weights() *Image { return s.weights }
func (s *ConvolutionGradientState) Bias() *Image    { return s.bias }

// GradientForWeights returns the weight gradient the last
// EncodeWithState with weights wrote (weights' shape, float32), or nil.
func (s *ConvolutionGradientState) GradientForWeights() *Image { return s.gradW }

// GradientForBiases returns the bias gradient (1 x O x 1 x 1, float32) the
// last EncodeWithState with weights wrote, or nil (also when the forward
// had no bias).
func (s *ConvolutionGradientState) GradientForBiases() *Image { return s.gradB }

func (s *ConvolutionGradientState) String() string {
	if s == nil {
		return "<nil state>"
	}
	d := s.Descriptor
	return fmt.Sprintf("%v state (kernel %dx%d, stride %dx%d, dilation %dx%d, groups %d, %v -> %v)", s.kind,
		d.KernelWidth, d.KernelHeight, d.StrideX, d.StrideY, d.DilationX, d.DilationY, d.Groups, s.Source, s.Destination)
}

// Close releases the state's images (pre-activation, gradients). Safe
// twice and on nil.
func (s *ConvolutionGradientState) Close() error {
	if s == nil || s.closed.Swap(true) {
		return nil
	}
	var errs []error
	for _, im := range []*Image{s.z, s.dz, s.gradW, s.gradB} {
		if im != nil {
			errs = append(errs, im.Close())
		}
	}
	return errors.Join(errs...)
}

// ConvolutionGradientOption says what a convolution gradient computes
// (MPSCNNConvolutionGradientOption, MPS's values). The zero value means
// ConvolutionGradientAll, MPS's default.
type ConvolutionGradientOption int

const (
	// ConvolutionGradientWithData: the gradient w.r.t. the source only.
	ConvolutionGradientWithData ConvolutionGradientOption = 1
	// ConvolutionGradientWithWeightsAndBias: the weight and bias
	// gradients only.
	ConvolutionGradientWithWeightsAndBias ConvolutionGradientOption = 2
	// ConvolutionGradientAll: data, weights and bias.
	ConvolutionGradientAll ConvolutionGradientOption = 3
)

func (o ConvolutionGradientOption) data() bool    { return o != ConvolutionGradientWithWeightsAndBias }
func (o ConvolutionGradientOption) weights() bool { return o != ConvolutionGradientWithData }
func (o ConvolutionGradientOption) valid() bool   { return o >= 0 && o <= 3 }

// ConvolutionGradient is the gradient of a Convolution
// (MPSCNNConvolutionGradient). With dy the gradient of the loss w.r.t. the
// convolution's linear output z (before the fused neuron):
//
//	dx(n, i, p)        = sum over the outputs (o, q) whose window reads p of w[o][i][tap] * dy(n, o, q)
//	dW[o][i][ky][kx]   = sum over n and q of dy(n, o, q) * x(n, i, tap of q's window)
//	db[o]              = sum over n and q of dy(n, o, q)
//
// dW and db are sums over the batch, added in a fixed order (per-tile
// partial sums, then an ordered sum; no atomics): results repeat bit for
// bit. They are float32 images, overwritten.
//
// Explicit forms (no state): EncodeData(cb, dy, weights, dx) and
// EncodeWeights(cb, dy, src, dW, db) use whole images: dy's O channels
// from SourceFeatureChannelOffset, dx's I channels from
// DestinationFeatureChannelOffset, every batch image (dy, src and dx have
// one batch size). They place the forward windows as GradientKernel says:
// the window of dy pixel (x, y) is centred on source pixel
// F + stride*(x, y), F = -(Offset*stride + KernelOffset); SetForwardOffset
// sets that from the forward kernel's Offset. ClipRect must be zero (the
// whole dx is written; pixels no window reads get 0). The explicit forms
// differentiate the linear convolution: for a fused neuron, multiply dy by
// the neuron's derivative first (or use EncodeWithState).
//
// EncodeWithState (MPS's form) takes everything from the forward's state,
// includes its fused neuron (dy is then w.r.t. the neuron's output), and
// writes dx (per GradientOption) and the weight and bias gradients into
// the state's GradientForWeights and GradientForBiases.
type ConvolutionGradient struct {
	GradientKernel
	// GradientOption selects data, weights and bias, or all (default).
	GradientOption ConvolutionGradientOption
	desc           ConvolutionDescriptor
	convFamily
}

// NewConvolutionGradient makes the gradient kernel of a convolution of d.
func NewConvolutionGradient(dev *vk.Device, d ConvolutionDescriptor) (*ConvolutionGradient, error) {
	k := &ConvolutionGradient{desc: d.normalized()}
	k.Label = "ConvolutionGradient"
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
func (k *ConvolutionGradient) Descriptor() ConvolutionDescriptor { return k.desc }

// SetForwardOffset places the windows as a forward kernel with Offset
// (x, y) did: Offset becomes 0 and KernelOffset -(x, y).
func (k *ConvolutionGradient) SetForwardOffset(x, y int) {
	k.Offset = Offset{}
	k.KernelOffsetX, k.KernelOffsetY = -x, -y
}

// convGradientFirst returns the first tap, in the source, of dy pixel (0, 0)'s
// window for the explicit forms.
func convGradientFirst(k *GradientKernel, d ConvolutionDescriptor) (int, int, error) {
	if k.ClipRect != (Region{}) {
		return 0, 0, fmt.Errorf("%w: %s: clip rectangle %+v: the explicit gradient forms write whole images (use a zero ClipRect)", ErrGeometry, k.Label, k.ClipRect)
	}
	if k.Offset.Z != 0 {
		return 0, 0, fmt.Errorf("%w: %s: offset.z %d: the explicit gradient forms use every batch image", ErrShape, k.Label, k.Offset.Z)
	}
	fx := -(int64(k.Offset.X)*int64(d.StrideX) + int64(k.KernelOffsetX))
	fy := -(int64(k.Offset.Y)*int64(d.StrideY) + int64(k.KernelOffsetY))
	const lim = 1 << 29
	if fx < -lim || fx > lim || fy < -lim || fy > lim {
		return 0, 0, fmt.Errorf("%w: %s: offset (%d, %d) and kernel offset (%d, %d) place the windows beyond 2^29 pixels", ErrGeometry, k.Label,
			k.Offset.X, k.Offset.Y, k.KernelOffsetX, k.KernelOffsetY)
	}
	kx, ky := d.effective()
	return int(fx) - kx/2, int(fy) - ky/2, nil
}

// convCheckGradImages validates the images of an explicit gradient form: open,
// on the kernel's device, and of one format (the float32 parameters
// apart).
func convCheckGradImages(k *Kernel, roles []string, ims ...*Image) error {
	for i, im := range ims {
		if err := k.checkImage(roles[i], im); err != nil {
			return err
		}
	}
	for i := 1; i < len(ims); i++ {
		if err := k.sameFormat(roles[0], ims[0], roles[i], ims[i]); err != nil {
			return err
		}
	}
	return nil
}

// convCheckChannels checks that im has count channels from offset.
func convCheckChannels(k *Kernel, role string, im *Image, offset, count int) error {
	if offset < 0 || offset > im.c-count {
		return fmt.Errorf("%w: %s: %s %s has no %d channels from channel offset %d", ErrChannelRange, k.Label, role, im, count, offset)
	}
	return nil
}

// EncodeData records dx, the gradient w.r.t. the source, from dy and the
// weights (the explicit form; see the type). dy is N x (>= O) x OH x OW,
// dx N x (>= I) x H x W: dx's H and W are the forward source's.
func (k *ConvolutionGradient) EncodeData(cb *vk.CommandBuffer, dy, weights, dx *Image) error {
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
	if err := convCheckParams(&k.Kernel, weights, nil, d.WeightsDescriptor(), 0, d.OutputFeatureChannels); err != nil {
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
	fx, fy, err := convGradientFirst(&k.GradientKernel, d)
	if err != nil {
		return err
	}
	g := convDataGemm(d, convWhole(dy, 0, k.SourceFeatureChannelOffset, d.OutputFeatureChannels),
		convWhole(dx, 0, k.DestinationFeatureChannelOffset, d.InputFeatureChannels), fx, fy, dy.n, weights)
	return k.eng.encodeImageGemm(cb, &g)
}

// EncodeWeights records dW (the weights' shape) and, when db is not nil,
// db (1 x O x 1 x 1), float32, from dy and the forward source src (the
// explicit form; see the type). src has I channels and dy's batch size.
func (k *ConvolutionGradient) EncodeWeights(cb *vk.CommandBuffer, dy, src, dW, db *Image) error {
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
	if err := convCheckGradOutputs(&k.Kernel, dW, db, d.WeightsDescriptor(), 0, d.OutputFeatureChannels, dy, src); err != nil {
		return err
	}
	if err := convCheckChannels(&k.Kernel, "source gradient", dy, k.SourceFeatureChannelOffset, d.OutputFeatureChannels); err != nil {
		return err
	}
	if src.c != d.InputFeatureChannels || src.n != dy.n {
		return fmt.Errorf("%w: %s: source image %s, want %d channels and the %d batch images of source gradient %s", ErrShape, k.Label,
			src, d.InputFeatureChannels, dy.n, dy)
	}
	fx, fy, err := convGradientFirst(&k.GradientKernel, d)
	if err != nil {
		return err
	}
	j := convWeightsJob(d, convWhole(dy, 0, k.SourceFeatureChannelOffset, d.OutputFeatureChannels), convWhole(src, 0, 0, d.InputFeatureChannels),
		fx, fy, dy.n, dW, db)
	return k.eng.encodeWeightsGemm(cb, &j)
}

// convCheckGradOutputs validates weight and bias gradient images: float32,
// contiguous, of the weights' (bias') shape, sharing no storage with the
// inputs.
func convCheckGradOutputs(k *Kernel, dW, db *Image, want ImageDescriptor, rowValues, outputs int, ins ...*Image) error {
	if err := k.checkImage("weight gradient", dW); err != nil {
		return err
	}
	if err := convCheckParamShape(k, "weight gradient", dW, want, rowValues); err != nil {
		return err
	}
	if db != nil {
		if err := k.checkImage("bias gradient", db); err != nil {
			return err
		}
		if db.format != Float32 || db.Len() != outputs || !db.contiguous() {
			return fmt.Errorf("%w: %s: bias gradient %s, want %d float32 values (1x%dx1x1)", ErrShape, k.Label, db, outputs, outputs)
		}
		if overlaps(db, dW) {
			return fmt.Errorf("%w: %s: weight gradient %s and bias gradient %s share storage", ErrAlias, k.Label, dW, db)
		}
	}
	for _, in := range ins {
		if overlaps(in, dW) || (db != nil && overlaps(in, db)) {
			return fmt.Errorf("%w: %s: %s shares storage with a gradient output", ErrAlias, k.Label, in)
		}
	}
	return nil
}

// convCheckParamShape checks a float32 parameter-shaped image.
func convCheckParamShape(k *Kernel, role string, im *Image, want ImageDescriptor, rowValues int) error {
	if im.format != Float32 {
		return fmt.Errorf("%w: %s: %s %s is %v; it must be float32", ErrFormat, k.Label, role, im, im.format)
	}
	ok := im.n == want.N && im.c == want.C && im.h == want.H && im.w == want.W
	if rowValues > 0 {
		ok = im.n == want.N && im.c*im.h*im.w == rowValues
	}
	if !ok {
		return fmt.Errorf("%w: %s: %s %s, want %dx%dx%dx%d", ErrShape, k.Label, role, im, want.N, want.C, want.H, want.W)
	}
	if !im.contiguous() {
		return fmt.Errorf("%w: %s: %s %s is a channel view; it must be one run of values", ErrShape, k.Label, role, im)
	}
	return nil
}

// convCheckState validates a gradient state against a gradient kernel.
func convCheckState(k *Kernel, st *ConvolutionGradientState, kind convKind, d ConvolutionDescriptor) error {
	if st == nil {
		return fmt.Errorf("%w: %s: nil gradient state", ErrState, k.Label)
	}
	if st.closed.Load() {
		return fmt.Errorf("%w: %s: gradient state %v", ErrClosed, k.Label, st)
	}
	if st.dev == nil {
		return fmt.Errorf("%w: %s: gradient state not made by a forward encode", ErrState, k.Label)
	}
	if st.dev != k.dev {
		return fmt.Errorf("%w: %s: gradient state %v is from another device", ErrDevice, k.Label, st)
	}
	if st.kind != kind {
		return fmt.Errorf("%w: %s: gradient state of a %v, this kernel differentiates a %v", ErrState, k.Label, st.kind, kind)
	}
	if a, b := st.Descriptor.shape(), d.shape(); a != b {
		return fmt.Errorf("%w: %s: gradient state of %+v; this kernel is %+v", ErrState, k.Label, a, b)
	}
	for _, im := range []*Image{st.src, st.weights, st.bias} {
		if im != nil && im.usable() != nil {
			return fmt.Errorf("%w: %s: gradient state %v: its forward image %s was closed", ErrClosed, k.Label, st, im)
		}
	}
	return nil
}

// convStateGrad is what EncodeWithState works on, from a state: the dy region
// the forward wrote (dz when a neuron was fused), the forward source
// region and where dx goes.
type convStateGrad struct {
	dyR   convRegion
	xR    convRegion
	dxR   convRegion
	batch int
}

// convPrepareState checks dy and src against st and returns the regions; with
// a fused neuron it records dz = dy * neuron'(z) first.
func convPrepareState(cb *vk.CommandBuffer, k *Kernel, eng *convEngine, st *ConvolutionGradientState, dy, src *Image, inC, outC int) (convStateGrad, error) {
	var g convStateGrad
	if cb == nil {
		return g, fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.Label)
	}
	if err := convCheckGradImages(k, []string{"source gradient", "source image"}, dy, src); err != nil {
		return g, err
	}
	if d := dy.Descriptor().Descriptor(); d != st.Destination {
		return g, fmt.Errorf("%w: %s: source gradient %s is not the size of the forward destination, %v", ErrShape, k.Label, dy, st.Destination)
	}
	if d := src.Descriptor().Descriptor(); d != st.Source {
		return g, fmt.Errorf("%w: %s: source image %s is not the size of the forward source, %v", ErrShape, k.Label, src, st.Source)
	}
	cl := st.Clip
	g.batch = cl.Depth
	g.dyR = convRegion{im: dy, n0: cl.Z, c0: st.DestinationFeatureChannelOffset, channels: outC, x0: cl.X, y0: cl.Y, w: cl.Width, h: cl.Height}
	g.xR = convWhole(src, st.Offset.Z, st.SourceFeatureChannelOffset, inC)
	if st.z == nil {
		return g, nil
	}
	if st.dz == nil {
		var err error
		zd := st.z.Descriptor()
		zd.Label = k.Label + " pre-activation gradient"
		if st.dz, err = NewImage(k.dev, zd); err != nil {
			return g, fmt.Errorf("%s: %w", k.Label, err)
		}
	}
	if dy.format != st.z.format {
		return g, fmt.Errorf("%w: %s: source gradient %s is %v, the forward was %v", ErrFormat, k.Label, dy, dy.format, st.z.format)
	}
	zr := convWhole(st.z, 0, 0, outC)
	dzr := convWhole(st.dz, 0, 0, outC)
	if err := eng.encodeNeuron(cb, 1, g.dyR, zr, dzr, g.batch); err != nil {
		return g, err
	}
	g.dyR = dzr
	return g, nil
}

// convStateOutputs returns the state's weight and bias gradient images, made
// on first use.
func convStateOutputs(k *Kernel, st *ConvolutionGradientState, wd ImageDescriptor, outputs int) (dW, db *Image, err error) {
	if st.gradW == nil {
		wd.Label, wd.Format = k.Label+" weight gradient", Float32
		if st.gradW, err = NewImage(k.dev, wd); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", k.Label, err)
		}
	}
	if st.bias != nil && st.gradB == nil {
		if st.gradB, err = NewImage(k.dev, ImageDescriptor{N: 1, C: outputs, H: 1, W: 1, Label: k.Label + " bias gradient"}); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", k.Label, err)
		}
	}
	return st.gradW, st.gradB, nil
}

// EncodeWithState records the gradient of the forward encode that made st
// (MPS's form): with dy the gradient w.r.t. the forward destination (the
// neuron's output when one was fused) and src the forward source, it
// writes dx (GradientOption with data) into the channels and batch images
// of dx the forward read, and the weight and bias gradients (with weights)
// into the state's GradientForWeights and GradientForBiases. dx must have
// the forward source's shape; it may be nil when the option has no data.
func (k *ConvolutionGradient) EncodeWithState(cb *vk.CommandBuffer, dy, src *Image, st *ConvolutionGradientState, dx *Image) error {
	if k.eng.dev == nil {
		return fmt.Errorf("%w: %s: kernel not made by its constructor (no device)", ErrDevice, k.Label)
	}
	if !k.GradientOption.valid() {
		return fmt.Errorf("%w: %s: unknown gradient option %d", ErrGeometry, k.Label, int(k.GradientOption))
	}
	if err := convCheckState(&k.Kernel, st, convKindConvolution, k.desc); err != nil {
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
		jd := convDataGemm(d, g.dyR, dxR, st.firstX, st.firstY, g.batch, st.weights)
		if err := k.eng.encodeImageGemm(cb, &jd); err != nil {
			return err
		}
	}
	if k.GradientOption.weights() {
		dW, db, err := convStateOutputs(&k.Kernel, st, d.WeightsDescriptor(), d.OutputFeatureChannels)
		if err != nil {
			return err
		}
		jw := convWeightsJob(d, g.dyR, g.xR, st.firstX, st.firstY, g.batch, dW, db)
		if err := k.eng.encodeWeightsGemm(cb, &jw); err != nil {
			return err
		}
	}
	return nil
}

// EncodeNewWithState is EncodeWithState into a new dx of the forward
// source's shape (nil when the option has no data); dx values the forward
// did not read are 0. The caller closes it.
func (k *ConvolutionGradient) EncodeNewWithState(cb *vk.CommandBuffer, dy, src *Image, st *ConvolutionGradientState) (*Image, error) {
	return convEncodeNewGrad(cb, &k.Kernel, st, dy, k.GradientOption, func(dx *Image) error { return k.EncodeWithState(cb, dy, src, st, dx) })
}

// convEncodeNewGrad allocates dx as the state's source (dy's format), zeroes
// what the forward did not read and runs enc into it.
func convEncodeNewGrad(cb *vk.CommandBuffer, k *Kernel, st *ConvolutionGradientState, dy *Image, opt ConvolutionGradientOption, enc func(dx *Image) error) (*Image, error) {
	if cb == nil {
		return nil, fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.Label)
	}
	if err := convCheckStateBasic(k, st); err != nil {
		return nil, err
	}
	if !opt.data() {
		return nil, enc(nil)
	}
	format := Float32
	if dy != nil {
		format = dy.format
	}
	sd := st.Source
	dx, err := k.allocate(ImageDescriptor{N: sd.N, C: sd.C, H: sd.H, W: sd.W, Format: format, Label: k.Label + " destination gradient"})
	if err != nil {
		return nil, err
	}
	if st.Clip.Depth != sd.N || st.Descriptor.InputFeatureChannels != sd.C {
		err = Fill(cb, dx, 0)
	}
	if err == nil {
		err = enc(dx)
	}
	if err != nil {
		dx.Close()
		return nil, err
	}
	return dx, nil
}

func convCheckStateBasic(k *Kernel, st *ConvolutionGradientState) error {
	if st == nil {
		return fmt.Errorf("%w: %s: nil gradient state", ErrState, k.Label)
	}
	if st.closed.Load() {
		return fmt.Errorf("%w: %s: gradient state %v", ErrClosed, k.Label, st)
	}
	return nil
}

// ReadGradients is a convenience for tests and tools: it reads the state's
// weight and bias gradients after the command buffer has finished (db nil
// without a bias gradient).
func (s *ConvolutionGradientState) ReadGradients(ctx context.Context) (dW, db []float32, err error) {
	if s == nil || s.gradW == nil {
		return nil, nil, fmt.Errorf("%w: %v holds no weight gradient", ErrState, s)
	}
	if dW, err = s.gradW.Read(ctx); err != nil || s.gradB == nil {
		return dW, nil, err
	}
	db, err = s.gradB.Read(ctx)
	return dW, db, err
}
