package ops_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// The convolution family's bad input, one row per case grouped by class:
// each returns its sentinel naming the kernel, image or value at fault,
// nothing panics and nothing refused is recorded.
func TestConvolutionBadInput(t *testing.T) {
	dev := vktest.Open(t)
	other := vktest.Open(t)
	capped := vktest.Open(t, vk.Options{MaxStorageBufferRange: 4 << 10})
	d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 4, OutputFeatureChannels: 6, Groups: 2}
	img := func(dv *vk.Device, n, c, h, w int) *ops.Image {
		return newImage(t, dv, padding.Descriptor{N: n, C: c, H: h, W: w}, nil)
	}
	src, dst := img(dev, 2, 4, 8, 8), img(dev, 2, 6, 8, 8)
	w, b := img(dev, 6, 2, 3, 3), img(dev, 1, 6, 1, 1)
	dy, dx := img(dev, 2, 6, 8, 8), img(dev, 2, 4, 8, 8)
	dW, db := img(dev, 6, 2, 3, 3), img(dev, 1, 6, 1, 1)
	closed := img(dev, 2, 6, 8, 8)
	require.NoError(t, closed.Close())
	foreign := img(other, 2, 6, 8, 8)
	big := newImage(t, dev, padding.Descriptor{N: 2, C: 10, H: 8, W: 8}, nil)
	view := must(big.ChannelView(0, 6))
	conv := func() *ops.Convolution {
		k := must(ops.NewConvolution(dev, d))
		t.Cleanup(func() { k.Close() })
		k.Offset = ops.Offset{X: 1, Y: 1}
		return k
	}
	grad := func() *ops.ConvolutionGradient {
		k := must(ops.NewConvolutionGradient(dev, d))
		t.Cleanup(func() { k.Close() })
		k.SetForwardOffset(1, 1)
		return k
	}
	var st, stT *ops.ConvolutionGradientState
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		if st, err = conv().EncodeWithState(cb, src, w, b, dst); err != nil {
			return err
		}
		td := d
		td.InputFeatureChannels, td.OutputFeatureChannels = 6, 4
		tk := must(ops.NewConvolutionTranspose(dev, td))
		t.Cleanup(func() { tk.Close() })
		stT, err = tk.EncodeWithState(cb, dst, img(dev, 6, 2, 3, 3), nil, img(dev, 2, 4, 8, 8))
		return err
	}))
	t.Cleanup(func() { st.Close(); stT.Close() })
	stClosed := func() *ops.ConvolutionGradientState {
		var s *ops.ConvolutionGradientState
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			s, err = conv().EncodeWithState(cb, src, w, b, dst)
			return err
		}))
		require.NoError(t, s.Close())
		require.NoError(t, s.Close(), "Close is safe twice")
		return s
	}()
	capK := must(ops.NewConvolution(capped, ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 16, OutputFeatureChannels: 16}))
	t.Cleanup(func() { capK.Close() })
	fc := must(ops.NewFullyConnected(dev, ops.ConvolutionDescriptor{KernelWidth: 8, KernelHeight: 8, InputFeatureChannels: 4, OutputFeatureChannels: 3}))
	t.Cleanup(func() { fc.Close() })
	cb := mustConvCB(t, dev)
	cbCapped := mustConvCB(t, capped)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	withD := func(f func(*ops.ConvolutionDescriptor)) ops.ConvolutionDescriptor {
		c := d
		f(&c)
		return c
	}
	newConv := func(c ops.ConvolutionDescriptor) error { _, err := ops.NewConvolution(dev, c); return err }

	tests := []struct {
		class, name string
		call        func() error
		want        error
		msg         string
	}{
		{"size < 1", "kernel width 0", func() error { return newConv(withD(func(c *ops.ConvolutionDescriptor) { c.KernelWidth = 0 })) }, ops.ErrGeometry, "kernel width 0 < 1"},
		{"size < 1", "no input channels", func() error { return newConv(withD(func(c *ops.ConvolutionDescriptor) { c.InputFeatureChannels = 0 })) }, ops.ErrGeometry, "input feature channels 0"},
		{"size < 1", "negative stride", func() error { return newConv(withD(func(c *ops.ConvolutionDescriptor) { c.StrideY = -1 })) }, ops.ErrGeometry, "stride y -1"},
		{"size < 1", "dilation over 32768", func() error { return newConv(withD(func(c *ops.ConvolutionDescriptor) { c.DilationX = 1 << 16 })) }, ops.ErrGeometry, "dilation x"},
		{"groups", "groups not dividing the channels", func() error { return newConv(withD(func(c *ops.ConvolutionDescriptor) { c.Groups = 4 })) }, ops.ErrGeometry, "4 groups do not divide"},
		{"groups", "fully connected with groups", func() error {
			_, err := ops.NewFullyConnected(dev, withD(func(c *ops.ConvolutionDescriptor) { c.Groups = 2 }))
			return err
		}, ops.ErrGeometry, "fully connected layer has none"},
		{"NaN/Inf", "NaN neuron parameter", func() error {
			return newConv(withD(func(c *ops.ConvolutionDescriptor) { c.Neuron = ops.NeuronDescriptor{Type: ops.NeuronLinear, A: nan} }))
		}, ops.ErrGeometry, "neuron a NaN is not finite"},
		{"NaN/Inf", "infinite PReLU slope", func() error {
			return newConv(withD(func(c *ops.ConvolutionDescriptor) {
				c.Neuron = ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: []float32{0, 0, inf, 0, 0, 0}}
			}))
		}, ops.ErrGeometry, "prelu slope 2 +Inf"},
		{"NaN/Inf", "PReLU slopes of the wrong count", func() error {
			return newConv(withD(func(c *ops.ConvolutionDescriptor) {
				c.Neuron = ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: []float32{1}}
			}))
		}, ops.ErrShape, "1 slopes for 6"},
		{"weights", "weights of the wrong shape", func() error { return conv().Encode(cb, src, img(dev, 6, 4, 3, 3), b, dst) }, ops.ErrShape, "want 6x2x3x3"},
		{"weights", "float16 weights", func() error {
			requireHalf(t, dev)
			return conv().Encode(cb, src, newHalfImage(t, dev, padding.Descriptor{N: 6, C: 2, H: 3, W: 3}, nil), b, dst)
		}, ops.ErrFormat, "weights are float32"},
		{"weights", "weights in a channel view", func() error {
			return conv().Encode(cb, src, must(img(dev, 6, 3, 3, 3).ChannelView(0, 2)), b, dst)
		}, ops.ErrShape, "one run of values"},
		{"weights", "bias of the wrong length", func() error { return conv().Encode(cb, src, w, img(dev, 1, 5, 1, 1), dst) }, ops.ErrShape, "bias"},
		{"weights", "fully connected weights of the wrong length", func() error {
			return fc.Encode(cb, src, img(dev, 3, 255, 1, 1), nil, img(dev, 2, 3, 1, 1))
		}, ops.ErrShape, "rows of 256 values"},
		{"weights", "weight gradient of the wrong shape", func() error { return grad().EncodeWeights(cb, dy, src, img(dev, 6, 2, 3, 2), db) }, ops.ErrShape, "weight gradient"},
		{"weights", "bias gradient of the wrong length", func() error { return grad().EncodeWeights(cb, dy, src, dW, img(dev, 1, 4, 1, 1)) }, ops.ErrShape, "bias gradient"},
		{"shape", "source without the input channels", func() error { return conv().Encode(cb, img(dev, 2, 3, 8, 8), w, b, dst) }, ops.ErrChannelRange, "no 4 channels"},
		{"shape", "destination without the output channels", func() error { return conv().Encode(cb, src, w, b, img(dev, 2, 5, 8, 8)) }, ops.ErrChannelRange, "do not fit"},
		{"shape", "fully connected source of another size", func() error {
			return fc.Encode(cb, img(dev, 2, 4, 7, 8), img(dev, 3, 4, 8, 8), nil, img(dev, 2, 3, 1, 1))
		}, ops.ErrShape, "window"},
		{"shape", "gradient batch sizes differ", func() error { return grad().EncodeData(cb, dy, w, img(dev, 1, 4, 8, 8)) }, ops.ErrShape, "batch size"},
		{"shape", "clip in an explicit gradient form", func() error {
			g := grad()
			g.ClipRect = ops.Region{Width: 2}
			return g.EncodeData(cb, dy, w, dx)
		}, ops.ErrGeometry, "clip rectangle"},
		{"shape", "transpose output padding too large", func() error {
			_, _, err := d.TransposeResultDescriptor(ops.ImageDescriptor{N: 1, C: 4, H: 5, W: 5}, ops.ConvolutionTransposePadding(padding.Pads{}, 1, 0))
			return err
		}, padding.ErrInvalidGeometry, "output padding 1"},
		{"shape", "explicit pads on a transpose", func() error {
			_, _, err := d.TransposeResultDescriptor(ops.ImageDescriptor{N: 1, C: 4, H: 5, W: 5}, padding.Explicit(padding.Pads{}, false, false))
			return err
		}, padding.ErrInvalidGeometry, "reverse kernel"},
		{"shape", "padding leaves nothing", func() error {
			_, _, err := d.ResultDescriptor(ops.ImageDescriptor{N: 1, C: 4, H: 2, W: 2}, padding.WithMethod(padding.Valid))
			return err
		}, padding.ErrEmptyDestination, "Convolution"},
		{"state", "nil state", func() error { return grad().EncodeWithState(cb, dy, src, nil, dx) }, ops.ErrState, "nil gradient state"},
		{"state", "state of a transpose convolution", func() error { return grad().EncodeWithState(cb, dy, src, stT, dx) }, ops.ErrState, "ConvolutionTranspose"},
		{"state", "state of another geometry", func() error {
			g := must(ops.NewConvolutionGradient(dev, withD(func(c *ops.ConvolutionDescriptor) { c.StrideX = 2 })))
			defer g.Close()
			return g.EncodeWithState(cb, dy, src, st, dx)
		}, ops.ErrState, "gradient state of"},
		{"state", "dy not of the forward's size", func() error { return grad().EncodeWithState(cb, img(dev, 2, 6, 8, 7), src, st, dx) }, ops.ErrShape, "forward destination"},
		{"state", "unknown gradient option", func() error {
			g := grad()
			g.GradientOption = 7
			return g.EncodeWithState(cb, dy, src, st, dx)
		}, ops.ErrGeometry, "gradient option 7"},
		{"closed", "closed destination", func() error { return conv().Encode(cb, src, w, b, closed) }, ops.ErrClosed, "destination"},
		{"closed", "closed state", func() error { return grad().EncodeWithState(cb, dy, src, stClosed, dx) }, ops.ErrClosed, "gradient state"},
		{"foreign", "destination on another device", func() error { return conv().Encode(cb, src, w, b, foreign) }, ops.ErrDevice, "another device"},
		{"foreign", "weights on another device", func() error { return conv().Encode(cb, src, img(other, 6, 2, 3, 3), b, dst) }, ops.ErrDevice, "weights"},
		{"aliasing", "destination is the source", func() error {
			k := must(ops.NewConvolution(dev, withD(func(c *ops.ConvolutionDescriptor) { c.OutputFeatureChannels = 4 })))
			defer k.Close()
			return k.Encode(cb, src, img(dev, 4, 2, 3, 3), nil, src)
		}, ops.ErrAlias, "share storage"},
		{"aliasing", "destination view over the source", func() error {
			k := must(ops.NewConvolution(dev, withD(func(c *ops.ConvolutionDescriptor) { c.InputFeatureChannels = 6 })))
			defer k.Close()
			return k.Encode(cb, view, img(dev, 6, 3, 3, 3), nil, must(big.ChannelView(4, 6)))
		}, ops.ErrAlias, "share storage"},
		{"aliasing", "weight gradient into the weights' input", func() error { return grad().EncodeWeights(cb, dy, src, dW, dW) }, ops.ErrShape, "bias gradient"},
		{"aliasing", "dx into dy", func() error {
			k := must(ops.NewConvolutionGradient(dev, withD(func(c *ops.ConvolutionDescriptor) { c.InputFeatureChannels = 6 })))
			defer k.Close()
			return k.EncodeData(cb, dy, img(dev, 6, 3, 3, 3), dy)
		}, ops.ErrAlias, "shares storage"},
		{"device limit", "weights over the storage range", func() error {
			return capK.Encode(cbCapped, img(capped, 1, 16, 4, 4), img(capped, 16, 16, 3, 3), nil, img(capped, 1, 16, 4, 4))
		}, ops.ErrDeviceLimit, "max storage buffer range"},
		{"device limit", "one batch image over the storage range", func() error {
			k := must(ops.NewConvolution(capped, ops.ConvolutionDescriptor{KernelWidth: 1, KernelHeight: 1, InputFeatureChannels: 1, OutputFeatureChannels: 1}))
			defer k.Close()
			return k.Encode(cbCapped, img(capped, 2, 1, 40, 40), img(capped, 1, 1, 1, 1), nil, img(capped, 2, 1, 40, 40))
		}, ops.ErrDeviceLimit, "one batch image"},
		{"nil", "nil device", func() error { _, err := ops.NewConvolution(nil, d); return err }, ops.ErrDevice, "nil device"},
		{"nil", "nil command buffer", func() error { return conv().Encode(nil, src, w, b, dst) }, ops.ErrInvalidImage, "nil command buffer"},
		{"nil", "nil weights", func() error { return conv().Encode(cb, src, nil, b, dst) }, ops.ErrInvalidImage, "weights"},
		{"nil", "zero-value kernel", func() error { return (&ops.Convolution{}).Encode(cb, src, w, b, dst) }, ops.ErrDevice, "constructor"},
		{"nil", "zero-value gradient kernel", func() error { return (&ops.ConvolutionGradient{}).EncodeData(cb, dy, w, dx) }, ops.ErrDevice, "constructor"},
		{"nil", "zero-value transpose", func() error { return (&ops.ConvolutionTranspose{}).Encode(cb, src, w, b, dst) }, ops.ErrDevice, "constructor"},
		{"nil", "zero-value fully connected gradient", func() error {
			return (&ops.FullyConnectedGradient{}).EncodeWeights(cb, dy, src, dW, db)
		}, ops.ErrDevice, "constructor"},
		{"nil", "zero-value state", func() error { return grad().EncodeWithState(cb, dy, src, &ops.ConvolutionGradientState{}, dx) }, ops.ErrState, "not made by a forward encode"},
	}
	classes := map[string]int{}
	for _, tc := range tests {
		t.Run(tc.class+"/"+tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
		})
		classes[tc.class]++
	}
	assert.Equal(t, 0, cb.Commands(), "nothing refused was recorded")
	assert.Equal(t, 0, cbCapped.Commands())
	t.Logf("convolution family: %d bad inputs in %d classes: %v", len(tests), len(classes), classes)
}
