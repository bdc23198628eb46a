package ops

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// The convolution family's compute engine: one implicit GEMM for every
// kernel of the family (convolution, its data and weight gradients, the
// transpose convolution, fully connected layers), and a direct
// memory-bound path for depthwise convolutions.
//
// Paths (convPath), chosen in one place (gemmChoose for GEMMs whose
// results are images, convPlanWeights for weight gradients, under the
// model of gemmCost; ConvolutionTuning and tests can force one):
//
//   - tiled (glsl/gemm.glsl): a workgroup computes a BM x BN tile of C
//     through shared memory, each invocation a TM x TN block in registers;
//     the tile shapes (gemmTiles) are specialization constants, and a
//     device uses those its shared memory and workgroup size allow;
//   - direct: one invocation per output and a plain loop over K, for
//     problems too small for a tile or devices no tile fits;
//   - depthwise (glsl/convolution_depthwise*.comp): groups equal to the
//     input channels, where a GEMM per channel would be one row tall;
//   - cooperative matrix (glsl/gemm_coopmat.glsl): tensor cores through
//     VK_NV_cooperative_matrix, or matrix units through
//     VK_KHR_cooperative_matrix where a device lists only that (AMD,
//     Intel, Mesa 26's lavapipe; convCoopKHR), float16 products
//     accumulated in float32, for float16 images where the device has
//     them (convCoopMatSupported), where convCoopDefault says so or a
//     ConvolutionTuning asks, in one of the tiles of convCoopTiles
//     (ConvolutionTuning.CoopTile) with the device's subgroups;
//   - small (glsl/convolution_data_small.comp): the data gradient of a
//     convolution with few input channels per group (an RGB stem), where a
//     GEMM's M would be a sliver of its tile.
//   - Winograd (convolution_winograd.go): 3x3 convolutions of stride and
//     dilation 1 without groups, their data and weight gradients, as
//     transforms around 36 GEMMs on the tiles (winogradChosen decides,
//     before any other path).
//
// Weight gradients reduce over the batch and the pixels, a long K: it is
// split into chunks (split-K) whose partial sums land in a scratch image
// and are added in a fixed order by glsl/convolution_reduce.comp, so the
// results repeat bit for bit without atomics; the bias gradient comes out
// of the same tiles (row sums of dy). Image GEMMs can split K the same way
// (convolution_gemm.comp's and convolution_gemm_coopmat.comp's SPLITK), a
// second pass adding the splits and finishing the outputs: on the tiles
// where a ConvolutionTuning asks, and by default in two for deep GEMMs
// from windows of several taps whose tiles would leave multiprocessors
// short of workgroups (tiledImageSplits; gemmBest's model does not split
// image GEMMs, see there), on cooperative matrices also by default for
// deep 1x1 GEMMs of too few tiles to fill the device (coopImageSplits).

// gemmConfig is one tile shape of glsl/gemm.glsl.
type gemmConfig struct{ bm, bn, bk, tm, tn int }

func (c gemmConfig) threads() int { return (c.bm / c.tm) * (c.bn / c.tn) }

// shared is the bytes of shared memory the tile uses: two slices of A and
// B, rows padded by 4 floats.
func (c gemmConfig) shared() int { return 2 * c.bk * (c.bm + 4 + c.bn + 4) * 4 }

func (c gemmConfig) String() string {
	return fmt.Sprintf("%dx%dx%d/%dx%d", c.bm, c.bn, c.bk, c.tm, c.tn)
}

// valid reports whether the tile satisfies gemm.glsl's load layouts: every
// invocation loads whole rows or columns of a slice in both the K-fast and
// the M/N-fast layouts, and TM, TN are multiples of 4.
func (c gemmConfig) valid() bool {
	t := c.threads()
	ok := func(d int) bool {
		return t%c.bk == 0 && d%(t/c.bk) == 0 && t%d == 0 && c.bk%(t/d) == 0
	}
	return c.tm%4 == 0 && c.tn%4 == 0 && c.bm%(4*c.tm) == 0 && c.bn%(4*c.tn) == 0 && ok(c.bm) && ok(c.bn)
}

// fits reports whether the device can run the tile.
func (c gemmConfig) fits(lim vk.Limits) bool {
	t := uint32(c.threads())
	return t <= lim.MaxComputeWorkGroupInvocations && t <= lim.MaxComputeWorkGroupSize[0] && uint32(c.shared()) <= lim.MaxComputeSharedMemorySize
}

// gemmTiles are the tile shapes shipped, largest first, with the rate of
// each in the three GEMM shaders (index gemmKind): its multiply-adds per
// unit of time on a multiprocessor that holds enough of its workgroups,
// relative to tile 0 in convolution_gemm.comp. Measured on an H100
// (issue 15's sweep: the 8x8 blocks reach 30 TFLOP/s there, 4x8 24, 4x4
// 21 and, in workgroups of 64, 14; the weight-gradient shader's 8x8 block
// runs some 15 times slower than its 4x8, its registers spilling, unless
// built with the tile fixed at compile time, as it is: its "t0" build,
// rated 0.9 since the sweeps of forced tiles on an H100 and an H200
// (bench/results/h100-2026-11-28-nodes run 2, h100-2026-11-27-defaults
// run 3, h200-2026-11-28-s2 runs 1 and 2) found it the fastest tile of
// the stride-2 3x3, 1x1 512->2048 and 3x3@14 weight gradients (H200,
// float32, µs, tile 0 against the tile 2 chosen at its former rate of
// 0.066: 153 / 200 for 64->128 at 56, 147 / 168, 163 / 198, 133 / 145),
// and of VGG's on the GEMM path (1738 against 2060 on tile 1); the
// Winograd products' 8x8
// block, specialized, ran 10 times slower than their 4x8 and, fixed at
// compile time ("t0" builds of both shaders), still 5-30% slower (H100,
// 2026-11-27: 3x3 64@56 forward 1993 us specialized, 223 fixed, 185 on
// the 4x8, which beat the 4x4s on every ResNet layer)) and a model for
// other devices.
var gemmTiles = [...]struct {
	cfg  gemmConfig
	rate [3]float64
}{
	{gemmConfig{128, 128, 8, 8, 8}, [3]float64{1.0, 0.9, 0.70}},
	{gemmConfig{64, 128, 8, 4, 8}, [3]float64{0.79, 0.75, 0.85}},
	{gemmConfig{64, 64, 16, 4, 4}, [3]float64{0.70, 0.71, 0.70}},
	{gemmConfig{32, 32, 16, 4, 4}, [3]float64{0.47, 0.42, 0.47}},
}

// gemmKind is which GEMM shader a choice is for.
type gemmKind int

const (
	gemmImage    gemmKind = iota // convolution_gemm.comp: results are an image
	gemmWeights                  // convolution_gemm_weights.comp: split-K weight gradients
	gemmWinograd                 // convolution_winograd_gemm.comp: Winograd products
)

// convPath is how one GEMM of the family runs.
type convPath int

const (
	convPathTiled convPath = iota
	convPathDirect
	convPathDepthwise
	// convPathCoopMat: tensor cores through VK_NV_cooperative_matrix or
	// VK_KHR_cooperative_matrix (convCoopKHR; float16 A and B, float32
	// accumulation), for GEMMs of float16 images on devices
	// convCoopMatSupported accepts.
	convPathCoopMat
	// convPathSmall: the data gradient of a convolution with few input
	// channels per group (glsl/convolution_data_small.comp).
	convPathSmall
	// convPathWinograd: F(4x4, 3x3) Winograd transforms around 36 GEMMs
	// (ops/convolution_winograd.go); tile is the products' tile.
	convPathWinograd
	// convPathWinogradCoop: the same transforms around products on
	// cooperative matrices (glsl/convolution_winograd_coopmat.comp, U and
	// V as halves), for float16 images; ctile and emu as convPathCoopMat's.
	convPathWinogradCoop
)

func (p convPath) String() string {
	switch p {
	case convPathTiled:
		return "tiled"
	case convPathDirect:
		return "direct"
	case convPathDepthwise:
		return "depthwise"
	case convPathCoopMat:
		return "coopmat"
	case convPathSmall:
		return "small"
	case convPathWinograd:
		return "winograd"
	case convPathWinogradCoop:
		return "winograd-coopmat"
	}
	return fmt.Sprintf("convPath(%d)", int(p))
}

// convChoice is a path and, for convPathTiled, the index of its tile in
// gemmTiles and its K in splits of chunk (image GEMMs: splits > 1 runs
// SPLITK); for convPathCoopMat the index of its tile in convCoopTiles,
// ctile, and emu (tests): its emulated build.
type convChoice struct {
	path          convPath
	tile          int
	splits, chunk int
	ctile         int
	emu           bool
	byTap         bool // the phases split K by tap (phaseSplit)
}

// convCoopMatSupported reports whether the device can run the
// cooperative-matrix path (glsl/convolution_gemm_coopmat.comp) with its
// default tile, convCoopTiles[0] (convCoopTileFor).
func convCoopMatSupported(lim vk.Limits) bool {
	_, ok := convCoopTileFor(lim, 0)
	return ok
}

// convCoopConfig is a tile of the cooperative-matrix path: BM x BN
// outputs per workgroup of WM x WN subgroups of SUBGROUP invocations,
// slices BK deep, matrices CM x CN x CK.
type convCoopConfig struct{ bm, bn, bk, wm, wn, cm, cn, ck, subgroup int }

func (c convCoopConfig) threads() int { return c.wm * c.wn * c.subgroup }

// shared is the bytes of shared memory the tile uses with elem bytes per
// staged value (2: halves; 4: the emulated build's floats): two slices of
// A and of B, each in the larger of its two layouts (rows padded by 8
// values; gemm_coopmat.glsl stages a slice one way or the other by the
// operand mode), and the epilogue's CM x CN floats per subgroup.
func (c convCoopConfig) shared(elem int) int {
	a := max(c.bm*(c.bk+8), c.bk*(c.bm+8))
	b := max(c.bn*(c.bk+8), c.bk*(c.bn+8))
	return 2*(a+b)*elem + c.wm*c.wn*c.cm*c.cn*4
}

// valid reports whether the tile satisfies gemm_layout.glsl's load
// layouts (as gemmConfig.valid) and gemm_coopmat.glsl's: the subgroups'
// blocks are whole matrices, a slice whole matrices deep, and an
// accumulator whole values per lane. (The real build's matrices are at
// least 8 deep, so its slices are multiples of 8 halves, 16-byte rows.)
func (c convCoopConfig) valid() bool {
	t := c.threads()
	if c.cm <= 0 || c.cn <= 0 || c.ck <= 0 || c.subgroup <= 0 || c.bk <= 0 {
		return false
	}
	ok := func(d int) bool {
		return t%c.bk == 0 && d%(t/c.bk) == 0 && t%d == 0 && c.bk%(t/d) == 0
	}
	return c.bm%(c.wm*c.cm) == 0 && c.bn%(c.wn*c.cn) == 0 && c.bk%c.ck == 0 &&
		(c.cm*c.cn)%c.subgroup == 0 && ok(c.bm) && ok(c.bn)
}

// fits reports whether the device's workgroups and shared memory hold
// the tile, elem bytes per staged value (see shared).
func (c convCoopConfig) fits(lim vk.Limits, elem int) bool {
	t := uint32(c.threads())
	return t <= lim.MaxComputeWorkGroupInvocations && t <= lim.MaxComputeWorkGroupSize[0] &&
		uint32(c.shared(elem)) <= lim.MaxComputeSharedMemorySize
}

// String names the tile without its matrices: "128x128x32/2x4" (outputs,
// slice depth, subgroups along m and n).
func (c convCoopConfig) String() string {
	return fmt.Sprintf("%dx%dx%d/%dx%d", c.bm, c.bn, c.bk, c.wm, c.wn)
}

// convCoopTiles are the cooperative-matrix path's tiles
// (ConvolutionTuning.CoopTile, cooptile=N), subgroups of 32; their
// matrices are the first of convCoopShapes the device lists. Tile 0 is
// what coopmat=1 forces; gemmChoose's default is convCoopDefaultTile.
// Every one fits 48 KiB of shared memory with the shapes of
// convCoopShapes (128 x 128 x 32 of 16x16 matrices: exactly 48 KiB).
var convCoopTiles = [...]convCoopConfig{
	{bm: 64, bn: 64, bk: 32, wm: 2, wn: 2, subgroup: 32},
	{bm: 128, bn: 64, bk: 32, wm: 4, wn: 2, subgroup: 32},
	{bm: 64, bn: 128, bk: 32, wm: 2, wn: 4, subgroup: 32},
	{bm: 128, bn: 128, bk: 32, wm: 2, wn: 4, subgroup: 32},
	{bm: 128, bn: 128, bk: 32, wm: 4, wn: 2, subgroup: 32},
	{bm: 128, bn: 128, bk: 32, wm: 2, wn: 2, subgroup: 32},
	{bm: 64, bn: 64, bk: 64, wm: 2, wn: 2, subgroup: 32},
	{bm: 128, bn: 128, bk: 16, wm: 2, wn: 4, subgroup: 32},
	{bm: 128, bn: 64, bk: 16, wm: 2, wn: 2, subgroup: 32},
	{bm: 64, bn: 128, bk: 16, wm: 2, wn: 2, subgroup: 32},
	{bm: 64, bn: 128, bk: 16, wm: 1, wn: 4, subgroup: 32},
	// More subgroups a tile, fewer accumulators each (2 x 4 of 16 x 8
	// matrices a subgroup): fewer registers an invocation, more warps a
	// multiprocessor holds.
	{bm: 128, bn: 128, bk: 16, wm: 4, wn: 4, subgroup: 32},
	{bm: 64, bn: 128, bk: 16, wm: 2, wn: 4, subgroup: 32},
}

// convCoopDefaultTile is the tile gemmChoose picks by default
// (128 x 128 x 32 in 2 x 4 subgroups): the fastest of convCoopTiles on
// every layer of an H100 sweep where cooperative matrices won at all.
const convCoopDefaultTile = 3

// convCoopDefault reports whether gemmChoose puts a float16 image GEMM of
// m x n outputs, depth k, from a window of taps taps, on cooperative
// matrices by default:
//   - windows of more than one tap with at least 128 output and 64 input
//     channels (k >= 64*taps). On an H100 (2026-11-24, BenchmarkConvolutionGPU
//     with VKMPS_BENCH_SWEEP=1) convCoopDefaultTile ran 3x3 convolutions
//     of 256 channels at 14x14 in 240 us forward and 260 us data gradient
//     against the float16 tiles' 489 and 491, and VGG's 128 channels at
//     112x112 in 1972 and 2019 us against 2234 and 2275; with 64 output
//     channels (3x3 at 56x56: 400 against 323 us) it lost. From 64 input
//     channels to 128 output ones (ResNet-18's 3x3 stride-2 layer at
//     56x56, 2026-11-28, bench/results/h100-2026-11-28-nodes run 2) it
//     took the forward from 144 to 85 us.
//   - 1x1 windows with at least 256 channels on each side and 1024
//     columns. On an H100 (2026-11-27, bench/results/h100-2026-11-27-coop,
//     run 2) 32x512x7x7 1x1 layers ran, forward and data gradient, 512 to
//     2048 channels in 75 and 138 us against the tiles' 146 and 212, and
//     512 to 512 in 32 and 40 against 49 and 58 (convCoopTileChoose's
//     tiles; before the predicated loads of convolution_gemm_fetch.glsl
//     they had lost).
//   - GEMMs of 49 to 64 rows, at least 128 deep and 4096 columns, on
//     convCoopRowsTile (64 x 128). On an H200 (2026-11-29,
//     bench/results/h200-2026-11-29-s8, run 1) it took the stem's forward
//     (64 rows, depth 147) from 310 to 245 us, the 64 -> 128 stride-2
//     3x3 data gradient (64 rows) from 192 to 154 and the 1x1 one from 53
//     to 44, where 128-row tiles leave half their rows empty (the
//     stem on tile 3: 377).
//   - 1x1 windows of at least 128 rows, 64 deep and 16384 columns. On an
//     H200 (2026-11-29, bench/results/h200-2026-11-29-s8, run 8) ResNet-50's
//     float16 1x1 layers against the tiles: 512 -> 128 at 28x28 forward
//     103 -> 50 us, data gradient 114 -> 47; 128 -> 512 forward 119 -> 66,
//     data gradient 99 -> 35; 64 -> 256 at 56x56 forward 141 -> 109, 256 ->
//     64 data gradient 137 -> 76 (the data gradients on coopColumnsTile).
func convCoopDefault(m, n, k, taps int) bool {
	if m <= convCoopRows {
		return m > convCoopRows*3/4 && k >= 128 && n >= 4096
	}
	if taps == 1 {
		return (m >= 256 && k >= 256 && n >= 1024) || (m >= 128 && k >= 64 && n >= 16384)
	}
	return m >= 128 && k >= 64*taps
}

// convCoopTileChoose is the cooperative-matrix tile gemmChoose takes by
// default for z GEMMs of m x n outputs from windows of taps taps on units
// multiprocessors: convCoopRowsTile (64 x 128) for GEMMs of at most
// convCoopRows rows, else convCoopDefaultTile (128 x 128), except 1x1 windows
// whose 128 x 128 tiles would not give every multiprocessor one, which
// take 64 x 128 (tile 2: twice the workgroups). The H100 run of
// convCoopDefault: 512 to 2048 channels forward (208 tiles of 128 x 128)
// 75 us on tile 3, 90 on 128 x 64; its data gradient (52 of them) 138 on
// tile 2, 237 on tile 3; 512 to 512 forward 32 on tile 2, 41 on tile 3.
func convCoopTileChoose(units, m, n, z, taps int) int {
	if m <= convCoopRows {
		return convCoopRowsTile
	}
	if taps == 1 && (m+127)/128*((n+127)/128)*z < units {
		return 2
	}
	return convCoopDefaultTile
}

// convCoopRowsTile is the cooperative-matrix tile of GEMMs of at most
// convCoopRows rows (convCoopDefault, and the Winograd products of
// winogradCoopTile): 64 x 128 x 16 in 1 x 4 subgroups, each 64 x 32. Of
// the 64-row tiles measured (runs 1 and 2 of convCoopDefault's
// directory) 64 x 128 x 16 in 2 x 2 subgroups (tile 9) came within 1-2%,
// 64 x 256 x 16 in 2 x 4 within 4% (not kept), 64 x 128 x 32 in 2 x 4
// (tile 2) took the stem 280 us and 64 x 128 x 32 in 2 x 2 (not kept)
// 400.
const (
	convCoopRowsTile = 10
	convCoopRows     = 64
)

// convCoopShapes are the matrix shapes (M, N, K) the tiles can use,
// preferred first but by the forward GEMMs, which prefer 16x16x16
// (convCoopShapeFor; ConvolutionTuning.CoopShape numbers them from 1).
// NVIDIA's driver lists 16x16x16, 16x8x16 and 16x8x8 for float16 with
// float32 accumulators, in that order (both extensions); AMD's RDNA3
// 16x16x16, Intel's Xe2 8x16x16 and Mesa 26's lavapipe 8x8x8 (KHR).
var convCoopShapes = [...][3]int{{16, 8, 16}, {16, 16, 16}, {16, 8, 8}, {8, 8, 8}, {8, 16, 16}}

// convCoopKHR reports whether the real cooperative-matrix builds run
// through VK_KHR_cooperative_matrix (their "khr" variants,
// Limits.CooperativeMatrixKHR) on a device of limits lim: where its
// VK_NV_cooperative_matrix list (CooperativeMatrixNV) has none of
// convCoopShapes, the extension preferred where both are (the engine's
// limits clear that list under ConvolutionTuning.CoopKHR).
func convCoopKHR(lim vk.Limits) bool {
	for _, s := range convCoopShapes {
		if lim.HasCooperativeMatrix(uint32(s[0]), uint32(s[1]), uint32(s[2])) {
			return false
		}
	}
	return true
}

// convCoopHas reports whether the device lists matrix shape s (float16 A
// and B, float32 C and D) through the extension convCoopKHR chooses.
func convCoopHas(lim vk.Limits, s [3]int) bool {
	if convCoopKHR(lim) {
		return lim.HasCooperativeMatrixKHR(uint32(s[0]), uint32(s[1]), uint32(s[2]))
	}
	return lim.HasCooperativeMatrix(uint32(s[0]), uint32(s[1]), uint32(s[2]))
}

// convCoopForSubgroup returns tile c (defined for subgroups of 32) for
// subgroups of size invocations with the same outputs, slices and
// threads: the subgroups doubled along m or n (the longer block per
// subgroup first) for smaller subgroups (lavapipe's 8, Intel's 16),
// halved for larger ones (AMD's 64), each subgroup's block still whole
// matrices; false where that cannot be.
func convCoopForSubgroup(c convCoopConfig, size int) (convCoopConfig, bool) {
	if size <= 0 {
		return c, false
	}
	for c.subgroup > size {
		switch {
		case c.bm/c.wm >= c.bn/c.wn && (c.bm/(2*c.wm))%c.cm == 0 && c.bm%(2*c.wm) == 0:
			c.wm *= 2
		case (c.bn/(2*c.wn))%c.cn == 0 && c.bn%(2*c.wn) == 0:
			c.wn *= 2
		case (c.bm/(2*c.wm))%c.cm == 0 && c.bm%(2*c.wm) == 0:
			c.wm *= 2
		default:
			return c, false
		}
		if c.subgroup%2 != 0 {
			return c, false
		}
		c.subgroup /= 2
	}
	for c.subgroup < size {
		switch {
		case c.wn > 1 && c.wn%2 == 0:
			c.wn /= 2
		case c.wm > 1 && c.wm%2 == 0:
			c.wm /= 2
		default:
			return c, false
		}
		c.subgroup *= 2
	}
	return c, c.subgroup == size
}

// convCoopTileFor returns cooperative-matrix tile i (convCoopTiles) with
// the first matrix shape of convCoopShapes the device lists that the tile
// can use, and whether the device can run it: package vk found
// VK_NV_cooperative_matrix or VK_KHR_cooperative_matrix with everything
// their SPIR-V needs and enabled it (Limits.CooperativeMatrixNV,
// CooperativeMatrixKHR; convCoopKHR chooses), it lists a float16 x
// float16 + float32 shape at subgroup scope, the tile's subgroups can be
// the device's (convCoopForSubgroup), it stores float16 images, and the
// tile fits its workgroups and shared memory.
func convCoopTileFor(lim vk.Limits, i int) (convCoopConfig, bool) {
	if i < 0 || i >= len(convCoopTiles) {
		return convCoopConfig{}, false
	}
	c := convCoopTiles[i]
	if !lim.Float16Storage {
		return c, false
	}
	for _, s := range convCoopShapes {
		if convCoopHas(lim, s) {
			t := c
			t.cm, t.cn, t.ck = s[0], s[1], s[2]
			t, ok := convCoopForSubgroup(t, int(lim.SubgroupSize))
			if ok && t.valid() && t.fits(lim, 2) {
				return t, true
			}
		}
	}
	return c, false
}

// convCoopShapeFor is the matrix shape (ConvolutionTuning.CoopShape's
// numbering, 0: the device's order) of the cooperative-matrix pipeline
// of key k under tuning t: the tuning's where it names one, else 16x16x16
// (2) for the forward GEMMs of convolutions (convolution_gemm_coopmat.comp
// over weight rows, real builds), 0 for the others. On an H100
// (bench/results/h100-2026-12-07-s25, run 4, two repetitions each)
// 16x16x16 took the float16 stem's forward from 236.0 to 220.3 µs, the
// 3x3 stride-2 128 -> 256 forward from 75.7 to 73.8, the 1x1 1024 ->
// 1024 forward at 28x28 from 551.6 to 534.7 and 512 -> 2048 at 7x7 from
// 76.2 to 75.2, but the Winograd products (3x3 256@14 forward 64.4 ->
// 81.5, VGG's 331 -> 445) and the data gradients (1x1 1024 at 28x28
// 439 -> 714, col2im's 69 -> 87) lost, and the ResNet-18 float16 step
// with 16x16x16 everywhere took 6.45 ms against 5.95.
func convCoopShapeFor(k convPipeKey, t ConvolutionTuning) int {
	switch {
	case t.CoopShape != 0:
		return t.CoopShape
	case k.shader == spirv.ConvolutionGemmCoopmat && !k.emu && int(k.modeA) == gemmAWeights:
		return 2
	}
	return 0
}

// convCoopShaped returns tile c with matrix shape convCoopShapes[shape-1]
// (ConvolutionTuning.CoopShape) where the device lists it (any shape in
// the emulated build, emu, its depth at most the slice's) and the tile
// can use it and fits; else c as it is (shape 0: the device's order, see
// convCoopTileFor).
func convCoopShaped(lim vk.Limits, c convCoopConfig, shape int, emu bool) convCoopConfig {
	if shape < 1 || shape > len(convCoopShapes) {
		return c
	}
	s := convCoopShapes[shape-1]
	t := c
	t.cm, t.cn, t.ck = s[0], s[1], s[2]
	elem := 2
	if emu {
		t.ck, elem = min(t.ck, t.bk), 4
	} else if !convCoopHas(lim, s) {
		return c
	}
	if !t.valid() || !t.fits(lim, elem) {
		return c
	}
	return t
}

// convCoopEmuShape is the matrix shape of the emulated build (tests):
// 16x8x8, so that a slice of 16 holds two along k.
var convCoopEmuShape = [3]int{16, 8, 8}

// convCoopEmuFor returns the emulated build's version of tile i (tests,
// on any device), and whether the device can run it: the same outputs
// and subgroups, matrices convCoopEmuShape, and slices halved until its
// float slices fit the device's shared memory (lavapipe's 32 KiB), down
// to 4 deep, the matrices as deep as the slice below 8 (the 128 x 128
// tiles: an emulation needs no 16-byte rows).
func convCoopEmuFor(lim vk.Limits, i int) (convCoopConfig, bool) {
	return convCoopEmuFit(lim, i, false)
}

// convCoopEmuFit is convCoopEmuFor, its slices halved until they fit
// beside the staged tile of gemmEpilogueTile too where staged
// (convCoopStageBytes).
func convCoopEmuFit(lim vk.Limits, i int, staged bool) (convCoopConfig, bool) {
	if i < 0 || i >= len(convCoopTiles) {
		return convCoopConfig{}, false
	}
	c := convCoopTiles[i]
	c.cm, c.cn, c.ck = convCoopEmuShape[0], convCoopEmuShape[1], convCoopEmuShape[2]
	extra := 0
	if staged {
		extra = convCoopStageBytes(c)
	}
	fits := func() bool { return c.fits(lim, 4) && uint32(c.shared(4)+extra) <= lim.MaxComputeSharedMemorySize }
	for !fits() && c.bk > 4 {
		c.bk /= 2
		c.ck = min(c.ck, c.bk)
	}
	return c, c.valid() && fits()
}

// convCoopStageBytes is the shared memory gemm_coopmat.glsl's
// gemmEpilogueTile adds to tile c: BM rows of BN + 8 halves.
func convCoopStageBytes(c convCoopConfig) int { return c.bm * (c.bn + 8) * 2 }

// tileDims returns the BM x BN x BK tile of a tiled or cooperative-matrix
// choice on a device of limits lim; false for the other paths.
func (c convChoice) tileDims(lim vk.Limits) (bm, bn, bk int, ok bool) {
	switch c.path {
	case convPathTiled:
		t := gemmTiles[c.tile].cfg
		return t.bm, t.bn, t.bk, true
	case convPathCoopMat:
		t := c.coopTile(lim)
		return t.bm, t.bn, t.bk, true
	}
	return 0, 0, 0, false
}

// coopTile returns the tile of the cooperative-matrix build chosen on a
// device of limits lim.
func (c convChoice) coopTile(lim vk.Limits) convCoopConfig {
	if c.emu {
		t, _ := convCoopEmuFor(lim, c.ctile)
		return t
	}
	t, _ := convCoopTileFor(lim, c.ctile)
	return t
}

// gemmDirectBelow is the multiply-adds under which a GEMM takes the direct
// path: a tile's barriers and staging do not pay for themselves there.
const gemmDirectBelow = 1 << 16

// The choice model (gemmCost): a GEMM's workgroups spread evenly over the
// device's multiprocessors (units), each of which runs its share, per =
// ceil(workgroups / units), one after another at the tile's rate, slowed
// by too few warps to hide latency (occupancy: a multiprocessor with 8
// warps runs at 80%, with 16 or more at full speed); every workgroup
// costs its multiply-adds BM*BN*(k + gemmOverheadK + 2*BK) (the tile's
// padding included: tiles past M or N are paid for). Split-K partial sums
// cost their traffic, gemmMACPerByte multiply-adds per byte per
// multiprocessor, and a dispatch, gemmDispatchMAC. The constants come
// from an H100 (132 multiprocessors, 30 TFLOP/s at rate 1, some 3 TB/s);
// gemmDefaultUnits stands in where a device does not report its count.
const (
	gemmOverheadK    = 32
	gemmMACPerByte   = 5.0
	gemmDispatchMAC  = 228e3
	gemmDefaultUnits = 64
)

// gemmUnits returns the multiprocessors the model spreads work over.
func gemmUnits(lim vk.Limits, t ConvolutionTuning) int {
	switch {
	case t.ComputeUnits > 0:
		return t.ComputeUnits
	case lim.ComputeUnits > 0:
		return int(lim.ComputeUnits)
	}
	return gemmDefaultUnits
}

// gemmCost models the time of wgs workgroups of tile c, each k deep, at
// rate on units multiprocessors of subgroups of warp invocations, in
// multiply-adds of tile 0 per multiprocessor.
func gemmCost(c gemmConfig, rate float64, units, warp, wgs, k int) float64 {
	per := (wgs + units - 1) / units
	resident := min(per, max(1, 2048/c.threads()))
	warps := float64(resident*c.threads()) / float64(warp)
	occ := min(1, 0.6+warps/40)
	return float64(per) * float64(c.bm*c.bn) * float64(k+gemmOverheadK+2*c.bk) / (rate * occ)
}

func gemmWarp(lim vk.Limits) int {
	if lim.SubgroupSize > 0 {
		return int(lim.SubgroupSize)
	}
	return 32
}

// gemmForced returns the choice a test's force or the kernel's tuning
// imposes, if any (a forced tile the device cannot run is ignored).
func gemmForced(lim vk.Limits, t ConvolutionTuning, force *convChoice, f16, coop bool) (convChoice, bool) {
	if force != nil && force.path != convPathDepthwise && force.path != convPathSmall && force.path != convPathWinograd && force.path != convPathWinogradCoop {
		if force.path == convPathTiled && !gemmTiles[force.tile].cfg.fits(lim) {
			return convChoice{}, false
		}
		if force.path == convPathCoopMat && !(f16 && coop && convCoopRuns(lim, *force)) {
			return convChoice{}, false
		}
		return *force, true
	}
	switch t.Path {
	case ConvolutionPathDirect:
		return convChoice{path: convPathDirect}, true
	case ConvolutionPathTiled:
		if gemmTiles[t.Tile].cfg.fits(lim) {
			return convChoice{path: convPathTiled, tile: t.Tile}, true
		}
	case ConvolutionPathCoopMat:
		c := convChoice{path: convPathCoopMat, ctile: t.CoopTile}
		if f16 && coop && convCoopRuns(lim, c) {
			return c, true
		}
	}
	return convChoice{}, false
}

// convCoopRuns reports whether the device runs the cooperative-matrix
// tile of c (its emulated build's when c.emu).
func convCoopRuns(lim vk.Limits, c convChoice) bool {
	ok := false
	if c.emu {
		_, ok = convCoopEmuFor(lim, c.ctile)
	} else {
		_, ok = convCoopTileFor(lim, c.ctile)
	}
	return ok
}

// gemmChoose picks the path, tile and split count of an image GEMM of
// m x n outputs, depth k (from windows of taps taps), in z independent
// instances (groups, phases), over float16 images when f16 (coop tells
// whether the shader at hand has a cooperative-matrix build); split says
// whether its K may be split (SPLITK). It is the one place where an image
// GEMM's path is chosen; a test's forced choice comes first, then the
// kernel's tuning, then cooperative matrices where convCoopDefault says
// so and the device runs them (not under NoCoopMat), then the cheapest
// tile and split count under gemmCost (gemmBest), its K split where its
// tiles would leave most multiprocessors idle (fewTileSplits).
func gemmChoose(lim vk.Limits, t ConvolutionTuning, force *convChoice, m, n, k, taps, z int, f16, coop, split bool) convChoice {
	c, forced := gemmForced(lim, t, force, f16, coop)
	if forced && c.path == convPathCoopMat {
		return coopImageSplits(lim, t, c, m, n, k, taps, z, split, true)
	}
	if forced && c.path != convPathTiled {
		return c
	}
	if !forced {
		if uint64(m)*uint64(n)*uint64(k)*uint64(z) < gemmDirectBelow {
			return convChoice{path: convPathDirect}
		}
		cc := convChoice{path: convPathCoopMat, ctile: convCoopTileChoose(gemmUnits(lim, t), m, n, z, taps)}
		if f16 && coop && !t.NoCoopMat && convCoopDefault(m, n, k, taps) && convCoopRuns(lim, cc) {
			return coopImageSplits(lim, t, cc, m, n, k, taps, z, split, false)
		}
	}
	only := -1
	if forced {
		only = c.tile
	} else if s, ok := tiledImageSplits(lim, t, m, n, k, taps, z, split); ok {
		return s
	}
	return fewTileSplits(lim, t, gemmBest(lim, t, gemmImage, m, n, k, z, 1, split, only), m, n, k, z, split)
}

// coopColumnsTile returns c, an image GEMM's choice, on coopSplitTile
// (128 x 128 x 16) instead of convCoopDefaultTile (128 x 128 x 32) or
// tile 2 (64 x 128 x 32, for GEMMs of few tiles) where its A is the
// weights read by columns (modeA gemmAColumns: a 1x1 stride-1 data
// gradient) and neither a test nor the tuning forced the path; a split
// of K stays (its chunks are whole slices of tile 7's 16). On an H200
// (2026-11-29, bench/results/h200-2026-11-29-s8, run 8) tile 7 took
// ResNet-50's float16 1x1 data gradients from tile 3's 104.0 to 76.4 us
// (256 -> 64 at 56x56), 62.5 to 47.1 (512 -> 128 at 28x28), 47.2 to
// 35.0 (128 -> 512), from tile 2's 56.5 to 48.2 (256 -> 1024 at 14x14),
// and the 1024 x 25088 x 1024 one from 519 to 435; one lost, 1024 -> 256
// at 14x14, 54.4 to 58.8 (run 9: 58.5).
func coopColumnsTile(lim vk.Limits, t ConvolutionTuning, force *convChoice, c convChoice, modeA int) convChoice {
	if modeA != gemmAColumns || c.path != convPathCoopMat || (c.ctile != convCoopDefaultTile && c.ctile != 2) {
		return c
	}
	if _, forced := gemmForced(lim, t, force, true, true); forced {
		return c
	}
	cc := c
	cc.ctile = coopSplitTile
	if !convCoopRuns(lim, cc) {
		return c
	}
	return cc
}

// fewTileSplitDepth is the shallowest K fewTileSplits splits, and
// fewTileSplitWork the fewest multiply-adds (m x n x k x z).
const (
	fewTileSplitDepth = 512
	fewTileSplitWork  = 1 << 23
)

// fewTileSplits returns c, an image GEMM's choice on the tiles (z GEMMs
// of m x n outputs, depth k), with its K split where split allows it, the
// tuning sets no split count, c is unsplit, its tiles would give at most
// every other multiprocessor a workgroup, k is fewTileSplitDepth or more
// and the GEMM fewTileSplitWork multiply-adds or more (smaller ones gain
// less than a second pass costs): in as many splits as give each
// multiprocessor about one, each at least 4 slices deep; else c. Fully connected layers of a small batch
// are such GEMMs: ResNet-18's classifier (512 -> 1000 at batch 32) gives
// its forward 32 workgroups of 32 x 32 and its data gradient 16. On an
// H200 (bench/results/h200-2026-11-29-s6, run 7, float32 µs; float16
// alike) the forward took 26.2 unsplit, 14.5 in 4 splits and 14.3 in 8;
// the data gradient (K 1000) 43.7, 18.7 and 15.4 (17.0 in 16).
func fewTileSplits(lim vk.Limits, t ConvolutionTuning, c convChoice, m, n, k, z int, split bool) convChoice {
	if !split || t.Splits != 0 || c.path != convPathTiled || c.splits > 1 || k < fewTileSplitDepth ||
		uint64(m)*uint64(n)*uint64(k)*uint64(z) < fewTileSplitWork {
		return c
	}
	cfg := gemmTiles[c.tile].cfg
	units := gemmUnits(lim, t)
	wgs := (m + cfg.bm - 1) / cfg.bm * ((n + cfg.bn - 1) / cfg.bn) * z
	if 2*wgs > units {
		return c
	}
	s := min((units+wgs-1)/wgs, k/(4*cfg.bk), int(lim.MaxComputeWorkGroupCount[2])/max(z, 1))
	if s < 2 {
		return c
	}
	c.chunk = ((k+s-1)/s + cfg.bk - 1) / cfg.bk * cfg.bk
	c.splits = (k + c.chunk - 1) / c.chunk
	return c
}

// tiledSplitDepth and tiledSplitTile: see tiledImageSplits.
const (
	tiledSplitDepth = 1024
	tiledSplitTile  = 1 // 64 x 128 x 8, 4 x 8 blocks
)

// tiledImageSplits returns the choice of an image GEMM on the tiles (z
// GEMMs of m x n outputs, depth k, from windows of taps taps) that splits
// its K in two, and true, where split allows a split, the tuning sets no
// split count, the windows have several taps, the depth is
// tiledSplitDepth or more and tile tiledSplitTile would give the device's
// multiprocessors fewer than two workgroups each: that tile over 2
// splits. gemmCost, which rates split-K by its traffic, does not see that
// such GEMMs run short of workgroups on every tile but the 4x4 blocks',
// nor that a split's partial sums and finishing pass cost more than their
// bytes (it would split deeper GEMMs, and on tile 0, which lose), so image
// GEMMs do not split under it. On an H200 (bench/results/h200-2026-11-28-s2,
// run 4, float32 forwards, us): ResNet's 3x3 stride-2 128->256 at 28x28
// (196 workgroups of tile 1) 203 on the 4x4 blocks gemmCost chose, 184 on
// tile 1 unsplit, 158 in 2 splits (tile 0: 185 in 2, 196 in 3); 256->512 at 14x14
// (104) 200, 237 unsplit, 198 in 2 splits; 64->128 at 56x56 (depth 576)
// stays unsplit, on tile 1: 144 against 198 in 2 splits.
func tiledImageSplits(lim vk.Limits, t ConvolutionTuning, m, n, k, taps, z int, split bool) (convChoice, bool) {
	c := gemmTiles[tiledSplitTile].cfg
	if !split || t.Splits != 0 || taps < 2 || k < tiledSplitDepth || !c.fits(lim) || 2*z > int(lim.MaxComputeWorkGroupCount[2]) {
		return convChoice{}, false
	}
	if wgs := (m + c.bm - 1) / c.bm * ((n + c.bn - 1) / c.bn) * z; wgs >= 2*gemmUnits(lim, t) {
		return convChoice{}, false
	}
	chunk := ((k+1)/2 + c.bk - 1) / c.bk * c.bk
	return convChoice{path: convPathTiled, tile: tiledSplitTile, splits: (k + chunk - 1) / chunk, chunk: chunk}, true
}

// coopImageSplits returns c, a cooperative-matrix choice for z image
// GEMMs of m x n outputs and depth k from windows of taps taps, with its
// split of K (convolution_gemm_coopmat.comp's SPLITK) where split allows
// one: the tuning's count (splits=N); else, over a depth of
// coopSplitDepth or more, windows of several taps whose tiles would not
// give every other multiprocessor one in 2 splits (an H100, 2026-11-28,
// bench/results/h100-2026-11-28-nodes run 2: ResNet-18's 3x3 stride-2
// forward of 256 to 512 channels at 14x14, 52 tiles, 139 us unsplit, 84
// in 2 splits, 112 in 3, 96 in 4; 128 to 256 at 28x28, 98 tiles, 76
// unsplit, 101 in 2), and 1x1 windows whose tiles would leave
// multiprocessors idle on tile coopSplitTile (unless pinned: a forced
// tile) in as many splits as give each multiprocessor at most two
// workgroups. On an H100 (bench/results/h100-2026-11-27-depthwise, runs
// 3 and 4) the float16 1x1 data gradient of 2048 to 512 channels at 7x7
// (52 tiles of 128 x 128 on 132 multiprocessors) took 139 us unsplit on
// its 64 x 128 tiles, 112.5-113 on 128 x 128 x 16 tiles in 5 splits (116
// in 4, 135 in 6, 160 in 8), and 131-181 on the other tiles split 2 to 8
// ways; split, a depth of 512 (512 to 512 channels) lost (40 us unsplit,
// 53 and more).
func coopImageSplits(lim vk.Limits, t ConvolutionTuning, c convChoice, m, n, k, taps, z int, split, pinned bool) convChoice {
	c.splits, c.chunk = 1, k
	if !split {
		return c
	}
	units := gemmUnits(lim, t)
	wgs := func(c convChoice) int {
		cfg := c.coopTile(lim)
		return (m + cfg.bm - 1) / cfg.bm * ((n + cfg.bn - 1) / cfg.bn) * z
	}
	want := t.Splits
	switch {
	case want > 0:
	case taps > 1:
		// Windows of several taps split in two where their tiles would
		// not give every other multiprocessor one.
		if 2*wgs(c) > units || k < coopSplitDepth {
			return c
		}
		want = 2
	default:
		if wgs(c) >= units || k < coopSplitDepth {
			return c
		}
		if s := (convChoice{path: convPathCoopMat, ctile: coopSplitTile, emu: c.emu}); !pinned && convCoopRuns(lim, s) {
			c.ctile = coopSplitTile
		}
		want = max(1, 2*units/wgs(c)) // at most two workgroups per multiprocessor
	}
	want = min(want, int(lim.MaxComputeWorkGroupCount[2])/max(z, 1))
	c.splits, c.chunk = coopSplits(c.coopTile(lim), units, want, wgs(c), k)
	if c.splits*z > int(lim.MaxComputeWorkGroupCount[2]) {
		c.splits, c.chunk = 1, k
	}
	return c
}

// coopSplitDepth and coopSplitTile: see coopImageSplits.
const (
	coopSplitDepth = 1024
	coopSplitTile  = 7 // 128 x 128 x 16 in 2 x 4 subgroups
)

// convWeightsPlan is how a weight gradient's GEMM runs: the path and tile,
// and its K (per part of the batch) in splits of chunk.
type convWeightsPlan struct {
	choice        convChoice
	splits, chunk int
}

// convPlanWeights chooses the tile and split-K count of a weight gradient
// of m x n values per group in groups, depth k per part of the batch,
// parts parts (dispatches one after another, their partial sums added
// with the splits'), under gemmCost (gemmBest). A forced path or tile
// (test, tuning) and a tuned split count come first.
func convPlanWeights(lim vk.Limits, t ConvolutionTuning, force *convChoice, m, n, k, groups, parts int) convWeightsPlan {
	choice, forced := gemmForced(lim, t, force, false, false)
	if !forced && uint64(m)*uint64(n)*uint64(k)*uint64(groups)*uint64(parts) < gemmDirectBelow {
		choice, forced = convChoice{path: convPathDirect}, true
	}
	if forced && choice.path != convPathTiled {
		return convWeightsPlan{choice: choice, splits: 1, chunk: k}
	}
	only := -1
	if forced {
		only = choice.tile
	}
	c := gemmBest(lim, t, gemmWeights, m, n, k, groups, parts, true, only)
	if c.path != convPathTiled {
		return convWeightsPlan{choice: c, splits: 1, chunk: k}
	}
	return convWeightsPlan{choice: convChoice{path: convPathTiled, tile: c.tile}, splits: c.splits, chunk: c.chunk}
}

// convWeightsCoop returns the plan of a weight gradient of float16 images
// on cooperative matrices (glsl/convolution_gemm_weights.comp's coop
// build) and true, or false where it runs on the tiles: a test's forced
// GEMM path or the tuning's decide first (coopmat=0, tile=N and direct=1
// keep the tiles; coopmat=1, cooptile=N take tile CoopTile); by default
// GEMMs of 32 or more rows and columns over a depth of 1024 or more, on
// convWeightsCoopTile's tile, their depth split
// so that every multiprocessor gets 2 workgroups (8 for tiles of 64 x 64
// or less), each chunk 4 slices deep or more, unless the tuning sets the
// split count. m, n are per group (n: input channels times taps, the
// window's taps), k per part of the batch.
func convWeightsCoop(lim vk.Limits, t ConvolutionTuning, force *convChoice, f16 bool, m, n, k, taps, groups int) (convWeightsPlan, bool) {
	if !f16 {
		return convWeightsPlan{}, false
	}
	var c convChoice
	switch {
	case force != nil && (force.path == convPathTiled || force.path == convPathDirect || force.path == convPathCoopMat):
		if force.path != convPathCoopMat {
			return convWeightsPlan{}, false
		}
		c = *force
	case t.NoCoopMat || t.Path == ConvolutionPathTiled || t.Path == ConvolutionPathDirect:
		return convWeightsPlan{}, false
	case t.Path == ConvolutionPathCoopMat:
		c = convChoice{path: convPathCoopMat, ctile: t.CoopTile}
	default:
		if m < 32 || n < 32 || k < 1024 {
			return convWeightsPlan{}, false
		}
		c = convChoice{path: convPathCoopMat, ctile: convWeightsCoopTile(m, n, taps)}
	}
	if !convCoopRuns(lim, c) {
		return convWeightsPlan{}, false
	}
	cfg := c.coopTile(lim)
	want := min(t.Splits, int(lim.MaxComputeWorkGroupCount[2])/max(groups, 1))
	splits, chunk := coopSplits(cfg, gemmUnits(lim, t), want, (m+cfg.bm-1)/cfg.bm*((n+cfg.bn-1)/cfg.bn)*groups, k)
	if splits*groups > int(lim.MaxComputeWorkGroupCount[2]) {
		return convWeightsPlan{}, false
	}
	return convWeightsPlan{choice: c, splits: splits, chunk: chunk}, true
}

// convWeightsCoopTile is the cooperative-matrix tile of a float16 weight
// gradient of m x n values (per group; m output channels, n input
// channels times taps) from windows of taps taps by default: for 1x1
// windows 64 x 128 (convCoopRowsTile) for at most 64 rows over 256 or
// more columns and 128 x 64 (tile 1) for at most 64 columns; else 64 x
// 64 (tile 0) for at most 64 rows and 128 x 128 x 32
// (convCoopDefaultTile) above. On an H200 (2026-11-29,
// bench/results/h200-2026-11-29-s8, run 8) ResNet-50's 1x1 256 -> 64 at
// 56x56 took 113 us on tile 0 and 89 on tile 10, its 64 -> 256 131 on
// tile 3 and 107 on tile 1; a 3x3 64 -> 64 layer at 56x56 (64 x 576, run
// 1) 214 on tile 0 and 239 on tile 10.
func convWeightsCoopTile(m, n, taps int) int {
	switch {
	case taps == 1 && m <= convCoopRows && n >= 256:
		return convCoopRowsTile
	case m <= 64:
		return 0
	case taps == 1 && n <= 64:
		return 1
	}
	return convCoopDefaultTile
}

// gemmBest returns the cheapest tile (only tile only, when not -1) and
// split count under gemmCost for a GEMM of kind of m x n outputs per
// instance, z instances, depth k per part, in parts parts whose partial
// sums add up (weight gradients' batch parts; 1 for image GEMMs). For
// each tile it tries no split and, when split, the split counts that give
// each multiprocessor 1, 2, ... 32 workgroups (one wave of them, or a
// few) with chunks at least 4 slices deep (the tuning's count instead,
// when set); split partial sums cost their traffic and a dispatch. The
// direct path when no tile fits.
func gemmBest(lim vk.Limits, t ConvolutionTuning, kind gemmKind, m, n, k, z, parts int, split bool, only int) convChoice {
	maxSplits := max(1, int(lim.MaxComputeWorkGroupCount[2])/max(z, 1))
	units, warp := gemmUnits(lim, t), gemmWarp(lim)
	best := convChoice{path: convPathDirect, splits: 1, chunk: k}
	bestCost := -1.0
	// An image GEMM splits K here only where a tuning asks (splits=N;
	// by default tiledImageSplits decides, before this model). Its
	// split pass used to run ten times slower than the model expected on
	// an H100 (driver 580.159; 1x1 512 -> 2048, tile 0 over 2 splits:
	// forward 1924 µs, data gradient 2180, unsplit 142 and 211): the
	// partial sums' stores, rows outermost with a continue, cost the
	// driver's compile its registers. Stored columns outermost as the
	// unsplit epilogue does, the same took 225 and 209 µs (2026-11-27,
	// bench/results/h100-2026-11-27-defaults); still no faster than
	// unsplit, the finishing pass alone about 40 µs there, so the default
	// stays unsplit.
	if kind == gemmImage && t.Splits == 0 {
		split = false
	}
	for i, tile := range gemmTiles {
		c := tile.cfg
		if (only >= 0 && i != only) || !c.fits(lim) {
			continue
		}
		base := ((m + c.bm - 1) / c.bm) * ((n + c.bn - 1) / c.bn) * z
		try := func(want int) {
			s := 1
			if split {
				s = max(1, min(want, maxSplits, (k+c.bk-1)/c.bk))
			}
			chunk := ((k+s-1)/s + c.bk - 1) / c.bk * c.bk
			s = (k + chunk - 1) / chunk
			if t.Splits == 0 && s > 1 && chunk < 4*c.bk {
				return
			}
			cost := gemmCost(c, tile.rate[kind], units, warp, base*s, chunk)
			if slots := s * parts; slots > 1 {
				count := float64(m) * float64(n) * float64(z)
				cost += float64(slots+1)*count*4*gemmMACPerByte/float64(units)/float64(parts) + gemmDispatchMAC/float64(parts)
			}
			cand := convChoice{path: convPathTiled, tile: i, splits: s, chunk: chunk}
			if bestCost < 0 || cost < bestCost {
				best, bestCost = cand, cost
			}
		}
		if t.Splits > 0 {
			try(t.Splits)
			continue
		}
		try(1)
		for waves := 1; split && waves <= 32; waves++ {
			try(waves * units / base)
		}
	}
	return best
}

// convFill is the workgroups the memory-bound reductions (bias and
// depthwise weight gradients) aim to fill the device with, per unit of
// their work: 8 per multiprocessor.
func convFill(lim vk.Limits, t ConvolutionTuning) int { return 8 * gemmUnits(lim, t) }

// convPipeKey selects one pipeline of the family.
type convPipeKey struct {
	shader       *spirv.Shader // base shader (the f16 variant is chosen by f16)
	f16          bool
	tile         int8 // gemmTiles index; -1 direct
	modeA, modeB int8
	bias         bool
	neuron       bool // apply the kernel's neuron
	flip         bool
	ox, oy       int8
	mult         int32
	geom         [6]int32 // KW, KH, SX, SY, DX, DY
	local        int32
	ly, lz       int16 // depthwise workgroup y and z
	vecA, vecB   bool  // quad loads of A, B (convolution_gemm.comp)
	vecC         bool  // quad stores of the results (convolution_winograd_gemm.comp)
	cf           bool  // the Winograd weight gradients' CHANNELS_FAST layout
	coop         bool  // convolution_gemm_coopmat.comp with convCoopTiles[ctile]
	ctile        int8  // its tile
	emu          bool  // its emulated build, with convCoopEmuFor (tests)
	packed       bool  // the cooperative-matrix shaders' packed builds (convCoopPacked)
	khr          bool  // the real cooperative-matrix builds' "khr" variants (convCoopKHR; pipeline sets it)
	tapMajor     bool  // convolution_gemm*.comp's TAP_MAJOR (convTapMajor)
	cin          int8  // convolution_data_small.comp's channels per group
	splitk       int8  // convolution_gemm.comp's SPLITK
	words        bool  // convolution_gemm.comp's and convolution_gemm_weights.comp's WORDS (float16 word loads)
	half         bool  // the Winograd transforms' half builds (U and V as halves; X for the output transform)
	xhalf        bool  // the Winograd products' X_HALF (X stored as halves)
	quads        bool  // convolution_gemm_coopmat.comp's QUADS (convCoopQuads)
	storeDirect  bool  // the cooperative-matrix shaders' STORE_DIRECT (winogradCoopDirect)
	stageTile    bool  // the Winograd products' STAGE_TILE (winogradCoopStage)
	cshape       int8  // the cooperative-matrix shape asked for (ConvolutionTuning.CoopShape; 0: the device's order)
	vw           int8  // convolution_depthwise.comp's VW (0: 1)
	phase        int8  // and its PHASE
	lanes        int8  // convolution_reduce.comp's LANES (0: 1)
}

// convEngine is what every kernel of the family holds: its device and
// label, its pipelines, the fused PReLU slopes, a small buffer bound to
// the read-only bindings a dispatch does not use, and split-K scratch.
type convEngine struct {
	dev     *vk.Device
	label   string
	neuron  NeuronDescriptor
	pipes   map[convPipeKey]*vk.Pipeline
	prelu   *vk.Buffer
	dummy   *vk.Buffer
	scratch *Image
	shared  *ConvolutionScratch // SetScratch's, used instead of scratch
	force   *convChoice         // tests: force a path
	tune    ConvolutionTuning   // SetTuning's overrides
	last    convPath            // the path of the last image GEMM encoded (tests)
	// lastWeights: tiled, Winograd or depthwise, the path of the last weight
	// gradient encoded (tests).
	lastWeights convPath
	// lastWinogradWeights: the parts and splits of the last Winograd
	// weight gradient encoded (tests).
	lastWinogradWeights [2]int
	// lastWinogradSplits: the splits of the products' k of the last
	// Winograd convolution or data gradient (1 unsplit).
	lastWinogradSplits int
	// lastCoopDirect, lastWeightsCoopDirect: whether the last Winograd
	// convolution's or data gradient's products, and the last Winograd
	// weight gradient's, stored straight from the registers
	// (winogradCoopDirect; tests).
	lastCoopDirect, lastWeightsCoopDirect bool
	// lastCoopStage: whether the last Winograd convolution's or data
	// gradient's products staged their tiles (winogradCoopStage; tests).
	lastCoopStage bool
	// lastGemmCoopDirect: whether the last image GEMM on cooperative
	// matrices (not Winograd's) stored straight from the registers
	// (convCoopDirect; tests).
	lastGemmCoopDirect bool
	// coopShapes: the matrix shapes the cooperative-matrix pipelines
	// made were specialized with (tests).
	coopShapes map[[3]int]bool
	// coopAPIs: the extensions the real cooperative-matrix pipelines made
	// were built for, "khr" or "nv" (convCoopKHR; tests).
	coopAPIs map[string]bool
	// lastWinogradPart: the most batch images a part of the last Winograd
	// convolution or data gradient held (tests).
	lastWinogradPart int
	// lastBias: how the last bias gradient's last dispatch added, "quads"
	// (convBiasQuads) or "values" (tests).
	lastBias string
}

func convNewEngine(dev *vk.Device, label string, neuron NeuronDescriptor) (convEngine, error) {
	e := convEngine{dev: dev, label: label, neuron: neuron, pipes: map[convPipeKey]*vk.Pipeline{}}
	var err error
	if e.dummy, err = dev.NewBuffer(16, label+" unused binding"); err != nil {
		return e, fmt.Errorf("%s: %w", label, err)
	}
	if neuron.Type == NeuronPReLU {
		if e.prelu, err = dev.NewBuffer(uint64(4*len(neuron.PReLU)), label+" PReLU slopes"); err != nil {
			e.close()
			return e, fmt.Errorf("%s: %w", label, err)
		}
		b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(neuron.PReLU))), 4*len(neuron.PReLU))
		if err = e.prelu.Write(context.Background(), 0, b); err != nil {
			e.close()
			return e, fmt.Errorf("%s: %w", label, err)
		}
	}
	return e, nil
}

// close releases the engine's buffers; safe twice.
func (e *convEngine) close() error {
	var first error
	for _, b := range []**vk.Buffer{&e.prelu, &e.dummy} {
		if *b != nil {
			if err := (*b).Close(); err != nil && first == nil {
				first = err
			}
			*b = nil
		}
	}
	if e.scratch != nil {
		if err := e.scratch.Close(); err != nil && first == nil {
			first = err
		}
		e.scratch = nil
	}
	e.shared = nil // its owner closes it
	return first
}

// scratchImage returns a float32 scratch of at least n values (kept and
// grown; a replaced one is freed once the work using it is done).
func (e *convEngine) scratchImage(n int) (*Image, error) {
	if e.shared != nil {
		return e.shared.image(n, e.label)
	}
	if e.scratch != nil && e.scratch.Len() >= n {
		return e.scratch, nil
	}
	if e.scratch != nil {
		e.scratch.Close()
		e.scratch = nil
	}
	im, err := NewImage(e.dev, ImageDescriptor{N: 1, C: 1, H: 1, W: n, Label: e.label + " partial sums"})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.label, err)
	}
	e.scratch = im
	return im, nil
}

// forcesGemm reports whether a test forces the GEMM paths (tiles or
// direct) on kernels that have their own (depthwise, small).
func (e *convEngine) forcesGemm() bool {
	return e.force != nil && (e.force.path == convPathTiled || e.force.path == convPathDirect)
}

// limits are the device's limits as the engine's choices see them: under
// ConvolutionTuning.CoopKHR, on a device that lists VK_KHR_cooperative_matrix,
// without its VK_NV_cooperative_matrix shapes (convCoopKHR).
func (e *convEngine) limits() vk.Limits { return e.limitsOf(e.dev.Limits()) }

// limitsOf is limits for a device of limits lim.
func (e *convEngine) limitsOf(lim vk.Limits) vk.Limits {
	if e.tune.CoopKHR && len(lim.CooperativeMatrixKHR) > 0 {
		lim.CooperativeMatrixNV = nil
	}
	return lim
}

// pipeline returns the pipeline of key k, made on first use.
func (e *convEngine) pipeline(k convPipeKey) (*vk.Pipeline, error) {
	k.packed = convCoopPacked(k, e.tune)
	if k.coop {
		k.cshape = int8(convCoopShapeFor(k, e.tune))
		k.khr = !k.emu && convCoopKHR(e.limits())
	}
	if p := e.pipes[k]; p != nil {
		return p, nil
	}
	sh, err := build(k.shader, k.f16)
	if (k.shader == spirv.ConvolutionGemmWeights || k.shader == spirv.ConvolutionWinogradGemm) && k.tile == 0 {
		// Tile 0 has builds of its own, the tile fixed at compile time
		// (the Winograd products have no float16 build).
		v := "t0"
		if k.f16 {
			v = "t0f16"
		}
		if sh = k.shader.Variant(v); sh == nil {
			err = fmt.Errorf("%w: shader %s has no build %s", ErrFormat, k.shader.Name, v)
		}
	}
	if k.half {
		v := "half"
		if k.f16 {
			v = "f16half"
		}
		if sh = k.shader.Variant(v); sh == nil {
			err = fmt.Errorf("%w: shader %s has no build %s", ErrFormat, k.shader.Name, v)
		}
	}
	if k.emu {
		if sh = k.shader.Variant("emu"); sh == nil {
			err = fmt.Errorf("%w: shader %s has no emulated build", ErrFormat, k.shader.Name)
		}
	}
	if k.coop && !k.emu && k.shader == spirv.ConvolutionGemmWeights {
		v := "coop"
		if k.khr {
			v = "coopkhr"
		}
		if sh = k.shader.Variant(v); sh == nil {
			err = fmt.Errorf("%w: shader %s has no cooperative-matrix build %s", ErrFormat, k.shader.Name, v)
		}
	} else if k.khr || k.packed {
		v := "pk"
		switch {
		case k.khr && k.packed:
			v = "khrpk"
		case k.khr:
			v = "khr"
		case k.emu:
			v = "emupk"
		case k.f16:
			v = "f16pk"
		}
		if sh = k.shader.Variant(v); sh == nil {
			err = fmt.Errorf("%w: shader %s has no build %s", ErrFormat, k.shader.Name, v)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.label, err)
	}
	spec := map[string]uint32{
		"local_size_x": uint32(k.local),
		"KW":           uint32(k.geom[0]), "KH": uint32(k.geom[1]), "SX": uint32(k.geom[2]),
		"SY": uint32(k.geom[3]), "DX": uint32(k.geom[4]), "DY": uint32(k.geom[5]),
		"MODE_A": uint32(k.modeA), "MODE_B": uint32(k.modeB), "MODE": uint32(k.modeA),
		"BIAS": convBool(k.bias), "FLIP": convBool(k.flip), "MULT": uint32(k.mult),
		"OX": uint32(k.ox), "OY": uint32(k.oy), "BIASGRAD": convBool(k.bias), "CIN": uint32(k.cin), "SPLITK": uint32(k.splitk),
		"WORDS": convBool(k.words), "CHANNELS_FAST": convBool(k.cf),
	}
	if k.coop {
		c := convChoice{emu: k.emu, ctile: int(k.ctile)}.coopTile(e.limits())
		if k.emu && k.stageTile {
			c, _ = convCoopEmuFit(e.limits(), int(k.ctile), true)
		}
		c = convCoopShaped(e.limits(), c, int(k.cshape), k.emu)
		spec["BM"], spec["BN"], spec["BK"], spec["WM"], spec["WN"] = uint32(c.bm), uint32(c.bn), uint32(c.bk), uint32(c.wm), uint32(c.wn)
		spec["CM"], spec["CN"], spec["CK"], spec["SUBGROUP"] = uint32(c.cm), uint32(c.cn), uint32(c.ck), uint32(c.subgroup)
		if e.coopShapes == nil {
			e.coopShapes = map[[3]int]bool{}
		}
		e.coopShapes[[3]int{c.cm, c.cn, c.ck}] = true
		if !k.emu {
			if e.coopAPIs == nil {
				e.coopAPIs = map[string]bool{}
			}
			e.coopAPIs[map[bool]string{false: "nv", true: "khr"}[k.khr]] = true
		}
		spec["STORE_DIRECT"] = convBool(k.storeDirect)
		spec["STAGE_TILE"] = convBool(k.stageTile)
	} else if k.tile >= 0 {
		c := gemmTiles[k.tile].cfg
		spec["BM"], spec["BN"], spec["BK"], spec["TM"], spec["TN"] = uint32(c.bm), uint32(c.bn), uint32(c.bk), uint32(c.tm), uint32(c.tn)
	} else {
		spec["DIRECT"] = 1
	}
	switch k.shader {
	case spirv.ConvolutionGemm, spirv.ConvolutionGemmCoopmat:
		spec["A_KFAST"], spec["B_KFAST"] = convBool(k.modeA != gemmAColumns), convBool(k.modeB == gemmBRows)
		spec["VEC_A"], spec["VEC_B"] = convBool(k.vecA), convBool(k.vecB)
		spec["TAP_MAJOR"] = convBool(k.tapMajor)
		spec["QUADS"] = convBool(k.quads)
	case spirv.ConvolutionGemmWeights:
		spec["A_KFAST"], spec["B_KFAST"] = convBool(k.modeA == 0), convBool(k.modeA == 0)
	case spirv.ConvolutionWinogradGemm, spirv.ConvolutionWinogradCoopmat:
		spec["VEC_A"], spec["VEC_B"] = convBool(k.vecA), convBool(k.vecB)
		if k.shader == spirv.ConvolutionWinogradGemm {
			spec["VEC_C"] = convBool(k.vecC)
		} else {
			spec["X_HALF"] = convBool(k.xhalf)
		}
	case spirv.ConvolutionDepthwise:
		spec["VW"], spec["PHASE"] = uint32(max(k.vw, 1)), uint32(k.phase)
		spec["local_size_y"], spec["local_size_z"] = uint32(k.ly), uint32(k.lz)
	case spirv.ConvolutionDepthwiseWeights:
		spec["VW"], spec["PHASE"] = uint32(max(k.vw, 1)), uint32(k.phase)
	case spirv.ConvolutionDataSmall:
		spec["local_size_y"], spec["local_size_z"] = uint32(k.ly), uint32(k.lz)
	case spirv.ConvolutionReduce:
		spec["LANES"] = uint32(max(k.lanes, 1))
	case spirv.ConvolutionBiasGrad:
		spec["QUADS"] = convBool(k.quads)
	}
	if k.neuron {
		e.neuron.specConstants(spec)
	}
	p, err := pipeline(e.dev, sh, spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.label, err)
	}
	e.pipes[k] = p
	return p, nil
}

// convTapMajor reports whether the phases of strided data gradient j
// (gemmBPhases) on choice sum only their own taps, tap by tap
// (convolution_gemm_head.glsl's TAP_MAJOR): on the tiles, where the
// channels per group are a multiple of the slice depth, unless t refuses
// it (phasetaps=0). A 3x3 stride-2 data gradient then sums 9 taps per
// output channel instead of 16. On an H100 (run 6 of
// bench/results/h100-2026-11-27-packed) ResNet-18's stride-2 layers went
// from 285 to 209 us (64 -> 128) and 271 to 216 (128 -> 256) in float32.
// The cooperative-matrix build has the same ordering, but it made their
// data gradients of 256 and 512 channels slower there (142 -> 197, 135 ->
// 234 us), so they keep the whole grid.
func convTapMajor(j *convImageGemm, choice convChoice, t ConvolutionTuning) bool {
	if j.modeB != gemmBPhases || t.NoPhaseTaps {
		return false
	}
	switch choice.path {
	case convPathTiled:
		return j.cinG%gemmTiles[choice.tile].cfg.bk == 0
	case convPathCoopMat:
		// Split by tap, the phases' shares are even (phaseSplit).
		return choice.byTap
	}
	return false
}

// phaseWorkChoice returns the choice of a strided data gradient's phase
// GEMMs (m x n outputs, depth k, from up to taps taps each) given c, the
// choice for all of its phases, where only zWork of them have taps: c,
// unless those phases are fewer than all (a
// kernel narrower than the stride: a 1x1 stride-2 gradient's pixels lie
// in one of its 4 phases, the others' are 0) and c's tiles would give the
// zWork phases that do sum fewer workgroups than the device has
// multiprocessors; then the choice for those phases alone. On an H200
// (bench/results/h200-2026-11-28-s2, run 7, float32, µs, tiles 0..3),
// ResNet-18's 1x1 stride-2 gradients: of 512 to 256 channels at 14x14
// 103 75 63 58 (c: tile 0, 26 workgroups), of 256 to 128 at 28x28 76 68
// 53 65 (c: tile 1, 98), of 128 to 64 at 56x56 87 73 83 90 (run 1; c:
// tile 1, 196 workgroups: kept); the choice for the summing phase alone
// is tile 2 for all three.
func phaseWorkChoice(lim vk.Limits, t ConvolutionTuning, force *convChoice, c convChoice, m, n, k, taps, zWork int, f16 bool) convChoice {
	bm, bn, _, ok := c.tileDims(lim)
	if !ok {
		return c
	}
	if _, forced := gemmForced(lim, t, force, f16, true); forced || (m+bm-1)/bm*((n+bn-1)/bn)*zWork >= gemmUnits(lim, t) {
		return c
	}
	return gemmChoose(lim, t, force, m, n, k, taps, zWork, f16, true, false)
}

// phaseSplit returns c, the choice of the phase GEMMs of a strided data
// gradient (gemmBPhases: z of them, m x n outputs each, cinG channels per
// tap, up to gridTaps taps per phase), with its split of K: the tuning's
// count (splits=N) over the largest phase's depth, else by tap (one
// tap's cinG channels a split) where t forces it (tapsplit=1) or, on the
// tiles, where the phases' workgroups would not give every
// multiprocessor two and t does not refuse it (tapsplit=0), else none.
// Split by tap, each phase sums its own taps (TAP_MAJOR, convTapMajor),
// so every workgroup sums one tap and the phases weigh alike: a 3x3
// stride-2 gradient's 4, 2, 2 and 1 taps unsplit leave the device to the
// largest phase's workgroups, each four times the smallest's. On an H100
// (2026-11-28, bench/results/h100-2026-11-28-nodes run 3) ResNet-18's
// float32 gradient of 512 to 256 channels at 14x14 (104 tiles) took 370
// us unsplit, 250 by tap; at 28x28 (392 tiles) 217 unsplit, 360 by tap.
// On cooperative matrices, whose phases sum the whole grid of taps
// unsplit, the split lost (float16, 14x14: 136 us unsplit, 205 by tap,
// 175 in 2 even splits; 28x28: 142, 308, 181): they stay unsplit.
func phaseSplit(lim vk.Limits, t ConvolutionTuning, c convChoice, m, n, z, cinG, gridTaps int) convChoice {
	c.splits, c.chunk, c.byTap = 1, cinG*gridTaps, false
	bm, bn, bk, ok := c.tileDims(lim)
	if !ok {
		return c
	}
	k := cinG * gridTaps
	wgs := (m + bm - 1) / bm * ((n + bn - 1) / bn) * z
	switch {
	case t.Splits > 0:
		slices := (k + bk - 1) / bk
		per := (slices + min(t.Splits, slices) - 1) / min(t.Splits, slices)
		c.chunk = per * bk
		c.splits = (k + c.chunk - 1) / c.chunk
	case t.NoTapSplit || t.NoPhaseTaps || gridTaps < 2 || cinG%bk != 0:
		return c
	case t.TapSplit || (c.path == convPathTiled && wgs < 2*gemmUnits(lim, t)):
		c.splits, c.chunk, c.byTap = gridTaps, cinG, true
	}
	if c.splits*z > int(lim.MaxComputeWorkGroupCount[2]) {
		c.splits, c.chunk, c.byTap = 1, k, false
	}
	return c
}

// convCoopPacked reports whether pipeline k takes its shader's packed
// build: a cooperative-matrix GEMM whose A and B both load as quads, so
// that it stages each quad with one 8-byte store (gemm_coopmat.glsl's
// COOP_PACKED), unless t refuses it (packed=0).
func convCoopPacked(k convPipeKey, t ConvolutionTuning) bool {
	return k.coop && k.vecA && k.vecB && !t.NoCoopPacked
}

func convBool(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// Operand modes of glsl/convolution_gemm.comp.
const (
	gemmAWeights    = 0 // A[m][k] = weights row g*M + m
	gemmATransposed = 1 // the weights of the convolution a data gradient reverses
	gemmAColumns    = 2 // A[m][k] = Wt[wBase + k*ld + m]
	gemmBIm2col     = 0
	gemmBGather     = 1
	gemmBRows       = 2
	gemmBPhases     = 3 // gemmBGather split by the stride's phases (no dilation)
)

// convRegion is the part of an image a GEMM reads or writes: batch images
// from n0, channels [c0, c0+channels), pixels [x0, x0+w) x [y0, y0+h).
// A flat region (fully connected layers) sees each batch image's channels
// as one row of channels*H*W values: w = h = 1, one value per "channel".
type convRegion struct {
	im           *Image
	n0, c0       int
	channels     int
	x0, y0, w, h int
	flat         bool
}

// whole is the region of every pixel of im's channels [c0, c0+channels)
// from batch image n0.
func convWhole(im *Image, n0, c0, channels int) convRegion {
	return convRegion{im: im, n0: n0, c0: c0, channels: channels, w: im.w, h: im.h}
}

// flatRegion is im's channels [c0, c0+channels) from batch image n0 as
// rows of values.
func convFlat(im *Image, n0, c0, channels int) convRegion {
	return convRegion{im: im, n0: n0, c0: c0, channels: channels, w: 1, h: 1, flat: true}
}

// plane, batch and stride are the distances between channels, batch
// images and rows in the region's image (elements).
func (r convRegion) plane() int {
	if r.flat {
		return 1
	}
	return r.im.h * r.im.w
}

func (r convRegion) batch() int { return r.im.cTotal * r.im.h * r.im.w }

func (r convRegion) stride() int { return r.im.w }

// span returns the region's buffer span: planes are channels (values of a
// flat region).
func (r convRegion) span() span {
	s := imageSpan(r.im, r.n0, r.c0)
	if r.flat {
		hw := r.im.h * r.im.w
		s.plane, s.cTotal, s.c0 = 1, r.im.cTotal*hw, r.c0*hw
	}
	return s
}

// spanChannels is the planes of the region's span per batch image.
func (r convRegion) spanChannels() int {
	if r.flat {
		return r.channels * r.im.h * r.im.w
	}
	return r.channels
}

// convBatches calls fn for groups of batch images [n, n+nb) of batches
// such that every span's range fits the device's storage-buffer range,
// and perBatch (columns of one batch image) times nb stays under maxCols.
// A single batch image that does not fit is an ErrDeviceLimit naming the
// image and the limit.
func convBatches(lim vk.Limits, spans []span, channels []int, batches int, fn func(n, nb int) error) error {
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	room := lim.MaxStorageBufferRange - (align - 2)
	fits := func(nb int) bool {
		for i, s := range spans {
			if s.bytes(nb, channels[i]) > room {
				return false
			}
		}
		return true
	}
	if !fits(1) {
		for i, s := range spans {
			if s.bytes(1, channels[i]) > room {
				return fmt.Errorf("%w: one batch image of %v (%d bytes) exceeds the device's max storage buffer range (%d bytes)",
					ErrDeviceLimit, s.what, s.bytes(1, channels[i]), lim.MaxStorageBufferRange)
			}
		}
	}
	nb := largest(batches, fits)
	for n := 0; n < batches; n += nb {
		if err := fn(n, min(nb, batches-n)); err != nil {
			return err
		}
	}
	return nil
}

// convPartSize returns the most batch images (up to batches) whose spans
// each fit one storage-buffer binding; a single batch image that does not
// fit is an ErrDeviceLimit naming the image and the limit.
func convPartSize(lim vk.Limits, spans []span, channels []int, batches int) (int, error) {
	nb := 0
	err := convBatches(lim, spans, channels, batches, func(n, b int) error {
		nb = max(nb, b)
		return nil
	})
	return nb, err
}

// convWholeRange binds all of a contiguous image (weights, bias, gradients of
// parameters), returning its range and the index of its first value; an
// image over the storage-buffer range is an ErrDeviceLimit.
func convWholeRange(lim vk.Limits, role string, im *Image) (vk.BufferRange, uint32, error) {
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	size := uint64(im.Len()) * im.esize()
	if size+align > lim.MaxStorageBufferRange {
		return vk.BufferRange{}, 0, fmt.Errorf("%w: %s %s (%d bytes) exceeds the device's max storage buffer range (%d bytes)",
			ErrDeviceLimit, role, im, size, lim.MaxStorageBufferRange)
	}
	off := im.base * im.esize()
	start := off - off%align
	return im.buf.Range(start, off+size-start), uint32((off - start) / im.esize()), nil
}

// convGemmPush is glsl/convolution_gemm.comp's push-constant block.
type convGemmPush struct {
	InW, InH, InX0, InY0     int32
	FirstX, FirstY           int32
	OutW, OutH, OutX0, OutY0 int32
	InStride, DstStride      uint32
	ImBase, ImBatch, ImPlane uint32
	DstBase, DstBatch        uint32
	DstPlane                 uint32
	WBase, Ld                uint32
	BiasBase, PreluBase      uint32
	M, N, K                  uint32
	CinG                     uint32
	N0                       uint32
	Groups                   uint32
	KChunk, PartBase, Splits uint32
}

// convImageGemm is one GEMM whose result is an image region: a
// convolution, a data gradient, a transpose convolution or a fully
// connected layer (glsl/convolution_gemm.comp), or a depthwise
// convolution (glsl/convolution_depthwise.comp).
type convImageGemm struct {
	modeA, modeB int
	groups       int
	m, k         int // per group
	cinG         int // B image channels per group
	ld           int // modeA gemmAColumns
	in, out      convRegion
	firstX       int // see convolution_gemm.comp's MODE_B
	firstY       int
	batches      int
	weights      *Image
	bias         *Image
	neuron       bool
	geom         [6]int32
	depthwise    bool // run glsl/convolution_depthwise.comp (m = 1 per group)
	flip         bool // depthwise: taps reversed
	mult         int  // depthwise: outputs per input channel
	// col2im: the data gradient this columns GEMM finishes
	// (convColumnsGemm), nil for the others; noCol2im keeps a data
	// gradient on its own GEMM.
	col2im   *convImageGemm
	noCol2im bool
}

// convColumnsGemm returns the columns GEMM of strided data gradient g
// (col2im): C[m][n] with a row m = c*KHW + tap per channel c of dx and
// tap, a column n per dy pixel, A[m][k] = W[k][m] (the weights' rows as
// columns, ld = channels*KHW), B = dy as a 1x1 im2col; its raw sums are
// then added into g's destination, each dx pixel taking the taps and dy
// pixels whose windows reach it (glsl/convolution_col2im.comp). Every
// product is a tap of the kernel: the phases' GEMMs sum a grid of taps
// per phase (3x3 stride 2: 16, of which 9 lie in the kernel) on
// cooperative matrices, and split the work by phase.
func convColumnsGemm(g convImageGemm) convImageGemm {
	khw := int(g.geom[0] * g.geom[1])
	c := g
	c.modeA, c.modeB, c.ld = gemmAColumns, gemmBIm2col, g.m*khw
	c.m, c.k = g.m*khw, g.cinG
	c.geom = [6]int32{1, 1, 1, 1, 1, 1}
	c.firstX, c.firstY = 0, 0
	// The GEMM's output grid is dy's pixels (pixelOf, N); it writes only
	// partial sums, and its destination binding is g's.
	c.out = convRegion{im: g.out.im, n0: g.out.n0, c0: g.out.c0, channels: g.out.channels, w: g.in.w, h: g.in.h}
	c.col2im = &g
	return c
}

// useCol2im reports whether data gradient j runs as a columns GEMM and
// col2im (convColumnsGemm): a strided one without groups that the
// small-channel gather does not take and whose columns GEMM is not too
// small for tiles, unless a direct path is forced, where the tuning
// forces it (col2im=1) or, by default, where its windows have several
// taps and the columns GEMM col2imRows rows or more. On an H100 (2026-11-28,
// bench/results/h100-2026-11-28-nodes, run 7: GEMM + col2im against the
// phases, µs) ResNet-18's 3x3 stride-2 gradients of 512 to 256 channels
// at 14x14 took float16 65 + 27 against 135, float32 151 + 29 against
// 250; of 256 to 128 at 28x28 float16 66 + 43 against 141, float32 156 +
// 43 against 216; of 128 to 64 at 56x56 (576 rows) float32 174 + 80
// against 209, and 1x1 stride-2 ones (every other dx pixel 0) 82-100
// against 58.
func (e *convEngine) useCol2im(j *convImageGemm) bool {
	strided := j.geom[2] > 1 || j.geom[3] > 1
	if j.col2im != nil || j.noCol2im || j.modeA != gemmATransposed || !strided || j.groups != 1 || j.depthwise || e.tune.NoCol2im || e.useSmall(j) {
		return false
	}
	if (e.force != nil && e.force.path == convPathDirect) || e.tune.Path == ConvolutionPathDirect {
		return false
	}
	khw := int(j.geom[0] * j.geom[1])
	if uint64(j.m*khw)*uint64(j.batches*j.in.w*j.in.h)*uint64(j.cinG) < gemmDirectBelow {
		return false // the columns GEMM would take the direct path
	}
	return e.tune.Col2im || (khw > 1 && j.m*khw >= col2imRows)
}

// col2imRows is the least rows (channels times taps) of a columns GEMM
// useCol2im takes by default.
const col2imRows = 1024

// encodeImageGemm records j on cb.
func (e *convEngine) encodeImageGemm(cb *vk.CommandBuffer, j *convImageGemm) error {
	lim := e.limits()
	f16 := j.out.im.format == Float16
	if p, ok := e.winograd(j); ok {
		return e.encodeWinograd(cb, j, p, f16)
	}
	if e.useCol2im(j) {
		c := convColumnsGemm(*j)
		j = &c
	}
	wr, wBase, err := convWholeRange(lim, "weights", j.weights)
	if err != nil {
		return err
	}
	var binds [6]vk.BufferRange // convolution_gemm.comp's; the other shaders take the first 5
	binds[1] = wr
	binds[2], binds[3], binds[5] = e.dummy.Whole(), e.dummy.Whole(), e.dummy.Whole()
	var biasBase uint32
	if j.bias != nil {
		if binds[2], biasBase, err = convWholeRange(lim, "bias", j.bias); err != nil {
			return err
		}
	}
	if j.neuron && e.prelu != nil {
		binds[3] = e.prelu.Whole()
	}
	pixels := j.out.w * j.out.h
	zGroups, gridCols := j.groups, pixels // workgroups in z, grid columns per batch image
	key := convPipeKey{f16: f16, bias: j.bias != nil, neuron: j.neuron && !e.neuron.IsIdentity(), geom: j.geom, modeA: int8(j.modeA), modeB: int8(j.modeB)}
	var choice convChoice
	im2col := false // an explicit im2col, then the GEMM over its columns
	if j.depthwise && e.forcesGemm() {
		j2 := *j
		j2.depthwise = false
		j = &j2
	}
	if j.depthwise {
		choice = convChoice{path: convPathDepthwise}
		ox, oy := convDepthwiseStrip(j, lim, e.tune)
		key.shader, key.tile, key.flip, key.mult, key.ox, key.oy = spirv.ConvolutionDepthwise, -1, j.flip, int32(j.mult), int8(ox), int8(oy)
		sizer := localSize
		if e.tune.DepthwiseExactGroups {
			sizer = localSizeExact
		}
		lx, ly, lz := sizer(lim, (j.out.w+ox-1)/ox, (j.out.h+oy-1)/oy, j.batches*j.out.channels)
		key.local, key.ly, key.lz = int32(lx), int16(ly), int16(lz)
	} else if e.useSmall(j) {
		choice = convChoice{path: convPathSmall}
		ox := convSmallStrip(j)
		key.shader, key.tile, key.ox, key.cin = spirv.ConvolutionDataSmall, -1, int8(ox), int8(j.m)
		lx, ly, lz := localSize(lim, convSmallColumns(j, ox), j.out.h, j.batches*j.groups)
		key.local, key.ly, key.lz = int32(lx), int16(ly), int16(lz)
	} else {
		// The phases of a strided data gradient are independent GEMMs
		// side by side in z; phase 0 is the largest.
		z, colsPer, k, taps := j.groups, pixels, j.k, int(j.geom[0]*j.geom[1])
		zWork := z
		if j.modeB == gemmBPhases {
			sx, sy := int(j.geom[2]), int(j.geom[3])
			z *= sx * sy
			zWork *= min(int(j.geom[0]), sx) * min(int(j.geom[1]), sy)
			colsPer = ((j.out.w + sx - 1) / sx) * ((j.out.h + sy - 1) / sy)
			taps = ((int(j.geom[0]) + sx - 1) / sx) * ((int(j.geom[1]) + sy - 1) / sy)
			k = j.k / int(j.geom[0]*j.geom[1]) * taps
		}
		zGroups, gridCols = z, colsPer
		choice = gemmChoose(lim, e.tune, e.force, j.m, j.batches*colsPer, k, taps, z, f16, true, j.modeB != gemmBPhases)
		choice = coopColumnsTile(lim, e.tune, e.force, choice, j.modeA)
		if zWork < z {
			choice = phaseWorkChoice(lim, e.tune, e.force, choice, j.m, j.batches*colsPer, k, taps, zWork, f16)
		}
		if j.modeB == gemmBPhases {
			choice = phaseSplit(lim, e.tune, choice, j.m, j.batches*colsPer, z, j.k/int(j.geom[0]*j.geom[1]), taps)
		}
		if j.col2im != nil && choice.path == convPathDirect {
			g := *j.col2im // the direct path sums the gradient itself
			g.noCol2im = true
			return e.encodeImageGemm(cb, &g)
		}
		if j.col2im != nil && choice.splits <= 1 {
			choice.splits, choice.chunk = 1, k // SPLITK 1 writes the columns
		}
		if im2col = e.useIm2col(j, choice); im2col {
			// A plain GEMM over the columns, read as a fully connected
			// layer's rows: quads along k.
			choice = gemmChoose(lim, e.tune, e.force, j.m, j.batches*colsPer, k, 1, z, f16, true, false)
			choice.splits = 1 // unsplit (a test's forced split too): the columns hold the scratch
			key.modeB = int8(gemmBRows)
		}
		key.shader = spirv.ConvolutionGemm
		switch choice.path {
		case convPathTiled:
			key.tile = int8(choice.tile)
			key.local = int32(gemmTiles[choice.tile].cfg.threads())
			key.vecA, key.vecB = convVecA(j, wBase), convVecB(j) || im2col
			if choice.splits > 1 || j.col2im != nil {
				key.splitk = 1
			}
		case convPathCoopMat:
			c := choice.coopTile(lim)
			key.shader, key.coop, key.emu, key.tile = spirv.ConvolutionGemmCoopmat, true, choice.emu, -1
			key.ctile, key.local = int8(choice.ctile), int32(c.threads())
			key.vecA, key.vecB = convVecA(j, wBase), convVecB(j) || im2col
			if choice.splits > 1 || j.col2im != nil {
				key.splitk = 1
			}
			key.quads = convCoopQuads(j, key.splitk == 1)
			key.storeDirect = convCoopDirect(e.tune, j, c, key)
		default:
			key.tile, key.local = -1, 64
		}
	}
	e.last = choice.path
	key.tapMajor = convTapMajor(j, choice, e.tune)
	// A float16 tile's pipeline depends on its source binding (WORDS,
	// for the values it loads one by one): made per part below.
	wordsPerPart := f16 && choice.path == convPathTiled && !key.vecB
	var pl *vk.Pipeline
	if !wordsPerPart && !j.depthwise { // depthwise: per dispatch (its VW)
		if pl, err = e.pipeline(key); err != nil {
			return err
		}
	}
	spans := [2]span{j.in.span(), j.out.span()}
	chans := [2]int{j.in.spanChannels(), j.out.spanChannels()}
	if j.col2im != nil { // the destination is the data gradient's
		spans[1], chans[1] = j.col2im.out.span(), j.col2im.out.spanChannels()
	}
	pc := convGemmPush{
		InW: int32(j.in.w), InH: int32(j.in.h), InX0: int32(j.in.x0), InY0: int32(j.in.y0),
		FirstX: int32(j.firstX), FirstY: int32(j.firstY),
		OutW: int32(j.out.w), OutH: int32(j.out.h), OutX0: int32(j.out.x0), OutY0: int32(j.out.y0),
		InStride: uint32(j.in.stride()), DstStride: uint32(j.out.stride()),
		ImBatch: uint32(j.in.batch()), ImPlane: uint32(j.in.plane()),
		DstBatch: uint32(j.out.batch()), DstPlane: uint32(j.out.plane()),
		WBase: wBase, Ld: uint32(j.ld), BiasBase: biasBase,
		M: uint32(j.m), K: uint32(j.k), CinG: uint32(j.cinG), Groups: uint32(j.groups),
	}
	if j.depthwise {
		return e.encodeDepthwise(cb, key, j, &pc, spans[:], chans[:], (*[5]vk.BufferRange)(binds[:5]))
	}
	if choice.path == convPathSmall {
		return e.encodeSmall(cb, pl, key, j, &pc, spans[:], chans[:], (*[5]vk.BufferRange)(binds[:5]))
	}
	nbind := len(binds)
	// Split K: the GEMM writes each split's partial sums to scratch, a
	// second pass (SPLITK 2) adds them and finishes the outputs.
	var finish *vk.Pipeline
	if key.splitk == 1 {
		nb, err := convPartSize(lim, spans[:], chans[:], j.batches)
		if err != nil {
			return fmt.Errorf("%s: %w", e.label, err)
		}
		part, err := e.scratchImage(choice.splits * j.groups * j.m * nb * pixels)
		if err != nil {
			return err
		}
		if binds[5], pc.PartBase, err = convWholeRange(lim, "partial sums", part); err != nil {
			return err
		}
		pc.KChunk, pc.Splits = uint32(choice.chunk), uint32(choice.splits)
		// The finishing pass is convolution_gemm.comp's, whichever path
		// summed the splits.
		fk := key
		fk.shader, fk.coop, fk.emu, fk.ctile, fk.packed = spirv.ConvolutionGemm, false, false, 0, false
		fk.splitk, fk.tile, fk.local, fk.vecA, fk.vecB = 2, -1, 64, false, false
		if j.col2im != nil {
			fk.shader, fk.splitk, fk.geom = spirv.ConvolutionCol2im, 0, j.col2im.geom
		}
		if finish, err = e.pipeline(fk); err != nil {
			return err
		}
		zGroups *= choice.splits
	}
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	var cols im2colPass
	if im2col {
		if cols, err = e.newIm2colPass(j, f16); err != nil {
			return err
		}
	}
	return convBatches(lim, spans[:], chans[:], j.batches, func(n0, nb0 int) error {
		if !im2col {
			return e.encodeGemmPart(cb, j, pl, finish, key, choice, wordsPerPart, &pc, binds[:nbind], spans, chans, zGroups, gridCols, n0, nb0)
		}
		// The columns of at most cols.per batch images at a time.
		for n := n0; n < n0+nb0; n += cols.per {
			nb := min(cols.per, n0+nb0-n)
			src, base := spans[0].bind(align, n, 0, nb, chans[0])
			if err := cols.encode(cb, src, base, nb); err != nil {
				return err
			}
			pc.ImBase, pc.ImBatch = 0, uint32(cols.ld)
			if err := e.encodeGemmPart(cb, j, pl, finish, key, choice, false, &pc, binds[:nbind], spans, chans, zGroups, gridCols, n, nb, cols.out); err != nil {
				return err
			}
		}
		return nil
	})
}

// encodeGemmPart records the GEMM of encodeImageGemm over the nb batch
// images from n: its source and destination bound for them (the source
// src instead where given: im2col's columns, pc's ImBase and ImBatch
// set), its dispatches and its finishing pass.
func (e *convEngine) encodeGemmPart(cb *vk.CommandBuffer, j *convImageGemm, pl, finish *vk.Pipeline, key convPipeKey, choice convChoice, wordsPerPart bool,
	pc *convGemmPush, binds []vk.BufferRange, spans [2]span, chans [2]int, zGroups, gridCols, n, nb int, src ...vk.BufferRange) error {
	lim := e.limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	maxX := int(lim.MaxComputeWorkGroupCount[0])
	pixels := j.out.w * j.out.h
	push := unsafe.Slice((*byte)(unsafe.Pointer(pc)), unsafe.Sizeof(*pc))
	{
		if len(src) > 0 {
			binds[0] = src[0]
		} else {
			binds[0], pc.ImBase = spans[0].bind(align, n, 0, nb, chans[0])
		}
		binds[4], pc.DstBase = spans[1].bind(align, n, 0, nb, chans[1])
		if wordsPerPart {
			// Word loads where the source binding grows to whole words.
			var err error
			b0, ok := convWords(binds[0])
			if key.words = ok; ok {
				binds[0] = b0
			}
			if pl, err = e.pipeline(key); err != nil {
				return err
			}
		}
		pc.N = uint32(nb * pixels)
		if key.storeDirect && !convCoopDirectPart(key, choice.coopTile(lim), pc) {
			// This part's offsets or columns do not allow it.
			key.storeDirect = false
			var err error
			if pl, err = e.pipeline(key); err != nil {
				return err
			}
		}
		if key.coop {
			e.lastGemmCoopDirect = key.storeDirect
		}
		cols := nb * gridCols
		var bn, gy int
		switch choice.path {
		case convPathTiled:
			c := gemmTiles[choice.tile].cfg
			bn, gy = c.bn, (j.m+c.bm-1)/c.bm
		case convPathCoopMat:
			c := choice.coopTile(lim)
			bn, gy = c.bn, (j.m+c.bm-1)/c.bm
		default:
			bn, gy = 64, j.m
		}
		if gy > int(lim.MaxComputeWorkGroupCount[1]) || zGroups > int(lim.MaxComputeWorkGroupCount[2]) {
			return fmt.Errorf("%w: %s: %d output rows in %d groups exceed the device's workgroup counts", ErrDeviceLimit, e.label, j.m, zGroups)
		}
		step := maxX * bn
		for c0 := 0; c0 < cols; c0 += step {
			pc.N0 = uint32(c0)
			gx := (min(step, cols-c0) + bn - 1) / bn
			if err := cb.Dispatch(pl, binds, push, [3]uint32{uint32(gx), uint32(gy), uint32(zGroups)}); err != nil {
				return fmt.Errorf("%s: %w", e.label, err)
			}
		}
		if finish == nil {
			return nil
		}
		if j.col2im != nil {
			return e.encodeCol2im(cb, finish, binds, pc, j.col2im, nb)
		}
		// The finishing pass goes over every output pixel (all phases).
		cols = nb * pixels
		step = maxX * 64
		for c0 := 0; c0 < cols; c0 += step {
			pc.N0 = uint32(c0)
			gx := (min(step, cols-c0) + 63) / 64
			gy := (j.m + convFinishRows - 1) / convFinishRows
			if err := cb.Dispatch(finish, binds, push, [3]uint32{uint32(gx), uint32(gy), uint32(j.groups)}); err != nil {
				return fmt.Errorf("%s: %w", e.label, err)
			}
		}
		return nil
	}
}

// encodeCol2im records the col2im pass (glsl/convolution_col2im.comp)
// of the nb batch images of a part after its columns GEMM: one invocation
// per dx pixel, channel and batch image. pc is the GEMM's push constants,
// its destination and split fields set; the pass changes its output grid,
// windows and channels to the data gradient g's, and restores them.
func (e *convEngine) encodeCol2im(cb *vk.CommandBuffer, pl *vk.Pipeline, binds []vk.BufferRange, pc *convGemmPush, g *convImageGemm, nb int) error {
	lim := e.limits()
	saved := *pc
	defer func() { *pc = saved }()
	out := g.out
	pc.OutW, pc.OutH, pc.OutX0, pc.OutY0 = int32(out.w), int32(out.h), int32(out.x0), int32(out.y0)
	pc.DstStride, pc.DstBatch, pc.DstPlane = uint32(out.stride()), uint32(out.batch()), uint32(out.plane())
	pc.FirstX, pc.FirstY, pc.M = int32(g.firstX), int32(g.firstY), uint32(g.m)
	if g.m > int(lim.MaxComputeWorkGroupCount[1]) || nb > int(lim.MaxComputeWorkGroupCount[2]) {
		return fmt.Errorf("%w: %s: %d channels of %d batch images exceed the device's workgroup counts", ErrDeviceLimit, e.label, g.m, nb)
	}
	push := unsafe.Slice((*byte)(unsafe.Pointer(pc)), unsafe.Sizeof(*pc))
	// An invocation per cell of SX x SY dx pixels (convolution_col2im.comp).
	sx, sy := int(g.geom[2]), int(g.geom[3])
	cells := (floorDiv(out.w-1-g.firstX, sx) - floorDiv(-g.firstX, sx) + 1) * (floorDiv(out.h-1-g.firstY, sy) - floorDiv(-g.firstY, sy) + 1)
	step := int(lim.MaxComputeWorkGroupCount[0]) * 64
	for p0 := 0; p0 < cells; p0 += step {
		pc.N0 = uint32(p0)
		gx := (min(step, cells-p0) + 63) / 64
		if err := cb.Dispatch(pl, binds, push, [3]uint32{uint32(gx), uint32(g.m), uint32(nb)}); err != nil {
			return fmt.Errorf("%s: %w", e.label, err)
		}
	}
	return nil
}

// convFinishRows is the output rows each invocation of a split-K GEMM's
// finishing pass adds up (convolution_gemm.comp's FINISH_ROWS).
const convFinishRows = 8

// convCoopQuads reports whether the direct cooperative-matrix GEMM of j
// stores its results as quads (convolution_gemm_coopmat.comp's QUADS):
// not in the phases of a strided data gradient (their columns are
// strided pixels), nor where an image has a number of pixels that is not
// a multiple of 4 (7x7: a quad would straddle planes); else into the
// partial sums of a split or of col2im (rows of whole images' columns),
// and into an output region of whole rows whose planes and batch images
// are multiples of 4 values (each quad then starts on one, the binding's
// first value permitting: the shader checks).
func convCoopQuads(j *convImageGemm, splitk bool) bool {
	if j.modeB == gemmBPhases || (j.out.w*j.out.h)%4 != 0 {
		return false
	}
	o := j.out
	return splitk || (o.x0 == 0 && o.stride() == o.w && o.plane()%4 == 0 && o.batch()%4 == 0)
}

// convCoopDirect reports whether the cooperative-matrix GEMM of j on
// tile c, its pipeline key so far, stores each accumulator straight from
// the registers (convolution_gemm_coopmat.comp's STORE_DIRECT) as far as
// the GEMM's shape decides (convCoopDirectPart checks each part's
// offsets): where the tuning asks for it (coopdirect=1; off by default,
// see ConvolutionTuning.CoopDirect), the rows are whole tiles and the columns are not a strided data gradient's
// phases, into the partial sums of a split or of col2im (rows of the
// part's columns), or, without bias or neuron, into an image of whole
// planes whose pixels are a multiple of the tile's columns (a tile's
// columns lie in one plane, each matrix's CN columns neighbours) and
// whose planes and batch images are multiples of 8 halves (16 bytes,
// coopMatStoreNV's alignment). The epilogue through shared memory instead
// stages each 16 x 8 matrix there and synchronizes its subgroup twice.
func convCoopDirect(t ConvolutionTuning, j *convImageGemm, c convCoopConfig, key convPipeKey) bool {
	if !t.CoopDirect || j.modeB == gemmBPhases || j.m%c.bm != 0 {
		return false
	}
	if key.splitk == 1 {
		return true
	}
	o := j.out
	pixels := o.w * o.h
	return !key.bias && !key.neuron && !o.flat && o.x0 == 0 && o.y0 == 0 && o.w == o.im.w && o.h == o.im.h &&
		pixels%c.bn == 0 && pixels%8 == 0 && o.batch()%8 == 0
}

// convCoopDirectPart reports whether a part of a GEMM that convCoopDirect
// let store directly, with push constants pc, does: its partial sums'
// rows (pc.N columns from pc.PartBase) are whole tiles on 16 bytes, or
// its image's first value (pc.DstBase) lies on 16 bytes.
func convCoopDirectPart(key convPipeKey, c convCoopConfig, pc *convGemmPush) bool {
	if key.splitk == 1 {
		return int(pc.N)%c.bn == 0 && pc.N%4 == 0 && pc.PartBase%4 == 0
	}
	return pc.DstBase%8 == 0
}

// convVecA reports whether j's weights load as quads: rows of K values
// (gemmAWeights), K a multiple of 4; or rows k of ld values of which A's
// column k is the first M (gemmAColumns), M and ld multiples of 4; the
// first weight (in memory and in its binding, at wBase) a multiple of 4.
func convVecA(j *convImageGemm, wBase uint32) bool {
	if j.weights.base%4 != 0 || wBase%4 != 0 {
		return false
	}
	switch j.modeA {
	case gemmAWeights:
		return j.k%4 == 0
	case gemmAColumns:
		return j.m%4 == 0 && j.ld%4 == 0
	}
	return false
}

// convVecB reports whether j's source loads as quads along the output
// columns: a pointwise convolution (1x1, stride 1, no padding) over whole
// planes of a multiple of 4 pixels starting on a multiple of 4 values, the
// output the same size.
func convVecB(j *convImageGemm) bool {
	in, out := j.in, j.out
	pixels := in.w * in.h
	return j.modeB == gemmBIm2col && j.geom[0] == 1 && j.geom[1] == 1 && j.geom[2] == 1 && j.geom[3] == 1 &&
		j.firstX == 0 && j.firstY == 0 && !in.flat && in.x0 == 0 && in.y0 == 0 && in.w == in.im.w && in.h == in.im.h &&
		out.w == in.w && out.h == in.h && pixels%4 == 0 && in.im.base%4 == 0
}

// convSmallMax is the most channels per group the small-channel gather
// (glsl/convolution_data_small.comp) computes per invocation.
const convSmallMax = 4

// useSmall reports whether j runs on the small-channel gather: a data
// gradient (or transpose convolution) of at most convSmallMax destination
// channels per group, stride or dilation 1 along each axis, the source
// row a strip's taps span and the taps per phase in registers; unless a
// test forces the GEMMs or the tuning refuses it.
func (e *convEngine) useSmall(j *convImageGemm) bool {
	if e.tune.NoSmallChannels || (e.force != nil && e.force.path != convPathSmall && e.force.path != convPathDepthwise) {
		return false
	}
	kw, kh, sx, sy, dx, dy := int(j.geom[0]), int(j.geom[1]), int(j.geom[2]), int(j.geom[3]), int(j.geom[4]), int(j.geom[5])
	if j.modeA != gemmATransposed || (j.modeB != gemmBGather && j.modeB != gemmBPhases) || j.m > convSmallMax || j.in.flat || j.out.flat ||
		(sx > 1 && dx > 1) || (sy > 1 && dy > 1) {
		return false
	}
	stepX := 1
	if sx == 1 {
		stepX = dx
	}
	return ((kw+sx-1)/sx-1)*stepX <= maxSeg && (kh+sy-1)/sy <= 32
}

// convSmallStrip is the destination pixels of a phase per invocation of
// the small-channel gather: 8, or 4 for narrow phases.
func convSmallStrip(j *convImageGemm) int {
	if sx := int(j.geom[2]); (j.out.w+sx-1)/sx < 8 {
		return 4
	}
	return 8
}

// convSmallColumns is the gather's invocations along x: strips of ox
// pixels of each phase of the stride.
func convSmallColumns(j *convImageGemm, ox int) int {
	sx := int(j.geom[2])
	return ((j.out.w+sx-1)/sx + ox - 1) / ox * sx
}

func (e *convEngine) encodeSmall(cb *vk.CommandBuffer, pl *vk.Pipeline, key convPipeKey, j *convImageGemm, pc *convGemmPush, spans []span, chans []int, binds *[5]vk.BufferRange) error {
	lim := e.limits()
	cols := convSmallColumns(j, int(key.ox))
	lx, ly, lz := int(key.local), int(key.ly), int(key.lz)
	push := unsafe.Slice((*byte)(unsafe.Pointer(pc)), unsafe.Sizeof(*pc))
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	maxPlanes := int(lim.MaxComputeWorkGroupCount[2]) * lz
	return convBatches(lim, spans, chans, j.batches, func(n, nb int) error {
		// Planes (batch images x groups) beyond the z count go in further
		// dispatches of whole batch images.
		per := max(1, maxPlanes/j.groups)
		for b := n; b < n+nb; b += per {
			cnt := min(per, n+nb-b)
			binds[0], pc.ImBase = spans[0].bind(align, b, 0, cnt, chans[0])
			binds[4], pc.DstBase = spans[1].bind(align, b, 0, cnt, chans[1])
			pc.N = uint32(cnt * j.groups)
			groups, err := grid3(&lim, cols, j.out.h, int(pc.N), lx, ly, lz)
			if err != nil {
				return fmt.Errorf("%s: %w", e.label, err)
			}
			if err := cb.Dispatch(pl, binds[:], push, groups); err != nil {
				return fmt.Errorf("%s: %w", e.label, err)
			}
		}
		return nil
	})
}

// convDepthwisePush is glsl/convolution_depthwise.comp's push-constant
// block.
type convDepthwisePush struct {
	InW, InH, InX0, InY0     int32
	FirstX, FirstY           int32
	OutW, OutH, OutX0, OutY0 int32
	InStride, DstStride      uint32
	ImBase, ImBatch, ImPlane uint32
	DstBase, DstBatch        uint32
	DstPlane                 uint32
	WBase, BiasBase          uint32
	PreluBase                uint32
	Channels, Planes, C0     uint32
}

// convDepthwiseStrip returns the outputs per invocation of the depthwise
// kernel of j: convDepthwiseBlock's, with fewer rows (4, 2, 1) where
// blocks of 4 rows would leave the dispatch fewer than
// convDepthwiseMinBlocks invocations, unless t sets the rows. Its strips
// are 4 wide also where float16 rows would load 8 values at a time: on
// an H200 (run 2 of bench/results/h200-2026-11-28-s3) 32x256x56x56 3x3
// forwards took 53.3 us on strips of 8 (47.6 on 3 rows of them) and 47.5
// on strips of 4.
func convDepthwiseStrip(j *convImageGemm, lim vk.Limits, t ConvolutionTuning) (ox, oy int) {
	ox, oy = convDepthwiseBlock(j.geom, t, false)
	if t.DepthwiseRows == 0 {
		blocks := func(oy int) int {
			return j.batches * j.out.channels * ((j.out.w + ox - 1) / ox) * ((j.out.h + oy - 1) / oy)
		}
		for oy > 1 && blocks(oy) < convDepthwiseMinBlocks(lim, t) {
			oy /= 2
		}
	}
	return ox, oy
}

// convDepthwiseMinBlocks is the invocations a depthwise forward keeps at
// least when its blocks take several rows: 3072 a multiprocessor, about
// 1.5 times what each holds at once. On an H200 (run 4 of
// bench/results/h200-2026-11-28-s3), float32 / float16, us, rows 4 / 2 /
// 1 (invocations): 32x256x56x56 63.6 / 61.0 / 73.0 and 47.6 / 57.2 / 74.3
// (1.6M at 4 rows); 32x512x14x14 17.4 / 15.8 / 14.2 and 13.5 / 12.3 /
// 14.4 (459k at 2 rows, 405k wanted); MobileNetV2's 32x960x7x7 19.8 /
// 16.3 / 11.4 and 16.6 / 12.3 / 9.5 (246k at 2 rows, 430k at 1).
func convDepthwiseMinBlocks(lim vk.Limits, t ConvolutionTuning) int { return 3072 * gemmUnits(lim, t) }

// convDepthwiseWeightsRows returns the dy rows of a depthwise weight
// gradient's blocks: convDepthwiseBlock's oy, halved until two blocks
// fit a plane of h rows, unless t sets the rows. On an H200 (run 4 of
// bench/results/h200-2026-11-28-s3), float32 / float16, us, rows 4 / 2 /
// 1: 32x512x14x14 16.6 / 18.4 / 19.6 and 16.2 / 18.2 / 19.9;
// 32x960x7x7 18.8 / 16.0 / 15.4 and 16.3 / 14.1 / 15.6.
func convDepthwiseWeightsRows(oy, h int, t ConvolutionTuning) int {
	for t.DepthwiseRows == 0 && oy > 1 && 2*oy > h {
		oy /= 2
	}
	return oy
}

// convDepthwiseBlock returns the block of outputs (of dy pixels for the
// weight gradient) an invocation of the depthwise kernels of geometry
// geom covers at a time: OX columns by OY rows, reusing each loaded input
// row for the OY rows whose windows overlap on it. OX is 8 where oct
// (float16 rows that load 8 values at a time), else 4, or
// t.DepthwiseStrip, where the strip's input span (SEG) stays within
// maxSeg; OY is 4 where the stride is 1 (which the forward and the weight
// gradient lower for small images: convDepthwiseStrip,
// convDepthwiseWeightsRows), else 1, or t.DepthwiseRows, where the
// block's OX * OY values stay within maxSeg.
func convDepthwiseBlock(geom [6]int32, t ConvolutionTuning, oct bool) (ox, oy int) {
	ox, oy = 4, 1
	if geom[3] == 1 {
		oy = 4
	}
	kex := int(geom[0]-1)*int(geom[4]) + 1
	fits := func(w int) bool { return (w-1)*int(geom[2])+kex <= maxSeg }
	if oct && fits(8) {
		ox = 8
	}
	if w := t.DepthwiseStrip; w > 0 && fits(w) {
		ox = w
	}
	if r := t.DepthwiseRows; r > 0 && ox*r <= maxSeg {
		oy = r
	}
	return ox, oy
}

// convDepthwiseVector returns the values per load and store (its VW) of
// the depthwise kernel of j with ox outputs per strip, but for the
// bindings' first values, which each dispatch checks: 4 or 2 where ox is
// a multiple and, in the source and the destination, the region's width
// and first column are multiples of it in rows, planes and batch images
// of multiples of it; else (or where t refuses it) 1.
func convDepthwiseVector(j *convImageGemm, ox int, t ConvolutionTuning) int {
	return convVectorOf(j.in, j.out, ox, t)
}

// convVectorOf is convDepthwiseVector over any two regions a depthwise
// kernel reads or writes by rows of strips of ox values: 8 (16 bytes of
// halves) too where both are float16.
func convVectorOf(a, b convRegion, ox int, t ConvolutionTuning) int {
	aligned := func(r convRegion, w int) bool {
		return r.w%w == 0 && r.x0%w == 0 && r.stride()%w == 0 && r.plane()%w == 0 && r.batch()%w == 0
	}
	for _, w := range []int{8, 4, 2} {
		if w == 8 && (a.im.format != Float16 || b.im.format != Float16) {
			continue
		}
		if !t.NoDepthwiseVectors && ox%w == 0 && aligned(a, w) && aligned(b, w) {
			return w
		}
	}
	return 1
}

func (e *convEngine) encodeDepthwise(cb *vk.CommandBuffer, key convPipeKey, j *convImageGemm, g *convGemmPush, spans []span, chans []int, binds *[5]vk.BufferRange) error {
	lim := e.limits()
	ox, oy := int(key.ox), int(key.oy)
	firstX, firstY := g.FirstX, g.FirstY
	if j.flip {
		// The data gradient: dx(p) = sum over taps of w[tap] * dy(p - first - tap)
		// is a convolution over dy with the taps reversed, whose first tap
		// lies at -first - (ke-1).
		kex, key := (j.geom[0]-1)*j.geom[4]+1, (j.geom[1]-1)*j.geom[5]+1
		firstX, firstY = -firstX-(kex-1), -firstY-(key-1)
	}
	strips, rows := (j.out.w+ox-1)/ox, (j.out.h+oy-1)/oy
	pc := convDepthwisePush{
		InW: g.InW, InH: g.InH, InX0: g.InX0, InY0: g.InY0, FirstX: firstX, FirstY: firstY,
		OutW: g.OutW, OutH: g.OutH, OutX0: g.OutX0, OutY0: g.OutY0,
		InStride: g.InStride, DstStride: g.DstStride, ImBatch: g.ImBatch, ImPlane: g.ImPlane,
		DstBatch: g.DstBatch, DstPlane: g.DstPlane, WBase: g.WBase, BiasBase: g.BiasBase,
		Channels: uint32(j.out.channels),
	}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	vw := convDepthwiseVector(j, ox, e.tune)
	lz := int(key.lz)
	maxPlanes := int(lim.MaxComputeWorkGroupCount[2]) * lz
	return convBatches(lim, spans, chans, j.batches, func(n, nb int) error {
		// Planes beyond the z count go in further dispatches of whole
		// batch images.
		per := max(1, maxPlanes/j.out.channels)
		for b := n; b < n+nb; b += per {
			cnt := min(per, n+nb-b)
			binds[0], pc.ImBase = spans[0].bind(align, b, 0, cnt, chans[0])
			binds[4], pc.DstBase = spans[1].bind(align, b, 0, cnt, chans[1])
			pc.Planes = uint32(cnt * j.out.channels)
			k := key
			if vw > 1 && pc.ImBase%uint32(vw) == 0 && pc.DstBase%uint32(vw) == 0 {
				w := int32(vw)
				k.vw, k.phase = int8(vw), int8(((firstX%w)+w)%w)
			}
			pl, err := e.pipeline(k)
			if err != nil {
				return err
			}
			groups, err := grid3(&lim, strips, rows, int(pc.Planes), int(key.local), int(key.ly), lz)
			if err != nil {
				return fmt.Errorf("%s: %w", e.label, err)
			}
			if err := cb.Dispatch(pl, binds[:], push, groups); err != nil {
				return fmt.Errorf("%s: %w", e.label, err)
			}
		}
		return nil
	})
}

// convWeightsPush is glsl/convolution_gemm_weights.comp's push-constant
// block.
type convWeightsPush struct {
	XW, XH                   int32
	FirstX, FirstY           int32
	DyX0, DyY0, DyW, DyH     int32
	DyStride, XStride        uint32
	DyBase, DyBatch, DyPlane uint32
	XBase, XBatch, XPlane    uint32
	M, N, K                  uint32
	KChunk                   uint32
	Groups                   uint32
	CinG                     uint32
	PartBase                 uint32
	BiasBase                 uint32
}

// convWeightsGemm is the weight (and bias) gradient of a convolution or
// fully connected layer: dW[g*M + m][n] = sum over the batch and the dy
// pixels of dy * x (glsl/convolution_gemm_weights.comp, or
// glsl/convolution_depthwise_weights.comp for depthwise), db[c] = sum of
// dy over channel c (glsl/convolution_bias_grad.comp).
type convWeightsGemm struct {
	fc        bool // fully connected: k = batch image, dense rows
	groups    int
	m, n      int // per group: output channels, I/G*KH*KW
	cinG      int
	dy, x     convRegion
	firstX    int // x position of the first tap of dy region pixel (0, 0)
	firstY    int
	batches   int
	geom      [6]int32
	depthwise bool
	mult      int
	dW, db    *Image // float32; db may be nil
	// biasFrom is the region whose channel sums are db: dy for a
	// convolution, the transpose convolution's dy (the GEMM's x) for it.
	biasFrom convRegion
}

func (e *convEngine) encodeWeightsGemm(cb *vk.CommandBuffer, j *convWeightsGemm) error {
	lim := e.limits()
	f16 := j.dy.im.format == Float16
	wr, wBase, err := convWholeRange(lim, "weight gradient", j.dW)
	if err != nil {
		return err
	}
	// The sum runs over every batch image: batch images that do not fit
	// one binding go in parts whose partial sums are added at the end,
	// like the splits of K.
	spans := [2]span{j.dy.span(), j.x.span()}
	chans := [2]int{j.dy.spanChannels(), j.x.spanChannels()}
	nb, err := convPartSize(lim, spans[:], chans[:], j.batches)
	if err != nil {
		return fmt.Errorf("%s: %w", e.label, err)
	}
	if j.depthwise && !e.forcesGemm() && convDepthwiseWeightsFit(lim, j.geom) {
		e.lastWeights = convPathDepthwise
		return e.encodeDepthwiseWeights(cb, j, spans[:], chans[:], nb, wr, wBase)
	}
	if p, ok, err := e.winogradWeights(j, nb); err != nil || ok {
		if err != nil {
			return err
		}
		return e.encodeWinogradWeights(cb, j, p, spans[:], chans[:])
	}
	e.lastWeights = convPathTiled
	parts := (j.batches + nb - 1) / nb
	pixels := j.dy.w * j.dy.h
	count := j.groups * j.m * j.n // weight values
	k := nb * pixels              // depth of a part
	if j.fc {
		k = nb
	}
	plan, coop := convWeightsCoop(lim, e.tune, e.force, f16, j.m, j.n, k, int(j.geom[0]*j.geom[1]), j.groups)
	if !coop {
		plan = convPlanWeights(lim, e.tune, e.force, j.m, j.n, k, j.groups, parts)
	}
	choice := plan.choice
	key := convPipeKey{shader: spirv.ConvolutionGemmWeights, f16: f16, geom: j.geom, tile: -1, local: 64}
	if j.fc {
		key.modeA = 1
	}
	splits, chunk := 1, k
	gx, gy := (j.n+63)/64, j.m
	// The tiles sum dy's rows as they go: the bias gradient comes with the
	// weights' when it is dy's (not the transpose convolution's).
	fused := false
	if choice.path == convPathTiled {
		c := gemmTiles[choice.tile].cfg
		key.tile, key.local = int8(choice.tile), int32(c.threads())
		gx, gy = (j.n+c.bn-1)/c.bn, (j.m+c.bm-1)/c.bm
		splits, chunk = plan.splits, plan.chunk
		fused = j.db != nil && j.biasFrom == j.dy
		key.bias = fused
	} else if coop {
		c := choice.coopTile(lim)
		key.coop, key.emu, key.ctile, key.local = true, choice.emu, int8(choice.ctile), int32(c.threads())
		gx, gy = (j.n+c.bn-1)/c.bn, (j.m+c.bm-1)/c.bm
		splits, chunk = plan.splits, plan.chunk
		e.lastWeights = convPathCoopMat
	}
	if gx > int(lim.MaxComputeWorkGroupCount[0]) || gy > int(lim.MaxComputeWorkGroupCount[1]) || j.groups*splits > int(lim.MaxComputeWorkGroupCount[2]) {
		return fmt.Errorf("%w: %s: a %dx%d weight gradient in %d groups exceeds the device's workgroup counts", ErrDeviceLimit, e.label, j.m, j.n, j.groups)
	}
	// A float16 tile's pipeline depends on its bindings (WORDS): made
	// per part below.
	wordsPerPart := f16 && (choice.path == convPathTiled || coop)
	var pl *vk.Pipeline
	if !wordsPerPart {
		if pl, err = e.pipeline(key); err != nil {
			return err
		}
	}
	slots := parts * splits
	scratch := 0
	if slots > 1 {
		scratch = slots * count
	}
	var bias convBiasPlan
	channels := j.groups * j.m
	if fused && slots > 1 {
		bias.off = scratch
		scratch += slots * channels
	} else if j.db != nil && !fused {
		if bias, err = e.planBias(j); err != nil {
			return err
		}
		if bias.slots > 1 {
			bias.off = scratch
			scratch += bias.slots * j.biasFrom.channels
		}
	}
	var part *Image
	var pr vk.BufferRange
	var pb uint32
	if scratch > 0 {
		if part, err = e.scratchImage(scratch); err != nil {
			return err
		}
		if pr, pb, err = convWholeRange(lim, "partial sums", part); err != nil {
			return err
		}
	}
	pc := convWeightsPush{
		XW: int32(j.x.w), XH: int32(j.x.h), FirstX: int32(j.firstX), FirstY: int32(j.firstY),
		DyX0: int32(j.dy.x0), DyY0: int32(j.dy.y0), DyW: int32(j.dy.w), DyH: int32(j.dy.h),
		DyStride: uint32(j.dy.stride()), XStride: uint32(j.x.stride()),
		DyBatch: uint32(j.dy.batch()), DyPlane: uint32(j.dy.plane()),
		XBatch: uint32(j.x.batch()), XPlane: uint32(j.x.plane()),
		M: uint32(j.m), N: uint32(j.n), KChunk: uint32(chunk), Groups: uint32(j.groups), CinG: uint32(j.cinG),
	}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	binds := [4]vk.BufferRange{3: e.dummy.Whole()}
	var bBase uint32
	if fused {
		if binds[3], bBase, err = convWholeRange(lim, "bias gradient", j.db); err != nil {
			return err
		}
		if slots > 1 {
			binds[3], bBase = pr, pb+uint32(bias.off)
		}
	}
	for p := 0; p < parts; p++ {
		n0 := p * nb
		cnt := min(nb, j.batches-n0)
		var xb uint32
		binds[0], pc.DyBase = spans[0].bind(align, n0, 0, cnt, chans[0])
		binds[1], xb = spans[1].bind(align, n0, 0, cnt, chans[1])
		pc.XBase = xb + uint32(j.x.y0*j.x.stride()+j.x.x0)
		pc.K = uint32(cnt * pixels)
		if j.fc {
			pc.K = uint32(cnt)
		}
		binds[2], pc.PartBase = wr, wBase
		if slots > 1 {
			binds[2], pc.PartBase = pr, pb+uint32(p*splits*count)
		}
		pc.BiasBase = bBase + uint32(p*splits*channels)
		if wordsPerPart {
			// Word loads where both bindings grow to whole words.
			b0, ok0 := convWords(binds[0])
			b1, ok1 := convWords(binds[1])
			if key.words = ok0 && ok1; key.words {
				binds[0], binds[1] = b0, b1
			}
			if pl, err = e.pipeline(key); err != nil {
				return err
			}
		}
		// The cooperative-matrix builds have no fused bias sums: the
		// compiler may drop their binding (3).
		nbind := min(len(binds), len(pl.Shader().BindingWrites()))
		if err := cb.Dispatch(pl, binds[:nbind], push, [3]uint32{uint32(gx), uint32(gy), uint32(j.groups * splits)}); err != nil {
			return fmt.Errorf("%s: %w", e.label, err)
		}
	}
	if slots > 1 {
		if err := e.reduce(cb, part, 0, slots, count, j.dW); err != nil {
			return err
		}
		if fused {
			return e.reduce(cb, part, bias.off, slots, channels, j.db)
		}
	}
	if j.db != nil && !fused {
		return e.encodeBiasGrad(cb, j, bias, part)
	}
	return nil
}

// convWords returns r grown to whole 32-bit words, and whether it could
// grow so within its buffer: glsl/convolution_gemm_weights.comp and
// glsl/convolution_gemm.comp read a float16 binding that does (WORDS) as
// the words holding its values, the last word's high half included when
// the values end halfway. r's offset
// is a multiple of 4 (bindings start at a storage-buffer offset
// alignment, 4 at least).
func convWords(r vk.BufferRange) (vk.BufferRange, bool) {
	size := (r.Size + 3) &^ 3
	if r.Offset%4 != 0 || size > r.Buffer.Size() || r.Offset > r.Buffer.Size()-size {
		return r, false
	}
	r.Size = size
	return r, true
}

// convReducePush is glsl/convolution_reduce.comp's push-constant block.
type convReducePush struct{ Count, Splits, InBase, OutBase uint32 }

// reduce records out = sum of the splits of count values of part (from
// value off), in order.
func (e *convEngine) reduce(cb *vk.CommandBuffer, part *Image, off, splits, count int, out *Image) error {
	lim := e.limits()
	pr, pb, err := convWholeRange(lim, "partial sums", part)
	if err != nil {
		return err
	}
	or, ob, err := convWholeRange(lim, "gradient", out)
	if err != nil {
		return err
	}
	return e.reduceDispatch(cb, pr, or, pb+uint32(off), ob, splits, count)
}

// reduceRanges records the sum of the splits partial sums of count
// floats each at the start of in, one after another, into the first count
// floats of out (convolution_reduce.comp, ranges of one buffer or two).
func (e *convEngine) reduceRanges(cb *vk.CommandBuffer, in, out vk.BufferRange, splits, count int) error {
	return e.reduceDispatch(cb, in, out, 0, 0, splits, count)
}

// reduceLanes returns the invocations convolution_reduce.comp gives each
// output (LANES) for count outputs of splits partial sums each on
// workgroups of local invocations: 1, doubled (up to 32, at most splits/2
// and local) while the workgroups would give the device's multiprocessors
// fewer than two each. A weight gradient of few outputs split many ways
// (the ResNet stem's, 64 x 147 in 349 splits on cooperative matrices)
// otherwise leaves most multiprocessors idle while 37 workgroups each add
// 349 values an output: 35.7 us on an H200 (run 2 of
// bench/results/h200-2026-11-29-s5).
func reduceLanes(units, local, splits, count int) int {
	lanes := 1
	for lanes < 32 && 2*lanes <= splits && 2*lanes <= local && local%(2*lanes) == 0 && (count*lanes+local-1)/local < 2*units {
		lanes *= 2
	}
	return lanes
}

func (e *convEngine) reduceDispatch(cb *vk.CommandBuffer, in, out vk.BufferRange, inBase, outBase uint32, splits, count int) error {
	lim := e.limits()
	local := workgroup(lim)
	lanes := reduceLanes(gemmUnits(lim, e.tune), local, splits, count)
	pl, err := e.pipeline(convPipeKey{shader: spirv.ConvolutionReduce, tile: -1, local: int32(local), lanes: int8(lanes)})
	if err != nil {
		return err
	}
	pc := convReducePush{Count: uint32(count), Splits: uint32(splits), InBase: inBase, OutBase: outBase}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	g := min((count*lanes+local-1)/local, int(lim.MaxComputeWorkGroupCount[0]))
	if err := cb.Dispatch(pl, []vk.BufferRange{in, out}, push, [3]uint32{uint32(g), 1, 1}); err != nil {
		return fmt.Errorf("%s: %w", e.label, err)
	}
	return nil
}

// convBiasPush is glsl/convolution_bias_grad.comp's push-constant block.
type convBiasPush struct {
	DyX0, DyY0, DyW, DyH             int32
	DyStride, DyBase, DyBatch, Plane uint32
	Channels, Batches, BChunk        uint32
	OutBase                          uint32
}

// convBiasPlan is how a bias gradient runs: batch images in parts of nb
// that fit one binding, each part in splits of chunk batch images, whose
// slots = parts*splits partial sums go to scratch from value off when
// there is more than one.
type convBiasPlan struct {
	nb, parts     int
	splits, chunk int
	slots, off    int
}

// planBias plans the bias gradient of j: enough workgroups (channels x
// splits) to fill the device.
func (e *convEngine) planBias(j *convWeightsGemm) (convBiasPlan, error) {
	lim := e.limits()
	var p convBiasPlan
	sp := [1]span{j.biasFrom.span()}
	ch := [1]int{j.biasFrom.spanChannels()}
	var err error
	if p.nb, err = convPartSize(lim, sp[:], ch[:], j.batches); err != nil {
		return p, fmt.Errorf("%s: %w", e.label, err)
	}
	p.parts = (j.batches + p.nb - 1) / p.nb
	pixels := j.biasFrom.w * j.biasFrom.h
	s := min(p.nb, max(1, convFill(lim, e.tune)/max(j.biasFrom.channels, 1)), max(1, p.nb*pixels/1024), int(lim.MaxComputeWorkGroupCount[1]))
	s = max(s, 1)
	p.chunk = (p.nb + s - 1) / s
	p.splits = (p.nb + p.chunk - 1) / p.chunk
	p.slots = p.parts * p.splits
	return p, nil
}

// encodeBiasGrad records db = the sums of j.biasFrom per channel over the
// batch and its pixels, as p plans; part is the scratch.
func (e *convEngine) encodeBiasGrad(cb *vk.CommandBuffer, j *convWeightsGemm, p convBiasPlan, part *Image) error {
	lim := e.limits()
	local := 1
	for local*2 <= workgroup(lim) {
		local *= 2
	}
	key := convPipeKey{shader: spirv.ConvolutionBiasGrad, f16: j.biasFrom.im.format == Float16, tile: -1, local: int32(local)}
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	r := j.biasFrom
	channels := r.channels
	if channels > int(lim.MaxComputeWorkGroupCount[0]) {
		return fmt.Errorf("%w: %s: %d channels exceed the device's workgroup count", ErrDeviceLimit, e.label, channels)
	}
	sp := r.span()
	pc := convBiasPush{
		DyX0: int32(r.x0), DyY0: int32(r.y0), DyW: int32(r.w), DyH: int32(r.h),
		DyStride: uint32(r.stride()), DyBatch: uint32(r.batch()), Plane: uint32(r.plane()),
		Channels: uint32(channels), BChunk: uint32(p.chunk),
	}
	or, ob, err := convWholeRange(lim, "bias gradient", j.db)
	if err != nil {
		return err
	}
	if p.slots > 1 {
		if or, ob, err = convWholeRange(lim, "bias gradient partial sums", part); err != nil {
			return err
		}
		ob += uint32(p.off)
	}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [2]vk.BufferRange
	binds[1] = or
	for q := 0; q < p.parts; q++ {
		n0 := q * p.nb
		cnt := min(p.nb, j.batches-n0)
		binds[0], pc.DyBase = sp.bind(align, n0, 0, cnt, r.spanChannels())
		pc.Batches = uint32(cnt)
		key.quads = convBiasQuads(r, pc.DyBase)
		e.lastBias = "values"
		if key.quads {
			e.lastBias = "quads"
		}
		pl, err := e.pipeline(key)
		if err != nil {
			return err
		}
		pc.OutBase = ob + uint32(q*p.splits*channels)
		// Every part runs all splits; those past a short last part's
		// batch images write 0.
		if err := cb.Dispatch(pl, binds[:], push, [3]uint32{uint32(channels), uint32(p.splits), 1}); err != nil {
			return fmt.Errorf("%s: %w", e.label, err)
		}
	}
	if p.slots > 1 {
		return e.reduce(cb, part, p.off, p.slots, channels, j.db)
	}
	return nil
}

// convBiasQuads reports whether the bias gradient of region r, its first
// plane at value base of the binding, adds quads
// (convolution_bias_grad.comp's QUADS): whole rows, so that each plane's
// region is contiguous, of a multiple of 4 values, starting at a
// multiple of 4 in every plane. On an H200 (2026-11-29,
// bench/results/h200-2026-11-29-s8, run 5) quads and the positions
// stepped without divisions took the float16 bias gradients of
// 32x64x112x112 (ResNet's stem) from 55 to 20 us, of 32x64x56x56 from 18
// to 9 (float32 18 to 11) and of VGG's 16x128x112x112 from 56 to 22
// (float32 55 to 30); without quads (7x7 planes) 12 to 11.
func convBiasQuads(r convRegion, base uint32) bool {
	stride := r.stride()
	return r.x0 == 0 && r.w == stride && (r.w*r.h)%4 == 0 && (uint64(base)+uint64(r.y0*stride))%4 == 0 &&
		r.batch()%4 == 0 && r.plane()%4 == 0
}

// convDepthwiseWeightsPush is glsl/convolution_depthwise_weights.comp's
// push-constant block.
type convDepthwiseWeightsPush struct {
	XW, XH, FirstX, FirstY   int32
	DyX0, DyY0, DyW, DyH     int32
	DyStride, XStride        uint32
	DyBase, DyBatch, DyPlane uint32
	XBase, XBatch, XPlane    uint32
	Channels, Batches        uint32
	BChunk                   uint32
	WBase, BBase             uint32
	C0                       uint32
}

// convDepthwiseLocal is the workgroup of the depthwise weight gradient: a
// row of partial sums per tap sits in shared memory.
const convDepthwiseLocal = 64

// convDepthwiseWeightsFit reports whether the depthwise weight gradient's
// partial sums fit the device's shared memory (else the GEMM runs it).
func convDepthwiseWeightsFit(lim vk.Limits, geom [6]int32) bool {
	return uint32((geom[0]*geom[1]+1)*convDepthwiseLocal*4) <= lim.MaxComputeSharedMemorySize
}

// convDepthwiseWeightsSplits returns the splits of nb batch images a
// depthwise weight gradient of channels workgroups of convDepthwiseLocal
// invocations runs in, and the images per split: twice the fill of the
// bias sums' in workgroups, but no more than leave every invocation a
// block of the items a dy plane holds; t.Splits where set.
func convDepthwiseWeightsSplits(lim vk.Limits, t ConvolutionTuning, nb, channels, items int) (splits, chunk int) {
	splits = min(nb, max(1, 2*convFill(lim, t)/max(channels, 1)), max(1, nb*items/convDepthwiseLocal), int(lim.MaxComputeWorkGroupCount[1]))
	if t.Splits > 0 {
		splits = min(t.Splits, nb)
	}
	splits = max(splits, 1)
	chunk = (nb + splits - 1) / splits
	return (nb + chunk - 1) / chunk, chunk
}

func (e *convEngine) encodeDepthwiseWeights(cb *vk.CommandBuffer, j *convWeightsGemm, spans []span, chans []int, nb int, wr vk.BufferRange, wBase uint32) error {
	lim := e.limits()
	local := convDepthwiseLocal
	fused := j.db != nil && j.biasFrom == j.dy // the bias sums come with the weights'
	ox, oy := convDepthwiseBlock(j.geom, e.tune, convVectorOf(j.dy, j.x, 8, e.tune) == 8)
	oy = convDepthwiseWeightsRows(oy, j.dy.h, e.tune)
	key := convPipeKey{shader: spirv.ConvolutionDepthwiseWeights, f16: j.dy.im.format == Float16, tile: -1,
		local: int32(local), geom: j.geom, mult: int32(j.mult), bias: fused, ox: int8(ox), oy: int8(oy)}
	vw := convVectorOf(j.dy, j.x, ox, e.tune)
	channels := j.dy.channels
	if channels > int(lim.MaxComputeWorkGroupCount[0]) {
		return fmt.Errorf("%w: %s: %d channels exceed the device's workgroup count", ErrDeviceLimit, e.label, channels)
	}
	khw := int(j.geom[0] * j.geom[1])
	items := ((j.dy.w + ox - 1) / ox) * ((j.dy.h + oy - 1) / oy) // blocks of a dy plane
	parts := (j.batches + nb - 1) / nb
	splits, chunk := convDepthwiseWeightsSplits(lim, e.tune, nb, channels, items)
	slots := parts * splits
	scratch := 0
	if slots > 1 {
		scratch = slots * channels * (khw + 1)
	}
	var bias convBiasPlan
	var err error
	if j.db != nil && !fused {
		if bias, err = e.planBias(j); err != nil {
			return err
		}
		if bias.slots > 1 {
			bias.off = scratch
			scratch += bias.slots * j.biasFrom.channels
		}
	}
	var part *Image
	var pr vk.BufferRange
	var pb uint32
	if scratch > 0 {
		if part, err = e.scratchImage(scratch); err != nil {
			return err
		}
		if pr, pb, err = convWholeRange(lim, "partial sums", part); err != nil {
			return err
		}
	}
	pc := convDepthwiseWeightsPush{
		XW: int32(j.x.w), XH: int32(j.x.h), FirstX: int32(j.firstX), FirstY: int32(j.firstY),
		DyX0: int32(j.dy.x0), DyY0: int32(j.dy.y0), DyW: int32(j.dy.w), DyH: int32(j.dy.h),
		DyStride: uint32(j.dy.stride()), XStride: uint32(j.x.stride()),
		DyBatch: uint32(j.dy.batch()), DyPlane: uint32(j.dy.plane()),
		XBatch: uint32(j.x.batch()), XPlane: uint32(j.x.plane()),
		Channels: uint32(channels), BChunk: uint32(chunk),
	}
	binds := [4]vk.BufferRange{{}, {}, wr, e.dummy.Whole()}
	var bBase uint32
	if fused {
		if binds[3], bBase, err = convWholeRange(lim, "bias gradient", j.db); err != nil {
			return err
		}
	}
	if slots > 1 {
		binds[2] = pr
		if fused {
			binds[3], bBase = pr, pb+uint32(slots*channels*khw)
		}
	}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	for p := 0; p < parts; p++ {
		n0 := p * nb
		cnt := min(nb, j.batches-n0)
		var xb uint32
		binds[0], pc.DyBase = spans[0].bind(align, n0, 0, cnt, chans[0])
		binds[1], xb = spans[1].bind(align, n0, 0, cnt, chans[1])
		pc.XBase = xb + uint32(j.x.y0*j.x.stride()+j.x.x0)
		pc.Batches = uint32(cnt)
		pc.WBase, pc.BBase = wBase, bBase
		k := key
		if vw > 1 && pc.DyBase%uint32(vw) == 0 && pc.XBase%uint32(vw) == 0 {
			w := int32(vw)
			k.vw, k.phase = int8(vw), int8(((pc.FirstX%w)+w)%w)
		}
		pl, err := e.pipeline(k)
		if err != nil {
			return err
		}
		if slots > 1 {
			pc.WBase = pb + uint32(p*splits*channels*khw)
			pc.BBase = bBase + uint32(p*splits*channels)
		}
		if err := cb.Dispatch(pl, binds[:], push, [3]uint32{uint32(channels), uint32(splits), 1}); err != nil {
			return fmt.Errorf("%s: %w", e.label, err)
		}
	}
	if slots > 1 {
		if err := e.reduce(cb, part, 0, slots, channels*khw, j.dW); err != nil {
			return err
		}
		if fused {
			if err := e.reduce(cb, part, slots*channels*khw, slots, channels, j.db); err != nil {
				return err
			}
		}
	}
	if j.db != nil && !fused {
		return e.encodeBiasGrad(cb, j, bias, part)
	}
	return nil
}

// convNeuronPush is glsl/convolution_neuron.comp's push-constant block.
type convNeuronPush struct {
	W, H                         int32
	AX0, AY0, OutX0, OutY0       int32
	AStride, ABase, ABatch       uint32
	APlane                       uint32
	OutStride, OutBase, OutBatch uint32
	OutPlane                     uint32
	ZBase                        uint32
	Channels, Batches            uint32
	PreluBase, ChanBase          uint32
}

// encodeNeuron records, over regions of the same size, out = neuron(a)
// (mode 0) or out = a * neuron'(z) (mode 1), z dense.
func (e *convEngine) encodeNeuron(cb *vk.CommandBuffer, mode int, a, z, out convRegion, batches int) error {
	lim := e.limits()
	local := workgroup(lim)
	pl, err := e.pipeline(convPipeKey{shader: spirv.ConvolutionNeuron, f16: a.im.format == Float16, tile: -1, local: int32(local),
		modeA: int8(mode), neuron: true})
	if err != nil {
		return err
	}
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	spans := [3]span{a.span(), z.span(), out.span()}
	chans := [3]int{a.spanChannels(), z.spanChannels(), out.spanChannels()}
	prelu := e.dummy.Whole()
	if e.prelu != nil {
		prelu = e.prelu.Whole()
	}
	pc := convNeuronPush{
		W: int32(a.w), H: int32(a.h), AX0: int32(a.x0), AY0: int32(a.y0), OutX0: int32(out.x0), OutY0: int32(out.y0),
		AStride: uint32(a.stride()), ABatch: uint32(a.batch()), APlane: uint32(a.plane()),
		OutStride: uint32(out.stride()), OutBatch: uint32(out.batch()), OutPlane: uint32(out.plane()),
		Channels: uint32(a.channels),
	}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	binds := [4]vk.BufferRange{{}, {}, prelu, {}}
	return convBatches(lim, spans[:], chans[:], batches, func(n, nb int) error {
		binds[0], pc.ABase = spans[0].bind(align, n, 0, nb, chans[0])
		binds[1], pc.ZBase = spans[1].bind(align, n, 0, nb, chans[1])
		binds[3], pc.OutBase = spans[2].bind(align, n, 0, nb, chans[2])
		pc.Batches = uint32(nb)
		total := nb * a.channels * a.w * a.h
		g := min((total+local-1)/local, int(lim.MaxComputeWorkGroupCount[0]))
		if err := cb.Dispatch(pl, binds[:], push, [3]uint32{uint32(g), 1, 1}); err != nil {
			return fmt.Errorf("%s: %w", e.label, err)
		}
		return nil
	})
}
