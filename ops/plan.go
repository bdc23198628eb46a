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
// single plane (H*W values) larger than the range is an ErrDeviceLimit
// for forEachPart; the pooling kernels split such planes by rows
// (forEachBand, below).
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
	// row is the elements of one row of a plane, for splitting a plane
	// by rows (forEachBand); 0 where it cannot be.
	row uint64
}

// imageSpan is the span of im from batch n0, channel c0.
func imageSpan(im *Image, n0, c0 int) span {
	return span{buf: im.buf, esize: im.esize(), base: im.base, plane: uint64(im.h * im.w), cTotal: im.cTotal,
		n0: n0, c0: c0, what: im, h: im.h, w: im.w, row: uint64(im.w)}
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

// Planes larger than the range. A span whose plane holds rows of row
// elements (images, argmax codes) can also be bound by rows: an encode
// whose single plane does not fit is split into bands of output rows,
// each dispatch binding, of every span, the rows its band reads or
// writes (a window's halo included). The encoder says which rows those
// are (bandRows); forEachBand finds the largest bands that fit.

// maxBandSpans is the most row ranges one band binds.
const maxBandSpans = 6

// rowRange is rows [r0, r1) of a span's plane.
type rowRange struct{ r0, r1 int }

// planeFits reports whether one plane of every span fits the range, so
// that forEachPart can split an encode by batch images and channels.
func planeFits(lim *vk.Limits, spans []span) bool {
	room := bindRoom(lim, spans)
	for _, s := range spans {
		if s.bytes(1, 1) > room {
			return false
		}
	}
	return true
}

// bindRoom is the bytes a range may span once its start is aligned down.
func bindRoom(lim *vk.Limits, spans []span) uint64 {
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	minSize := uint64(4)
	for _, s := range spans {
		minSize = min(minSize, s.esize)
	}
	return lim.MaxStorageBufferRange - (align - minSize)
}

// bindRows returns the aligned range holding rows [r.r0, r.r1) of plane
// (n, c) of s (row elements a row; at least one element) and the element
// index of row r.r0 within it.
func (s span) bindRows(align uint64, n, c int, r rowRange) (vk.BufferRange, uint32) {
	first := s.base + (uint64(s.n0+n)*uint64(s.cTotal)+uint64(s.c0+c))*s.plane + uint64(r.r0)*s.row
	byteOff := first * s.esize
	start := byteOff - byteOff%align
	size := byteOff + max(uint64(r.r1-r.r0)*s.row, 1)*s.esize - start
	return s.buf.Range(start, size), uint32((byteOff - start) / s.esize)
}

// forEachBand splits output rows [0, rows) of one plane into bands
// [y0, y1) as large as the range allows: bandRows(y0, y1, rr) fills rr[i]
// with the rows of spans[i] the band needs (more rows for a larger band),
// and fn gets each band with them. A band of one row that does not fit is
// an ErrDeviceLimit naming the span.
func forEachBand(lim *vk.Limits, spans []span, rows int, bandRows func(y0, y1 int, rr *[maxBandSpans]rowRange),
	fn func(y0, y1 int, rr *[maxBandSpans]rowRange) error) error {
	if len(spans) > maxBandSpans {
		panic("ops: too many band spans")
	}
	room := bindRoom(lim, spans)
	var rr [maxBandSpans]rowRange
	fits := func(y0, y1 int) bool {
		bandRows(y0, y1, &rr)
		for i, s := range spans {
			if uint64(max(rr[i].r1-rr[i].r0, 1))*s.row*s.esize > room {
				return false
			}
		}
		return true
	}
	for y0 := 0; y0 < rows; {
		if !fits(y0, y0+1) {
			for i, s := range spans {
				if n := uint64(max(rr[i].r1-rr[i].r0, 1)) * s.row * s.esize; n > room {
					return fmt.Errorf("%w: the %d rows of %s one output row needs (%d bytes) exceed the device's max storage buffer range (%d bytes)",
						ErrDeviceLimit, rr[i].r1-rr[i].r0, s.what, n, lim.MaxStorageBufferRange)
				}
			}
			return fmt.Errorf("%w: no band of rows fits the device's max storage buffer range (%d bytes)", ErrDeviceLimit, lim.MaxStorageBufferRange)
		}
		n := largest(rows-y0, func(n int) bool { return n >= 1 && fits(y0, y0+n) })
		bandRows(y0, y0+n, &rr)
		if err := fn(y0, y0+n, &rr); err != nil {
			return err
		}
		y0 += n
	}
	return nil
}
