package ops

import (
	"fmt"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// Shader variants and work grids.
//
// Every shader below has an "f16" build (spirv's Variant) for float16
// images: the same code with 16-bit loads and stores (glsl/elem.glsl),
// chosen by the images' format; pair and quad loads are then f16vec2 and
// f16vec4 (4 and 8 bytes).
//
// The forward shaders (and the gradients' first passes, which have their
// shape) come in two families:
//
//   - direct (glsl/pooling_common.glsl): one invocation per strip of OX
//     destination pixels of a row (stripWidth), on a (strip, row, plane)
//     grid; per window row it loads the source columns its windows span
//     once, as aligned quads or pairs where the source's layout allows
//     (loadWidth), and stores the strip as vectors where the
//     destination's layout allows (vectorStore);
//   - tiled (glsl/pooling_tiled.glsl): for windows of more than
//     tiledTaps taps, where each source value is read many times, a
//     workgroup stages the source region of a tile of destination pixels in
//     shared memory once. Its smallest tile must fit the device's shared
//     memory; where even the smallest tile does not (large windows at
//     large strides), the "global" builds of the same shaders read every
//     tap from the source directly (globalTaps), so any window runs on
//     any device.
//
// The gradient gathers (glsl/pooling_grad_common.glsl) work in cells of
// stride-x x stride-y dx pixels aligned with the window grid, CX cells of a
// row per invocation (gatherCells; gatherVectorCells where they store
// vectors), on a (cell strip, cell row, plane) grid, fully unrolled (by
// default, where the rows allow, strips of CX*SX pixels from multiples of
// the vector width, stored as vectors: gatherVector); where the unrolled cell would be too large
// (gatherLoop: large windows or strides), their "loop" builds take one dx
// pixel per invocation and loop over its windows in the same order.
//
// Pooling is bound by memory latency more than by arithmetic: an
// invocation that issues all its loads at once and computes several
// outputs keeps more bytes in flight than many invocations of one output
// each, which would run in more waves. Workgroups are about 256
// invocations shaped to the grid (localSize), planes stacked along z when
// rows are short.

// tiledTaps is the window size above which the tiled shaders are used.
const tiledTaps = 64

// tiled reports whether g's forward passes use the tiled shaders.
func tiled(g Geometry) bool { return g.KernelWidth*g.KernelHeight > tiledTaps }

// tileBudget is the shared memory a tile aims to use: small enough for
// several workgroups per multiprocessor.
const tileBudget = 16 << 10

// tileWidth is the tiled shaders' tile width: a multiple of 4, so argmax
// words (up to four codes each) never straddle two tiles.
const tileWidth = 32

// forwardShared returns the bytes of shared memory a tile of tw x th
// destination pixels uses (the staged source region, plus a code per pixel
// for the argmax shader).
func forwardShared(g Geometry, tw, th int) int {
	kx, ky := g.effective()
	iw := (tw-1)*g.StrideX + kx
	cp := (iw + g.StrideX - 1) / g.StrideX
	ih := (th-1)*g.StrideY + ky
	return 4 * (ih*cp*g.StrideX + tw*th)
}

// forwardTile returns the tile of the tiled shaders for g: tileWidth wide,
// up to 16 rows within tileBudget, at least one row.
func forwardTile(g Geometry) (tw, th int) {
	th = 16
	for th > 1 && forwardShared(g, tileWidth, th) > tileBudget {
		th /= 2
	}
	return tileWidth, th
}

// globalTaps reports whether g's forward passes read their taps from the
// source directly (the tiled shaders' "global" builds): g needs the tiled
// shaders and their smallest tile does not fit the device's shared memory.
func globalTaps(g Geometry, lim vk.Limits) bool {
	return tiled(g) && forwardShared(g, tileWidth, 1) > int(lim.MaxComputeSharedMemorySize)
}

// globalTile is the tile of the global builds: no shared memory but the
// argmax shader's codes, 4 bytes a pixel.
const globalTileHeight = 8

// MaxWindowExtent is the largest square window extent, (k-1)*d+1 pixels a
// side, a device with limits lim can pool: 32768, the geometry's limit,
// on every device. (Windows of more than 64 taps stage a tile in shared
// memory; those whose tile does not fit read their taps directly.)
func MaxWindowExtent(lim vk.Limits) int { return 1 << 15 }

// gatherLoop reports whether g's gradient gathers use the loop builds:
// when the unrolled cell's body (window rows x window columns of a strip x
// cells x the stride's pixels) or its accumulators would be too large.
func gatherLoop(g Geometry, cx int) bool {
	kx, ky := g.effective()
	ax, ay := (kx-1)/g.StrideX+1, (ky-1)/g.StrideY+1
	acc := g.StrideX * g.StrideY * cx
	return acc > 64 || ay*(ax+cx-1)*acc > 512
}

// variant returns the build of sh for float16 images or not, and for
// name "global", "loop" or "packed" its build of that name (with f16, the
// name's float16 build: "packedf16").
func variant(sh *spirv.Shader, name string, f16 bool) (*spirv.Shader, error) {
	if name == "" {
		return build(sh, f16)
	}
	if f16 {
		name += "f16"
	}
	if v := sh.Variant(name); v != nil {
		return v, nil
	}
	return nil, fmt.Errorf("%w: shader %s has no %q build", ErrFormat, sh.Name, name)
}

// workgroupTarget is the invocations a direct or gather workgroup aims at.
const workgroupTarget = 256

// pow2ceil returns the smallest power of two >= n (1 for n <= 1).
func pow2ceil(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// localSize returns the workgroup of a direct pass or gather over a grid of
// w x h items of z planes: about workgroupTarget invocations within the
// device's limits, x at most 32 wide, rows then planes filling the rest,
// so that short rows and small planes still make full workgroups.
func localSize(lim vk.Limits, w, h, z int) (lx, ly, lz int) {
	return localSizeFor(workgroupTarget, lim, w, h, z)
}

// localSizeFor is localSize aiming at target invocations.
func localSizeFor(target int, lim vk.Limits, w, h, z int) (lx, ly, lz int) {
	total := min(target, int(lim.MaxComputeWorkGroupInvocations))
	lx = min(pow2ceil(w), 32, total, int(lim.MaxComputeWorkGroupSize[0]))
	ly = min(pow2ceil(h), total/lx, int(lim.MaxComputeWorkGroupSize[1]))
	lz = max(1, min(pow2ceil(z), total/(lx*ly), int(lim.MaxComputeWorkGroupSize[2]), 64))
	return lx, ly, lz
}

// localSizeExact is localSize with x and y the grid's own w and h where
// they fit (14 x 14 for a grid of 14 x 14, not 16 x 16), and planes
// stacked along z up to workgroupTarget invocations: the depthwise
// forwards' under ConvolutionTuning.DepthwiseExactGroups. Not their
// default: on an H200 (run 6 of bench/results/h200-2026-11-28-s3) it
// took float16 32x256x56x56 3x3 forwards from 47.5 to 46.8 us and the
// 7x7 layer's from 9.5 to 9.1, but the float32 data gradient at 56x56
// from 58.1 to 63.8.
func localSizeExact(lim vk.Limits, w, h, z int) (lx, ly, lz int) {
	total := min(workgroupTarget, int(lim.MaxComputeWorkGroupInvocations))
	lx = max(1, min(w, 32, total, int(lim.MaxComputeWorkGroupSize[0])))
	ly = max(1, min(h, total/lx, int(lim.MaxComputeWorkGroupSize[1])))
	lz = max(1, min(z, total/(lx*ly), int(lim.MaxComputeWorkGroupSize[2]), 64))
	return lx, ly, lz
}

// maxSeg bounds the source columns one strip's windows span, SEG in the
// shader, so its row of values stays in registers.
const maxSeg = 40

// stripWidth returns OX, the destination pixels per invocation of a
// direct pass: 4 (the argmax passes always, whose 8-bit codes then fill a
// word per invocation), fewer where a wide stride would make the strip's
// source span too long; t.StripWidth where it fits.
func stripWidth(g Geometry, pass passKind, t Tuning) int {
	kx, _ := g.effective()
	fits := func(ox int) bool { return (ox-1)*g.StrideX+kx <= maxSeg }
	if pass == passArgmax || pass == passArgmaxOnly {
		if t.StripWidth == 8 && fits(8) {
			return 8
		}
		return 4
	}
	switch {
	case t.StripWidth > 0 && fits(t.StripWidth):
		return t.StripWidth
	case fits(4):
		return 4
	case fits(2):
		return 2
	}
	return 1
}

// argmaxTwoPhase reports whether the direct argmax pass finds each
// window's maximum first and then the first tap equal to it, rather than
// going tap by tap with selects: by default it does. On an H100
// (2026-11-27, bench/pool_argmax_sweep.sh: vkmps bench under
// VKMPS_TUNE=argmax=3 and 4 side by side) the fast two-phase pass was
// faster than the fast tap-by-tap one on every bench shape and type, the
// argmax-recording forwards and the gradients that recompute the argmax
// alike (3x3 stride 2: 55 against 76 us; dilated 2x2 at stride 2: 82
// against 85). t.Argmax overrides the choice.
func argmaxTwoPhase(t Tuning) bool {
	return t.Argmax != ArgmaxTapByTap && t.Argmax != ArgmaxFastTapByTap
}

// argmaxFast reports whether the direct argmax pass tries the fast pass
// first (ArgmaxFastTapByTap, ArgmaxFastTwoPhase; the default), falling
// back to the full pass of the same kind where it does not apply. On an
// H100 (2026-11-27, the run of argmaxTwoPhase) it took the recording
// forward of max 3x3 stride 2 from 78 to 55 us and of max 3x3 stride 1
// at 28x28 from 33 to 22, and never lost.
func argmaxFast(t Tuning) bool {
	return t.Argmax == 0 || t.Argmax == ArgmaxFastTapByTap || t.Argmax == ArgmaxFastTwoPhase
}

// loadWidth returns the widest aligned load (4, 2 or 1 elements; 8 for
// float16 images only with Tuning.LoadWidth 8: on an H200 16-byte loads of
// halves sped the 3x3 stride-2 shapes up by 2-3% and slowed the 2x2 ones
// by 18%) a strip of ox windows of g can use over src: the source rows
// and planes
// must start on a multiple of it, and so must every strip's first column
// relative to the first strip's (ox*stride).
func loadWidth(g Geometry, ox int, src *Image, t Tuning) int {
	for _, vw := range []int{8, 4, 2} {
		if (t.LoadWidth > 0 && vw > t.LoadWidth) || (vw == 8 && (src.format != Float16 || t.LoadWidth != 8)) {
			continue
		}
		if src.w%vw == 0 && src.base%uint64(vw) == 0 && (ox*g.StrideX)%vw == 0 {
			return vw
		}
	}
	return 1
}

// vectorStore returns the width of the vectors strips of ox results are
// stored in, or 0 (value by value): ox itself for 2 and 4, 4 (two quads)
// for 8, where the destination rows, planes, clip origin and clip width
// are multiples of it; 0 with t.NoVectorStores. (A strip of 8 in a clip
// of a multiple of 4 has 4 or 8 pixels in it: the second quad is stored
// only when it is inside.)
func vectorStore(t Tuning, ox, dstW int, dstBase uint64, clipX, clipW int) int {
	v := ox
	if ox == 8 {
		v = 4
	}
	if t.NoVectorStores || (v != 2 && v != 4) || dstW%v != 0 || dstBase%uint64(v) != 0 || clipX%v != 0 || clipW%v != 0 {
		return 0
	}
	return v
}

// grid3 returns the workgroups covering w x h items of z planes with
// workgroups of lx x ly x lz; ErrDeviceLimit past the device's counts.
func grid3(lim *vk.Limits, w, h, z, lx, ly, lz int) ([3]uint32, error) {
	g := [3]uint32{uint32((w + lx - 1) / lx), uint32((h + ly - 1) / ly), uint32((z + lz - 1) / lz)}
	for axis := range g {
		if g[axis] > lim.MaxComputeWorkGroupCount[axis] {
			return g, fmt.Errorf("%w: %v workgroups exceed the device's %v", ErrDeviceLimit, g, lim.MaxComputeWorkGroupCount)
		}
	}
	return g, nil
}

// tileGroups returns the workgroup grid for tiles tiles of each of z
// planes: x first, then y when x would exceed the device's limit.
func tileGroups(lim *vk.Limits, tiles, z int) [3]uint32 {
	maxX := int(lim.MaxComputeWorkGroupCount[0])
	if tiles <= maxX {
		return [3]uint32{uint32(tiles), 1, uint32(z)}
	}
	y := (tiles + maxX - 1) / maxX
	x := (tiles + y - 1) / y
	return [3]uint32{uint32(x), uint32(y), uint32(z)}
}

// tilesOf returns the tiles of tw x th covering a w x h region.
func tilesOf(w, h, tw, th int) int { return ((w + tw - 1) / tw) * ((h + th - 1) / th) }

// passKind is what a forward-shaped pass computes.
type passKind int

const (
	passValues     passKind = iota // the forward kernel's values
	passArgmax                     // max values and argmax codes (RecordArgmax)
	passArgmaxOnly                 // argmax codes only (the max gradient's first pass)
	passRatio                      // dy/out per window (the L2-norm gradient's first pass)
)

// passKey selects a forward-shaped pipeline.
type passKey struct {
	pass       passKind
	edge       EdgeMode
	vw, par    int8 // load width and a strip's first column mod vw
	vstore     int8 // vector store width (vectorStore), 0 for none
	f16        bool // float16 images: the shader's "f16" variant
	pz         int8 // planes per invocation (stripPlanes)
	packed     bool // the "packedf16" build (halfArithmetic)
	oy         int8 // destination rows per invocation (stripRows)
	lx, ly, lz int16
}

// passes caches the forward-shaped pipelines of one kernel geometry under
// one tuning.
type passes struct {
	dev   *vk.Device
	kind  PoolingKind
	geom  Geometry
	tune  Tuning
	pipes map[passKey]*vk.Pipeline
	// global: the tiled shaders' global builds (globalTaps).
	global bool
}

func newPasses(dev *vk.Device, kind PoolingKind, g Geometry) passes {
	return passes{dev: dev, kind: kind, geom: g, pipes: map[passKey]*vk.Pipeline{}, global: globalTaps(g, dev.Limits())}
}

// tile returns the tile of the tiled passes: forwardTile's, or 32 x 8
// pixels for the global builds.
func (ps *passes) tile() (tw, th int) {
	if ps.global {
		return tileWidth, globalTileHeight
	}
	return forwardTile(ps.geom)
}

func (ps *passes) shader(pass passKind) *spirv.Shader {
	t := tiled(ps.geom)
	pick := func(direct, tiledSh *spirv.Shader) *spirv.Shader {
		if t {
			return tiledSh
		}
		return direct
	}
	switch {
	case pass == passArgmax || pass == passArgmaxOnly:
		return pick(spirv.PoolingMaxArgmax, spirv.PoolingMaxArgmaxTiled)
	case pass == passRatio:
		return pick(spirv.PoolingL2normRatio, spirv.PoolingL2normRatioTiled)
	case ps.kind == KindAverage:
		return pick(spirv.PoolingAverage, spirv.PoolingAverageTiled)
	case ps.kind == KindL2Norm:
		return pick(spirv.PoolingL2norm, spirv.PoolingL2normTiled)
	}
	return pick(spirv.PoolingMax, spirv.PoolingMaxTiled)
}

// passTarget is where a pass stores its values: the destination's row
// width and element base, and the clip it writes (clipX its first column),
// w x h pixels of z planes.
type passTarget struct {
	dstW        int
	dstBase     uint64
	clipX       int
	w, h, z     int
	noValues    bool // the pass writes no values (argmax codes only)
	firstSrcCol int  // source column of the first tap of clip pixel 0
}

// key returns the pipeline key of a pass over src storing into t.
func (ps *passes) key(pass passKind, edge EdgeMode, src *Image, t passTarget) passKey {
	k := passKey{pass: pass, edge: edge, f16: src.format == Float16, vw: 1, oy: 1}
	if tiled(ps.geom) {
		return k
	}
	ox := stripWidth(ps.geom, pass, ps.tune)
	vw := loadWidth(ps.geom, ox, src, ps.tune)
	k.vw, k.par = int8(vw), int8(((t.firstSrcCol%vw)+vw)%vw)
	if !t.noValues {
		k.vstore = int8(vectorStore(ps.tune, ox, t.dstW, t.dstBase, t.clipX, t.w))
	}
	pz := stripPlanes(ps.tune, pass, src.format, (t.w+ox-1)/ox*t.h*t.z)
	k.pz = int8(pz)
	k.packed = ps.halfArithmetic(pass, src.format, vw)
	k.oy = int8(ps.stripRows(pass, src.format, k.packed, k.vstore > 0 || (t.w+ox-1)/ox >= wideRowStrips, (t.w+ox-1)/ox*t.h*t.z))
	target := ps.tune.workgroupTarget()
	if k.packed && pass != passValues && ps.tune.Workgroup == 0 {
		target = argmaxHalfWorkgroup
	}
	lx, ly, lz := localSizeFor(target, ps.dev.Limits(), (t.w+ox-1)/ox, ceilDiv(t.h, int(k.oy)), ceilDiv(t.z, pz))
	k.lx, k.ly, k.lz = int16(lx), int16(ly), int16(lz)
	return k
}

// argmaxHalfWorkgroup is the invocations a workgroup of the argmax
// passes on halves (halfArithmetic) aims at, unless a Tuning sets
// Workgroup: on an H200 (bench/results/h200-2026-11-29-s9, run 1, every
// pass under wg=128 against the default 256) the float16 max forward
// recording the argmax at 112x112 (3x3, stride 2) took 30.5 µs against
// 33.5, the gradient recomputing it 64.7 against 66.0; at 56x56 (2x2)
// both the same, at 28x28 (3x3, stride 1) 1% slower.
const argmaxHalfWorkgroup = 128

// minPlaneItems is the work items (strips or gather strips, times rows and
// planes) a dispatch keeps at least when its invocations take several
// planes: about what fills a large GPU (an H100 holds 270,336
// invocations at once). On an H100 ResNet-18's global average pool
// gradient, 16384 planes of one 7x7 strip, took 48 us in float16 over 4
// planes per invocation against 24 over one (2026-11-27,
// bench/results/h100-2026-11-27-planes run 4).
const minPlaneItems = 1 << 17

// fewerPlanes returns pz halved until a dispatch of items work items (at
// one plane, or row, per invocation) keeps minPlaneItems invocations, or
// 1.
func fewerPlanes(pz, items int) int {
	for pz > 1 && items/pz < minPlaneItems {
		pz /= 2
	}
	return pz
}

// halfArithmetic reports whether a direct pass over images of format f,
// loaded vw values at a time, takes the "packedf16" build, whose fast pass
// computes on halves (Tuning.NoHalfArithmetic): for float16 images on
// devices with shaderFloat16, in the max and dilated-max forwards' value
// and argmax passes (which have a fast pass), where the strips load at
// least pairs. There the window rows' maxima are taken on pairs of
// neighbouring columns (f16vec2), then each window's maximum over its
// columns: a max of halves is exact, so the results are the bits of the
// float32 arithmetic. The same holds for the argmax passes' fast
// two-phase pass (the default, argmaxFast and argmaxTwoPhase), which
// takes each column's first row holding its maximum along with it
// (pooling_max_argmax.comp's halfPass). With dilation along x some of
// the columns reduced are no window's (dilation 2 at stride 2: every odd
// one), and still it gains.
//
// On an H200 (bench/results/h200-2026-11-29-s7, run 6) the float16 max
// value pass at 112x112 (3x3, stride 2) took 28.8 µs against 32.3, at
// 56x56 (2x2) 42.7 against 42.9; then 26.3 and 38.8 over 4 rows an
// invocation (stripRows). The argmax passes on halves
// (bench/results/h200-2026-11-29-s9, runs 1 and 3, in workgroups of
// argmaxHalfWorkgroup), float16 max forward recording the argmax and the
// gradient recomputing it: 44.2 -> 30.5 and 77.3 -> 65.2 µs at 112x112,
// 51.8 -> 46.4 and 96.0 -> 89.1 at 56x56. Dilated max (3x3, dilation 2;
// run 4 there; run 6 of s7, on one row an invocation, had found the
// value pass slower on halves): forward 46.3 -> 37.9, recording forward
// 42.0 -> 34.3, gradient 87.3 -> 78.0 at 112x112; 74.0 -> 74.3, 55.6 ->
// 53.2 and 105.5 -> 101.4 at 56x56; 25.7 -> 23.3, 23.7 -> 18.6 and
// 44.9 -> 39.0 at 28x28 (3x3, stride 1).
func (ps *passes) halfArithmetic(pass passKind, f Format, vw int) bool {
	if f != Float16 || !ps.dev.Limits().Float16Arithmetic || ps.tune.NoHalfArithmetic || vw < 2 || !ps.kind.IsMax() {
		return false
	}
	switch pass {
	case passValues:
		return !ps.tune.NoFastMax
	case passArgmax, passArgmaxOnly:
		return argmaxFast(ps.tune) && argmaxTwoPhase(ps.tune)
	}
	return false
}

// stripRows returns the destination rows one invocation of a direct pass
// over images of format f computes (OY in the shader), for a dispatch of
// items strips x rows x planes (wide: its strips are stored as vectors,
// or its rows hold at least wideRowStrips strips): the tuning's
// StripRows, or by default 4 (fewer where the dispatch would be left
// with under minPlaneItems invocations, fewerPlanes) in the max
// forwards' pass on halves (packed) over wide rows, and in the float16
// average forward where the windows of neighbouring rows overlap (a
// source row the invocation reads again comes from its multiprocessor's
// cache), and 1 elsewhere.
//
// Over narrow rows that are no multiple of the strip (their values
// stored one by one) the max pass on halves took longer over 4 rows than
// over 1 on an H200 (2026-11-29, bench/results/h200-2026-11-29-s10, run
// 7, and -s11, run 4), µs on 4 and 1 rows: dilated max 64x256x56x56 (2x2,
// dilation 2, stride 2: 27 wide, 7 strips) 60.2 and 45.4, 8x512x28x28
// (3x3, dilation 2: 26 wide) 17.3 and 14.5, max 64x256x58x58 (2x2: 29
// wide, 8 strips) 69.5 and 59.9. Over wider such rows 4 rows won:
// dilated max at 112x112 (3x3, dilation 2, stride 2, pad 1: 55 wide, 14
// strips) 26.9 against 29.2. Where rows are stored as quads 4 rows won
// everywhere (max at 112x112 23.3 against 26.2, at 56x56 35.0 against
// 36.3, at 28x28 8.6 against 11.6, dilated max at 114x114, 56 wide,
// 18.9 against 26.6).
//
// Earlier on an H200 (2026-11-29, bench/results/h200-2026-11-29-s7,
// runs 8, 10 and 11), µs on 1, 2 and 4 rows:
//
//	float16 max forward, 112x112 (3x3, stride 2)    30.2  26.5  26.4
//	float16 max forward, 56x56 (2x2, stride 2)      44.2  41.8  38.9
//	float16 average forward, 112x112               27.1  23.2  21.7
//	float16 average forward, 56x56                 38.0  35.4  37.1 (39.7 in run 11)
//	float32 average forward, 112x112               32.9  33.8  35.8
//
// The other kinds and passes, float32 or float16, gained little or lost
// (the argmax passes, which already take several planes, up to 30%).
func (ps *passes) stripRows(pass passKind, f Format, packed, wide bool, items int) int {
	_, ky := ps.geom.effective()
	switch {
	case ps.tune.StripRows > 0:
		return ps.tune.StripRows
	case packed && pass == passValues && wide, ps.kind == KindAverage && pass == passValues && f == Float16 && ky > ps.geom.StrideY:
		return fewerPlanes(4, items)
	}
	return 1
}

// wideRowStrips is the strips a destination row needs for stripRows to
// count it wide whatever its stores: between the 8 of a row where one
// row an invocation was faster and the 14 of one where 4 were (nothing
// measured between).
const wideRowStrips = 12

// stripPlanes returns the planes one invocation of a direct pass computes,
// PZ in the shader, for a dispatch of items strips x rows x planes:
// t.StripPlanes, or by default 4 for the argmax passes over float16
// images, 2 over float32 (fewer where the dispatch would be left with
// under minPlaneItems invocations, fewerPlanes), and 1 for the other
// passes. On an
// H100 (2026-11-27, bench/results/h100-2026-11-27-planes, run 2) the
// float16 argmax pass of max 3x3 stride 2 at 112x112 went from 52.7 to
// 44.7 us with 4 planes, at 56x56 (2x2) from 64.1 to 56.9; float32 from
// 55.6 to 49.9 with 2 (90.3 to 92.0 at 56). The value passes lost a
// little with more planes (their registers doubled).
func stripPlanes(t Tuning, pass passKind, f Format, items int) int {
	switch {
	case t.StripPlanes > 0:
		return t.StripPlanes
	case pass != passArgmax && pass != passArgmaxOnly:
		return 1
	case f == Float16:
		return fewerPlanes(4, items)
	}
	return fewerPlanes(2, items)
}

func (ps *passes) pipeline(k passKey) (*vk.Pipeline, error) {
	if !k.edge.Valid() {
		return nil, fmt.Errorf("%w: edge mode %v", ErrGeometry, k.edge)
	}
	if pl := ps.pipes[k]; pl != nil {
		return pl, nil
	}
	spec := geometrySpec(ps.geom, k.edge)
	lim := ps.dev.Limits()
	if tiled(ps.geom) {
		spec["local_size_x"] = uint32(workgroup(lim))
		tw, th := ps.tile()
		spec["TW"], spec["TH"] = uint32(tw), uint32(th)
	} else {
		spec["local_size_x"], spec["local_size_y"], spec["local_size_z"] = uint32(k.lx), uint32(k.ly), uint32(k.lz)
		spec["OX"] = uint32(stripWidth(ps.geom, k.pass, ps.tune))
		spec["VW"], spec["PAR"] = uint32(k.vw), uint32(k.par)
		if k.vstore != 0 {
			spec["VSTORE"] = uint32(k.vstore)
		}
		if k.pz > 1 {
			spec["PZ"] = uint32(k.pz)
		}
		if k.oy > 1 {
			spec["OY"] = uint32(k.oy)
		}
	}
	if k.pass == passValues && ps.kind.IsMax() && !ps.tune.NoFastMax && !tiled(ps.geom) {
		spec["FAST"] = 1
	}
	if k.pass == passArgmax || k.pass == passArgmaxOnly {
		spec["AMBITS"] = uint32(argmaxBitsFor(ps.geom.KernelWidth * ps.geom.KernelHeight))
		spec["WRITE_VALUES"] = 1
		if k.pass == passArgmaxOnly {
			spec["WRITE_VALUES"] = 0
		}
		if !tiled(ps.geom) && !argmaxTwoPhase(ps.tune) {
			spec["TWO_PHASE"] = 0
		}
		if !tiled(ps.geom) && argmaxFast(ps.tune) {
			spec["FAST"] = 1
		}
	}
	name := ""
	switch {
	case ps.global:
		name = "global"
	case k.packed:
		name = "packed"
	}
	sh, err := variant(ps.shader(k.pass), name, k.f16)
	if err != nil {
		return nil, err
	}
	pl, err := pipeline(ps.dev, sh, spec)
	if err != nil {
		return nil, err
	}
	ps.pipes[k] = pl
	return pl, nil
}

// groups returns the grid of a forward-shaped pass of pipeline key k over
// a w x h clip of z planes.
func (ps *passes) groups(k passKey, w, h, z int) ([3]uint32, error) {
	lim := ps.dev.Limits()
	if tiled(ps.geom) {
		tw, th := ps.tile()
		return tileGroups(&lim, tilesOf(w, h, tw, th), z), nil
	}
	ox := stripWidth(ps.geom, k.pass, ps.tune)
	return grid3(&lim, (w+ox-1)/ox, ceilDiv(h, max(int(k.oy), 1)), ceilDiv(z, max(int(k.pz), 1)), int(k.lx), int(k.ly), int(k.lz))
}

// geometrySpec returns the specialization constants the pooling shaders
// share: kernel size, stride, dilation and edge mode.
func geometrySpec(g Geometry, edge EdgeMode) map[string]uint32 {
	clamp := uint32(0)
	if edge == EdgeClamp {
		clamp = 1
	}
	return map[string]uint32{
		"KW": uint32(g.KernelWidth), "KH": uint32(g.KernelHeight), "SX": uint32(g.StrideX), "SY": uint32(g.StrideY),
		"DX": uint32(g.DilationX), "DY": uint32(g.DilationY), "CLAMP": clamp}
}
