package ops

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// UpsamplingDescriptor configures an upsampling by integer factors
// (MPSCNNUpsamplingNearest, MPSCNNUpsamplingBilinear and their gradients),
// defined as PyTorch's F.interpolate(x, scale_factor=(ScaleY, ScaleX),
// mode="nearest" | "bilinear", align_corners=AlignCorners). The result of
// an N×C×H×W source is N×C×(H*ScaleY)×(W*ScaleX). Per axis with n source
// pixels, out = n*s upsampled ones and upsampled index d:
//
//	nearest:                        src = floor(d / s)
//	bilinear, AlignCorners false:   src = max(0, (d + 0.5)/s - 0.5)
//	bilinear, AlignCorners true:    src = d * (n-1)/(out-1)   (0 when out = 1)
//
// and bilinear blends i0 = floor(src) and i1 = min(i0+1, n-1) with
// lambda = src - i0, rows as columns:
//
//	y = (1-ly)*((1-lx)*x[y0][x0] + lx*x[y0][x1]) + ly*((1-lx)*x[y1][x0] + lx*x[y1][x1])
//
// The kernels compute the positions exactly, as integer quotients and
// remainders, and the weights as remainder × a float32 reciprocal
// (PyTorch computes src in float32, so bilinear results differ from
// PyTorch's by a few ulps). A scale of 1 is a copy (nearest) or an
// identity (bilinear), as in MPS.
type UpsamplingDescriptor struct {
	// ScaleX and ScaleY are the integer scale factors, >= 1 (MPS's
	// integerScaleFactorX/Y).
	ScaleX, ScaleY int
	// Bilinear selects bilinear interpolation; false is nearest.
	Bilinear bool
	// AlignCorners is MPS's alignCorners and PyTorch's align_corners
	// (bilinear only).
	AlignCorners bool
}

// maxUpsamplingScale bounds the scale factors (the shaders' window
// arithmetic stays far inside 32 bits).
const maxUpsamplingScale = 1 << 12

// Validate checks the scales (integers in [1, 4096]) and that
// AlignCorners goes with Bilinear; errors wrap ErrGeometry.
func (d UpsamplingDescriptor) Validate() error {
	for _, s := range []struct {
		axis string
		v    int
	}{{"x", d.ScaleX}, {"y", d.ScaleY}} {
		if s.v < 1 || s.v > maxUpsamplingScale {
			return fmt.Errorf("%w: %s: scale factor %s = %d outside [1, %d]", ErrGeometry, d.name(), s.axis, s.v, maxUpsamplingScale)
		}
	}
	if d.AlignCorners && !d.Bilinear {
		return fmt.Errorf("%w: %s: align corners is a bilinear setting", ErrGeometry, d.name())
	}
	return nil
}

// name is the MPS name of the forward kernel.
func (d UpsamplingDescriptor) name() string {
	if d.Bilinear {
		return "UpsamplingBilinear"
	}
	return "UpsamplingNearest"
}

func (d UpsamplingDescriptor) String() string {
	mode := "nearest"
	if d.Bilinear {
		mode = "bilinear"
		if d.AlignCorners {
			mode += " (align corners)"
		}
	}
	return fmt.Sprintf("%s %dx%d", mode, d.ScaleX, d.ScaleY)
}

// ResultDescriptor returns the shape and format of the upsampled image of
// a source of shape src: N×C×(H*ScaleY)×(W*ScaleX). It needs no device
// (graph shape inference).
func (d UpsamplingDescriptor) ResultDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	if err := d.Validate(); err != nil {
		return ImageDescriptor{}, err
	}
	if err := src.validate(); err != nil {
		return ImageDescriptor{}, fmt.Errorf("%s: source: %w", d.name(), err)
	}
	if src.H > math.MaxInt32/d.ScaleY || src.W > math.MaxInt32/d.ScaleX {
		return ImageDescriptor{}, fmt.Errorf("%w: %s: %dx%d upsampled by %dx%d has a side over 2^31", ErrInvalidImage, d.name(), src.H, src.W, d.ScaleY, d.ScaleX)
	}
	out := ImageDescriptor{N: src.N, C: src.C, H: src.H * d.ScaleY, W: src.W * d.ScaleX, Format: src.Format}
	if err := out.validate(); err != nil {
		return ImageDescriptor{}, fmt.Errorf("%s: destination: %w", d.name(), err)
	}
	return out, nil
}

// GradientResultDescriptor returns the shape of the gradient's
// destination (the forward source) for a source gradient of shape dy,
// whose height and width must be multiples of the scales.
func (d UpsamplingDescriptor) GradientResultDescriptor(dy ImageDescriptor) (ImageDescriptor, error) {
	if err := d.Validate(); err != nil {
		return ImageDescriptor{}, err
	}
	if err := dy.validate(); err != nil {
		return ImageDescriptor{}, fmt.Errorf("%sGradient: source gradient: %w", d.name(), err)
	}
	if dy.H%d.ScaleY != 0 || dy.W%d.ScaleX != 0 {
		return ImageDescriptor{}, fmt.Errorf("%w: %sGradient: source gradient %dx%d is not a multiple of the scales %dx%d (height x width)",
			ErrShape, d.name(), dy.H, dy.W, d.ScaleY, d.ScaleX)
	}
	return ImageDescriptor{N: dy.N, C: dy.C, H: dy.H / d.ScaleY, W: dy.W / d.ScaleX, Format: dy.Format}, nil
}

// upsampling is what the four upsampling kernels share.
type upsampling struct {
	// Allocator makes the images of EncodeNew; nil means NewImage.
	Allocator ImageAllocator
	// Label names the kernel in errors; the constructor sets its MPS name.
	Label string

	dev   *vk.Device
	desc  UpsamplingDescriptor
	grad  bool
	local int
	pipes [8]*vk.Pipeline // by float16, vector loads, vector stores
}

func newUpsampling(dev *vk.Device, d UpsamplingDescriptor, grad bool) (upsampling, error) {
	u := upsampling{desc: d, grad: grad, Label: d.name()}
	if grad {
		u.Label += "Gradient"
	}
	if dev == nil {
		return u, fmt.Errorf("%w: %s: nil device", ErrDevice, u.Label)
	}
	if err := d.Validate(); err != nil {
		return u, err
	}
	u.dev = dev
	u.local = 1
	for u.local*2 <= workgroup(dev.Limits()) {
		u.local *= 2
	}
	return u, nil
}

// Descriptor returns the kernel's scales and mode.
func (u *upsampling) Descriptor() UpsamplingDescriptor { return u.desc }

// Device returns the kernel's device.
func (u *upsampling) Device() *vk.Device { return u.dev }

func (u *upsampling) mode() uint32 {
	switch {
	case !u.desc.Bilinear:
		return 0
	case !u.desc.AlignCorners:
		return 1
	}
	return 2
}

func (u *upsampling) pipeline(f16, vin, vout bool) (*vk.Pipeline, error) {
	i := 0
	if f16 {
		i |= 4
	}
	if vin {
		i |= 2
	}
	if vout {
		i |= 1
	}
	if u.pipes[i] != nil {
		return u.pipes[i], nil
	}
	sh := spirv.Upsampling
	switch {
	case u.grad && u.desc.Bilinear:
		sh = spirv.UpsamplingBilinearGrad
	case u.grad:
		sh = spirv.UpsamplingGrad
	}
	sh, err := build(sh, f16)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.Label, err)
	}
	p, err := pipeline(u.dev, sh, map[string]uint32{"local_size_x": uint32(u.local), "MODE": u.mode(),
		"SX": uint32(u.desc.ScaleX), "SY": uint32(u.desc.ScaleY), "VIN": upBool(vin), "VOUT": upBool(vout)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.Label, err)
	}
	u.pipes[i] = p
	return p, nil
}

func upBool(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// upPush is upsampling_common.glsl's push-constant block.
type upPush struct {
	W, H, Wo, Ho      int32
	Quads, Rows       uint32
	Channels, Items   uint32
	InBase, OutBase   uint32
	InBatch, OutBatch uint32
	InPlane, OutPlane uint32
	InvX, InvY        float32
	QuadsM, QuadsS    uint32 // upMagic of Quads, Rows and Channels
	RowsM, RowsS      uint32
	ChM, ChS          uint32
	DenXM, DenXS      uint32 // aligned corners: upMagic of Wo-1 and Ho-1 (1 where 0)
	DenYM, DenYS      uint32
	Exact             uint32 // aligned corners: numerators may reach 2^31 (true divisions)
}

// upGradPush is upsampling_bilinear_grad.comp's push-constant block.
type upGradPush struct {
	W, H, Wo, Ho         int32
	Segs, RowsPer        uint32
	Channels, Items      uint32
	InBase, OutBase      uint32
	InBatch, OutBatch    uint32
	InPlane, OutPlane    uint32
	InvX, InvY           float32
	WM, WS, SegsM, SegsS uint32 // upMagic of W, Segs and Channels
	ChM, ChS             uint32
	DenXM, DenXS         uint32 // aligned corners: upMagic of Wo-1, Ho-1, W-1 and H-1 (1 where 0)
	DenYM, DenYS         uint32
	NXM, NXS, NYM, NYS   uint32
	Exact                uint32 // aligned corners: numerators may reach 2^31 (true divisions)
}

// upGradRows is the dx rows an invocation of the bilinear gradient takes
// (it reads each dy row of their window once).
const upGradRows = 8

// upForceExact makes every encode use true divisions (tests: the path of
// images too large to run here).
var upForceExact bool

// upMagic1 is upMagic of d, or of 1 where d is 0.
func upMagic1(d int) (m, s uint32) { return upMagic(uint32(max(d, 1))) }

// upExact reports whether the aligned-corner positions of a source of n
// pixels upsampled to out may reach 2^31 (beyond the shaders' fast
// division), on either axis.
func upExact(small, big *Image) uint32 {
	if upForceExact || uint64(small.w)*uint64(big.w) >= 1<<31 || uint64(small.h)*uint64(big.h) >= 1<<31 {
		return 1
	}
	return 0
}

// inverse returns the float32 weight factor of an axis of n source pixels
// scaled by s: 1/(2s), or 1/(out-1) with aligned corners (0 when out = 1).
func (u *upsampling) inverse(n, s int) float32 {
	if !u.desc.AlignCorners {
		return float32(1 / float64(2*s))
	}
	if n*s == 1 {
		return 0
	}
	return float32(1 / float64(n*s-1))
}

// encode records the kernel from in (the forward's source, the gradient's
// dy) into out. Checks run in a fixed order: command buffer, images,
// format, shape, aliasing, then the device's limits.
func (u *upsampling) encode(cb *vk.CommandBuffer, in, out *Image) error {
	roles := [2]string{"source", "destination"}
	if u.grad {
		roles = [2]string{"source gradient", "destination gradient"}
	}
	if u.dev == nil {
		return fmt.Errorf("%w: %s: kernel not made by its constructor (no device)", ErrDevice, u.Label)
	}
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, u.Label)
	}
	if err := checkImages(u.dev, u.Label, roles[:], in, out); err != nil {
		return err
	}
	if in.format != out.format {
		return fmt.Errorf("%w: %s: %s image %s is %v but %s image %s is %v; the images of one encode share a format",
			ErrFormat, u.Label, roles[0], in, in.format, roles[1], out, out.format)
	}
	small, big := in, out // source pixels, upsampled pixels
	if u.grad {
		small, big = out, in
	}
	sx, sy := u.desc.ScaleX, u.desc.ScaleY
	if big.n != small.n || big.c != small.c || int64(big.h) != int64(small.h)*int64(sy) || int64(big.w) != int64(small.w)*int64(sx) {
		if u.grad {
			return fmt.Errorf("%w: %s: source gradient %s is not destination gradient %s upsampled by %dx%d (height x width): want a destination gradient of %s",
				ErrShape, u.Label, in, out, sy, sx, upWantShape(true, in, sx, sy))
		}
		return fmt.Errorf("%w: %s: destination %s is not source %s upsampled by %dx%d (height x width): want %s", ErrShape, u.Label,
			out, in, sy, sx, upWantShape(false, in, sx, sy))
	}
	if overlaps(in, out) {
		return fmt.Errorf("%w: %s: %s %s and %s %s share storage", ErrAlias, u.Label, roles[0], in, roles[1], out)
	}
	if u.desc.AlignCorners {
		// The shaders compute d*(n-1) (and, in the gradient, (p+1)*(out-1))
		// in 32-bit unsigned integers.
		if uint64(small.w)*uint64(big.w) > math.MaxUint32 || uint64(small.h)*uint64(big.h) > math.MaxUint32 {
			return fmt.Errorf("%w: %s: aligned-corner positions of a %dx%d source upsampled to %dx%d overflow the shader's 32-bit integers (source side x upsampled side must stay below 2^32)",
				ErrDeviceLimit, u.Label, small.h, small.w, big.h, big.w)
		}
	}
	if u.grad && u.desc.Bilinear {
		return u.encodeBilinearGrad(cb, in, out)
	}
	pc := upPush{W: int32(small.w), H: int32(small.h), Wo: int32(big.w), Ho: int32(big.h),
		InBatch: uint32(in.cTotal * in.h * in.w), OutBatch: uint32(out.cTotal * out.h * out.w),
		InPlane: uint32(in.h * in.w), OutPlane: uint32(out.h * out.w),
		InvX: u.inverse(small.w, sx), InvY: u.inverse(small.h, sy)}
	// Items: quads of the written rows; the nearest forward runs over
	// source rows (each writes its SY destination rows).
	pc.Quads = uint32((out.w + 3) / 4)
	pc.Rows = uint32(out.h)
	if !u.grad && !u.desc.Bilinear {
		pc.Rows = uint32(small.h)
	}
	pc.QuadsM, pc.QuadsS = upMagic(pc.Quads)
	pc.RowsM, pc.RowsS = upMagic(pc.Rows)
	pc.DenXM, pc.DenXS = upMagic1(big.w - 1)
	pc.DenYM, pc.DenYS = upMagic1(big.h - 1)
	pc.Exact = upExact(small, big)
	vin := u.grad && !u.desc.Bilinear && small.w%4 == 0
	vout := out.w%4 == 0
	var spanArr [maxSpans]span // an array, so encoding does not allocate
	spanArr[0], spanArr[1] = imageSpan(in, 0, 0), imageSpan(out, 0, 0)
	lim := u.dev.Limits()
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	err := forEachPart(&lim, spanArr[:2], in.n, in.c, func(pt part) error {
		pc.InBase, pc.OutBase = pt.bases[0], pt.bases[1]
		pc.Channels = uint32(pt.channels)
		pc.ChM, pc.ChS = upMagic(pc.Channels)
		items := uint64(pc.Quads) * uint64(pc.Rows) * uint64(pt.batches*pt.channels)
		if items > math.MaxInt32 { // the shaders' fast division takes numerators below 2^31
			return fmt.Errorf("%w: %d work items in one dispatch", ErrDeviceLimit, items)
		}
		pc.Items = uint32(items)
		pl, err := u.pipeline(in.format == Float16, vin && pc.InBase%4 == 0, vout && pc.OutBase%4 == 0)
		if err != nil {
			return err
		}
		groups, err := upGroups(&lim, items, u.local)
		if err != nil {
			return err
		}
		return cb.Dispatch(pl, pt.ranges[:2], push, groups)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", u.Label, err)
	}
	return nil
}

// encodeBilinearGrad records upsampling_bilinear_grad.comp from dy into
// dx, whose shapes encode has checked: one invocation per dx pixel and
// segment of upGradRows rows.
func (u *upsampling) encodeBilinearGrad(cb *vk.CommandBuffer, dy, dx *Image) error {
	rows := min(upGradRows, dx.h)
	pc := upGradPush{W: int32(dx.w), H: int32(dx.h), Wo: int32(dy.w), Ho: int32(dy.h),
		Segs: uint32((dx.h + rows - 1) / rows), RowsPer: uint32(rows),
		InBatch: uint32(dy.cTotal * dy.h * dy.w), OutBatch: uint32(dx.cTotal * dx.h * dx.w),
		InPlane: uint32(dy.h * dy.w), OutPlane: uint32(dx.h * dx.w),
		InvX: u.inverse(dx.w, u.desc.ScaleX), InvY: u.inverse(dx.h, u.desc.ScaleY), Exact: upExact(dx, dy)}
	pc.WM, pc.WS = upMagic(uint32(dx.w))
	pc.SegsM, pc.SegsS = upMagic(pc.Segs)
	pc.DenXM, pc.DenXS = upMagic1(dy.w - 1)
	pc.DenYM, pc.DenYS = upMagic1(dy.h - 1)
	pc.NXM, pc.NXS = upMagic1(dx.w - 1)
	pc.NYM, pc.NYS = upMagic1(dx.h - 1)
	var spanArr [maxSpans]span // an array, so encoding does not allocate
	spanArr[0], spanArr[1] = imageSpan(dy, 0, 0), imageSpan(dx, 0, 0)
	lim := u.dev.Limits()
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	err := forEachPart(&lim, spanArr[:2], dy.n, dy.c, func(pt part) error {
		pc.InBase, pc.OutBase = pt.bases[0], pt.bases[1]
		pc.Channels = uint32(pt.channels)
		pc.ChM, pc.ChS = upMagic(pc.Channels)
		items := uint64(dx.w) * uint64(pc.Segs) * uint64(pt.batches*pt.channels)
		if items > math.MaxInt32 { // the shader's fast division takes numerators below 2^31
			return fmt.Errorf("%w: %d work items in one dispatch", ErrDeviceLimit, items)
		}
		pc.Items = uint32(items)
		pl, err := u.pipeline(dy.format == Float16, false, false)
		if err != nil {
			return err
		}
		groups, err := upGroups(&lim, items, u.local)
		if err != nil {
			return err
		}
		return cb.Dispatch(pl, pt.ranges[:2], push, groups)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", u.Label, err)
	}
	return nil
}

// want formats the shape the second image of an encode should have.
func upWantShape(grad bool, in *Image, sx, sy int) string {
	if grad {
		return fmt.Sprintf("%dx%dx%s", in.n, in.c, upDiv(in.h, sy)+"x"+upDiv(in.w, sx))
	}
	return fmt.Sprintf("%dx%dx%dx%d", in.n, in.c, int64(in.h)*int64(sy), int64(in.w)*int64(sx))
}

func upDiv(v, s int) string {
	if v%s != 0 {
		return fmt.Sprintf("(%d/%d)", v, s)
	}
	return fmt.Sprint(v / s)
}

// upMagic returns the magic number and shift with which the shaders
// divide by d (fdiv in upsampling_common.glsl and dropout_common.glsl):
// n/d = (mulhi(n, m) + n) >> s for every n < 2^31, with s = ceil(log2 d)
// and m = floor(2^32 (2^s - d) / d) + 1 (PyTorch's IntDivider; Granlund
// and Montgomery). d must be in [1, 2^31].
func upMagic(d uint32) (m, s uint32) {
	for s < 32 && uint64(1)<<s < uint64(d) {
		s++
	}
	return uint32((uint64(1)<<32*(uint64(1)<<s-uint64(d)))/uint64(d) + 1), s
}

// upGroups returns a 2D grid of workgroups of local invocations covering
// items invocations: x up to the device's limit, y the rest.
func upGroups(lim *vk.Limits, items uint64, local int) ([3]uint32, error) {
	total := (items + uint64(local) - 1) / uint64(local)
	gx := min(total, uint64(lim.MaxComputeWorkGroupCount[0]))
	if gx == 0 {
		return [3]uint32{0, 1, 1}, nil
	}
	gy := (total + gx - 1) / gx
	if gy > uint64(lim.MaxComputeWorkGroupCount[1]) {
		return [3]uint32{}, fmt.Errorf("%w: %d workgroups exceed the device's %v", ErrDeviceLimit, total, lim.MaxComputeWorkGroupCount)
	}
	return [3]uint32{uint32(gx), uint32(gy), 1}, nil
}

// encodeNew allocates the image of shape d and encodes into it.
func (u *upsampling) encodeNew(cb *vk.CommandBuffer, in *Image) (*Image, error) {
	if in == nil {
		return nil, fmt.Errorf("%w: %s: nil source image", ErrInvalidImage, u.Label)
	}
	if err := in.usable(); err != nil {
		return nil, fmt.Errorf("%s: %w", u.Label, err)
	}
	var d ImageDescriptor
	var err error
	if u.grad {
		d, err = u.desc.GradientResultDescriptor(in.Descriptor())
	} else {
		d, err = u.desc.ResultDescriptor(in.Descriptor())
	}
	if err != nil {
		return nil, err
	}
	d.Label = u.Label + " destination"
	if u.grad {
		d.Label += " gradient"
	}
	var out *Image
	if u.Allocator != nil {
		out, err = u.Allocator.AllocateImage(u.dev, d)
	} else {
		out, err = NewImage(u.dev, d)
	}
	if err != nil {
		return nil, err
	}
	if err := u.encode(cb, in, out); err != nil {
		out.Close()
		return nil, err
	}
	return out, nil
}

// Upsampling is what UpsamplingNearest and UpsamplingBilinear share
// (MPSCNNUpsampling).
type Upsampling interface {
	// Encode records the upsampling of src into dst, whose shape is
	// Descriptor().ResultDescriptor(src).
	Encode(cb *vk.CommandBuffer, src, dst *Image) error
	// EncodeNew allocates the destination (Allocator, else NewImage) and
	// encodes into it; the caller closes it.
	EncodeNew(cb *vk.CommandBuffer, src *Image) (*Image, error)
	// Descriptor returns the kernel's scales and mode.
	Descriptor() UpsamplingDescriptor
}

// UpsamplingGradient is what UpsamplingNearestGradient and
// UpsamplingBilinearGradient share (MPSCNNUpsamplingGradient).
type UpsamplingGradient interface {
	// Encode records the gradient of the forward's source from dy (the
	// gradient of the forward's destination) into dx (the forward
	// source's shape). The forward's source image and state are not
	// needed: the gradient depends on the shapes only.
	Encode(cb *vk.CommandBuffer, sourceGradient, destinationGradient *Image) error
	// EncodeNew allocates dx (Descriptor().GradientResultDescriptor(dy))
	// and encodes into it; the caller closes it.
	EncodeNew(cb *vk.CommandBuffer, sourceGradient *Image) (*Image, error)
	// Descriptor returns the kernel's scales and mode.
	Descriptor() UpsamplingDescriptor
}

// UpsamplingNearest is nearest-neighbour upsampling by integer factors
// (MPSCNNUpsamplingNearest; PyTorch F.interpolate mode="nearest"):
// dst[n][c][y][x] = src[n][c][y/ScaleY][x/ScaleX]. A copy of each value,
// so float32 and float16 results are exact.
type UpsamplingNearest struct{ upsampling }

// NewUpsamplingNearest makes a nearest upsampling kernel (MPS
// initWithDevice:integerScaleFactorX:integerScaleFactorY:).
func NewUpsamplingNearest(dev *vk.Device, scaleX, scaleY int) (*UpsamplingNearest, error) {
	u, err := newUpsampling(dev, UpsamplingDescriptor{ScaleX: scaleX, ScaleY: scaleY}, false)
	if err != nil {
		return nil, err
	}
	return &UpsamplingNearest{u}, nil
}

// Encode records the upsampling of src into dst (N×C×(H*ScaleY)×(W*ScaleX)
// of src's format; either may be a channel view).
func (k *UpsamplingNearest) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	return k.encode(cb, src, dst)
}

// EncodeNew encodes into a new destination image; the caller closes it.
func (k *UpsamplingNearest) EncodeNew(cb *vk.CommandBuffer, src *Image) (*Image, error) {
	return k.encodeNew(cb, src)
}

// UpsamplingBilinear is bilinear upsampling by integer factors
// (MPSCNNUpsamplingBilinear; PyTorch F.interpolate mode="bilinear"), with
// or without aligned corners (UpsamplingDescriptor gives the formula).
// Float32 results are within a few ulps of the float64 reference (four
// taps, weights rounded once).
type UpsamplingBilinear struct{ upsampling }

// NewUpsamplingBilinear makes a bilinear upsampling kernel (MPS
// initWithDevice:integerScaleFactorX:integerScaleFactorY:alignCorners:).
func NewUpsamplingBilinear(dev *vk.Device, scaleX, scaleY int, alignCorners bool) (*UpsamplingBilinear, error) {
	u, err := newUpsampling(dev, UpsamplingDescriptor{ScaleX: scaleX, ScaleY: scaleY, Bilinear: true, AlignCorners: alignCorners}, false)
	if err != nil {
		return nil, err
	}
	return &UpsamplingBilinear{u}, nil
}

// Encode records the upsampling of src into dst (N×C×(H*ScaleY)×(W*ScaleX)
// of src's format; either may be a channel view).
func (k *UpsamplingBilinear) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	return k.encode(cb, src, dst)
}

// EncodeNew encodes into a new destination image; the caller closes it.
func (k *UpsamplingBilinear) EncodeNew(cb *vk.CommandBuffer, src *Image) (*Image, error) {
	return k.encodeNew(cb, src)
}

// UpsamplingNearestGradient is the gradient of UpsamplingNearest
// (MPSCNNUpsamplingNearestGradient): dx[y][x] = the sum of dy over its
// ScaleY×ScaleX block, added in float32 row by row, left to right.
type UpsamplingNearestGradient struct{ upsampling }

// NewUpsamplingNearestGradient makes the gradient of a nearest upsampling
// kernel with the same scales.
func NewUpsamplingNearestGradient(dev *vk.Device, scaleX, scaleY int) (*UpsamplingNearestGradient, error) {
	u, err := newUpsampling(dev, UpsamplingDescriptor{ScaleX: scaleX, ScaleY: scaleY}, true)
	if err != nil {
		return nil, err
	}
	return &UpsamplingNearestGradient{u}, nil
}

// Encode records dx from dy (UpsamplingGradient).
func (k *UpsamplingNearestGradient) Encode(cb *vk.CommandBuffer, sourceGradient, destinationGradient *Image) error {
	return k.encode(cb, sourceGradient, destinationGradient)
}

// EncodeNew records dx into a new image (UpsamplingGradient).
func (k *UpsamplingNearestGradient) EncodeNew(cb *vk.CommandBuffer, sourceGradient *Image) (*Image, error) {
	return k.encodeNew(cb, sourceGradient)
}

// UpsamplingBilinearGradient is the gradient of UpsamplingBilinear
// (MPSCNNUpsamplingBilinearGradient; PyTorch's autograd of
// F.interpolate): dx[p] = sum over the upsampled pixels d that blend p of
// weight(d, p) * dy[d], gathered per dx pixel without atomics (the same
// bits on every run), in float32: within a few ulps of the float64
// reference times the sum of the terms' magnitudes.
type UpsamplingBilinearGradient struct{ upsampling }

// NewUpsamplingBilinearGradient makes the gradient of a bilinear
// upsampling kernel with the same scales and alignCorners.
func NewUpsamplingBilinearGradient(dev *vk.Device, scaleX, scaleY int, alignCorners bool) (*UpsamplingBilinearGradient, error) {
	u, err := newUpsampling(dev, UpsamplingDescriptor{ScaleX: scaleX, ScaleY: scaleY, Bilinear: true, AlignCorners: alignCorners}, true)
	if err != nil {
		return nil, err
	}
	return &UpsamplingBilinearGradient{u}, nil
}

// Encode records dx from dy (UpsamplingGradient).
func (k *UpsamplingBilinearGradient) Encode(cb *vk.CommandBuffer, sourceGradient, destinationGradient *Image) error {
	return k.encode(cb, sourceGradient, destinationGradient)
}

// EncodeNew records dx into a new image (UpsamplingGradient).
func (k *UpsamplingBilinearGradient) EncodeNew(cb *vk.CommandBuffer, sourceGradient *Image) (*Image, error) {
	return k.encodeNew(cb, sourceGradient)
}

// NewUpsampling makes the forward kernel d describes: UpsamplingNearest
// or UpsamplingBilinear.
func NewUpsampling(dev *vk.Device, d UpsamplingDescriptor) (Upsampling, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if d.Bilinear {
		k, err := NewUpsamplingBilinear(dev, d.ScaleX, d.ScaleY, d.AlignCorners)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return k, nil
	}
	k, err := NewUpsamplingNearest(dev, d.ScaleX, d.ScaleY)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// NewUpsamplingGradient makes the gradient kernel of d's forward kernel.
func NewUpsamplingGradient(dev *vk.Device, d UpsamplingDescriptor) (UpsamplingGradient, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if d.Bilinear {
		k, err := NewUpsamplingBilinearGradient(dev, d.ScaleX, d.ScaleY, d.AlignCorners)
		if err != nil {
			return nil, err
		}
		return k, nil
	}
	k, err := NewUpsamplingNearestGradient(dev, d.ScaleX, d.ScaleY)
	if err != nil {
		return nil, err
	}
	return k, nil
}
