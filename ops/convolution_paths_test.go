package ops_test

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Every code path of the family computes the same results on the same
// cases: each GEMM tile shape shipped (forced), the direct fallback, and
// the depthwise kernels, forward and gradients of a grouped dilated
// convolution with asymmetric pads and a stride above the kernel, each
// checked against the reference (so against each other within twice the
// tolerance). The convolution's three GEMMs use the slice layouts A by
// rows (quads), B by columns and B by rows; every tile also runs the fully
// connected data gradient (A by columns) and a pointwise convolution (B by
// quads) and the data gradient of a strided convolution (one GEMM per
// phase of the stride). The direct path and the first
// tile also run a depthwise convolution with a channel multiplier, a
// transpose convolution and every fully connected pass. (Each tile
// pipeline costs lavapipe a second or two to compile: the table is what
// covers every load layout on every tile.)
func TestConvolutionEveryPath(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	grouped := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 2, InputFeatureChannels: 6, OutputFeatureChannels: 9,
		Groups: 3, StrideX: 4, StrideY: 1, DilationX: 1, DilationY: 2}, n: 2, h: 9, w: 13,
		pads: padding.Pads{Top: 2, Left: 1, Bottom: 0, Right: 2}, bias: true}
	depthwise := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 5, OutputFeatureChannels: 5,
		Groups: 5, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}, n: 2, h: 11, w: 7,
		pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}
	multiplier := depthwise
	multiplier.d.OutputFeatureChannels, multiplier.d.StrideX = 10, 2
	transpose := convTCase{convCase: convCase{d: ops.ConvolutionDescriptor{KernelWidth: 2, KernelHeight: 3, InputFeatureChannels: 4,
		OutputFeatureChannels: 6, Groups: 2, StrideX: 2, StrideY: 1, DilationX: 1, DilationY: 1}, n: 2, h: 5, w: 6,
		pads: padding.Pads{Top: 1, Left: 0, Bottom: 0, Right: 1}, bias: true}, opX: 1}
	fc := fcCase{n: 9, c: 7, h: 3, w: 2, o: 11, flat: true, bias: true}
	// A pointwise convolution: the tiles load its weights and source as
	// quads (the grouped case's weights too: 12 per row).
	// A strided convolution without dilation: its data gradient runs one
	// GEMM per phase of the stride.
	strided := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 4, InputFeatureChannels: 4, OutputFeatureChannels: 6,
		Groups: 2, StrideX: 2, StrideY: 3, DilationX: 1, DilationY: 1}, n: 2, h: 10, w: 9,
		pads: padding.Pads{Top: 1, Left: 1, Bottom: 2, Right: 0}}
	pointwise := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 1, KernelHeight: 1, InputFeatureChannels: 8, OutputFeatureChannels: 12,
		Groups: 1, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}, n: 3, h: 6, w: 6, bias: true}
	paths := []struct {
		name string
		tile int
	}{{"direct", 0}, {"depthwise", 0}}
	for i := 0; i < ops.ConvTileCount(); i++ {
		paths = append(paths, struct {
			name string
			tile int
		}{"tiled", i})
	}
	for _, p := range paths {
		name := p.name
		if name == "tiled" {
			name = fmt.Sprintf("tiled %s", ops.ConvTileName(p.tile))
		}
		force := func(k any) {
			if !ops.ConvForcePath(k, p.name, p.tile) {
				t.Skipf("%s does not run %s", dev.Info().Name, name)
			}
		}
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewSource(77))
			switch p.name {
			case "depthwise":
				convRunCase(t, dev, depthwise, r, false, force)
				convRunCase(t, dev, multiplier, r, false, force)
				tr := transpose
				tr.d.InputFeatureChannels, tr.d.OutputFeatureChannels, tr.d.Groups, tr.d.StrideX, tr.opX = 5, 5, 5, 1, 0
				convTCheck(t, dev, tr, tr.data(r), false, force)
				return
			case "direct":
				convRunCase(t, dev, depthwise, r, false, force)
				convTCheck(t, dev, transpose, transpose.data(r), false, force)
			}
			convRunCase(t, dev, grouped, r, false, force)
			pk := must(ops.NewConvolution(dev, pointwise.d))
			defer pk.Close()
			force(pk)
			convCheckForward(t, dev, pk, pointwise, pointwise.data(r), false)
			convCheckData(t, dev, strided, r, force)
			if p.tile == 0 || p.name == "direct" {
				fcCheck(t, dev, fc, r, false, force)
				convRunCase(t, dev, multiplier, r, false, force)
				convTCheck(t, dev, transpose, transpose.data(r), false, force)
			} else {
				// The one load layout the convolution does not use
				// (A by columns) on every tile.
				fcDataCheck(t, dev, fc, r, force)
			}
		})
	}
}

// Float16 images through cooperative matrices agree with the float16
// tiles: each case runs forced onto each, checked against the float64
// reference within the float16 tolerance (so against each other within
// twice it; the cooperative matrices also round the float32 weights to
// half, an error within the half ulp of the products that tolerance
// allows). The real build runs where the device has VK_NV_cooperative_matrix
// (not lavapipe, which skips that row); the emulated build (the same
// shader's staging, offsets and epilogue, plain arithmetic for the
// matrices) runs everywhere. The cases cover every operand mode of the
// image GEMMs: im2col with quad loads of the weights, the gather and the
// strided phases of data gradients, the transpose convolution, fully
// connected rows and columns, a pointwise convolution's quad loads of the
// source, and fused neurons and bias in the epilogue, on the default
// cooperative-matrix tile; every other tile runs one or two of them (the
// emulated build is slow on lavapipe), so that each tile's subgroup
// layout, accumulator counts and slice offsets run at least once and each
// operand mode on a tile of 8 subgroups. (The emulated tiles' slices are
// shallower where lavapipe's 32 KiB of shared memory asks, see
// convCoopEmuFor: the real build on a GPU runs every tile as shipped.)
func TestConvolutionCoopMatAgreesWithTiles(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	if !dev.Limits().Float16Storage {
		t.Skip("no float16 storage")
	}
	dense := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 12, OutputFeatureChannels: 70,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Neuron: ops.NewNeuronDescriptor(ops.NeuronReLU)}, n: 2, h: 9, w: 11,
		pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}
	grouped := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 2, InputFeatureChannels: 12, OutputFeatureChannels: 18,
		Groups: 3, StrideX: 2, StrideY: 3, DilationX: 1, DilationY: 1}, n: 2, h: 13, w: 11,
		pads: padding.Pads{Top: 2, Left: 1, Bottom: 0, Right: 2}, bias: true}
	dilated := grouped
	dilated.d.StrideX, dilated.d.StrideY, dilated.d.DilationX, dilated.d.DilationY = 1, 1, 2, 3
	pointwise := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 1, KernelHeight: 1, InputFeatureChannels: 40, OutputFeatureChannels: 33,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}, n: 2, h: 6, w: 10, bias: true}
	transpose := convTCase{convCase: convCase{d: ops.ConvolutionDescriptor{KernelWidth: 2, KernelHeight: 3, InputFeatureChannels: 20,
		OutputFeatureChannels: 36, Groups: 2, StrideX: 2, StrideY: 1, DilationX: 1, DilationY: 1}, n: 2, h: 7, w: 9,
		pads: padding.Pads{Top: 1, Left: 0, Bottom: 0, Right: 1}, bias: true}, opX: 1}
	fc := fcCase{n: 9, c: 37, h: 3, w: 2, o: 70, flat: true, bias: true}
	// The cases of each tile past 0: 0 dense, 1 grouped, 2 dilated,
	// 3 pointwise, 4 transpose, 5 fully connected.
	more := [][]int{1: {0, 5}, 2: {3, 1}, 3: {0, 5}, 4: {3, 4}, 5: {2}, 6: {0}, 7: {5}, 8: {1}, 9: {3}, 10: {0}, 11: {3}, 12: {2}}
	require.Len(t, more, ops.ConvolutionCoopTileCount(), "cases per cooperative-matrix tile")
	run := func(t *testing.T, path string, tile int, cases []int) {
		force := func(k any) { require.True(t, ops.ConvForcePath(k, path, tile)) }
		r := rand.New(rand.NewSource(15))
		for _, i := range cases {
			switch c := []convCase{dense, grouped, dilated, pointwise}; {
			case i < len(c):
				convRunCase(t, dev, c[i], r, true, force)
			case i == 4:
				convTCheck(t, dev, transpose, transpose.data(r), true, force)
			default:
				fcCheck(t, dev, fc, r, true, force)
			}
		}
	}
	all := []int{0, 1, 2, 3, 4, 5}
	for _, path := range []string{"coopmat", "coopmat-emulated"} {
		t.Run(path, func(t *testing.T) {
			probe := must(ops.NewConvolution(dev, pointwise.d))
			defer probe.Close()
			if !ops.ConvForcePath(probe, path, 0) {
				t.Skipf("%s has no cooperative matrices vkmps can use (NV %v, KHR %v)", dev.Info().Name, dev.Limits().CooperativeMatrixNV, dev.Limits().CooperativeMatrixKHR)
			}
			for i := 0; i < ops.ConvolutionCoopTileCount(); i++ {
				t.Run(strconv.Itoa(i), func(t *testing.T) {
					if !ops.ConvForcePath(probe, path, i) {
						t.Skipf("%s cannot run cooperative-matrix tile %d (%s)", dev.Info().Name, i, ops.ConvolutionCoopTileName(i))
					}
					t.Logf("tile %d: %s", i, ops.ConvCoopTileOn(dev.Limits(), i, path == "coopmat-emulated"))
					cases := more[i]
					if i == 0 {
						cases = all
					}
					run(t, path, i, cases)
				})
			}
		})
	}
	t.Run("tiled", func(t *testing.T) { run(t, "tiled", 2, all) })
	// Split K (splits=3): the tiles of each split write partial sums and
	// the finishing pass adds them, for every operand mode (the strided
	// data gradient's phases too).
	for _, path := range []string{"coopmat", "coopmat-emulated"} {
		t.Run(path+" split", func(t *testing.T) {
			probe := must(ops.NewConvolution(dev, pointwise.d))
			defer probe.Close()
			if !ops.ConvForcePath(probe, path, 0) {
				t.Skipf("%s has no cooperative matrices vkmps can use", dev.Info().Name)
			}
			var kernels []any
			force := func(k any) {
				require.True(t, ops.ConvForcePath(k, path, 0))
				require.NoError(t, k.(interface {
					SetTuning(ops.ConvolutionTuning) error
				}).SetTuning(ops.ConvolutionTuning{Splits: 3}))
				kernels = append(kernels, k)
			}
			r := rand.New(rand.NewSource(16))
			for _, c := range []convCase{dense, dilated, pointwise} {
				convRunCase(t, dev, c, r, true, force)
			}
			convTCheck(t, dev, transpose, transpose.data(r), true, force)
			fcCheck(t, dev, fc, r, true, force)
			splits := 0
			for _, k := range kernels {
				if ops.ConvCoopSplitK(k) {
					splits++
				}
			}
			// Every kernel but, where the device's tile is 32 deep (an
			// H100's; lavapipe's emulated ones are shallower and split
			// them), the dilated forward (a depth of 24) and the
			// transpose convolution's phases (10 channels per group
			// times 3 taps): one slice each.
			assert.GreaterOrEqual(t, splits, len(kernels)-2, "kernels whose cooperative-matrix GEMMs split K")
		})
	}
}

// The data gradients of convolutions with few input channels per group
// (and transpose convolutions with few outputs per group) run on their
// gather kernel and match the reference: an RGB stem (7x7, stride 2, pad
// 3), a dilated stride-1 kernel, groups with unequal strides and
// asymmetric pads, a strided depthwise convolution with a channel
// multiplier, one input channel, a narrow image (strips of 4), float16,
// and a transpose convolution with bias and a fused neuron; each also
// under the GEMMs (small=0) for comparison.
func TestConvolutionSmallChannelsGather(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	desc := func(k, c, o, g, sx, sy, dx, dy int) ops.ConvolutionDescriptor {
		return ops.ConvolutionDescriptor{KernelWidth: k, KernelHeight: k, InputFeatureChannels: c, OutputFeatureChannels: o, Groups: g,
			StrideX: sx, StrideY: sy, DilationX: dx, DilationY: dy}
	}
	cases := []struct {
		name string
		c    convCase
		half bool
	}{
		{"stem", convCase{d: desc(7, 3, 10, 1, 2, 2, 1, 1), n: 2, h: 23, w: 30, pads: padding.Pads{Top: 3, Left: 3, Bottom: 3, Right: 3}}, false},
		{"dilated", convCase{d: desc(3, 2, 5, 1, 1, 1, 2, 3), n: 1, h: 17, w: 19, pads: padding.Pads{Top: 2, Left: 1, Bottom: 3, Right: 0}}, false},
		{"groups", convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 4, InputFeatureChannels: 8, OutputFeatureChannels: 6,
			Groups: 2, StrideX: 3, StrideY: 2, DilationX: 1, DilationY: 1}, n: 2, h: 15, w: 20, pads: padding.Pads{Top: 1, Left: 2, Bottom: 0, Right: 1}}, false},
		{"depthwise strided", convCase{d: desc(3, 5, 10, 5, 2, 2, 1, 1), n: 2, h: 13, w: 12, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}}, false},
		{"one channel narrow", convCase{d: desc(5, 1, 4, 1, 1, 1, 1, 1), n: 3, h: 6, w: 5, pads: padding.Pads{Top: 2, Left: 2, Bottom: 2, Right: 2}}, false},
		{"stem float16", convCase{d: desc(7, 3, 6, 1, 2, 2, 1, 1), n: 2, h: 15, w: 18, pads: padding.Pads{Top: 3, Left: 3, Bottom: 3, Right: 3}}, true},
	}
	for _, path := range []string{"small", "gemm"} {
		force := func(k any) {
			if path == "gemm" {
				require.NoError(t, k.(interface {
					SetTuning(ops.ConvolutionTuning) error
				}).SetTuning(ops.ConvolutionTuning{NoSmallChannels: true}))
				return
			}
			require.True(t, ops.ConvForcePath(k, "small", 0))
		}
		for _, c := range cases {
			if c.half && !dev.Limits().Float16Storage {
				continue
			}
			t.Run(path+"/"+c.name, func(t *testing.T) {
				var g any
				convRunCase(t, dev, c.c, rand.New(rand.NewSource(3)), c.half, func(k any) {
					force(k)
					if _, ok := k.(*ops.ConvolutionGradient); ok {
						g = k
					}
				})
				assert.Equal(t, path == "small", ops.ConvLastPath(g) == "small", "the data gradient's path: %s", ops.ConvLastPath(g))
			})
		}
		tr := convTCase{convCase: convCase{d: ops.ConvolutionDescriptor{KernelWidth: 4, KernelHeight: 3, InputFeatureChannels: 6,
			OutputFeatureChannels: 3, Groups: 1, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1, Neuron: ops.NewNeuronDescriptor(ops.NeuronReLU)},
			n: 2, h: 7, w: 8, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}, opX: 1, opY: 1}
		t.Run(path+"/transpose", func(t *testing.T) {
			var fwd any
			convTCheck(t, dev, tr, tr.data(rand.New(rand.NewSource(4))), false, func(k any) {
				force(k)
				if _, ok := k.(*ops.ConvolutionTranspose); ok {
					fwd = k
				}
			})
			assert.Equal(t, path == "small", ops.ConvLastPath(fwd) == "small", "the forward's path: %s", ops.ConvLastPath(fwd))
		})
	}
}

// depthwiseDesc is a depthwise convolution of k x k taps from c channels
// to o (a multiple of c), strides sx, sy and dilations dx, dy.
func depthwiseDesc(k, c, o, sx, sy, dx, dy int) ops.ConvolutionDescriptor {
	return ops.ConvolutionDescriptor{KernelWidth: k, KernelHeight: k, InputFeatureChannels: c, OutputFeatureChannels: o, Groups: c,
		StrideX: sx, StrideY: sy, DilationX: dx, DilationY: dy}
}

// Depthwise convolutions run on their kernels' strips and match the
// reference, forward and gradients: weight gradients with dilation,
// unequal strides, a channel multiplier, asymmetric pads, rows that end
// inside a strip, and float16; forwards over widths of a multiple of the
// strip with left pads 0..3, strided and dilated, float16 too.
func TestConvolutionDepthwiseStrips(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	desc := depthwiseDesc
	for _, c := range []struct {
		name string
		c    convCase
		half bool
	}{
		{"dilated", convCase{d: desc(3, 4, 8, 1, 2, 2, 3), n: 2, h: 14, w: 17, pads: padding.Pads{Top: 2, Left: 1, Bottom: 0, Right: 3}, bias: true}, false},
		{"strided 5x5", convCase{d: desc(5, 3, 3, 3, 1, 1, 2), n: 3, h: 12, w: 21, pads: padding.Pads{Top: 2, Left: 2, Bottom: 2, Right: 2}}, false},
		{"dilated float16", convCase{d: desc(3, 4, 8, 3, 1, 2, 1), n: 2, h: 11, w: 19, pads: padding.Pads{Top: 1, Left: 2, Bottom: 1, Right: 0}, bias: true}, true},
		{"wide pad 0", convCase{d: desc(3, 3, 3, 1, 1, 1, 1), n: 2, h: 9, w: 16, pads: padding.Pads{Top: 1, Left: 0, Bottom: 1, Right: 2}, bias: true}, false},
		{"wide pad 1", convCase{d: desc(3, 3, 6, 1, 1, 1, 1), n: 2, h: 9, w: 12, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}}, false},
		{"wide pad 2 strided", convCase{d: desc(5, 2, 2, 2, 1, 1, 1), n: 1, h: 7, w: 20, pads: padding.Pads{Top: 2, Left: 2, Bottom: 2, Right: 2}}, false},
		{"wide pad 3 dilated", convCase{d: desc(3, 2, 4, 1, 2, 3, 1), n: 2, h: 8, w: 8, pads: padding.Pads{Top: 0, Left: 3, Bottom: 1, Right: 3}}, false},
		{"wide float16", convCase{d: desc(3, 4, 4, 1, 1, 1, 1), n: 2, h: 6, w: 24, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}, true},
	} {
		if c.half && !dev.Limits().Float16Storage {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			var g any
			convRunCase(t, dev, c.c, rand.New(rand.NewSource(5)), c.half, func(k any) {
				if _, ok := k.(*ops.ConvolutionGradient); ok {
					g = k
				}
			})
			assert.Equal(t, "depthwise", ops.ConvLastWeightsPath(g))
		})
	}
}

// Depthwise convolutions whose rows allow it load and store quads, or
// pairs where rows are of an even width only, and the weight gradients
// of float16 rows of a multiple of 8 load 8 values at a time on strips of
// 8, by default:
// forwards, weight gradients and the data gradients that run on the
// depthwise kernel (a left pad of 0..3 puts the first column anywhere in
// its quad), under strips of 4 and 8 outputs (pairs under strips of 2
// too), and single values under dwvec=0, strips of odd widths, or rows of
// an odd width; every setting matches the reference.
func TestConvolutionDepthwiseVectors(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	desc := func(k, c, o, s, d int) ops.ConvolutionDescriptor { return depthwiseDesc(k, c, o, s, s, d, d) }
	cases := []struct {
		name string
		c    convCase
		half bool
		vw   int // the widest vector both sides' rows allow
	}{
		{"pad 1", convCase{d: desc(3, 4, 4, 1, 1), n: 2, h: 9, w: 16, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}, false, 4},
		{"pad 0 dilated multiplier", convCase{d: desc(3, 3, 6, 1, 2), n: 2, h: 10, w: 16, pads: padding.Pads{Top: 0, Left: 0, Bottom: 0, Right: 0}}, false, 4},
		{"pad 2 strided", convCase{d: desc(5, 2, 2, 2, 1), n: 2, h: 9, w: 24, pads: padding.Pads{Top: 2, Left: 2, Bottom: 2, Right: 1}, bias: true}, false, 4},
		{"pad 3", convCase{d: desc(3, 2, 2, 1, 1), n: 1, h: 7, w: 12, pads: padding.Pads{Top: 1, Left: 3, Bottom: 1, Right: 3}}, false, 4},
		{"float16", convCase{d: desc(3, 4, 4, 1, 1), n: 2, h: 6, w: 24, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}, true, 8},
		{"float16 strided", convCase{d: desc(3, 4, 4, 2, 1), n: 2, h: 6, w: 32, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}}, true, 8},
		{"float16 pad 2 width 12", convCase{d: desc(5, 2, 2, 1, 1), n: 2, h: 5, w: 12, pads: padding.Pads{Top: 2, Left: 2, Bottom: 2, Right: 2}}, true, 4},
		{"width 14", convCase{d: desc(3, 3, 3, 1, 1), n: 2, h: 7, w: 14, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}, false, 2},
		{"width 10 pad 2 float16", convCase{d: desc(5, 2, 4, 1, 1), n: 2, h: 6, w: 10, pads: padding.Pads{Top: 2, Left: 2, Bottom: 2, Right: 2}}, true, 2},
		{"odd width", convCase{d: desc(3, 3, 3, 1, 1), n: 2, h: 7, w: 13, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}}, false, 1},
	}
	for _, text := range []string{"", "dwstrip=8", "dwvec=0", "dwstrip=2", "dwstrip=8,dwvec=0", "dwstrip=5", "dwexact=1,dwrows=2"} {
		tu, err := ops.ParseConvolutionTuning(text)
		require.NoError(t, err)
		for _, c := range cases {
			if c.half && !dev.Limits().Float16Storage {
				continue
			}
			t.Run(text+"/"+c.name, func(t *testing.T) {
				var fwd, grad any
				convRunCase(t, dev, c.c, rand.New(rand.NewSource(9)), c.half, func(k any) {
					require.NoError(t, k.(interface {
						SetTuning(ops.ConvolutionTuning) error
					}).SetTuning(tu))
					switch k.(type) {
					case *ops.Convolution:
						fwd = k
					case *ops.ConvolutionGradient:
						grad = k
					}
				})
				// The widest vector the strip and the rows allow, 8 values
				// only of halves: the forwards' strips are 4 wide by
				// default, the weight gradients' 8 where halves' rows
				// allow 8 values.
				widest := func(strip int) int {
					for _, w := range []int{8, 4, 2} {
						if !tu.NoDepthwiseVectors && (w < 8 || c.half) && strip%w == 0 && c.vw%w == 0 {
							return w
						}
					}
					return 1
				}
				strip, wstrip := tu.DepthwiseStrip, tu.DepthwiseStrip
				if strip == 0 {
					strip, wstrip = 4, 4
					if c.half && c.vw == 8 && !tu.NoDepthwiseVectors {
						wstrip = 8
					}
				}
				assert.Equal(t, []int{widest(strip)}, ops.ConvDepthwiseVectors(fwd), "forward")
				// Both sides' rows allow c.vw in every case. The data
				// gradients of stride 1 without a multiplier run on the
				// forward's kernel; the others are GEMMs.
				want := []int{widest(wstrip)}
				if d := c.c.d; d.StrideX == 1 && d.OutputFeatureChannels == d.InputFeatureChannels && widest(strip) != want[0] {
					want = []int{widest(strip), want[0]}
				}
				assert.Equal(t, want, ops.ConvDepthwiseVectors(grad), "gradients")
			})
		}
	}
}

// coopCases are the cooperative-matrix tests' two cases: a pointwise
// layer whose operands load as quads (40 -> 36 channels over 6 x 10
// planes) and a 3x3 layer for Winograd (20 -> 24 over 16 x 13, 4 x 4
// tiles of its products on whole quads), both with bias.
func coopCases() (pointwise, wino convCase) {
	pointwise = convCase{d: ops.ConvolutionDescriptor{KernelWidth: 1, KernelHeight: 1, InputFeatureChannels: 40, OutputFeatureChannels: 36,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}, n: 2, h: 6, w: 10, bias: true}
	wino = convCase{d: conv3x3(20, 24), n: 2, h: 16, w: 13, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}
	return pointwise, wino
}

// The real cooperative-matrix builds run through VK_KHR_cooperative_matrix
// where the device lists no usable VK_NV_cooperative_matrix shape (AMD,
// Intel, Mesa 26's lavapipe: make coopmat-test), and under coopkhr=1
// where it lists both (NVIDIA), else through NV's; either way a pointwise
// convolution and Winograd's products, with their data and weight
// gradients, match the reference.
func TestConvolutionCoopKHR(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	lim := dev.Limits()
	if !lim.Float16Storage || len(lim.CooperativeMatrixKHR) == 0 {
		t.Skipf("%s does not list VK_KHR_cooperative_matrix (or stores no float16)", dev.Info().Name)
	}
	pointwise, wino := coopCases()
	wino.slack = winogradCoopSlack
	for _, tune := range []string{"default", "coopkhr=1"} {
		t.Run(tune, func(t *testing.T) {
			tu, err := ops.ParseConvolutionTuning(strings.TrimPrefix(tune, "default"))
			require.NoError(t, err)
			want := "nv"
			if tune == "coopkhr=1" || ops.ConvCoopUsesKHR(lim) {
				want = "khr"
			}
			for _, c := range []struct {
				path string
				c    convCase
			}{{"coopmat", pointwise}, {"winograd-coopmat", wino}} {
				var kernels []any
				convRunCase(t, dev, c.c, rand.New(rand.NewSource(41)), true, tunedOnPath(t, dev, tu, c.path, 0, &kernels))
				apis := map[string]bool{}
				for _, k := range kernels {
					for _, a := range ops.ConvCoopAPIs(k) {
						apis[a] = true
					}
				}
				assert.Equal(t, map[string]bool{want: true}, apis, "%s under %s", c.path, tune)
			}
		})
	}
}

// tunedOnPath returns a convRunCase force that sets tuning tu on each
// kernel and forces it onto path with tile (ConvForcePath), skipping the
// test where the device cannot run it.
func tunedOnPath(t *testing.T, dev *vk.Device, tu ops.ConvolutionTuning, path string, tile int, kernels *[]any) func(k any) {
	return func(k any) {
		require.NoError(t, k.(interface {
			SetTuning(ops.ConvolutionTuning) error
		}).SetTuning(tu))
		if !ops.ConvForcePath(k, path, tile) {
			t.Skipf("%s cannot run %s tile %d", dev.Info().Name, path, tile)
		}
		*kernels = append(*kernels, k)
	}
}

// The cooperative-matrix GEMMs whose operands both load as quads (a
// pointwise forward; Winograd's forward and weight-gradient products over
// whole quads of tiles and channels) take their shaders' packed builds by
// default and the others under packed=0, and match the reference either
// way: on the emulated builds on every device, and on the real ones where
// the device has cooperative matrices.
func TestConvolutionCoopPacked(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	if !dev.Limits().Float16Storage {
		t.Skip("no float16 storage")
	}
	pointwise, wino := coopCases()
	for _, tc := range []struct {
		path   string
		c      convCase
		shader string
	}{{"coopmat-emulated", pointwise, "convolution_gemm_coopmat"}, {"coopmat", pointwise, "convolution_gemm_coopmat"},
		{"winograd-coopmat-emulated", wino, "convolution_winograd_coopmat"}, {"winograd-coopmat", wino, "convolution_winograd_coopmat"}} {
		for _, tune := range []string{"packed=1", "packed=0"} {
			t.Run(tc.path+" "+tune, func(t *testing.T) {
				c := tc.c
				if strings.HasPrefix(tc.path, "winograd") {
					c.slack = winogradCoopSlack
				}
				tu, err := ops.ParseConvolutionTuning(tune)
				require.NoError(t, err)
				var kernels []any
				convRunCase(t, dev, c, rand.New(rand.NewSource(31)), true, tunedOnPath(t, dev, tu, tc.path, 0, &kernels))
				packed, unpacked := ops.ConvPackedShaders(kernels[0])
				if tune == "packed=1" {
					assert.Contains(t, packed, tc.shader, "the forward's packed builds")
				} else {
					assert.Empty(t, packed, "packed=0")
					assert.NotZero(t, unpacked, "cooperative-matrix pipelines under packed=0")
				}
			})
		}
	}
}

// Under coopdirect=1 the GEMMs on cooperative matrices store each
// accumulator straight from the registers (STORE_DIRECT) where their
// tiles cover the outputs: a 3x3 forward of 64 output channels over 8 x 8
// planes on the 64 x 64 tile into the image, and under splits=2 into the
// partial sums; and through shared memory by default, with a bias, over
// 7 x 8 planes (columns of a tile in two planes), and with 60 output
// channels (a partial tile of rows). Against the reference every way; the emulated
// build everywhere, the real one where the device has cooperative
// matrices.
func TestConvolutionCoopDirect(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	if !dev.Limits().Float16Storage {
		t.Skip("no float16 storage")
	}
	pad1 := padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}
	plain := convCase{d: conv3x3(16, 64), n: 2, h: 8, w: 8, pads: pad1}
	biased, narrow, rows := plain, plain, plain
	biased.bias = true
	narrow.h = 7
	rows.d = conv3x3(16, 60)
	for _, path := range []string{"coopmat-emulated", "coopmat"} {
		for _, tc := range []struct {
			name   string
			c      convCase
			tune   string
			direct bool
		}{
			{"image", plain, "coopdirect=1", true},
			{"split", plain, "splits=2,coopdirect=1", true},
			{"bias", biased, "coopdirect=1", false},
			{"image", plain, "default", false},
			{"7x8 planes", narrow, "coopdirect=1", false},
			{"60 rows", rows, "coopdirect=1", false},
		} {
			t.Run(fmt.Sprintf("%s/%s/%s", path, tc.name, tc.tune), func(t *testing.T) {
				text := strings.TrimPrefix(tc.tune, "default")
				tu, err := ops.ParseConvolutionTuning(text)
				require.NoError(t, err)
				var kernels []any
				convRunCase(t, dev, tc.c, rand.New(rand.NewSource(29)), true, tunedOnPath(t, dev, tu, path, 0, &kernels))
				assert.Equal(t, "coopmat", ops.ConvLastPath(kernels[0]))
				assert.Equal(t, tu.Splits > 1, ops.ConvCoopSplitK(kernels[0]), "forward split")
				assert.Equal(t, tc.direct, ops.ConvLastGemmCoopDirect(kernels[0]), "forward stored directly")
			})
		}
	}
}

// The cooperative-matrix GEMMs under coopshape=N take matrices of that
// shape where they can (16x16x16 and 16x8x8 here; the emulated build any,
// the real one those the device lists), and match the reference: a
// pointwise forward, and Winograd's products (forward, data and weight
// gradients); by default the emulated build's 16x8x8, and on the device
// 16x16x16 for the pointwise forward where it lists it.
func TestConvolutionCoopShape(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	if !dev.Limits().Float16Storage {
		t.Skip("no float16 storage")
	}
	pointwise, wino := coopCases()
	wino.slack = winogradCoopSlack
	for _, path := range []string{"emulated", "real"} {
		for _, tune := range []string{"default", "coopshape=2", "coopshape=3"} {
			t.Run(path+"/"+tune, func(t *testing.T) {
				tu, err := ops.ParseConvolutionTuning(strings.TrimPrefix(tune, "default"))
				require.NoError(t, err)
				suffix := ""
				if path == "emulated" {
					suffix = "-emulated"
				}
				for _, c := range []struct {
					path string
					c    convCase
				}{{"coopmat" + suffix, pointwise}, {"winograd-coopmat" + suffix, wino}} {
					var kernels []any
					convRunCase(t, dev, c.c, rand.New(rand.NewSource(37)), true, tunedOnPath(t, dev, tu, c.path, 0, &kernels))
					got := ops.ConvCoopShapes(kernels[0])
					switch {
					case tune == "coopshape=2" && (path == "emulated" || ops.ConvCoopListed(dev.Limits(), 16, 16, 16)):
						assert.Equal(t, []string{"16x16x16"}, got, c.path)
					case tune == "coopshape=3" && (path == "emulated" || ops.ConvCoopListed(dev.Limits(), 16, 8, 8)):
						assert.Equal(t, []string{"16x8x8"}, got, c.path)
					case path == "emulated":
						assert.Equal(t, []string{"16x8x8"}, got, c.path)
					case tune == "default" && c.path == "coopmat" && ops.ConvCoopListed(dev.Limits(), 16, 16, 16):
						assert.Equal(t, []string{"16x16x16"}, got, c.path)
					case !ops.ConvCoopListed(dev.Limits(), 16, 8, 16) && !ops.ConvCoopListed(dev.Limits(), 16, 16, 16) &&
						!ops.ConvCoopListed(dev.Limits(), 16, 8, 8) && ops.ConvCoopListed(dev.Limits(), 8, 8, 8):
						// Mesa 26's lavapipe lists only 8x8x8.
						assert.Equal(t, []string{"8x8x8"}, got, c.path)
					default:
						assert.Len(t, got, 1, c.path)
					}
				}
			})
		}
	}
}

// Strided data gradients match the reference with their phases summing
// only their own taps (the tiles' default, with 32 and 64 channels per
// group, multiples of every slice depth) and over the whole grid of taps
// (phasetaps=0; the emulated cooperative matrices and the direct path
// unless split by tap), unsplit (tapsplit=0), split by tap (tapsplit=1:
// a split per tap, a phase of fewer taps summing fewer splits; on the
// emulated cooperative matrices over their own taps too), in 3 even
// splits (splits=3, each phase over the largest phase's depth), and as a
// columns GEMM and col2im (col2im=1; the grouped layer keeps its phases;
// also a dilated stride-2 layer, which has no phases):
// a 3x3 stride-2 layer, a 1x1 stride-2 one (three phases without a tap,
// whose outputs are 0), 5x5 stride 3 in groups with asymmetric pads, and
// a 1x1 stride-2 transpose convolution with bias and a neuron (the empty
// phases' outputs are the neuron of the bias).
func TestConvolutionPhaseTaps(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	half := dev.Limits().Float16Storage
	s2 := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 20, OutputFeatureChannels: 32,
		StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}, n: 1, h: 9, w: 8,
		pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}
	pointwise := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 1, KernelHeight: 1, InputFeatureChannels: 24, OutputFeatureChannels: 64,
		StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}, n: 1, h: 8, w: 7, bias: true}
	grouped := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 5, KernelHeight: 5, InputFeatureChannels: 8, OutputFeatureChannels: 64,
		Groups: 2, StrideX: 3, StrideY: 3, DilationX: 1, DilationY: 1}, n: 1, h: 11, w: 10,
		pads: padding.Pads{Top: 2, Left: 1, Bottom: 0, Right: 2}, bias: true}
	dilated := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 12, OutputFeatureChannels: 32,
		StrideX: 2, StrideY: 2, DilationX: 2, DilationY: 2}, n: 2, h: 13, w: 12,
		pads: padding.Pads{Top: 2, Left: 1, Bottom: 2, Right: 3}, bias: true}
	transpose := convTCase{convCase: convCase{d: ops.ConvolutionDescriptor{KernelWidth: 1, KernelHeight: 1, InputFeatureChannels: 32,
		OutputFeatureChannels: 12, Groups: 1, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1, Neuron: ops.NewNeuronDescriptor(ops.NeuronSigmoid)},
		n: 2, h: 5, w: 6, bias: true}, opX: 1, opY: 1}
	for _, p := range []struct {
		path string
		tile int
	}{{"tiled", 0}, {"tiled", 2}, {"coopmat-emulated", 0}, {"direct", 0}} {
		for _, tune := range []string{"phasetaps=1,tapsplit=0", "phasetaps=0,tapsplit=0", "tapsplit=1", "phasetaps=0,tapsplit=1", "splits=3", "col2im=1", "col2im=1,splits=2"} {
			t.Run(fmt.Sprintf("%s %d %s", p.path, p.tile, tune), func(t *testing.T) {
				tu, err := ops.ParseConvolutionTuning(tune)
				require.NoError(t, err)
				f16 := strings.HasPrefix(p.path, "coopmat")
				if f16 && !half {
					t.Skip("no float16 storage")
				}
				var kernels []any
				force := func(k any) {
					if !ops.ConvForcePath(k, p.path, p.tile) {
						t.Skipf("%s cannot run %s %d", dev.Info().Name, p.path, p.tile)
					}
					require.NoError(t, k.(interface {
						SetTuning(ops.ConvolutionTuning) error
					}).SetTuning(tu))
					kernels = append(kernels, k)
				}
				r := rand.New(rand.NewSource(9))
				cases := []convCase{s2, pointwise, grouped}
				if strings.Contains(tune, "col2im") {
					cases = append(cases, dilated)
				}
				for _, c := range cases {
					convRunCase(t, dev, c, r, f16, force)
				}
				convTCheck(t, dev, transpose, transpose.data(r), f16, force)
				col2im := false
				for _, k := range kernels {
					col2im = col2im || ops.ConvCol2im(k)
				}
				assert.Equal(t, strings.Contains(tune, "col2im") && p.path != "direct", col2im, "col2im")
				own, grid, split := false, false, false
				for _, k := range kernels {
					o, g := ops.ConvTapMajor(k)
					own, grid, split = own || o, grid || g, split || ops.ConvPhaseSplitK(k)
				}
				wantOwn := !strings.Contains(tune, "phasetaps=0") && (p.path == "tiled" || (p.path == "coopmat-emulated" && tune == "tapsplit=1"))
				switch {
				case !wantOwn:
					assert.False(t, own, "phases over their own taps")
				case p.path == "tiled":
					assert.True(t, own && !grid, "phases over their own taps only (own %v, grid %v)", own, grid)
				default: // the 1x1 stride-2 layers' one tap does not split
					assert.True(t, own, "phases over their own taps")
				}
				wantSplit := p.path != "direct" && (tune == "splits=3" || (strings.Contains(tune, "tapsplit=1") && !strings.Contains(tune, "phasetaps=0")))
				if !strings.Contains(tune, "col2im") { // its grouped layer's phases split by default
					assert.Equal(t, wantSplit, split, "phases split K")
				}
			})
		}
	}
}

// By default a strided data gradient of 128 input channels (a columns
// GEMM of 1152 rows) runs as the columns GEMM and col2im, and matches the
// reference as the phases (col2im=0) do, in float32 and float16; one too
// small for tiles keeps its phases under col2im=1.
func TestConvolutionCol2imDefault(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	c := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 128, OutputFeatureChannels: 12,
		StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}, n: 2, h: 9, w: 10,
		pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}
	for _, f16 := range []bool{false, true} {
		if f16 && !dev.Limits().Float16Storage {
			continue
		}
		for _, tune := range []ops.ConvolutionTuning{{}, {NoCol2im: true}} {
			var kernels []any
			force := func(k any) {
				require.NoError(t, k.(interface {
					SetTuning(ops.ConvolutionTuning) error
				}).SetTuning(tune))
				kernels = append(kernels, k)
			}
			convRunCase(t, dev, c, rand.New(rand.NewSource(21)), f16, force)
			col2im := false
			for _, k := range kernels {
				col2im = col2im || ops.ConvCol2im(k)
			}
			assert.Equal(t, !tune.NoCol2im, col2im, "float16 %v, %q: col2im", f16, tune.String())
		}
	}
	// col2im=1 on a gradient too small for tiles keeps its phases.
	small := c
	small.d.InputFeatureChannels, small.d.OutputFeatureChannels, small.n, small.h, small.w = 4, 5, 1, 5, 5
	var kernels []any
	convRunCase(t, dev, small, rand.New(rand.NewSource(22)), false, func(k any) {
		require.NoError(t, k.(interface {
			SetTuning(ops.ConvolutionTuning) error
		}).SetTuning(ops.ConvolutionTuning{Col2im: true, NoSmallChannels: true}))
		kernels = append(kernels, k)
	})
	for _, k := range kernels {
		assert.False(t, ops.ConvCol2im(k), "col2im on a direct GEMM")
	}
}

// Convolutions under im2col=1 run as an explicit im2col and a GEMM over
// its columns and match the reference as the implicit GEMM does
// (im2col=0), in float32 and float16, on the tiles and on the emulated
// cooperative matrices: a stem-like 7x7 stride-2 window over 3 channels
// (K = 147, the columns padded to 148) with asymmetric pads, a dilated
// one over channels whose K is a multiple of 4, and a batch split into
// parts of one image (the columns' scratch bounded); a direct path
// forced keeps the implicit GEMM.
func TestConvolutionIm2col(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	desc := func(k, c, o, s, d int) ops.ConvolutionDescriptor {
		return ops.ConvolutionDescriptor{KernelWidth: k, KernelHeight: k, InputFeatureChannels: c, OutputFeatureChannels: o,
			StrideX: s, StrideY: s, DilationX: d, DilationY: d}
	}
	cases := []convCase{
		{d: desc(7, 3, 16, 2, 1), n: 2, h: 19, w: 22, pads: padding.Pads{Top: 3, Left: 2, Bottom: 3, Right: 4}, bias: true},
		{d: desc(3, 4, 12, 1, 2), n: 3, h: 9, w: 11, pads: padding.Pads{Top: 2, Left: 2, Bottom: 1, Right: 2}},
	}
	for _, path := range []string{"tiled", "coopmat-emulated"} {
		for _, f16 := range []bool{false, true} {
			if f16 && !dev.Limits().Float16Storage || !f16 && path != "tiled" {
				continue
			}
			for _, text := range []string{"im2col=1", "im2col=0"} {
				tu, err := ops.ParseConvolutionTuning(text)
				require.NoError(t, err)
				for i, c := range cases {
					t.Run(fmt.Sprintf("%s/float16=%v/%s/%d", path, f16, text, i), func(t *testing.T) {
						if i == 1 {
							defer ops.SetIm2colScratchMax(ops.SetIm2colScratchMax(1))
						}
						var fwd any
						convRunCase(t, dev, c, rand.New(rand.NewSource(int64(31+i))), f16, func(k any) {
							require.NoError(t, k.(interface {
								SetTuning(ops.ConvolutionTuning) error
							}).SetTuning(tu))
							tile := 1
							if path != "tiled" {
								tile = 2
							}
							if !ops.ConvForcePath(k, path, tile) {
								t.Skipf("no %s tile %d here", path, tile)
							}
							if _, ok := k.(*ops.Convolution); ok {
								fwd = k
							}
						})
						assert.Equal(t, tu.Im2col, ops.ConvIm2col(fwd))
					})
				}
			}
		}
	}
	var fwd any
	convRunCase(t, dev, cases[0], rand.New(rand.NewSource(33)), false, func(k any) {
		require.NoError(t, k.(interface {
			SetTuning(ops.ConvolutionTuning) error
		}).SetTuning(ops.ConvolutionTuning{Im2col: true}))
		require.True(t, ops.ConvForcePath(k, "direct", 0))
		if _, ok := k.(*ops.Convolution); ok {
			fwd = k
		}
	})
	assert.False(t, ops.ConvIm2col(fwd), "im2col on a forced direct path")
}

// A forward from windows of several taps over a depth of 1024 or more
// whose tiles would leave multiprocessors without two workgroups splits
// its K in two on the tiles by default (tiledImageSplits), in float32 and
// float16 (on a device without cooperative matrices), and matches the
// reference; a shallower one (576), or a tuning's split count, keeps the
// model's choice.
func TestConvolutionTiledSplitDefault(t *testing.T) {
	dev := vktest.Open(t)
	deep := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 128, OutputFeatureChannels: 9,
		StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}, n: 2, h: 7, w: 8,
		pads: padding.Pads{Top: 1, Left: 0, Bottom: 1, Right: 1}, bias: true}
	shallow := deep
	shallow.d.InputFeatureChannels = 64
	for _, c := range []struct {
		name string
		cc   convCase
		tune ops.ConvolutionTuning
		want bool
	}{{"deep", deep, ops.ConvolutionTuning{}, true}, {"shallow", shallow, ops.ConvolutionTuning{}, false},
		{"deep splits=1", deep, ops.ConvolutionTuning{Splits: 1}, false}} {
		for _, f16 := range []bool{false, true} {
			if f16 && (!dev.Limits().Float16Storage || len(dev.Limits().CooperativeMatrixNV) > 0 || len(dev.Limits().CooperativeMatrixKHR) > 0) {
				continue
			}
			var fwd *ops.Convolution
			convRunCase(t, dev, c.cc, rand.New(rand.NewSource(31)), f16, func(k any) {
				require.NoError(t, k.(interface {
					SetTuning(ops.ConvolutionTuning) error
				}).SetTuning(c.tune))
				if f, ok := k.(*ops.Convolution); ok {
					fwd = f
				}
			})
			require.NotNil(t, fwd)
			assert.Equal(t, c.want, ops.ConvTiledSplitK(fwd), "%s, float16 %v: the forward's K split on the tiles", c.name, f16)
		}
	}
}

// Weight gradients of few values split many ways add their splits with
// several invocations an output (convolution_reduce.comp's lanes) and
// match the reference: an RGB stem's weights and bias (8 x 147 and 8
// values in 64 splits), a Winograd weight gradient of 8 channels each
// way whose 36 x 8 x 8 products' sums split, and a depthwise weight
// gradient, the three under splits=64 (at most their depths allow).
func TestConvolutionReduceLanes(t *testing.T) {
	dev := vktest.Open(t)
	tune := func(tu ops.ConvolutionTuning) func(k any) {
		return func(k any) {
			require.NoError(t, k.(interface {
				SetTuning(ops.ConvolutionTuning) error
			}).SetTuning(tu))
		}
	}
	stem := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 7, KernelHeight: 7, InputFeatureChannels: 3, OutputFeatureChannels: 8, Groups: 1,
		StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}, n: 4, h: 40, w: 36, pads: padding.Pads{Top: 3, Left: 3, Bottom: 3, Right: 3}, bias: true}
	require.Greater(t, ops.ConvReduceLanes(dev, 64, 8*147), 1, "lanes of the stem's weight gradient")
	convRunCase(t, dev, stem, rand.New(rand.NewSource(21)), false, tune(ops.ConvolutionTuning{Splits: 64}))

	wino := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 8, OutputFeatureChannels: 8, Groups: 1,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}, n: 4, h: 24, w: 24, pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}}
	var g any
	convRunCase(t, dev, wino, rand.New(rand.NewSource(22)), false, func(k any) {
		tune(ops.ConvolutionTuning{Splits: 64, Winograd: true})(k)
		if _, ok := k.(*ops.ConvolutionGradient); ok {
			g = k
		}
	})
	parts, splits := ops.ConvLastWinogradWeights(g)
	require.Greater(t, ops.ConvReduceLanes(dev, parts*splits, 36*8*8), 1, "lanes of the Winograd weight gradient (%d parts, %d splits)", parts, splits)

	convRunCase(t, dev, convCase{d: depthwiseDesc(3, 8, 8, 1, 1, 1, 1), n: 4, h: 30, w: 30,
		pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}, rand.New(rand.NewSource(23)), false, tune(ops.ConvolutionTuning{Splits: 64}))
}

// The bias gradient (here the Winograd weight gradient's separate pass)
// adds aligned quads where dy's planes are whole rows of a multiple of 4
// pixels, values otherwise, stepping each invocation's position through
// the batch images without divisions: planes smaller and larger than a
// workgroup, several batch images per invocation, and batches split over
// workgroups (8 images of 16x16: 2 splits), against the reference.
func TestConvolutionBiasGradientQuads(t *testing.T) {
	dev := vktest.Open(t)
	tu, err := ops.ParseConvolutionTuning("winograd=1")
	require.NoError(t, err)
	for _, c := range []struct {
		n, h, w int
		want    string
	}{{3, 8, 8, "quads"}, {2, 7, 5, "values"}, {8, 16, 16, "quads"}, {3, 17, 19, "values"}} {
		cc := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 5, OutputFeatureChannels: 6,
			StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}, n: c.n, h: c.h, w: c.w,
			pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true,
			// Float16 Winograd products run on tensor cores where the
			// device has them, which round more than the float32 tiles.
			slack: winogradCoopSlack}
		for _, half := range []bool{false, true} {
			t.Run(fmt.Sprintf("%dx%dx%d half %v", c.n, c.h, c.w, half), func(t *testing.T) {
				var grad any
				convRunCase(t, dev, cc, rand.New(rand.NewSource(41)), half, func(k any) {
					require.NoError(t, k.(interface {
						SetTuning(ops.ConvolutionTuning) error
					}).SetTuning(tu))
					if _, ok := k.(*ops.ConvolutionGradient); ok {
						grad = k
					}
				})
				assert.Equal(t, c.want, ops.ConvLastBias(grad))
			})
		}
	}
}

// col2im (col2im=1 forced) over the geometries its cells must handle:
// strides 2 and 3 (and 3 x 2), kernels smaller than, equal to and larger
// than the stride, dilation, asymmetric and negative-going pads (first
// taps before the image), odd sizes and dx regions whose first pixel's
// cell starts before the image; float32 and float16, against the
// reference.
func TestConvolutionCol2imGeometries(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	tu := ops.ConvolutionTuning{Col2im: true, NoSmallChannels: true}
	for i, c := range []convCase{
		{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2}, n: 2, h: 9, w: 11,
			pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}},
		{d: ops.ConvolutionDescriptor{KernelWidth: 2, KernelHeight: 2, StrideX: 3, StrideY: 3}, n: 2, h: 19, w: 22,
			pads: padding.Pads{Top: 0, Left: 2, Bottom: 1, Right: 0}},
		{d: ops.ConvolutionDescriptor{KernelWidth: 5, KernelHeight: 3, StrideX: 3, StrideY: 2}, n: 2, h: 12, w: 14,
			pads: padding.Pads{Top: 2, Left: 1, Bottom: 0, Right: 3}},
		{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 2, DilationY: 2}, n: 1, h: 13, w: 12,
			pads: padding.Pads{Top: 2, Left: 2, Bottom: 2, Right: 1}},
		{d: ops.ConvolutionDescriptor{KernelWidth: 7, KernelHeight: 7, StrideX: 2, StrideY: 2}, n: 1, h: 15, w: 16,
			pads: padding.Pads{Top: 3, Left: 3, Bottom: 3, Right: 3}},
	} {
		// Enough multiply-adds for the tiles (a direct GEMM sums dx itself).
		c.d.InputFeatureChannels, c.d.OutputFeatureChannels, c.bias = 12, 32, true
		if c.d.DilationX == 0 {
			c.d.DilationX, c.d.DilationY = 1, 1
		}
		for _, f16 := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d %v half %v", i, c, f16), func(t *testing.T) {
				var kernels []any
				convRunCase(t, dev, c, rand.New(rand.NewSource(int64(31+i))), f16, func(k any) {
					require.NoError(t, k.(interface {
						SetTuning(ops.ConvolutionTuning) error
					}).SetTuning(tu))
					kernels = append(kernels, k)
				})
				col2im := false
				for _, k := range kernels {
					col2im = col2im || ops.ConvCol2im(k)
				}
				assert.True(t, col2im, "col2im ran")
			})
		}
	}
}
