package ops_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// winogradCases are 3x3 convolutions of stride and dilation 1: outputs
// that are not a multiple of the 4x4 tile (and smaller than one),
// asymmetric pads (and none, and more than the window), a fused neuron
// with PReLU slopes, several batch images.
// conv3x3 is a 3x3 convolution of stride and dilation 1 without groups,
// in to out channels.
func conv3x3(in, out int) ops.ConvolutionDescriptor {
	return ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: in, OutputFeatureChannels: out,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 1}
}

func winogradCases() []convCase {
	d := func(in, out int, n ops.NeuronDescriptor) ops.ConvolutionDescriptor {
		return ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: in, OutputFeatureChannels: out,
			StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 1, Neuron: n}
	}
	prelu := ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: []float32{0.1, -0.2, 0.3, 0.5, 1.5, -1, 0.25}}
	return []convCase{
		{d: d(5, 7, prelu), n: 2, h: 9, w: 13, pads: padding.Pads{Top: 1, Left: 2, Bottom: 0, Right: 1}, bias: true},
		{d: d(12, 9, ops.NewNeuronDescriptor(ops.NeuronReLU)), n: 1, h: 8, w: 8, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}},
		{d: d(3, 4, ops.NeuronDescriptor{}), n: 3, h: 3, w: 7, pads: padding.Pads{Top: 3, Left: 0, Bottom: 2, Right: 0}, bias: true},
	}
}

// Winograd F(4x4, 3x3), forced, on every products' tile the device runs,
// float32 and float16 images: the convolution, its data gradient (the
// taps reversed, the channels swapped), its weight gradient (F(3x3, 4x4)
// over dy's tiles) and a transpose convolution with its gradients,
// against the reference within the family's tolerance; and the kernels
// took the Winograd paths.
func TestConvolutionWinograd(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	for tile := 0; tile < ops.ConvTileCount(); tile++ {
		for _, half := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s half=%v", ops.ConvTileName(tile), half), func(t *testing.T) {
				r := rand.New(rand.NewSource(int64(41 + tile)))
				winogradCheck(t, dev, r, winogradCases(), half, "winograd", func(k any) {
					if !ops.ConvForcePath(k, "winograd", tile) {
						t.Skipf("%s does not run tile %s", dev.Info().Name, ops.ConvTileName(tile))
					}
				})
			})
		}
	}
}

// The Winograd products on the tiles store their results as quads where
// the rows allow it (a forward's or data gradient's over tiles in
// multiples of 4, a weight gradient's over input channels in multiples
// of 4) and value by value elsewhere or under winoquads=0; weight
// gradients keep D and V channels fastest unless winocf=0; on every
// products' tile, with results matching the reference every way.
func TestConvolutionWinogradQuadStores(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	d := conv3x3
	pad1 := padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}
	cases := []struct {
		name  string
		c     convCase
		quads [2]bool // the forward's products, the gradient's
	}{
		// 2 x 3 x 4 tiles, 8 input channels: every product.
		{"quads", convCase{d: d(8, 5), n: 2, h: 9, w: 13, pads: pad1, bias: true}, [2]bool{true, true}},
		// 3 x 3 tiles, 8 input channels: the weight gradient's only.
		{"odd tiles", convCase{d: d(8, 4), n: 1, h: 10, w: 11, pads: pad1}, [2]bool{false, true}},
		// 3 x 3 tiles, 6 input channels: none.
		{"odd tiles and channels", convCase{d: d(6, 8), n: 1, h: 10, w: 11, pads: pad1, bias: true}, [2]bool{false, false}},
		// 4 tiles, 70 input channels (the weights' output transform over
		// two workgroups of channels): the forward's and the data
		// gradient's.
		{"many channels", convCase{d: d(70, 3), n: 1, h: 6, w: 7, pads: pad1}, [2]bool{true, true}},
	}
	for tile := 0; tile < ops.ConvTileCount(); tile++ {
		for _, text := range []string{"", "winoquads=0", "winocf=0", "winocf=0,winoquads=0"} {
			tu, err := ops.ParseConvolutionTuning(text)
			require.NoError(t, err)
			for _, c := range cases {
				t.Run(fmt.Sprintf("%s/%s/%s", ops.ConvTileName(tile), text, c.name), func(t *testing.T) {
					fwd, grad := winogradTunedRun(t, dev, c.c, 5, tu, tile)
					require.Equal(t, "winograd", ops.ConvLastWeightsPath(grad))
					for i, k := range []any{fwd, grad} {
						assert.Equal(t, c.quads[i] && !tu.NoWinogradQuads, ops.ConvWinogradQuadStores(k), "%T: quad stores", k)
					}
					assert.False(t, ops.ConvWinogradChannelsFast(fwd), "forward: channels fastest")
					assert.Equal(t, !tu.NoWinogradChannelsFast, ops.ConvWinogradChannelsFast(grad), "gradient: channels fastest")
				})
			}
		}
	}
}

// winogradTunedRun runs case c (convRunCase: the convolution and its
// gradients against the reference, float32, random data from seed) with
// every kernel under tuning tu and forced to Winograd on tile (the test
// is skipped where the device does not run it), and returns the
// convolution and gradient kernels.
func winogradTunedRun(t *testing.T, dev *vk.Device, c convCase, seed int64, tu ops.ConvolutionTuning, tile int) (fwd, grad any) {
	t.Helper()
	convRunCase(t, dev, c, rand.New(rand.NewSource(seed)), false, func(k any) {
		require.NoError(t, k.(interface {
			SetTuning(ops.ConvolutionTuning) error
		}).SetTuning(tu))
		if !ops.ConvForcePath(k, "winograd", tile) {
			t.Skipf("%s does not run tile %s", dev.Info().Name, ops.ConvTileName(tile))
		}
		switch k.(type) {
		case *ops.Convolution:
			fwd = k
		case *ops.ConvolutionGradient:
			grad = k
		}
	})
	return fwd, grad
}

// winogradCheck runs cases (convRunCase: the convolution and its
// gradients) and a transpose convolution with its gradients (the first
// case's geometry), every kernel forced by force, against the reference
// (half: float16 images), and checks the kernels took path.
func winogradCheck(t *testing.T, dev *vk.Device, r *rand.Rand, cases []convCase, half bool, path string, force func(k any)) {
	t.Helper()
	var kernels []any
	forced := func(k any) {
		force(k)
		kernels = append(kernels, k)
	}
	for _, c := range cases {
		kernels = kernels[:0]
		convRunCase(t, dev, c, r, half, forced)
		winogradTook(t, kernels, c, path)
	}
	// The transpose convolution of a 3x3 stride-1 convolution is a 3x3
	// convolution of its source with the taps reversed; its data gradient
	// a plain one.
	c := convTCase{convCase: cases[0]}
	c.d.Neuron = ops.NewNeuronDescriptor(ops.NeuronSigmoid)
	c.d.InputFeatureChannels, c.d.OutputFeatureChannels = 6, 5
	kernels = kernels[:0]
	convTCheck(t, dev, c, c.data(r), half, forced)
	winogradTook(t, kernels, c, path)
}

// winogradTook checks that kernels ran their image GEMMs, and the
// gradients their weight gradients, on path ("winograd" or
// "winograd-coopmat").
func winogradTook(t *testing.T, kernels []any, c any, path string) {
	t.Helper()
	for _, k := range kernels {
		assert.Equal(t, path, ops.ConvLastPath(k), "%T %v", k, c)
		switch k.(type) {
		case *ops.ConvolutionGradient, *ops.ConvolutionTransposeGradient:
			assert.Equal(t, path, ops.ConvLastWeightsPath(k), "%T %v", k, c)
		}
	}
}

// Where Winograd cannot run (a stride, a dilation, groups, another
// window), forcing it leaves the kernel's own choice, with the same
// results.
func TestConvolutionWinogradOnlyWhereItRuns(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(5))
	base := winogradCases()[1]
	strided, dilated, grouped, wide := base, base, base, base
	strided.d.StrideX = 2
	dilated.d.DilationY = 2
	grouped.d.Groups, grouped.d.InputFeatureChannels = 3, 12
	wide.d.KernelWidth = 5
	for _, c := range []convCase{strided, dilated, grouped, wide} {
		var kernels []any
		convRunCase(t, dev, c, r, false, func(k any) {
			require.True(t, ops.ConvForcePath(k, "winograd", 2))
			kernels = append(kernels, k)
		})
		for _, k := range kernels {
			assert.NotEqual(t, "winograd", ops.ConvLastPath(k), "%v", c)
			assert.NotEqual(t, "winograd", ops.ConvLastWeightsPath(k), "%v", c)
		}
	}
}

// By default a 3x3 stride-1 convolution with 64 channels on each side
// runs as Winograd, forward, data and weight gradients; with fewer channels, or
// under the tunings winograd=0 or another forced path, it does not; and
// winograd=1 forces it on few channels.
func TestConvolutionWinogradDefault(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(9))
	c := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 64, OutputFeatureChannels: 64,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 1},
		n: 1, h: 6, w: 5, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}
	few := c
	few.d.InputFeatureChannels = 16
	for _, tc := range []struct {
		c    convCase
		tune string
		want string
	}{
		{c, "", "winograd"},
		{few, "", "tiled"},
		{c, "winograd=0", "tiled"},
		{c, "tile=2", "tiled"},
		{few, "winograd=1", "winograd"},
		{few, "winograd=1,tile=3", "winograd"},
	} {
		tu, err := ops.ParseConvolutionTuning(tc.tune)
		require.NoError(t, err)
		var kernels []any
		convRunCase(t, dev, tc.c, r, false, func(k any) {
			require.NoError(t, k.(interface {
				SetTuning(ops.ConvolutionTuning) error
			}).SetTuning(tu))
			kernels = append(kernels, k)
		})
		for _, k := range kernels {
			assert.Equal(t, tc.want, ops.ConvLastPath(k), "%v %q", tc.c, tc.tune)
			if _, grad := k.(*ops.ConvolutionGradient); grad {
				assert.Equal(t, tc.want, ops.ConvLastWeightsPath(k), "%v %q", tc.c, tc.tune)
			}
		}
	}
}

// Batches through in parts under a bounded scratch, weight gradients
// over split tiles whose partial sums, and the parts', add up; tile
// counts that are not a multiple of 4 (the products' plain loads), and
// a last part whose count is not while the others' are.
func TestConvolutionWinogradParts(t *testing.T) {
	dev := vktest.Open(t)
	d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 6, OutputFeatureChannels: 5,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 1}
	pads := padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}
	for _, tc := range []struct {
		name    string
		c       convCase
		scratch int // bytes
	}{
		// Floats, in 64-float blocks, 49 tiles an image: the forward's U
		// 1088, V 10624 and X 8832 an image, 39936 for two (two parts);
		// the weight gradient's D and V 19456 an image (at most half the
		// room), 38848 for two (three parts of one image), over splits
		// (splits=3 asks, whole 16-deep slices make it 2).
		{"splits", convCase{d: d, n: 3, h: 26, w: 27, pads: pads, bias: true}, 4 * 40000},
		// 6 tiles an image: the weight gradient's D and V 4800 for two
		// images, 7168 for three: parts of 12 tiles (quad loads) and 6.
		{"last part", convCase{d: d, n: 3, h: 5, w: 9, pads: pads, bias: true}, 4 * 10000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer ops.SetWinogradScratchMax(tc.scratch)()
			r := rand.New(rand.NewSource(13))
			tu := ops.ConvolutionTuning{Winograd: true, Splits: 3}
			var kernels []any
			convRunCase(t, dev, tc.c, r, false, func(k any) {
				require.NoError(t, k.(interface {
					SetTuning(ops.ConvolutionTuning) error
				}).SetTuning(tu))
				kernels = append(kernels, k)
			})
			winogradTook(t, kernels, tc.c, "winograd")
		})
	}
}

// ConvolutionTuning.WinogradPart (winopart) caps the batch images a part
// takes, in the forward and data gradient and in the weight gradient,
// with the same results; 4 for 3 images is one part.
func TestConvolutionWinogradPartTuning(t *testing.T) {
	dev := vktest.Open(t)
	d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 6, OutputFeatureChannels: 5,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 1}
	c := convCase{d: d, n: 3, h: 10, w: 11, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}
	for _, tc := range []struct{ part, wantPart, wantParts int }{{1, 1, 3}, {2, 2, 2}, {4, 3, 1}} {
		t.Run(fmt.Sprintf("winopart=%d", tc.part), func(t *testing.T) {
			r := rand.New(rand.NewSource(19))
			var kernels []any
			convRunCase(t, dev, c, r, false, func(k any) {
				require.NoError(t, k.(interface {
					SetTuning(ops.ConvolutionTuning) error
				}).SetTuning(ops.ConvolutionTuning{Winograd: true, WinogradPart: tc.part}))
				kernels = append(kernels, k)
			})
			winogradTook(t, kernels, c, "winograd")
			for _, k := range kernels {
				assert.Equal(t, tc.wantPart, ops.ConvLastWinogradPart(k), "%T", k)
			}
			parts, _ := ops.ConvLastWinogradWeights(kernels[1])
			assert.Equal(t, tc.wantParts, parts, "weight gradient parts")
		})
	}
}

// Winograd's rounding against the direct sums' on random data, forward,
// 16 to 256 input channels (lavapipe: relative RMS error 1.2e-6 to 3.3e-6
// against 0.2e-6 to 0.8e-6, the worst value 8 to 14 times the direct
// sums' worst): at most 20 times the direct sums' RMS error, and 1e-5.
func TestConvolutionWinogradAccuracy(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(3))
	for _, ch := range []int{16, 64, 256} {
		c := winogradAccuracyCase(ch, 32)
		cd := c.data(r)
		direct := winogradForwardError(t, dev, c, cd, false, "direct")
		wino := winogradForwardError(t, dev, c, cd, false, "winograd")
		t.Logf("%d channels: relative RMS error %.3g direct, %.3g Winograd", ch, direct, wino)
		assert.LessOrEqual(t, wino, 20*direct, "%d channels", ch)
		assert.LessOrEqual(t, wino, 1e-5, "%d channels", ch)
	}
}

// winogradAccuracyCase is a 3x3 convolution of in to out channels over
// two 12x12 images, padded by 1.
func winogradAccuracyCase(in, out int) convCase {
	return convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: in, OutputFeatureChannels: out,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 1}, n: 2, h: 12, w: 12,
		pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}}
}

// winogradForwardError runs c's forward on cd (half: float16 images, cd.x
// already halves) forced onto path (ConvForcePath with tile 2, checked
// to have run) and returns its relative RMS error against the float64
// reference.
func winogradForwardError(t *testing.T, dev *vk.Device, c convCase, cd convData, half bool, path string) float64 {
	t.Helper()
	want, _ := convRefForward(t, c, cd)
	k, err := ops.NewConvolution(dev, c.d)
	require.NoError(t, err)
	defer k.Close()
	require.True(t, ops.ConvForcePath(k, path, 2), path)
	k.Padding = padding.Explicit(c.pads, false, false)
	src := convNewImage(t, dev, half, c.n, c.d.InputFeatureChannels, c.h, c.w, cd.x)
	w, _ := convParams(t, dev, c, cd)
	var dst *ops.Image
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		dst, err = k.EncodeNew(cb, src, w, nil)
		return err
	}))
	defer dst.Close()
	require.Equal(t, strings.TrimSuffix(path, "-emulated"), ops.ConvLastPath(k))
	got, err := dst.Read(context.Background())
	require.NoError(t, err)
	var e2, w2 float64
	for j := range got {
		e := float64(got[j]) - want[j]
		e2 += e * e
		w2 += want[j] * want[j]
	}
	return math.Sqrt(e2 / w2)
}

// winogradCoopSlack is convCase.slack for the Winograd products on
// cooperative matrices: U and V rounded to halves before the products
// put up to 24 times a half's rounding of the products' magnitude on a
// result (a float64 simulation of F(4x4, 3x3) with half U and V over
// random data, bench/winograd_half_error.py: worst 24 with 3 channels,
// 7.5 with 16, 2.3 with 256).
const winogradCoopSlack = 64

// Winograd with its products on cooperative matrices (tiles 64 x 128
// and 128 x 128), float16 images: the convolution, its data and weight
// gradients and a transpose convolution with its gradients against the
// reference, within winogradCoopSlack; the device's real build where it
// has cooperative matrices, the emulated build everywhere.
func TestConvolutionWinogradCoopMat(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	for _, path := range []string{"winograd-coopmat", "winograd-coopmat-emulated"} {
		// Tile 10: the 64-row tile of the products of 64 channels or fewer.
		for _, tile := range []int{2, 3, 10} {
			// X as float32 and as halves (tile 3 only).
			for _, xt := range []string{"winoxhalf=0", "winoxhalf=1"} {
				if xt == "winoxhalf=1" && tile != 3 {
					continue
				}
				tu, err := ops.ParseConvolutionTuning(xt)
				require.NoError(t, err)
				t.Run(fmt.Sprintf("%s tile %d %s", path, tile, xt), func(t *testing.T) {
					r := rand.New(rand.NewSource(int64(77 + tile)))
					t.Log(ops.ConvCoopTileOn(dev.Limits(), tile, path != "winograd-coopmat"))
					// The third case has whole 16 x 8 blocks of X (24 output
					// channels, 32 tiles) beside partial ones.
					wide := winogradCases()[1]
					wide.d.OutputFeatureChannels, wide.n, wide.h, wide.w = 24, 2, 16, 16
					cases := append(winogradCases()[:2], wide)
					for i := range cases {
						cases[i].slack = winogradCoopSlack
					}
					winogradCheck(t, dev, r, cases, true, "winograd-coopmat", func(k any) {
						require.NoError(t, k.(interface {
							SetTuning(ops.ConvolutionTuning) error
						}).SetTuning(tu))
						if !ops.ConvForcePath(k, path, tile) {
							t.Skipf("%s has no cooperative matrices for tile %d", dev.Info().Name, tile)
						}
					})
				})
			}
		}
	}
	// Through the tuning (the real build only): by default, winocoop=1,
	// and winograd=1 with a cooperative-matrix tile, on float16 images;
	// not on float32 images, nor under winocoop=0, coopmat=0 or a forced
	// tile.
	r := rand.New(rand.NewSource(7))
	c := winogradCases()[1]
	c.d.InputFeatureChannels, c.d.OutputFeatureChannels = 64, 64
	c.slack = winogradCoopSlack
	// Tile 2 where forced; by default the products of 64 channels take
	// tile 10 (forward, data gradient) and tile 0 (weight gradient): on
	// lavapipe's KHR cooperative matrices (32 KiB of shared memory) those
	// fit and tile 2 does not.
	runs := ops.ConvCoopTileOn(dev.Limits(), 2, false) != ""
	runsDefault := ops.ConvCoopTileOn(dev.Limits(), 10, false) != "" && ops.ConvCoopTileOn(dev.Limits(), 0, false) != ""
	for _, tc := range []struct {
		tune string
		half bool
		want bool
	}{{"winograd=1,cooptile=2", true, runs}, {"winocoop=1", true, runsDefault}, {"winograd=1,cooptile=2", false, false},
		{"winocoop=1", false, false}, {"", true, runsDefault}, {"", false, false}, {"winocoop=0", true, false},
		{"coopmat=0", true, false}, {"winograd=1,tile=0", true, false}} {
		tu, err := ops.ParseConvolutionTuning(tc.tune)
		require.NoError(t, err)
		var kernels []any
		convRunCase(t, dev, c, r, tc.half, func(k any) {
			require.NoError(t, k.(interface {
				SetTuning(ops.ConvolutionTuning) error
			}).SetTuning(tu))
			kernels = append(kernels, k)
		})
		for _, k := range kernels {
			assert.Equal(t, tc.want, ops.ConvLastPath(k) == "winograd-coopmat", "%T %q half=%v", k, tc.tune, tc.half)
			if _, grad := k.(*ops.ConvolutionGradient); grad {
				assert.Equal(t, tc.want, ops.ConvLastWeightsPath(k) == "winograd-coopmat", "%T %q half=%v", k, tc.tune, tc.half)
			}
		}
	}
}

// The weight gradient on cooperative matrices over several parts of the
// batch and several splits of the tiles (the partial sums added in
// order), and a last part whose tile count is not a multiple of 4 (the
// products' plain loads of D) after parts whose are (quads).
func TestConvolutionWinogradCoopParts(t *testing.T) {
	dev := vktest.Open(t)
	d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 6, OutputFeatureChannels: 5,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 1}
	pads := padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}
	// Halves in float32 slots of 64: 49 tiles an image, 6 tiles an
	// image (as TestConvolutionWinogradParts).
	for _, tc := range []struct {
		name    string
		c       convCase
		scratch int // bytes
		splits  int // splits=N, and the splits wanted
	}{
		// D and V 9728 slots an image (part: one image of 49 tiles,
		// three parts), the partial sums 1080 a split and part.
		{"splits", convCase{d: d, n: 3, h: 26, w: 27, pads: pads, bias: true, slack: winogradCoopSlack}, 4 * 24000, 3},
		// D and V 2432 slots for two images: parts of 12 tiles (quads)
		// and 6.
		{"last part", convCase{d: d, n: 3, h: 5, w: 9, pads: pads, bias: true, slack: winogradCoopSlack}, 4 * 6000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer ops.SetWinogradScratchMax(tc.scratch)()
			r := rand.New(rand.NewSource(17))
			var kernels []any
			convRunCase(t, dev, tc.c, r, true, func(k any) {
				require.NoError(t, k.(interface {
					SetTuning(ops.ConvolutionTuning) error
				}).SetTuning(ops.ConvolutionTuning{Splits: tc.splits}))
				require.True(t, ops.ConvForcePath(k, "winograd-coopmat-emulated", 2))
				kernels = append(kernels, k)
			})
			winogradTook(t, kernels, tc.c, "winograd-coopmat")
			parts, splits := ops.ConvLastWinogradWeights(kernels[1])
			assert.Greater(t, parts, 1)
			if tc.splits == 0 {
				assert.Equal(t, 1, splits)
				return
			}
			// A split holds at least one slice of the tile's depth, and
			// the device's tile decides the slices of a part (two of 32
			// tiles on an H100, three on lavapipe's).
			assert.GreaterOrEqual(t, splits, 2)
			assert.LessOrEqual(t, splits, tc.splits)
		})
	}
}

// winogradEpilogueCase is a case of the Winograd products' epilogue
// tests: c run under tuning tune; want is what the test expects of the
// kernels' epilogue.
type winogradEpilogueCase struct {
	name string
	c    convCase
	tune string
	want bool
}

// winogradEpilogueCases returns the cases whose Winograd products on the
// 64 x 64 cooperative-matrix tile cover X (64 channels each way over 8 x
// 8 tiles of 4 x 4) and cover it partly (60 output channels, 7 x 8
// tiles).
func winogradEpilogueCases() (whole, partial convCase) {
	pad1 := padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}
	return convCase{d: conv3x3(64, 64), n: 1, h: 32, w: 32, pads: pad1, bias: true, slack: winogradCoopSlack},
		convCase{d: conv3x3(64, 60), n: 1, h: 28, w: 32, pads: pad1, slack: winogradCoopSlack}
}

// winogradEpilogueRun runs every case against the reference on the
// emulated build of the products and on the real one where the device
// has cooperative matrices, each on Winograd's cooperative-matrix path
// (tile 0) under its tuning, and then check on the forward and gradient
// kernels.
func winogradEpilogueRun(t *testing.T, cases []winogradEpilogueCase, seed int64, check func(t *testing.T, tc winogradEpilogueCase, lim vk.Limits, emu bool, fwd, grad any)) {
	dev := vktest.Open(t)
	for _, path := range []string{"winograd-coopmat-emulated", "winograd-coopmat"} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/%s/%s", path, tc.name, tc.tune), func(t *testing.T) {
				tu, err := ops.ParseConvolutionTuning(tc.tune)
				require.NoError(t, err)
				var kernels []any
				convRunCase(t, dev, tc.c, rand.New(rand.NewSource(seed)), true, tunedOnPath(t, dev, tu, path, 0, &kernels))
				winogradTook(t, kernels, tc.c, "winograd-coopmat")
				check(t, tc, dev.Limits(), path == "winograd-coopmat-emulated", kernels[0], kernels[1])
			})
		}
	}
}

// Under coopdirect=1 the Winograd products on cooperative matrices store
// each accumulator straight from the registers where their tiles cover X
// (and the weight gradient's P) exactly, X as float32 and as halves; by
// default, and where the tiles do not cover the results, through shared
// memory (winogradEpilogueRun's paths and cases).
func TestConvolutionWinogradCoopDirect(t *testing.T) {
	heavy(t)
	whole, partial := winogradEpilogueCases()
	winogradEpilogueRun(t, []winogradEpilogueCase{
		{"whole", whole, "winoxhalf=0,coopdirect=1", true},
		{"whole", whole, "winoxhalf=1,coopdirect=1", true},
		{"whole", whole, "winoxhalf=1", false},
		{"partial", partial, "winoxhalf=1,coopdirect=1", false},
	}, 23, func(t *testing.T, tc winogradEpilogueCase, _ vk.Limits, _ bool, fwd, grad any) {
		f, _ := ops.ConvLastCoopDirect(fwd)
		dx, dw := ops.ConvLastCoopDirect(grad)
		assert.Equal(t, tc.want, f, "forward products stored directly")
		assert.Equal(t, tc.want, dx, "data gradient products stored directly")
		// The weight gradient's P is 64 x 64 in both cases but the
		// partial one's 60 output channels.
		assert.Equal(t, tc.want, dw, "weight gradient products stored directly")
	})
}

// The Winograd products that store X as halves stage each tile whole in
// shared memory under coopstage=1 (gemm_coopmat.glsl's gemmEpilogueTile)
// and match the reference, tiles covering X and partly past its rows and
// columns, forward and data gradient; X as float32 (winoxhalf=0) and X's
// rows not on 16 bytes (7 x 7 tiles, 49 a row) keep the slices'
// epilogue (winogradEpilogueRun's paths; the emulated builds' slices
// halved to fit beside the tile on lavapipe's 32 KiB).
func TestConvolutionWinogradCoopStage(t *testing.T) {
	heavy(t)
	whole, partial := winogradEpilogueCases()
	odd := convCase{d: conv3x3(16, 24), n: 1, h: 28, w: 28, pads: whole.pads, slack: winogradCoopSlack}
	winogradEpilogueRun(t, []winogradEpilogueCase{
		{"whole", whole, "winoxhalf=1,coopstage=1", true},
		{"partial", partial, "winoxhalf=1,coopstage=1", true},
		{"whole", whole, "winoxhalf=0,coopstage=1", false},
		{"whole", whole, "winoxhalf=1,coopstage=0", false},
		{"odd", odd, "winoxhalf=1,coopstage=1", false},
	}, 29, func(t *testing.T, tc winogradEpilogueCase, lim vk.Limits, emu bool, fwd, grad any) {
		// Where the device's shared memory holds the real tile's slices
		// and staged tile (an H100's 48 KiB; not lavapipe's 32 KiB with
		// its KHR builds' subgroups of 8).
		want := tc.want && ops.ConvCoopStageFits(lim, 0, emu)
		assert.Equal(t, want, ops.ConvLastCoopStage(fwd), "forward products staged")
		assert.Equal(t, want, ops.ConvLastCoopStage(grad), "data gradient products staged")
	})
}

// The Winograd products of halves round more than the direct sums: on
// random float16 images (16 and 64 input channels), forward, relative
// RMS error against the float64 reference of at most 6e-3 (a float64
// simulation gives 3e-3 for any channel count; the direct sums' is
// their result's rounding to half, 2e-4), and the float32 transforms'
// Winograd stays within 2 times the direct sums'.
func TestConvolutionWinogradCoopAccuracy(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(4))
	for _, ch := range []int{16, 64} {
		c := winogradAccuracyCase(ch, 16)
		cd := c.data(r)
		cd.x = toHalf(cd.x)
		direct := winogradForwardError(t, dev, c, cd, true, "direct")
		wino := winogradForwardError(t, dev, c, cd, true, "winograd")
		coop := winogradForwardError(t, dev, c, cd, true, "winograd-coopmat-emulated")
		t.Logf("%d channels, float16: relative RMS error %.3g direct, %.3g Winograd, %.3g Winograd on cooperative matrices", ch, direct, wino, coop)
		assert.LessOrEqual(t, wino, 2*direct, "%d channels", ch)
		assert.LessOrEqual(t, coop, 6e-3, "%d channels", ch)
	}
}

// The Winograd products of a convolution and of its data gradient on the
// float32 tiles split their k (the input channels) under splits=N, the
// output transform adding the partial products: in 2 and in 3 uneven
// chunks (40 channels: 16, 16 and 8 on 8-deep slices), on every tile,
// against the reference; and without the key they run unsplit on these
// small images.
func TestConvolutionWinogradSplits(t *testing.T) {
	dev := vktest.Open(t)
	d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 40, OutputFeatureChannels: 24,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 1, Neuron: ops.NewNeuronDescriptor(ops.NeuronReLU)}
	c := convCase{d: d, n: 2, h: 9, w: 10, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}
	for tile := 0; tile < ops.ConvTileCount(); tile++ {
		for _, want := range []int{0, 2, 3} {
			t.Run(fmt.Sprintf("%s/splits=%d", ops.ConvTileName(tile), want), func(t *testing.T) {
				fwd, grad := winogradTunedRun(t, dev, c, int64(7+want), ops.ConvolutionTuning{Splits: want}, tile)
				// The gradient kernel's last Winograd image GEMM is its data
				// gradient's.
				for _, k := range []any{fwd, grad} {
					require.Equal(t, "winograd", ops.ConvLastPath(k))
					got := ops.ConvLastWinogradSplits(k)
					switch want {
					case 0:
						assert.Equal(t, 1, got, "%T", k)
					case 2:
						assert.Equal(t, 2, got, "%T", k)
					case 3:
						// 3 chunks of 40 or 24 channels on slices 8 or 16 deep.
						assert.Contains(t, []int{2, 3}, got, "%T", k)
					}
				}
			})
		}
	}
}

// winogradSplits: splits=N where given; else doubled while the products'
// workgroups number under five per multiprocessor and each split keeps
// 128 channels (ResNet-18's 512@7 layers on an H200: 288 workgroups, 4
// splits; its 256@14: 576, 2; its 128@28: 936, none); chunks are whole
// slices.
func TestWinogradSplitsRule(t *testing.T) {
	for _, tc := range []struct {
		units, want, wgs, cin, bk int
		splits, chunk             int
	}{
		{132, 0, 288, 512, 8, 4, 128},
		{132, 0, 576, 256, 8, 2, 128},
		{132, 0, 936, 128, 8, 1, 128},
		{132, 0, 700, 512, 8, 1, 512},
		{132, 0, 36, 512, 8, 4, 128},
		{132, 0, 36, 200, 8, 1, 200},
		{132, 0, 288, 255, 8, 1, 256},
		{132, 3, 576, 40, 8, 3, 16},
		{132, 3, 576, 40, 16, 3, 16},
		{132, 2, 576, 24, 16, 2, 16},
		{132, 5, 576, 8, 8, 1, 8},
	} {
		s, c := ops.WinogradSplits(tc.units, tc.want, tc.wgs, tc.cin, tc.bk)
		assert.Equal(t, [2]int{tc.splits, tc.chunk}, [2]int{s, c}, "%+v", tc)
	}
}

// By default (no splits=N) the rule splits the products where the device
// has multiprocessors to fill: with units=64, a forward over 256 input
// channels of one small image (36 workgroups) runs in 2 splits, its data
// gradient (8 input channels) unsplit, both matching the reference.
func TestConvolutionWinogradSplitsByDefault(t *testing.T) {
	dev := vktest.Open(t)
	d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 256, OutputFeatureChannels: 8,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 1}
	c := convCase{d: d, n: 1, h: 6, w: 6, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}
	fwd, grad := winogradTunedRun(t, dev, c, 11, ops.ConvolutionTuning{ComputeUnits: 64}, 1)
	assert.Equal(t, 2, ops.ConvLastWinogradSplits(fwd), "forward over 256 channels")
	assert.Equal(t, 1, ops.ConvLastWinogradSplits(grad), "data gradient over 8 channels")
}
