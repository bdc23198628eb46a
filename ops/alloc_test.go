//go:build !race

package ops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Encoding a configured kernel into a command buffer allocates nothing
// on the Go heap, forward or gradient, float32 or float16 (issue 9). The
// race detector's instrumentation allocates, hence the build tag.
func TestEncodeDoesNotAllocate(t *testing.T) {
	dev := vktest.Open(t)
	formats := []ops.Format{ops.Float32}
	if dev.Limits().Float16Storage {
		formats = append(formats, ops.Float16)
	}
	for _, f := range formats {
		mk := func(d padding.Descriptor) *ops.Image {
			if f == ops.Float16 {
				return newHalfImage(t, dev, d, nil)
			}
			return newImage(t, dev, d, nil)
		}
		src := mk(padding.Descriptor{N: 2, C: 8, H: 16, W: 16})
		dst := mk(padding.Descriptor{N: 2, C: 8, H: 8, W: 8})
		dx := mk(padding.Descriptor{N: 2, C: 8, H: 16, W: 16})
		for _, kind := range kinds {
			t.Run(kind.String()+"/"+f.String(), func(t *testing.T) {
				g := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
				if kind == ops.KindDilatedMax {
					g.DilationX, g.DilationY = 2, 2
				}
				k, err := ops.NewPooling(dev, kind, g)
				require.NoError(t, err)
				gk, err := ops.NewPoolingGradient(dev, kind, g)
				require.NoError(t, err)
				cb, err := dev.NewCommandBuffer()
				require.NoError(t, err)
				defer func() { cb.Close() }()
				state, err := k.EncodeWithState(cb, src, dst)
				require.NoError(t, err)
				defer state.Close()
				out, err := gk.EncodeNew(cb, dst, src, state) // configures gk, makes pipelines
				require.NoError(t, err)
				out.Close()
				var encErr error
				fwd := testing.AllocsPerRun(50, func() {
					if err := k.Encode(cb, src, dst); err != nil {
						encErr = err
					}
				})
				bwd := testing.AllocsPerRun(50, func() {
					if err := gk.Encode(cb, dst, src, state, dx); err != nil {
						encErr = err
					}
				})
				require.NoError(t, encErr)
				require.Zero(t, fwd, "allocations per forward Encode")
				require.Zero(t, bwd, "allocations per gradient Encode")
			})
		}
	}
}
