package ops

import (
	"fmt"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// Winograd convolutions (glsl/convolution_winograd_*.comp): 3x3
// convolutions of stride and dilation 1 without groups, and the data
// gradients and transpose convolutions of them (a 3x3 convolution of dy
// with the taps reversed), as F(4x4, 3x3) minimal filtering: each 4x4
// block of outputs takes 36 products per channel pair where the direct
// sum takes 144. Four passes:
//
//   - weights: U = G g G^T per (output, input) channel pair, 36 values;
//   - source: V = B^T d B per 6x6 source block (tile) and channel;
//   - products: 36 GEMMs X[xi] = U[xi]^T V[xi] over the channels, on
//     gemm.glsl's tiles (gemmTiles, chosen by gemmCost at the products'
//     rates, z = 36), their k split over the input channels where they
//     would leave multiprocessors few workgroups (winogradSplits: z = 36
//     x splits, one partial X per split);
//   - outputs: A^T X A per tile and output channel (X the sum of the
//     splits' partial products), plus the bias, through the fused
//     neuron, stored where inside the output region.
//
// U, V and X are float32 in the engine's scratch image, which grows to
// hold them; batch images go through in parts so that the scratch stays
// under winogradScratchMax bytes (and the device's storage-buffer range),
// a part at least one batch image (else the GEMM path runs instead).
// Float16 images are loaded and stored as halves; every transform and
// product is float32.
//
// Where the device has cooperative matrices, float16 images' products run
// on them by default (winocoop=0 or coopmat=0 keeps them on the float32
// tiles)
// (glsl/convolution_winograd_coopmat.comp, tensor cores where the device
// has VK_NV_cooperative_matrix): U and V are stored as halves (U scaled
// up by 16 and V down, exactly, so that V stays within a half's range
// wherever the source stays under about 10000), the products accumulate
// in float32, X stays float32. That halves the scratch the transforms
// write and read, but rounds U and V to halves before the products: a
// relative RMS error of about 3.5e-3 on random data, where the direct
// sums' is their result's rounding to half, 2e-4 (a float64 simulation,
// bench/winograd_half_error.py, agrees: 3e-3 for any channel count; the
// worst value up to 24 halves' roundings of the products' magnitude with
// 3 channels, 2.3 with 256). Weight gradients likewise store D and V as
// halves (each divided by 16; the sums multiplied by 256 in the output
// transform), 2.7e-3 to 3.4e-3 in the simulation; their products split
// the tiles by winogradCoopSplits.
//
// Accuracy: the transforms scale values by up to 10 per axis (B^T's
// rows) before rounding, so results carry several times the rounding of
// a direct sum: on random data a relative RMS error of 1.2e-6 to 3.3e-6
// against 0.2e-6 to 0.8e-6 (16 to 256 channels, float32), within the
// family's tolerance (ref.ConvTolerance), as cuDNN's Winograd algorithms.
// ConvolutionTuning's NoWinograd keeps the direct sums.

// winogradScratchMax bounds the scratch of one part of the batch (U, V
// and X) in bytes (a variable for tests).
var winogradScratchMax = 512 << 20

// winogradTaps is the transformed positions (6 x 6) of F(4x4, 3x3).
const winogradTaps = 36

// convWinogradPush is glsl/convolution_winograd_common.glsl's
// push-constant block.
type convWinogradPush struct {
	InW, InH, InX0, InY0     int32
	FirstX, FirstY           int32
	OutW, OutH, OutX0, OutY0 int32
	InStride, DstStride      uint32
	ImBase, ImBatch, ImPlane uint32
	DstBase, DstBatch        uint32
	DstPlane                 uint32
	WBase, BiasBase          uint32
	PreluBase                uint32
	M, C                     uint32
	TilesX, TilesY, T        uint32
	UBase, VBase, XBase      uint32
	KChunk, Slots            uint32
}

// convWinogradShape reports whether j can run as Winograd, and whether its
// weights are those of the convolution it reverses (flip: a data gradient
// or transpose convolution).
func convWinogradShape(j *convImageGemm) (flip, ok bool) {
	if j.geom != [6]int32{3, 3, 1, 1, 1, 1} || j.groups != 1 || j.depthwise || j.in.flat || j.out.flat {
		return false, false
	}
	switch {
	case j.modeA == gemmAWeights && j.modeB == gemmBIm2col:
		return false, true
	case j.modeA == gemmATransposed && j.modeB == gemmBGather:
		return true, true
	}
	return false, false
}

// convWinogradDefault reports whether a GEMM that can run as Winograd
// does by default: m outputs and c inputs channels, both at least
// winogradMinChannels, where the products' GEMMs are deep and wide
// enough for the tiles.
func convWinogradDefault(m, c int) bool {
	return m >= winogradMinChannels && c >= winogradMinChannels
}

// winogradMinChannels is the fewest channels on each side for which
// Winograd is the default.
const winogradMinChannels = 64

// convWinogradPlan is how a Winograd convolution runs: the products'
// tile, and the batch images per part.
type convWinogradPlan struct {
	flip   bool
	tile   int
	tx, ty int // tiles per output row and column
	part   int // batch images per part
	// coop: the products on cooperative-matrix tile ctile (its emulated
	// build when emu), U and V stored as halves.
	coop  bool
	ctile int
	emu   bool
	// splits of the products' k (the input channels), chunk channels
	// each: X holds a partial sum per split (winogradSplits).
	splits, chunk int
	// Scratch layout, in float32 slots: U, V, X from uOff, vOff, xOff;
	// total.
	uOff, vOff, xOff, total int
}

// winograd returns j's Winograd plan when it runs as Winograd: the shape
// allows it, then a test's forced path, the tuning (Winograd,
// NoWinograd, another path forced) or the default decides, and the
// scratch of one batch image fits.
func (e *convEngine) winograd(j *convImageGemm) (convWinogradPlan, bool) {
	flip, ok := convWinogradShape(j)
	if !ok {
		return convWinogradPlan{}, false
	}
	only, ok := e.winogradChosen(j.m, j.cinG)
	if !ok {
		return convWinogradPlan{}, false
	}
	lim := e.limits()
	p := convWinogradPlan{flip: flip, tx: (j.out.w + 3) / 4, ty: (j.out.h + 3) / 4, splits: 1}
	if c, ok := e.winogradCoop(j.m, false, j.out.im.format == Float16); ok {
		p.coop, p.ctile, p.emu = true, c.ctile, c.emu
	}
	up, room := winogradScratchLayout(lim)
	per := 1 // U and V values per float32 slot
	if p.coop {
		per = 2
	}
	layout := func(nb int) int {
		tiles := nb * p.tx * p.ty
		p.uOff, p.vOff = 0, up((winogradTaps*j.cinG*j.m+per-1)/per)
		p.xOff = p.vOff + up((winogradTaps*j.cinG*tiles+per-1)/per)
		p.total = p.xOff + p.splits*winogradTaps*j.m*tiles
		return p.total
	}
	p.part = largest(j.batches, func(nb int) bool { return layout(nb) <= room })
	if w := e.tune.WinogradPart; w > 0 {
		p.part = min(p.part, w)
	}
	if p.part == 0 {
		return convWinogradPlan{}, false
	}
	layout(p.part)
	if p.coop {
		return p, true
	}
	c := gemmBest(lim, e.tune, gemmWinograd, j.m, p.part*p.tx*p.ty, j.cinG, winogradTaps, 1, false, only)
	if c.path != convPathTiled {
		return convWinogradPlan{}, false
	}
	p.tile = c.tile
	cfg := gemmTiles[p.tile].cfg
	wgs := (p.part*p.tx*p.ty + cfg.bn - 1) / cfg.bn * ((j.m + cfg.bm - 1) / cfg.bm) * winogradTaps
	if p.splits, p.chunk = winogradSplits(gemmUnits(lim, e.tune), e.tune.Splits, wgs, j.cinG, cfg.bk); layout(p.part) > room {
		p.splits, p.chunk = 1, j.cinG
		layout(p.part)
	}
	return p, true
}

// winogradSplits returns the splits of the Winograd products' k (cin
// input channels) on the float32 tiles, wgs workgroups a split, and the
// channels per split (a multiple of the tile's slice depth bk): want
// (the tuning's splits=N) where given, else doubled from 1 while the
// workgroups number under five per multiprocessor (units) and each
// split keeps winogradSplitChannels channels or more. The output
// transform adds the splits' partial products. On an H200
// (bench/results/h200-2026-11-28-s4, run 6) ResNet-18's 3x3 layers of
// 512 channels at 7x7 (288 workgroups of 64 x 128 on 132
// multiprocessors) took 133.9 µs unsplit, 119.1 in 2 splits and 118.4
// in 4 (float32 forward), those of 256 at 14x14 (576 workgroups) 113.4
// unsplit and 109.8 in 2; 128 channels at 28x28 (936) lost in 2 (95.2
// -> 102.5).
func winogradSplits(units, want, wgs, cin, bk int) (splits, chunk int) {
	splits = want
	if splits <= 0 {
		splits = 1
		for wgs*splits < 5*units && cin/(2*splits) >= winogradSplitChannels {
			splits *= 2
		}
	}
	chunk = ((cin+splits-1)/splits + bk - 1) / bk * bk
	return (cin + chunk - 1) / chunk, chunk
}

// winogradSplitChannels is the fewest input channels a split of the
// Winograd products takes by default.
const winogradSplitChannels = 128

// winogradCoop returns the cooperative-matrix tile of the products of a
// Winograd convolution, data gradient or (weights) weight gradient of m
// output channels on float16 images (f16), and
// whether they run on cooperative matrices: by default wherever the
// device runs the tile, unless the tuning refuses it (winocoop=0,
// coopmat=0, or a forced tiled or direct path); tile the tuning's
// CoopTile where Path forces cooperative matrices, else
// winogradCoopTile's; a test's force decides first. The halves' products
// round about 15 times more than the direct sums (relative RMS error
// about 3.5e-3 against 2e-4 on random data); on an H100 they took the
// ResNet-18 float16 training step from 10.77 to 9.62 ms.
func (e *convEngine) winogradCoop(m int, weights, f16 bool) (convChoice, bool) {
	lim := e.limits()
	if e.force != nil {
		c := *e.force
		return c, c.path == convPathWinogradCoop && f16 && convCoopRuns(lim, c)
	}
	t := e.tune
	forced := t.Path == ConvolutionPathCoopMat
	if !f16 || t.NoWinogradCoopMat || t.NoCoopMat || t.Path == ConvolutionPathTiled || t.Path == ConvolutionPathDirect {
		return convChoice{}, false
	}
	c := convChoice{path: convPathWinogradCoop, ctile: winogradCoopTile(m, weights)}
	if forced {
		c.ctile = t.CoopTile
	}
	return c, convCoopRuns(lim, c)
}

// winogradCoopTile is the cooperative-matrix tile (convCoopTiles) of the
// Winograd products of m output channels (rows): for convolutions and
// data gradients 64 x 128 x 16 (convCoopRowsTile) where m is at most
// convCoopRows, else 128 x 128 x 16 (tile 7); for weight gradients 64 x
// 64 (tile 0, 2 x 2 subgroups) where m is at most 64, else 128 x 128 x
// 32 (2 x 4). On an H200 (2026-11-29, bench/results/h200-2026-11-29-s8,
// run 2) the 64-row tile took ResNet-18's float16 3x3 64@56 forward from
// 84.9 to 77.9 us and its data gradient from 83.9 to 77.4 (tile 7 leaves
// half its rows empty there); its weight gradient took 176.6 us against
// tile 0's 127.9. On
// an H100 (2026-11-27, bench/results/h100-2026-11-27-coop, run 4) tile 7
// took the float16 3x3 forwards of 64 to 512 channels to 124, 67, 75 and
// 75 us from 132, 75, 74 and 88 on the former 64 x 128 or 128 x 128 x 32
// (data gradients alike), and the weight gradients' from 240 and 123 us
// to 288 and 134 at 64 and 128 channels; at 64 channels tile 0 in
// winogradCoopSplits' splits took them to 169 us (run 6).
func winogradCoopTile(m int, weights bool) int {
	switch {
	case !weights && m <= convCoopRows:
		return convCoopRowsTile
	case !weights:
		return 7
	case m <= 64:
		return 0
	}
	return convCoopDefaultTile
}

// winogradCoopDirect reports whether the Winograd products on a
// cooperative-matrix tile of bm x bn outputs store each accumulator
// straight from the registers (convolution_winograd_coopmat.comp's
// STORE_DIRECT) into their rows x cols results (X of a convolution or
// data gradient, rows output channels by cols tiles; P of a weight
// gradient, output by input channels) from float base of the scratch:
// where the tuning asks for it (coopdirect=1; off by default, slower on
// an H100, see ConvolutionTuning.CoopDirect), the tiles cover the
// results exactly and every matrix starts and every row lies on 16 bytes
// (base and cols multiples of 4 floats and 8 halves). The epilogue
// through shared memory instead stages each 16 x 8 matrix there and
// synchronizes its subgroup twice.
func winogradCoopDirect(t ConvolutionTuning, bm, bn, rows, cols, base int) bool {
	return t.CoopDirect && rows%bm == 0 && cols%bn == 0 && cols%8 == 0 && base%4 == 0
}

// winogradCoopStage reports whether the Winograd products of a
// convolution or data gradient on cooperative-matrix tile ctile (its
// emulated build when emu) that store X as halves stage each tile whole
// in shared memory (convolution_winograd_coopmat.comp's STAGE_TILE,
// gemm_coopmat.glsl's gemmEpilogueTile) and store it 16 bytes an
// invocation along X's rows: where the tuning asks for it (coopstage=1;
// off by default, slower on an H100, see ConvolutionTuning.CoopStage), X's
// rows of cols halves and its first value (float base of the scratch)
// lie on 16 bytes, and the device's shared memory holds the tile's BM x
// (BN + 8) halves beside its slices (convCoopStageBytes; the emulated
// build halves its float slices until they fit). The same halves either
// way.
func winogradCoopStage(lim vk.Limits, t ConvolutionTuning, ctile int, emu bool, cols, base int) bool {
	if !t.CoopStage || t.NoCoopStage || cols%8 != 0 || base%4 != 0 {
		return false
	}
	if emu {
		_, ok := convCoopEmuFit(lim, ctile, true)
		return ok
	}
	c, ok := convCoopTileFor(lim, ctile)
	return ok && c.cn%8 == 0 && c.shared(2)+convCoopStageBytes(c) <= int(lim.MaxComputeSharedMemorySize)
}

// winogradXHalf reports whether the Winograd products on cooperative
// matrices of m output channels over a part of tiles tiles store X as
// halves for the output transform (the products' X_HALF; WinogradXHalf
// and NoWinogradXHalf force and refuse it): by default where X holds
// 2^18 or more values per transformed position (36 MiB or more as
// float32). Halves take half the bytes between the products and the
// output transform, which only large X repays. On an H200
// (bench/results/h200-2026-11-28-xhalf, run 3), float16 forwards:
// 64@56 (401k values) 89.2 -> 83.9 us, VGG's 128@112 (1.6M) 322.8 ->
// 299.8; but 128@28 (200k) 45.8 -> 46.9 and 512@7 (65k) 62.8 -> 63.5.
// The rounding of X raises the relative RMS error of the float16
// forward from 3.0e-3 to 3.8e-3 (bench/winograd_half_error.py).
func winogradXHalf(t ConvolutionTuning, m, tiles int) bool {
	switch {
	case t.NoWinogradXHalf:
		return false
	case t.WinogradXHalf:
		return true
	}
	return m*tiles >= 1<<18
}

// encodeWinograd records j as plan p (see winograd).
func (e *convEngine) encodeWinograd(cb *vk.CommandBuffer, j *convImageGemm, p convWinogradPlan, f16 bool) error {
	e.lastWinogradPart = p.part
	lim := e.limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	scr, whole, err := e.winogradScratch(p.total)
	if err != nil {
		return err
	}
	wr, wBase, err := convWholeRange(lim, "weights", j.weights)
	if err != nil {
		return err
	}
	bias, biasBase := e.dummy.Whole(), uint32(0)
	if j.bias != nil {
		if bias, biasBase, err = convWholeRange(lim, "bias", j.bias); err != nil {
			return err
		}
	}
	prelu := e.dummy.Whole()
	neuron := j.neuron && !e.neuron.IsIdentity()
	if neuron && e.prelu != nil {
		prelu = e.prelu.Whole()
	}
	first := [2]int{j.firstX, j.firstY}
	if p.flip {
		// dx(q) = sum over taps of W(co, ci, tap) dy(q - first - tap): a
		// convolution of dy with the taps reversed, its first tap at
		// -first - 2.
		first = [2]int{-j.firstX - 2, -j.firstY - 2}
	}
	// The products' workgroups: bm x bn outputs, threads invocations.
	bm, bn, threads := gemmTiles[p.tile].cfg.bm, gemmTiles[p.tile].cfg.bn, gemmTiles[p.tile].cfg.threads()
	uk := convPipeKey{shader: spirv.ConvolutionWinogradWeights, tile: -1, flip: p.flip, half: p.coop}
	ik := convPipeKey{shader: spirv.ConvolutionWinogradInput, f16: f16, tile: -1, half: p.coop}
	gk := convPipeKey{shader: spirv.ConvolutionWinogradGemm, tile: int8(p.tile), local: int32(threads)}
	per := 1 // U and V values per float32 slot
	e.last = convPathWinograd
	if p.coop {
		c := convChoice{ctile: p.ctile, emu: p.emu}.coopTile(lim)
		bm, bn, threads = c.bm, c.bn, c.threads()
		gk = convPipeKey{shader: spirv.ConvolutionWinogradCoopmat, tile: -1, local: int32(threads), coop: true, ctile: int8(p.ctile), emu: p.emu}
		per = 2
		e.last = convPathWinogradCoop
	}
	// X as halves: the products on cooperative matrices of float16 images.
	xhalf := p.coop && f16 && winogradXHalf(e.tune, j.m, min(p.part, j.batches)*p.tx*p.ty)
	gk.xhalf = xhalf
	ok2 := convPipeKey{shader: spirv.ConvolutionWinogradOutput, f16: f16, tile: -1, bias: j.bias != nil, neuron: neuron, half: xhalf}
	if p.splits > 1 {
		ok2.splitk = 1 // it adds the products' splits
	}
	var pls [4]*vk.Pipeline
	for i, k := range []convPipeKey{uk, ik, gk, ok2} {
		if pls[i], err = e.pipeline(k); err != nil {
			return err
		}
	}
	pc := convWinogradPush{
		InW: int32(j.in.w), InH: int32(j.in.h), InX0: int32(j.in.x0), InY0: int32(j.in.y0),
		FirstX: int32(first[0]), FirstY: int32(first[1]),
		OutW: int32(j.out.w), OutH: int32(j.out.h), OutX0: int32(j.out.x0), OutY0: int32(j.out.y0),
		InStride: uint32(j.in.stride()), DstStride: uint32(j.out.stride()),
		ImBatch: uint32(j.in.batch()), ImPlane: uint32(j.in.plane()),
		DstBatch: uint32(j.out.batch()), DstPlane: uint32(j.out.plane()),
		WBase: wBase, BiasBase: biasBase, M: uint32(j.m), C: uint32(j.cinG),
		TilesX: uint32(p.tx), TilesY: uint32(p.ty),
	}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [4]vk.BufferRange
	// The weights once, for every part.
	uSize := winogradTaps * j.cinG * j.m
	pc.UBase, pc.T = 0, 0
	binds[0], binds[1] = wr, winogradPart(scr, whole, p.uOff, (uSize+per-1)/per)
	if err := e.winogradDispatch(cb, pls[0], binds[:2], push,
		[3]uint32{uint32((j.m + 63) / 64), uint32(j.cinG), 1}); err != nil {
		return err
	}
	spans := [2]span{j.in.span(), j.out.span()}
	chans := [2]int{j.in.spanChannels(), j.out.spanChannels()}
	return convBatches(lim, spans[:], chans[:], j.batches, func(n, nb int) error {
		for b := n; b < n+nb; b += p.part {
			cnt := min(p.part, n+nb-b)
			tiles := cnt * p.tx * p.ty
			vSize, xSize := winogradTaps*j.cinG*tiles, winogradTaps*j.m*tiles
			var im, dst vk.BufferRange
			im, pc.ImBase = spans[0].bind(align, b, 0, cnt, chans[0])
			dst, pc.DstBase = spans[1].bind(align, b, 0, cnt, chans[1])
			pc.T = uint32(tiles)
			pc.VBase = 0
			binds[0], binds[1] = im, winogradPart(scr, whole, p.vOff, (vSize+per-1)/per)
			if err := e.winogradDispatch(cb, pls[1], binds[:2], push,
				[3]uint32{uint32((tiles + 63) / 64), uint32(j.cinG), 1}); err != nil {
				return err
			}
			pc.UBase, pc.VBase, pc.XBase = uint32(p.uOff), uint32(p.vOff), uint32(p.xOff)
			k := gk
			if tiles%4 == 0 && pc.VBase%4 == 0 {
				k.vecB = true
				// Quads of X along the tiles (its rows start on quads).
				k.vecC = !p.coop && pc.XBase%4 == 0 && !e.tune.NoWinogradQuads
				// Quads of U along m too, on cooperative matrices (U's
				// rows are M halves from a multiple of 4).
				k.vecA = p.coop && j.m%4 == 0 && p.uOff%2 == 0
			}
			k.stageTile = p.coop && xhalf && winogradCoopStage(lim, e.tune, p.ctile, p.emu, tiles, p.xOff)
			k.storeDirect = p.coop && !k.stageTile && winogradCoopDirect(e.tune, bm, bn, j.m, tiles, p.xOff)
			e.lastCoopDirect, e.lastCoopStage = k.storeDirect, k.stageTile
			gemm := pls[2]
			if k != gk {
				if gemm, err = e.pipeline(k); err != nil {
					return err
				}
			}
			binds[0] = whole
			splits := max(p.splits, 1) // the cooperative-matrix products: 1
			e.lastWinogradSplits = splits
			if splits > 1 {
				pc.KChunk = uint32(p.chunk)
			}
			if err := e.winogradDispatch(cb, gemm, binds[:1], push,
				[3]uint32{uint32((tiles + bn - 1) / bn), uint32((j.m + bm - 1) / bm), uint32(winogradTaps * splits)}); err != nil {
				return err
			}
			pc.XBase, pc.KChunk, pc.Slots = 0, 0, uint32(splits)
			binds[0], binds[1], binds[2], binds[3] = winogradPart(scr, whole, p.xOff, splits*xSize), bias, prelu, dst
			if err := e.winogradDispatch(cb, pls[3], binds[:4], push,
				[3]uint32{uint32((tiles + 63) / 64), uint32(j.m), 1}); err != nil {
				return err
			}
		}
		return nil
	})
}

// convWinogradWeightsShape reports whether the weight gradient j can run
// as Winograd: that of a 3x3 convolution of stride and dilation 1 without
// groups.
func convWinogradWeightsShape(j *convWeightsGemm) bool {
	return j.geom == [6]int32{3, 3, 1, 1, 1, 1} && j.groups == 1 && !j.fc && !j.depthwise && !j.dy.flat && !j.x.flat
}

// winogradChosen applies a test's forced path, the tuning and the default
// to a GEMM that can run as Winograd: whether it does, and the products'
// tile to force (-1: the model's choice).
func (e *convEngine) winogradChosen(m, c int) (only int, ok bool) {
	t := e.tune
	switch {
	case e.force != nil && e.force.path == convPathWinogradCoop:
		return -1, true
	case e.force != nil:
		return e.force.tile, e.force.path == convPathWinograd
	case t.NoWinograd:
		return -1, false
	case t.Winograd:
		if t.Path == ConvolutionPathTiled {
			return t.Tile, true
		}
		return -1, true
	case t.Path != ConvolutionPathAuto:
		return -1, false
	}
	return -1, convWinogradDefault(m, c)
}

// convWinogradWeightsPlan is how a Winograd weight gradient runs: the
// products' tile, tiles per split (chunk) and splits per part of the
// batch, and the scratch layout in floats: D, V per part from dOff, vOff,
// the partial sums P of every slot from pOff, the bias gradient's
// partial sums from biasOff, the slots' sums from sumOff (0: none); total.
type convWinogradWeightsPlan struct {
	tile, chunk, splits int
	tx, ty              int
	part, parts         int
	// coop: the products on cooperative-matrix tile ctile (its emulated
	// build when emu), D and V stored as halves.
	coop  bool
	ctile int
	emu   bool
	// Scratch layout, in float32 slots.
	dOff, vOff, pOff int
	bias             convBiasPlan
	sumOff           int
	total            int
}

// winogradWeights returns j's Winograd plan when it runs as Winograd (as
// winograd decides for image GEMMs); nb is the batch images one binding
// of dy and x holds.
func (e *convEngine) winogradWeights(j *convWeightsGemm, nb int) (convWinogradWeightsPlan, bool, error) {
	var p convWinogradWeightsPlan
	if !convWinogradWeightsShape(j) {
		return p, false, nil
	}
	only, ok := e.winogradChosen(j.m, j.cinG)
	if !ok {
		return p, false, nil
	}
	lim := e.limits()
	p.tx, p.ty = (j.dy.w+3)/4, (j.dy.h+3)/4
	if c, ok := e.winogradCoop(j.m, true, j.dy.im.format == Float16 && j.x.im.format == Float16); ok {
		p.coop, p.ctile, p.emu = true, c.ctile, c.emu
	}
	per := 1 // D and V values per float32 slot
	if p.coop {
		per = 2
	}
	up, room := winogradScratchLayout(lim)
	perPart := func(b int) int {
		tiles := b * p.tx * p.ty
		return up((winogradTaps*j.m*tiles+per-1)/per) + up((winogradTaps*j.cinG*tiles+per-1)/per)
	}
	// D and V of a part take at most half the room; the partial sums the
	// rest.
	p.part = largest(nb, func(b int) bool { return perPart(b) <= room/2 })
	if w := e.tune.WinogradPart; w > 0 {
		p.part = min(p.part, w)
	}
	if p.part == 0 {
		return p, false, nil
	}
	p.parts = (j.batches + p.part - 1) / p.part
	tiles := p.part * p.tx * p.ty
	if p.coop {
		c := convChoice{ctile: p.ctile, emu: p.emu}.coopTile(lim)
		p.splits, p.chunk = winogradCoopSplits(c, gemmUnits(lim, e.tune), e.tune.Splits, j.m, j.cinG, tiles)
	} else {
		c := gemmBest(lim, e.tune, gemmWinograd, j.m, j.cinG, tiles, winogradTaps, p.parts, true, only)
		if c.path != convPathTiled {
			return p, false, nil
		}
		p.tile, p.splits, p.chunk = c.tile, c.splits, c.chunk
	}
	p.dOff = 0
	p.vOff = up((winogradTaps*j.m*tiles + per - 1) / per)
	p.pOff = p.vOff + up((winogradTaps*j.cinG*tiles+per-1)/per)
	p.total = p.pOff + up(p.parts*p.splits*winogradTaps*j.m*j.cinG)
	if j.db != nil {
		var err error
		if p.bias, err = e.planBias(j); err != nil {
			return p, false, err
		}
		if p.bias.slots > 1 {
			p.bias.off = p.total
			p.total += p.bias.slots * j.biasFrom.channels
		}
	}
	if p.total > room {
		return p, false, nil
	}
	// More than one slot (parts times splits): a parallel pass adds them
	// (convolution_reduce.comp) where the scratch has room for the sums,
	// so that the output transform reads one.
	if count := winogradTaps * j.m * j.cinG; p.parts*p.splits > 1 && up(p.total)+count <= room {
		p.sumOff = up(p.total)
		p.total = p.sumOff + count
	}
	return p, true, nil
}

// winogradCoopSplits returns the splits of the tiles (the products' k)
// of a Winograd weight gradient on cooperative-matrix tile c, and the
// tiles per split (a multiple of the tile's slice, so of 4): the
// tuning's count (splits=N) where given, else enough for two workgroups
// per multiprocessor of units (the products have ceil(m/BM) x ceil(cin/BN)
// x 36 per split), eight for tiles of 64 x 64 or less, each split at
// least 4 slices deep. On an H100 (run 6 of
// bench/results/h100-2026-11-27-coop) the 64 x 64 tile's products at 64
// channels (56x56, batch 32) took 146 us in 8 splits, 105 in 32; the
// 128 x 128 tile's at 128 channels (28x28) 60 us in 8, 78 in 16.
func winogradCoopSplits(c convCoopConfig, units, want, m, cin, tiles int) (splits, chunk int) {
	return coopSplits(c, units, want, (m+c.bm-1)/c.bm*((cin+c.bn-1)/c.bn)*winogradTaps, tiles)
}

// coopSplits returns the splits of depth k of a cooperative-matrix GEMM
// on tile c with wgs workgroups a split, and the depth per split (a
// multiple of the tile's slice): want where given, else enough for two
// workgroups per multiprocessor of units (eight for tiles of 64 x 64 or
// less), each split at least 4 slices deep.
func coopSplits(c convCoopConfig, units, want, wgs, k int) (splits, chunk int) {
	slices := (k + c.bk - 1) / c.bk
	splits = want
	if splits == 0 {
		per := 2
		if c.bm*c.bn <= 64*64 {
			per = 8
		}
		splits = min((per*units+wgs-1)/wgs, max(slices/4, 1))
	}
	splits = max(min(splits, slices), 1)
	chunk = (slices + splits - 1) / splits * c.bk
	return (k + chunk - 1) / chunk, chunk
}

// encodeWinogradWeights records the weight gradient j as plan p: per part
// of the batch the dy and source transforms and the products of each
// split, then the partial sums added and transformed into dW, and the
// bias gradient.
func (e *convEngine) encodeWinogradWeights(cb *vk.CommandBuffer, j *convWeightsGemm, p convWinogradWeightsPlan, spans []span, chans []int) error {
	lim := e.limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	f16 := j.dy.im.format == Float16
	scr, whole, err := e.winogradScratch(p.total)
	if err != nil {
		return err
	}
	dwr, dwBase, err := convWholeRange(lim, "weight gradient", j.dW)
	if err != nil {
		return err
	}
	bm, bn, threads := gemmTiles[p.tile].cfg.bm, gemmTiles[p.tile].cfg.bn, gemmTiles[p.tile].cfg.threads()
	keys := [4]convPipeKey{
		{shader: spirv.ConvolutionWinogradDy, f16: f16, tile: -1, half: p.coop},
		{shader: spirv.ConvolutionWinogradInput, f16: j.x.im.format == Float16, tile: -1, half: p.coop},
		{shader: spirv.ConvolutionWinogradGemm, tile: int8(p.tile), local: int32(threads), modeA: 1},
		{shader: spirv.ConvolutionWinogradWout, tile: -1, half: p.coop},
	}
	per := 1 // D and V values per float32 slot
	e.lastWeights, e.lastWinogradWeights = convPathWinograd, [2]int{p.parts, p.splits}
	if p.coop {
		c := convChoice{ctile: p.ctile, emu: p.emu}.coopTile(lim)
		bm, bn, threads = c.bm, c.bn, c.threads()
		keys[2] = convPipeKey{shader: spirv.ConvolutionWinogradCoopmat, tile: -1, local: int32(threads), modeA: 1, coop: true, ctile: int8(p.ctile), emu: p.emu}
		per = 2
		e.lastWeights = convPathWinogradCoop
	}
	tiles := p.part * p.tx * p.ty
	// On the tiles the transforms store D and V channels fastest
	// (CHANNELS_FAST: the products load as a convolution's do, quads along
	// the channels where their counts are multiples of 4) unless a part
	// has more tiles than its transforms' workgroups along y hold (8 tiles
	// each) or the tuning refuses it.
	cf := !p.coop && (tiles+7)/8 <= int(lim.MaxComputeWorkGroupCount[1]) && !e.tune.NoWinogradChannelsFast
	switch {
	case cf:
		keys[0].cf, keys[1].cf, keys[2].cf = true, true, true
		keys[2].vecA, keys[2].vecB = j.m%4 == 0, j.cinG%4 == 0
	case tiles%4 == 0:
		// Quads of D (and on cooperative matrices of V) along the tiles.
		keys[2].vecA, keys[2].vecB = true, p.coop
	}
	// Quads of the partial sums along the channels (rows of C values
	// from pOff) where C and pOff are multiples of 4.
	keys[2].vecC = !p.coop && j.cinG%4 == 0 && p.pOff%4 == 0 && !e.tune.NoWinogradQuads
	var pls [4]*vk.Pipeline
	for i, k := range keys {
		if pls[i], err = e.pipeline(k); err != nil {
			return err
		}
	}
	var pc convWinogradPush
	pc.M, pc.C, pc.TilesX, pc.TilesY = uint32(j.m), uint32(j.cinG), uint32(p.tx), uint32(p.ty)
	pc.KChunk = uint32(p.chunk)
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [4]vk.BufferRange
	count := winogradTaps * j.m * j.cinG
	for q := 0; q < p.parts; q++ {
		b := q * p.part
		cnt := min(p.part, j.batches-b)
		tiles := cnt * p.tx * p.ty
		pc.T = uint32(tiles)
		// dy over the dy region.
		var im vk.BufferRange
		im, pc.ImBase = spans[0].bind(align, b, 0, cnt, chans[0])
		pc.InW, pc.InH, pc.InX0, pc.InY0 = int32(j.dy.w), int32(j.dy.h), int32(j.dy.x0), int32(j.dy.y0)
		pc.InStride, pc.ImBatch, pc.ImPlane = uint32(j.dy.stride()), uint32(j.dy.batch()), uint32(j.dy.plane())
		pc.UBase = 0
		binds[0], binds[1] = im, winogradPart(scr, whole, p.dOff, (winogradTaps*j.m*tiles+per-1)/per)
		if err := e.winogradDispatch(cb, pls[0], binds[:2], push, winogradTransformGrid(cf, tiles, j.m)); err != nil {
			return err
		}
		// The source's 6x6 blocks, as a convolution's.
		im, pc.ImBase = spans[1].bind(align, b, 0, cnt, chans[1])
		pc.InW, pc.InH, pc.InX0, pc.InY0 = int32(j.x.w), int32(j.x.h), int32(j.x.x0), int32(j.x.y0)
		pc.InStride, pc.ImBatch, pc.ImPlane = uint32(j.x.stride()), uint32(j.x.batch()), uint32(j.x.plane())
		pc.FirstX, pc.FirstY = int32(j.firstX), int32(j.firstY)
		pc.VBase = 0
		binds[0], binds[1] = im, winogradPart(scr, whole, p.vOff, (winogradTaps*j.cinG*tiles+per-1)/per)
		if err := e.winogradDispatch(cb, pls[1], binds[:2], push, winogradTransformGrid(cf, tiles, j.cinG)); err != nil {
			return err
		}
		pc.UBase, pc.VBase = uint32(p.dOff), uint32(p.vOff)
		pc.XBase = uint32(p.pOff + q*p.splits*count)
		k := keys[2]
		if !cf && keys[2].vecA && tiles%4 != 0 { // the last part's tiles
			k.vecA, k.vecB = false, false
		}
		k.storeDirect = p.coop && winogradCoopDirect(e.tune, bm, bn, j.m, j.cinG, int(pc.XBase))
		e.lastWeightsCoopDirect = k.storeDirect
		gemm := pls[2]
		if k != keys[2] {
			if gemm, err = e.pipeline(k); err != nil {
				return err
			}
		}
		binds[0] = whole
		if err := e.winogradDispatch(cb, gemm, binds[:1], push,
			[3]uint32{uint32((j.cinG + bn - 1) / bn), uint32((j.m + bm - 1) / bm), uint32(winogradTaps * p.splits)}); err != nil {
			return err
		}
	}
	pc.XBase, pc.WBase, pc.Slots = 0, dwBase, uint32(p.parts*p.splits)
	binds[0], binds[1] = winogradPart(scr, whole, p.pOff, p.parts*p.splits*count), dwr
	if p.sumOff > 0 {
		// The output transform has one invocation per (output, input)
		// pair, 4096 of them at 64 channels, each adding its slots one
		// load after another. Adding the slots first, one invocation per
		// value, took an H100's 3x3 weight gradients at 64 channels of
		// 56x56 from 240 to 219 us in float16 and from 228 to 207 in
		// float32 (run 6 of bench/results/h100-2026-11-27-coop).
		sums := winogradPart(scr, whole, p.sumOff, count)
		if err := e.reduceRanges(cb, binds[0], sums, p.parts*p.splits, count); err != nil {
			return err
		}
		binds[0], pc.Slots = sums, 1
	}
	if err := e.winogradDispatch(cb, pls[3], binds[:2], push,
		[3]uint32{uint32((j.cinG + 63) / 64), uint32(j.m), 1}); err != nil {
		return err
	}
	if j.db != nil {
		return e.encodeBiasGrad(cb, j, p.bias, scr)
	}
	return nil
}

// winogradScratchLayout returns how the Winograd passes lay out their
// scratch on a device of limits lim: up rounds a count of floats up to
// the storage-buffer offset alignment (each region starts on one), and
// room is the floats one part of the batch may use, winogradScratchMax
// bytes within the storage-buffer range.
func winogradScratchLayout(lim vk.Limits) (up func(n int) int, room int) {
	align := int(max(lim.MinStorageBufferOffsetAlignment, 16) / 4)
	up = func(n int) int { return (n + align - 1) / align * align }
	return up, int(min(uint64(winogradScratchMax), lim.MaxStorageBufferRange-uint64(4*align)) / 4)
}

// winogradScratch returns the engine's scratch grown to n floats and the
// range binding all of it (see winogradPart).
func (e *convEngine) winogradScratch(n int) (*Image, vk.BufferRange, error) {
	scr, err := e.scratchImage(n)
	if err != nil {
		return nil, vk.BufferRange{}, err
	}
	whole, sBase, err := convWholeRange(e.limits(), "Winograd scratch", scr)
	if err != nil {
		return nil, vk.BufferRange{}, err
	}
	if sBase != 0 {
		return nil, vk.BufferRange{}, fmt.Errorf("%w: %s: Winograd scratch %s does not start on a binding boundary", ErrDevice, e.label, scr)
	}
	return scr, whole, nil
}

// winogradPart returns the range of n floats of scratch scr (bound whole
// by whole) from float off, a multiple of the storage-buffer offset
// alignment.
func winogradPart(scr *Image, whole vk.BufferRange, off, n int) vk.BufferRange {
	return scr.buf.Range(whole.Offset+uint64(4*off), uint64(4*n))
}

// winogradDispatch records one Winograd pass with push constants push,
// checking the workgroup counts against the device's.
func (e *convEngine) winogradDispatch(cb *vk.CommandBuffer, pl *vk.Pipeline, binds []vk.BufferRange, push []byte, groups [3]uint32) error {
	lim := e.limits()
	for axis, n := range groups {
		if n > lim.MaxComputeWorkGroupCount[axis] {
			return fmt.Errorf("%w: %s: Winograd workgroups %v exceed the device's %v", ErrDeviceLimit, e.label, groups, lim.MaxComputeWorkGroupCount)
		}
	}
	if err := cb.Dispatch(pl, binds, push, groups); err != nil {
		return fmt.Errorf("%s: %w", e.label, err)
	}
	return nil
}

// winogradTransformGrid returns the workgroups of a weight gradient's dy
// or source transform over tiles tiles and ch channels: 64 invocations
// along the tiles per workgroup, channels along y; with cf
// (CHANNELS_FAST) blocks of 8 channels (x) by 8 tiles (y).
func winogradTransformGrid(cf bool, tiles, ch int) [3]uint32 {
	if cf {
		return [3]uint32{uint32((ch + 7) / 8), uint32((tiles + 7) / 8), 1}
	}
	return [3]uint32{uint32((tiles + 63) / 64), uint32(ch), 1}
}
