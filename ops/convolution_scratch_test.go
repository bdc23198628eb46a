package ops_test

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Kernels sharing a ConvolutionScratch (Winograd convolutions, whose
// transforms live in it, and their gradients, split-K weight gradients
// included) compute what they compute alone; the scratch grows to a
// larger case and counts it; a kernel whose scratch is closed fails with
// ErrClosed and works again with its own (nil); a scratch of another
// device, or of none, is refused.
func TestConvolutionScratchShared(t *testing.T) {
	dev := vktest.Open(t)
	s, err := ops.NewConvolutionScratch(dev)
	require.NoError(t, err)
	defer func() {
		require.NoError(t, s.Close())
		require.NoError(t, s.Close())
	}()
	assert.Zero(t, s.Size())
	type sharing interface {
		SetScratch(*ops.ConvolutionScratch) error
		SetTuning(ops.ConvolutionTuning) error
	}
	share := func(k any) {
		require.True(t, ops.ConvForcePath(k, "winograd", 2))
		require.NoError(t, k.(sharing).SetScratch(s))
	}
	r := rand.New(rand.NewSource(23))
	small := winogradCases()[1]
	convRunCase(t, dev, small, r, false, share)
	size, grown := s.Size(), s.Grown()
	require.Positive(t, size)
	large := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 6, OutputFeatureChannels: 5,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 1}, n: 3, h: 26, w: 27,
		pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}
	convRunCase(t, dev, large, r, true, share)
	// Split-K weight gradients (the tiles, 4 splits) keep their partial
	// sums there too.
	convRunCase(t, dev, large, r, false, func(k any) {
		require.NoError(t, k.(sharing).SetScratch(s))
		require.NoError(t, k.(sharing).SetTuning(ops.ConvolutionTuning{Path: ops.ConvolutionPathTiled, Tile: 2, Splits: 4, NoWinograd: true}))
	})
	assert.Greater(t, s.Size(), size)
	assert.Greater(t, s.Grown(), grown)

	// A kernel sharing s keeps no scratch of its own; after a closed
	// scratch, it fails; with nil, it has its own again.
	k, err := ops.NewConvolution(dev, small.d)
	require.NoError(t, err)
	defer k.Close()
	require.True(t, ops.ConvForcePath(k, "winograd", 2))
	require.NoError(t, k.SetScratch(s))
	cd := small.data(r)
	src := convNewImage(t, dev, false, small.n, small.d.InputFeatureChannels, small.h, small.w, cd.x)
	w, _ := convParams(t, dev, small, cd)
	k.Padding = padding.Explicit(small.pads, false, false)
	dst := convNewImage(t, dev, false, small.n, small.d.OutputFeatureChannels, small.h, small.w, nil)
	encode := func() error {
		return run(t, dev, func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, w, nil, dst) })
	}
	require.NoError(t, encode())
	assert.Zero(t, ops.ConvOwnScratch(k))
	closed, err := ops.NewConvolutionScratch(dev)
	require.NoError(t, err)
	require.NoError(t, k.SetScratch(closed))
	require.NoError(t, closed.Close())
	require.ErrorIs(t, encode(), ops.ErrClosed)
	require.NoError(t, k.SetScratch(nil))
	require.NoError(t, encode())
	assert.Positive(t, ops.ConvOwnScratch(k))
	// Taking a shared one frees its own.
	require.NoError(t, k.SetScratch(s))
	assert.Zero(t, ops.ConvOwnScratch(k))
	require.NoError(t, encode())

	other := vktest.Open(t)
	theirs, err := ops.NewConvolutionScratch(other)
	require.NoError(t, err)
	defer theirs.Close()
	require.ErrorIs(t, k.SetScratch(theirs), ops.ErrDevice)
	_, err = ops.NewConvolutionScratch(nil)
	require.ErrorIs(t, err, ops.ErrDevice)
}
