package ops

import (
	"fmt"
	"slices"
	"sort"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// Test hooks of the convolution family (compiled into tests only).

// ConvWeightsWordLoads reports whether the family kernel k has made tiled
// float16 weight-gradient pipelines that load 32-bit words (words) and
// ones that load halves (halves).
func ConvWeightsWordLoads(k any) (words, halves bool) {
	e, ok := k.(interface{ engine() *convEngine })
	if !ok {
		return false, false
	}
	for key := range e.engine().pipes {
		if key.shader == spirv.ConvolutionGemmWeights && key.f16 && key.tile >= 0 {
			words = words || key.words
			halves = halves || !key.words
		}
	}
	return words, halves
}

// ConvImageWordLoads reports whether the family kernel k has made tiled
// float16 image-GEMM pipelines (convolution_gemm.comp) that load their
// source value by value as 32-bit words (words), as halves (halves), and
// as quads (quads: VEC_B).
func ConvImageWordLoads(k any) (words, halves, quads bool) {
	e, ok := k.(interface{ engine() *convEngine })
	if !ok {
		return false, false, false
	}
	for key := range e.engine().pipes {
		if key.shader != spirv.ConvolutionGemm || !key.f16 || key.tile < 0 || key.splitk == 2 {
			continue
		}
		if key.vecB {
			quads = true
		} else {
			words = words || key.words
			halves = halves || !key.words
		}
	}
	return words, halves, quads
}

// ConvTileCount is the number of GEMM tile shapes shipped.
func ConvTileCount() int { return len(gemmTiles) }

// ConvTileName names tile i.
func ConvTileName(i int) string { return gemmTiles[i].cfg.String() }

// ConvForcePath forces the GEMMs of a family kernel onto a path: "tiled"
// with tile index tile, "direct", "depthwise" (depthwise kernels where the
// shape allows, else as chosen), "coopmat" (cooperative matrices for the
// float16 GEMMs whose results are images, else as chosen; tile indexes
// the cooperative-matrix tiles), "coopmat-emulated" (the same through the
// shader's emulated build, on any device, with tile's emulated version),
// "small" (the
// data gradient's gather kernel for few input channels where the shape
// allows, else as chosen), "winograd" (Winograd F(4x4, 3x3) where the
// shape allows, its products on tile tile, else as chosen),
// "winograd-coopmat" and "winograd-coopmat-emulated" (Winograd with its
// products on cooperative-matrix tile tile, or its emulated build, for
// float16 images; float32 images run "winograd" with the model's tile)
// or "" to choose again. It reports false for a
// kernel of another family, a tile the device cannot run, or cooperative
// matrices on a device without them.
func ConvForcePath(k any, path string, tile int) bool {
	e, ok := k.(interface{ engine() *convEngine })
	if !ok {
		return false
	}
	eng := e.engine()
	switch path {
	case "":
		eng.force = nil
	case "tiled":
		if tile < 0 || tile >= len(gemmTiles) || !gemmTiles[tile].cfg.fits(eng.limits()) {
			return false
		}
		eng.force = &convChoice{path: convPathTiled, tile: tile}
	case "direct":
		eng.force = &convChoice{path: convPathDirect}
	case "depthwise":
		eng.force = &convChoice{path: convPathDepthwise}
	case "coopmat", "coopmat-emulated":
		c := convChoice{path: convPathCoopMat, ctile: tile, emu: path == "coopmat-emulated"}
		if !convCoopRuns(eng.limits(), c) {
			return false
		}
		eng.force = &c
	case "small":
		eng.force = &convChoice{path: convPathSmall}
	case "winograd":
		if tile < 0 || tile >= len(gemmTiles) || !gemmTiles[tile].cfg.fits(eng.limits()) {
			return false
		}
		eng.force = &convChoice{path: convPathWinograd, tile: tile}
	case "winograd-coopmat", "winograd-coopmat-emulated":
		c := convChoice{path: convPathWinogradCoop, ctile: tile, emu: path == "winograd-coopmat-emulated"}
		if !convCoopRuns(eng.limits(), c) {
			return false
		}
		eng.force = &c
	default:
		return false
	}
	return true
}

// ConvCoopTileOn describes cooperative-matrix tile i as the device runs
// it ("128x128x32/2x4 of 16x8x16 matrices"), or "" where it cannot; with
// emu, the emulated build's version ("64x64x16/2x2 of 16x8x8 matrices,
// emulated").
func ConvCoopTileOn(lim vk.Limits, i int, emu bool) string {
	c, ok := convCoopTileFor(lim, i)
	if emu {
		c, ok = convCoopEmuFor(lim, i)
	}
	if !ok {
		return ""
	}
	s := fmt.Sprintf("%v of %dx%dx%d matrices", c, c.cm, c.cn, c.ck)
	if emu {
		s += ", emulated"
	}
	return s
}

// ConvLastPath names the path of the last GEMM whose result is an image
// that a family kernel encoded ("tiled", "direct", "depthwise",
// "coopmat", "small", "winograd", "winograd-coopmat").
func ConvLastPath(k any) string {
	return k.(interface{ engine() *convEngine }).engine().last.String()
}

// ConvLastWeightsPath names the path of the last weight gradient a family
// kernel encoded through the GEMM engine ("tiled", "winograd" or
// "winograd-coopmat"; "tiled"
// before any).
func ConvLastWeightsPath(k any) string {
	return k.(interface{ engine() *convEngine }).engine().lastWeights.String()
}

// ConvOwnScratch returns the float32 values of a family kernel's own
// scratch (0 while it shares a ConvolutionScratch, or before it needs
// one).
func ConvOwnScratch(k any) int {
	if s := k.(interface{ engine() *convEngine }).engine().scratch; s != nil {
		return s.Len()
	}
	return 0
}

// ConvLastWinogradWeights returns the batch parts and the splits of the
// tiles of the last Winograd weight gradient a family kernel encoded.
func ConvLastWinogradWeights(k any) (parts, splits int) {
	p := k.(interface{ engine() *convEngine }).engine().lastWinogradWeights
	return p[0], p[1]
}

// ConvLastWinogradPart returns the most batch images a part of the last
// Winograd convolution or data gradient a family kernel encoded held.
func ConvLastWinogradPart(k any) int {
	return k.(interface{ engine() *convEngine }).engine().lastWinogradPart
}

// ConvLastCoopDirect reports whether the last Winograd convolution or
// data gradient a family kernel encoded, and its last Winograd weight
// gradient, had their products on cooperative matrices store straight
// from the registers (winogradCoopDirect).
func ConvLastCoopDirect(k any) (products, weights bool) {
	e := k.(interface{ engine() *convEngine }).engine()
	return e.lastCoopDirect, e.lastWeightsCoopDirect
}

// ConvLastCoopStage reports whether the last Winograd convolution's or
// data gradient's products a family kernel encoded staged their tiles
// (winogradCoopStage).
func ConvLastCoopStage(k any) bool {
	return k.(interface{ engine() *convEngine }).engine().lastCoopStage
}

// ConvLastGemmCoopDirect reports whether the last image GEMM on
// cooperative matrices a family kernel encoded stored straight from the
// registers (convCoopDirect).
func ConvLastGemmCoopDirect(k any) bool {
	return k.(interface{ engine() *convEngine }).engine().lastGemmCoopDirect
}

// ConvCoopShapes lists the matrix shapes ("16x8x16") the
// cooperative-matrix pipelines a family kernel has made were specialized
// with, sorted.
func ConvCoopShapes(k any) []string {
	var out []string
	for s := range k.(interface{ engine() *convEngine }).engine().coopShapes {
		out = append(out, fmt.Sprintf("%dx%dx%d", s[0], s[1], s[2]))
	}
	sort.Strings(out)
	return out
}

// ConvCoopAPIs returns the extensions ("khr", "nv") of the real
// cooperative-matrix pipelines a family kernel made, sorted.
func ConvCoopAPIs(k any) []string {
	var out []string
	for s := range k.(interface{ engine() *convEngine }).engine().coopAPIs {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// ConvCoopStageFits reports whether cooperative-matrix tile tile (its
// emulated build where emu) can stage its tile under coopstage=1 on a
// device of limits lim (winogradCoopStage, rows and bases aside).
func ConvCoopStageFits(lim vk.Limits, tile int, emu bool) bool {
	return winogradCoopStage(lim, ConvolutionTuning{CoopStage: true}, tile, emu, 8, 0)
}

// ConvCoopUsesKHR is convCoopKHR.
func ConvCoopUsesKHR(lim vk.Limits) bool { return convCoopKHR(lim) }

// ConvCoopListed is convCoopHas: whether the device lists matrix shape
// m x n x k through the extension the real builds use.
func ConvCoopListed(lim vk.Limits, m, n, k int) bool { return convCoopHas(lim, [3]int{m, n, k}) }

// ConvLastWinogradSplits returns the splits of the products' k of the
// last Winograd convolution or data gradient a family kernel encoded.
func ConvLastWinogradSplits(k any) int {
	return k.(interface{ engine() *convEngine }).engine().lastWinogradSplits
}

// WinogradSplits is winogradSplits.
func WinogradSplits(units, want, wgs, cin, bk int) (splits, chunk int) {
	return winogradSplits(units, want, wgs, cin, bk)
}

// SetWinogradScratchMax bounds the Winograd scratch of one part of the
// batch to n bytes (so that tests run several parts); the returned
// function restores the bound.
func SetWinogradScratchMax(n int) func() {
	old := winogradScratchMax
	winogradScratchMax = n
	return func() { winogradScratchMax = old }
}

// ConvPackedShaders names the shaders whose packed cooperative-matrix
// builds (convCoopPacked) a family kernel has made pipelines of, and
// counts the cooperative-matrix pipelines it has made without them.
func ConvPackedShaders(k any) (packed []string, unpacked int) {
	for key := range k.(interface{ engine() *convEngine }).engine().pipes {
		switch {
		case key.packed:
			packed = append(packed, key.shader.Name)
		case key.coop:
			unpacked++
		}
	}
	sort.Strings(packed)
	return packed, unpacked
}

// ConvTapMajor reports whether a family kernel has made pipelines whose
// strided data-gradient phases sum only their own taps (convTapMajor),
// and whether it has made phase pipelines that sum the whole grid.
func ConvTapMajor(k any) (own, grid bool) {
	for key := range k.(interface{ engine() *convEngine }).engine().pipes {
		if key.modeB == gemmBPhases {
			own = own || key.tapMajor
			grid = grid || !key.tapMajor
		}
	}
	return own, grid
}

// ConvPhaseSplitK reports whether a family kernel has made a pipeline of
// strided data-gradient phases that splits K (SPLITK 1).
func ConvPhaseSplitK(k any) bool {
	for key := range k.(interface{ engine() *convEngine }).engine().pipes {
		if key.modeB == gemmBPhases && key.splitk == 1 {
			return true
		}
	}
	return false
}

// ConvCol2im reports whether a family kernel has made a col2im pipeline
// (glsl/convolution_col2im.comp: a strided data gradient as a columns
// GEMM).
func ConvCol2im(k any) bool {
	for key := range k.(interface{ engine() *convEngine }).engine().pipes {
		if key.shader == spirv.ConvolutionCol2im {
			return true
		}
	}
	return false
}

// ConvDepthwiseVectors returns the values per load (VW: 1, 2, 4, 8) of
// the depthwise pipelines a family kernel has made (the forward kernel's
// and the weight gradient's), each once, in increasing order.
func ConvDepthwiseVectors(k any) []int {
	var ws []int
	for key := range k.(interface{ engine() *convEngine }).engine().pipes {
		if key.shader == spirv.ConvolutionDepthwise || key.shader == spirv.ConvolutionDepthwiseWeights {
			if w := int(max(key.vw, 1)); !slices.Contains(ws, w) {
				ws = append(ws, w)
			}
		}
	}
	sort.Ints(ws)
	return ws
}

// ConvCoopSplitK reports whether a family kernel has made a
// cooperative-matrix image-GEMM pipeline that splits K (SPLITK 1).
func ConvCoopSplitK(k any) bool {
	for key := range k.(interface{ engine() *convEngine }).engine().pipes {
		if key.shader == spirv.ConvolutionGemmCoopmat && key.splitk == 1 {
			return true
		}
	}
	return false
}

// ConvWinogradQuadStores reports whether a family kernel has made a
// Winograd product pipeline on the tiles that stores quads.
func ConvWinogradQuadStores(k any) bool {
	for key := range k.(interface{ engine() *convEngine }).engine().pipes {
		if key.shader == spirv.ConvolutionWinogradGemm && key.vecC {
			return true
		}
	}
	return false
}

// ConvWinogradChannelsFast reports whether a family kernel has made
// Winograd weight-gradient pipelines with D and V channels fastest.
func ConvWinogradChannelsFast(k any) bool {
	for key := range k.(interface{ engine() *convEngine }).engine().pipes {
		if key.shader == spirv.ConvolutionWinogradGemm && key.cf {
			return true
		}
	}
	return false
}

// ConvIm2col reports whether a family kernel has made an im2col pipeline
// (glsl/convolution_im2col.comp: a convolution as an explicit im2col and
// a GEMM over its columns).
func ConvIm2col(k any) bool {
	for key := range k.(interface{ engine() *convEngine }).engine().pipes {
		if key.shader == spirv.ConvolutionIm2col {
			return true
		}
	}
	return false
}

// SetIm2colScratchMax sets the bytes of columns one part of the batch
// may use, and returns the previous bound.
func SetIm2colScratchMax(n int) int {
	old := im2colScratchMax
	im2colScratchMax = n
	return old
}

// ConvTiledSplitK reports whether a family kernel has made a tiled
// image-GEMM pipeline that splits K (convolution_gemm.comp's SPLITK 1)
// on tiledImageSplits' tile.
func ConvTiledSplitK(k any) bool {
	for key := range k.(interface{ engine() *convEngine }).engine().pipes {
		if key.shader == spirv.ConvolutionGemm && key.splitk == 1 && int(key.tile) == tiledSplitTile {
			return true
		}
	}
	return false
}

// ConvReduceLanes is the lanes convolution_reduce.comp gives each of count
// outputs of splits partial sums on dev by default (reduceLanes).
func ConvReduceLanes(dev *vk.Device, splits, count int) int {
	lim := dev.Limits()
	return reduceLanes(gemmUnits(lim, ConvolutionTuning{}), workgroup(lim), splits, count)
}

// ConvSplitK reports whether kernel k ran an image GEMM on the tiles with
// its K split (any tile).
func ConvSplitK(k any) bool {
	for key := range k.(interface{ engine() *convEngine }).engine().pipes {
		if key.shader == spirv.ConvolutionGemm && key.splitk == 1 {
			return true
		}
	}
	return false
}

// ConvLastBias returns how the last bias gradient pass a family kernel
// encoded added (its last dispatch): "quads", "values", or "" where none
// ran (a bias gradient fused into the weights' GEMM).
func ConvLastBias(k any) string {
	return k.(interface{ engine() *convEngine }).engine().lastBias
}
