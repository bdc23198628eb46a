//go:build !race

package ops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Encoding an upsampling kernel or its gradient allocates nothing on the
// Go heap once the pipelines exist, every mode, float32 and float16.
func TestUpsamplingEncodeDoesNotAllocate(t *testing.T) {
	dev := vktest.Open(t)
	formats := []ops.Format{ops.Float32}
	if dev.Limits().Float16Storage {
		formats = append(formats, ops.Float16)
	}
	for _, f := range formats {
		sd, od := padding.Descriptor{N: 2, C: 3, H: 7, W: 8}, padding.Descriptor{N: 2, C: 3, H: 14, W: 24}
		src, dst := upImage(t, dev, sd, f, 0, nil), upImage(t, dev, od, f, 0, nil)
		for _, d := range []ops.UpsamplingDescriptor{{ScaleX: 3, ScaleY: 2}, {ScaleX: 3, ScaleY: 2, Bilinear: true},
			{ScaleX: 3, ScaleY: 2, Bilinear: true, AlignCorners: true}} {
			k := must(ops.NewUpsampling(dev, d))
			g := must(ops.NewUpsamplingGradient(dev, d))
			cb, err := dev.NewCommandBuffer()
			require.NoError(t, err)
			require.NoError(t, k.Encode(cb, src, dst)) // pipelines
			require.NoError(t, g.Encode(cb, dst, src))
			var encErr error
			fwd := testing.AllocsPerRun(50, func() {
				if err := k.Encode(cb, src, dst); err != nil {
					encErr = err
				}
			})
			bwd := testing.AllocsPerRun(50, func() {
				if err := g.Encode(cb, dst, src); err != nil {
					encErr = err
				}
			})
			require.NoError(t, encErr)
			require.Zero(t, fwd, "%v %v: allocations per forward Encode", d, f)
			require.Zero(t, bwd, "%v %v: allocations per gradient Encode", d, f)
			cb.Close()
		}
	}
}
