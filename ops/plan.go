package ops

import (
	"fmt"

	"github.com/vkmps/vkmps/vk"
)

// Large tensors. A dispatch binds each image through one storage-buffer
// range, which may span at most the device's MaxStorageBufferRange (128 MiB
// on lavapipe) and must start at a multiple of its offset alignment. An
// encode is therefore split into parts: all of it when it fits, else groups
// of whole batch images, else groups of channels of one batch image. A
// single plane (H*W values) larger than the range is an ErrDeviceLimit.

// span is the planes of one image a part covers: batch images
// [n0, n0+batches) and channels [c0, c0+channels) of each.
type span struct {
	im     *Image
	n0, c0 int
}

// part is one dispatch's share of an encode.
type part struct {
	src, dst         vk.BufferRange
	srcBase, dstBase uint32 // element index of the first plane within the range
	n, c             int    // batch and channel of the part's first plane, relative to the job
	batches          int
	channels         int
}

// bytes returns the byte length of batches × channels planes of s.
func (s span) bytes(batches, channels int) uint64 {
	hw := uint64(s.im.h * s.im.w)
	return (uint64(batches-1)*uint64(s.im.cTotal) + uint64(channels)) * hw * 4
}

// bind returns the aligned range holding the planes starting at batch n,
// channel c of s, and the element index of that first plane within it.
func (s span) bind(align uint64, n, c, batches, channels int) (vk.BufferRange, uint32) {
	hw := uint64(s.im.h * s.im.w)
	first := s.im.base + (uint64(s.n0+n)*uint64(s.im.cTotal)+uint64(s.c0+c))*hw
	byteOff := first * 4
	start := byteOff - byteOff%align
	size := byteOff + s.bytes(batches, channels) - start
	return s.im.buf.Range(start, size), uint32((byteOff - start) / 4)
}

// largest returns the largest count in [0, max] with fits(count) true,
// where fits is monotone (true up to some count).
func largest(max int, fits func(int) bool) int {
	lo, hi := 0, max
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// forEachPart splits batches × channels planes of a and b into dispatches
// that fit the device's limits and calls fn for each.
func forEachPart(lim *vk.Limits, a, b span, batches, channels int, fn func(p *part) error) error {
	align := lim.MinStorageBufferOffsetAlignment
	if align < 4 {
		align = 4
	}
	room := lim.MaxStorageBufferRange - (align - 4) // the alignment slack of one range
	maxZ := int(lim.MaxComputeWorkGroupCount[2])
	fits := func(nb, nc int) bool {
		return a.bytes(nb, nc) <= room && b.bytes(nb, nc) <= room && nb*nc <= maxZ
	}
	var p part
	emit := func(n, c, nb, nc int) error {
		p.src, p.srcBase = a.bind(align, n, c, nb, nc)
		p.dst, p.dstBase = b.bind(align, n, c, nb, nc)
		p.n, p.c, p.batches, p.channels = n, c, nb, nc
		return fn(&p)
	}
	if fits(batches, channels) {
		return emit(0, 0, batches, channels)
	}
	if fits(1, channels) {
		nb := largest(batches, func(nb int) bool { return fits(nb, channels) })
		for n := 0; n < batches; n += nb {
			if err := emit(n, 0, min(nb, batches-n), channels); err != nil {
				return err
			}
		}
		return nil
	}
	nc := largest(channels, func(nc int) bool { return fits(1, nc) })
	if nc == 0 {
		big := a.im
		if b.bytes(1, 1) > a.bytes(1, 1) {
			big = b.im
		}
		return fmt.Errorf("%w: one %dx%d plane of %s (%d bytes) exceeds the device's max storage buffer range (%d bytes)",
			ErrDeviceLimit, big.h, big.w, big, uint64(big.h*big.w)*4, lim.MaxStorageBufferRange)
	}
	for n := 0; n < batches; n++ {
		for c := 0; c < channels; c += nc {
			if err := emit(n, c, 1, min(nc, channels-c)); err != nil {
				return err
			}
		}
	}
	return nil
}

// groups returns the workgroup grid for count invocations of local size
// along x: x first, then y when x would exceed the device's limit.
func groups(lim *vk.Limits, count, local, z int) [3]uint32 {
	g := (count + local - 1) / local
	maxX := int(lim.MaxComputeWorkGroupCount[0])
	if g <= maxX {
		return [3]uint32{uint32(g), 1, uint32(z)}
	}
	y := (g + maxX - 1) / maxX
	x := (g + y - 1) / y
	return [3]uint32{uint32(x), uint32(y), uint32(z)}
}
