package ops

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// Window normalizations: cross-channel (local response), spatial and
// local-contrast normalization, MPS's MPSCNNNormalization.h kernels, with
// their gradients. A window of size k centred on i covers [i - floor(k/2),
// i + floor((k-1)/2)] (MPS's Q(k); even windows lean to the top left, as
// pooling's); values outside the image count as 0, and the divisor is the
// full window size. The gradients are the exact derivatives of the
// forward formulas (the formulas in MPS's header for them leave out the
// 1/N factor and, for local-contrast normalization, are garbled). Sources
// and destinations are N×C×H×W images of one format (float32 or float16;
// arithmetic in float32), whole images (no offsets or clip); tensors over
// one storage-buffer binding are split into groups of batch images
// (cross-channel) or of planes (spatial, local-contrast).

// maxNormWindow bounds the window sizes (the shaders loop over them).
const maxNormWindow = 1 << 15

// CrossChannelNormalizationDescriptor configures a local response
// normalization across feature channels (MPSCNNCrossChannelNormalization):
//
//	y = x / T^Beta,  T = Delta + Alpha/KernelSize * sum over channels q in
//	[c - KernelSize/2, c + (KernelSize-1)/2] (inside [0, C)) of x_q^2
//
// This is PyTorch's local_response_norm(size=KernelSize, alpha, beta,
// k=Delta). NewCrossChannelNormalizationDescriptor gives PyTorch's
// defaults, alpha 1e-4, beta 0.75, delta 1 (MPS's own defaults are alpha
// 1, beta 5, delta 1; its kernel size defaults to 5).
type CrossChannelNormalizationDescriptor struct {
	KernelSize         int
	Alpha, Beta, Delta float32
}

// NewCrossChannelNormalizationDescriptor returns the descriptor of a
// window of size channels with PyTorch's defaults.
func NewCrossChannelNormalizationDescriptor(size int) CrossChannelNormalizationDescriptor {
	return CrossChannelNormalizationDescriptor{KernelSize: size, Alpha: 1e-4, Beta: 0.75, Delta: 1}
}

// Validate checks the descriptor: size in [1, 32768], finite parameters,
// alpha >= 0 (MPS: "must be non-negative").
func (d CrossChannelNormalizationDescriptor) Validate() error {
	return normValidate("CrossChannelNormalization", []int{d.KernelSize}, []string{"kernel size"},
		[]float32{d.Alpha, d.Beta, d.Delta}, []string{"alpha", "beta", "delta"})
}

// ResultDescriptor returns the result's shape for a source of shape src:
// src's.
func (d CrossChannelNormalizationDescriptor) ResultDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	return normResult("CrossChannelNormalization", src)
}

// SpatialNormalizationDescriptor configures MPS's spatial normalization
// (MPSCNNSpatialNormalization): per feature channel, with the
// KernelWidth × KernelHeight window around each pixel (N = kw*kh values,
// those outside the image 0),
//
//	y = x / T^Beta,  T = Delta + Alpha/N * sum over the window of x^2
//
// NewSpatialNormalizationDescriptor gives MPS's defaults, alpha 1, beta 5,
// delta 1. (MPS requires kw = kh; vkmps takes any.)
type SpatialNormalizationDescriptor struct {
	KernelWidth, KernelHeight int
	Alpha, Beta, Delta        float32
}

// NewSpatialNormalizationDescriptor returns the descriptor of a kw × kh
// window with MPS's defaults.
func NewSpatialNormalizationDescriptor(kw, kh int) SpatialNormalizationDescriptor {
	return SpatialNormalizationDescriptor{KernelWidth: kw, KernelHeight: kh, Alpha: 1, Beta: 5, Delta: 1}
}

// Validate checks the descriptor: sizes in [1, 32768], finite parameters,
// alpha >= 0.
func (d SpatialNormalizationDescriptor) Validate() error {
	return normValidate("SpatialNormalization", []int{d.KernelWidth, d.KernelHeight}, []string{"kernel width", "kernel height"},
		[]float32{d.Alpha, d.Beta, d.Delta}, []string{"alpha", "beta", "delta"})
}

// ResultDescriptor returns the result's shape for a source of shape src:
// src's.
func (d SpatialNormalizationDescriptor) ResultDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	return normResult("SpatialNormalization", src)
}

// LocalContrastNormalizationDescriptor configures MPS's local-contrast
// normalization (MPSCNNLocalContrastNormalization): per feature channel,
// with the KernelWidth × KernelHeight window around each pixel (N = kw*kh
// values, those outside the image 0), its mean M = sum x/N and variance
// VAR = sum x^2/N - M^2,
//
//	y = PM + PS * (x - P0*M) / (Delta + Alpha*VAR)^Beta
//
// NewLocalContrastNormalizationDescriptor gives alpha 1, beta 0.5, delta
// 1/1024, p0 1, pm 0, ps 1: MPS's defaults, except alpha, which is 1 as in
// MPS's graph node (MPSCNNLocalContrastNormalizationNode); the MPS kernel
// keeps 0 for backward compatibility (a plain local mean subtraction).
// With pm 0, ps 1, p0 1, delta 0, alpha 1, beta 0.5 the result has zero
// mean and unit variance in each window.
type LocalContrastNormalizationDescriptor struct {
	KernelWidth, KernelHeight int
	Alpha, Beta, Delta        float32
	P0, PM, PS                float32
}

// NewLocalContrastNormalizationDescriptor returns the descriptor of a
// kw × kh window with the defaults above.
func NewLocalContrastNormalizationDescriptor(kw, kh int) LocalContrastNormalizationDescriptor {
	return LocalContrastNormalizationDescriptor{KernelWidth: kw, KernelHeight: kh, Alpha: 1, Beta: 0.5, Delta: 1.0 / 1024, P0: 1, PM: 0, PS: 1}
}

// Validate checks the descriptor: sizes in [1, 32768], finite parameters,
// alpha >= 0.
func (d LocalContrastNormalizationDescriptor) Validate() error {
	return normValidate("LocalContrastNormalization", []int{d.KernelWidth, d.KernelHeight}, []string{"kernel width", "kernel height"},
		[]float32{d.Alpha, d.Beta, d.Delta, d.P0, d.PM, d.PS}, []string{"alpha", "beta", "delta", "p0", "pm", "ps"})
}

// ResultDescriptor returns the result's shape for a source of shape src:
// src's.
func (d LocalContrastNormalizationDescriptor) ResultDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	return normResult("LocalContrastNormalization", src)
}

func normValidate(label string, sizes []int, sizeNames []string, params []float32, names []string) error {
	for i, s := range sizes {
		if s < 1 {
			return fmt.Errorf("%w: %s: %s %d < 1", ErrGeometry, label, sizeNames[i], s)
		}
		if s > maxNormWindow {
			return fmt.Errorf("%w: %s: %s %d > %d", ErrGeometry, label, sizeNames[i], s, maxNormWindow)
		}
	}
	for i, v := range params {
		if err := finite(label, names[i], v); err != nil {
			return err
		}
	}
	if params[0] < 0 {
		return fmt.Errorf("%w: %s: alpha %g < 0", ErrGeometry, label, params[0])
	}
	return nil
}

func normResult(label string, src ImageDescriptor) (ImageDescriptor, error) {
	if src.N < 1 || src.C < 1 || src.H < 1 || src.W < 1 {
		return ImageDescriptor{}, fmt.Errorf("%w: %s: source %dx%dx%dx%d", ErrInvalidImage, label, src.N, src.C, src.H, src.W)
	}
	src.Label = ""
	return src, nil
}

// normCore is what the window normalization kernels share.
type normCore struct {
	dev     *vk.Device
	label   string
	local   int
	shader  *spirv.Shader
	pipes   [2][3]*vk.Pipeline // [float16][mode]
	scratch *vk.Buffer
	dummy   *vk.Buffer
	closed  atomic.Bool
}

// init sets up a kernel's core in place (it holds an atomic).
func (k *normCore) init(dev *vk.Device, label string, sh *spirv.Shader) error {
	if dev == nil {
		return fmt.Errorf("%w: %s: nil device", ErrDevice, label)
	}
	local := 1
	for local*2 <= min(64, workgroup(dev.Limits())) {
		local *= 2
	}
	k.dev, k.label, k.local, k.shader = dev, label, local, sh
	return nil
}

func (k *normCore) pipeline(f16 bool, mode int) (*vk.Pipeline, error) {
	i := 0
	if f16 {
		i = 1
	}
	if k.pipes[i][mode] != nil {
		return k.pipes[i][mode], nil
	}
	s, err := build(k.shader, f16)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.label, err)
	}
	p, err := pipeline(k.dev, s, map[string]uint32{"local_size_x": uint32(k.local), "MODE": uint32(mode)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.label, err)
	}
	k.pipes[i][mode] = p
	return p, nil
}

func (k *normCore) dummyRange() (vk.BufferRange, error) {
	return dummyBufferRange(k.dev, &k.dummy, k.label)
}

// Close releases the kernel's scratch memory; safe twice.
func (k *normCore) Close() error {
	if k == nil || k.closed.Swap(true) {
		return nil
	}
	return closeBuffers(&k.scratch, &k.dummy)
}

// check validates an encode's images; the last is the output, which may
// share storage with none of the others.
func (k *normCore) check(cb *vk.CommandBuffer, roles []string, ims ...*Image) error {
	if k.closed.Load() {
		return fmt.Errorf("%w: %s", ErrClosed, k.label)
	}
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.label)
	}
	if err := checkImages(k.dev, k.label, roles, ims...); err != nil {
		return err
	}
	if err := sameShape(k.label, ims...); err != nil {
		return err
	}
	for i, im := range ims[1:] {
		if im.format != ims[0].format {
			return fmt.Errorf("%w: %s: %s image %s is %v but %s image %s is %v; the images of one encode share a format",
				ErrFormat, k.label, roles[0], ims[0], ims[0].format, roles[i+1], im, im.format)
		}
	}
	out := ims[len(ims)-1]
	for i, im := range ims[:len(ims)-1] {
		if overlaps(im, out) {
			return fmt.Errorf("%w: %s: %s %s and %s %s share storage", ErrAlias, k.label, roles[i], im, roles[len(ims)-1], out)
		}
	}
	return nil
}

// CrossChannelNormalization is local response normalization across
// feature channels (MPSCNNCrossChannelNormalization): see
// CrossChannelNormalizationDescriptor. One invocation per pixel walks its
// channels; a batch image larger than one storage-buffer binding is an
// ErrDeviceLimit.
type CrossChannelNormalization struct {
	normCore
	desc CrossChannelNormalizationDescriptor
}

// NewCrossChannelNormalization makes a cross-channel normalization.
func NewCrossChannelNormalization(dev *vk.Device, d CrossChannelNormalizationDescriptor) (*CrossChannelNormalization, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	k := &CrossChannelNormalization{desc: d}
	if err := k.init(dev, "CrossChannelNormalization", spirv.CrossChannelNormalization); err != nil {
		return nil, err
	}
	return k, nil
}

// Descriptor returns the kernel's configuration.
func (k *CrossChannelNormalization) Descriptor() CrossChannelNormalizationDescriptor { return k.desc }

// Encode records the normalization of src into dst (same shape).
func (k *CrossChannelNormalization) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	if err := k.check(cb, []string{"source", "destination"}, src, dst); err != nil {
		return err
	}
	return encodeCrossChannel(&k.normCore, k.desc, cb, nil, src, dst, 0)
}

// CrossChannelNormalizationGradient is the gradient of a cross-channel
// normalization (MPSCNNCrossChannelNormalizationGradient):
//
//	dx_c = dy_c T_c^-beta - 2 alpha beta/size * x_c * sum over r with c in
//	r's window (r in [c - (size-1)/2, c + size/2]) of dy_r x_r T_r^(-beta-1)
//
// It computes T again from the forward source (size^2 reads per value, from
// the cache).
type CrossChannelNormalizationGradient struct {
	normCore
	desc CrossChannelNormalizationDescriptor
}

// NewCrossChannelNormalizationGradient makes the gradient kernel of a
// cross-channel normalization of descriptor d.
func NewCrossChannelNormalizationGradient(dev *vk.Device, d CrossChannelNormalizationDescriptor) (*CrossChannelNormalizationGradient, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	k := &CrossChannelNormalizationGradient{desc: d}
	if err := k.init(dev, "CrossChannelNormalizationGradient", spirv.CrossChannelNormalization); err != nil {
		return nil, err
	}
	return k, nil
}

// Descriptor returns the kernel's configuration.
func (k *CrossChannelNormalizationGradient) Descriptor() CrossChannelNormalizationDescriptor {
	return k.desc
}

// Encode records dx (src's shape) for dy, the gradient w.r.t. the forward
// destination, and src, the forward source.
func (k *CrossChannelNormalizationGradient) Encode(cb *vk.CommandBuffer, dy, src, dx *Image) error {
	if err := k.check(cb, []string{"source gradient", "source", "destination gradient"}, dy, src, dx); err != nil {
		return err
	}
	return encodeCrossChannel(&k.normCore, k.desc, cb, dy, src, dx, 1)
}

type crossChannelPush struct {
	Channels, Plane, Batches                      uint32
	XBase, XBatch, DyBase, DyBatch, OBase, OBatch uint32
	Size                                          int32
	AlphaOverSize, Beta, Delta                    float32
}

// encodeCrossChannel records mode 0 (forward, dy nil) or 1 (gradient) over
// groups of whole batch images.
func encodeCrossChannel(k *normCore, d CrossChannelNormalizationDescriptor, cb *vk.CommandBuffer, dy, src, out *Image, mode int) error {
	lim := k.dev.Limits()
	plane := src.h * src.w
	groupsX := (plane + k.local - 1) / k.local
	if groupsX > int(lim.MaxComputeWorkGroupCount[0]) {
		return fmt.Errorf("%w: %s: %d-value planes need %d workgroups, over the device's %d", ErrDeviceLimit, k.label, plane, groupsX, lim.MaxComputeWorkGroupCount[0])
	}
	var spanArr [maxSpans]span
	spanArr[0], spanArr[1] = imageSpan(src, 0, 0), imageSpan(out, 0, 0)
	spans := spanArr[:2]
	if dy != nil {
		spanArr[2] = imageSpan(dy, 0, 0)
		spans = spanArr[:3]
	}
	whole := true
	if err := forEachPart(&lim, spans, src.n, src.c, func(p part) error {
		whole = whole && p.channels == src.c
		return nil
	}); err != nil {
		return fmt.Errorf("%s: %w", k.label, err)
	}
	if !whole {
		return fmt.Errorf("%w: %s: one batch image of %s (%d channels of %dx%d) exceeds the device's max storage buffer range (%d bytes); the window spans channels",
			ErrDeviceLimit, k.label, src, src.c, src.h, src.w, lim.MaxStorageBufferRange)
	}
	pl, err := k.pipeline(src.format == Float16, mode)
	if err != nil {
		return err
	}
	dummy, err := k.dummyRange()
	if err != nil {
		return err
	}
	pc := crossChannelPush{Channels: uint32(src.c), Plane: uint32(plane), Size: int32(d.KernelSize),
		AlphaOverSize: d.Alpha / float32(d.KernelSize), Beta: d.Beta, Delta: d.Delta,
		XBatch: uint32(src.cTotal * plane), OBatch: uint32(out.cTotal * plane)}
	if dy != nil {
		pc.DyBatch = uint32(dy.cTotal * plane)
	}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [3]vk.BufferRange
	return forEachPart(&lim, spans, src.n, src.c, func(p part) error {
		pc.Batches = uint32(p.batches)
		binds[0], pc.XBase = p.ranges[0], p.bases[0]
		binds[2], pc.OBase = p.ranges[1], p.bases[1]
		binds[1] = dummy
		if dy != nil {
			binds[1], pc.DyBase = p.ranges[2], p.bases[2]
		}
		if err := cb.Dispatch(pl, binds[:], push, [3]uint32{uint32(groupsX), uint32(p.batches), 1}); err != nil {
			return fmt.Errorf("%s: %w", k.label, err)
		}
		return nil
	})
}

// windowParams are the spatial and local-contrast parameters the shader
// takes.
type windowParams struct {
	kw, kh             int
	alpha, beta, delta float32
	p0, pm, ps         float32
	lcn                bool
}

// SpatialNormalization is MPS's spatial normalization
// (MPSCNNSpatialNormalization): see SpatialNormalizationDescriptor. One
// invocation per value reads its window.
type SpatialNormalization struct {
	normCore
	desc SpatialNormalizationDescriptor
}

// NewSpatialNormalization makes a spatial normalization.
func NewSpatialNormalization(dev *vk.Device, d SpatialNormalizationDescriptor) (*SpatialNormalization, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	k := &SpatialNormalization{desc: d}
	if err := k.init(dev, "SpatialNormalization", spirv.SpatialNormalization); err != nil {
		return nil, err
	}
	return k, nil
}

// Descriptor returns the kernel's configuration.
func (k *SpatialNormalization) Descriptor() SpatialNormalizationDescriptor { return k.desc }

func (d SpatialNormalizationDescriptor) params() windowParams {
	return windowParams{kw: d.KernelWidth, kh: d.KernelHeight, alpha: d.Alpha, beta: d.Beta, delta: d.Delta}
}

// Encode records the normalization of src into dst (same shape).
func (k *SpatialNormalization) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	if err := k.check(cb, []string{"source", "destination"}, src, dst); err != nil {
		return err
	}
	return encodeWindow(&k.normCore, k.desc.params(), cb, nil, src, dst)
}

// SpatialNormalizationGradient is the gradient of a spatial normalization
// (MPSCNNSpatialNormalizationGradient): with T as in the forward,
//
//	dx_q = dy_q T_q^-beta - 2 alpha beta/N * x_q * sum over the pixels p
//	whose window holds q of dy_p x_p T_p^(-beta-1)
//
// in two passes (the second gathers the first's per-pixel terms from a
// float32 scratch buffer the kernel keeps).
type SpatialNormalizationGradient struct {
	normCore
	desc SpatialNormalizationDescriptor
}

// NewSpatialNormalizationGradient makes the gradient kernel of a spatial
// normalization of descriptor d.
func NewSpatialNormalizationGradient(dev *vk.Device, d SpatialNormalizationDescriptor) (*SpatialNormalizationGradient, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	k := &SpatialNormalizationGradient{desc: d}
	if err := k.init(dev, "SpatialNormalizationGradient", spirv.SpatialNormalization); err != nil {
		return nil, err
	}
	return k, nil
}

// Descriptor returns the kernel's configuration.
func (k *SpatialNormalizationGradient) Descriptor() SpatialNormalizationDescriptor { return k.desc }

// Encode records dx (src's shape) for dy, the gradient w.r.t. the forward
// destination, and src, the forward source.
func (k *SpatialNormalizationGradient) Encode(cb *vk.CommandBuffer, dy, src, dx *Image) error {
	if err := k.check(cb, []string{"source gradient", "source", "destination gradient"}, dy, src, dx); err != nil {
		return err
	}
	return encodeWindow(&k.normCore, k.desc.params(), cb, dy, src, dx)
}

// LocalContrastNormalization is MPS's local-contrast normalization
// (MPSCNNLocalContrastNormalization): see
// LocalContrastNormalizationDescriptor. One invocation per value reads its
// window; the window sums are taken about the value itself, so large
// means do not cancel.
type LocalContrastNormalization struct {
	normCore
	desc LocalContrastNormalizationDescriptor
}

// NewLocalContrastNormalization makes a local-contrast normalization.
func NewLocalContrastNormalization(dev *vk.Device, d LocalContrastNormalizationDescriptor) (*LocalContrastNormalization, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	k := &LocalContrastNormalization{desc: d}
	if err := k.init(dev, "LocalContrastNormalization", spirv.LocalContrastNormalization); err != nil {
		return nil, err
	}
	return k, nil
}

// Descriptor returns the kernel's configuration.
func (k *LocalContrastNormalization) Descriptor() LocalContrastNormalizationDescriptor { return k.desc }

func (d LocalContrastNormalizationDescriptor) params() windowParams {
	return windowParams{kw: d.KernelWidth, kh: d.KernelHeight, alpha: d.Alpha, beta: d.Beta, delta: d.Delta,
		p0: d.P0, pm: d.PM, ps: d.PS, lcn: true}
}

// Encode records the normalization of src into dst (same shape).
func (k *LocalContrastNormalization) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	if err := k.check(cb, []string{"source", "destination"}, src, dst); err != nil {
		return err
	}
	return encodeWindow(&k.normCore, k.desc.params(), cb, nil, src, dst)
}

// LocalContrastNormalizationGradient is the gradient of a local-contrast
// normalization (MPSCNNLocalContrastNormalizationGradient): with M, VAR
// and T as in the forward, u_p = x_p - p0 M_p, a_p = dy_p p0 T_p^-beta and
// b_p = dy_p 2 alpha beta u_p T_p^(-beta-1), summing over the pixels p
// whose window holds q,
//
//	dx_q = ps dy_q T_q^-beta - ps/N * (sum (a_p - b_p M_p) + x_q sum b_p)
//
// in two passes (the second gathers the first's per-pixel terms from a
// float32 scratch buffer the kernel keeps).
type LocalContrastNormalizationGradient struct {
	normCore
	desc LocalContrastNormalizationDescriptor
}

// NewLocalContrastNormalizationGradient makes the gradient kernel of a
// local-contrast normalization of descriptor d.
func NewLocalContrastNormalizationGradient(dev *vk.Device, d LocalContrastNormalizationDescriptor) (*LocalContrastNormalizationGradient, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	k := &LocalContrastNormalizationGradient{desc: d}
	if err := k.init(dev, "LocalContrastNormalizationGradient", spirv.LocalContrastNormalization); err != nil {
		return nil, err
	}
	return k, nil
}

// Descriptor returns the kernel's configuration.
func (k *LocalContrastNormalizationGradient) Descriptor() LocalContrastNormalizationDescriptor {
	return k.desc
}

// Encode records dx (src's shape) for dy, the gradient w.r.t. the forward
// destination, and src, the forward source.
func (k *LocalContrastNormalizationGradient) Encode(cb *vk.CommandBuffer, dy, src, dx *Image) error {
	if err := k.check(cb, []string{"source gradient", "source", "destination gradient"}, dy, src, dx); err != nil {
		return err
	}
	return encodeWindow(&k.normCore, k.desc.params(), cb, dy, src, dx)
}

type windowPush struct {
	Width, Height                                 int32
	Channels                                      uint32
	XBase, XBatch, DyBase, DyBatch, OBase, OBatch uint32
	KW, KH                                        int32
	Alpha, Beta, Delta                            float32
	P0, PM, PS                                    float32
}

// encodeWindow records the forward (dy nil) or both gradient passes of a
// spatial or local-contrast normalization over groups of whole planes.
func encodeWindow(k *normCore, w windowParams, cb *vk.CommandBuffer, dy, src, out *Image) error {
	lim := k.dev.Limits()
	plane := src.h * src.w
	groupsX := (src.w + k.local - 1) / k.local
	if src.h > int(lim.MaxComputeWorkGroupCount[1]) {
		return fmt.Errorf("%w: %s: %d rows exceed the device's %d workgroups", ErrDeviceLimit, k.label, src.h, lim.MaxComputeWorkGroupCount[1])
	}
	vals := 1 // scratch floats per value
	if w.lcn {
		vals = 2
	}
	var spanArr [maxSpans]span
	spanArr[0], spanArr[1] = imageSpan(src, 0, 0), imageSpan(out, 0, 0)
	spans := spanArr[:2]
	if dy != nil {
		spanArr[2] = imageSpan(dy, 0, 0)
		// The scratch: vals float32 per value, dense per part (only its
		// size matters here; the passes bind it from 0).
		spanArr[3] = span{esize: uint64(4 * vals), plane: uint64(plane), cTotal: src.c, what: src, h: src.h, w: src.w}
		spans = spanArr[:4]
		most := 0
		if err := forEachPart(&lim, spans, src.n, src.c, func(p part) error {
			most = max(most, p.batches*p.channels)
			return nil
		}); err != nil {
			return fmt.Errorf("%s: %w", k.label, err)
		}
		size := uint64(most*plane*vals) * 4
		if k.scratch == nil || k.scratch.Size() < size {
			if k.scratch != nil {
				k.scratch.Close()
				k.scratch = nil
			}
			s, err := k.dev.NewBuffer(size, k.label+" scratch")
			if err != nil {
				return fmt.Errorf("%s: %w", k.label, err)
			}
			k.scratch = s
		}
	}
	dummy, err := k.dummyRange()
	if err != nil {
		return err
	}
	f16 := src.format == Float16
	pc := windowPush{Width: int32(src.w), Height: int32(src.h), KW: int32(w.kw), KH: int32(w.kh),
		Alpha: w.alpha, Beta: w.beta, Delta: w.delta, P0: w.p0, PM: w.pm, PS: w.ps,
		XBatch: uint32(src.cTotal * plane), OBatch: uint32(out.cTotal * plane)}
	if dy != nil {
		pc.DyBatch = uint32(dy.cTotal * plane)
	}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [4]vk.BufferRange
	return forEachPart(&lim, spans, src.n, src.c, func(p part) error {
		pc.Channels = uint32(p.channels)
		binds[0], pc.XBase = p.ranges[0], p.bases[0]
		binds[3], pc.OBase = p.ranges[1], p.bases[1]
		binds[1], binds[2] = dummy, dummy
		groups := [3]uint32{uint32(groupsX), uint32(src.h), uint32(p.batches * p.channels)}
		modes := [2]int{0, -1}
		if dy != nil {
			binds[1], pc.DyBase = p.ranges[2], p.bases[2]
			binds[2] = k.scratch.Range(0, uint64(p.batches*p.channels*plane*vals)*4)
			modes = [2]int{1, 2}
		}
		for _, mode := range modes {
			if mode < 0 {
				break
			}
			pl, err := k.pipeline(f16, mode)
			if err != nil {
				return err
			}
			if err := cb.Dispatch(pl, binds[:], push, groups); err != nil {
				return fmt.Errorf("%s: %w", k.label, err)
			}
		}
		return nil
	})
}
