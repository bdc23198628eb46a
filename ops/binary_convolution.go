package ops

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// BinaryConvolutionType is MPSCNNBinaryConvolutionType: how the
// convolution combines the input with the binary weights.
type BinaryConvolutionType int

const (
	// BinaryConvolutionBinaryWeights: the input is not binarized;
	// S = sum x~ * sgn(w).
	BinaryConvolutionBinaryWeights BinaryConvolutionType = iota
	// BinaryConvolutionXNOR: S = sum sgn(x~) * sgn(w), by XNOR and popcount
	// (32 - 2*popcount(x ^ w) per 32-bit word).
	BinaryConvolutionXNOR
	// BinaryConvolutionAND: S = sum [x~ >= 0] * [w >= 0], by popcount(x & w).
	BinaryConvolutionAND
)

func (t BinaryConvolutionType) String() string {
	switch t {
	case BinaryConvolutionBinaryWeights:
		return "binary_weights"
	case BinaryConvolutionXNOR:
		return "xnor"
	case BinaryConvolutionAND:
		return "and"
	}
	return fmt.Sprintf("BinaryConvolutionType(%d)", int(t))
}

// ParseBinaryConvolutionType returns the type a graph JSON name gives:
// "binary_weights", "xnor" or "and" (case-insensitive).
func ParseBinaryConvolutionType(name string) (BinaryConvolutionType, error) {
	for t := BinaryConvolutionBinaryWeights; t <= BinaryConvolutionAND; t++ {
		if equalFoldASCII(name, t.String()) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown binary convolution type %q (want binary_weights, xnor or and)", ErrGeometry, name)
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// BinaryConvolutionFlags is MPSCNNBinaryConvolutionFlags.
type BinaryConvolutionFlags int

const (
	// BinaryConvolutionFlagsNone: beta = 1.
	BinaryConvolutionFlagsNone BinaryConvolutionFlags = 0
	// BinaryConvolutionUseBetaScaling scales each output by beta, the mean
	// over the kernel window of A = sum_c |x~| / I (XNOR-Net).
	BinaryConvolutionUseBetaScaling BinaryConvolutionFlags = 1
)

// BinaryConvolutionDescriptor is a binary convolution's geometry and type
// (MPSCNNConvolutionDescriptor's fields that apply, with the
// MPSCNNBinaryConvolution initializer's type and flags).
type BinaryConvolutionDescriptor struct {
	KernelWidth, KernelHeight                   int
	InputFeatureChannels, OutputFeatureChannels int
	// StrideX, StrideY and DilationX, DilationY are >= 1
	// (NewBinaryConvolutionDescriptor sets 1).
	StrideX, StrideY     int
	DilationX, DilationY int
	// Groups must be 1 (0 means 1): MPSCNNBinaryConvolution has no groups.
	Groups int
	Type   BinaryConvolutionType
	Flags  BinaryConvolutionFlags
	// Neuron is fused after the bias (MPS's fusedNeuronDescriptor); PReLU
	// takes one slope per output channel.
	Neuron NeuronDescriptor
}

// NewBinaryConvolutionDescriptor returns a descriptor with stride and
// dilation 1, groups 1 and no neuron.
func NewBinaryConvolutionDescriptor(kernelWidth, kernelHeight, inputChannels, outputChannels int, t BinaryConvolutionType, flags BinaryConvolutionFlags) BinaryConvolutionDescriptor {
	return BinaryConvolutionDescriptor{KernelWidth: kernelWidth, KernelHeight: kernelHeight,
		InputFeatureChannels: inputChannels, OutputFeatureChannels: outputChannels,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 1, Type: t, Flags: flags}
}

// Words returns the 32-bit words of packed bits per pixel and per filter
// tap: ceil(InputFeatureChannels / 32).
func (d BinaryConvolutionDescriptor) Words() int { return (d.InputFeatureChannels + 31) / 32 }

// Validate checks the descriptor: sizes, strides and dilations in
// [1, 2^15], channel counts in [1, 2^20], groups 1, a known type and
// flags, and the neuron (for O output channels). Errors wrap ErrGeometry
// (ErrShape for a PReLU slope count).
func (d BinaryConvolutionDescriptor) Validate() error {
	const l = "BinaryConvolution"
	for _, v := range []struct {
		what string
		n    int
		max  int
	}{{"kernel width", d.KernelWidth, 1 << 15}, {"kernel height", d.KernelHeight, 1 << 15},
		{"stride x", d.StrideX, 1 << 15}, {"stride y", d.StrideY, 1 << 15},
		{"dilation x", d.DilationX, 1 << 15}, {"dilation y", d.DilationY, 1 << 15},
		{"input feature channels", d.InputFeatureChannels, 1 << 20}, {"output feature channels", d.OutputFeatureChannels, 1 << 20}} {
		if v.n < 1 {
			return fmt.Errorf("%w: %s: %s %d < 1", ErrGeometry, l, v.what, v.n)
		}
		if v.n > v.max {
			return fmt.Errorf("%w: %s: %s %d > %d", ErrGeometry, l, v.what, v.n, v.max)
		}
	}
	if kx, ky := d.effective(); kx > 1<<15 || ky > 1<<15 {
		return fmt.Errorf("%w: %s: window extent %dx%d over %d", ErrGeometry, l, kx, ky, 1<<15)
	}
	if d.KernelWidth*d.KernelHeight > 1<<16 {
		return fmt.Errorf("%w: %s: %dx%d taps over %d", ErrGeometry, l, d.KernelWidth, d.KernelHeight, 1<<16)
	}
	if d.Groups != 0 && d.Groups != 1 {
		return fmt.Errorf("%w: %s: groups %d: MPSCNNBinaryConvolution has no groups (want 1)", ErrGeometry, l, d.Groups)
	}
	if d.Type < BinaryConvolutionBinaryWeights || d.Type > BinaryConvolutionAND {
		return fmt.Errorf("%w: %s: unknown type %d", ErrGeometry, l, int(d.Type))
	}
	if d.Flags&^BinaryConvolutionUseBetaScaling != 0 {
		return fmt.Errorf("%w: %s: unknown flags %#x", ErrGeometry, l, int(d.Flags))
	}
	return d.Neuron.Validate(l, d.OutputFeatureChannels)
}

// effective returns the window's extent per axis, (k-1)*d+1.
func (d BinaryConvolutionDescriptor) effective() (int, int) {
	return (d.KernelWidth-1)*d.DilationX + 1, (d.KernelHeight-1)*d.DilationY + 1
}

// paddingKernel describes the kernel to a padding policy.
func (d BinaryConvolutionDescriptor) paddingKernel() padding.Kernel {
	return padding.Kernel{Name: "BinaryConvolution", KernelW: d.KernelWidth, KernelH: d.KernelHeight,
		StrideX: d.StrideX, StrideY: d.StrideY, DilationX: d.DilationX, DilationY: d.DilationY}
}

// PaddingFor applies policy p (nil: padding.Same, the kernel default) to a
// source of the given shape (the batch images and channels the kernel
// reads) without a device: the destination (C = OutputFeatureChannels)
// and the offset the kernel must use. Graph shape inference calls it.
// For explicit pads (PyTorch) use padding.Explicit(pads, false, false);
// its edge mode is ignored (binary convolution always pads with x = 0).
func (d BinaryConvolutionDescriptor) PaddingFor(src padding.Descriptor, p padding.Policy) (padding.Result, error) {
	if err := d.Validate(); err != nil {
		return padding.Result{}, err
	}
	if src.C != d.InputFeatureChannels {
		return padding.Result{}, fmt.Errorf("%w: BinaryConvolution: source has %d channels, the kernel reads %d", ErrChannelRange, src.C, d.InputFeatureChannels)
	}
	if p == nil {
		p = padding.WithMethod(padding.Same)
	}
	r, err := padding.Resolve(p, []padding.Descriptor{src}, nil, d.paddingKernel())
	if err != nil {
		return r, fmt.Errorf("BinaryConvolution: %w", err)
	}
	r.Dest.C = d.OutputFeatureChannels
	return r, nil
}

// ResultDescriptor returns the destination of a source src under policy
// p (see PaddingFor), in src's format.
func (d BinaryConvolutionDescriptor) ResultDescriptor(src ImageDescriptor, p padding.Policy) (ImageDescriptor, error) {
	r, err := d.PaddingFor(src.Descriptor(), p)
	if err != nil {
		return ImageDescriptor{}, err
	}
	return ImageDescriptor{N: r.Dest.N, C: r.Dest.C, H: r.Dest.H, W: r.Dest.W, Format: src.Format}, nil
}

// BinaryConvolutionWeights are a binary convolution's parameters, copied
// at construction (as MPS copies its terms). Give the weights either as
// floats or as packed bits:
//
//   - Weights: O*I*KH*KW floats in PyTorch's layout (O, I, KH, KW); only
//     the sign is kept, w >= 0 meaning +1 (NaN and Inf are refused).
//   - Packed: O*KH*KW*ceil(I/32) words in MPS's layout
//     weight[O][KH][KW][ceil(I/32)], input channel 32w+b in bit b of word w
//     (least significant first), a 1 bit meaning +1. Bits for channels >= I
//     are ignored.
//
// OutputScale and OutputBias (MPS's outputScaleTerms, outputBiasTerms)
// have O values, nil meaning all 1 and all 0 (MPS's scaleValue s is
// OutputScale filled with s). InputBias and InputScale (inputBiasTerms,
// inputScaleTerms) have I values, nil meaning 0 and 1. All finite.
type BinaryConvolutionWeights struct {
	Weights                 []float32
	Packed                  []uint32
	OutputScale, OutputBias []float32
	InputBias, InputScale   []float32
}

// BinaryConvolution is MPSCNNBinaryConvolution, inference only (MPS has no
// gradient for it; NewBinaryConvolutionGradient says so). For source
// channels c < I read from SourceFeatureChannelOffset, output channels
// o < O written from DestinationFeatureChannelOffset, and sgn(v) = v >= 0 ?
// +1 : -1:
//
//	x~[c] = (x[c] + InputBias[c]) * InputScale[c]
//	y[o]  = neuron(OutputScale[o] * beta * S[o] + OutputBias[o])
//	S[o]  = sum over the window's taps and c of
//	        x~ * sgn(w)          BinaryWeights
//	        sgn(x~) * sgn(w)     XNOR
//	        [x~ >= 0] * [w >= 0] AND
//
// beta is 1, or with BinaryConvolutionUseBetaScaling the mean over the
// KH*KW taps of A = sum_c |x~| / I (MPS: input scaling happens before the
// beta computation). A NaN x~ binarizes to -1 (it is not >= 0).
//
// Window: destination pixel (x, y) of the clip has its first tap at
// Offset + stride*((x, y) - clip origin) - floor(ke/2), ke = (k-1)*d + 1,
// taps stepping by the dilation, as for pooling (SPEC.md). Padding: a tap
// outside the source reads x = 0 whatever EdgeMode says, so it contributes
// x~ = InputBias[c] * InputScale[c] to S and to A. Without input bias a
// padded pixel therefore binarizes to sgn(0) = +1 (XNOR) and counts as 1
// in AND. The padding policy (Kernel.Padding; nil = padding.Same, SPEC.md's
// default for binary kernels) sizes the destination and sets Offset in
// EncodeNew; for PyTorch pads use padding.Explicit(pads, false, false).
//
// XNOR and AND run on bits packed 32 to a word along the input channels:
// a first pass binarizes the source into the kernel's scratch buffer, a
// second convolves by popcount. BinaryWeights computes in float32. Images
// are float32 or float16 (storage only); the two of one encode share a
// format. Encoding allocates nothing once the pipelines and scratch exist
// (the scratch grows when a larger source comes). Close releases the
// kernel's buffers; safe twice.
type BinaryConvolution struct {
	Kernel
	desc    BinaryConvolutionDescriptor
	words   int
	weights *vk.Buffer // sign bits, then the pad words
	params  *vk.Buffer // scale, bias, prelu, padA, input bias, input scale
	scratch *vk.Buffer // packed source bits, then A

	pipes  [2][2]*vk.Pipeline // [f16][pack, convolution]
	local  int
	push   bconvPush
	pack   bconvPackPush
	binds  [5]vk.BufferRange
	closed atomic.Bool
}

// bconvPush is glsl/binary_convolution_common.glsl's push-constant block.
type bconvPush struct {
	Pixels                      uint32
	ClipW, ClipH                int32
	SrcW, SrcH                  int32
	FirstX, FirstY              int32
	ABase                       uint32
	DstBase, DstBatch, DstPlane uint32
	DstW                        uint32
	DstX0, DstY0                int32
	SrcBase, SrcBatch, SrcPlane uint32
}

// bconvPackPush is glsl/binary_convolution_pack.comp's push-constant block.
type bconvPackPush struct {
	Pixels, Plane, SrcBase, SrcBatch, ABase uint32
}

// NewBinaryConvolution makes a binary convolution kernel from a valid
// descriptor and its weights.
func NewBinaryConvolution(dev *vk.Device, d BinaryConvolutionDescriptor, w BinaryConvolutionWeights) (*BinaryConvolution, error) {
	const l = "BinaryConvolution"
	if dev == nil {
		return nil, fmt.Errorf("%w: %s: nil device", ErrDevice, l)
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if d.Groups == 0 {
		d.Groups = 1
	}
	in, out := d.InputFeatureChannels, d.OutputFeatureChannels
	words := d.Words()
	bits, err := bconvPackWeights(d, w)
	if err != nil {
		return nil, err
	}
	vec := func(what string, v []float32, n int, def float32) ([]float32, error) {
		if v == nil {
			v = make([]float32, n)
			for i := range v {
				v[i] = def
			}
			return v, nil
		}
		if len(v) != n {
			return nil, fmt.Errorf("%w: %s: %d %s values, want %d", ErrShape, l, len(v), what, n)
		}
		for i, x := range v {
			if err := finite(l, fmt.Sprintf("%s %d", what, i), x); err != nil {
				return nil, err
			}
		}
		return v, nil
	}
	scale, err := vec("output scale", w.OutputScale, out, 1)
	if err != nil {
		return nil, err
	}
	bias, err := vec("output bias", w.OutputBias, out, 0)
	if err != nil {
		return nil, err
	}
	ib, err := vec("input bias", w.InputBias, in, 0)
	if err != nil {
		return nil, err
	}
	is, err := vec("input scale", w.InputScale, in, 1)
	if err != nil {
		return nil, err
	}
	prelu := make([]float32, out)
	copy(prelu, d.Neuron.PReLU)
	// The outside tap: x = 0, x~ = (0 + ib) * is, computed as the shaders do.
	pad := make([]uint32, words)
	padA := float32(0)
	for c := 0; c < in; c++ {
		v := (0 + ib[c]) * is[c]
		if v >= 0 {
			pad[c/32] |= 1 << (c % 32)
		}
		padA += float32(math.Abs(float64(v)))
	}
	padA /= float32(in)
	bits = append(bits, pad...)
	params := make([]float32, 0, 3*out+1+2*in)
	params = append(params, scale...)
	params = append(params, bias...)
	params = append(params, prelu...)
	params = append(params, padA)
	params = append(params, ib...)
	params = append(params, is...)

	k := &BinaryConvolution{desc: d, words: words, local: workgroup(dev.Limits())}
	k.Label, k.dev = fmt.Sprintf("BinaryConvolution(%v %dx%d %d->%d)", d.Type, d.KernelWidth, d.KernelHeight, in, out), dev
	if k.weights, err = bconvUpload(dev, k.Label+" weights", unsafe.Slice((*byte)(unsafe.Pointer(&bits[0])), 4*len(bits))); err != nil {
		return nil, err
	}
	if k.params, err = bconvUpload(dev, k.Label+" parameters", unsafe.Slice((*byte)(unsafe.Pointer(&params[0])), 4*len(params))); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

// bconvUpload makes a device buffer holding data.
func bconvUpload(dev *vk.Device, label string, data []byte) (*vk.Buffer, error) {
	b, err := dev.NewBuffer(uint64(len(data)), label)
	if err != nil {
		return nil, err
	}
	if err := b.Write(context.Background(), 0, data); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// bconvPackWeights returns the weights in MPS's packed layout
// [O][KH][KW][words] with the bits of channels >= I cleared.
func bconvPackWeights(d BinaryConvolutionDescriptor, w BinaryConvolutionWeights) ([]uint32, error) {
	const l = "BinaryConvolution"
	in, out, kh, kw := d.InputFeatureChannels, d.OutputFeatureChannels, d.KernelHeight, d.KernelWidth
	words := d.Words()
	n := out * kh * kw * words
	switch {
	case w.Weights != nil && w.Packed != nil:
		return nil, fmt.Errorf("%w: %s: weights given both as floats and packed", ErrGeometry, l)
	case w.Weights != nil:
		if len(w.Weights) != out*in*kh*kw {
			return nil, fmt.Errorf("%w: %s: %d weights, want %dx%dx%dx%d (O, I, KH, KW)", ErrShape, l, len(w.Weights), out, in, kh, kw)
		}
		bits := make([]uint32, n+words) // room for the pad words
		bits = bits[:n]
		for o := 0; o < out; o++ {
			for c := 0; c < in; c++ {
				for y := 0; y < kh; y++ {
					for x := 0; x < kw; x++ {
						v := w.Weights[((o*in+c)*kh+y)*kw+x]
						if err := finite(l, fmt.Sprintf("weight (%d, %d, %d, %d)", o, c, y, x), v); err != nil {
							return nil, err
						}
						if v >= 0 {
							bits[((o*kh+y)*kw+x)*words+c/32] |= 1 << (c % 32)
						}
					}
				}
			}
		}
		return bits, nil
	case w.Packed != nil:
		if len(w.Packed) != n {
			return nil, fmt.Errorf("%w: %s: %d packed weight words, want %dx%dx%dx%d (O, KH, KW, ceil(I/32))", ErrShape, l, len(w.Packed), out, kh, kw, words)
		}
		bits := make([]uint32, n, n+words)
		copy(bits, w.Packed)
		if r := in % 32; r != 0 {
			mask := uint32(1)<<r - 1
			for i := words - 1; i < n; i += words {
				bits[i] &= mask
			}
		}
		return bits, nil
	}
	return nil, fmt.Errorf("%w: %s: no weights (give Weights or Packed)", ErrGeometry, l)
}

// Descriptor returns the kernel's descriptor.
func (k *BinaryConvolution) Descriptor() BinaryConvolutionDescriptor { return k.desc }

// InputFeatureChannels and OutputFeatureChannels return I and O.
func (k *BinaryConvolution) InputFeatureChannels() int  { return k.desc.InputFeatureChannels }
func (k *BinaryConvolution) OutputFeatureChannels() int { return k.desc.OutputFeatureChannels }

// Close releases the kernel's buffers; safe twice.
func (k *BinaryConvolution) Close() error {
	if k == nil || k.closed.Swap(true) {
		return nil
	}
	var err error
	for _, b := range []*vk.Buffer{k.weights, k.params, k.scratch} {
		if b != nil {
			if e := b.Close(); e != nil && err == nil {
				err = e
			}
		}
	}
	return err
}

// errBinaryConvolutionGradient is NewBinaryConvolutionGradient's error.
var errBinaryConvolutionGradient = fmt.Errorf("%w: BinaryConvolution is inference only: MPS has no MPSCNNBinaryConvolutionGradient (sgn has no useful derivative; train a float convolution with a straight-through estimator instead)", errors.ErrUnsupported)

// NewBinaryConvolutionGradient always fails with an error wrapping
// errors.ErrUnsupported: binary convolution is inference only, as in MPS.
// A training graph that reaches a binary convolution node gets this error.
func NewBinaryConvolutionGradient(dev *vk.Device, d BinaryConvolutionDescriptor) (*BinaryConvolution, error) {
	return nil, errBinaryConvolutionGradient
}

// PaddingFor applies the kernel's padding policy to a source descriptor
// (the batch images and channels it reads) without changing the kernel.
func (k *BinaryConvolution) PaddingFor(src padding.Descriptor) (padding.Result, error) {
	r, err := k.desc.PaddingFor(src, k.policy())
	if err != nil {
		return r, err
	}
	r.Dest.C += k.DestinationFeatureChannelOffset
	return r, nil
}

// EncodeNew applies the padding policy to src (sizing the destination and
// setting Offset), allocates the destination (Allocator, or NewImage; src's
// format) and encodes into it with the clip rectangle reset to the whole
// destination.
func (k *BinaryConvolution) EncodeNew(cb *vk.CommandBuffer, src *Image) (*Image, error) {
	if err := k.usable(); err != nil {
		return nil, err
	}
	sd, err := k.sourceDescriptor(src)
	if err != nil {
		return nil, err
	}
	if sd.C > k.desc.InputFeatureChannels {
		sd.C = k.desc.InputFeatureChannels
	}
	r, err := k.PaddingFor(sd)
	if err != nil {
		return nil, err
	}
	k.Offset.X, k.Offset.Y = r.OffsetX, r.OffsetY
	dst, err := k.allocate(ImageDescriptor{N: r.Dest.N, C: r.Dest.C, H: r.Dest.H, W: r.Dest.W, Format: src.format, Label: k.Label + " destination"})
	if err != nil {
		return nil, err
	}
	saved := k.ClipRect
	k.ClipRect = Region{}
	err = k.Encode(cb, src, dst)
	k.ClipRect = saved
	if err != nil {
		dst.Close()
		return nil, err
	}
	return dst, nil
}

func (k *BinaryConvolution) usable() error {
	if k == nil || k.dev == nil || k.weights == nil {
		return fmt.Errorf("%w: BinaryConvolution: kernel not made by NewBinaryConvolution", ErrDevice)
	}
	if k.closed.Load() {
		return fmt.Errorf("%w: %s", ErrClosed, k.Label)
	}
	return nil
}

// bconvJob is an encode resolved against its images.
type bconvJob struct {
	srcC0, dstC0 int
	srcN0, dstN0 int
	batches      int
	clipX, clipY int
	clipW, clipH int
	offX, offY   int
}

// resolveJob checks src and dst against the kernel's properties, in the
// order images, format, aliasing, channels, batch, clip.
func (k *BinaryConvolution) resolveJob(src, dst *Image) (bconvJob, error) {
	var j bconvJob
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
	in, out := k.desc.InputFeatureChannels, k.desc.OutputFeatureChannels
	so, do := k.SourceFeatureChannelOffset, k.DestinationFeatureChannelOffset
	if so < 0 || so >= src.c || src.c-so < in {
		return j, fmt.Errorf("%w: %s: %d input channels from channel %d do not fit source %s", ErrChannelRange, k.Label, in, so, src)
	}
	if m := k.SourceFeatureChannelMaxCount; m < 0 || (m > 0 && m < in) {
		return j, fmt.Errorf("%w: %s: source channel max count %d below the %d input channels", ErrChannelRange, k.Label, m, in)
	}
	if do < 0 || do >= dst.c || dst.c-do < out {
		return j, fmt.Errorf("%w: %s: %d output channels from channel %d do not fit destination %s", ErrChannelRange, k.Label, out, do, dst)
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
	return j, nil
}

func (k *BinaryConvolution) pipeline(f16 bool, conv bool) (*vk.Pipeline, error) {
	fi, ci := 0, 0
	if f16 {
		fi = 1
	}
	if conv {
		ci = 1
	}
	if p := k.pipes[fi][ci]; p != nil {
		return p, nil
	}
	d := k.desc
	beta := b2u(d.Flags&BinaryConvolutionUseBetaScaling != 0)
	named := map[string]uint32{"local_size_x": uint32(k.local), "CHANNELS": uint32(d.InputFeatureChannels),
		"WORDS": uint32(k.words), "BETA": beta, "OUT": uint32(d.OutputFeatureChannels)}
	sh := spirv.BinaryConvolutionPack
	if conv {
		sh = spirv.BinaryConvolution
		if d.Type == BinaryConvolutionBinaryWeights {
			sh = spirv.BinaryConvolutionFloat
		}
		named["TYPE"] = uint32(d.Type)
		named["KW"], named["KH"] = uint32(d.KernelWidth), uint32(d.KernelHeight)
		named["SX"], named["SY"] = uint32(d.StrideX), uint32(d.StrideY)
		named["DX"], named["DY"] = uint32(d.DilationX), uint32(d.DilationY)
		d.Neuron.specConstants(named)
	}
	sh, err := build(sh, f16)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.Label, err)
	}
	p, err := pipeline(k.dev, sh, named)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.Label, err)
	}
	k.pipes[fi][ci] = p
	return p, nil
}

// needsPack reports whether the encode runs the binarizing pass.
func (k *BinaryConvolution) needsPack() bool {
	return k.desc.Type != BinaryConvolutionBinaryWeights || k.desc.Flags&BinaryConvolutionUseBetaScaling != 0
}

// Encode records the binary convolution of src into dst with the kernel's
// properties as set (the padding policy is not consulted). dst holds at
// least DestinationFeatureChannelOffset + O channels and src at least
// SourceFeatureChannelOffset + I.
func (k *BinaryConvolution) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	if cb == nil {
		return fmt.Errorf("%w: BinaryConvolution: nil command buffer", ErrInvalidImage)
	}
	if err := k.usable(); err != nil {
		return err
	}
	j, err := k.resolveJob(src, dst)
	if err != nil {
		return err
	}
	f16 := src.format == Float16
	conv, err := k.pipeline(f16, true)
	if err != nil {
		return err
	}
	var pack *vk.Pipeline
	if k.needsPack() {
		if pack, err = k.pipeline(f16, false); err != nil {
			return err
		}
	}
	lim := k.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	room := lim.MaxStorageBufferRange - align
	plane := uint64(src.h * src.w)
	srcPer := uint64(src.cTotal) * plane * src.esize()
	dstPer := uint64(dst.cTotal*dst.h*dst.w) * dst.esize()
	scratchPer := plane * uint64(k.words+1) * 4
	// Batch images per dispatch group: every bound range must fit.
	nb := j.batches
	for _, per := range []uint64{srcPer, dstPer, scratchPer} {
		if per > room {
			return fmt.Errorf("%w: %s: one batch image (%d bytes of %s, destination %s or packed bits) exceeds the device's max storage buffer range (%d bytes)",
				ErrDeviceLimit, k.Label, per, src, dst, lim.MaxStorageBufferRange)
		}
		nb = min(nb, int(room/per))
	}
	clipPix := j.clipW * j.clipH
	if uint64(nb)*uint64(max(clipPix, src.h*src.w)) >= 1<<31 {
		nb = max(1, (1<<31-1)/max(clipPix, src.h*src.w))
	}
	if k.needsPack() {
		if err := k.ensureScratch(uint64(nb) * scratchPer); err != nil {
			return err
		}
	}
	kx, ky := k.desc.effective()
	k.push = bconvPush{ClipW: int32(j.clipW), ClipH: int32(j.clipH), SrcW: int32(src.w), SrcH: int32(src.h),
		FirstX: int32(j.offX - kx/2), FirstY: int32(j.offY - ky/2),
		DstBatch: uint32(dst.cTotal * dst.h * dst.w), DstPlane: uint32(dst.h * dst.w), DstW: uint32(dst.w),
		DstX0: int32(j.clipX), DstY0: int32(j.clipY),
		SrcBatch: uint32(src.cTotal * src.h * src.w), SrcPlane: uint32(src.h * src.w)}
	k.pack = bconvPackPush{Plane: uint32(plane), SrcBatch: uint32(src.cTotal) * uint32(plane)}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&k.push)), unsafe.Sizeof(k.push))
	packPush := unsafe.Slice((*byte)(unsafe.Pointer(&k.pack)), unsafe.Sizeof(k.pack))
	maxGroups := int(min(lim.MaxComputeWorkGroupCount[0], 65535))
	for n := 0; n < j.batches; n += nb {
		b := min(nb, j.batches-n)
		srcSpan := imageSpan(src, j.srcN0+n, j.srcC0)
		dstSpan := imageSpan(dst, j.dstN0+n, j.dstC0)
		srcRange, srcBase := srcSpan.bind(align, 0, 0, b, k.desc.InputFeatureChannels)
		dstRange, dstBase := dstSpan.bind(align, 0, 0, b, k.desc.OutputFeatureChannels)
		srcPix := b * src.h * src.w
		var scratch vk.BufferRange
		if k.needsPack() {
			scratch = k.scratch.Range(0, uint64(b)*scratchPer)
			k.pack.Pixels, k.pack.SrcBase, k.pack.ABase = uint32(srcPix), srcBase, uint32(srcPix*k.words)
			k.binds[0], k.binds[1], k.binds[2] = srcRange, k.params.Whole(), scratch
			g := min((srcPix+k.local-1)/k.local, maxGroups)
			if err := cb.Dispatch(pack, k.binds[:3], packPush, [3]uint32{uint32(g), 1, 1}); err != nil {
				return fmt.Errorf("%s: %w", k.Label, err)
			}
		}
		k.push.Pixels = uint32(b * clipPix)
		k.push.ABase, k.push.DstBase, k.push.SrcBase = uint32(srcPix*k.words), dstBase, srcBase
		out := k.desc.OutputFeatureChannels
		if k.desc.Type == BinaryConvolutionBinaryWeights {
			if !k.needsPack() {
				scratch = k.weights.Whole() // unread: BETA is off
			}
			k.binds[0], k.binds[1], k.binds[2], k.binds[3], k.binds[4] = srcRange, k.weights.Whole(), k.params.Whole(), scratch, dstRange
			g := min((b*clipPix+k.local-1)/k.local, maxGroups)
			if out > int(lim.MaxComputeWorkGroupCount[1]) {
				return fmt.Errorf("%w: %s: %d output channels exceed the device's %d workgroups in y", ErrDeviceLimit, k.Label, out, lim.MaxComputeWorkGroupCount[1])
			}
			if err := cb.Dispatch(conv, k.binds[:5], push, [3]uint32{uint32(g), uint32(out), 1}); err != nil {
				return fmt.Errorf("%s: %w", k.Label, err)
			}
			continue
		}
		k.binds[0], k.binds[1], k.binds[2], k.binds[3] = scratch, k.weights.Whole(), k.params.Whole(), dstRange
		tiles := (b*clipPix + 63) / 64
		if err := cb.Dispatch(conv, k.binds[:4], push, [3]uint32{uint32(min(tiles, maxGroups)), uint32((out + 63) / 64), 1}); err != nil {
			return fmt.Errorf("%s: %w", k.Label, err)
		}
	}
	return nil
}

// ensureScratch makes the scratch buffer hold at least size bytes.
func (k *BinaryConvolution) ensureScratch(size uint64) error {
	if k.scratch != nil && k.scratch.Size() >= size {
		return nil
	}
	if k.scratch != nil {
		k.scratch.Close()
		k.scratch = nil
	}
	b, err := k.dev.NewBuffer(size, k.Label+" packed source")
	if err != nil {
		return err
	}
	k.scratch = b
	return nil
}
