//go:build !race

package ops_test

import (
	"context"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Recording a training step's updates allocates nothing on the Go heap
// once the pipelines exist: EncodeStep and Encode, every optimizer. The
// race detector's instrumentation allocates, hence the build tag.
func TestOptimizerEncodeDoesNotAllocate(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(1))
	sh := padding.Descriptor{N: 4, C: 3, H: 3, W: 3}
	param := newImage(t, dev, sh, randomData(r, 108))
	grad := newImage(t, dev, sh, randomData(r, 108))
	for _, d := range optCases() {
		t.Run(optName(d), func(t *testing.T) {
			opt, err := ops.NewOptimizer(dev, d)
			require.NoError(t, err)
			defer opt.Close()
			st, err := opt.NewState(context.Background(), param)
			require.NoError(t, err)
			defer st.Close()
			cb, err := dev.NewCommandBuffer()
			require.NoError(t, err)
			defer cb.Close()
			require.NoError(t, opt.EncodeStep(cb)) // makes the pipelines
			require.NoError(t, opt.Encode(cb, param, grad, st))
			var encErr error
			allocs := testing.AllocsPerRun(50, func() {
				if err := opt.EncodeStep(cb); err != nil {
					encErr = err
				}
				if err := opt.Encode(cb, param, grad, st); err != nil {
					encErr = err
				}
			})
			require.NoError(t, encErr)
			require.Zero(t, allocs, "allocations per EncodeStep + Encode")
		})
	}
}
