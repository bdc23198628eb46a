//go:build !race

package ops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Encoding dropout (with and without a state) and its gradient allocates
// nothing on the Go heap once the pipelines exist, float32 and float16.
func TestDropoutEncodeDoesNotAllocate(t *testing.T) {
	dev := vktest.Open(t)
	formats := []ops.Format{ops.Float32}
	if dev.Limits().Float16Storage {
		formats = append(formats, ops.Float16)
	}
	for _, f := range formats {
		d := padding.Descriptor{N: 2, C: 5, H: 9, W: 36}
		src, dst, dx := upImage(t, dev, d, f, 0, nil), upImage(t, dev, d, f, 0, nil), upImage(t, dev, d, f, 0, nil)
		desc := ops.DropoutDescriptor{KeepProbability: 0.5, Seed: 1, MaskStride: ops.DefaultMaskStride}
		k := must(ops.NewDropout(dev, desc))
		g := must(ops.NewDropoutGradient(dev, desc))
		st := must(k.NewGradientState(src.Descriptor()))
		cb, err := dev.NewCommandBuffer()
		require.NoError(t, err)
		require.NoError(t, k.Encode(cb, src, dst)) // pipelines
		require.NoError(t, k.EncodeToState(cb, src, st, dst))
		require.NoError(t, g.Encode(cb, dst, st, dx))
		var encErr error
		keep := func(err error) {
			if err != nil {
				encErr = err
			}
		}
		fwd := testing.AllocsPerRun(50, func() { keep(k.Encode(cb, src, dst)) })
		fwdState := testing.AllocsPerRun(50, func() { keep(k.EncodeToState(cb, src, st, dst)) })
		bwd := testing.AllocsPerRun(50, func() { keep(g.Encode(cb, dst, st, dx)) })
		require.NoError(t, encErr)
		require.Zero(t, fwd, "%v: allocations per Dropout.Encode", f)
		require.Zero(t, fwdState, "%v: allocations per Dropout.EncodeToState", f)
		require.Zero(t, bwd, "%v: allocations per DropoutGradient.Encode", f)
		cb.Close()
		st.Close()
		k.Close()
	}
}
