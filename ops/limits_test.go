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

// Gradients of a tensor over lavapipe's real 128 MiB storage-buffer range
// are split like the forward (TestTensorOverStorageRange) and match the
// reference: max recording its argmax, and average.
func TestGradientOverStorageRange(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 350 MB")
	}
	dev := vktest.Open(t)
	lim := dev.Limits().MaxStorageBufferRange
	if lim > 256<<20 {
		t.Skipf("device range %d bytes: too large to exceed here", lim)
	}
	src := padding.Descriptor{N: 1, C: int(lim/(4*1024*1024)) + 3, H: 1024, W: 1024}
	r := rand.New(rand.NewSource(2))
	in := randomData(r, src.C*1024*1024)
	dy := randomData(r, src.C*512*512)
	for _, kind := range []ops.PoolingKind{ops.KindMax, ops.KindAverage} {
		c := poolCase{kind: kind, geom: ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1},
			src: src, dst: padding.Descriptor{N: 1, C: src.C, H: 512, W: 512}, off: ops.Offset{X: 1, Y: 1}}
		checkGradient(t, dev, c, in, dy, kind == ops.KindMax)
	}
}

// A plane larger than the storage-buffer range runs in bands of rows
// (TestPlanesOverStorageRangeInBands); a row larger than the range cannot
// be split: every kind's forward, with a gradient state (and its argmax)
// too, refuses it with ErrDeviceLimit, records nothing and leaks nothing.
func TestRowOverStorageRangeWithState(t *testing.T) {
	dev := vktest.Open(t, vk.Options{MaxStorageBufferRange: 64 << 10})
	g := ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	src := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 2, W: 17000}, nil)
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	for _, kind := range kinds {
		f, _, err := newForward(dev, kind, g)
		require.NoError(t, err)
		f.SetRecordArgmax(true)
		dst, st, err := f.EncodeNewWithState(cb, src)
		require.ErrorIs(t, err, ops.ErrDeviceLimit, kind)
		assert.Nil(t, dst)
		assert.Nil(t, st)
		assert.Contains(t, err.Error(), "exceed the device's max storage buffer range", kind)
		assert.Equal(t, 0, cb.Commands(), kind)
		require.NoError(t, dev.WaitIdle(context.Background()))
		assert.Equal(t, map[string]int{"buffer": 1, "command-buffer": 1}, dev.LiveObjects(), "%v: the argmax and destination are freed", kind)
	}
}

// An image larger than the device's memory is vk.ErrOutOfDeviceMemory
// from ops too (wrapped, naming the image), leaves nothing behind, and
// the device serves the next request.
func TestImageOutOfDeviceMemory(t *testing.T) {
	dev := vktest.Open(t)
	side := 1 << 16
	for uint64(side)*uint64(side)*4 <= dev.Limits().DeviceLocalBytes {
		side *= 2
	}
	for _, d := range []ops.ImageDescriptor{
		{N: 1, C: 1, H: side, W: side, Label: "huge"},
		{N: 1 << 10, C: 1 << 10, H: 1 << 10, W: 1 << 10, Label: "huge batch"},
	} {
		_, err := ops.NewImage(dev, d)
		require.ErrorIs(t, err, vk.ErrOutOfDeviceMemory, d.Label)
		assert.Contains(t, err.Error(), d.Label)
		assert.Empty(t, dev.LiveSummary())
	}
	// EncodeNew of a destination too large to allocate: same error,
	// nothing recorded.
	k, err := ops.NewPoolingMax(dev, 1, 1, 1, 1)
	require.NoError(t, err)
	k.Padding = padding.Explicit(padding.Pads{Bottom: side, Right: side}, false, false)
	src := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 2, W: 2}, []float32{1, 2, 3, 4})
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	_, err = k.EncodeNew(cb, src)
	require.ErrorIs(t, err, vk.ErrOutOfDeviceMemory)
	assert.Equal(t, 0, cb.Commands())

	// The device keeps working.
	k2, err := ops.NewPoolingMax(dev, 2, 2, 2, 2)
	require.NoError(t, err)
	k2.Offset = ops.Offset{X: 1, Y: 1}
	dst := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 1}, nil)
	require.NoError(t, k2.Encode(cb, src, dst))
	require.NoError(t, cb.Commit())
	require.NoError(t, cb.Wait(context.Background()))
	got, err := dst.Read(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []float32{4}, got)
}
