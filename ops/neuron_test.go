package ops_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Neurons, softmax and arithmetic against ops/ref, which computes in
// float64 from the same inputs (for float16 images: the half-rounded
// inputs). Tolerances, with want the reference value:
//
//   - float32 element-wise results (neurons and their gradients,
//     arithmetic): |got - want| <= neuronTol * max(1, |want|). The GPU
//     computes in float32 with the device's exp, log, tanh and pow, whose
//     errors (a few ulp, more for pow of large results) stay well inside
//     neuronTol = 2e-5.
//   - float16 results add one half ulp of want's magnitude (ulp16): the
//     float32 result is rounded to half once, when stored.
//   - sums over many values (PReLU slopes, broadcast arithmetic
//     gradients, softmax's sums): |got - want| <= neuronTol * max(1,
//     |want|) + 2^-22 * sum of the |terms| (float32 accumulation of up to
//     a few thousand terms in any fixed order).
const neuronTol = 2e-5

// neuronImage makes an image of format f holding data (rounded to half
// for float16; nil leaves it undefined).
func neuronImage(t testing.TB, dev *vk.Device, d padding.Descriptor, data []float32, f ops.Format) *ops.Image {
	t.Helper()
	if f == ops.Float16 {
		return newHalfImage(t, dev, d, data)
	}
	return newImage(t, dev, d, data)
}

// neuronFormats returns float32, and float16 where the device has it.
func neuronFormats(dev *vk.Device) []ops.Format {
	if dev.Limits().Float16Storage {
		return []ops.Format{ops.Float32, ops.Float16}
	}
	return []ops.Format{ops.Float32}
}

// neuronInput returns data as image format f holds it.
func neuronInput(data []float32, f ops.Format) []float32 {
	if f == ops.Float16 {
		return toHalf(data)
	}
	return append([]float32(nil), data...)
}

// neuronCompare checks got against want with the tolerance above; extra,
// when not nil, adds a per-value allowance (sums). NaN must meet NaN.
func neuronCompare(got []float32, want []float64, f ops.Format, extra func(i int) float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("got %d values, want %d", len(got), len(want))
	}
	bad, first := 0, -1
	for i := range got {
		g, w := float64(got[i]), want[i]
		if math.IsNaN(g) || math.IsNaN(w) {
			if math.IsNaN(g) != math.IsNaN(w) {
				if bad == 0 {
					first = i
				}
				bad++
			}
			continue
		}
		if g == w {
			continue
		}
		tol := neuronTol * math.Max(1, math.Abs(w))
		if f == ops.Float16 {
			tol += ulp16(w)
		}
		if extra != nil {
			tol += extra(i)
		}
		if math.IsInf(w, 0) || !(math.Abs(g-w) <= tol) {
			if bad == 0 {
				first = i
			}
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d values differ; first at %d: got %v, want %v", bad, len(got), first, got[first], want[first])
}

// neuronRef converts a descriptor to the reference's neuron.
func neuronRef(d ops.NeuronDescriptor) ref.Neuron {
	n := ref.Neuron{Type: ref.NeuronType(d.Type), A: float64(d.A), B: float64(d.B), C: float64(d.C)}
	for _, s := range d.PReLU {
		n.PReLU = append(n.PReLU, float64(s))
	}
	return n
}

// neuronCases are every neuron type with parameters other than the
// defaults (and a few defaults), as ref's tests use.
func neuronCases(channels int) []ops.NeuronDescriptor {
	slopes := make([]float32, channels)
	for c := range slopes {
		slopes[c] = 0.1 + 0.3*float32(c%5) - 0.5*float32(c%2)
	}
	return []ops.NeuronDescriptor{
		{Type: ops.NeuronNone},
		ops.NewNeuronDescriptor(ops.NeuronReLU),
		{Type: ops.NeuronReLU, A: 0.1},
		{Type: ops.NeuronLinear, A: -1.5, B: 0.25},
		{Type: ops.NeuronSigmoid},
		{Type: ops.NeuronHardSigmoid, A: 0.3, B: 0.4},
		{Type: ops.NeuronTanH, A: 1.7, B: 0.6},
		{Type: ops.NeuronAbsolute},
		{Type: ops.NeuronSoftPlus, A: 0.8, B: 1.3},
		{Type: ops.NeuronSoftSign},
		{Type: ops.NeuronELU, A: 0.7},
		{Type: ops.NeuronPReLU, PReLU: slopes},
		ops.NewNeuronDescriptor(ops.NeuronReLUN),
		{Type: ops.NeuronReLUN, A: 0.05, B: 1.5},
		{Type: ops.NeuronPower, A: 0.5, B: 3, C: 2.5},
		{Type: ops.NeuronPower, A: 1, B: 0, C: 3},
		{Type: ops.NeuronExponential, A: 0.5, B: 0.1, C: -1},
		{Type: ops.NeuronExponential, A: 1, B: 0, C: 2},
		{Type: ops.NeuronLogarithm, A: 2, B: 5, C: -1},
		{Type: ops.NeuronLogarithm, A: 1, B: 4, C: 10},
		{Type: ops.NeuronGeLU},
	}
}

// neuronData returns n inputs for d: normal values, kept inside the
// domain of the power (a fractional exponent) and the logarithm, whose
// results outside it are NaN in the reference but undefined in GLSL.
func neuronData(r *rand.Rand, d ops.NeuronDescriptor, n int) []float32 {
	v := randomData(r, n)
	if d.Type == ops.NeuronLogarithm || (d.Type == ops.NeuronPower && d.C != float32(math.Trunc(float64(d.C)))) {
		for i := range v {
			v[i] = float32(math.Abs(float64(v[i])))
		}
	}
	return v
}

// neuronShapes are odd shapes: a single value, channel counts that are
// not multiples of 4, planes of odd size, lengths not multiples of 4.
var neuronShapes = []padding.Descriptor{{N: 1, C: 1, H: 1, W: 1}, {N: 2, C: 3, H: 5, W: 7}, {N: 3, C: 5, H: 4, W: 4}, {N: 1, C: 13, H: 9, W: 11}}

// neuronForwardBackward runs the forward and gradient of d on the GPU and
// returns y and dx.
func neuronForwardBackward(t *testing.T, dev *vk.Device, d ops.NeuronDescriptor, src, dy *ops.Image, slopes *ops.Image) (y, dx []float32) {
	t.Helper()
	ctx := context.Background()
	k, err := ops.NewNeuron(dev, d)
	require.NoError(t, err)
	t.Cleanup(func() { k.Close() })
	g, err := ops.NewNeuronGradient(dev, d)
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	k.Slopes, g.Slopes = slopes, slopes
	sd := src.Descriptor()
	shape := padding.Descriptor{N: sd.N, C: sd.C, H: sd.H, W: sd.W}
	dst := neuronImage(t, dev, shape, filled(src.Len(), poisonValue), sd.Format)
	dxIm := neuronImage(t, dev, shape, filled(src.Len(), poisonValue), sd.Format)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if err := k.Encode(cb, src, dst); err != nil {
			return err
		}
		return g.Encode(cb, dy, src, dxIm)
	}))
	y, err = dst.Read(ctx)
	require.NoError(t, err)
	dx, err = dxIm.Read(ctx)
	require.NoError(t, err)
	return y, dx
}

// TestNeuronMatchesReference runs every neuron type, forward and
// gradient, float32 and float16, over odd shapes.
func TestNeuronMatchesReference(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(11))
	for _, f := range neuronFormats(dev) {
		for _, sh := range neuronShapes {
			for _, d := range neuronCases(sh.C) {
				name := fmt.Sprintf("%v/%v/%v", f, sh, d)
				n := sh.N * sh.C * sh.H * sh.W
				xv := neuronInput(neuronData(r, d, n), f)
				gv := neuronInput(randomData(r, n), f)
				src := neuronImage(t, dev, sh, xv, f)
				dy := neuronImage(t, dev, sh, gv, f)
				y, dx := neuronForwardBackward(t, dev, d, src, dy, nil)
				xt, _ := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, xv)
				gt, _ := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, gv)
				wantY, err := ref.NeuronForward(neuronRef(d), xt)
				require.NoError(t, err)
				wantDx, err := ref.NeuronGradient(neuronRef(d), gt, xt)
				require.NoError(t, err)
				require.NoError(t, neuronCompare(y, wantY, f, nil), "%s forward", name)
				require.NoError(t, neuronCompare(dx, wantDx, f, nil), "%s gradient", name)
			}
		}
	}
}

// TestNeuronPReLUSlopes runs PReLU with slopes from an image (as an
// optimizer trains them) and checks the slope gradient against the
// reference, its repeatability, and that it splits over several slices
// and batch groups.
func TestNeuronPReLUSlopes(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewSource(12))
	plain := vktest.Open(t)
	capped := vktest.Open(t, vk.Options{MaxStorageBufferRange: 64 << 10})
	for _, dev := range []*vk.Device{plain, capped} {
		for _, f := range neuronFormats(dev) {
			// 3 batch images of 5 channels of 50x40: several slices per
			// channel, and under the cap several batch groups; the 1-batch
			// image of 9 channels of 64x64 splits into channel groups there.
			for _, sh := range []padding.Descriptor{{N: 3, C: 5, H: 50, W: 40}, {N: 1, C: 9, H: 64, W: 64}, {N: 2, C: 3, H: 3, W: 5}} {
				name := fmt.Sprintf("%s/%v/%v", dev.Info().Name, f, sh)
				n := sh.N * sh.C * sh.H * sh.W
				xv, gv := neuronInput(randomData(r, n), f), neuronInput(randomData(r, n), f)
				sv := randomData(r, sh.C)
				src, dy := neuronImage(t, dev, sh, xv, f), neuronImage(t, dev, sh, gv, f)
				slopes := newImage(t, dev, padding.Descriptor{N: 1, C: sh.C, H: 1, W: 1}, sv)
				d := ops.NeuronDescriptor{Type: ops.NeuronPReLU}
				y, dx := neuronForwardBackward(t, dev, d, src, dy, slopes)
				d.PReLU = sv
				xt, _ := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, xv)
				gt, _ := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, gv)
				wantY, _ := ref.NeuronForward(neuronRef(d), xt)
				wantDx, _ := ref.NeuronGradient(neuronRef(d), gt, xt)
				require.NoError(t, neuronCompare(y, wantY, f, nil), "%s forward", name)
				require.NoError(t, neuronCompare(dx, wantDx, f, nil), "%s gradient", name)

				g, err := ops.NewNeuronGradient(dev, ops.NeuronDescriptor{Type: ops.NeuronPReLU})
				require.NoError(t, err)
				t.Cleanup(func() { g.Close() })
				ds := newImage(t, dev, padding.Descriptor{N: 1, C: sh.C, H: 1, W: 1}, filled(sh.C, poisonValue))
				require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return g.EncodeSlopeGradient(cb, dy, src, ds) }), name)
				got, err := ds.Read(ctx)
				require.NoError(t, err)
				want, _ := ref.PReLUSlopeGradient(gt, xt)
				mag := make([]float64, sh.C)
				plane := sh.H * sh.W
				for i := range xv {
					mag[i/plane%sh.C] += math.Abs(float64(gv[i]) * math.Min(float64(xv[i]), 0))
				}
				require.NoError(t, neuronCompare(got, want, ops.Float32, func(i int) float64 { return 0x1p-22 * mag[i] }), "%s slope gradient", name)
				require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return g.EncodeSlopeGradient(cb, dy, src, ds) }))
				again, err := ds.Read(ctx)
				require.NoError(t, err)
				require.True(t, sameBits(got, again), "%s: slope gradient not repeatable", name)
			}
		}
	}
}

// TestNeuronViewsAndSplits: channel views (one run per batch image, and
// bases off the 4-value boundary, so value by value) and, under a small
// storage-buffer range, images split into batch groups and channel groups
// (PReLU then finds each value's channel from the run's first).
func TestNeuronViewsAndSplits(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	ctx := context.Background()
	capped := vktest.Open(t, vk.Options{MaxStorageBufferRange: 64 << 10})
	for _, f := range neuronFormats(capped) {
		for _, c := range []struct {
			whole     padding.Descriptor
			off, size int
		}{
			{padding.Descriptor{N: 3, C: 7, H: 5, W: 7}, 1, 3},   // views, unaligned
			{padding.Descriptor{N: 5, C: 3, H: 40, W: 40}, 0, 3}, // batch groups
			{padding.Descriptor{N: 1, C: 9, H: 64, W: 64}, 0, 9}, // channel groups
			{padding.Descriptor{N: 2, C: 9, H: 64, W: 64}, 2, 5}, // views in channel groups
		} {
			whole := neuronImage(t, capped, c.whole, neuronInput(randomData(r, c.whole.N*c.whole.C*c.whole.H*c.whole.W), f), f)
			src := must(whole.ChannelView(c.off, c.size))
			sh := padding.Descriptor{N: c.whole.N, C: c.size, H: c.whole.H, W: c.whole.W}
			xv, err := src.Read(ctx)
			require.NoError(t, err)
			gv := neuronInput(randomData(r, len(xv)), f)
			dy := neuronImage(t, capped, sh, gv, f)
			for _, d := range []ops.NeuronDescriptor{{Type: ops.NeuronTanH, A: 1.5, B: 0.5}, neuronCases(c.size)[11]} {
				name := fmt.Sprintf("%v/%v[%d:%d]/%v", f, c.whole, c.off, c.off+c.size, d)
				y, dx := neuronForwardBackward(t, capped, d, src, dy, nil)
				xt, _ := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, xv)
				gt, _ := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, gv)
				wantY, _ := ref.NeuronForward(neuronRef(d), xt)
				wantDx, _ := ref.NeuronGradient(neuronRef(d), gt, xt)
				require.NoError(t, neuronCompare(y, wantY, f, nil), "%s forward", name)
				require.NoError(t, neuronCompare(dx, wantDx, f, nil), "%s gradient", name)
			}
		}
	}
}

// TestNeuronGradientSum runs EncodeSum, the gradient of the sum of two
// contributions to the neuron's result, for every neuron type, float32
// and float16, over odd shapes (quads and single values), against the
// reference's gradient of dy + dy2 (added in float32, as the kernel
// adds them, without rounding the sum to the images' format), and checks
// that Encode of the same kernel, recorded first, still reads one
// gradient.
func TestNeuronGradientSum(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(12))
	for _, f := range neuronFormats(dev) {
		for _, sh := range neuronShapes {
			for _, d := range neuronCases(sh.C) {
				name := fmt.Sprintf("%v/%v/%v", f, sh, d)
				n := sh.N * sh.C * sh.H * sh.W
				xv := neuronInput(neuronData(r, d, n), f)
				gv := neuronInput(randomData(r, n), f)
				g2v := neuronInput(randomData(r, n), f)
				src := neuronImage(t, dev, sh, xv, f)
				dy := neuronImage(t, dev, sh, gv, f)
				dy2 := neuronImage(t, dev, sh, g2v, f)
				one := neuronImage(t, dev, sh, filled(n, poisonValue), f)
				both := neuronImage(t, dev, sh, filled(n, poisonValue), f)
				g, err := ops.NewNeuronGradient(dev, d)
				require.NoError(t, err)
				require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
					if err := g.Encode(cb, dy, src, one); err != nil {
						return err
					}
					return g.EncodeSum(cb, dy, dy2, src, both)
				}))
				require.NoError(t, g.Close())
				xt, _ := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, xv)
				gt, _ := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, gv)
				sum := make([]float32, n)
				for i := range sum {
					sum[i] = gv[i] + g2v[i]
				}
				st, _ := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, sum)
				wantOne, err := ref.NeuronGradient(neuronRef(d), gt, xt)
				require.NoError(t, err)
				wantBoth, err := ref.NeuronGradient(neuronRef(d), st, xt)
				require.NoError(t, err)
				gotOne, err := one.Read(ctx)
				require.NoError(t, err)
				gotBoth, err := both.Read(ctx)
				require.NoError(t, err)
				require.NoError(t, neuronCompare(gotOne, wantOne, f, nil), "%s one gradient", name)
				require.NoError(t, neuronCompare(gotBoth, wantBoth, f, nil), "%s two gradients", name)
			}
		}
	}
}
