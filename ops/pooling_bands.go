package ops

import (
	"unsafe"

	"github.com/vkmps/vkmps/vk"
)

// Pooling planes larger than the storage-buffer range (an 8192x8192
// float32 plane on lavapipe's 128 MiB) run in bands of output rows, one
// plane at a time (forEachBand): each dispatch binds the rows of the
// source its band's windows read (the window's halo included) and the
// rows of the destination (and argmax codes) it writes. The shaders see
// the band as the whole image: the source rows bound are exactly the
// needed rows that lie in the image, so "inside the image" means the same
// thing, and every row coordinate (window centres, the average's count
// region) is moved by the band's first row. Results are the same bits as
// one dispatch.

// bandSourceRows returns the rows of a source of h rows that taps in rows
// [a, b) read: their part inside the image, or, when none is, a row the
// band's shaders see as lying outside every tap (the image's first row for
// taps above it, its last for taps below).
func bandSourceRows(a, b, h int) rowRange {
	r0, r1 := min(max(a, 0), h), min(max(b, 0), h)
	switch {
	case r0 < r1:
		return rowRange{r0, r1}
	case b <= 0:
		return rowRange{0, 1}
	}
	return rowRange{h - 1, h}
}

// bandShift moves a count-region bound by -r0, leaving the unbounded
// values as they are.
func bandShift(v int32, r0 int) int32 {
	if v <= -unbounded || v >= unbounded {
		return v
	}
	return v - int32(r0)
}

// encodeBands dispatches forward job j (pipeline pl of key, push constants
// pc as encode set them, spans source, destination and argmax codes) in
// bands of destination rows, plane by plane.
//
// The encodes pass their push constants and plans here by value, so that
// their common path keeps them on the stack (encoding allocates nothing).
func (p *pooling) encodeBands(cb *vk.CommandBuffer, pl *vk.Pipeline, key passKey, pc poolPush, spans []span, j job) error {
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	lim := p.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	_, ky := p.geom.effective()
	sy := p.geom.StrideY
	regY0, regY1 := pc.RegY0, pc.RegY1
	bandRows := func(y0, y1 int, rr *[maxBandSpans]rowRange) {
		first := j.offY + sy*y0 - ky/2
		rr[0] = bandSourceRows(first, j.offY+sy*(y1-1)-ky/2+ky, j.src.h)
		rr[1] = rowRange{j.clipY + y0, j.clipY + y1}
		rr[2] = rowRange{y0, y1} // argmax codes: a row of words per clip row
	}
	var ranges [maxSpans]vk.BufferRange
	for n := 0; n < j.batches; n++ {
		for c := 0; c < j.channels; c++ {
			err := forEachBand(&lim, spans, j.clipH, bandRows, func(y0, y1 int, rr *[maxBandSpans]rowRange) error {
				var bases [maxSpans]uint32
				for i, s := range spans {
					ranges[i], bases[i] = s.bindRows(align, n, c, rr[i])
				}
				src := rr[0]
				pc.SrcH = int32(src.r1 - src.r0)
				pc.OffY = int32(j.offY + sy*y0 - src.r0)
				pc.ClipY, pc.ClipH = 0, int32(y1-y0)
				pc.RegY0, pc.RegY1 = bandShift(regY0, src.r0), bandShift(regY1, src.r0)
				pc.SrcBase, pc.DstBase, pc.AmBase = bases[0], bases[1], bases[2]
				pc.Channels, pc.Planes = 1, 1
				g, err := p.passes.groups(key, j.clipW, y1-y0, 1)
				if err != nil {
					return err
				}
				return cb.Dispatch(pl, ranges[:len(spans)], push, g)
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// gradBands is a gradient encode whose planes exceed the storage range:
// what encode prepared for one dispatch over everything.
type gradBands struct {
	plan         gradPlan
	pc           gradPush
	first        poolPush // the first pass's push constants (argmax codes or L2 ratios)
	pl           *vk.Pipeline
	firstKey     passKey
	j            job
	st           *PoolingGradientState
	x, dy        *Image
	baseX, baseY int // dx position of the first tap of window (0, 0)
	loop         bool
	cx           int // the gather's cells per invocation
	lx, ly, lz   int
}

// The spans of a gradient band, by role.
const (
	gbDy     = iota // dy: the window rows (or, for L2, the ratios laid out as dy)
	gbDx            // dx: the band's rows
	gbXGath         // x as the gather reads it (L2): the band's rows
	gbXFirst        // x as the first pass reads it: the windows' rows
	gbCodes         // argmax codes (a state's or the first pass's): the window rows
	gbSpans
)

// encodeBands dispatches gradient b in bands of dx rows, plane by plane.
// A band's windows are those the gather visits for its rows (those that
// hold them, and the neighbours of their cells), within the forward clip;
// the first pass, where there is one, computes them; the gather then sees
// the band as its whole dx clip, its windows renumbered from the band's
// first.
func (p *poolingGradient) encodeBands(cb *vk.CommandBuffer, b gradBands) error {
	lim := p.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	g, j, st, plan := p.geom, b.j, b.st, &b.plan
	pc, first := &b.pc, &b.first
	push := unsafe.Slice((*byte)(unsafe.Pointer(pc)), unsafe.Sizeof(*pc))
	firstPush := unsafe.Slice((*byte)(unsafe.Pointer(first)), unsafe.Sizeof(*first))
	_, ky := g.effective()
	sy := g.StrideY
	ay := (ky-1)/sy + 1
	winLo, winHi := st.Clip.Y, st.Clip.Y+st.Clip.Height
	l2 := p.kind == KindL2Norm
	codes := plan.bits > 0
	// The spans in role order; role[i] is the span's index or -1.
	var spans [gbSpans]span
	var role [gbSpans]int
	n := 0
	add := func(r int, s span, on bool) {
		role[r] = -1
		if on {
			spans[n], role[r] = s, n
			n++
		}
	}
	dySpan := plan.dy
	if l2 {
		dySpan = plan.scratch // the gather reads the ratios in place of dy
	}
	codeSpan := plan.aux
	if plan.scratch.buf != nil && !l2 {
		codeSpan = plan.scratch
	}
	add(gbDy, dySpan, true)
	add(gbDx, plan.dx, true)
	add(gbXGath, plan.x, l2)
	add(gbXFirst, plan.x, plan.scratch.buf != nil)
	add(gbCodes, codeSpan, codes)
	dyRatio := -1 // for L2 the ratio pass also reads dy itself
	if l2 {
		dyRatio = n
		spans[n] = plan.dy
		n++
	}
	// windows returns the windows the band of clip rows [y0, y1) visits,
	// [wa, wb) within the forward clip; when none is, one window of the
	// clip that it does not visit (it then reads no window).
	windows := func(y0, y1 int) (int, int) {
		ma := floorDiv(j.clipY+y0-b.baseY, sy)
		mb := floorDiv(j.clipY+y1-1-b.baseY, sy)
		wa, wb := max(winLo, ma-ay+1), min(winHi, mb+1)
		switch {
		case wa < wb:
			return wa, wb
		case mb < winLo:
			return winLo, winLo + 1
		}
		return winHi - 1, winHi
	}
	bandRows := func(y0, y1 int, rr *[maxBandSpans]rowRange) {
		wa, wb := windows(y0, y1)
		dx := rowRange{j.clipY + y0, j.clipY + y1}
		for r, i := range role {
			if i < 0 {
				continue
			}
			switch r {
			case gbDy:
				rr[i] = rowRange{wa, wb}
			case gbDx, gbXGath:
				rr[i] = dx
			case gbXFirst:
				rr[i] = bandSourceRows(b.baseY+sy*wa, b.baseY+sy*(wb-1)+ky, b.x.h)
			case gbCodes:
				rr[i] = rowRange{wa - winLo, wb - winLo}
			}
		}
		if dyRatio >= 0 {
			rr[dyRatio] = rowRange{wa, wb}
		}
	}
	regY0, regY1 := pc.RegY0, pc.RegY1
	var ranges [maxBandSpans]vk.BufferRange
	var bases [maxBandSpans]uint32
	var bind [3]vk.BufferRange
	for bn := 0; bn < j.batches; bn++ {
		for c := 0; c < j.channels; c++ {
			err := forEachBand(&lim, spans[:n], j.clipH, bandRows, func(y0, y1 int, rr *[maxBandSpans]rowRange) error {
				for i, s := range spans[:n] {
					ranges[i], bases[i] = s.bindRows(align, bn, c, rr[i])
				}
				wa, wb := windows(y0, y1)
				y := j.clipY + y0
				if plan.scratch.buf != nil {
					// The first pass over windows [wa, wb): codes, or ratios
					// stored (and dy read) from dy row wa.
					xf := rr[role[gbXFirst]]
					first.SrcH = int32(xf.r1 - xf.r0)
					first.OffY = int32(b.baseY + sy*wa + ky/2 - xf.r0)
					first.ClipY, first.ClipH = 0, int32(wb-wa)
					first.Channels, first.Planes = 1, 1
					first.SrcBase = bases[role[gbXFirst]]
					bind[0] = ranges[role[gbXFirst]]
					if l2 {
						first.DstBase, first.DyBase = bases[role[gbDy]], bases[dyRatio]
						bind[1], bind[2] = ranges[role[gbDy]], ranges[dyRatio]
					} else {
						first.AmBase = bases[role[gbCodes]]
						bind[1], bind[2] = ranges[role[gbCodes]], ranges[role[gbCodes]]
					}
					groups, err := p.passes.groups(b.firstKey, st.Clip.Width, wb-wa, 1)
					if err != nil {
						return err
					}
					if err := cb.Dispatch(plan.firstPipe, bind[:], firstPush, groups); err != nil {
						return err
					}
				}
				// The gather over dx rows [y, clipY+y1) with windows from wa.
				pc.H = int32(y1 - y0)
				pc.ClipY, pc.ClipH = 0, int32(y1-y0)
				pc.WinBaseY = int32(b.baseY + sy*wa - y)
				pc.WinLoY, pc.WinHiY = 0, int32(wb-wa)
				pc.RegY0, pc.RegY1 = bandShift(regY0, y), bandShift(regY1, y)
				pc.Channels, pc.Planes = 1, 1
				pc.DyBase, pc.DxBase = bases[role[gbDy]], bases[role[gbDx]]
				bind[0] = ranges[role[gbDy]]
				k := 1
				switch {
				case l2:
					pc.AuxBase, bind[1] = bases[role[gbXGath]], ranges[role[gbXGath]]
					k = 2
				case codes:
					pc.AuxBase, bind[1] = bases[role[gbCodes]], ranges[role[gbCodes]]
					k = 2
				}
				bind[k] = ranges[role[gbDx]]
				items, rows := p.gatherItems(b.loop, b.cx, 0, j.clipX, 0, j.clipW, y1-y0, int64(b.baseX), int64(pc.WinBaseY))
				groups, err := grid3(&lim, items, rows, 1, b.lx, b.ly, b.lz)
				if err != nil {
					return err
				}
				return cb.Dispatch(b.pl, bind[:k+1], push, groups)
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// floorDiv is floor(a / b) for b > 0.
func floorDiv(a, b int) int { return int(floorDiv64(int64(a), int64(b))) }

// ceilDiv is ceil(a / b) for a >= 0, b > 0.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
