//go:build !race

package ops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Encoding on float16 images allocates nothing either (see
// TestEncodeDoesNotAllocate).
func TestEncodeFloat16DoesNotAllocate(t *testing.T) {
	dev := vktest.Open(t)
	requireHalf(t, dev)
	src := newHalfImage(t, dev, padding.Descriptor{N: 2, C: 8, H: 16, W: 16}, nil)
	dst := newHalfImage(t, dev, padding.Descriptor{N: 2, C: 8, H: 8, W: 8}, nil)
	dx := newHalfImage(t, dev, padding.Descriptor{N: 2, C: 8, H: 16, W: 16}, nil)
	for _, kind := range kinds {
		g := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
		k, err := ops.NewPooling(dev, kind, g)
		require.NoError(t, err)
		gk, err := ops.NewPoolingGradient(dev, kind, g)
		require.NoError(t, err)
		cb, err := dev.NewCommandBuffer()
		require.NoError(t, err)
		state, err := k.EncodeWithState(cb, src, dst)
		require.NoError(t, err)
		out, err := gk.EncodeNew(cb, dst, src, state)
		require.NoError(t, err)
		out.Close()
		var encErr error
		fwd := testing.AllocsPerRun(20, func() {
			if err := k.Encode(cb, src, dst); err != nil {
				encErr = err
			}
		})
		bwd := testing.AllocsPerRun(20, func() {
			if err := gk.Encode(cb, dst, src, state, dx); err != nil {
				encErr = err
			}
		})
		require.NoError(t, encErr)
		require.Zero(t, fwd, "%v: allocations per forward Encode", kind)
		require.Zero(t, bwd, "%v: allocations per gradient Encode", kind)
		state.Close()
		cb.Close()
	}
}
