package ops

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// convH100 is an H100's limits as package vk reports them (what the
// choice reads).
var convH100 = vk.Limits{
	MaxComputeWorkGroupCount:       [3]uint32{1<<31 - 1, 65535, 65535},
	MaxComputeWorkGroupSize:        [3]uint32{1024, 1024, 64},
	MaxComputeWorkGroupInvocations: 1024,
	MaxComputeSharedMemorySize:     49152,
	SubgroupSize:                   32,
	ComputeUnits:                   132,
	Float16Storage:                 true,
}

// The choice picks, on an H100, what issue 15's sweep of forced tiles and
// split counts measured fastest there (µs in the comments: default before
// this rule / tiles 0..3 / chosen), by the model of gemmCost rather than a
// table of shapes.
func TestConvChoiceFollowsTheSweep(t *testing.T) {
	image := []struct {
		name         string
		m, n, k      int
		tile, splits int
	}{
		{"3x3-64 fwd and dx", 64, 32 * 56 * 56, 576, 1, 1}, // 500 315 352 509
		{"1x1-512-512 fwd", 512, 32 * 49, 512, 2, 1},       // 85 59 48 62
		{"stem fwd", 64, 32 * 112 * 112, 147, 1, 1},        // 550 322 405 602
		{"vgg fwd", 128, 16 * 112 * 112, 1152, 0, 1},       // 1993 2372 2673 3828
		{"1x1-512-2048 fwd", 2048, 32 * 49, 512, 0, 1},     // (not swept)
	}
	for _, c := range image {
		got := gemmChoose(convH100, ConvolutionTuning{}, nil, c.m, c.n, c.k, 9, 1, false, false, true)
		if got.path != convPathTiled || got.tile != c.tile || got.splits != c.splits {
			t.Errorf("%s: chose %v tile %d, %d splits; want tile %d, %d splits", c.name, got.path, got.tile, got.splits, c.tile, c.splits)
		}
	}
	// The 3x3 convolution at 14x14 on the GEMM path takes tile 2 unsplit
	// where its K cannot split, as the sweep measured (415 435 369 544);
	// where it can, tile 1 over 2 splits (tiledImageSplits: on an H200,
	// bench/results/h200-2026-11-28-s2 run 5, 288 µs against 393 on tile 2
	// and 356 on tile 1 unsplit; gemmCost alone would split it on tile 0,
	// whose 4 splits ran 3869 µs on the H100 before the finishing pass
	// read through a readonly view); forced, the split count follows the
	// tuning.
	m, n, k := 256, 32*14*14, 2304
	for _, c := range []struct {
		split        bool
		tile, splits int
	}{{false, 2, 1}, {true, 1, 2}} {
		if got := gemmChoose(convH100, ConvolutionTuning{}, nil, m, n, k, 9, 1, false, false, c.split); got.tile != c.tile || got.splits != c.splits {
			t.Errorf("3x3@14 (may split %v): %+v", c.split, got)
		}
	}
	// The stride-2 forwards (run 5, µs, default before -> after): 128->256
	// at 28x28 (K 1152) 203 -> 158 in 2 splits, 256->512 at 14x14 200 ->
	// 197; 64->128 at 56x56 (K 576) keeps tile 1 unsplit (146).
	for _, c := range []struct {
		m, n, k, tile, splits int
	}{{256, 32 * 14 * 14, 1152, 1, 2}, {512, 32 * 7 * 7, 2304, 1, 2}, {128, 32 * 28 * 28, 576, 1, 1}} {
		if got := gemmChoose(convH100, ConvolutionTuning{}, nil, c.m, c.n, c.k, 9, 1, false, false, true); got.tile != c.tile || got.splits != c.splits {
			t.Errorf("stride-2 forward %dx%dx%d: %+v", c.m, c.n, c.k, got)
		}
	}
	if got := gemmChoose(convH100, ConvolutionTuning{Splits: 4}, nil, m, n, k, 9, 1, false, false, true); got.splits != 4 || got.chunk != 576 {
		t.Errorf("3x3@14 under splits=4: %+v", got)
	}
	weights := []struct {
		name       string
		m, n, k    int
		tiles      []int
		minS, maxS int
	}{
		// 1134 / 8448 398 339 1129; splits 1, 8, 32, 128 under tile 3: 8300 1136 663 606
		{"3x3-64 dW", 64, 576, 32 * 56 * 56, []int{2}, 20, 80},
		// 500 / 3852 407 500 668; splits: 588 366 411 573. Tile 0 since
		// its compile-time build: 265 299 326 (H100), 259 297 325 (H200).
		{"3x3@14 dW", 256, 2304, 32 * 14 * 14, []int{0}, 4, 16},
		// 124 / 746 82 66 124; splits: 125 80 96 203
		{"1x1-512-512 dW", 512, 512, 32 * 49, []int{2}, 2, 8},
		// 1284 / 13631 676 490 1283; splits: 31296 3995 1140 703
		{"stem dW", 64, 147, 32 * 112 * 112, []int{2}, 40, 200},
		// 8365 / 30289 3293 3717 8356; splits: 15960 4934 4334 4223. Tile 0
		// since its compile-time build: 1738 2060 2435 (H200).
		{"vgg dW", 128, 1152, 16 * 112 * 112, []int{0}, 8, 60},
		// The stride-2 and 1x1 weight gradients (H200, float32, tile 0..3,
		// bench/results/h200-2026-11-28-s2 run 1; the H100 within 2%):
		// 154 166 202 243 (64->128 at 56), 147 155 169 241, 170 168 192
		// 233, and 1x1 512->2048 at 7x7 132 139 144 222.
		{"s2-128 dW", 128, 576, 32 * 28 * 28, []int{0}, 16, 80},
		{"s2-256 dW", 256, 1152, 32 * 14 * 14, []int{0}, 4, 32},
		{"s2-512 dW", 512, 2304, 32 * 7 * 7, []int{0, 1}, 2, 16},
		{"1x1-512-2048 dW", 2048, 512, 32 * 49, []int{0}, 1, 8},
	}
	for _, c := range weights {
		p := convPlanWeights(convH100, ConvolutionTuning{}, nil, c.m, c.n, c.k, 1, 1)
		ok := false
		for _, tile := range c.tiles {
			ok = ok || (p.choice.path == convPathTiled && p.choice.tile == tile)
		}
		if !ok || p.splits < c.minS || p.splits > c.maxS || p.chunk%gemmTiles[p.choice.tile].cfg.bk != 0 || p.splits*p.chunk < c.k ||
			(p.splits-1)*p.chunk >= c.k {
			t.Errorf("%s: chose %v tile %d, %d splits of %d; want tile %v, %d..%d splits", c.name, p.choice.path, p.choice.tile,
				p.splits, p.chunk, c.tiles, c.minS, c.maxS)
		}
	}
	// A tuning forces: a tile and a split count; small problems go direct.
	p := convPlanWeights(convH100, ConvolutionTuning{Path: ConvolutionPathTiled, Tile: 3, Splits: 8}, nil, 64, 576, 100352, 1, 1)
	if p.choice.tile != 3 || p.splits != 8 {
		t.Errorf("forced tile 3, 8 splits: got %+v", p)
	}
	if c := gemmChoose(convH100, ConvolutionTuning{}, nil, 4, 4, 4, 9, 1, false, false, true); c.path != convPathDirect {
		t.Errorf("a tiny GEMM: %v", c.path)
	}
}

// Cooperative matrices: taken for float16 image GEMMs where a tuning asks
// for them and the device lists a shape the tile can use (the first of
// convCoopShapes), and by default (convCoopDefaultTile) where
// convCoopDefault says so; never for float32, under NoCoopMat, for weight
// gradients or on devices without them.
func TestConvChoiceCoopMat(t *testing.T) {
	shape := func(m, n, k uint32, c vk.ComponentType) vk.CooperativeMatrixShape {
		return vk.CooperativeMatrixShape{M: m, N: n, K: k, A: vk.ComponentFloat16, B: vk.ComponentFloat16, C: c, D: c}
	}
	lim := convH100
	lim.CooperativeMatrixNV = []vk.CooperativeMatrixShape{shape(16, 16, 16, vk.ComponentFloat16), shape(16, 16, 16, vk.ComponentFloat32),
		shape(16, 8, 8, vk.ComponentFloat32)}
	c, ok := convCoopTileFor(lim, 0)
	if !ok || c.cm != 16 || c.cn != 16 || c.ck != 16 {
		t.Errorf("shape from %v: %+v %v", lim.CooperativeMatrixNV, c, ok)
	}
	if got := gemmChoose(lim, ConvolutionTuning{Path: ConvolutionPathCoopMat}, nil, 64, 100352, 576, 9, 1, true, true, true); got.path != convPathCoopMat || got.ctile != 0 {
		t.Errorf("float16 under coopmat=1: %+v", got)
	}
	last := len(convCoopTiles) - 1
	if got := gemmChoose(lim, ConvolutionTuning{Path: ConvolutionPathCoopMat, CoopTile: last}, nil, 64, 100352, 576, 9, 1, true, true, true); got.path != convPathCoopMat || got.ctile != last {
		t.Errorf("float16 under cooptile=%d: %+v", last, got)
	}
	// A tile the device's shared memory cannot hold is ignored.
	small := lim
	small.MaxComputeSharedMemorySize = 32768
	// (48 rows: the default keeps them on the tiles.)
	if got := gemmChoose(small, ConvolutionTuning{Path: ConvolutionPathCoopMat, CoopTile: 3}, nil, 48, 100352, 576, 9, 1, true, true, true); got.path != convPathTiled {
		t.Errorf("cooptile=3 (%v) in 32 KiB: %+v", convCoopTiles[3], got)
	}
	for _, n := range []struct {
		name string
		lim  vk.Limits
		t    ConvolutionTuning
		f16  bool
	}{{"float32", lim, ConvolutionTuning{Path: ConvolutionPathCoopMat}, false},
		{"default", lim, ConvolutionTuning{}, true}, {"refused", lim, ConvolutionTuning{NoCoopMat: true}, true},
		{"none", convH100, ConvolutionTuning{Path: ConvolutionPathCoopMat}, true}} {
		if got := gemmChoose(n.lim, n.t, nil, 48, 100352, 576, 9, 1, n.f16, true, true); got.path != convPathTiled {
			t.Errorf("%s: %v", n.name, got.path)
		}
	}
	// By default: 3x3 windows of 256 channels (ResNet's 14x14 layer) and
	// 128 (VGG's 112x112), not float32, on the 128 x 128 tile; GEMMs of 49
	// to 64 rows (64 channels, the stem) on the 64 x 128 one; 1x1 windows of 256 channels or more over 1024 columns or more,
	// on 64 x 128 tiles where 128 x 128 ones would not fill the device.
	for _, d := range []struct {
		name          string
		lim           vk.Limits
		t             ConvolutionTuning
		m, n, k, taps int
		f16           bool
		want          convPath
		ctile         int
	}{
		{"3x3 256", lim, ConvolutionTuning{}, 256, 6272, 2304, 9, true, convPathCoopMat, convCoopDefaultTile},
		{"3x3 128", lim, ConvolutionTuning{}, 128, 200704, 1152, 9, true, convPathCoopMat, convCoopDefaultTile},
		{"3x3 512 at 7x7", lim, ConvolutionTuning{}, 512, 1568, 4608, 9, true, convPathCoopMat, convCoopDefaultTile},
		{"3x3 64", lim, ConvolutionTuning{}, 64, 100352, 576, 9, true, convPathCoopMat, convCoopRowsTile},
		{"stem 7x7 to 64", lim, ConvolutionTuning{}, 64, 401408, 147, 49, true, convPathCoopMat, convCoopRowsTile},
		{"1x1 stride-2 data gradient to 64", lim, ConvolutionTuning{}, 64, 25088, 128, 1, true, convPathCoopMat, convCoopRowsTile},
		{"3x3 to 48", lim, ConvolutionTuning{}, 48, 100352, 576, 9, true, convPathTiled, 0},
		{"64 rows, 64 deep", lim, ConvolutionTuning{}, 64, 100352, 64, 1, true, convPathTiled, 0},
		{"64 rows, few columns", lim, ConvolutionTuning{}, 64, 2048, 576, 9, true, convPathTiled, 0},
		{"3x3 64 to 128 stride 2", lim, ConvolutionTuning{}, 128, 25088, 576, 9, true, convPathCoopMat, convCoopDefaultTile},
		{"3x3 32 to 128", lim, ConvolutionTuning{}, 128, 25088, 288, 9, true, convPathTiled, 0},
		{"1x1 512 to 2048", lim, ConvolutionTuning{}, 2048, 1568, 512, 1, true, convPathCoopMat, convCoopDefaultTile},
		{"1x1 2048 to 512 (data gradient)", lim, ConvolutionTuning{}, 512, 1568, 2048, 1, true, convPathCoopMat, coopSplitTile},
		{"1x1 512 to 512", lim, ConvolutionTuning{}, 512, 1568, 512, 1, true, convPathCoopMat, 2},
		{"1x1 512, fewer units", lim, ConvolutionTuning{ComputeUnits: 32}, 512, 1568, 512, 1, true, convPathCoopMat, convCoopDefaultTile},
		{"1x1 128", lim, ConvolutionTuning{}, 128, 1568, 512, 1, true, convPathTiled, 0},
		{"1x1 512 to 128 at 28x28", lim, ConvolutionTuning{}, 128, 25088, 512, 1, true, convPathCoopMat, convCoopDefaultTile},
		{"1x1 64 to 256 at 56x56", lim, ConvolutionTuning{}, 256, 100352, 64, 1, true, convPathCoopMat, convCoopDefaultTile},
		{"1x1 32 to 256 at 56x56", lim, ConvolutionTuning{}, 256, 100352, 32, 1, true, convPathTiled, 0},
		{"1x1 to 96 at 56x56", lim, ConvolutionTuning{}, 96, 100352, 256, 1, true, convPathTiled, 0},
		{"1x1 from 128", lim, ConvolutionTuning{}, 512, 1568, 128, 1, true, convPathTiled, 0},
		{"1x1 over 512 columns", lim, ConvolutionTuning{}, 1024, 512, 512, 1, true, convPathTiled, 0},
		{"float32", lim, ConvolutionTuning{}, 256, 6272, 2304, 9, false, convPathTiled, 0},
		{"float32 1x1", lim, ConvolutionTuning{}, 2048, 1568, 512, 1, false, convPathTiled, 0},
		{"refused", lim, ConvolutionTuning{NoCoopMat: true}, 256, 6272, 2304, 9, true, convPathTiled, 0},
		{"no shapes", convH100, ConvolutionTuning{}, 256, 6272, 2304, 9, true, convPathTiled, 0},
	} {
		got := gemmChoose(d.lim, d.t, nil, d.m, d.n, d.k, d.taps, 1, d.f16, true, true)
		if got.path != d.want || (d.want == convPathCoopMat && got.ctile != d.ctile) {
			t.Errorf("%s: %+v, want %v tile %d", d.name, got, d.want, d.ctile)
		}
	}
	// Split K: 1x1 windows whose tiles leave multiprocessors idle over a
	// depth of 1024 or more, on the split tile, at most two workgroups per
	// multiprocessor (52 tiles of 128 x 128, 5 splits of 416); 3x3
	// windows in 2 splits where their tiles would not give every other
	// multiprocessor one (52 tiles; not 98); never where the GEMM may not
	// split or its depth is 512; the tuning's count on a forced tile.
	for _, d := range []struct {
		name          string
		t             ConvolutionTuning
		m, n, k       int
		split         bool
		ctile, splits int
	}{
		{"2048 to 512", ConvolutionTuning{}, 512, 1568, 2048, true, coopSplitTile, 5},
		{"2048 to 512, no split", ConvolutionTuning{}, 512, 1568, 2048, false, 2, 1},
		{"512 to 512", ConvolutionTuning{}, 512, 1568, 512, true, 2, 1},
		{"512 to 2048", ConvolutionTuning{}, 2048, 1568, 512, true, convCoopDefaultTile, 1},
		{"3x3 256 to 512 stride 2", ConvolutionTuning{}, 512, 1568, 2304, true, convCoopDefaultTile, 2},
		{"3x3 128 to 256 stride 2", ConvolutionTuning{}, 256, 6272, 1152, true, convCoopDefaultTile, 1},
		{"3x3 64 to 512 stride 2", ConvolutionTuning{}, 512, 1568, 576, true, convCoopDefaultTile, 1},
		{"3x3 256 to 512 stride 2, no split", ConvolutionTuning{}, 512, 1568, 2304, false, convCoopDefaultTile, 1},
		{"cooptile=2,splits=4", ConvolutionTuning{Path: ConvolutionPathCoopMat, CoopTile: 2, Splits: 4}, 512, 1568, 2048, true, 2, 4},
		{"cooptile=3", ConvolutionTuning{Path: ConvolutionPathCoopMat, CoopTile: 3}, 512, 1568, 2048, true, 3, 5},
		{"splits=1", ConvolutionTuning{Splits: 1}, 512, 1568, 2048, true, 2, 1},
	} {
		taps := 1
		if strings.HasPrefix(d.name, "3x3") {
			taps = 9
		}
		got := gemmChoose(lim, d.t, nil, d.m, d.n, d.k, taps, 1, true, true, d.split)
		if got.path != convPathCoopMat || got.ctile != d.ctile || got.splits != d.splits || got.splits*got.chunk < d.k {
			t.Errorf("%s: %+v, want tile %d in %d splits", d.name, got, d.ctile, d.splits)
		}
	}
	// The measured split: 128 slices of 16 in 5 chunks of 26 (416 deep).
	if got := gemmChoose(lim, ConvolutionTuning{}, nil, 512, 1568, 2048, 1, 1, true, true, true); got.chunk != 416 {
		t.Errorf("2048 to 512: chunk %d, want 416", got.chunk)
	}
	lim.CooperativeMatrixNV = []vk.CooperativeMatrixShape{shape(16, 16, 16, vk.ComponentFloat16), shape(32, 8, 16, vk.ComponentFloat32)}
	if convCoopMatSupported(lim) {
		t.Errorf("no usable shape in %v", lim.CooperativeMatrixNV)
	}
	lim.CooperativeMatrixNV, lim.SubgroupSize = []vk.CooperativeMatrixShape{shape(16, 8, 16, vk.ComponentFloat32)}, 48
	if convCoopMatSupported(lim) {
		t.Error("subgroups of 48")
	}
}

// The tiles (subgroups of 32) run on other subgroup sizes with the same
// outputs, slices and threads: more subgroups, each a smaller block, for
// 8 and 16 (lavapipe, Intel), fewer for 64 (AMD), each block whole
// matrices; never where that cannot be.
func TestConvCoopForSubgroup(t *testing.T) {
	tile := func(i, cm, cn, ck int) convCoopConfig {
		c := convCoopTiles[i]
		c.cm, c.cn, c.ck = cm, cn, ck
		return c
	}
	for _, d := range []struct {
		c      convCoopConfig
		size   int
		wm, wn int
		ok     bool
	}{
		{tile(0, 16, 8, 16), 32, 2, 2, true},
		{tile(0, 8, 8, 8), 8, 4, 4, true},     // 64x64: blocks of 16x16
		{tile(10, 8, 8, 8), 8, 4, 4, true},    // 64x128 in 1x4: the longer blocks (64 rows) split first
		{tile(12, 8, 8, 8), 8, 4, 8, true},    // 64x128 in 2x4
		{tile(0, 8, 16, 16), 16, 4, 2, true},  // Intel's 8x16x16
		{tile(0, 16, 16, 16), 64, 2, 1, true}, // AMD's wave64
		{tile(3, 16, 8, 16), 64, 2, 2, true},
		{tile(0, 16, 16, 16), 8, 4, 4, true},  // blocks of one 16x16 matrix
		{tile(0, 16, 16, 16), 4, 0, 0, false}, // 64 / (8*16): not whole matrices
		{tile(0, 16, 8, 16), 48, 0, 0, false},
		{tile(0, 16, 8, 16), 0, 0, 0, false},
	} {
		got, ok := convCoopForSubgroup(d.c, d.size)
		if ok != d.ok || ok && (got.wm != d.wm || got.wn != d.wn || got.subgroup != d.size || got.threads() != d.c.threads() ||
			got.bm != d.c.bm || got.bn != d.c.bn || got.bk != d.c.bk || !got.valid()) {
			t.Errorf("%v of %dx%dx%d on subgroups of %d: %+v %v, want %dx%d subgroups %v", d.c, d.c.cm, d.c.cn, d.c.ck, d.size, got, ok, d.wm, d.wn, d.ok)
		}
	}
}

// The real cooperative-matrix builds run through VK_NV_cooperative_matrix
// where the device lists a shape of convCoopShapes there, else through
// VK_KHR_cooperative_matrix (convCoopKHR), with that list's shapes and
// the device's subgroups: lavapipe's 8x8x8 in subgroups of 8; an engine
// under coopkhr=1 sees no NV shapes on a device that lists both.
func TestConvCoopKHRChoice(t *testing.T) {
	shape := func(m, n, k uint32) vk.CooperativeMatrixShape {
		return vk.CooperativeMatrixShape{M: m, N: n, K: k, A: vk.ComponentFloat16, B: vk.ComponentFloat16, C: vk.ComponentFloat32, D: vk.ComponentFloat32}
	}
	nv := []vk.CooperativeMatrixShape{shape(16, 16, 16), shape(16, 8, 16), shape(16, 8, 8)}
	lim := convH100
	lim.CooperativeMatrixNV, lim.CooperativeMatrixKHR = nv, nv
	if convCoopKHR(lim) {
		t.Error("both extensions: want NV's")
	}
	lim.CooperativeMatrixNV = nil
	c, ok := convCoopTileFor(lim, 0)
	if !convCoopKHR(lim) || !ok || c.cm != 16 || c.cn != 8 || c.ck != 16 {
		t.Errorf("KHR only: %v %+v %v", convCoopKHR(lim), c, ok)
	}
	lavapipe := vk.Limits{SubgroupSize: 8, Float16Storage: true, MaxComputeSharedMemorySize: 32768, MaxComputeWorkGroupInvocations: 1024,
		MaxComputeWorkGroupSize: [3]uint32{1024, 1024, 1024}, CooperativeMatrixKHR: []vk.CooperativeMatrixShape{shape(8, 8, 8)}}
	c, ok = convCoopTileFor(lavapipe, convCoopRowsTile)
	if !ok || c.cm != 8 || c.cn != 8 || c.ck != 8 || c.subgroup != 8 || c.threads() != convCoopTiles[convCoopRowsTile].threads() {
		t.Errorf("lavapipe, tile %d: %+v %v", convCoopRowsTile, c, ok)
	}
	if !convCoopMatSupported(lavapipe) {
		t.Error("lavapipe's KHR shapes: not supported")
	}
	lavapipe.CooperativeMatrixKHR = []vk.CooperativeMatrixShape{{M: 8, N: 8, K: 8, A: vk.ComponentFloat16, B: vk.ComponentFloat16,
		C: vk.ComponentFloat16, D: vk.ComponentFloat16}}
	if convCoopMatSupported(lavapipe) {
		t.Error("float16 accumulators only: supported")
	}
	both := convH100
	both.CooperativeMatrixNV, both.CooperativeMatrixKHR = nv, nv
	e := &convEngine{tune: ConvolutionTuning{CoopKHR: true}}
	if got := e.limitsOf(both); len(got.CooperativeMatrixNV) != 0 || !convCoopKHR(got) {
		t.Errorf("coopkhr=1: %+v", got.CooperativeMatrixNV)
	}
	if got := (&convEngine{}).limitsOf(both); convCoopKHR(got) {
		t.Error("default: KHR where NV is listed")
	}
	nvOnly := both
	nvOnly.CooperativeMatrixKHR = nil
	if got := e.limitsOf(nvOnly); convCoopKHR(got) {
		t.Error("coopkhr=1 on a device without the KHR extension: its NV shapes dropped")
	}
}

// Every cooperative-matrix tile is valid with every shape of
// convCoopShapes and fits an H100 (48 KiB of shared memory, subgroups of
// 32), tiles up to 128 x 128 x 32 of 8 subgroups included; its emulated
// build fits lavapipe (32 KiB, subgroups of 8), for the tests.
func TestConvCoopTiles(t *testing.T) {
	lavapipe := vk.Limits{MaxComputeWorkGroupSize: [3]uint32{1024, 1024, 1024}, MaxComputeWorkGroupInvocations: 1024,
		MaxComputeSharedMemorySize: 32768, SubgroupSize: 8, Float16Storage: true}
	for i, c := range convCoopTiles {
		if c.subgroup != 32 {
			t.Errorf("tile %d %v: subgroups of %d", i, c, c.subgroup)
		}
		for _, s := range convCoopShapes {
			c.cm, c.cn, c.ck = s[0], s[1], s[2]
			if !c.valid() || !c.fits(convH100, 2) {
				t.Errorf("tile %d %v with %v: valid %v, %d bytes of shared memory", i, c, s, c.valid(), c.shared(2))
			}
		}
		e, ok := convCoopEmuFor(lavapipe, i)
		if !ok || e.bm != c.bm || e.bn != c.bn || e.wm != c.wm || e.wn != c.wn {
			t.Errorf("tile %d %v: emulated %+v %v", i, c, e, ok)
		}
		if ConvolutionCoopTileName(i) != c.String() {
			t.Errorf("tile %d: name %q", i, ConvolutionCoopTileName(i))
		}
	}
	if e, _ := convCoopEmuFor(lavapipe, 0); e.bk != 16 || e.ck != 8 {
		t.Errorf("emulated tile 0: %+v", e)
	}
}

// The weight gradient's "t0" builds fix gemmTiles[0] in the shader's
// source: the two must agree.
func TestConvWeightsTile0Build(t *testing.T) {
	src, err := os.ReadFile("../glsl/convolution_gemm_weights.comp")
	if err != nil {
		t.Fatal(err)
	}
	c := gemmTiles[0].cfg
	for name, v := range map[string]int{"BM": c.bm, "BN": c.bn, "BK": c.bk, "TM": c.tm, "TN": c.tn} {
		if want := fmt.Sprintf("const uint %s = %d;", name, v); !strings.Contains(string(src), want) {
			t.Errorf("glsl/convolution_gemm_weights.comp lacks %q (gemmTiles[0] is %v)", want, c)
		}
	}
}

// The Winograd products take, on an H100, the tile the 2026-11-27 sweep
// measured fastest (µs, forward, tiles 0..3): the 4x8 block everywhere
// but VGG's forward, where 4x8 and 4x4 were within the sweep's noise
// (its data gradient: 821 against 956). Not the 8x8 block (its "t0"
// build, the tile fixed at compile time, ran 5-30% slower than the 4x8;
// specialized it spilled: the first column below).
func TestConvWinogradChoiceFollowsTheSweep(t *testing.T) {
	for _, c := range []struct {
		name    string
		m, n, k int
		tile    int
	}{
		{"3x3-64@56", 64, 32 * 14 * 14, 64, 1},         // 1993 185 200 222
		{"3x3-128@28", 128, 32 * 7 * 7, 128, 1},        // 1115 127 138 162
		{"3x3-256@14", 256, 32 * 4 * 4, 256, 1},        // 1323 121 136 170
		{"3x3-512@7", 512, 32 * 2 * 2, 512, 1},         // 1754 136 146 178
		{"vgg 3x3-128@112", 128, 16 * 28 * 28, 128, 1}, // 7824 2279 957 1182 (dx: 7830 821 956 1181)
	} {
		got := gemmBest(convH100, ConvolutionTuning{}, gemmWinograd, c.m, c.n, c.k, winogradTaps, 1, false, -1)
		if got.path != convPathTiled || got.tile != c.tile {
			t.Errorf("%s: chose %v tile %d, want tile %d", c.name, got.path, got.tile, c.tile)
		}
	}
}

// The direct cooperative-matrix GEMM stores quads into whole rows of
// planes of a multiple of 4 pixels (28x28), and into a split's partial
// sums of such images; not into 7x7 planes, a region narrower than its
// image's rows, a strided data gradient's phases, or planes of a multiple
// of 4 pixels in rows that are not (6x10 in an image of 3 channels of
// 6x10 is, channels 60 apart).
func TestConvCoopQuads(t *testing.T) {
	region := func(w, h, x0, rw int) convRegion {
		return convRegion{im: &Image{w: w, h: h, cTotal: 3}, channels: 3, x0: x0, w: rw, h: h}
	}
	for _, c := range []struct {
		name   string
		j      convImageGemm
		splitk bool
		want   bool
	}{
		{"28x28", convImageGemm{out: region(28, 28, 0, 28)}, false, true},
		{"6x10", convImageGemm{out: region(10, 6, 0, 10)}, false, true},
		{"7x7", convImageGemm{out: region(7, 7, 0, 7)}, false, false},
		{"7x7 split", convImageGemm{out: region(7, 7, 0, 7)}, true, false},
		{"28x28 split", convImageGemm{out: region(28, 28, 0, 28)}, true, true},
		{"region of 12 in rows of 16", convImageGemm{out: region(16, 4, 4, 12)}, false, false},
		{"region of 12 in rows of 16, split", convImageGemm{out: region(16, 4, 4, 12)}, true, true},
		{"phases", convImageGemm{out: region(28, 28, 0, 28), modeB: gemmBPhases}, true, false},
	} {
		if got := convCoopQuads(&c.j, c.splitk); got != c.want {
			t.Errorf("%s: quads %v, want %v", c.name, got, c.want)
		}
	}
}

// Winograd's X goes to the output transform as halves where it holds
// 2^18 or more values per position by default (ResNet's 64@56 at batch
// 32: 6272 tiles of 64 channels; VGG's 128@112 at 16), not below (128@28:
// 1568 tiles of 128); winoxhalf=1 and 0 force and refuse it.
func TestWinogradXHalf(t *testing.T) {
	on, off := ConvolutionTuning{WinogradXHalf: true}, ConvolutionTuning{NoWinogradXHalf: true}
	for _, c := range []struct {
		tune     ConvolutionTuning
		m, tiles int
		want     bool
	}{
		{ConvolutionTuning{}, 64, 6272, true}, {ConvolutionTuning{}, 128, 12544, true}, {ConvolutionTuning{}, 128, 1568, false},
		{ConvolutionTuning{}, 512, 128, false}, {ConvolutionTuning{}, 64, 4096, true}, {ConvolutionTuning{}, 64, 4095, false},
		{on, 512, 128, true}, {on, 1, 1, true}, {off, 64, 6272, false},
	} {
		if got := winogradXHalf(c.tune, c.m, c.tiles); got != c.want {
			t.Errorf("%q, %d channels, %d tiles: X as halves %v, want %v", c.tune, c.m, c.tiles, got, c.want)
		}
	}
}

// The Winograd products on cooperative matrices take the tiles an H100
// measured fastest (2026-11-27, run 4 of bench/results/h100-2026-11-27-coop):
// 128 x 128 x 16 for the forwards and data gradients of 128 to 512
// channels, and 64 x 128 x 16 up to 64 (an H200, 2026-11-29, run 2 of
// bench/results/h200-2026-11-29-s8: 64@56 84.9 -> 77.9 us); for weight gradients 64 x 64 up to 64 output channels, in
// about eight workgroups per multiprocessor (run 6: 169 us at 64@56,
// against 218 on 64 x 128 in two per multiprocessor and 288 on tile 7),
// and 128 x 128 x 32 above, in two.
func TestWinogradCoopTile(t *testing.T) {
	for _, c := range []struct {
		m       int
		weights bool
		want    int
	}{{64, false, convCoopRowsTile}, {32, false, convCoopRowsTile}, {65, false, 7}, {128, false, 7}, {512, false, 7},
		{64, true, 0}, {32, true, 0}, {128, true, 3}, {512, true, 3}} {
		if got := winogradCoopTile(c.m, c.weights); got != c.want {
			t.Errorf("m %d weights %v: tile %d, want %d", c.m, c.weights, got, c.want)
		}
		if c.want == 7 && convCoopTiles[7] != (convCoopConfig{bm: 128, bn: 128, bk: 16, wm: 2, wn: 4, subgroup: 32}) {
			t.Errorf("tile 7 is %v, not the 128x128x16/2x4 measured", convCoopTiles[7])
		}
		if c.want == convCoopRowsTile && convCoopTiles[c.want] != (convCoopConfig{bm: 64, bn: 128, bk: 16, wm: 1, wn: 4, subgroup: 32}) {
			t.Errorf("tile %d is %v, not the 64x128x16/1x4 measured", c.want, convCoopTiles[c.want])
		}
	}
}

// Winograd weight gradients on cooperative matrices split the tiles for
// about two workgroups per multiprocessor on 128 x 128 tiles and eight on
// 64 x 64 ones, each split at least 4 slices deep; a tuned count wins.
func TestWinogradCoopSplits(t *testing.T) {
	for _, c := range []struct {
		name                      string
		tile, want, m, cin, tiles int
		splits                    int
	}{
		{"64@56 on 64x64", 0, 0, 64, 64, 32 * 14 * 14, 28},   // 36 workgroups a split: ceil(8*132/36) = 30, in chunks of 7 slices
		{"128@28 on 128x128", 3, 0, 128, 128, 32 * 7 * 7, 7}, // ceil(2*132/36) = 8, in chunks of 7 slices
		{"512@7 on 128x128", 3, 0, 512, 512, 32 * 2 * 2, 1},  // 576 workgroups without splits
		{"few tiles", 0, 0, 64, 64, 100, 1},                  // 4 slices: one split of 4
		{"tuned", 0, 5, 64, 64, 32 * 14 * 14, 5},
	} {
		cfg := convCoopTiles[c.tile]
		splits, chunk := winogradCoopSplits(cfg, 132, c.want, c.m, c.cin, c.tiles)
		if splits != c.splits || chunk%cfg.bk != 0 || splits*chunk < c.tiles || (splits-1)*chunk >= c.tiles {
			t.Errorf("%s: %d splits of %d tiles, want %d splits covering %d", c.name, splits, chunk, c.splits, c.tiles)
		}
	}
}

// Float16 weight gradients run on cooperative matrices by default where
// the GEMM has 32 or more rows and columns and a depth of 1024 or more
// (ResNet's stem: 64 x 147 over 401408; a 1x1 512 -> 2048 layer at 7x7),
// on convWeightsCoopTile's tile (the one whose rows and columns the GEMM
// fills), split for coopSplits'
// workgroups per multiprocessor; not for float32, not for few rows or a
// short depth, not under coopmat=0 or a forced tile, not on devices
// without them; cooptile=N and splits=N set the tile and the splits.
func TestConvWeightsCoop(t *testing.T) {
	lim := convH100
	lim.CooperativeMatrixNV = []vk.CooperativeMatrixShape{{M: 16, N: 8, K: 16, A: vk.ComponentFloat16, B: vk.ComponentFloat16,
		C: vk.ComponentFloat32, D: vk.ComponentFloat32}}
	for _, c := range []struct {
		name             string
		lim              vk.Limits
		tune             ConvolutionTuning
		f16              bool
		m, n, k, groups  int
		want             bool
		ctile, splitsMin int
		taps             int
	}{
		{"stem", lim, ConvolutionTuning{}, true, 64, 147, 401408, 1, true, 0, 2, 49},
		{"1x1 512 to 2048", lim, ConvolutionTuning{}, true, 2048, 512, 1568, 1, true, convCoopDefaultTile, 1, 1},
		{"1x1 256 to 64", lim, ConvolutionTuning{}, true, 64, 256, 100352, 1, true, convCoopRowsTile, 1, 1},
		{"1x1 64 to 256", lim, ConvolutionTuning{}, true, 256, 64, 100352, 1, true, 1, 1, 1},
		{"3x3 64 to 64", lim, ConvolutionTuning{}, true, 64, 576, 100352, 1, true, 0, 1, 9},
		{"64 columns from 3x3 windows", lim, ConvolutionTuning{}, true, 256, 64, 100352, 1, true, convCoopDefaultTile, 1, 9},
		{"1x1 64 to 64", lim, ConvolutionTuning{}, true, 64, 64, 100352, 1, true, 0, 1, 1},
		{"short depth", lim, ConvolutionTuning{}, true, 2048, 512, 512, 1, false, 0, 0, 1},
		{"float32", lim, ConvolutionTuning{}, false, 64, 147, 401408, 1, false, 0, 0, 49},
		{"few rows", lim, ConvolutionTuning{}, true, 16, 147, 401408, 1, false, 0, 0, 49},
		{"refused", lim, ConvolutionTuning{NoCoopMat: true}, true, 64, 147, 401408, 1, false, 0, 0, 49},
		{"tiles forced", lim, ConvolutionTuning{Path: ConvolutionPathTiled, Tile: 1}, true, 64, 147, 401408, 1, false, 0, 0, 49},
		{"no shapes", convH100, ConvolutionTuning{}, true, 64, 147, 401408, 1, false, 0, 0, 49},
		{"cooptile=2", lim, ConvolutionTuning{Path: ConvolutionPathCoopMat, CoopTile: 2}, true, 16, 16, 64, 1, true, 2, 1, 1},
		{"splits=5", lim, ConvolutionTuning{Splits: 5}, true, 64, 147, 401408, 1, true, 0, 5, 49},
	} {
		p, ok := convWeightsCoop(c.lim, c.tune, nil, c.f16, c.m, c.n, c.k, c.taps, c.groups)
		if ok != c.want {
			t.Errorf("%s: %v, want %v", c.name, ok, c.want)
			continue
		}
		if !ok {
			continue
		}
		cfg := p.choice.coopTile(c.lim)
		if p.choice.path != convPathCoopMat || p.choice.ctile != c.ctile || p.splits < c.splitsMin || p.chunk%cfg.bk != 0 ||
			p.splits*p.chunk < c.k || (p.splits-1)*p.chunk >= c.k {
			t.Errorf("%s: %+v, want tile %d in %d or more splits covering %d", c.name, p, c.ctile, c.splitsMin, c.k)
		}
		if c.tune.Splits > 0 && p.splits != c.tune.Splits {
			t.Errorf("%s: %d splits", c.name, p.splits)
		}
	}
}

// The depthwise kernels' blocks and vector widths: strips of 8 where
// float16 rows load 8 values at a time, else 4, or dwstrip, where the
// strip's input span fits maxSeg; 4 rows at stride 1, else 1, or dwrows
// where the block fits maxSeg; 8 values (float16 only), quads, pairs or
// single values by the widest width that divides the strip and both
// regions' width, first column, rows, planes and batch images; single
// values under dwvec=0.
func TestConvDepthwiseStripAndVector(t *testing.T) {
	geom := func(k, s, d int32) [6]int32 { return [6]int32{k, k, s, s, d, d} }
	for _, c := range []struct {
		name   string
		geom   [6]int32
		tune   ConvolutionTuning
		oct    bool
		ox, oy int
	}{
		{"default", geom(3, 1, 1), ConvolutionTuning{}, false, 4, 4},
		{"strided", geom(3, 2, 1), ConvolutionTuning{}, false, 4, 1},
		{"float16 octets", geom(3, 1, 1), ConvolutionTuning{}, true, 8, 4},
		{"float16 octets strided", geom(3, 2, 1), ConvolutionTuning{}, true, 8, 1},
		{"float16 octets dwstrip=4", geom(3, 1, 1), ConvolutionTuning{DepthwiseStrip: 4}, true, 4, 4},
		{"dwstrip=8", geom(3, 1, 1), ConvolutionTuning{DepthwiseStrip: 8}, false, 8, 4},
		{"dwrows=2", geom(3, 1, 1), ConvolutionTuning{DepthwiseRows: 2}, false, 4, 2},
		{"dwrows=8 strided", geom(3, 2, 1), ConvolutionTuning{DepthwiseRows: 8}, false, 4, 8},
		// 8 x 8 values exceed maxSeg: the default rows.
		{"dwstrip=8 dwrows=8", geom(3, 1, 1), ConvolutionTuning{DepthwiseStrip: 8, DepthwiseRows: 8}, false, 8, 4},
		// 11 taps dilated 3 (31 columns) at stride 2: 8 outputs span 45 > maxSeg.
		{"dwstrip=8 too wide", geom(11, 2, 3), ConvolutionTuning{DepthwiseStrip: 8}, false, 4, 1},
		{"float16 octets too wide", geom(11, 2, 3), ConvolutionTuning{}, true, 4, 1},
	} {
		ox, oy := convDepthwiseBlock(c.geom, c.tune, c.oct)
		if ox != c.ox || oy != c.oy {
			t.Errorf("%s: block %dx%d, want %dx%d", c.name, ox, oy, c.ox, c.oy)
		}
	}
	// Forwards take fewer rows where blocks of 4 would leave fewer than
	// 3072 invocations a multiprocessor; weight gradients where two
	// blocks do not fit a plane. The shapes of run 4 of
	// bench/results/h200-2026-11-28-s3 on 132 multiprocessors.
	h200 := vk.Limits{ComputeUnits: 132}
	for _, c := range []struct {
		name           string
		channels, size int
		tune           ConvolutionTuning
		oy, woy        int
	}{
		{"56x56", 256, 56, ConvolutionTuning{}, 4, 4},
		{"14x14", 512, 14, ConvolutionTuning{}, 2, 4},
		{"7x7", 960, 7, ConvolutionTuning{}, 1, 2},
		{"3x3", 64, 3, ConvolutionTuning{}, 1, 1},
		{"7x7 dwrows=4", 960, 7, ConvolutionTuning{DepthwiseRows: 4}, 4, 4},
		{"56x56 on 1024 multiprocessors", 256, 56, ConvolutionTuning{ComputeUnits: 1024}, 2, 4},
	} {
		out := convRegion{im: &Image{w: c.size, h: c.size, cTotal: c.channels}, channels: c.channels, w: c.size, h: c.size}
		j := &convImageGemm{geom: geom(3, 1, 1), batches: 32, in: out, out: out}
		if ox, oy := convDepthwiseStrip(j, h200, c.tune); ox != 4 || oy != c.oy {
			t.Errorf("%s: forward block %dx%d, want 4x%d", c.name, ox, oy, c.oy)
		}
		_, oy := convDepthwiseBlock(j.geom, c.tune, false)
		if got := convDepthwiseWeightsRows(oy, c.size, c.tune); got != c.woy {
			t.Errorf("%s: weight-gradient rows %d, want %d", c.name, got, c.woy)
		}
	}
	// Weight gradients split the batch to twice the bias sums' fill of
	// workgroups, but no further than a block for every invocation: 7x7
	// planes on 64 channels hold 8 blocks of 4 x 2, so 32 images split 4
	// ways (64 invocations a workgroup, 64 blocks a split), not the 6 that
	// pixels over 4 gave.
	for _, c := range []struct {
		name                   string
		channels, items        int
		tune                   ConvolutionTuning
		wantSplits, wantChunks int
	}{
		{"56x56 256 channels", 256, 14 * 14, ConvolutionTuning{}, 8, 4},
		{"14x14 512 channels", 512, 4 * 4, ConvolutionTuning{}, 4, 8},
		{"7x7 960 channels", 960, 2 * 4, ConvolutionTuning{}, 2, 16},
		{"7x7 64 channels", 64, 2 * 4, ConvolutionTuning{}, 4, 8},
		{"splits=5", 64, 2 * 4, ConvolutionTuning{Splits: 5}, 5, 7},
	} {
		lim := h200
		lim.MaxComputeWorkGroupCount = [3]uint32{65535, 65535, 65535}
		if s, k := convDepthwiseWeightsSplits(lim, c.tune, 32, c.channels, c.items); s != c.wantSplits || k != c.wantChunks {
			t.Errorf("%s: %d splits of %d images, want %d of %d", c.name, s, k, c.wantSplits, c.wantChunks)
		}
	}
	// Exact workgroups (dwexact=1) take a grid's own width and height and
	// stack planes up to 256 invocations; localSize rounds to powers of two.
	lim := vk.Limits{MaxComputeWorkGroupSize: [3]uint32{1024, 1024, 64}, MaxComputeWorkGroupInvocations: 1024}
	for _, c := range []struct{ w, h, z, lx, ly, lz, px, py, pz int }{
		{14, 14, 8192, 14, 14, 1, 16, 16, 1},
		{4, 7, 16384, 4, 7, 9, 4, 8, 8},
		{2, 7, 30720, 2, 7, 18, 2, 8, 16},
		{40, 3, 5, 32, 3, 2, 32, 4, 2},
	} {
		if lx, ly, lz := localSizeExact(lim, c.w, c.h, c.z); lx != c.lx || ly != c.ly || lz != c.lz {
			t.Errorf("exact %dx%dx%d: %dx%dx%d, want %dx%dx%d", c.w, c.h, c.z, lx, ly, lz, c.lx, c.ly, c.lz)
		}
		if lx, ly, lz := localSize(lim, c.w, c.h, c.z); lx != c.px || ly != c.py || lz != c.pz {
			t.Errorf("powers of two %dx%dx%d: %dx%dx%d, want %dx%dx%d", c.w, c.h, c.z, lx, ly, lz, c.px, c.py, c.pz)
		}
	}
	regionOf := func(f Format, w, h, x0, rw int) convRegion {
		return convRegion{im: &Image{w: w, h: h, cTotal: 3, format: f}, channels: 3, x0: x0, w: rw, h: h}
	}
	region := func(w, h, x0, rw int) convRegion { return regionOf(Float32, w, h, x0, rw) }
	half := func(w, h, x0, rw int) convRegion { return regionOf(Float16, w, h, x0, rw) }
	for _, c := range []struct {
		name    string
		in, out convRegion
		ox      int
		tune    ConvolutionTuning
		want    int
	}{
		{"float16 octets", half(16, 5, 0, 16), half(16, 5, 0, 16), 8, ConvolutionTuning{}, 8},
		{"float16 strip of 4", half(16, 5, 0, 16), half(16, 5, 0, 16), 4, ConvolutionTuning{}, 4},
		{"float16 first column 4", half(16, 5, 4, 8), half(16, 5, 0, 16), 8, ConvolutionTuning{}, 4},
		{"float32 strip of 8", region(16, 5, 0, 16), region(16, 5, 0, 16), 8, ConvolutionTuning{}, 4},
		{"float16 dwvec=0", half(16, 5, 0, 16), half(16, 5, 0, 16), 8, ConvolutionTuning{NoDepthwiseVectors: true}, 1},
		{"quads", region(16, 5, 0, 16), region(16, 5, 0, 16), 4, ConvolutionTuning{}, 4},
		{"rows of 14", region(14, 5, 0, 14), region(14, 5, 0, 14), 4, ConvolutionTuning{}, 2},
		{"first column 2", region(16, 5, 2, 12), region(16, 5, 0, 16), 4, ConvolutionTuning{}, 2},
		{"region width 6 in rows of 16", region(16, 5, 4, 6), region(16, 5, 0, 16), 4, ConvolutionTuning{}, 2},
		{"odd destination", region(16, 5, 0, 16), region(13, 5, 0, 13), 4, ConvolutionTuning{}, 1},
		{"planes of 15", region(5, 3, 0, 5), region(5, 3, 0, 5), 4, ConvolutionTuning{}, 1},
		{"strip of 2", region(16, 5, 0, 16), region(16, 5, 0, 16), 2, ConvolutionTuning{}, 2},
		{"strip of 5", region(16, 5, 0, 16), region(16, 5, 0, 16), 5, ConvolutionTuning{}, 1},
		{"dwvec=0", region(16, 5, 0, 16), region(16, 5, 0, 16), 4, ConvolutionTuning{NoDepthwiseVectors: true}, 1},
	} {
		if got := convDepthwiseVector(&convImageGemm{in: c.in, out: c.out}, c.ox, c.tune); got != c.want {
			t.Errorf("%s: %d values per load, want %d", c.name, got, c.want)
		}
	}
}

// The phases of a strided data gradient split by tap where their
// workgroups would not give every multiprocessor two (ResNet-18's 3x3
// stride-2 gradient of 512 to 256 channels at 14x14: 104 tiles of 128 x
// 128 over the 4 phases, each split a tap of 512 channels), not where
// they would (784 tiles at 56x56), nor over a single tap or channels
// that are not whole slices, nor on cooperative matrices; tapsplit=1
// and 0 force and refuse it, phasetaps=0 refuses it, and splits=N splits
// every phase evenly.
func TestPhaseSplit(t *testing.T) {
	tiled := func(tile int) convChoice { return convChoice{path: convPathTiled, tile: tile} }
	coop := convChoice{path: convPathCoopMat, ctile: convCoopDefaultTile}
	for _, d := range []struct {
		name                    string
		t                       ConvolutionTuning
		c                       convChoice
		m, n, z, cinG, gridTaps int
		splits, chunk           int
		byTap                   bool
	}{
		{"512 to 256 at 14x14", ConvolutionTuning{}, tiled(0), 256, 1568, 4, 512, 4, 4, 512, true},
		{"128 to 64 at 56x56", ConvolutionTuning{}, tiled(1), 64, 25088, 4, 128, 4, 1, 512, false},
		{"tapsplit=1", ConvolutionTuning{TapSplit: true}, tiled(1), 64, 25088, 4, 128, 4, 4, 128, true},
		{"tapsplit=0", ConvolutionTuning{NoTapSplit: true}, tiled(0), 256, 1568, 4, 512, 4, 1, 2048, false},
		{"phasetaps=0", ConvolutionTuning{NoPhaseTaps: true}, tiled(0), 256, 1568, 4, 512, 4, 1, 2048, false},
		{"1x1 stride 2", ConvolutionTuning{}, tiled(0), 256, 1568, 4, 512, 1, 1, 512, false},
		{"12 channels", ConvolutionTuning{}, tiled(0), 256, 1568, 4, 12, 4, 1, 48, false},
		{"splits=3", ConvolutionTuning{Splits: 3}, tiled(0), 256, 1568, 4, 512, 4, 3, 688, false},
		{"direct", ConvolutionTuning{}, convChoice{path: convPathDirect}, 256, 1568, 4, 512, 4, 1, 2048, false},
		{"cooperative matrices", ConvolutionTuning{}, coop, 256, 1568, 4, 512, 4, 1, 2048, false},
		{"cooperative matrices, tapsplit=1", ConvolutionTuning{TapSplit: true}, coop, 256, 1568, 4, 512, 4, 4, 512, true},
	} {
		got := phaseSplit(convH100, d.t, d.c, d.m, d.n, d.z, d.cinG, d.gridTaps)
		if got.splits != d.splits || got.chunk != d.chunk || got.byTap != d.byTap || got.path != d.c.path {
			t.Errorf("%s: %+v, want %d splits of %d (by tap %v)", d.name, got, d.splits, d.chunk, d.byTap)
		}
		if got.splits*got.chunk < d.cinG*d.gridTaps {
			t.Errorf("%s: %d splits of %d miss some of %d", d.name, got.splits, got.chunk, d.cinG*d.gridTaps)
		}
	}
}

// Strided data gradients without groups run as a columns GEMM and col2im
// by default where their windows have several taps and the GEMM 1024
// rows or more (ResNet-18's 3x3 stride-2 gradients of 128 and 256 input
// channels, not 64; not 1x1 stride 2), and under col2im=1 wherever they
// are strided without groups; never under col2im=0, with groups, at
// stride 1, on the small-channel gather, on a forced direct path, or where
// the columns GEMM would be too small for tiles.
func TestUseCol2im(t *testing.T) {
	job := func(cin, k, stride, groups int) *convImageGemm {
		return &convImageGemm{modeA: gemmATransposed, modeB: gemmBPhases, groups: groups, m: cin / groups, cinG: 64,
			batches: 2, in: convRegion{w: 14, h: 14}, geom: [6]int32{int32(k), int32(k), int32(stride), int32(stride), 1, 1}}
	}
	tiny := job(64, 3, 2, 1)
	tiny.in.w, tiny.in.h, tiny.batches = 1, 1, 1 // 576 x 1 x 64
	for _, d := range []struct {
		name  string
		t     ConvolutionTuning
		force *convChoice
		j     *convImageGemm
		want  bool
	}{
		{"3x3/2 from 128", ConvolutionTuning{}, nil, job(128, 3, 2, 1), true},
		{"3x3/2 from 256", ConvolutionTuning{}, nil, job(256, 3, 2, 1), true},
		{"3x3/2 from 64", ConvolutionTuning{}, nil, job(64, 3, 2, 1), false},
		{"1x1/2 from 2048", ConvolutionTuning{}, nil, job(2048, 1, 2, 1), false},
		{"col2im=1, 3x3/2 from 64", ConvolutionTuning{Col2im: true}, nil, job(64, 3, 2, 1), true},
		{"col2im=1, 1x1/2", ConvolutionTuning{Col2im: true}, nil, job(64, 1, 2, 1), true},
		{"col2im=0", ConvolutionTuning{NoCol2im: true}, nil, job(256, 3, 2, 1), false},
		{"groups", ConvolutionTuning{Col2im: true}, nil, job(256, 3, 2, 2), false},
		{"stride 1", ConvolutionTuning{Col2im: true}, nil, job(256, 3, 1, 1), false},
		{"small channels", ConvolutionTuning{Col2im: true}, nil, job(3, 7, 2, 1), false},
		{"direct", ConvolutionTuning{Col2im: true}, &convChoice{path: convPathDirect}, job(256, 3, 2, 1), false},
		{"direct=1", ConvolutionTuning{Col2im: true, Path: ConvolutionPathDirect}, nil, job(256, 3, 2, 1), false},
		{"too small for tiles", ConvolutionTuning{Col2im: true}, nil, tiny, false},
	} {
		e := &convEngine{tune: d.t, force: d.force}
		if got := e.useCol2im(d.j); got != d.want {
			t.Errorf("%s: %v, want %v", d.name, got, d.want)
		}
	}
}

// A strided data gradient whose kernel is narrower than its stride sums
// in only some of its phases (a 1x1 stride-2 one: 1 of 4): the choice for
// every phase stands where its tiles give the summing phases a
// workgroup per multiprocessor, else the choice for those phases alone
// (phaseWorkChoice; µs on an H200 in its comment).
func TestConvPhaseWorkChoice(t *testing.T) {
	for _, c := range []struct {
		name           string
		m, n, k        int
		before, chosen int // tiles
	}{
		{"1x1/2 128->64 at 56", 64, 32 * 28 * 28, 128, 1, 1},
		{"1x1/2 256->128 at 28", 128, 32 * 14 * 14, 256, 1, 2},
		{"1x1/2 512->256 at 14", 256, 32 * 7 * 7, 512, 0, 2},
	} {
		all := gemmChoose(convH100, ConvolutionTuning{}, nil, c.m, c.n, c.k, 1, 4, false, false, false)
		got := phaseWorkChoice(convH100, ConvolutionTuning{}, nil, all, c.m, c.n, c.k, 1, 1, false)
		if all.path != convPathTiled || all.tile != c.before || got.path != convPathTiled || got.tile != c.chosen || got.splits != 1 {
			t.Errorf("%s: for 4 phases %+v, for the one that sums %+v; want tiles %d, %d", c.name, all, got, c.before, c.chosen)
		}
	}
	// A forced tile stays.
	force := convChoice{path: convPathTiled, tile: 0}
	all := gemmChoose(convH100, ConvolutionTuning{}, &force, 256, 32*7*7, 512, 1, 4, false, false, false)
	if got := phaseWorkChoice(convH100, ConvolutionTuning{}, &force, all, 256, 32*7*7, 512, 1, 1, false); got.tile != 0 {
		t.Errorf("forced tile 0: %+v", got)
	}
}

// convolution_reduce.comp shares an output among lanes only where its
// workgroups would leave multiprocessors idle: the ResNet stem's weight
// gradient on an H200 (64 x 147 values in 349 splits) takes 8, large or
// lightly split sums 1; lanes never exceed half the splits, 32, or what
// divides the workgroup.
func TestReduceLanes(t *testing.T) {
	for _, c := range []struct {
		units, local, splits, count, want int
	}{
		{132, 256, 349, 64 * 147, 8},
		{132, 256, 88, 64 * 147, 8},
		{132, 256, 2, 512 * 512 * 9, 1},
		{132, 256, 3, 64 * 147, 2},
		{132, 256, 1000, 10, 32},
		{64, 64, 1000, 10, 32},
		{64, 48, 1000, 10, 16},
		{132, 256, 1, 10, 1},
	} {
		if got := reduceLanes(c.units, c.local, c.splits, c.count); got != c.want {
			t.Errorf("reduceLanes(%d, %d, %d, %d) = %d, want %d", c.units, c.local, c.splits, c.count, got, c.want)
		}
	}
}

// Fully connected layers of a small batch split their K where their
// tiles would leave most multiprocessors idle (fewTileSplits): ResNet's
// classifier (512 -> 1000 at batch 32) forward and data gradient on an
// H100, each split at least 4 slices deep and into no more workgroups
// than about one a multiprocessor; not where the split is not allowed,
// the tuning sets a count, K is shallow (LeNet-5's 256 -> 120), the
// work is small (under 2^23 multiply-adds) or the tiles fill the device.
func TestConvFewTileSplits(t *testing.T) {
	for _, c := range []struct {
		name    string
		m, n, k int
	}{{"classifier fwd", 1000, 32, 512}, {"classifier dx", 512, 32, 1000}} {
		got := gemmChoose(convH100, ConvolutionTuning{}, nil, c.m, c.n, c.k, 1, 1, false, false, true)
		cfg := gemmTiles[got.tile].cfg
		wgs := (c.m + cfg.bm - 1) / cfg.bm * ((c.n + cfg.bn - 1) / cfg.bn)
		if got.path != convPathTiled || got.splits < 2 || got.chunk < 4*cfg.bk || got.splits*got.chunk < c.k ||
			(got.splits-1)*wgs > int(convH100.ComputeUnits) {
			t.Errorf("%s: %+v (%d workgroups a split)", c.name, got, wgs)
		}
		if got := gemmChoose(convH100, ConvolutionTuning{}, nil, c.m, c.n, c.k, 1, 1, false, false, false); got.splits > 1 {
			t.Errorf("%s without splits allowed: %+v", c.name, got)
		}
		if got := gemmChoose(convH100, ConvolutionTuning{Splits: 1}, nil, c.m, c.n, c.k, 1, 1, false, false, true); got.splits != 1 {
			t.Errorf("%s under splits=1: %+v", c.name, got)
		}
	}
	for _, c := range []struct {
		name    string
		m, n, k int
	}{{"lenet fc1", 120, 64, 256}, {"1x1-512-2048 fwd", 2048, 32 * 49, 512}, {"wide classifier", 1000, 4096, 512},
		{"small work", 40, 32, 600}} {
		if got := gemmChoose(convH100, ConvolutionTuning{}, nil, c.m, c.n, c.k, 1, 1, false, false, true); got.splits != 1 {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}

// A 1x1 data gradient whose A is the weights by columns takes tile 7
// (128 x 128 x 16) where the default would be tile 3 or 2, keeping its
// split; not another operand mode, another tile, a forced tile, nor a
// device that cannot run tile 7.
func TestCoopColumnsTile(t *testing.T) {
	lim := convH100
	lim.CooperativeMatrixNV = []vk.CooperativeMatrixShape{{M: 16, N: 8, K: 16, A: vk.ComponentFloat16, B: vk.ComponentFloat16,
		C: vk.ComponentFloat32, D: vk.ComponentFloat32}}
	c := convChoice{path: convPathCoopMat, ctile: convCoopDefaultTile, splits: 2, chunk: 256}
	if got := coopColumnsTile(lim, ConvolutionTuning{}, nil, c, gemmAColumns); got.ctile != coopSplitTile || got.splits != 2 || got.chunk != 256 {
		t.Errorf("columns: %+v", got)
	}
	if got := coopColumnsTile(lim, ConvolutionTuning{}, nil, c, gemmAWeights); got != c {
		t.Errorf("weights: %+v", got)
	}
	c2 := c
	c2.ctile = 2
	if got := coopColumnsTile(lim, ConvolutionTuning{}, nil, c2, gemmAColumns); got.ctile != coopSplitTile || got.splits != 2 {
		t.Errorf("tile 2: %+v", got)
	}
	c0 := c
	c0.ctile = convCoopRowsTile
	if got := coopColumnsTile(lim, ConvolutionTuning{}, nil, c0, gemmAColumns); got != c0 {
		t.Errorf("tile %d: %+v", convCoopRowsTile, got)
	}
	if got := coopColumnsTile(lim, ConvolutionTuning{Path: ConvolutionPathCoopMat, CoopTile: convCoopDefaultTile}, nil, c, gemmAColumns); got != c {
		t.Errorf("cooptile=3 forced: %+v", got)
	}
	if got := coopColumnsTile(lim, ConvolutionTuning{}, &c, c, gemmAColumns); got != c {
		t.Errorf("a test's force: %+v", got)
	}
	small := lim
	small.CooperativeMatrixNV = nil
	if got := coopColumnsTile(small, ConvolutionTuning{}, nil, c, gemmAColumns); got != c {
		t.Errorf("no cooperative matrices: %+v", got)
	}
}

// The bias gradient adds quads only where each plane's region is
// contiguous (whole rows), a multiple of 4 values long and starting at a
// multiple of 4 in every plane and batch image.
func TestConvBiasQuads(t *testing.T) {
	whole := func(w, h, c int) convRegion {
		return convRegion{im: &Image{w: w, h: h, cTotal: c}, channels: c, w: w, h: h}
	}
	rows := whole(8, 8, 3)
	rows.y0, rows.h = 2, 5 // rows 2..6: 40 values from value 16 of each plane
	oddRows := rows
	oddRows.y0 = 1 // ... from value 8: still a multiple of 4
	clipped := whole(8, 8, 3)
	clipped.x0, clipped.w = 1, 4 // not whole rows
	twoRows := whole(6, 5, 3)
	twoRows.h = 2 // 12 values a plane, but planes 30 values apart
	for _, c := range []struct {
		name string
		r    convRegion
		base uint32
		want bool
	}{
		{"8x8 planes", whole(8, 8, 3), 0, true},
		{"8x8 planes from value 4", whole(8, 8, 3), 4, true},
		{"8x8 planes from value 2", whole(8, 8, 3), 2, false},
		{"7x5 planes", whole(5, 7, 4), 0, false},
		{"6x6 planes, 3 channels", whole(6, 6, 3), 0, true},
		{"rows 0 to 1 of 6x5 planes (channels 30 apart)", twoRows, 0, false},
		{"rows 2 to 6", rows, 0, true},
		{"rows 1 to 5", oddRows, 0, true},
		{"columns 1 to 4", clipped, 0, false},
	} {
		if got := convBiasQuads(c.r, c.base); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// convCoopShapeFor gives the forward GEMMs of convolutions (the real
// builds of convolution_gemm_coopmat.comp over weight rows) 16x16x16 by
// default and every other cooperative-matrix pipeline the device's
// order, the tuning's shape overriding both; convCoopShaped applies a
// shape only where the device lists it (any in the emulated build).
func TestConvCoopShapeDefaults(t *testing.T) {
	fwd := convPipeKey{shader: spirv.ConvolutionGemmCoopmat, coop: true, modeA: gemmAWeights}
	for _, c := range []struct {
		name string
		k    convPipeKey
		tune ConvolutionTuning
		want int
	}{
		{"forward", fwd, ConvolutionTuning{}, 2},
		{"forward, coopshape=1", fwd, ConvolutionTuning{CoopShape: 1}, 1},
		{"forward, emulated", convPipeKey{shader: spirv.ConvolutionGemmCoopmat, coop: true, emu: true}, ConvolutionTuning{}, 0},
		{"data gradient", convPipeKey{shader: spirv.ConvolutionGemmCoopmat, coop: true, modeA: gemmATransposed}, ConvolutionTuning{}, 0},
		{"1x1 data gradient", convPipeKey{shader: spirv.ConvolutionGemmCoopmat, coop: true, modeA: gemmAColumns}, ConvolutionTuning{}, 0},
		{"Winograd", convPipeKey{shader: spirv.ConvolutionWinogradCoopmat, coop: true}, ConvolutionTuning{}, 0},
		{"Winograd, coopshape=2", convPipeKey{shader: spirv.ConvolutionWinogradCoopmat, coop: true}, ConvolutionTuning{CoopShape: 2}, 2},
		{"weight gradient", convPipeKey{shader: spirv.ConvolutionGemmWeights, coop: true}, ConvolutionTuning{}, 0},
	} {
		if got := convCoopShapeFor(c.k, c.tune); got != c.want {
			t.Errorf("%s: shape %d, want %d", c.name, got, c.want)
		}
	}
	lim := convH100
	lim.CooperativeMatrixNV = []vk.CooperativeMatrixShape{
		{M: 16, N: 8, K: 16, A: vk.ComponentFloat16, B: vk.ComponentFloat16, C: vk.ComponentFloat32, D: vk.ComponentFloat32},
		{M: 16, N: 16, K: 16, A: vk.ComponentFloat16, B: vk.ComponentFloat16, C: vk.ComponentFloat32, D: vk.ComponentFloat32},
	}
	tile, ok := convCoopTileFor(lim, convCoopDefaultTile)
	if !ok || tile.cn != 8 {
		t.Fatalf("default tile %+v %v", tile, ok)
	}
	if s := convCoopShaped(lim, tile, 2, false); s.cm != 16 || s.cn != 16 || s.ck != 16 {
		t.Errorf("16x16x16 listed: %+v", s)
	}
	if s := convCoopShaped(lim, tile, 3, false); s != tile {
		t.Errorf("16x8x8 not listed: %+v, want the tile unchanged", s)
	}
	if s := convCoopShaped(lim, tile, 0, false); s != tile {
		t.Errorf("shape 0: %+v", s)
	}
	lavapipe := vk.Limits{MaxComputeWorkGroupSize: [3]uint32{1024, 1024, 1024}, MaxComputeWorkGroupInvocations: 1024,
		MaxComputeSharedMemorySize: 32768, SubgroupSize: 8, Float16Storage: true}
	emu, ok := convCoopEmuFor(lavapipe, 0)
	if !ok || emu.cn != 8 || emu.ck != 8 {
		t.Fatalf("emulated tile 0 %+v %v", emu, ok)
	}
	if s := convCoopShaped(lavapipe, emu, 2, true); s.cn != 16 || s.ck != 16 {
		t.Errorf("emulated 16x16x16 (not listed by the device): %+v", s)
	}
	if s := convCoopShaped(lavapipe, emu, 2, false); s != emu {
		t.Errorf("real build, 16x16x16 not listed: %+v", s)
	}
}
