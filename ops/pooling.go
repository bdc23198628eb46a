package ops

import (
	"fmt"
	"unsafe"

	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// PoolingKind names a pooling kernel family.
type PoolingKind int

const (
	KindMax PoolingKind = iota
	KindAverage
	KindL2Norm
	KindDilatedMax
)

func (k PoolingKind) String() string {
	switch k {
	case KindMax:
		return "PoolingMax"
	case KindAverage:
		return "PoolingAverage"
	case KindL2Norm:
		return "PoolingL2Norm"
	case KindDilatedMax:
		return "DilatedPoolingMax"
	}
	return fmt.Sprintf("PoolingKind(%d)", int(k))
}

// IsMax reports whether k is one of the max kinds (KindMax,
// KindDilatedMax), whose gradients route dy to each window's argmax.
func (k PoolingKind) IsMax() bool { return k == KindMax || k == KindDilatedMax }

// Geometry is a pooling kernel's fixed shape: kernel size, stride and
// dilation (1 = none) per axis.
type Geometry struct {
	KernelWidth, KernelHeight int
	StrideX, StrideY          int
	DilationX, DilationY      int
}

// effective returns the window's extent per axis, (k-1)*d+1.
func (g Geometry) effective() (int, int) {
	return (g.KernelWidth-1)*g.DilationX + 1, (g.KernelHeight-1)*g.DilationY + 1
}

func (g Geometry) validate(name string, lim vk.Limits) error {
	for _, v := range []struct {
		what string
		n    int
	}{{"kernel width", g.KernelWidth}, {"kernel height", g.KernelHeight}, {"stride x", g.StrideX}, {"stride y", g.StrideY},
		{"dilation x", g.DilationX}, {"dilation y", g.DilationY}} {
		if v.n < 1 {
			return fmt.Errorf("%w: %s: %s %d < 1", ErrGeometry, name, v.what, v.n)
		}
		if v.n > 1<<15 {
			return fmt.Errorf("%w: %s: %s %d > %d", ErrGeometry, name, v.what, v.n, 1<<15)
		}
	}
	kx, ky := g.effective()
	if kx > 1<<15 || ky > 1<<15 {
		return fmt.Errorf("%w: %s: window extent %dx%d over %d", ErrGeometry, name, kx, ky, 1<<15)
	}
	return nil
}

// pooling is the state shared by the four pooling kernels.
type pooling struct {
	Kernel
	kind   PoolingKind
	geom   Geometry
	passes passes
}

// workgroup is the invocations per workgroup of the element-wise kernels.
func workgroup(lim vk.Limits) int {
	return int(min(256, lim.MaxComputeWorkGroupInvocations, lim.MaxComputeWorkGroupSize[0]))
}

func newPooling(dev *vk.Device, kind PoolingKind, g Geometry) (pooling, error) {
	p := pooling{kind: kind, geom: g}
	p.Label = kind.String()
	if dev == nil {
		return p, fmt.Errorf("%w: %s: nil device", ErrDevice, p.Label)
	}
	p.dev = dev
	if err := g.validate(p.Label, dev.Limits()); err != nil {
		return p, err
	}
	p.passes = newPasses(dev, kind, g)
	return p, nil
}

// Geometry returns the kernel's size, stride and dilation.
func (p *pooling) Geometry() Geometry { return p.geom }

// Kind returns the kernel's family.
func (p *pooling) Kind() PoolingKind { return p.kind }

// paddingKernel describes the kernel to a padding policy.
func (p *pooling) paddingKernel(zeroPad padding.Pads) padding.Kernel {
	g := p.geom
	return padding.Kernel{Name: p.Label, KernelW: g.KernelWidth, KernelH: g.KernelHeight,
		StrideX: g.StrideX, StrideY: g.StrideY, DilationX: g.DilationX, DilationY: g.DilationY,
		EdgeMode: p.EdgeMode, ZeroPad: zeroPad}
}

// resolvePadding applies the kernel's padding policy to src without
// changing the kernel (MPS's destinationImageDescriptorForSourceImages).
func (p *pooling) resolvePadding(src *Image, zeroPad padding.Pads) (padding.Result, error) {
	desc, err := p.sourceDescriptor(src)
	if err != nil {
		return padding.Result{}, err
	}
	return p.PaddingFor(desc, zeroPad)
}

// PaddingFor applies the kernel's padding policy to a source descriptor
// (the channels and batch images the kernel reads) without changing the
// kernel. Graph shape inference uses it.
func (p *pooling) PaddingFor(src padding.Descriptor, zeroPad padding.Pads) (padding.Result, error) {
	r, err := padding.Resolve(p.policy(), []padding.Descriptor{src}, nil, p.paddingKernel(zeroPad))
	if err != nil {
		return r, fmt.Errorf("%s: %w", p.Label, err)
	}
	r.Dest.C += p.DestinationFeatureChannelOffset
	return r, nil
}

// poolPush is the pooling shaders' push-constant block (pooling_common.glsl).
type poolPush struct {
	SrcW, SrcH         int32
	ClipX, ClipY       int32
	ClipW, ClipH       int32
	OffX, OffY         int32
	RegX0, RegY0       int32
	RegX1, RegY1       int32
	SrcBase, DstBase   uint32
	SrcBatch, DstBatch uint32
	Channels           uint32
	SrcPlane, DstPlane uint32
	DstWidth           uint32
	AmBase, AmBatch    uint32 // pooling_max_argmax only
	AmPlane            uint32
	DyBase, DyBatch    uint32 // pooling_l2norm_ratio only
	DyPlane            uint32
	Planes             uint32 // planes of the dispatch (batches * channels)
}

// unbounded is a count region that holds every tap.
const unbounded = 1 << 30

// countRegion returns the taps average pooling counts in N(x): under
// EdgeClamp the image grown by the zero pads; under EdgeZero every tap, or
// with ExcludeEdges those inside the padding region.
func countRegion(edge EdgeMode, zeroPad padding.Pads, exclude bool, edgePads padding.Pads, srcW, srcH int) [4]int32 {
	switch {
	case edge == EdgeClamp:
		return [4]int32{int32(-zeroPad.Left), int32(-zeroPad.Top), int32(srcW + zeroPad.Right), int32(srcH + zeroPad.Bottom)}
	case exclude:
		return [4]int32{int32(-max(edgePads.Left, 0)), int32(-max(edgePads.Top, 0)),
			int32(srcW + max(edgePads.Right, 0)), int32(srcH + max(edgePads.Bottom, 0))}
	}
	return [4]int32{-unbounded, -unbounded, unbounded, unbounded}
}

// encode records the kernel on cb from src into dst; region is the
// average count region (ignored by the other kinds). With state it returns
// the gradient state of the encode; with record (max kinds) that state
// also holds each window's argmax, written by the same dispatches.
func (p *pooling) encode(cb *vk.CommandBuffer, src, dst *Image, region func(j job) [4]int32, state, record bool) (*PoolingGradientState, error) {
	if cb == nil {
		return nil, fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, p.Label)
	}
	j, err := p.resolve(src, dst)
	if err != nil {
		return nil, err
	}
	record = record && state
	pass := passValues
	if record {
		pass = passArgmax
	}
	kx, _ := p.geom.effective()
	key := p.passes.key(pass, p.EdgeMode, src, passTarget{dstW: dst.w, dstBase: dst.base, clipX: j.clipX,
		w: j.clipW, h: j.clipH, z: j.batches * j.channels, firstSrcCol: j.offX - kx/2})
	pl, err := p.passes.pipeline(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Label, err)
	}
	pc := poolPush{
		SrcW: int32(src.w), SrcH: int32(src.h),
		ClipX: int32(j.clipX), ClipY: int32(j.clipY), ClipW: int32(j.clipW), ClipH: int32(j.clipH),
		OffX: int32(j.offX), OffY: int32(j.offY),
		SrcBatch: uint32(src.cTotal * src.h * src.w), DstBatch: uint32(dst.cTotal * dst.h * dst.w),
		SrcPlane: uint32(src.h * src.w), DstPlane: uint32(dst.h * dst.w), DstWidth: uint32(dst.w),
	}
	if region != nil {
		r := region(j)
		pc.RegX0, pc.RegY0, pc.RegX1, pc.RegY1 = r[0], r[1], r[2], r[3]
	}
	var st *PoolingGradientState
	var spanArr [maxSpans]span // an array, so encoding does not allocate
	spanArr[0], spanArr[1] = imageSpan(src, j.srcN0, j.srcC0), imageSpan(dst, j.dstN0, j.dstC0)
	spans := spanArr[:2]
	if state {
		st = p.newState(j)
	}
	if record {
		st.argmaxBits = argmaxBitsFor(p.geom.KernelWidth * p.geom.KernelHeight)
		st.planeWords = argmaxPlaneWords(j.clipW, j.clipH, st.argmaxBits)
		st.argmax, err = p.dev.NewBuffer(uint64(j.batches*j.channels*st.planeWords)*4, p.Label+" argmax")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Label, err)
		}
		pc.AmBatch, pc.AmPlane = uint32(j.channels*st.planeWords), uint32(st.planeWords)
		spans = append(spans, st.argmaxSpan(0, 0))
	}
	lim := p.dev.Limits()
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	if !planeFits(&lim, spans) {
		// A plane over the storage-buffer range: bands of rows.
		if err := p.encodeBands(cb, pl, key, pc, spans, j); err != nil {
			st.Close()
			return nil, fmt.Errorf("%s: %w", p.Label, err)
		}
		return st, nil
	}
	err = forEachPart(&lim, spans, j.batches, j.channels, func(pt part) error {
		pc.SrcBase, pc.DstBase, pc.AmBase, pc.Channels = pt.bases[0], pt.bases[1], pt.bases[2], uint32(pt.channels)
		pc.Planes = uint32(pt.batches * pt.channels)
		g, err := p.passes.groups(key, j.clipW, j.clipH, pt.batches*pt.channels)
		if err != nil {
			return err
		}
		return cb.Dispatch(pl, pt.ranges[:len(spans)], push, g)
	})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("%s: %w", p.Label, err)
	}
	return st, nil
}

// applyPadding sets the kernel's offset and edge mode from a policy result
// (MPS: the padding policy configures the kernel).
func (p *pooling) applyPadding(r padding.Result) {
	p.Offset.X, p.Offset.Y = r.OffsetX, r.OffsetY
	p.EdgeMode = r.EdgeMode
}

// encodeNew resolves the padding policy, configures the kernel from it,
// allocates the destination and encodes into it with enc, which returns
// the gradient state when one was asked for.
func (p *pooling) encodeNew(cb *vk.CommandBuffer, src *Image, zeroPad padding.Pads, apply func(padding.Result),
	enc func(dst *Image) (*PoolingGradientState, error)) (*Image, *PoolingGradientState, error) {
	r, err := p.resolvePadding(src, zeroPad)
	if err != nil {
		return nil, nil, err
	}
	p.applyPadding(r)
	if apply != nil {
		apply(r)
	}
	dst, err := p.allocate(ImageDescriptor{N: r.Dest.N, C: r.Dest.C, H: r.Dest.H, W: r.Dest.W, Format: src.format, Label: p.Label + " destination"})
	if err != nil {
		return nil, nil, err
	}
	saved := p.ClipRect
	p.ClipRect = Region{}
	st, err := enc(dst)
	p.ClipRect = saved
	if err != nil {
		dst.Close()
		return nil, nil, err
	}
	if st != nil {
		st.Padding = p.policy()
	}
	return dst, st, nil
}

// PoolingMax is max pooling (MPSCNNPoolingMax): each destination pixel is
// the maximum over its window. EdgeZero (the default): taps outside the
// source read 0 and take part; EdgeClamp: they are skipped, and a window
// with no tap inside gives 0. A NaN in the window makes the result NaN.
type PoolingMax struct {
	pooling
	// RecordArgmax makes the EncodeWithState forms record each window's
	// winning tap in the gradient state (a byte per destination pixel for
	// windows of up to 255 taps, else 16 bits), so that the gradient does
	// not read the source image again. Gradients are bit-identical either
	// way. Default false (MPS: the gradient recomputes the argmax).
	RecordArgmax bool
}

// NewPoolingMax makes a max pooling kernel with the given window and
// strides (MPS initWithDevice:kernelWidth:kernelHeight:strideInPixelsX:Y:).
func NewPoolingMax(dev *vk.Device, kernelWidth, kernelHeight, strideX, strideY int) (*PoolingMax, error) {
	p, err := newPooling(dev, KindMax, Geometry{kernelWidth, kernelHeight, strideX, strideY, 1, 1})
	if err != nil {
		return nil, err
	}
	return &PoolingMax{pooling: p}, nil
}

// Encode records max pooling from src into dst, using the kernel's
// properties as set (the padding policy is not consulted).
func (k *PoolingMax) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	_, err := k.encode(cb, src, dst, nil, false, false)
	return err
}

// EncodeNew sizes a destination with the padding policy, sets the kernel's
// offset (and edge mode, where the policy says) from it, and encodes into
// it. The caller closes the returned image.
func (k *PoolingMax) EncodeNew(cb *vk.CommandBuffer, src *Image) (*Image, error) {
	dst, _, err := k.encodeNew(cb, src, padding.Pads{}, nil, func(dst *Image) (*PoolingGradientState, error) {
		return nil, k.Encode(cb, src, dst)
	})
	return dst, err
}

// EncodeWithState is Encode that also returns the gradient state for
// PoolingMaxGradient (with the argmax indices when RecordArgmax is set).
// The caller closes the state.
func (k *PoolingMax) EncodeWithState(cb *vk.CommandBuffer, src, dst *Image) (*PoolingGradientState, error) {
	return k.encode(cb, src, dst, nil, true, k.RecordArgmax)
}

// EncodeNewWithState is EncodeNew that also returns the gradient state.
// The caller closes the image and the state.
func (k *PoolingMax) EncodeNewWithState(cb *vk.CommandBuffer, src *Image) (*Image, *PoolingGradientState, error) {
	return k.encodeNew(cb, src, padding.Pads{}, nil, func(dst *Image) (*PoolingGradientState, error) {
		return k.EncodeWithState(cb, src, dst)
	})
}

// DilatedPoolingMax is max pooling over a dilated window
// (MPSCNNDilatedPoolingMax): taps DilationX/Y pixels apart, an even window
// leaning to the top left (kernel 2, dilation 3 reads -2 and +1 around the
// centre). Edge modes and NaN as PoolingMax.
type DilatedPoolingMax struct {
	pooling
	// RecordArgmax: as PoolingMax's.
	RecordArgmax bool
}

// NewDilatedPoolingMax makes a dilated max pooling kernel (MPS
// initWithDevice:kernelWidth:kernelHeight:dilationRateX:dilationRateY:
// strideInPixelsX:strideInPixelsY:).
func NewDilatedPoolingMax(dev *vk.Device, kernelWidth, kernelHeight, dilationX, dilationY, strideX, strideY int) (*DilatedPoolingMax, error) {
	p, err := newPooling(dev, KindDilatedMax, Geometry{kernelWidth, kernelHeight, strideX, strideY, dilationX, dilationY})
	if err != nil {
		return nil, err
	}
	return &DilatedPoolingMax{pooling: p}, nil
}

// Encode records dilated max pooling from src into dst (properties as set).
func (k *DilatedPoolingMax) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	_, err := k.encode(cb, src, dst, nil, false, false)
	return err
}

// EncodeNew is Encode into a destination sized by the padding policy.
func (k *DilatedPoolingMax) EncodeNew(cb *vk.CommandBuffer, src *Image) (*Image, error) {
	dst, _, err := k.encodeNew(cb, src, padding.Pads{}, nil, func(dst *Image) (*PoolingGradientState, error) {
		return nil, k.Encode(cb, src, dst)
	})
	return dst, err
}

// EncodeWithState is Encode that also returns the gradient state for
// DilatedPoolingMaxGradient (with argmax indices when RecordArgmax is set).
func (k *DilatedPoolingMax) EncodeWithState(cb *vk.CommandBuffer, src, dst *Image) (*PoolingGradientState, error) {
	return k.encode(cb, src, dst, nil, true, k.RecordArgmax)
}

// EncodeNewWithState is EncodeNew that also returns the gradient state.
func (k *DilatedPoolingMax) EncodeNewWithState(cb *vk.CommandBuffer, src *Image) (*Image, *PoolingGradientState, error) {
	return k.encodeNew(cb, src, padding.Pads{}, nil, func(dst *Image) (*PoolingGradientState, error) {
		return k.EncodeWithState(cb, src, dst)
	})
}

// PoolingL2Norm is L2-norm pooling (MPSCNNPoolingL2Norm):
// out = sqrt(sum of in^2 over the window's in-image taps), in either edge
// mode.
type PoolingL2Norm struct{ pooling }

// NewPoolingL2Norm makes an L2-norm pooling kernel.
func NewPoolingL2Norm(dev *vk.Device, kernelWidth, kernelHeight, strideX, strideY int) (*PoolingL2Norm, error) {
	p, err := newPooling(dev, KindL2Norm, Geometry{kernelWidth, kernelHeight, strideX, strideY, 1, 1})
	if err != nil {
		return nil, err
	}
	return &PoolingL2Norm{p}, nil
}

// Encode records L2-norm pooling from src into dst (properties as set).
func (k *PoolingL2Norm) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	_, err := k.encode(cb, src, dst, nil, false, false)
	return err
}

// EncodeNew is Encode into a destination sized by the padding policy.
func (k *PoolingL2Norm) EncodeNew(cb *vk.CommandBuffer, src *Image) (*Image, error) {
	dst, _, err := k.encodeNew(cb, src, padding.Pads{}, nil, func(dst *Image) (*PoolingGradientState, error) {
		return nil, k.Encode(cb, src, dst)
	})
	return dst, err
}

// EncodeWithState is Encode that also returns the gradient state for
// PoolingL2NormGradient.
func (k *PoolingL2Norm) EncodeWithState(cb *vk.CommandBuffer, src, dst *Image) (*PoolingGradientState, error) {
	return k.encode(cb, src, dst, nil, true, false)
}

// EncodeNewWithState is EncodeNew that also returns the gradient state.
func (k *PoolingL2Norm) EncodeNewWithState(cb *vk.CommandBuffer, src *Image) (*Image, *PoolingGradientState, error) {
	return k.encodeNew(cb, src, padding.Pads{}, nil, func(dst *Image) (*PoolingGradientState, error) {
		return k.EncodeWithState(cb, src, dst)
	})
}

// PoolingAverage is average pooling (MPSCNNPoolingAverage):
// out = (sum of the window's in-image taps) / N(x), where
//   - EdgeZero: N = kernel width × height, or with ExcludeEdges the taps
//     inside the padding region [-EdgePads.Left, W+EdgePads.Right) ×
//     [-EdgePads.Top, H+EdgePads.Bottom) (Caffe's clipped divisor);
//   - EdgeClamp: N = the taps inside the image grown by ZeroPad on each side
//     (zero pads count in N and add 0: PyTorch's count_include_pad and
//     Caffe); a window with no tap in the image gives 0.
type PoolingAverage struct {
	pooling
	// ZeroPad is MPS's zeroPadSizeX/Y, allowed to differ per side.
	ZeroPad padding.Pads
	// ExcludeEdges and EdgePads: see the type's doc. EncodeNew sets them
	// from the padding policy (its ExcludeEdges bit and padding).
	ExcludeEdges bool
	EdgePads     padding.Pads
}

// NewPoolingAverage makes an average pooling kernel.
func NewPoolingAverage(dev *vk.Device, kernelWidth, kernelHeight, strideX, strideY int) (*PoolingAverage, error) {
	p, err := newPooling(dev, KindAverage, Geometry{kernelWidth, kernelHeight, strideX, strideY, 1, 1})
	if err != nil {
		return nil, err
	}
	return &PoolingAverage{pooling: p}, nil
}

func (k *PoolingAverage) region(j job) [4]int32 {
	return countRegion(k.EdgeMode, k.ZeroPad, k.ExcludeEdges, k.EdgePads, j.src.w, j.src.h)
}

func (k *PoolingAverage) checkZeroPad() error {
	for _, v := range []int{k.ZeroPad.Top, k.ZeroPad.Left, k.ZeroPad.Bottom, k.ZeroPad.Right} {
		if v < 0 {
			return fmt.Errorf("%w: %s: negative zero pad %v", ErrGeometry, k.Label, k.ZeroPad)
		}
	}
	return nil
}

// Encode records average pooling from src into dst (properties as set).
func (k *PoolingAverage) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	if err := k.checkZeroPad(); err != nil {
		return err
	}
	_, err := k.encode(cb, src, dst, k.region, false, false)
	return err
}

// EncodeNew is Encode into a destination sized by the padding policy,
// which also sets ZeroPad, ExcludeEdges and EdgePads.
func (k *PoolingAverage) EncodeNew(cb *vk.CommandBuffer, src *Image) (*Image, error) {
	dst, _, err := k.encodeNew(cb, src, k.ZeroPad, k.applyAverage, func(dst *Image) (*PoolingGradientState, error) {
		return nil, k.Encode(cb, src, dst)
	})
	return dst, err
}

// EncodeWithState is Encode that also returns the gradient state for
// PoolingAverageGradient (it records ZeroPad, ExcludeEdges and EdgePads).
func (k *PoolingAverage) EncodeWithState(cb *vk.CommandBuffer, src, dst *Image) (*PoolingGradientState, error) {
	if err := k.checkZeroPad(); err != nil {
		return nil, err
	}
	st, err := k.encode(cb, src, dst, k.region, true, false)
	if err != nil {
		return nil, err
	}
	st.ZeroPad, st.ExcludeEdges, st.EdgePads = k.ZeroPad, k.ExcludeEdges, k.EdgePads
	return st, nil
}

// EncodeNewWithState is EncodeNew that also returns the gradient state.
func (k *PoolingAverage) EncodeNewWithState(cb *vk.CommandBuffer, src *Image) (*Image, *PoolingGradientState, error) {
	return k.encodeNew(cb, src, k.ZeroPad, k.applyAverage, func(dst *Image) (*PoolingGradientState, error) {
		return k.EncodeWithState(cb, src, dst)
	})
}

func (k *PoolingAverage) applyAverage(r padding.Result) {
	k.ZeroPad = r.ZeroPad
	k.ExcludeEdges = r.ExcludeEdges
	k.EdgePads = r.Pads
}

// Pooling is what the four forward pooling kernels have in common.
type Pooling interface {
	// Encode records the kernel from src into dst with its properties as
	// set (the padding policy is not consulted).
	Encode(cb *vk.CommandBuffer, src, dst *Image) error
	// EncodeNew sizes a destination with the padding policy, configures
	// the kernel from it and encodes into it; the caller closes it.
	EncodeNew(cb *vk.CommandBuffer, src *Image) (*Image, error)
	// EncodeWithState and EncodeNewWithState are Encode and EncodeNew that
	// also return the state the kernel's gradient needs; the caller closes
	// it once the command buffers using it are committed.
	EncodeWithState(cb *vk.CommandBuffer, src, dst *Image) (*PoolingGradientState, error)
	EncodeNewWithState(cb *vk.CommandBuffer, src *Image) (*Image, *PoolingGradientState, error)
	// SetRecordArgmax sets RecordArgmax on the max kinds; the others
	// ignore it (their gradients need no argmax).
	SetRecordArgmax(on bool)
	// Properties returns the kernel's MPSCNNKernel properties to set.
	Properties() *Kernel
	// Kind and Geometry describe the kernel.
	Kind() PoolingKind
	Geometry() Geometry
	// SetTuning and Tuning set and return the kernel's work-shape
	// overrides (see Tuning).
	SetTuning(Tuning) error
	Tuning() Tuning
}

// Properties returns the kernel's properties (offset, clip, edge mode,
// padding policy, channel offsets) for callers holding a Pooling.
func (p *pooling) Properties() *Kernel { return &p.Kernel }

// SetRecordArgmax does nothing: only the max kinds record argmax.
func (p *pooling) SetRecordArgmax(bool) {}

// SetRecordArgmax sets RecordArgmax.
func (k *PoolingMax) SetRecordArgmax(on bool) { k.RecordArgmax = on }

// SetRecordArgmax sets RecordArgmax.
func (k *DilatedPoolingMax) SetRecordArgmax(on bool) { k.RecordArgmax = on }

// NewPooling makes the forward kernel of kind with geometry g. Dilation
// other than 1 is allowed only for KindMax, which then becomes
// KindDilatedMax.
func NewPooling(dev *vk.Device, kind PoolingKind, g Geometry) (Pooling, error) {
	k, err := effectiveKind(kind, g, "")
	if err != nil {
		return nil, err
	}
	switch k {
	case KindMax:
		return NewPoolingMax(dev, g.KernelWidth, g.KernelHeight, g.StrideX, g.StrideY)
	case KindDilatedMax:
		return NewDilatedPoolingMax(dev, g.KernelWidth, g.KernelHeight, g.DilationX, g.DilationY, g.StrideX, g.StrideY)
	case KindAverage:
		return NewPoolingAverage(dev, g.KernelWidth, g.KernelHeight, g.StrideX, g.StrideY)
	}
	return NewPoolingL2Norm(dev, g.KernelWidth, g.KernelHeight, g.StrideX, g.StrideY)
}

// effectiveKind returns the kernel NewPooling and NewPoolingGradient make
// for kind and g: KindMax with a dilation other than 1 is KindDilatedMax;
// average and L2-norm pooling have no dilation. suffix follows the kind
// in errors ("Gradient").
func effectiveKind(kind PoolingKind, g Geometry, suffix string) (PoolingKind, error) {
	dil := g.DilationX != 1 || g.DilationY != 1
	switch kind {
	case KindMax:
		if dil {
			return KindDilatedMax, nil
		}
		return KindMax, nil
	case KindDilatedMax:
		return kind, nil
	case KindAverage, KindL2Norm:
		if dil {
			return kind, fmt.Errorf("%w: %v%s has no dilation (got %dx%d)", ErrGeometry, kind, suffix, g.DilationX, g.DilationY)
		}
		return kind, nil
	}
	return kind, fmt.Errorf("%w: unknown pooling kind %v", ErrGeometry, kind)
}
