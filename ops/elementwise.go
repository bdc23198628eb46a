package ops

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// sameShape checks that every image has the shape of the first.
func sameShape(label string, ims ...*Image) error {
	for _, im := range ims[1:] {
		if im.n != ims[0].n || im.c != ims[0].c || im.h != ims[0].h || im.w != ims[0].w {
			return fmt.Errorf("%w: %s: %s and %s differ in shape", ErrShape, label, ims[0], im)
		}
	}
	return nil
}

// checkImages validates image arguments: open, on dev, not nil.
func checkImages(dev *vk.Device, label string, roles []string, ims ...*Image) error {
	for i, im := range ims {
		if im == nil {
			return fmt.Errorf("%w: %s: nil %s image", ErrInvalidImage, label, roles[i])
		}
		if err := im.usable(); err != nil {
			return fmt.Errorf("%s: %s: %w", label, roles[i], err)
		}
		if im.dev != dev {
			return fmt.Errorf("%w: %s: %s image %s is on another device", ErrDevice, label, roles[i], im)
		}
	}
	return nil
}

// onlyFloat32 reports ErrFormat for an image that is not float32, for the
// kernels that take float32 only (Add, Loss).
func onlyFloat32(label string, roles []string, ims ...*Image) error {
	for i, im := range ims {
		if im.format != Float32 {
			return fmt.Errorf("%w: %s: %s image %s is %v; %s takes float32 images only", ErrFormat, label, roles[i], im, im.format, label)
		}
	}
	return nil
}

// runs calls fn for each batch image's run of values of same-shape
// images (once for all of them when every image is contiguous), giving the
// byte offset of the run in each image's buffer and its length in values.
func runs(ims []*Image, fn func(offs []uint64, count int) error) error {
	offs := make([]uint64, len(ims))
	all := true
	for _, im := range ims {
		all = all && im.contiguous()
	}
	if all {
		for i, im := range ims {
			offs[i] = im.base * im.esize()
		}
		return fn(offs, ims[0].Len())
	}
	for n := 0; n < ims[0].n; n++ {
		for i, im := range ims {
			offs[i], _ = im.batchRun(n)
		}
		if err := fn(offs, ims[0].c*ims[0].h*ims[0].w); err != nil {
			return err
		}
	}
	return nil
}

// bindRun returns the aligned range of buf holding count values at byte
// offset off, and the index of the first value within it.
func bindRun(buf *vk.Buffer, align, off uint64, count int) (vk.BufferRange, uint32) {
	start := off - off%align
	return buf.Range(start, off+uint64(count)*4-start), uint32((off - start) / 4)
}

// Copy records a copy of src into dst, which must have the same shape and
// format (images of different formats are an ErrFormat: Copy never
// converts). Either may be a channel view: with it, concatenation is a
// Copy into a view of the concatenated image, and slicing a Copy out of
// one.
func Copy(cb *vk.CommandBuffer, src, dst *Image) error {
	if cb == nil {
		return fmt.Errorf("%w: Copy: nil command buffer", ErrInvalidImage)
	}
	if src == nil || dst == nil {
		return fmt.Errorf("%w: Copy: nil image", ErrInvalidImage)
	}
	if err := checkImages(src.dev, "Copy", []string{"source", "destination"}, src, dst); err != nil {
		return err
	}
	if err := sameShape("Copy", src, dst); err != nil {
		return err
	}
	if src.format != dst.format {
		return fmt.Errorf("%w: Copy: source %s is %v but destination %s is %v; Copy does not convert", ErrFormat, src, src.format, dst, dst.format)
	}
	if overlaps(src, dst) {
		return fmt.Errorf("%w: Copy: %s and %s share storage", ErrAlias, src, dst)
	}
	return runs([]*Image{src, dst}, func(offs []uint64, count int) error {
		size := uint64(count) * src.esize()
		return cb.Copy(dst.buf.Range(offs[1], size), src.buf.Range(offs[0], size))
	})
}

// Fill records setting every value of im (only its channels, for a view)
// to value (rounded to half for a float16 image).
func Fill(cb *vk.CommandBuffer, im *Image, value float32) error {
	if cb == nil {
		return fmt.Errorf("%w: Fill: nil command buffer", ErrInvalidImage)
	}
	if im == nil {
		return fmt.Errorf("%w: Fill: nil image", ErrInvalidImage)
	}
	if err := checkImages(im.dev, "Fill", []string{"destination"}, im); err != nil {
		return err
	}
	if im.format == Float16 {
		return fill16(cb, im, Float16Bits(value))
	}
	bits := math.Float32bits(value)
	return runs([]*Image{im}, func(offs []uint64, count int) error {
		return cb.Fill(im.buf.Range(offs[0], uint64(count)*4), bits)
	})
}

// fill16 sets every value of a float16 image to the half bits h with
// glsl/fill16.comp: its runs may start or end in the middle of a word,
// which vkCmdFillBuffer cannot.
func fill16(cb *vk.CommandBuffer, im *Image, h uint16) error {
	lim := im.dev.Limits()
	local := workgroup(lim)
	pl, err := pipeline(im.dev, spirv.Fill16, map[string]uint32{"local_size_x": uint32(local)})
	if err != nil {
		return fmt.Errorf("Fill: %w", err)
	}
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	maxCount := int((lim.MaxStorageBufferRange - align) / 2)
	var pc struct{ Count, Base, Bits uint32 }
	pc.Bits = uint32(h)
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	return runs([]*Image{im}, func(offs []uint64, count int) error {
		for done := 0; done < count; done += maxCount {
			n := min(maxCount, count-done)
			off := offs[0] + uint64(done)*2
			start := off - off%align
			pc.Count, pc.Base = uint32(n), uint32((off-start)/2)
			g := min((n+local-1)/local, int(lim.MaxComputeWorkGroupCount[0]))
			r := im.buf.Range(start, off+uint64(n)*2-start)
			if err := cb.Dispatch(pl, []vk.BufferRange{r}, push, [3]uint32{uint32(g), 1, 1}); err != nil {
				return fmt.Errorf("Fill: %w", err)
			}
		}
		return nil
	})
}

// elementwise holds what the element-wise kernels share.
type elementwise struct {
	dev   *vk.Device
	local int
	label string
}

func newElementwise(dev *vk.Device, label string) (elementwise, error) {
	if dev == nil {
		return elementwise{}, fmt.Errorf("%w: %s: nil device", ErrDevice, label)
	}
	// A power of two: the reductions halve it.
	local := 1
	for local*2 <= workgroup(dev.Limits()) {
		local *= 2
	}
	return elementwise{dev: dev, local: local, label: label}, nil
}

// Add is element-wise addition with scales (MPSCNNAdd):
// dst = Alpha*a + Beta*b. The zero value of Alpha and Beta means 1. It is
// Arithmetic's addition restricted to float32 images of one shape (the
// gradient sums of the graph); Arithmetic adds broadcasting, a bias, a
// clamp and float16.
type Add struct {
	elementwise
	Alpha, Beta float32
	pipes       [3][2]*vk.Pipeline // arithmetic.comp's, by mode and format
}

// NewAdd makes an addition kernel.
func NewAdd(dev *vk.Device) (*Add, error) {
	e, err := newElementwise(dev, "Add")
	if err != nil {
		return nil, err
	}
	return &Add{elementwise: e}, nil
}

type addPush struct {
	Count, ABase, BBase, DBase uint32
	Alpha, Beta                float32
}

func orOne(v float32) float32 {
	if v == 0 {
		return 1
	}
	return v
}

// Encode records dst = Alpha*a + Beta*b; the three images have one shape
// and dst shares no storage with a or b.
func (k *Add) Encode(cb *vk.CommandBuffer, a, b, dst *Image) error {
	if cb == nil {
		return fmt.Errorf("%w: Add: nil command buffer", ErrInvalidImage)
	}
	if err := checkImages(k.dev, k.label, []string{"first", "second", "destination"}, a, b, dst); err != nil {
		return err
	}
	if err := onlyFloat32(k.label, []string{"first", "second", "destination"}, a, b, dst); err != nil {
		return err
	}
	if err := sameShape(k.label, a, b, dst); err != nil {
		return err
	}
	if err := finite(k.label, "alpha", k.Alpha); err != nil {
		return err
	}
	if err := finite(k.label, "beta", k.Beta); err != nil {
		return err
	}
	if overlaps(a, dst) || overlaps(b, dst) {
		return fmt.Errorf("%w: Add: destination %s shares storage with a source", ErrAlias, dst)
	}
	// Arithmetic's flat pass in quads; a bias of -0 keeps every sum
	// exact, signed zeros included (x + -0 = x).
	d := ArithmeticDescriptor{Op: ArithmeticAdd, PrimaryScale: orOne(k.Alpha), SecondaryScale: orOne(k.Beta),
		Bias: float32(math.Copysign(0, -1)), Minimum: float32(math.Inf(-1)), Maximum: float32(math.Inf(1))}
	var enc arithEncoder
	enc.init(k.dev, k.local, k.label, &k.pipes, spirv.Arithmetic, d, 0)
	return enc.elementwise(cb, a, b, a, dst)
}
