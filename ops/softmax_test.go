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

// softmaxShapes: one channel, channel counts that are not multiples of 4,
// few pixels with many channels (many invocations per pixel), many
// pixels with few.
var softmaxShapes = []padding.Descriptor{
	{N: 1, C: 1, H: 1, W: 1}, {N: 2, C: 3, H: 5, W: 7}, {N: 3, C: 16, H: 4, W: 4},
	{N: 1, C: 37, H: 3, W: 5}, {N: 2, C: 5, H: 33, W: 31}, {N: 1, C: 100, H: 2, W: 1},
	// Planes of 1 or 2 values (classifier logits): neighbouring
	// invocations take neighbouring channels.
	{N: 5, C: 37, H: 1, W: 1}, {N: 3, C: 300, H: 1, W: 2}, {N: 7, C: 3, H: 1, W: 1},
}

// softmaxRun runs the forward (log or not) and its gradient and returns y
// and dx.
func softmaxRun(t *testing.T, dev *vk.Device, log bool, src, dy *ops.Image) (y, dx []float32) {
	t.Helper()
	ctx := context.Background()
	sd := src.Descriptor()
	shape := padding.Descriptor{N: sd.N, C: sd.C, H: sd.H, W: sd.W}
	dst := neuronImage(t, dev, shape, filled(src.Len(), poisonValue), sd.Format)
	dxIm := neuronImage(t, dev, shape, filled(src.Len(), poisonValue), sd.Format)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if log {
			f := must(ops.NewLogSoftMax(dev))
			g := must(ops.NewLogSoftMaxGradient(dev))
			if err := f.Encode(cb, src, dst); err != nil {
				return err
			}
			return g.Encode(cb, dy, dst, dxIm)
		}
		f := must(ops.NewSoftMax(dev))
		g := must(ops.NewSoftMaxGradient(dev))
		if err := f.Encode(cb, src, dst); err != nil {
			return err
		}
		return g.Encode(cb, dy, dst, dxIm)
	}))
	y, err := dst.Read(ctx)
	require.NoError(t, err)
	dx, err = dxIm.Read(ctx)
	require.NoError(t, err)
	return y, dx
}

// softmaxCheck compares y and dx with the reference: y from src, dx from
// dy and the GPU's own y (what the gradient was given), the sums allowed
// their float32 rounding.
func softmaxCheck(t *testing.T, name string, log bool, f ops.Format, sh padding.Descriptor, xv, gv, y, dx []float32) {
	t.Helper()
	xt, _ := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, xv)
	wantY, err := ref.SoftMax(xt, log)
	require.NoError(t, err)
	// Softmax: each result carries the relative error of its sum;
	// log-softmax: log(s) carries it as an absolute error.
	require.NoError(t, neuronCompare(y, wantY, f, func(int) float64 { return 0x1p-22 * float64(sh.C) }), "%s forward", name)
	gt, _ := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, gv)
	yt, _ := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, y)
	wantDx, err := ref.SoftMaxGradient(gt, yt, log)
	require.NoError(t, err)
	plane := sh.H * sh.W
	mag := make([]float64, len(gv))
	for n := 0; n < sh.N; n++ {
		for p := 0; p < plane; p++ {
			s := 0.0
			for c := 0; c < sh.C; c++ {
				i := (n*sh.C+c)*plane + p
				v := float64(y[i])
				if log {
					v = 1
				}
				s += math.Abs(float64(gv[i]) * v)
			}
			for c := 0; c < sh.C; c++ {
				i := (n*sh.C+c)*plane + p
				w := math.Abs(float64(y[i]))
				if log {
					w = math.Exp(float64(y[i]))
				}
				mag[i] = 0x1p-22 * s * w
			}
		}
	}
	require.NoError(t, neuronCompare(dx, wantDx, f, func(i int) float64 { return mag[i] }), "%s gradient", name)
}

// TestSoftMaxMatchesReference runs both kernels and both gradients over
// odd shapes, float32 and float16, with inputs of a wide range.
func TestSoftMaxMatchesReference(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(21))
	for _, f := range neuronFormats(dev) {
		for _, sh := range softmaxShapes {
			for _, log := range []bool{false, true} {
				name := fmt.Sprintf("%v/%v/log=%v", f, sh, log)
				n := sh.N * sh.C * sh.H * sh.W
				xv := randomData(r, n)
				for i := range xv {
					xv[i] *= 4
				}
				xv, gv := neuronInput(xv, f), neuronInput(randomData(r, n), f)
				src, dy := neuronImage(t, dev, sh, xv, f), neuronImage(t, dev, sh, gv, f)
				y, dx := softmaxRun(t, dev, log, src, dy)
				softmaxCheck(t, name, log, f, sh, xv, gv, y, dx)
			}
		}
	}
}

// TestSoftMaxSpecialValues: large inputs stay finite (the maximum is
// subtracted), -Inf gives 0 (log: -Inf) beside finite values, a NaN makes
// its pixel NaN and leaves the others alone.
func TestSoftMaxSpecialValues(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	// 4 pixels (columns) of 3 channels.
	x := []float32{
		1000, -inf, 1, nan, // channel 0
		999, 2, -inf, 0, // channel 1
		998, -inf, 3, 1, // channel 2
	}
	sh := padding.Descriptor{N: 1, C: 3, H: 1, W: 4}
	src := newImage(t, dev, sh, x)
	for _, log := range []bool{false, true} {
		dst := newImage(t, dev, sh, nil)
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			if log {
				return must(ops.NewLogSoftMax(dev)).Encode(cb, src, dst)
			}
			return must(ops.NewSoftMax(dev)).Encode(cb, src, dst)
		}))
		got, err := dst.Read(ctx)
		require.NoError(t, err)
		xt, _ := ref.TensorOf(1, 3, 1, 4, x)
		want, _ := ref.SoftMax(xt, log)
		require.NoError(t, neuronCompare(got, want, ops.Float32, nil), "log=%v: %v", log, got)
		for c := 0; c < 3; c++ {
			require.True(t, math.IsNaN(float64(got[c*4+3])), "log=%v: the NaN pixel's channel %d is %v", log, c, got[c*4+3])
		}
	}
}

// TestSoftMaxViewsAndSplits: channel views (the batch stride differs from
// the channel count) and, under a small storage-buffer range, a batch
// split into groups; one batch image over the range is an ErrDeviceLimit.
func TestSoftMaxViewsAndSplits(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	capped := vktest.Open(t, vk.Options{MaxStorageBufferRange: 64 << 10})
	ctx := context.Background()
	for _, f := range neuronFormats(capped) {
		whole := padding.Descriptor{N: 4, C: 7, H: 40, W: 40}
		sh := padding.Descriptor{N: 4, C: 3, H: 40, W: 40}
		n := whole.N * whole.C * whole.H * whole.W
		big := neuronImage(t, capped, whole, neuronInput(randomData(r, n), f), f)
		src := must(big.ChannelView(2, 3))
		dyv := neuronInput(randomData(r, src.Len()), f)
		dy := neuronImage(t, capped, sh, dyv, f)
		xv, err := src.Read(ctx)
		require.NoError(t, err)
		for _, log := range []bool{false, true} {
			y, dx := softmaxRun(t, capped, log, src, dy)
			softmaxCheck(t, fmt.Sprintf("%v/log=%v", f, log), log, f, sh, xv, dyv, y, dx)
		}
		tooBig := neuronImage(t, capped, padding.Descriptor{N: 1, C: 5, H: 64, W: 64 * 4 / f.Size()}, nil, f)
		out := neuronImage(t, capped, padding.Descriptor{N: 1, C: 5, H: 64, W: 64 * 4 / f.Size()}, nil, f)
		cb, err := capped.NewCommandBuffer()
		require.NoError(t, err)
		err = must(ops.NewSoftMax(capped)).Encode(cb, tooBig, out)
		require.ErrorIs(t, err, ops.ErrDeviceLimit)
		require.Contains(t, err.Error(), "max storage buffer range")
		require.NoError(t, cb.Close())
	}
}
