package ops

import (
	"fmt"
	"math"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// arithPush is glsl/arithmetic.comp's push constants.
type arithPush struct {
	Count                      uint32
	XBase, YBase, GBase, OBase uint32
	C, H, W                    uint32
	XS, YS                     [4]uint32
	GSN, OSN                   uint32
	Flags                      uint32
	PS, SS, Bias, Lo, Hi       float32
}

// The work layouts of arithmetic.comp (MODE).
const (
	arithFlat   = 0 // same shapes, one contiguous run
	arithPlanes = 1 // quads of one plane; sources whole or one value per plane
	arithValues = 2 // any broadcast, value by value
)

// arithEncoder records the element-wise passes of Arithmetic and
// ArithmeticGradient (the gradient of a source with the result's shape).
type arithEncoder struct {
	dev    *vk.Device
	local  int
	label  string
	pipes  *[3][2]*vk.Pipeline // by mode, format
	shader *spirv.Shader
	desc   ArithmeticDescriptor
	grad   int // 0 forward, 1 primary's gradient, 2 secondary's
}

func (e *arithEncoder) init(dev *vk.Device, local int, label string, pipes *[3][2]*vk.Pipeline, sh *spirv.Shader, d ArithmeticDescriptor, grad int) {
	*e = arithEncoder{dev: dev, local: local, label: label, pipes: pipes, shader: sh, desc: d, grad: grad}
}

func (e *arithEncoder) pipeline(slot **vk.Pipeline, sh *spirv.Shader, f Format, mode int) (*vk.Pipeline, error) {
	if *slot != nil {
		return *slot, nil
	}
	s, err := build(sh, f == Float16)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.label, err)
	}
	p, err := pipeline(e.dev, s, map[string]uint32{"local_size_x": uint32(e.local), "OP": uint32(e.desc.Op),
		"MODE": uint32(mode), "GRAD": uint32(e.grad)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.label, err)
	}
	*slot = p
	return p, nil
}

// clamped reports whether a bound is finite (the gradient then needs both
// sources for the clamp's mask).
func (d ArithmeticDescriptor) clamped() bool {
	return !math.IsInf(float64(d.Minimum), -1) || !math.IsInf(float64(d.Maximum), 1)
}

// reads returns whether the pass must read x and y: the forward always;
// a gradient where its formula or the clamp's mask needs them.
func (e *arithEncoder) reads() (x, y bool) {
	if e.grad == 0 || e.desc.clamped() {
		return true, true
	}
	mulDiv := e.desc.Op == ArithmeticMultiply || e.desc.Op == ArithmeticDivide
	if e.grad == 1 {
		return false, mulDiv
	}
	return mulDiv, e.desc.Op == ArithmeticDivide
}

func (e *arithEncoder) push() arithPush {
	d := e.desc
	pc := arithPush{PS: d.PrimaryScale, SS: d.SecondaryScale, Bias: d.Bias, Lo: d.Minimum, Hi: d.Maximum}
	rx, ry := e.reads()
	if rx {
		pc.Flags |= 8
	}
	if ry {
		pc.Flags |= 16
	}
	return pc
}

// arithStrides returns im's strides along n, c, h, w in elements, 0 on
// the axes where it has size 1 (broadcast, or of no consequence).
func arithStrides(im *Image) [4]uint32 {
	plane := im.h * im.w
	var s [4]uint32
	if im.n > 1 {
		s[0] = uint32(im.cTotal * plane)
	}
	if im.c > 1 {
		s[1] = uint32(plane)
	}
	if im.h > 1 {
		s[2] = uint32(im.w)
	}
	if im.w > 1 {
		s[3] = 1
	}
	return s
}

// elementwise records out = value(x, y, g) over the result's shape (out's
// shape); g is dy for a gradient (the forward passes x, not read).
func (e *arithEncoder) elementwise(cb *vk.CommandBuffer, x, y, g, out *Image) error {
	lim := e.dev.Limits()
	pc := e.push()
	push := pushBytes(&pc)
	f := out.format
	var binds [4]vk.BufferRange
	dispatch := func(pl *vk.Pipeline, items int) error {
		if err := cb.Dispatch(pl, binds[:], push, [3]uint32{neuronGroups(lim, e.local, items), 1, 1}); err != nil {
			return fmt.Errorf("%s: %w", e.label, err)
		}
		return nil
	}
	if sameShapes(x, y, out) {
		pl, err := e.pipeline(&e.pipes[arithFlat][f], e.shader, f, arithFlat)
		if err != nil {
			return err
		}
		ims := [4]*Image{x, y, out, g}
		n := 3
		if e.grad != 0 {
			n = 4
		}
		return neuronRuns(lim, ims[:n], func(r neuronRun) error {
			binds[0], binds[1], binds[3] = r.ranges[0], r.ranges[1], r.ranges[2]
			pc.XBase, pc.YBase, pc.OBase = r.bases[0], r.bases[1], r.bases[2]
			binds[2], pc.GBase = r.ranges[0], r.bases[0]
			if e.grad != 0 {
				binds[2], pc.GBase = r.ranges[3], r.bases[3]
			}
			pc.Count = uint32(r.count)
			pc.Flags &^= 1
			items := r.count
			if r.aligned {
				pc.Flags |= 1
				items = max(r.count/4, 1)
			}
			return dispatch(pl, items)
		})
	}
	plane := out.h * out.w
	pc.H, pc.W = uint32(out.h), uint32(out.w)
	pc.XS, pc.YS = arithStrides(x), arithStrides(y)
	pc.GSN, pc.OSN = uint32(g.cTotal*plane), uint32(out.cTotal*plane)
	xFull, yFull := x.h == out.h && x.w == out.w, y.h == out.h && y.w == out.w
	planes := plane%4 == 0 && (xFull || x.h*x.w == 1) && (yFull || y.h*y.w == 1)
	pc.Flags &^= 7
	if xFull {
		pc.Flags |= 2
	}
	if yFull {
		pc.Flags |= 4
	}
	spans := [4]arithSpan{arithImageSpan(x, out), arithImageSpan(y, out), arithImageSpan(g, out), arithImageSpan(out, out)}
	return arithForEachPart(&lim, spans[:], out.n, out.c, func(p part) error {
		binds = p.ranges
		pc.XBase, pc.YBase, pc.GBase, pc.OBase = p.bases[0], p.bases[1], p.bases[2], p.bases[3]
		pc.C = uint32(p.channels)
		pc.Count = uint32(p.batches * p.channels * plane)
		mode := arithValues
		aligned := pc.OBase%4 == 0 && (!xFull || pc.XBase%4 == 0) && (!yFull || pc.YBase%4 == 0) && (e.grad == 0 || pc.GBase%4 == 0)
		if planes && aligned {
			mode = arithPlanes
		}
		pl, err := e.pipeline(&e.pipes[mode][f], e.shader, f, mode)
		if err != nil {
			return err
		}
		items := int(pc.Count)
		if mode == arithPlanes {
			items /= 4
		}
		return dispatch(pl, items)
	})
}

// sameShapes reports whether the images have one shape.
func sameShapes(ims ...*Image) bool {
	for _, im := range ims[1:] {
		if im.n != ims[0].n || im.c != ims[0].c || im.h != ims[0].h || im.w != ims[0].w {
			return false
		}
	}
	return true
}

// arithSpan is an image's span in a broadcast encode: along N (C) where
// it has size 1 and the result more, every part reads its one batch
// image (channel).
type arithSpan struct {
	span
	bn, bc bool
}

func arithImageSpan(im, result *Image) arithSpan {
	return arithSpan{span: imageSpan(im, 0, 0), bn: im.n == 1 && result.n > 1, bc: im.c == 1 && result.c > 1}
}

// extent returns the batch images and channels of s a part of nb × nc
// result planes reads, from result batch n and channel c.
func (s arithSpan) extent(n, c, nb, nc int) (int, int, int, int) {
	if s.bn {
		n, nb = 0, 1
	}
	if s.bc {
		c, nc = 0, 1
	}
	return n, c, nb, nc
}

// arithForEachPart is forEachPart for a broadcast encode over batches ×
// channels result planes: groups of batch images, else channel groups of
// one, that fit every span's storage-buffer range (a broadcast span
// binds only what the part reads).
func arithForEachPart(lim *vk.Limits, spans []arithSpan, batches, channels int, fn func(p part) error) error {
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	room := lim.MaxStorageBufferRange - (align - 2) // the alignment slack of one range
	fits := func(nb, nc int) bool {
		for _, s := range spans {
			_, _, b, c := s.extent(0, 0, nb, nc)
			if s.bytes(b, c) > room {
				return false
			}
		}
		return true
	}
	var p part
	emit := func(n, c, nb, nc int) error {
		for i, s := range spans {
			sn, sc, b, cc := s.extent(n, c, nb, nc)
			p.ranges[i], p.bases[i] = s.bind(align, sn, sc, b, cc)
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
