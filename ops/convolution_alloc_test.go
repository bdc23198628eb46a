//go:build !race

package ops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Encoding the convolution family allocates nothing on the Go heap once
// its pipelines and scratch exist: forward (tiled, direct and depthwise
// paths, and an explicit im2col), data gradients (GEMM and few
// channels' gather) and weight
// gradients (split-K), the MPS form with a state
// and a fused neuron, transpose convolutions and fully connected layers.
func TestConvolutionEncodeDoesNotAllocate(t *testing.T) {
	dev := vktest.Open(t)
	img := func(n, c, h, w int) *ops.Image {
		return newImage(t, dev, padding.Descriptor{N: n, C: c, H: h, W: w}, nil)
	}
	d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 8, OutputFeatureChannels: 16,
		Neuron: ops.NewNeuronDescriptor(ops.NeuronReLU)}
	dw := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 8, OutputFeatureChannels: 8, Groups: 8}
	fd := ops.ConvolutionDescriptor{KernelWidth: 4, KernelHeight: 4, InputFeatureChannels: 8, OutputFeatureChannels: 10}
	src, dst := img(4, 8, 16, 16), img(4, 16, 16, 16)
	w, b := img(16, 8, 3, 3), img(1, 16, 1, 1)
	dy, dx := img(4, 16, 16, 16), img(4, 8, 16, 16)
	dW, db := img(16, 8, 3, 3), img(1, 16, 1, 1)
	wd, dwd := img(8, 1, 3, 3), img(8, 1, 3, 3)
	dstD := img(4, 8, 16, 16)
	fsrc, fw, fdst, fdy := img(4, 8, 4, 4), img(10, 128, 1, 1), img(4, 10, 1, 1), img(4, 10, 1, 1)
	fdx, fdW := img(4, 8, 4, 4), img(10, 128, 1, 1)
	conv := must(ops.NewConvolution(dev, d))
	defer conv.Close()
	conv.Offset = ops.Offset{X: 1, Y: 1}
	grad := must(ops.NewConvolutionGradient(dev, d))
	defer grad.Close()
	grad.SetForwardOffset(1, 1)
	depth := must(ops.NewConvolution(dev, dw))
	defer depth.Close()
	depthG := must(ops.NewConvolutionGradient(dev, dw))
	defer depthG.Close()
	tr := must(ops.NewConvolutionTranspose(dev, ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 16, OutputFeatureChannels: 8}))
	defer tr.Close()
	sd := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 3, OutputFeatureChannels: 16, StrideX: 2, StrideY: 2}
	small := must(ops.NewConvolutionGradient(dev, sd))
	defer small.Close()
	sdy, sw, sdx := img(4, 16, 8, 8), img(16, 3, 3, 3), img(4, 3, 16, 16)
	fc := must(ops.NewFullyConnected(dev, fd))
	defer fc.Close()
	fcG := must(ops.NewFullyConnectedGradient(dev, fd))
	defer fcG.Close()
	// Winograd (forced on this small case): every pass of it.
	wino := ops.ConvolutionTuning{Winograd: true}
	winoConv := must(ops.NewConvolution(dev, d))
	defer winoConv.Close()
	winoConv.Offset = ops.Offset{X: 1, Y: 1}
	require.NoError(t, winoConv.SetTuning(wino))
	winoGrad := must(ops.NewConvolutionGradient(dev, d))
	defer winoGrad.Close()
	winoGrad.SetForwardOffset(1, 1)
	require.NoError(t, winoGrad.SetTuning(wino))
	i2c := must(ops.NewConvolution(dev, d))
	defer i2c.Close()
	i2c.Offset = ops.Offset{X: 1, Y: 1}
	require.NoError(t, i2c.SetTuning(ops.ConvolutionTuning{Im2col: true}))
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer func() { cb.Close() }()
	st, err := conv.EncodeWithState(cb, src, w, b, dst)
	require.NoError(t, err)
	defer st.Close()
	encodes := map[string]func() error{
		"forward": func() error { return conv.Encode(cb, src, w, b, dst) },
		"forward direct": func() error {
			ops.ConvForcePath(conv, "direct", 0)
			defer ops.ConvForcePath(conv, "", 0)
			return conv.Encode(cb, src, w, b, dst)
		},
		"data gradient":            func() error { return grad.EncodeData(cb, dy, w, dx) },
		"im2col forward":           func() error { return i2c.Encode(cb, src, w, b, dst) },
		"weight gradient":          func() error { return grad.EncodeWeights(cb, dy, src, dW, db) },
		"gradient with state":      func() error { return grad.EncodeWithState(cb, dy, src, st, dx) },
		"depthwise":                func() error { return depth.Encode(cb, src, wd, nil, dstD) },
		"depthwise gradients":      func() error { return depthG.EncodeWeights(cb, dstD, src, dwd, nil) },
		"transpose":                func() error { return tr.Encode(cb, dy, w, nil, dx) },
		"few channels' data":       func() error { return small.EncodeData(cb, sdy, sw, sdx) },
		"Winograd forward":         func() error { return winoConv.Encode(cb, src, w, b, dst) },
		"Winograd data gradient":   func() error { return winoGrad.EncodeData(cb, dy, w, dx) },
		"Winograd weight gradient": func() error { return winoGrad.EncodeWeights(cb, dy, src, dW, db) },
		"fully connected":          func() error { return fc.Encode(cb, fsrc, fw, nil, fdst) },
		"fully connected grad":     func() error { return fcG.EncodeWeights(cb, fdy, fsrc, fdW, nil) },
		"fully connected data":     func() error { return fcG.EncodeData(cb, fdy, fw, fdx) },
	}
	for name, enc := range encodes {
		require.NoError(t, enc(), name) // pipelines, scratch
		var encErr error
		n := testing.AllocsPerRun(20, func() {
			if err := enc(); err != nil {
				encErr = err
			}
		})
		require.NoError(t, encErr, name)
		if name != "forward direct" { // ConvForcePath allocates
			require.Zero(t, n, "allocations per %s encode", name)
		}
	}
	require.True(t, ops.ConvIm2col(i2c), "the im2col forward ran as im2col")
}
