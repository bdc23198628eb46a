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
// Every buffer a dispatch binds (two for the forward kernels, three for the
// gradients, plus a gradient state's argmax indices) is split the same way.

// maxSpans is the most buffers one planned dispatch binds.
const maxSpans = 4

// span is the planes of one buffer a part covers: batch images
// [n0, n0+batches) and channels [c0, c0+channels) of each. Elements are
// esize bytes: 4 (float32 values or packed uint32 words) or 2 (float16).
type span struct {
	buf    *vk.Buffer
	esize  uint64 // bytes per element
	base   uint64 // element index of plane (batch 0, channel 0)
	plane  uint64 // elements per plane
	cTotal int    // planes per batch image
	n0, c0 int
	// what names the buffer in errors (formatted only then); h, w are
	// its plane's size.
	what fmt.Stringer
	h, w int
}

// imageSpan is the span of im from batch n0, channel c0.
func imageSpan(im *Image, n0, c0 int) span {
	return span{buf: im.buf, esize: im.esize(), base: im.base, plane: uint64(im.h * im.w), cTotal: im.cTotal,
		n0: n0, c0: c0, what: im, h: im.h, w: im.w}
}

// part is one dispatch's share of an encode: a range of each span and the
// element index of the part's first plane within it.
type part struct {
	ranges   [maxSpans]vk.BufferRange
	bases    [maxSpans]uint32
	n, c     int // batch and channel of the part's first plane, relative to the job
	batches  int
	channels int
}

// bytes returns the byte length of batches × channels planes of s.
func (s span) bytes(batches, channels int) uint64 {
	return (uint64(batches-1)*uint64(s.cTotal) + uint64(channels)) * s.plane * s.esize
}

// bind returns the aligned range holding the planes starting at batch n,
// channel c of s, and the element index of that first plane within it.
func (s span) bind(align uint64, n, c, batches, channels int) (vk.BufferRange, uint32) {
	first := s.base + (uint64(s.n0+n)*uint64(s.cTotal)+uint64(s.c0+c))*s.plane
	byteOff := first * s.esize
	start := byteOff - byteOff%align
	size := byteOff + s.bytes(batches, channels) - start
	return s.buf.Range(start, size), uint32((byteOff - start) / s.esize)
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

// forEachPart splits batches × channels planes of every span into
// dispatches that fit the device's limits and calls fn for each; the
// part's ranges and bases are in the order of spans.
func forEachPart(lim *vk.Limits, spans []span, batches, channels int, fn func(p part) error) error {
	if len(spans) > maxSpans {
		panic("ops: too many spans")
	}
	align := lim.MinStorageBufferOffsetAlignment
	if align < 4 {
		align = 4
	}
	minSize := uint64(4)
	for _, s := range spans {
		minSize = min(minSize, s.esize)
	}
	room := lim.MaxStorageBufferRange - (align - minSize) // the alignment slack of one range
	maxZ := int(lim.MaxComputeWorkGroupCount[2])
	fits := func(nb, nc int) bool {
		for _, s := range spans {
			if s.bytes(nb, nc) > room {
				return false
			}
		}
		return nb*nc <= maxZ
	}
	var p part
	emit := func(n, c, nb, nc int) error {
		for i, s := range spans {
			p.ranges[i], p.bases[i] = s.bind(align, n, c, nb, nc)
		}
		p.n, p.c, p.batches, p.channels = n, c, nb, nc
		return fn(p)
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
		big := spans[0]
		for _, s := range spans[1:] {
			if s.bytes(1, 1) > big.bytes(1, 1) {
				big = s
			}
		}
		return fmt.Errorf("%w: one %dx%d plane of %s (%d bytes) exceeds the device's max storage buffer range (%d bytes)",
			ErrDeviceLimit, big.h, big.w, big.what, big.plane*big.esize, lim.MaxStorageBufferRange)
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
