package ops_test

import (
	"context"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// tuneResults runs the forward (recording argmax for the max kinds) and
// the gradient of kind over one odd-sized image with both kernels set to
// tu, and returns y and dx.
func tuneResults(t *testing.T, dev *vk.Device, kind ops.PoolingKind, g ops.Geometry, tu ops.Tuning, input, dy []float32, src, dst padding.Descriptor) (y, dx []float32) {
	t.Helper()
	f, err := ops.NewPooling(dev, kind, g)
	require.NoError(t, err)
	require.NoError(t, f.SetTuning(tu))
	assert.Equal(t, tu, f.Tuning())
	f.SetRecordArgmax(true)
	gk, err := ops.NewPoolingGradient(dev, kind, g)
	require.NoError(t, err)
	require.NoError(t, gk.SetTuning(tu))
	assert.Equal(t, tu, gk.Tuning())
	srcIm := newImage(t, dev, src, input)
	dstIm := newImage(t, dev, dst, filled(dst.N*dst.C*dst.H*dst.W, poisonValue))
	dyIm := newImage(t, dev, dst, dy)
	var dxIm *ops.Image
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		st, err := f.EncodeWithState(cb, srcIm, dstIm)
		if err != nil {
			return err
		}
		t.Cleanup(func() { st.Close() })
		dxIm, err = gk.EncodeNew(cb, dyIm, srcIm, st)
		return err
	}))
	defer dxIm.Close()
	y, err = dstIm.Read(context.Background())
	require.NoError(t, err)
	dx, err = dxIm.Read(context.Background())
	require.NoError(t, err)
	return y, dx
}

// A tuning changes the work shapes, never the results: every kind, forward
// and gradient, gives the same bits under each setting as by default.
func TestTuningKeepsResults(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(20))
	g := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 1, DilationX: 1, DilationY: 1}
	src := padding.Descriptor{N: 2, C: 3, H: 13, W: 21}
	dst := padding.Descriptor{N: 2, C: 3, H: 13, W: 11}
	tunings := []ops.Tuning{
		{StripWidth: 1, GatherCells: 1, Workgroup: 32, LoadWidth: 1, NoVectorStores: true, Argmax: ops.ArgmaxTapByTap},
		{StripWidth: 8, GatherCells: 8, Workgroup: 1024, Argmax: ops.ArgmaxTwoPhase},
		{StripWidth: 2, GatherCells: 3, LoadWidth: 2},
		{Argmax: ops.ArgmaxFastTapByTap},
		{StripWidth: 8, LoadWidth: 1, Argmax: ops.ArgmaxFastTwoPhase},
	}
	for _, kind := range []ops.PoolingKind{ops.KindMax, ops.KindAverage, ops.KindL2Norm} {
		input := gradInput(r, kind, src.N*src.C*src.H*src.W)
		dy := randomData(r, dst.N*dst.C*dst.H*dst.W)
		y0, dx0 := tuneResults(t, dev, kind, g, ops.Tuning{}, input, dy, src, dst)
		for _, tu := range tunings {
			y, dx := tuneResults(t, dev, kind, g, tu, input, dy, src, dst)
			assert.True(t, sameBits(y0, y), "%v forward under %v", kind, tu)
			assert.True(t, sameBits(dx0, dx), "%v gradient under %v", kind, tu)
		}
	}
}

// An invalid tuning is refused, names the kernel, and leaves the kernel's
// setting as it was.
func TestSetTuningRefuses(t *testing.T) {
	dev := vktest.Open(t)
	g := ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	f, err := ops.NewPooling(dev, ops.KindMax, g)
	require.NoError(t, err)
	gk, err := ops.NewPoolingGradient(dev, ops.KindAverage, g)
	require.NoError(t, err)
	good := ops.Tuning{Workgroup: 64}
	require.NoError(t, f.SetTuning(good))
	require.NoError(t, gk.SetTuning(good))
	for _, bad := range []ops.Tuning{{StripWidth: 3}, {Workgroup: 100}, {Argmax: 7}} {
		err := f.SetTuning(bad)
		assert.ErrorIs(t, err, ops.ErrTuning)
		assert.Contains(t, err.Error(), "PoolingMax")
		err = gk.SetTuning(bad)
		assert.ErrorIs(t, err, ops.ErrTuning)
		assert.Contains(t, err.Error(), "PoolingAverageGradient")
	}
	assert.Equal(t, good, f.Tuning())
	assert.Equal(t, good, gk.Tuning())
}
