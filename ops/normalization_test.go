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

// Cross-channel, spatial and local-contrast normalization on the GPU
// against ops/ref on the same inputs. Tolerance of y and dx:
// |got - want| <= normTol * max(1, |want|) for float32 (pow in float32
// and window sums of up to 81 terms), plus ulp16(want) for float16.
const normTol = 2e-4

// normKernels are a window normalization's forward and gradient encodes
// and its reference.
type normKernels struct {
	name    string
	fwd     func(cb *vk.CommandBuffer, src, dst *ops.Image) error
	grad    func(cb *vk.CommandBuffer, dy, src, dx *ops.Image) error
	refFwd  func(x ref.Tensor[float64], y *ref.Tensor[float64]) error
	refGrad func(x, dy ref.Tensor[float64], dx *ref.Tensor[float64]) error
}

func normCheck(t *testing.T, dev *vk.Device, r *rand.Rand, k normKernels, d padding.Descriptor, f ops.Format, scale, shift float32) {
	t.Helper()
	cnt := d.N * d.C * d.H * d.W
	xv, dyv := randomData(r, cnt), randomData(r, cnt)
	for i := range xv {
		xv[i] = xv[i]*scale + shift
	}
	if f == ops.Float16 {
		xv, dyv = toHalf(xv), toHalf(dyv)
	}
	x, dy := bnImage(t, dev, f, d, xv), bnImage(t, dev, f, d, dyv)
	y, dx := bnImage(t, dev, f, d, nil), bnImage(t, dev, f, d, nil)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if err := k.fwd(cb, x, y); err != nil {
			return err
		}
		return k.grad(cb, dy, x, dx)
	}), k.name)
	xt := must(ref.TensorOf(d.N, d.C, d.H, d.W, bnF64(xv)))
	dyt := must(ref.TensorOf(d.N, d.C, d.H, d.W, bnF64(dyv)))
	wy, wdx := ref.NewTensor[float64](d.N, d.C, d.H, d.W), ref.NewTensor[float64](d.N, d.C, d.H, d.W)
	require.NoError(t, k.refFwd(xt, &wy))
	require.NoError(t, k.refGrad(xt, dyt, &wdx))
	tol := func(want []float64) func(int) float64 {
		return func(i int) float64 {
			e := normTol * math.Max(1, math.Abs(want[i]))
			if f == ops.Float16 {
				e += ulp16(want[i])
			}
			return e
		}
	}
	what := fmt.Sprintf("%s %v %v", k.name, d, f)
	require.NoError(t, bnCompare("y", bnRead(t, y), wy.Data, tol(wy.Data)), what)
	require.NoError(t, bnCompare("dx", bnRead(t, dx), wdx.Data, tol(wdx.Data)), what)
}

func crossChannelKernels(t *testing.T, dev *vk.Device, d ops.CrossChannelNormalizationDescriptor) normKernels {
	f := must(ops.NewCrossChannelNormalization(dev, d))
	g := must(ops.NewCrossChannelNormalizationGradient(dev, d))
	t.Cleanup(func() { f.Close(); g.Close() })
	l := ref.CrossChannelNorm{Size: d.KernelSize, Alpha: float64(d.Alpha), Beta: float64(d.Beta), Delta: float64(d.Delta)}
	return normKernels{fmt.Sprintf("cross-channel %+v", d), f.Encode, g.Encode, l.Forward, l.Gradient}
}

func spatialKernels(t *testing.T, dev *vk.Device, d ops.SpatialNormalizationDescriptor) normKernels {
	f := must(ops.NewSpatialNormalization(dev, d))
	g := must(ops.NewSpatialNormalizationGradient(dev, d))
	t.Cleanup(func() { f.Close(); g.Close() })
	s := ref.SpatialNorm{KernelW: d.KernelWidth, KernelH: d.KernelHeight, Alpha: float64(d.Alpha), Beta: float64(d.Beta), Delta: float64(d.Delta)}
	return normKernels{fmt.Sprintf("spatial %+v", d), f.Encode, g.Encode, s.Forward, s.Gradient}
}

func localContrastKernels(t *testing.T, dev *vk.Device, d ops.LocalContrastNormalizationDescriptor) normKernels {
	f := must(ops.NewLocalContrastNormalization(dev, d))
	g := must(ops.NewLocalContrastNormalizationGradient(dev, d))
	t.Cleanup(func() { f.Close(); g.Close() })
	l := ref.LocalContrastNorm{KernelW: d.KernelWidth, KernelH: d.KernelHeight, Alpha: float64(d.Alpha), Beta: float64(d.Beta),
		Delta: float64(d.Delta), P0: float64(d.P0), PM: float64(d.PM), PS: float64(d.PS)}
	return normKernels{fmt.Sprintf("local-contrast %+v", d), f.Encode, g.Encode, l.Forward, l.Gradient}
}

// normFormats are float32 and, where the device has it, float16.
func normFormats(dev *vk.Device) []ops.Format {
	if dev.Limits().Float16Storage {
		return []ops.Format{ops.Float32, ops.Float16}
	}
	return []ops.Format{ops.Float32}
}

func TestCrossChannelNormalizationMatchesReference(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(21))
	for i, c := range []struct {
		d     ops.CrossChannelNormalizationDescriptor
		shape padding.Descriptor
		scale float32
	}{
		{ops.NewCrossChannelNormalizationDescriptor(5), padding.Descriptor{N: 2, C: 7, H: 5, W: 6}, 1},
		{ops.CrossChannelNormalizationDescriptor{KernelSize: 3, Alpha: 0.5, Beta: 0.75, Delta: 1}, padding.Descriptor{N: 1, C: 5, H: 3, W: 9}, 2},
		{ops.CrossChannelNormalizationDescriptor{KernelSize: 4, Alpha: 2, Beta: 1.5, Delta: 0.5}, padding.Descriptor{N: 3, C: 9, H: 4, W: 4}, 1},
		{ops.CrossChannelNormalizationDescriptor{KernelSize: 1, Alpha: 1, Beta: 0.5, Delta: 2}, padding.Descriptor{N: 2, C: 3, H: 1, W: 1}, 1},
		{ops.CrossChannelNormalizationDescriptor{KernelSize: 9, Alpha: 0.3, Beta: 0.6, Delta: 1}, padding.Descriptor{N: 5, C: 6, H: 7, W: 3}, 1},
		{ops.CrossChannelNormalizationDescriptor{KernelSize: 2, Alpha: 1e-3, Beta: 0.75, Delta: 1}, padding.Descriptor{N: 1, C: 16, H: 8, W: 8}, 10},
	} {
		k := crossChannelKernels(t, dev, c.d)
		for _, f := range normFormats(dev) {
			if f == ops.Float16 && i%2 == 1 {
				continue
			}
			normCheck(t, dev, r, k, c.shape, f, c.scale, 0)
		}
	}
}

func TestSpatialNormalizationMatchesReference(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(22))
	for i, c := range []struct {
		d     ops.SpatialNormalizationDescriptor
		shape padding.Descriptor
	}{
		{ops.NewSpatialNormalizationDescriptor(3, 3), padding.Descriptor{N: 2, C: 3, H: 7, W: 9}},
		{ops.SpatialNormalizationDescriptor{KernelWidth: 2, KernelHeight: 4, Alpha: 0.7, Beta: 0.75, Delta: 1.5}, padding.Descriptor{N: 1, C: 5, H: 6, W: 5}},
		{ops.SpatialNormalizationDescriptor{KernelWidth: 1, KernelHeight: 1, Alpha: 1, Beta: 0.5, Delta: 1}, padding.Descriptor{N: 3, C: 2, H: 4, W: 4}},
		{ops.SpatialNormalizationDescriptor{KernelWidth: 5, KernelHeight: 2, Alpha: 2, Beta: 1, Delta: 0.3}, padding.Descriptor{N: 2, C: 4, H: 3, W: 11}},
		{ops.SpatialNormalizationDescriptor{KernelWidth: 9, KernelHeight: 9, Alpha: 0.5, Beta: 0.75, Delta: 1}, padding.Descriptor{N: 1, C: 1, H: 13, W: 70}},
	} {
		k := spatialKernels(t, dev, c.d)
		for _, f := range normFormats(dev) {
			if f == ops.Float16 && i%2 == 1 {
				continue
			}
			normCheck(t, dev, r, k, c.shape, f, 1, 0)
		}
	}
}

func TestLocalContrastNormalizationMatchesReference(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(23))
	for i, c := range []struct {
		d            ops.LocalContrastNormalizationDescriptor
		shape        padding.Descriptor
		scale, shift float32
	}{
		{ops.NewLocalContrastNormalizationDescriptor(3, 3), padding.Descriptor{N: 2, C: 3, H: 7, W: 9}, 1, 0.3},
		{ops.LocalContrastNormalizationDescriptor{KernelWidth: 2, KernelHeight: 3, Alpha: 0.5, Beta: 0.75, Delta: 0.5, P0: 0.7, PM: 0.2, PS: 1.3},
			padding.Descriptor{N: 1, C: 5, H: 6, W: 5}, 1, 0},
		{ops.LocalContrastNormalizationDescriptor{KernelWidth: 4, KernelHeight: 1, Alpha: 0, Beta: 0.5, Delta: 1, P0: 1, PS: 1},
			padding.Descriptor{N: 3, C: 2, H: 4, W: 7}, 1, 0},
		{ops.LocalContrastNormalizationDescriptor{KernelWidth: 5, KernelHeight: 5, Alpha: 2, Beta: 1, Delta: 0.25, P0: 1, PM: -1, PS: 0.5},
			padding.Descriptor{N: 2, C: 3, H: 9, W: 8}, 2, 0},
		{ops.LocalContrastNormalizationDescriptor{KernelWidth: 3, KernelHeight: 3, Alpha: 1, Beta: 0.5, Delta: 1, P0: 1, PS: 1},
			padding.Descriptor{N: 1, C: 2, H: 10, W: 10}, 0.5, 100},
		{ops.NewLocalContrastNormalizationDescriptor(15, 15), padding.Descriptor{N: 1, C: 1, H: 5, W: 6}, 1, 0},
	} {
		k := localContrastKernels(t, dev, c.d)
		for _, f := range normFormats(dev) {
			if f == ops.Float16 && (i%2 == 1 || c.shift != 0) {
				continue
			}
			normCheck(t, dev, r, k, c.shape, f, c.scale, c.shift)
		}
	}
}

// TestWindowNormalizationLargeTensorsAreSplit: with a 4 KiB storage range,
// cross-channel normalization takes groups of whole batch images and the
// spatial kinds groups of planes; a batch image over the range is an
// ErrDeviceLimit for cross-channel normalization.
func TestWindowNormalizationLargeTensorsAreSplit(t *testing.T) {
	dev := vktest.Open(t, vk.Options{MaxStorageBufferRange: 4 << 10})
	r := rand.New(rand.NewSource(24))
	normCheck(t, dev, r, crossChannelKernels(t, dev, ops.CrossChannelNormalizationDescriptor{KernelSize: 3, Alpha: 1, Beta: 0.75, Delta: 1}),
		padding.Descriptor{N: 6, C: 3, H: 8, W: 8}, ops.Float32, 1, 0)
	normCheck(t, dev, r, spatialKernels(t, dev, ops.SpatialNormalizationDescriptor{KernelWidth: 3, KernelHeight: 2, Alpha: 1, Beta: 0.75, Delta: 1}),
		padding.Descriptor{N: 3, C: 6, H: 16, W: 16}, ops.Float32, 1, 0)
	normCheck(t, dev, r, localContrastKernels(t, dev, ops.NewLocalContrastNormalizationDescriptor(3, 3)),
		padding.Descriptor{N: 2, C: 5, H: 16, W: 16}, ops.Float32, 1, 0)
	k := must(ops.NewCrossChannelNormalization(dev, ops.NewCrossChannelNormalizationDescriptor(5)))
	defer k.Close()
	big := padding.Descriptor{N: 1, C: 6, H: 16, W: 16}
	cb := must(dev.NewCommandBuffer())
	defer cb.Close()
	require.ErrorIs(t, k.Encode(cb, newImage(t, dev, big, nil), newImage(t, dev, big, nil)), ops.ErrDeviceLimit)
}

// TestNormalizationChannelViews: every normalization reads and writes
// channel views (a concatenation's slices) as it does whole images.
func TestNormalizationChannelViews(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(25))
	d := padding.Descriptor{N: 3, C: 4, H: 5, W: 6}
	big := padding.Descriptor{N: 3, C: 9, H: 5, W: 6}
	cnt := d.N * d.C * d.H * d.W
	xv, dyv := randomData(r, cnt), randomData(r, cnt)
	view := func(data []float32) (*ops.Image, *ops.Image) {
		whole := newImage(t, dev, big, randomData(r, big.N*big.C*big.H*big.W))
		v := must(whole.ChannelView(3, d.C))
		if data != nil {
			require.NoError(t, v.Write(context.Background(), data))
		}
		return whole, v
	}
	p := func(v float32) *ops.Image { return bnParam(t, dev, filled(d.C, v)) }
	bn := must(ops.NewBatchNormalization(dev, ops.NewBatchNormalizationDescriptor(d.C), p(1.5), p(0.25), p(0), p(1)))
	defer bn.Close()
	bng := must(ops.NewBatchNormalizationGradient(bn))
	defer bng.Close()
	in := must(ops.NewInstanceNormalization(dev, ops.NewInstanceNormalizationDescriptor(d.C), p(0.5), p(1)))
	defer in.Close()
	ing := must(ops.NewInstanceNormalizationGradient(in))
	defer ing.Close()
	lrn := crossChannelKernels(t, dev, ops.CrossChannelNormalizationDescriptor{KernelSize: 3, Alpha: 1, Beta: 0.75, Delta: 1})
	lcn := localContrastKernels(t, dev, ops.NewLocalContrastNormalizationDescriptor(3, 3))
	type pair struct {
		fwd, grad func(cb *vk.CommandBuffer, x, dy, y, dx *ops.Image) error
	}
	for name, k := range map[string]pair{
		"batch":          {}, // encoded below: it needs a state
		"instance":       {func(cb *vk.CommandBuffer, x, _, y, _ *ops.Image) error { return in.Encode(cb, x, y) }, func(cb *vk.CommandBuffer, x, dy, _, dx *ops.Image) error { return ing.Encode(cb, dy, x, dx, nil, nil) }},
		"cross-channel":  {func(cb *vk.CommandBuffer, x, _, y, _ *ops.Image) error { return lrn.fwd(cb, x, y) }, func(cb *vk.CommandBuffer, x, dy, _, dx *ops.Image) error { return lrn.grad(cb, dy, x, dx) }},
		"local-contrast": {func(cb *vk.CommandBuffer, x, _, y, _ *ops.Image) error { return lcn.fwd(cb, x, y) }, func(cb *vk.CommandBuffer, x, dy, _, dx *ops.Image) error { return lcn.grad(cb, dy, x, dx) }},
	} {
		results := func(views bool) (y, dx []float32) {
			var x, dy, yi, dxi *ops.Image
			if views {
				_, x = view(xv)
				_, dy = view(dyv)
				_, yi = view(nil)
				_, dxi = view(nil)
			} else {
				x, dy, yi, dxi = newImage(t, dev, d, xv), newImage(t, dev, d, dyv), newImage(t, dev, d, nil), newImage(t, dev, d, nil)
			}
			if name == "batch" {
				st := must(bn.NewState())
				defer st.Close()
				require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
					if err := bn.EncodeTraining(cb, x, st, yi); err != nil {
						return err
					}
					return bng.EncodeAll(cb, dy, x, st, dxi, nil, nil)
				}))
			} else {
				require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
					if err := k.fwd(cb, x, dy, yi, dxi); err != nil {
						return err
					}
					return k.grad(cb, x, dy, yi, dxi)
				}))
			}
			return bnRead(t, yi), bnRead(t, dxi)
		}
		wy, wdx := results(false)
		gy, gdx := results(true)
		tol := func(w []float32) func(int) float64 {
			return func(i int) float64 { return 1e-5 * math.Max(1, math.Abs(float64(w[i]))) }
		}
		require.NoError(t, bnCompare(name+" y", gy, bnF64(wy), tol(wy)))
		require.NoError(t, bnCompare(name+" dx", gdx, bnF64(wdx), tol(wdx)))
	}
}
