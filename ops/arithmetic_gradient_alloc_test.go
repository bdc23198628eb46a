//go:build !race

package ops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// The gradient of a source broadcast over whole planes (a per-channel
// bias or scale: many workgroups per channel, then their sum) encodes
// without allocating once its pipelines and scratch exist, in quads and
// value by value. The race detector's instrumentation allocates, hence the
// build tag.
func TestArithmeticGradientPlanesEncodeDoesNotAllocate(t *testing.T) {
	dev := vktest.Open(t)
	for _, f := range neuronFormats(dev) {
		for _, sd := range []padding.Descriptor{{N: 2, C: 3, H: 32, W: 32}, {N: 3, C: 3, H: 17, W: 23}} {
			x, dz := neuronImage(t, dev, sd, nil, f), neuronImage(t, dev, sd, nil, f)
			pc := neuronImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, nil, f)
			dpc := neuronImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, nil, f)
			for _, op := range []ops.ArithmeticOp{ops.ArithmeticAdd, ops.ArithmeticMultiply} {
				k := must(ops.NewArithmeticGradient(dev, ops.NewArithmeticDescriptor(op), true))
				t.Cleanup(func() { k.Close() })
				cb, err := dev.NewCommandBuffer()
				require.NoError(t, err)
				t.Cleanup(func() { cb.Close() })
				enc := func(cb *vk.CommandBuffer) error { return k.Encode(cb, dz, x, pc, dpc) }
				require.NoError(t, enc(cb)) // pipelines, scratch
				var encErr error
				n := testing.AllocsPerRun(50, func() {
					if err := enc(cb); err != nil {
						encErr = err
					}
				})
				require.NoError(t, encErr)
				require.Zero(t, n, "%v %v %v: allocations per Encode", f, sd, op)
			}
		}
	}
}
