package ops

import (
	"fmt"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// Convert records dst = src in dst's format: float32 to float16 (rounded
// by the device: to nearest even on the devices vkmps is tested on) or
// float16 to float32 (exact); images of one format are copied (Copy). The
// images have one shape, share no storage, and either may be a channel
// view. It lets a float16 graph take float32 inputs and return float32
// outputs with the conversion on the GPU.
func Convert(cb *vk.CommandBuffer, src, dst *Image) error {
	if cb == nil {
		return fmt.Errorf("%w: Convert: nil command buffer", ErrInvalidImage)
	}
	if src == nil || dst == nil {
		return fmt.Errorf("%w: Convert: nil image", ErrInvalidImage)
	}
	if err := checkImages(src.dev, "Convert", []string{"source", "destination"}, src, dst); err != nil {
		return err
	}
	if err := sameShape("Convert", src, dst); err != nil {
		return err
	}
	if src.format == dst.format {
		return Copy(cb, src, dst)
	}
	if overlaps(src, dst) {
		return fmt.Errorf("%w: Convert: %s and %s share storage", ErrAlias, src, dst)
	}
	sh := spirv.Convert
	if dst.format == Float16 {
		sh = sh.Variant("tohalf")
	}
	lim := src.dev.Limits()
	local := workgroup(lim)
	pl, err := pipeline(src.dev, sh, map[string]uint32{"local_size_x": uint32(local)})
	if err != nil {
		return fmt.Errorf("Convert: %w", err)
	}
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	maxCount := int((lim.MaxStorageBufferRange - align) / 4)
	var pc struct{ Count, SrcBase, DstBase uint32 }
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	bind := func(im *Image, off uint64, n int) (vk.BufferRange, uint32) {
		es := im.esize()
		start := off - off%align
		return im.buf.Range(start, off+uint64(n)*es-start), uint32((off - start) / es)
	}
	var binds [2]vk.BufferRange
	return runs([]*Image{src, dst}, func(offs []uint64, count int) error {
		for done := 0; done < count; done += maxCount {
			n := min(maxCount, count-done)
			binds[0], pc.SrcBase = bind(src, offs[0]+uint64(done)*src.esize(), n)
			binds[1], pc.DstBase = bind(dst, offs[1]+uint64(done)*dst.esize(), n)
			pc.Count = uint32(n)
			g := min((n+local-1)/local, int(lim.MaxComputeWorkGroupCount[0]), 65535)
			if err := cb.Dispatch(pl, binds[:], push, [3]uint32{uint32(g), 1, 1}); err != nil {
				return fmt.Errorf("Convert: %w", err)
			}
		}
		return nil
	})
}
