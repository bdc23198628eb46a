package ops

import (
	"fmt"
	"strconv"
	"strings"
)

// ConvolutionPath is a path a ConvolutionTuning can force on the
// convolution family's GEMMs.
type ConvolutionPath int

const (
	// ConvolutionPathAuto (the zero value): the kernel chooses.
	ConvolutionPathAuto ConvolutionPath = iota
	// ConvolutionPathTiled: the shared-memory tiles, tile
	// ConvolutionTuning.Tile (text: tile=N).
	ConvolutionPathTiled
	// ConvolutionPathDirect: one invocation per result, a plain loop
	// (text: direct=1).
	ConvolutionPathDirect
	// ConvolutionPathCoopMat: cooperative matrices for the GEMMs of
	// float16 images whose results are images, where the device has them,
	// tile ConvolutionTuning.CoopTile (text: coopmat=1 for tile 0,
	// cooptile=N); elsewhere the kernel chooses. By default only for
	// windows of more than one tap with 128 or more channels on each side
	// that Winograd does not take, 1x1 windows with 256 or more (128
	// rows and 64 deep over 16384 or more columns), and
	// GEMMs of 49 to 64 rows (64 channels; ResNet's stem) on a 64-row
	// tile (see NoCoopMat).
	ConvolutionPathCoopMat
	convolutionPathCount
)

// ConvolutionTuning overrides the work shapes the convolution family's
// kernels pick (Convolution, ConvolutionGradient, ConvolutionTranspose,
// ConvolutionTransposeGradient, FullyConnected, FullyConnectedGradient),
// for measuring alternatives on a device without rebuilding vkmps. Every
// valid setting computes the same results within the family's stated
// tolerances, and repeats them bit for bit; settings may differ from each
// other in the last bits (their sums run in other orders). The zero value
// is the default, where the kernel chooses; a zero field leaves that
// choice to the kernel. A forced path a GEMM cannot take (a tile the
// device cannot run, cooperative matrices without float16 images or the
// device's support) is ignored for that GEMM. Depthwise convolutions keep
// their own kernels, and data gradients of few input channels theirs,
// under every Path.
//
// The kernels take one with SetTuning; the benchmarks read it from
// $VKMPS_GEMM with ParseConvolutionTuning, whose keys are given in
// parentheses below.
type ConvolutionTuning struct {
	// Path forces the GEMMs onto one path (tile=N, direct=1, coopmat=1,
	// cooptile=N); a forced path also keeps Winograd off unless Winograd
	// is set.
	Path ConvolutionPath
	// Tile is the tile of ConvolutionPathTiled, an index into the tiles
	// shipped, largest first (ConvolutionTileCount, ConvolutionTileName);
	// 0 otherwise.
	Tile int
	// CoopTile (cooptile) is the tile of ConvolutionPathCoopMat, an index
	// into the cooperative-matrix tiles shipped, the default first
	// (ConvolutionCoopTileCount, ConvolutionCoopTileName); a tile the
	// device cannot run (its subgroups, workgroup size or shared memory)
	// is ignored as the path is; 0 otherwise.
	CoopTile int
	// Splits (splits): the chunks the GEMMs' sums (K) are split into,
	// 1..4096: the weight gradients' over the batch and the pixels, and
	// the image GEMMs' (a strided data gradient's phases each over the
	// largest phase's depth), whose outputs a second pass then adds up
	// and finishes (default: weight gradients chosen to fill the device,
	// a chunk never under one slice of the tile; image GEMMs on the tiles
	// unsplit but those from windows of several taps, 1024 deep or more,
	// that would give multiprocessors fewer than two workgroups of the
	// 64x128 tile, which run on it in 2 splits, and those 512 deep or
	// more, of 2^23 multiply-adds or more, whose tiles would give at most
	// every other multiprocessor a workgroup (fully connected layers of a
	// small batch), split into
	// about one workgroup a multiprocessor; on cooperative matrices
	// split where their tiles would leave multiprocessors idle; the
	// phases by tap, see TapSplit; the Winograd products of a convolution
	// or data gradient on the float32 tiles over the input channels,
	// doubled while they would give multiprocessors fewer than five
	// workgroups, each split 128 channels or more).
	Splits int
	// ComputeUnits (units): the multiprocessors the choice spreads work
	// over, 1..65536 (default: vk.Limits.ComputeUnits where the device
	// reports it, else 64).
	ComputeUnits int
	// NoCoopMat (coopmat=0): GEMMs of float16 images use the tiles, also
	// where cooperative matrices would be the default (windows of more
	// than one tap with 128 or more channels on each side, 1x1 windows
	// with 256 or more over 1024 or more output pixels, on devices that
	// have them).
	NoCoopMat bool
	// NoSmallChannels (small=0): data gradients of convolutions with few
	// input channels per group run as GEMMs instead of their gather
	// kernel.
	NoSmallChannels bool
	// Winograd (winograd=1): every 3x3 convolution of stride and dilation
	// 1 without groups, and the data gradients and transpose convolutions
	// of such, runs as Winograd F(4x4, 3x3) (see ops/doc.go), also where
	// the kernel would not choose it; its products take tile Tile when
	// Path is ConvolutionPathTiled, cooperative-matrix tile CoopTile for
	// float16 images when Path is ConvolutionPathCoopMat (U and V rounded
	// to halves: about 15 times the direct sums' rounding, see
	// ops/convolution_winograd.go), else the kernel's choice. By default
	// they do when both sides have 64 or more channels and no Path is
	// forced, on float32 products.
	Winograd bool
	// NoWinograd (winograd=0): no Winograd; the GEMMs sum the products
	// directly.
	NoWinograd bool
	// WinogradCoopMat (winocoop=1): where Winograd runs on float16 images
	// and the device has cooperative matrices, its products (forward,
	// data and weight gradients) run on them, tile CoopTile where Path is
	// ConvolutionPathCoopMat, else 128 x 128 x 16 for the forward and
	// data gradients, and for weight gradients 64 x 64 up to 64 output
	// channels and 128 x 128 x 32 above; U, D and V are rounded to halves (relative RMS
	// error about 3.5e-3 on random data against the direct sums' 2e-4, see
	// ops/convolution_winograd.go). This is the default (an H100's
	// ResNet-18 float16 training step: 10.77 ms on float32 tiles, 9.62 ms
	// on cooperative matrices); the key states it explicitly.
	WinogradCoopMat bool
	// NoWinogradCoopMat (winocoop=0): Winograd's products of float16
	// images run on float32 tiles, as float32 images' do (also coopmat=0,
	// or a forced tiled or direct path).
	NoWinogradCoopMat bool
	// NoCoopPacked (packed=0): cooperative-matrix GEMMs whose operands
	// both load as quads stage them into shared memory a half at a time,
	// as the others do, instead of a quad per store (the default; the
	// same values, see glsl/gemm_coopmat.glsl's COOP_PACKED).
	NoCoopPacked bool
	// NoPhaseTaps (phasetaps=0): the stride's phases of a strided data
	// gradient on the tiles each sum over the whole grid of taps a phase
	// can have, reading zeros for taps outside the kernel, as the
	// cooperative matrices do, instead of over their own taps only (the
	// default where the channels are a multiple of the tile's slice depth;
	// the same sums in another order).
	NoPhaseTaps bool
	// TapSplit (tapsplit=1): the stride's phases of every strided data
	// gradient on the tiles or cooperative matrices split their sums by
	// tap (each split one tap's channels; a phase of fewer taps has fewer
	// splits), each phase over its own taps, and a second pass adds the
	// splits; by default only on the tiles, where the phases' workgroups
	// would not give every multiprocessor two (the phases of a 3x3
	// stride-2 gradient sum 4, 2, 2 and 1 taps: unsplit, the largest
	// takes four times as long).
	// Splits, where set, splits each phase evenly instead.
	TapSplit bool
	// NoTapSplit (tapsplit=0): the phases never split by tap.
	NoTapSplit bool
	// Col2im (col2im=1): strided data gradients (and transpose
	// convolutions) without groups run as one GEMM of a row per channel
	// and tap and a column per dy pixel, whose sums a second pass adds
	// into dx (col2im), instead of a GEMM per phase of the stride; by
	// default where the windows have several taps and the GEMM 1024 rows
	// or more (ResNet-18's 3x3 stride-2 gradients of 128 input channels
	// or more; see ops/gemm.go's useCol2im).
	Col2im bool
	// NoCol2im (col2im=0): never; the phases instead.
	NoCol2im bool
	// DepthwiseStrip (dwstrip): the outputs along a row each invocation
	// of a depthwise convolution computes at a time (dy pixels for its
	// weight gradient), 1..8, where the input columns they span fit its
	// registers (default 4).
	DepthwiseStrip int
	// DepthwiseRows (dwrows): the rows of such strips each invocation
	// of a depthwise convolution computes at a time, sharing the input
	// rows their windows overlap on, 1..8, where the block's values fit
	// its registers (default at stride 1: 4, halved while a forward's
	// blocks would number under 3072 a multiprocessor or two of a weight
	// gradient's would not fit a plane; else 1).
	DepthwiseRows int
	// NoDepthwiseVectors (dwvec=0): depthwise convolutions load and store
	// single values, also where their images' rows allow quads or pairs
	// (the default there; the same values and sums).
	NoDepthwiseVectors bool
	// DepthwiseExactGroups (dwexact=1): depthwise forwards size their
	// workgroups to a plane's strips and rows exactly (14 x 14 for 14
	// strips of 14 rows) rather than to powers of two (16 x 16), planes
	// stacked to about 256 invocations.
	DepthwiseExactGroups bool
	// NoWinogradQuads (winoquads=0): the Winograd products on the tiles
	// store their results value by value, also where their rows allow
	// quads (the default there: one 16-byte store per 4 neighbouring
	// results; the same values).
	NoWinogradQuads bool
	// Im2col (im2col=1) and NoIm2col (im2col=0): convolutions (forward
	// GEMMs over windows of their source, without groups) run as an
	// explicit im2col into the scratch and a GEMM over its columns
	// (convolution_im2col.go), or as the implicit GEMM, whatever the
	// default (off).
	Im2col, NoIm2col bool
	// WinogradXHalf (winoxhalf=1) and NoWinogradXHalf (winoxhalf=0): the
	// Winograd products on cooperative matrices (float16 images) of
	// convolutions and data gradients store X as halves divided by 16,
	// which the output transform multiplies back (half the bytes between
	// them; a half's rounding of each X), or as float32; by default
	// halves where X is large (see winogradXHalf).
	WinogradXHalf, NoWinogradXHalf bool
	// CoopDirect (coopdirect=1): the GEMMs on cooperative matrices
	// (Winograd's products and the others) store each matrix of results
	// straight from the registers (coopMatStoreNV to the buffer) where
	// their tiles cover the results exactly (see winogradCoopDirect and
	// convCoopDirect), instead of through shared memory, value by value
	// or as quads (the default; the same values). Slower on an H100:
	// the ResNet-18 float16 training step took 6.30 ms against 5.95
	// (bench/results/h100-2026-12-07-s25, run 1).
	CoopDirect bool
	// CoopStage (coopstage=1) and NoCoopStage (coopstage=0): the Winograd
	// products on cooperative matrices that store X as halves stage their
	// whole tile in shared memory and store it 16 bytes an invocation,
	// along X's rows (see winogradCoopStage), or store each 16 x 8 matrix
	// through a slice of shared memory, 8 bytes an invocation spread over
	// its rows. The same halves. Slower on an H100: the float16 3x3
	// 64@56 forward's products took 89 µs against 59, VGG's 206 both,
	// the ResNet-18 float16 step 6.14 ms against 5.89
	// (bench/results/h100-2026-12-07-s26, run 1; why was not found out:
	// the products' registers, not the staged tile's 17 KiB of shared
	// memory, bound the workgroups a multiprocessor holds).
	CoopStage, NoCoopStage bool
	// CoopKHR (coopkhr=1): the GEMMs on cooperative matrices run their
	// KHR builds (VK_KHR_cooperative_matrix, the "khr" variants of
	// glsl/gemm_coopmat.glsl's includers) on a device that lists both
	// extensions (NVIDIA's), instead of the VK_NV_cooperative_matrix
	// builds, the default there. Devices that list only the KHR
	// extension (AMD, Intel, Mesa 26's lavapipe) always run the KHR
	// builds. The same sums in the same order where the shapes are the
	// same.
	CoopKHR bool
	// CoopShape (coopshape=N, 1..5): the GEMMs on cooperative matrices
	// use matrices of shape N (1: 16x8x16, 2: 16x16x16, 3: 16x8x8, 4:
	// 8x8x8, 5: 8x16x16, M x N x K) where the device lists it and the
	// tile can use it. By default
	// the forward GEMMs of convolutions take 16x16x16 and the others
	// (Winograd's products, data and weight gradients) the first of
	// these shapes the device lists (see convCoopShapeFor; the emulated
	// build's default is 16x8x8); coopshape=1 is the choice before
	// 2026-12-07. The same sums in the same order.
	CoopShape int
	// NoWinogradChannelsFast (winocf=0): Winograd weight gradients on the
	// tiles keep their transforms' results tiles fastest, as on
	// cooperative matrices, instead of channels fastest (the default
	// there; the same sums).
	NoWinogradChannelsFast bool
	// WinogradPart (winopart): the most batch images one part of a
	// Winograd convolution, data gradient or weight gradient takes,
	// 1..65536 (default: as many as the scratch's bound allows, see
	// ops/convolution_winograd.go). Smaller parts keep the transforms'
	// results small enough to stay in the device's cache between the
	// passes, at the cost of more, smaller dispatches.
	WinogradPart int
}

// ConvolutionTileCount is the number of GEMM tile shapes shipped.
func ConvolutionTileCount() int { return len(gemmTiles) }

// ConvolutionTileName names tile i ("128x128x8/8x8": the workgroup's
// outputs, the slice depth, and each invocation's outputs), or "" for an
// index out of range.
func ConvolutionTileName(i int) string {
	if i < 0 || i >= len(gemmTiles) {
		return ""
	}
	return gemmTiles[i].cfg.String()
}

// ConvolutionCoopTileCount is the number of cooperative-matrix tiles
// shipped.
func ConvolutionCoopTileCount() int { return len(convCoopTiles) }

// ConvolutionCoopTileName names cooperative-matrix tile i
// ("128x128x32/2x4": the workgroup's outputs, the slice depth, and its
// subgroups along the outputs' rows and columns; the matrix shape is the
// device's), or "" for an index out of range.
func ConvolutionCoopTileName(i int) string {
	if i < 0 || i >= len(convCoopTiles) {
		return ""
	}
	return convCoopTiles[i].String()
}

// Validate returns an error wrapping ErrTuning that names the first field
// out of range, or nil.
func (t ConvolutionTuning) Validate() error {
	switch {
	case t.Path < 0 || t.Path >= convolutionPathCount:
		return fmt.Errorf("%w: convolution path %d: want 0..%d", ErrTuning, int(t.Path), int(convolutionPathCount)-1)
	case t.Path == ConvolutionPathTiled && (t.Tile < 0 || t.Tile >= len(gemmTiles)):
		return fmt.Errorf("%w: tile %d: want 0..%d", ErrTuning, t.Tile, len(gemmTiles)-1)
	case t.Path != ConvolutionPathTiled && t.Tile != 0:
		return fmt.Errorf("%w: tile %d without the tiled path", ErrTuning, t.Tile)
	case t.CoopTile < 0 || t.CoopTile >= len(convCoopTiles):
		return fmt.Errorf("%w: cooperative-matrix tile %d: want 0..%d", ErrTuning, t.CoopTile, len(convCoopTiles)-1)
	case t.Path != ConvolutionPathCoopMat && t.CoopTile != 0:
		return fmt.Errorf("%w: cooperative-matrix tile %d without the cooperative-matrix path", ErrTuning, t.CoopTile)
	case t.DepthwiseStrip < 0 || t.DepthwiseStrip > 8:
		return fmt.Errorf("%w: depthwise strip (dwstrip) %d: want 1..8", ErrTuning, t.DepthwiseStrip)
	case t.DepthwiseRows < 0 || t.DepthwiseRows > 8:
		return fmt.Errorf("%w: depthwise rows (dwrows) %d: want 1..8", ErrTuning, t.DepthwiseRows)
	case t.Splits < 0 || t.Splits > 4096:
		return fmt.Errorf("%w: splits %d: want 1..4096", ErrTuning, t.Splits)
	case t.CoopShape < 0 || t.CoopShape > len(convCoopShapes):
		return fmt.Errorf("%w: cooperative-matrix shape (coopshape) %d: want 1..%d", ErrTuning, t.CoopShape, len(convCoopShapes))
	case t.WinogradPart < 0 || t.WinogradPart > 1<<16:
		return fmt.Errorf("%w: Winograd part (winopart) %d: want 1..65536", ErrTuning, t.WinogradPart)
	case t.ComputeUnits < 0 || t.ComputeUnits > 1<<16:
		return fmt.Errorf("%w: compute units (units) %d: want 1..65536", ErrTuning, t.ComputeUnits)
	case t.Path == ConvolutionPathCoopMat && t.NoCoopMat:
		return fmt.Errorf("%w: cooperative matrices both forced and refused", ErrTuning)
	case t.Col2im && t.NoCol2im:
		return fmt.Errorf("%w: col2im both forced and refused", ErrTuning)
	case t.Im2col && t.NoIm2col:
		return fmt.Errorf("%w: im2col both forced and refused", ErrTuning)
	case t.WinogradXHalf && t.NoWinogradXHalf:
		return fmt.Errorf("%w: Winograd's X as halves both forced and refused", ErrTuning)
	case t.CoopStage && t.NoCoopStage:
		return fmt.Errorf("%w: staged cooperative-matrix tiles (coopstage) both forced and refused", ErrTuning)
	case t.TapSplit && t.NoTapSplit:
		return fmt.Errorf("%w: the phases' split by tap both forced and refused", ErrTuning)
	case t.Winograd && t.NoWinograd:
		return fmt.Errorf("%w: Winograd both forced and refused", ErrTuning)
	case t.WinogradCoopMat && t.NoWinogradCoopMat:
		return fmt.Errorf("%w: Winograd on cooperative matrices both forced and refused", ErrTuning)
	case t.WinogradCoopMat && (t.NoWinograd || t.NoCoopMat):
		return fmt.Errorf("%w: Winograd on cooperative matrices (winocoop=1) with Winograd or cooperative matrices refused", ErrTuning)
	}
	return nil
}

// String returns the text form ParseConvolutionTuning reads, keys in a
// fixed order ("tile=2,splits=8"); "" for the default.
func (t ConvolutionTuning) String() string {
	var parts []string
	switch t.Path {
	case ConvolutionPathTiled:
		parts = append(parts, "tile="+strconv.Itoa(t.Tile))
	case ConvolutionPathDirect:
		parts = append(parts, "direct=1")
	case ConvolutionPathCoopMat:
		if t.CoopTile != 0 {
			parts = append(parts, "cooptile="+strconv.Itoa(t.CoopTile))
		} else {
			parts = append(parts, "coopmat=1")
		}
	}
	// flag adds text where on; num adds key=n where n is set.
	flag := func(on bool, text string) {
		if on {
			parts = append(parts, text)
		}
	}
	num := func(n int, key string) { flag(n != 0, key+"="+strconv.Itoa(n)) }
	num(t.Splits, "splits")
	num(t.ComputeUnits, "units")
	flag(t.NoCoopMat, "coopmat=0")
	flag(t.NoSmallChannels, "small=0")
	flag(t.Winograd, "winograd=1")
	flag(t.NoWinograd, "winograd=0")
	flag(t.WinogradCoopMat, "winocoop=1")
	flag(t.NoWinogradCoopMat, "winocoop=0")
	flag(t.NoCoopPacked, "packed=0")
	flag(t.NoPhaseTaps, "phasetaps=0")
	flag(t.TapSplit, "tapsplit=1")
	flag(t.NoTapSplit, "tapsplit=0")
	flag(t.Col2im, "col2im=1")
	flag(t.NoCol2im, "col2im=0")
	num(t.DepthwiseStrip, "dwstrip")
	num(t.DepthwiseRows, "dwrows")
	flag(t.NoDepthwiseVectors, "dwvec=0")
	flag(t.DepthwiseExactGroups, "dwexact=1")
	flag(t.Im2col, "im2col=1")
	flag(t.NoIm2col, "im2col=0")
	flag(t.WinogradXHalf, "winoxhalf=1")
	flag(t.NoWinogradXHalf, "winoxhalf=0")
	flag(t.NoWinogradQuads, "winoquads=0")
	flag(t.CoopDirect, "coopdirect=1")
	flag(t.CoopStage, "coopstage=1")
	flag(t.NoCoopStage, "coopstage=0")
	flag(t.CoopKHR, "coopkhr=1")
	num(t.CoopShape, "coopshape")
	flag(t.NoWinogradChannelsFast, "winocf=0")
	num(t.WinogradPart, "winopart")
	return strings.Join(parts, ",")
}

// ParseConvolutionTuning reads a ConvolutionTuning from comma-separated
// key=value pairs with integer values: tile (a tile index: the tiled path
// with that tile), direct=1, coopmat (1: force cooperative matrices, 0:
// refuse them), cooptile (a cooperative-matrix tile index: cooperative
// matrices forced with that tile; with coopmat=1 or alone), splits, units,
// winopart,
// small=0, winograd (1: force, 0: refuse), winocoop (1: on, the
// default; 0: off), packed, phasetaps, dwvec, winoquads and winocf (1:
// on, the default; 0: off), dwexact and coopdirect (1: on), tapsplit, col2im, im2col, winoxhalf and
// coopstage (1: always, 0: never), coopkhr (1: on), dwstrip and dwrows
// (1..8), coopshape (1..5) (see
// ConvolutionTuning's fields). Spaces around pairs are ignored; "" is
// the default. An unknown
// or repeated key, a pair without "=", a value that is not an integer or
// is out of range, or two paths forced at once is an error wrapping
// ErrTuning that names it.
func ParseConvolutionTuning(s string) (ConvolutionTuning, error) {
	var t ConvolutionTuning
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return ConvolutionTuning{}, fmt.Errorf("%w: %q is not key=value", ErrTuning, kv)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return ConvolutionTuning{}, fmt.Errorf("%w: %s=%q: not an integer", ErrTuning, k, v)
		}
		if seen[k] {
			return ConvolutionTuning{}, fmt.Errorf("%w: %s given twice", ErrTuning, k)
		}
		seen[k] = true
		path := func(p ConvolutionPath) error {
			if t.Path != ConvolutionPathAuto {
				return fmt.Errorf("%w: %s: a path is forced already", ErrTuning, kv)
			}
			t.Path = p
			return nil
		}
		flag := func() error {
			if n != 0 && n != 1 {
				return fmt.Errorf("%w: %s=%d: want 0 or 1", ErrTuning, k, n)
			}
			return nil
		}
		// The switches whose 0 turns a default path off.
		offs := map[string]*bool{"small": &t.NoSmallChannels, "packed": &t.NoCoopPacked, "phasetaps": &t.NoPhaseTaps,
			"dwvec": &t.NoDepthwiseVectors, "winoquads": &t.NoWinogradQuads, "winocf": &t.NoWinogradChannelsFast}
		switch off := offs[k]; {
		case off != nil:
			if err = flag(); err == nil {
				*off = n == 0
			}
		case k == "tile":
			if n < 0 || n >= len(gemmTiles) {
				return ConvolutionTuning{}, fmt.Errorf("%w: tile=%d: want 0..%d", ErrTuning, n, len(gemmTiles)-1)
			}
			err = path(ConvolutionPathTiled)
			t.Tile = n
		case k == "direct":
			if err = flag(); err == nil && n == 1 {
				err = path(ConvolutionPathDirect)
			}
		case k == "coopmat":
			if err = flag(); err == nil {
				if n == 1 {
					if t.Path != ConvolutionPathCoopMat { // cooptile forced it
						err = path(ConvolutionPathCoopMat)
					}
				} else {
					t.NoCoopMat = true
				}
			}
		case k == "cooptile":
			if n < 0 || n >= len(convCoopTiles) {
				return ConvolutionTuning{}, fmt.Errorf("%w: cooptile=%d: want 0..%d", ErrTuning, n, len(convCoopTiles)-1)
			}
			if t.Path != ConvolutionPathCoopMat { // coopmat=1 forced it
				err = path(ConvolutionPathCoopMat)
			}
			t.CoopTile = n
		case k == "col2im":
			if err = flag(); err == nil {
				t.Col2im, t.NoCol2im = n == 1, n == 0
			}
		case k == "tapsplit":
			if err = flag(); err == nil {
				t.TapSplit, t.NoTapSplit = n == 1, n == 0
			}
		case k == "im2col":
			if err = flag(); err == nil {
				t.Im2col, t.NoIm2col = n == 1, n == 0
			}
		case k == "winoxhalf":
			if err = flag(); err == nil {
				t.WinogradXHalf, t.NoWinogradXHalf = n == 1, n == 0
			}
		case k == "winograd":
			if err = flag(); err == nil {
				t.Winograd, t.NoWinograd = n == 1, n == 0
			}
		case k == "winocoop":
			if err = flag(); err == nil {
				t.WinogradCoopMat, t.NoWinogradCoopMat = n == 1, n == 0
			}
		case k == "dwexact":
			if err = flag(); err == nil {
				t.DepthwiseExactGroups = n == 1
			}
		case k == "coopdirect":
			if err = flag(); err == nil {
				t.CoopDirect = n == 1
			}
		case k == "coopstage":
			if err = flag(); err == nil {
				t.CoopStage, t.NoCoopStage = n == 1, n == 0
			}
		case k == "coopkhr":
			if n != 1 {
				return ConvolutionTuning{}, fmt.Errorf("%w: coopkhr=%d: want 1 (leave the key out for the default)", ErrTuning, n)
			}
			t.CoopKHR = true
		case k == "coopshape":
			if n < 1 || n > len(convCoopShapes) {
				return ConvolutionTuning{}, fmt.Errorf("%w: coopshape=%d: want 1..%d", ErrTuning, n, len(convCoopShapes))
			}
			t.CoopShape = n
		case k == "dwstrip", k == "dwrows":
			if n < 1 || n > 8 {
				return ConvolutionTuning{}, fmt.Errorf("%w: %s=%d: want 1..8", ErrTuning, k, n)
			}
			if k == "dwstrip" {
				t.DepthwiseStrip = n
			} else {
				t.DepthwiseRows = n
			}
		case k == "splits", k == "units", k == "winopart":
			if n == 0 {
				return ConvolutionTuning{}, fmt.Errorf("%w: %s=0: leave the key out for the default", ErrTuning, k)
			}
			switch k {
			case "splits":
				t.Splits = n
			case "units":
				t.ComputeUnits = n
			default:
				t.WinogradPart = n
			}
		default:
			return ConvolutionTuning{}, fmt.Errorf("%w: unknown key %q (known: tile, direct, coopmat, cooptile, splits, units, small, winograd, winocoop, packed, phasetaps, tapsplit, col2im, im2col, winoxhalf, dwstrip, dwrows, dwvec, dwexact, winoquads, winocf, coopdirect, coopstage, coopkhr, coopshape, winopart)", ErrTuning, k)
		}
		if err != nil {
			return ConvolutionTuning{}, err
		}
	}
	if err := t.Validate(); err != nil {
		return ConvolutionTuning{}, err
	}
	return t, nil
}

// setTuning validates t and sets it on the engine of the kernel label.
func (e *convEngine) setTuning(label string, t ConvolutionTuning) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	e.tune = t
	return nil
}
