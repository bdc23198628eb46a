package ops

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// GradientKernel holds the properties of a gradient kernel
// (MPSCNNGradientKernel): the Kernel properties, applied to the source
// gradient dy (the primary source) and the destination gradient dx, plus
// KernelOffsetX/Y.
//
// MPS: the effective offset Offset*stride + KernelOffset is the position,
// in the source gradient upsampled by the forward stride with zero
// insertion, of destination-gradient pixel ClipRect origin. vkmps states
// it for pooling as: the gradient assumes the forward window of dy pixel w
// is centred at dx pixel ClipRect.X + F + strideX*w (likewise y), where
//
//	F = -(Offset.X*strideX + KernelOffsetX)
//
// and reads the forward source at the same pixel as dx. EncodeNew sets
// Offset = the forward clip origin (x, y, z) and KernelOffset = -(forward
// Offset), which gives exactly the forward's windows; the explicit Encode
// uses the properties as set.
//
// Channels and batch images: dy channels from SourceFeatureChannelOffset
// (at most SourceFeatureChannelMaxCount when > 0) go to dx channels from
// DestinationFeatureChannelOffset; dy batch image Offset.Z+i goes to dx
// batch image ClipRect.Z+i. The forward source is read at the channel and
// batch image the forward read for that dy plane. With a state holding
// argmax indices (RecordArgmax), a max window's winner is the recorded tap,
// counted from the window's first tap as the gradient places it; it equals
// the recomputed one whenever the gradient's windows are the forward's (as
// EncodeNew sets them). EdgeMode and Padding are
// not used: edge mode, zero pads and ExcludeEdges come from the state, and
// EncodeNew sizes its destination from the state.
type GradientKernel struct {
	Kernel
	KernelOffsetX, KernelOffsetY int
}

// PoolingGradient is what the four pooling gradient kernels have in common
// (MPSCNNPoolingGradient).
//
// dx[p] = sum over the forward windows w inside the forward clip that hold
// p of the contribution of w, added in float32 in ascending window order
// (row-major over dy), gathered per dx pixel without atomics: the same bits
// on every run. Contributions: Max and DilatedMax dy[w] when p is w's
// argmax (SPEC.md's tie rule; a window an outside tap won gives nothing);
// Average dy[w]/N(w) with the forward's N; L2Norm dy[w]*in[p]/out[w], 0
// where out[w] = 0. Pixels of the clip no window reaches get 0.
type PoolingGradient interface {
	// Encode records the gradient of the forward pass that made state:
	// sourceGradient is dy (the forward destination's shape), sourceImage
	// the forward source, destinationGradient dx (the forward source's
	// height and width). Properties are used as set.
	Encode(cb *vk.CommandBuffer, sourceGradient, sourceImage *Image, state *PoolingGradientState, destinationGradient *Image) error
	// EncodeNew configures the kernel from state, allocates dx with the
	// forward source's shape and encodes into it; dx values the forward
	// never read (other channels or batch images) are 0. The caller
	// closes it.
	EncodeNew(cb *vk.CommandBuffer, sourceGradient, sourceImage *Image, state *PoolingGradientState) (*Image, error)
	// Properties returns the kernel's properties to set.
	Properties() *GradientKernel
	// Kind and Geometry are those of the forward kernel it differentiates.
	Kind() PoolingKind
	Geometry() Geometry
	// SetTuning and Tuning set and return the kernel's work-shape
	// overrides (see Tuning).
	SetTuning(Tuning) error
	Tuning() Tuning
}

// poolingGradient is the state shared by the four gradient kernels.
type poolingGradient struct {
	GradientKernel
	kind   PoolingKind
	geom   Geometry
	shader *spirv.Shader
	pipes  map[gatherKey]*vk.Pipeline
	passes passes // first passes: argmax codes, L2-norm ratios
}

// gatherKey selects a gather pipeline: the argmax code width (0 for
// average and L2-norm), whether the images are float16, and the
// workgroup.
type gatherKey struct {
	bits       int
	f16        bool
	loop       bool // the loop builds (gatherLoop)
	cx         int8 // cells per invocation (CX)
	gv, gpar   int8 // vector stores: width and strip phase (gatherVector)
	pz         int8 // planes per invocation (gatherPlanes)
	pf         int8 // planes loaded ahead (Tuning.GatherAhead; 0: the shader's rule)
	lx, ly, lz int16
}

// gatherCells returns CX, the cells (stride-sized blocks of dx pixels) one
// gather invocation computes where it stores value by value: 4 at stride
// 1, where a window is read by up to KW pixels, else 1 (measured on an
// H200: strips of two stride-2 cells ran at half the speed of single
// cells); t.GatherCells overrides it.
func gatherCells(g Geometry, t Tuning) int {
	if t.GatherCells > 0 {
		return t.GatherCells
	}
	if g.StrideX == 1 {
		return 4
	}
	return 1
}

// gatherPlanes returns the planes one gather invocation computes, PZ in
// the shader, for a dispatch of items strips x rows x planes:
// t.GatherPlanes, or by default 4 over float16 images and 2 over float32,
// fewer where the dispatch would be left with under minPlaneItems
// invocations (fewerPlanes). Each invocation works out its windows once
// for all its planes. On an H100 (2026-11-27, bench/results/h100-2026-11-27-planes,
// run 2), against one plane: the average gradient 3x3 stride 2 at
// 112x112, float16 54.5 to 29.9 us, float32 54.6 to 48.9; the max
// gradient from recorded argmax there, float16 57.5 to 35.9, float32 57.9
// to 51.7; at 56x56 (2x2) float16 65.8 to 58.0, float32 96.2 to 98.1.
func gatherPlanes(t Tuning, f Format, items int) int {
	switch {
	case t.GatherPlanes > 0:
		return t.GatherPlanes
	case f == Float16:
		return fewerPlanes(4, items)
	}
	return fewerPlanes(2, items)
}

// gatherVectorCells returns CX for gathers of images of format f that
// store vectors, and whether it differs from gatherCells': at stride 2,
// unless t.GatherCells sets it, 2 (on an H100 two cells with vector
// stores beat one, with or without them, on every bench shape of stride
// 2), or 4 for float16 where each dx pixel lies in up to 3 windows along
// x (dilated 3x3 windows: the float16 max gradient from recorded argmax
// at 32x64x112x112 went from 55.6 to 49.6 us on an H100, 2026-11-27,
// bench/results/h100-2026-11-27-planes run 3; float32 and 2x2 windows
// were slower with 4).
func gatherVectorCells(g Geometry, t Tuning, f Format) (int, bool) {
	if t.GatherCells == 0 && !t.NoGatherVectorStores && g.StrideX == 2 {
		kx, _ := g.effective()
		if f == Float16 && (kx-1)/g.StrideX+1 >= 3 {
			return 4, true
		}
		return 2, true
	}
	return gatherCells(g, t), false
}

// gatherVector returns the width of the vectors the gather of cx cells
// stores dx rows in, and GPAR, the phase of its strips in their first
// cell (see glsl/pooling_grad_common.glsl), or 0, 0 to store value by
// value: unless t.NoGatherVectorStores, 8, 4 or 2 elements (8 over
// float16 images on a device with shaderFloat16, at stride 2 or where
// t.GatherVectorWidth asks for it; at most t.GatherVectorWidth where
// set; see Tuning.GatherVectorWidth), the widest that divides a strip's
// cx*SX pixels and the row width and base of every
// image in ims (dx, and the forward source the L2-norm gather reads
// alongside), and whose bytes divide the storage-buffer offset alignment,
// so that every part and band keeps them aligned; never for the loop
// builds.
func gatherVector(g Geometry, t Tuning, cx int, loop bool, lim vk.Limits, clipX int, baseX int64, ims ...*Image) (gv, gpar int) {
	if t.NoGatherVectorStores || loop {
		return 0, 0
	}
	w := cx * g.StrideX
	align := uint64(max(lim.MinStorageBufferOffsetAlignment, 4))
	widest := 4
	if g.StrideX == 2 {
		widest = 8
	}
	if t.GatherVectorWidth > 0 {
		widest = t.GatherVectorWidth
	}
next:
	for _, v := range []int{8, 4, 2} {
		if v > widest || w%v != 0 || v == 8 && !lim.Float16Arithmetic {
			continue
		}
		for _, im := range ims {
			if im.w%v != 0 || im.base%uint64(v) != 0 || align%uint64(v*im.format.Size()) != 0 || v == 8 && im.format != Float16 {
				continue next
			}
		}
		a0 := int64(clipX) - floorMod64(int64(clipX), int64(v))
		return v, int(floorMod64(a0-baseX, int64(g.StrideX)))
	}
	return 0, 0
}

// floorMod64 is a - b*floor(a/b) for b > 0.
func floorMod64(a, b int64) int64 { return a - b*floorDiv64(a, b) }

func newPoolingGradient(dev *vk.Device, kind PoolingKind, g Geometry) (poolingGradient, error) {
	p := poolingGradient{kind: kind, geom: g, pipes: map[gatherKey]*vk.Pipeline{}}
	p.Label = kind.String() + "Gradient"
	if dev == nil {
		return p, fmt.Errorf("%w: %s: nil device", ErrDevice, p.Label)
	}
	p.dev = dev
	if err := g.validate(p.Label, dev.Limits()); err != nil {
		return p, err
	}
	switch kind {
	case KindMax, KindDilatedMax:
		p.shader = spirv.PoolingMaxGrad
	case KindAverage:
		p.shader = spirv.PoolingAverageGrad
	case KindL2Norm:
		p.shader = spirv.PoolingL2normGrad
	}
	p.passes = newPasses(dev, kind, g)
	return p, nil
}

// Properties returns the kernel's properties.
func (p *poolingGradient) Properties() *GradientKernel { return &p.GradientKernel }

// Kind returns the family of the forward kernel.
func (p *poolingGradient) Kind() PoolingKind { return p.kind }

// Geometry returns the kernel size, stride and dilation.
func (p *poolingGradient) Geometry() Geometry { return p.geom }

// gather returns the gather pipeline of key k.
func (p *poolingGradient) gather(k gatherKey) (*vk.Pipeline, error) {
	if pl := p.pipes[k]; pl != nil {
		return pl, nil
	}
	spec := geometrySpec(p.geom, EdgeZero)
	spec["local_size_x"], spec["local_size_y"], spec["local_size_z"] = uint32(k.lx), uint32(k.ly), uint32(k.lz)
	spec["CX"] = uint32(k.cx)
	spec["AMBITS"] = uint32(k.bits)
	if k.gv > 0 {
		spec["GV"], spec["GPAR"] = uint32(k.gv), uint32(k.gpar)
	}
	if k.pz > 1 {
		spec["PZ"] = uint32(k.pz)
	}
	if k.pf > 0 {
		spec["GPF"] = uint32(k.pf)
	}
	name := ""
	switch {
	case k.loop:
		name = "loop"
	case k.gv == 8: // 16-byte stores of halves (float16 only)
		name = "oct"
	}
	sh, err := variant(p.shader, name, k.f16)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Label, err)
	}
	pl, err := pipeline(p.dev, sh, spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Label, err)
	}
	p.pipes[k] = pl
	return pl, nil
}

// gatherGrid returns the gather's items: the strips of CX cells (cells
// are stride-sized blocks of dx pixels aligned with the window grid) and
// the cell rows covering a dx clip at (clipX, clipY) of w x h pixels for
// windows based at base; with vector stores of gv elements, strips of
// CX*SX pixels from clipX rounded down to a multiple of gv.
func (p *poolingGradient) gatherGrid(cx, gv, clipX, clipY, w, h int, baseX, baseY int64) (strips, rows int) {
	g := p.geom
	cells := func(c, n int, base int64, s int) int {
		return int(floorDiv64(int64(c+n-1)-base, int64(s))-floorDiv64(int64(c)-base, int64(s))) + 1
	}
	rows = cells(clipY, h, baseY, g.StrideY)
	if gv > 0 {
		a0 := int64(clipX) - floorMod64(int64(clipX), int64(gv))
		sw := int64(cx * g.StrideX)
		return int((int64(clipX+w) - a0 + sw - 1) / sw), rows
	}
	return (cells(clipX, w, baseX, g.StrideX) + cx - 1) / cx, rows
}

// gatherItems returns the gather's grid items along x and y: gatherGrid's
// strips and cell rows, or for the loop builds the clip's pixels.
func (p *poolingGradient) gatherItems(loop bool, cx, gv, clipX, clipY, w, h int, baseX, baseY int64) (int, int) {
	if loop {
		return w, h
	}
	return p.gatherGrid(cx, gv, clipX, clipY, w, h, baseX, baseY)
}

// floorDiv64 is floor(a / b) for b > 0.
func floorDiv64(a, b int64) int64 {
	if a >= 0 {
		return a / b
	}
	return -((b - 1 - a) / b)
}

// checkState validates a gradient state against the kernel.
func (p *poolingGradient) checkState(st *PoolingGradientState) error {
	if st == nil {
		return fmt.Errorf("%w: %s: nil gradient state", ErrState, p.Label)
	}
	if st.closed.Load() {
		return fmt.Errorf("%w: %s: gradient state %v", ErrClosed, p.Label, st)
	}
	if st.dev != p.dev {
		return fmt.Errorf("%w: %s: gradient state %v is from another device", ErrDevice, p.Label, st)
	}
	if st.Kind != p.kind {
		return fmt.Errorf("%w: %s: gradient state from a %v forward kernel, this kernel differentiates %v", ErrState, p.Label, st.Kind, p.kind)
	}
	if st.Geometry != p.geom {
		g, h := st.Geometry, p.geom
		return fmt.Errorf("%w: %s: gradient state of a kernel %dx%d stride %dx%d dilation %dx%d; this kernel is %dx%d stride %dx%d dilation %dx%d",
			ErrState, p.Label, g.KernelWidth, g.KernelHeight, g.StrideX, g.StrideY, g.DilationX, g.DilationY,
			h.KernelWidth, h.KernelHeight, h.StrideX, h.StrideY, h.DilationX, h.DilationY)
	}
	return nil
}

// gradPush is the gradient shaders' push-constant block
// (pooling_grad_common.glsl).
type gradPush struct {
	W, H                       int32
	ClipX, ClipY, ClipW, ClipH int32
	WinBaseX, WinBaseY         int32
	WinLoX, WinLoY             int32
	WinHiX, WinHiY             int32
	RegX0, RegY0, RegX1, RegY1 int32
	DyBase, AuxBase, DxBase    uint32
	DyBatch, AuxBatch, DxBatch uint32
	DyPlane, AuxPlane, DxPlane uint32
	Channels, DyWidth          uint32
	Planes                     uint32 // planes of the dispatch (batches * channels)
}

// encode records the gradient of st from dy (and x) into dx with the
// kernel's properties as set. Checks run in a fixed order: command buffer,
// state, images and their sizes against the state, properties.
func (p *poolingGradient) encode(cb *vk.CommandBuffer, dy, x *Image, st *PoolingGradientState, dx *Image) error {
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, p.Label)
	}
	if err := p.checkState(st); err != nil {
		return err
	}
	for _, im := range []struct {
		role string
		im   *Image
	}{{"source gradient", dy}, {"source image", x}, {"destination gradient", dx}} {
		if err := p.checkImage(im.role, im.im); err != nil {
			return err
		}
	}
	if err := p.sameFormat("source gradient", dy, "source image", x); err != nil {
		return err
	}
	if err := p.sameFormat("source gradient", dy, "destination gradient", dx); err != nil {
		return err
	}
	if d := dy.Descriptor().Descriptor(); d != st.Destination {
		return fmt.Errorf("%w: %s: source gradient %s is not the size of the forward destination, %v", ErrShape, p.Label, dy, st.Destination)
	}
	if d := x.Descriptor().Descriptor(); d != st.Source {
		return fmt.Errorf("%w: %s: source image %s is not the size of the forward source, %v", ErrShape, p.Label, x, st.Source)
	}
	if dx.h != x.h || dx.w != x.w {
		return fmt.Errorf("%w: %s: destination gradient %s must be %dx%d, the forward source's height and width", ErrShape, p.Label, dx, x.h, x.w)
	}
	if overlaps(x, dx) {
		return fmt.Errorf("%w: %s: source image %s and destination gradient %s share storage", ErrAlias, p.Label, x, dx)
	}
	j, err := p.resolveRoles(dy, dx, "source gradient", "destination gradient")
	if err != nil {
		return err
	}
	// The dy planes read must be planes the forward wrote.
	if j.srcC0 < st.DestinationFeatureChannelOffset || j.srcC0+j.channels > st.DestinationFeatureChannelOffset+st.FeatureChannels {
		return fmt.Errorf("%w: %s: source gradient channels [%d, %d) are not all among those the forward wrote, [%d, %d)", ErrState, p.Label,
			j.srcC0, j.srcC0+j.channels, st.DestinationFeatureChannelOffset, st.DestinationFeatureChannelOffset+st.FeatureChannels)
	}
	if j.srcN0 < st.Clip.Z || j.srcN0+j.batches > st.Clip.Z+st.Clip.Depth {
		return fmt.Errorf("%w: %s: source gradient batch images [%d, %d) are not all among those the forward wrote, [%d, %d)", ErrState, p.Label,
			j.srcN0, j.srcN0+j.batches, st.Clip.Z, st.Clip.Z+st.Clip.Depth)
	}
	// Geometry in the dx frame, checked to fit the shaders' 32-bit ints.
	g := p.geom
	kx, ky := g.effective()
	baseX := int64(j.clipX) - (int64(j.offX)*int64(g.StrideX) + int64(p.KernelOffsetX)) - int64(kx/2)
	baseY := int64(j.clipY) - (int64(j.offY)*int64(g.StrideY) + int64(p.KernelOffsetY)) - int64(ky/2)
	const lim32 = math.MaxInt32 / 4
	if baseX < -lim32 || baseX > lim32 || baseY < -lim32 || baseY > lim32 {
		return fmt.Errorf("%w: %s: offset (%d, %d) and kernel offset (%d, %d) place the windows beyond 2^29 pixels", ErrGeometry, p.Label,
			j.offX, j.offY, p.KernelOffsetX, p.KernelOffsetY)
	}
	pc := gradPush{
		W: int32(x.w), H: int32(x.h),
		ClipX: int32(j.clipX), ClipY: int32(j.clipY), ClipW: int32(j.clipW), ClipH: int32(j.clipH),
		WinBaseX: int32(baseX), WinBaseY: int32(baseY),
		WinLoX: int32(st.Clip.X), WinLoY: int32(st.Clip.Y),
		WinHiX: int32(st.Clip.X + st.Clip.Width), WinHiY: int32(st.Clip.Y + st.Clip.Height),
		DyBatch: uint32(dy.cTotal * dy.h * dy.w), DxBatch: uint32(dx.cTotal * dx.h * dx.w),
		DyPlane: uint32(dy.h * dy.w), DxPlane: uint32(dx.h * dx.w), DyWidth: uint32(dy.w),
	}
	r := countRegion(st.EdgeMode, st.ZeroPad, st.ExcludeEdges, st.EdgePads, x.w, x.h)
	pc.RegX0, pc.RegY0, pc.RegX1, pc.RegY1 = r[0], r[1], r[2], r[3]
	// The forward plane (batch, channel) behind dy plane (j.srcN0, j.srcC0).
	fn, fc := j.srcN0-st.Clip.Z, j.srcC0-st.DestinationFeatureChannelOffset
	plan := gradPlan{dy: imageSpan(dy, j.srcN0, j.srcC0), x: imageSpan(x, st.Offset.Z+fn, st.SourceFeatureChannelOffset+fc),
		dx: imageSpan(dx, j.dstN0, j.dstC0), batches: j.batches, channels: j.channels}
	// The first pass's forward geometry: the windows of the forward clip,
	// placed where this gradient places them.
	first := poolPush{
		SrcW: int32(x.w), SrcH: int32(x.h),
		ClipX: int32(st.Clip.X), ClipY: int32(st.Clip.Y), ClipW: int32(st.Clip.Width), ClipH: int32(st.Clip.Height),
		OffX: int32(baseX) + int32(g.StrideX*st.Clip.X) + int32(kx/2), OffY: int32(baseY) + int32(g.StrideY*st.Clip.Y) + int32(ky/2),
		SrcBatch: uint32(x.cTotal * x.h * x.w), SrcPlane: uint32(x.h * x.w),
	}
	switch p.kind {
	case KindMax, KindDilatedMax:
		if st.argmax != nil {
			plan.aux, plan.bits = st.argmaxSpan(fn, fc), st.argmaxBits
			pc.AuxBatch, pc.AuxPlane = uint32(st.FeatureChannels*st.planeWords), uint32(st.planeWords)
			break
		}
		// First pass: the argmax codes of every window, from the source.
		plan.bits = argmaxBitsFor(g.KernelWidth * g.KernelHeight)
		words := argmaxPlaneWords(st.Clip.Width, st.Clip.Height, plan.bits)
		sc, err := st.scratchBuffer(uint64(j.batches*j.channels*words) * 4)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Label, err)
		}
		plan.scratch = span{buf: sc, esize: 4, plane: uint64(words), cTotal: j.channels, what: argmaxName{st}, h: st.Clip.Height, w: st.Clip.Width,
			row: uint64(words / st.Clip.Height)}
		pc.AuxBatch, pc.AuxPlane = uint32(j.channels*words), uint32(words)
		first.AmBatch, first.AmPlane = pc.AuxBatch, pc.AuxPlane
		plan.firstPass = passArgmaxOnly
	case KindL2Norm:
		// First pass: r[w] = dy[w]/out[w] in a scratch laid out as dy.
		plane := dy.h * dy.w
		sc, err := st.scratchBuffer(uint64(j.batches*j.channels*plane) * 4)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Label, err)
		}
		plan.scratch = span{buf: sc, esize: 4, plane: uint64(plane), cTotal: j.channels, what: argmaxName{st}, h: dy.h, w: dy.w, row: uint64(dy.w)}
		first.DstBatch, first.DstPlane, first.DstWidth = uint32(j.channels*plane), uint32(plane), uint32(dy.w)
		first.DyBatch, first.DyPlane = pc.DyBatch, pc.DyPlane
		pc.DyBatch = first.DstBatch // the gather reads r in place of dy
		pc.AuxBatch, pc.AuxPlane = uint32(x.cTotal*x.h*x.w), uint32(x.h*x.w)
		plan.firstPass = passRatio
	}
	lim := p.dev.Limits()
	var spanArr [maxSpans]span // an array, so encoding does not allocate
	spans := plan.spans(spanArr[:0])
	fits := planeFits(&lim, spans)
	tune := p.passes.tune
	cx := gatherCells(g, tune)
	loop := gatherLoop(g, cx)
	gv, gpar := 0, 0
	if fits { // (bands store value by value)
		ims := [2]*Image{dx, x}
		n := 1
		if p.kind == KindL2Norm {
			n = 2
		}
		// Vector stores, over more cells where they take more.
		if vcx, more := gatherVectorCells(g, tune, dx.format); more {
			if vloop := gatherLoop(g, vcx); !vloop {
				if gv, gpar = gatherVector(g, tune, vcx, vloop, lim, j.clipX, baseX, ims[:n]...); gv > 0 {
					cx, loop = vcx, vloop
				}
			}
		}
		if gv == 0 {
			gv, gpar = gatherVector(g, tune, cx, loop, lim, j.clipX, baseX, ims[:n]...)
		}
	}
	strips, rows := p.gatherItems(loop, cx, gv, j.clipX, j.clipY, j.clipW, j.clipH, baseX, baseY)
	pz := 1
	if fits && !loop {
		pz = gatherPlanes(tune, dy.format, strips*rows*j.batches*j.channels)
	}
	lx, ly, lz := localSizeFor(p.passes.tune.workgroupTarget(), lim, strips, rows, ceilDiv(j.batches*j.channels, pz))
	pf := 0 // planes loaded ahead: the average and L2-norm gathers only
	if p.kind == KindAverage || p.kind == KindL2Norm {
		pf = tune.GatherAhead
	}
	pl, err := p.gather(gatherKey{bits: plan.bits, f16: dy.format == Float16, loop: loop, cx: int8(cx), gv: int8(gv), gpar: int8(gpar),
		pz: int8(pz), pf: int8(pf), lx: int16(lx), ly: int16(ly), lz: int16(lz)})
	if err != nil {
		return err
	}
	var firstGroups [3]uint32
	var firstKey passKey
	if plan.scratch.buf != nil {
		// The ratio pass stores r laid out as dy (from element 0 of its
		// scratch); the argmax pass stores codes only.
		firstKey = p.passes.key(plan.firstPass, st.EdgeMode, x, passTarget{dstW: dy.w, clipX: st.Clip.X,
			w: st.Clip.Width, h: st.Clip.Height, z: j.batches * j.channels, noValues: plan.firstPass == passArgmaxOnly,
			firstSrcCol: int(first.OffX) - kx/2})
		if plan.firstPipe, err = p.passes.pipeline(firstKey); err != nil {
			return fmt.Errorf("%s: %w", p.Label, err)
		}
	}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	firstPush := unsafe.Slice((*byte)(unsafe.Pointer(&first)), unsafe.Sizeof(first))
	if !fits {
		// A plane over the storage-buffer range: bands of rows.
		b := gradBands{plan: plan, pc: pc, first: first, pl: pl, firstKey: firstKey,
			j: j, st: st, x: x, dy: dy, baseX: int(baseX), baseY: int(baseY), loop: loop, cx: cx, lx: lx, ly: ly, lz: lz}
		if err := p.encodeBands(cb, b); err != nil {
			return fmt.Errorf("%s: %w", p.Label, err)
		}
		return nil
	}
	err = forEachPart(&lim, spans, j.batches, j.channels, func(pt part) error {
		var b [3]vk.BufferRange
		z := pt.batches * pt.channels
		if plan.scratch.buf != nil {
			var err error
			if firstGroups, err = p.passes.groups(firstKey, st.Clip.Width, st.Clip.Height, z); err != nil {
				return err
			}
		}
		groups, err := grid3(&lim, strips, rows, ceilDiv(z, pz), lx, ly, lz)
		if err != nil {
			return err
		}
		pc.Channels, first.Channels = uint32(pt.channels), uint32(pt.channels)
		pc.Planes, first.Planes = uint32(z), uint32(z)
		switch {
		case plan.scratch.buf != nil && p.kind == KindL2Norm:
			// ratio pass: x, r, dy; then the gather reads r and x.
			first.SrcBase, first.DstBase, first.DyBase = pt.bases[plan.xi], pt.bases[plan.si], pt.bases[plan.dyi]
			b[0], b[1], b[2] = pt.ranges[plan.xi], pt.ranges[plan.si], pt.ranges[plan.dyi]
			if err := cb.Dispatch(plan.firstPipe, b[:], firstPush, firstGroups); err != nil {
				return err
			}
			pc.DyBase, pc.AuxBase = pt.bases[plan.si], pt.bases[plan.xi]
			b[0], b[1] = pt.ranges[plan.si], pt.ranges[plan.xi]
		case plan.scratch.buf != nil:
			// argmax pass: x, (scratch as the unwritten values), codes.
			first.SrcBase, first.AmBase = pt.bases[plan.xi], pt.bases[plan.si]
			b[0], b[1], b[2] = pt.ranges[plan.xi], pt.ranges[plan.si], pt.ranges[plan.si]
			if err := cb.Dispatch(plan.firstPipe, b[:], firstPush, firstGroups); err != nil {
				return err
			}
			pc.DyBase, pc.AuxBase = pt.bases[plan.dyi], pt.bases[plan.si]
			b[0], b[1] = pt.ranges[plan.dyi], pt.ranges[plan.si]
		case plan.bits > 0:
			pc.DyBase, pc.AuxBase = pt.bases[plan.dyi], pt.bases[plan.ai]
			b[0], b[1] = pt.ranges[plan.dyi], pt.ranges[plan.ai]
		default: // average: dy and dx only
			pc.DyBase = pt.bases[plan.dyi]
			b[0] = pt.ranges[plan.dyi]
		}
		pc.DxBase = pt.bases[plan.dxi]
		n := 3
		if p.kind == KindAverage {
			n = 2
		}
		b[n-1] = pt.ranges[plan.dxi]
		return cb.Dispatch(pl, b[:n], push, groups)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", p.Label, err)
	}
	return nil
}

// gradPlan is the buffers a gradient encode splits into parts together.
type gradPlan struct {
	dy, x, dx            span
	aux                  span // a state's argmax codes (bits > 0, no scratch)
	scratch              span // the first pass's output, when there is one (buf != nil)
	bits                 int
	batches, channels    int
	firstPass            passKind
	firstPipe            *vk.Pipeline
	dyi, xi, dxi, ai, si int // positions in the planned spans
}

// spans lists the plan's buffers (into buf) and records their positions.
func (g *gradPlan) spans(buf []span) []span {
	add := func(s span) int { buf = append(buf, s); return len(buf) - 1 }
	g.dyi = add(g.dy)
	switch {
	case g.scratch.buf != nil:
		g.xi = add(g.x)
		g.si = add(g.scratch)
	case g.bits > 0:
		g.ai = add(g.aux)
	}
	g.dxi = add(g.dx)
	return buf
}

// encodeNew configures the kernel from st (MPS transfers the forward
// properties) and encodes into a new image of the forward source's shape.
// Offset and KernelOffset stay set afterwards; ClipRect and the channel
// properties are restored.
func (p *poolingGradient) encodeNew(cb *vk.CommandBuffer, dy, x *Image, st *PoolingGradientState) (*Image, error) {
	if cb == nil {
		return nil, fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, p.Label)
	}
	if err := p.checkState(st); err != nil {
		return nil, err
	}
	d := st.Source
	format := Float32 // dx has dy's format (a nil dy fails in encode)
	if dy != nil {
		format = dy.format
	}
	dx, err := p.allocate(ImageDescriptor{N: d.N, C: d.C, H: d.H, W: d.W, Format: format, Label: p.Label + " destination gradient"})
	if err != nil {
		return nil, err
	}
	p.Offset = Offset{X: st.Clip.X, Y: st.Clip.Y, Z: st.Clip.Z}
	p.KernelOffsetX, p.KernelOffsetY = -st.Offset.X, -st.Offset.Y
	saved := p.Kernel
	p.ClipRect = Region{Z: st.Offset.Z, Depth: st.Clip.Depth}
	p.SourceFeatureChannelOffset = st.DestinationFeatureChannelOffset
	p.SourceFeatureChannelMaxCount = st.FeatureChannels
	p.DestinationFeatureChannelOffset = st.SourceFeatureChannelOffset
	if st.FeatureChannels != d.C || st.Clip.Depth != d.N {
		err = Fill(cb, dx, 0) // planes the forward did not read
	}
	if err == nil {
		err = p.encode(cb, dy, x, st, dx)
	}
	p.ClipRect = saved.ClipRect
	p.SourceFeatureChannelOffset = saved.SourceFeatureChannelOffset
	p.SourceFeatureChannelMaxCount = saved.SourceFeatureChannelMaxCount
	p.DestinationFeatureChannelOffset = saved.DestinationFeatureChannelOffset
	if err != nil {
		dx.Close()
		return nil, err
	}
	return dx, nil
}

// PoolingMaxGradient is the gradient of PoolingMax (MPSCNNPoolingMaxGradient):
// dx[p] = sum of dy[w] over the windows w whose maximum is p, the first
// maximum in row-major tap order (a NaN beats every number, the first NaN
// wins). Under EdgeZero a window whose maximum is an outside tap (reading
// 0) passes its gradient to no pixel. The argmax is recomputed from the
// source image, or read from the state when the forward recorded it
// (RecordArgmax); both give the same bits.
type PoolingMaxGradient struct{ poolingGradient }

// NewPoolingMaxGradient makes the gradient of a max pooling kernel (MPS
// initWithDevice:kernelWidth:kernelHeight:strideInPixelsX:strideInPixelsY:).
func NewPoolingMaxGradient(dev *vk.Device, kernelWidth, kernelHeight, strideX, strideY int) (*PoolingMaxGradient, error) {
	p, err := newPoolingGradient(dev, KindMax, Geometry{kernelWidth, kernelHeight, strideX, strideY, 1, 1})
	if err != nil {
		return nil, err
	}
	return &PoolingMaxGradient{p}, nil
}

// Encode records the gradient into destinationGradient (PoolingGradient).
func (k *PoolingMaxGradient) Encode(cb *vk.CommandBuffer, sourceGradient, sourceImage *Image, state *PoolingGradientState, destinationGradient *Image) error {
	return k.encode(cb, sourceGradient, sourceImage, state, destinationGradient)
}

// EncodeNew records the gradient into a new image (PoolingGradient).
func (k *PoolingMaxGradient) EncodeNew(cb *vk.CommandBuffer, sourceGradient, sourceImage *Image, state *PoolingGradientState) (*Image, error) {
	return k.encodeNew(cb, sourceGradient, sourceImage, state)
}

// DilatedPoolingMaxGradient is the gradient of DilatedPoolingMax
// (MPSCNNDilatedPoolingMaxGradient); see PoolingMaxGradient.
type DilatedPoolingMaxGradient struct{ poolingGradient }

// NewDilatedPoolingMaxGradient makes the gradient of a dilated max pooling
// kernel (MPS initWithDevice:kernelWidth:kernelHeight:dilationRateX:
// dilationRateY:strideInPixelsX:strideInPixelsY:).
func NewDilatedPoolingMaxGradient(dev *vk.Device, kernelWidth, kernelHeight, dilationX, dilationY, strideX, strideY int) (*DilatedPoolingMaxGradient, error) {
	p, err := newPoolingGradient(dev, KindDilatedMax, Geometry{kernelWidth, kernelHeight, strideX, strideY, dilationX, dilationY})
	if err != nil {
		return nil, err
	}
	return &DilatedPoolingMaxGradient{p}, nil
}

// Encode records the gradient into destinationGradient (PoolingGradient).
func (k *DilatedPoolingMaxGradient) Encode(cb *vk.CommandBuffer, sourceGradient, sourceImage *Image, state *PoolingGradientState, destinationGradient *Image) error {
	return k.encode(cb, sourceGradient, sourceImage, state, destinationGradient)
}

// EncodeNew records the gradient into a new image (PoolingGradient).
func (k *DilatedPoolingMaxGradient) EncodeNew(cb *vk.CommandBuffer, sourceGradient, sourceImage *Image, state *PoolingGradientState) (*Image, error) {
	return k.encodeNew(cb, sourceGradient, sourceImage, state)
}

// PoolingAverageGradient is the gradient of PoolingAverage
// (MPSCNNPoolingAverageGradient): dx[p] = sum over the windows w holding p
// of dy[w] / N(w), N exactly as the forward counted it (edge mode, zero
// pads and ExcludeEdges from the state). Only the source image's size is
// used. Float32 sums: within ref.SumTolerance of the float64 reference.
type PoolingAverageGradient struct{ poolingGradient }

// NewPoolingAverageGradient makes the gradient of an average pooling kernel.
func NewPoolingAverageGradient(dev *vk.Device, kernelWidth, kernelHeight, strideX, strideY int) (*PoolingAverageGradient, error) {
	p, err := newPoolingGradient(dev, KindAverage, Geometry{kernelWidth, kernelHeight, strideX, strideY, 1, 1})
	if err != nil {
		return nil, err
	}
	return &PoolingAverageGradient{p}, nil
}

// Encode records the gradient into destinationGradient (PoolingGradient).
func (k *PoolingAverageGradient) Encode(cb *vk.CommandBuffer, sourceGradient, sourceImage *Image, state *PoolingGradientState, destinationGradient *Image) error {
	return k.encode(cb, sourceGradient, sourceImage, state, destinationGradient)
}

// EncodeNew records the gradient into a new image (PoolingGradient).
func (k *PoolingAverageGradient) EncodeNew(cb *vk.CommandBuffer, sourceGradient, sourceImage *Image, state *PoolingGradientState) (*Image, error) {
	return k.encodeNew(cb, sourceGradient, sourceImage, state)
}

// PoolingL2NormGradient is the gradient of PoolingL2Norm
// (MPSCNNPoolingL2NormGradient): dx[p] = sum over the windows w holding p
// of dy[w] * in[p] / out[w], out[w] recomputed from the source image as the
// forward computes it; a window with out[w] = 0 contributes 0 (never NaN).
// Float32 sums: within ref.SumTolerance of the float64 reference.
type PoolingL2NormGradient struct{ poolingGradient }

// NewPoolingL2NormGradient makes the gradient of an L2-norm pooling kernel.
func NewPoolingL2NormGradient(dev *vk.Device, kernelWidth, kernelHeight, strideX, strideY int) (*PoolingL2NormGradient, error) {
	p, err := newPoolingGradient(dev, KindL2Norm, Geometry{kernelWidth, kernelHeight, strideX, strideY, 1, 1})
	if err != nil {
		return nil, err
	}
	return &PoolingL2NormGradient{p}, nil
}

// Encode records the gradient into destinationGradient (PoolingGradient).
func (k *PoolingL2NormGradient) Encode(cb *vk.CommandBuffer, sourceGradient, sourceImage *Image, state *PoolingGradientState, destinationGradient *Image) error {
	return k.encode(cb, sourceGradient, sourceImage, state, destinationGradient)
}

// EncodeNew records the gradient into a new image (PoolingGradient).
func (k *PoolingL2NormGradient) EncodeNew(cb *vk.CommandBuffer, sourceGradient, sourceImage *Image, state *PoolingGradientState) (*Image, error) {
	return k.encodeNew(cb, sourceGradient, sourceImage, state)
}

// NewPoolingGradient makes the gradient kernel of kind with geometry g,
// the counterpart of NewPooling (KindMax with a dilation other than 1
// becomes KindDilatedMax, as there).
func NewPoolingGradient(dev *vk.Device, kind PoolingKind, g Geometry) (PoolingGradient, error) {
	k, err := effectiveKind(kind, g, "Gradient")
	if err != nil {
		return nil, err
	}
	switch k {
	case KindMax:
		return NewPoolingMaxGradient(dev, g.KernelWidth, g.KernelHeight, g.StrideX, g.StrideY)
	case KindDilatedMax:
		return NewDilatedPoolingMaxGradient(dev, g.KernelWidth, g.KernelHeight, g.DilationX, g.DilationY, g.StrideX, g.StrideY)
	case KindAverage:
		return NewPoolingAverageGradient(dev, g.KernelWidth, g.KernelHeight, g.StrideX, g.StrideY)
	}
	return NewPoolingL2NormGradient(dev, g.KernelWidth, g.KernelHeight, g.StrideX, g.StrideY)
}
