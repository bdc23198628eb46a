//go:build !race

package ops_test

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Encoding a binary convolution allocates nothing on the Go heap once its
// pipelines and scratch exist, for every type, float32 and float16.
func TestBinaryConvolutionEncodeDoesNotAllocate(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(1))
	formats := []bool{false}
	if dev.Limits().Float16Storage {
		formats = append(formats, true)
	}
	for _, half := range formats {
		sd, dd := padding.Descriptor{N: 2, C: 35, H: 9, W: 9}, padding.Descriptor{N: 2, C: 6, H: 9, W: 9}
		src, dst := newImage(t, dev, sd, nil), newImage(t, dev, dd, nil)
		if half {
			src, dst = newHalfImage(t, dev, sd, nil), newHalfImage(t, dev, dd, nil)
		}
		for _, typ := range []ops.BinaryConvolutionType{ops.BinaryConvolutionBinaryWeights, ops.BinaryConvolutionXNOR, ops.BinaryConvolutionAND} {
			d := ops.NewBinaryConvolutionDescriptor(3, 3, 35, 6, typ, ops.BinaryConvolutionUseBetaScaling)
			d.Neuron = ops.NewNeuronDescriptor(ops.NeuronReLU)
			k, err := ops.NewBinaryConvolution(dev, d, ops.BinaryConvolutionWeights{Weights: randomData(r, 6*35*9)})
			require.NoError(t, err)
			cb, err := dev.NewCommandBuffer()
			require.NoError(t, err)
			require.NoError(t, k.Encode(cb, src, dst)) // pipelines and scratch
			var encErr error
			allocs := testing.AllocsPerRun(50, func() {
				if err := k.Encode(cb, src, dst); err != nil {
					encErr = err
				}
			})
			require.NoError(t, encErr)
			require.Zero(t, allocs, "%v half=%v: allocations per Encode", typ, half)
			cb.Close()
			k.Close()
		}
	}
}
