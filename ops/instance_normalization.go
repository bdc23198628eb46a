package ops

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// InstanceNormalizationDescriptor configures an instance normalization
// (MPSCNNInstanceNormalization): for each batch image n and feature
// channel c, over the H*W values of that plane,
//
//	y = gamma[c] * (x - mean[n,c]) / sqrt(var[n,c] + Epsilon) + beta[c]
//
// with the plane's mean and biased variance (PyTorch's instance_norm with
// affine parameters and no running statistics). A plane of one value
// gives beta (PyTorch refuses it in training). NewInstanceNormalizationDescriptor
// gives PyTorch's epsilon, 1e-5.
type InstanceNormalizationDescriptor struct {
	// Channels is C, the length of gamma and beta.
	Channels int
	// Epsilon is added to the variance; >= 0 and finite.
	Epsilon float32
}

// NewInstanceNormalizationDescriptor returns the descriptor of an instance
// normalization of channels channels with epsilon 1e-5.
func NewInstanceNormalizationDescriptor(channels int) InstanceNormalizationDescriptor {
	return InstanceNormalizationDescriptor{Channels: channels, Epsilon: 1e-5}
}

// Validate checks the descriptor: channels >= 1, epsilon >= 0 and finite.
func (d InstanceNormalizationDescriptor) Validate() error {
	const label = "InstanceNormalization"
	if d.Channels < 1 {
		return fmt.Errorf("%w: %s: channels %d < 1", ErrShape, label, d.Channels)
	}
	if err := finite(label, "epsilon", d.Epsilon); err != nil {
		return err
	}
	if d.Epsilon < 0 {
		return fmt.Errorf("%w: %s: epsilon %g < 0", ErrGeometry, label, d.Epsilon)
	}
	return nil
}

// ResultDescriptor returns the shape of the result for a source of shape
// src: src's, which must have d.Channels channels.
func (d InstanceNormalizationDescriptor) ResultDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	if src.C != d.Channels {
		return ImageDescriptor{}, fmt.Errorf("%w: InstanceNormalization: source %dx%dx%dx%d has %d channels, the kernel %d",
			ErrShape, src.N, src.C, src.H, src.W, src.C, d.Channels)
	}
	if src.N < 1 || src.H < 1 || src.W < 1 {
		return ImageDescriptor{}, fmt.Errorf("%w: InstanceNormalization: source %dx%dx%dx%d", ErrInvalidImage, src.N, src.C, src.H, src.W)
	}
	src.Label = ""
	return src, nil
}

// inCore is what the instance normalization kernels share: device,
// label, workgroup size, pipelines ([float16][quad loads]), the gradient's
// per-plane sums and the partial sums of chunked planes.
type inCore struct {
	dev     *vk.Device
	label   string
	local   int
	shader  *spirv.Shader
	pipes   [2][2]*vk.Pipeline
	scratch *vk.Buffer // the gradient's per-plane sums
	parts   *vk.Buffer // chunked planes: partial sums and coefficients
	dummy   *vk.Buffer
	// chunkBytes, when > 0, replaces bnMaxChunkBytes as the size of the
	// segments planes are cut into (tests: chunked small planes).
	chunkBytes int
	closed     atomic.Bool
}

// init sets up a kernel's core in place (it holds an atomic).
func (k *inCore) init(dev *vk.Device, label string, sh *spirv.Shader) error {
	if dev == nil {
		return fmt.Errorf("%w: %s: nil device", ErrDevice, label)
	}
	local := 1
	for local*2 <= workgroup(dev.Limits()) {
		local *= 2
	}
	k.dev, k.label, k.local, k.shader = dev, label, local, sh
	return nil
}

func (k *inCore) pipeline(f16, vec4 bool) (*vk.Pipeline, error) {
	return normVecPipeline(k.dev, &k.pipes, k.shader, k.label, k.local, nil, f16, vec4)
}

// segments returns how planes of plane values (format f, inputs images
// read) are cut: segs segments of seg values (a multiple of vec); segs 1
// for planes one workgroup does whole (at most one chunk of input).
func (k *inCore) segments(f Format, inputs, plane, vec int) (segs, seg int) {
	bytes := k.chunkBytes
	if bytes <= 0 {
		bytes = bnMaxChunkBytes
	}
	target := max(16, bytes/(f.Size()*inputs))
	if plane <= target {
		return 1, plane
	}
	segs = (plane + target - 1) / target
	seg = ((plane+segs-1)/segs + vec - 1) / vec * vec
	return (plane + seg - 1) / seg, seg
}

// ensure makes *buf at least words 32-bit words; a smaller one is closed
// (it lives on while submitted work uses it).
func (k *inCore) ensure(buf **vk.Buffer, words int, what string) error {
	return ensureWords(k.dev, buf, words, k.label, what)
}

func (k *inCore) dummyRange() (vk.BufferRange, error) {
	return dummyBufferRange(k.dev, &k.dummy, k.label)
}

// Close releases the kernel's scratch memory; safe twice.
func (k *inCore) Close() error {
	if k == nil || k.closed.Swap(true) {
		return nil
	}
	return closeBuffers(&k.scratch, &k.parts, &k.dummy)
}

// Task bits of glsl/instance_normalization_common.glsl (0: one workgroup
// per plane).
const (
	inTaskStats  = 1
	inTaskMerge  = 2
	inTaskApply  = 4
	inTaskReduce = 8
)

// dispatch2D records groups workgroups as a 2-D grid when they exceed the
// device's x count.
func dispatch2D(cb *vk.CommandBuffer, dev *vk.Device, label string, pl *vk.Pipeline, binds []vk.BufferRange, push []byte, groups int) error {
	lim := dev.Limits()
	gx := min(groups, int(lim.MaxComputeWorkGroupCount[0]))
	gy := (groups + gx - 1) / gx
	if gy > int(lim.MaxComputeWorkGroupCount[1]) {
		return fmt.Errorf("%w: %s: %d workgroups exceed the device's %d x %d", ErrDeviceLimit, label, groups,
			lim.MaxComputeWorkGroupCount[0], lim.MaxComputeWorkGroupCount[1])
	}
	if err := cb.Dispatch(pl, binds, push, [3]uint32{uint32(gx), uint32(gy), 1}); err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	return nil
}

// InstanceNormalization normalizes every (batch image, channel) plane by
// its own mean and variance, then scales by gamma and shifts by beta
// (MPSCNNInstanceNormalization; see InstanceNormalizationDescriptor).
// Gamma and beta are 1×C×1×1 float32 images read at each encode; source
// and destination are N×C×H×W images of one format (float32 or float16).
// A plane of at most 32 KiB is done by one workgroup (it reads the plane
// twice, the second time from the cache); larger planes are cut into
// segments: one dispatch writes each segment's partial sums, one adds
// them per plane, one normalizes (two reads and one write of the tensor,
// the whole GPU busy however few the planes). Sums are taken in a fixed
// order, without atomics: results repeat bit for bit. Tensors over one
// storage-buffer binding are split into groups of whole planes.
type InstanceNormalization struct {
	inCore
	desc        InstanceNormalizationDescriptor
	gamma, beta *Image
}

// NewInstanceNormalization makes an instance normalization of descriptor
// d over gamma and beta (1×C×1×1 float32 images, C = d.Channels).
func NewInstanceNormalization(dev *vk.Device, d InstanceNormalizationDescriptor, gamma, beta *Image) (*InstanceNormalization, error) {
	const label = "InstanceNormalization"
	if err := d.Validate(); err != nil {
		return nil, err
	}
	k := &InstanceNormalization{desc: d, gamma: gamma, beta: beta}
	if err := k.init(dev, label, spirv.InstanceNormalization); err != nil {
		return nil, err
	}
	if err := checkParam(dev, label, "gamma", gamma, d.Channels); err != nil {
		return nil, err
	}
	if err := checkParam(dev, label, "beta", beta, d.Channels); err != nil {
		return nil, err
	}
	return k, nil
}

// Descriptor returns the kernel's configuration.
func (k *InstanceNormalization) Descriptor() InstanceNormalizationDescriptor { return k.desc }

// Gamma and Beta return the parameter images.
func (k *InstanceNormalization) Gamma() *Image { return k.gamma }
func (k *InstanceNormalization) Beta() *Image  { return k.beta }

type inPush struct {
	Planes, Channels, Plane, Segs, Seg, Tasks uint32
	XBase, XBatch, YBase, YBatch              uint32
	GBase, BBase                              uint32
	Epsilon                                   float32
}

// checkIN validates the images of an instance normalization encode: role
// names them; the first is the forward source or dy.
func checkIN(k *inCore, cb *vk.CommandBuffer, channels int, roles []string, ims ...*Image) error {
	if k.closed.Load() {
		return fmt.Errorf("%w: %s", ErrClosed, k.label)
	}
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.label)
	}
	if err := checkImages(k.dev, k.label, roles, ims...); err != nil {
		return err
	}
	if ims[0].c != channels {
		return fmt.Errorf("%w: %s: %s %s has %d channels, the kernel %d", ErrShape, k.label, roles[0], ims[0], ims[0].c, channels)
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

// Encode records the instance normalization of src into dst (same shape).
func (k *InstanceNormalization) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	if err := checkIN(&k.inCore, cb, k.desc.Channels, []string{"source", "destination"}, src, dst); err != nil {
		return err
	}
	for _, im := range []*Image{k.gamma, k.beta} {
		if err := im.usable(); err != nil {
			return fmt.Errorf("%s: %w", k.label, err)
		}
	}
	lim := k.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	plane := src.h * src.w
	dummy, err := k.dummyRange()
	if err != nil {
		return err
	}
	var spanArr [maxSpans]span
	spanArr[0], spanArr[1] = imageSpan(src, 0, 0), imageSpan(dst, 0, 0)
	var pc inPush
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [5]vk.BufferRange
	return forEachPart(&lim, spanArr[:2], src.n, src.c, func(p part) error {
		planes := p.batches * p.channels
		pc = inPush{Planes: uint32(planes), Channels: uint32(p.channels), Plane: uint32(plane),
			XBatch: uint32(src.cTotal * plane), YBatch: uint32(dst.cTotal * plane), Epsilon: k.desc.Epsilon}
		binds[0], pc.XBase = p.ranges[0], p.bases[0]
		binds[1], pc.YBase = p.ranges[1], p.bases[1]
		binds[2], pc.GBase = paramRange(k.gamma, align, p.c, p.channels)
		binds[3], pc.BBase = paramRange(k.beta, align, p.c, p.channels)
		binds[4] = dummy
		vec4 := bnVec4(plane, pc.XBase, pc.YBase)
		segs, seg := k.segments(src.format, 1, plane, inVec(vec4))
		pc.Segs, pc.Seg = uint32(segs), uint32(seg)
		pl, err := k.pipeline(src.format == Float16, vec4)
		if err != nil {
			return err
		}
		if segs == 1 {
			return dispatch2D(cb, k.dev, k.label, pl, binds[:], push, planes)
		}
		if err := k.ensure(&k.parts, 2*planes*(segs+1), "partial sums"); err != nil {
			return err
		}
		binds[4] = k.parts.Whole()
		for _, t := range [...]struct{ task, groups int }{{inTaskStats, planes * segs}, {inTaskMerge, planes}, {inTaskApply, planes * segs}} {
			pc.Tasks = uint32(t.task)
			if err := dispatch2D(cb, k.dev, k.label, pl, binds[:], push, t.groups); err != nil {
				return err
			}
		}
		return nil
	})
}

// inVec is the values per load of a pass with quad loads or without.
func inVec(vec4 bool) int {
	if vec4 {
		return 4
	}
	return 1
}

// InstanceNormalizationGradient computes the gradients of an instance
// normalization (MPSCNNInstanceNormalizationGradient): for each plane of
// M = H*W values, with the forward's invstd = 1/sqrt(var + epsilon) and
// xhat = (x - mean)*invstd,
//
//	dx = gamma[c]*invstd * (dy - sum(dy)/M - xhat*sum(dy*xhat)/M)
//	dbeta[c] = sum of dy,  dgamma[c] = sum of dy*xhat   (over N, H, W)
//
// The statistics are computed again from the forward source (no state).
type InstanceNormalizationGradient struct {
	inCore
	in *InstanceNormalization
}

// NewInstanceNormalizationGradient makes the gradient kernel of in (its
// gamma and epsilon).
func NewInstanceNormalizationGradient(in *InstanceNormalization) (*InstanceNormalizationGradient, error) {
	const label = "InstanceNormalizationGradient"
	if in == nil {
		return nil, fmt.Errorf("%w: %s: nil instance normalization", ErrState, label)
	}
	k := &InstanceNormalizationGradient{in: in}
	if err := k.init(in.dev, label, spirv.InstanceNormalizationGrad); err != nil {
		return nil, err
	}
	return k, nil
}

type inGradPush struct {
	Planes, Channels, Plane, Segs, Seg, Tasks       uint32
	XBase, XBatch, DyBase, DyBatch, DxBase, DxBatch uint32
	GBase                                           uint32
	SumsBase, SumsStride, Batches                   uint32
	DgBase, DbBase                                  uint32
	Outputs                                         uint32 // inTaskReduce: 1 dgamma, 2 dbeta
	Epsilon                                         float32
}

// Encode records dx (src's shape) and, where not nil, dgamma and dbeta
// (1×C×1×1 float32) for dy, the gradient w.r.t. the forward destination,
// and src, the forward source.
func (k *InstanceNormalizationGradient) Encode(cb *vk.CommandBuffer, dy, src, dx, dgamma, dbeta *Image) error {
	if err := checkIN(&k.inCore, cb, k.in.desc.Channels, []string{"source gradient", "source", "destination gradient"}, dy, src, dx); err != nil {
		return err
	}
	if err := k.in.gamma.usable(); err != nil {
		return fmt.Errorf("%s: gamma: %w", k.label, err)
	}
	for _, p := range []struct {
		role string
		im   *Image
	}{{"gamma gradient", dgamma}, {"beta gradient", dbeta}} {
		if p.im != nil {
			if err := checkParam(k.dev, k.label, p.role, p.im, k.in.desc.Channels); err != nil {
				return err
			}
		}
	}
	if dgamma != nil && dbeta != nil && overlaps(dgamma, dbeta) {
		return fmt.Errorf("%w: %s: gamma gradient %s and beta gradient %s share storage", ErrAlias, k.label, dgamma, dbeta)
	}
	f16 := src.format == Float16
	if err := k.ensure(&k.scratch, 2*src.n*src.c, "plane sums"); err != nil {
		return err
	}
	dummy, err := k.dummyRange()
	if err != nil {
		return err
	}
	lim := k.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	plane := src.h * src.w
	var spanArr [maxSpans]span
	spanArr[0], spanArr[1], spanArr[2] = imageSpan(src, 0, 0), imageSpan(dy, 0, 0), imageSpan(dx, 0, 0)
	var pc inGradPush
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [8]vk.BufferRange
	err = forEachPart(&lim, spanArr[:3], src.n, src.c, func(p part) error {
		planes := p.batches * p.channels
		pc = inGradPush{Planes: uint32(planes), Channels: uint32(p.channels), Plane: uint32(plane),
			XBatch: uint32(src.cTotal * plane), DyBatch: uint32(dy.cTotal * plane), DxBatch: uint32(dx.cTotal * plane),
			SumsBase: uint32(p.n*src.c + p.c), SumsStride: uint32(src.c), Epsilon: k.in.desc.Epsilon}
		binds[0], pc.XBase = p.ranges[0], p.bases[0]
		binds[1], pc.DyBase = p.ranges[1], p.bases[1]
		binds[2], pc.DxBase = p.ranges[2], p.bases[2]
		binds[3], pc.GBase = paramRange(k.in.gamma, align, p.c, p.channels)
		binds[4], binds[5], binds[6], binds[7] = k.scratch.Whole(), dummy, dummy, dummy
		vec4 := bnVec4(plane, pc.XBase, pc.DyBase, pc.DxBase)
		segs, seg := k.segments(src.format, 2, plane, inVec(vec4))
		pc.Segs, pc.Seg = uint32(segs), uint32(seg)
		pl, err := k.pipeline(f16, vec4)
		if err != nil {
			return err
		}
		if segs == 1 {
			return dispatch2D(cb, k.dev, k.label, pl, binds[:], push, planes)
		}
		if err := k.ensure(&k.parts, 4*planes*(segs+1), "partial sums"); err != nil {
			return err
		}
		binds[7] = k.parts.Whole()
		for _, t := range [...]struct{ task, groups int }{{inTaskStats, planes * segs}, {inTaskMerge, planes}, {inTaskApply, planes * segs}} {
			pc.Tasks = uint32(t.task)
			if err := dispatch2D(cb, k.dev, k.label, pl, binds[:], push, t.groups); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || (dgamma == nil && dbeta == nil) {
		return err
	}
	pl, err := k.pipeline(f16, false)
	if err != nil {
		return err
	}
	pc = inGradPush{Tasks: inTaskReduce, Channels: uint32(src.c), SumsStride: uint32(src.c), Batches: uint32(src.n)}
	binds = [8]vk.BufferRange{dummy, dummy, dummy, dummy, k.scratch.Whole(), dummy, dummy, dummy}
	if dgamma != nil {
		binds[5], pc.DgBase = paramRange(dgamma, align, 0, src.c)
		pc.Outputs |= 1
	}
	if dbeta != nil {
		binds[6], pc.DbBase = paramRange(dbeta, align, 0, src.c)
		pc.Outputs |= 2
	}
	return dispatch2D(cb, k.dev, k.label, pl, binds[:], push, (src.c+k.local-1)/k.local)
}
