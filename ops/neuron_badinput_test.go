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

// neuronBadCase is one row of the bad-input tables of the neuron, softmax
// and arithmetic kernels: the call, its sentinel and a part of its
// message (naming the kernel, image or value at fault).
type neuronBadCase struct {
	class, name string
	call        func() error
	want        error
	msg         string
}

func neuronRunBad(t *testing.T, cb *vk.CommandBuffer, cases []neuronBadCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.class+"/"+c.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = c.call() })
			require.ErrorIs(t, err, c.want)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
	assert.Equal(t, 0, cb.Commands(), "nothing refused is recorded")
}

// neuronBadImages are the images the bad-input tables use.
type neuronBadImages struct {
	dev, other             *vk.Device
	cb                     *vk.CommandBuffer
	a, b, c, wrong, half   *ops.Image
	closed, foreign, viewA *ops.Image
	sd                     padding.Descriptor
}

func newNeuronBadImages(t *testing.T) *neuronBadImages {
	dev := vktest.Open(t)
	other := vktest.Open(t)
	sd := padding.Descriptor{N: 2, C: 3, H: 4, W: 4}
	im := &neuronBadImages{dev: dev, other: other, sd: sd}
	im.a, im.b, im.c = newImage(t, dev, sd, nil), newImage(t, dev, sd, nil), newImage(t, dev, sd, nil)
	im.wrong = newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 4, W: 5}, nil)
	if dev.Limits().Float16Storage {
		im.half = newHalfImage(t, dev, sd, nil)
	}
	im.closed = newImage(t, dev, sd, nil)
	require.NoError(t, im.closed.Close())
	im.foreign = newImage(t, other, sd, nil)
	whole := newImage(t, dev, padding.Descriptor{N: 2, C: 6, H: 4, W: 4}, nil)
	im.viewA = must(whole.ChannelView(0, 3))
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	t.Cleanup(func() { cb.Close() })
	im.cb = cb
	return im
}

// TestNeuronBadInput: every class of bad input to Neuron and
// NeuronGradient, each with its sentinel; nothing panics, nothing refused
// is recorded.
func TestNeuronBadInput(t *testing.T) {
	im := newNeuronBadImages(t)
	dev, cb := im.dev, im.cb
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	relu := must(ops.NewNeuron(dev, ops.NewNeuronDescriptor(ops.NeuronReLU)))
	grad := must(ops.NewNeuronGradient(dev, ops.NewNeuronDescriptor(ops.NeuronReLU)))
	t.Cleanup(func() { grad.Close() })
	prelu2 := must(ops.NewNeuron(dev, ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: []float32{1, 2}}))
	t.Cleanup(func() { prelu2.Close() })
	bare := must(ops.NewNeuron(dev, ops.NeuronDescriptor{Type: ops.NeuronPReLU}))
	bareGrad := must(ops.NewNeuronGradient(dev, ops.NeuronDescriptor{Type: ops.NeuronPReLU}))
	t.Cleanup(func() { bareGrad.Close() })
	slopes := newImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, []float32{1, 2, 3})
	withSlopes := func(s *ops.Image) *ops.Neuron {
		k := must(ops.NewNeuron(dev, ops.NeuronDescriptor{Type: ops.NeuronPReLU}))
		k.Slopes = s
		return k
	}
	newN := func(d ops.NeuronDescriptor) error {
		k, err := ops.NewNeuron(dev, d)
		if err == nil {
			k.Close()
		}
		return err
	}
	ds := newImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, nil)
	cases := []neuronBadCase{
		{"device", "nil device", func() error { _, err := ops.NewNeuron(nil, ops.NeuronDescriptor{}); return err }, ops.ErrDevice, "nil device"},
		{"device", "nil device gradient", func() error { _, err := ops.NewNeuronGradient(nil, ops.NeuronDescriptor{}); return err }, ops.ErrDevice, "NeuronGradient"},
		{"device", "zero kernel", func() error { return (&ops.Neuron{}).Encode(cb, im.a, im.b) }, ops.ErrDevice, "not made by its constructor"},
		{"device", "zero gradient kernel", func() error { return (&ops.NeuronGradient{}).Encode(cb, im.a, im.b, im.c) }, ops.ErrDevice, "not made by its constructor"},
		{"type", "unknown neuron type", func() error { return newN(ops.NeuronDescriptor{Type: 99}) }, ops.ErrGeometry, "unknown neuron type 99"},
		{"type", "negative neuron type", func() error { return newN(ops.NeuronDescriptor{Type: -1}) }, ops.ErrGeometry, "unknown neuron type -1"},
		{"NaN/Inf", "NaN a", func() error { return newN(ops.NeuronDescriptor{Type: ops.NeuronReLU, A: nan}) }, ops.ErrGeometry, "neuron a NaN is not finite"},
		{"NaN/Inf", "infinite b", func() error { return newN(ops.NeuronDescriptor{Type: ops.NeuronLinear, A: 1, B: inf}) }, ops.ErrGeometry, "neuron b +Inf is not finite"},
		{"NaN/Inf", "infinite c", func() error { return newN(ops.NeuronDescriptor{Type: ops.NeuronPower, A: 1, C: -inf}) }, ops.ErrGeometry, "neuron c -Inf"},
		{"NaN/Inf", "NaN slope", func() error { return newN(ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: []float32{1, nan}}) }, ops.ErrGeometry, "prelu slope 1"},
		{"parameter", "base 1", func() error { return newN(ops.NeuronDescriptor{Type: ops.NeuronLogarithm, A: 1, C: 1}) }, ops.ErrGeometry, "base c = 1"},
		{"parameter", "negative base", func() error { return newN(ops.NeuronDescriptor{Type: ops.NeuronExponential, A: 1, C: -2}) }, ops.ErrGeometry, "base c = -2"},
		{"parameter", "slopes for relu", func() error { return newN(ops.NeuronDescriptor{Type: ops.NeuronReLU, PReLU: []float32{1}}) }, ops.ErrGeometry, "prelu slopes given for a relu"},
		{"prelu", "list length != C", func() error { return prelu2.Encode(cb, im.a, im.b) }, ops.ErrShape, "want 1x3x1x1"},
		{"prelu", "list length != C, shape function", func() error {
			_, err := ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: []float32{1, 2}}.ResultDescriptor(ops.ImageDescriptor{N: 1, C: 3, H: 2, W: 2})
			return err
		}, ops.ErrShape, "prelu has 2 slopes for 3 feature channels"},
		{"prelu", "no slopes", func() error { return bare.Encode(cb, im.a, im.b) }, ops.ErrGeometry, "no slopes"},
		{"prelu", "slopes of the wrong shape", func() error { return withSlopes(im.b).Encode(cb, im.a, im.c) }, ops.ErrShape, "one slope per feature channel"},
		{"prelu", "closed slopes", func() error { return withSlopes(im.closed).Encode(cb, im.a, im.b) }, ops.ErrClosed, "slopes"},
		{"prelu", "slopes of another device", func() error { return withSlopes(im.foreign).Encode(cb, im.a, im.b) }, ops.ErrDevice, "slopes"},
		{"prelu", "slope gradient of relu", func() error { return grad.EncodeSlopeGradient(cb, im.a, im.b, ds) }, ops.ErrGeometry, "needs a prelu"},
		{"prelu", "slope gradient of the wrong shape", func() error { return bareGrad.EncodeSlopeGradient(cb, im.a, im.b, im.c) }, ops.ErrShape, "want 1x3x1x1"},
		{"prelu", "slope gradient into dy", func() error {
			return bareGrad.EncodeSlopeGradient(cb, slopes, slopes, slopes)
		}, ops.ErrAlias, "shares storage"},
		{"shape", "destination of another shape", func() error { return relu.Encode(cb, im.a, im.wrong) }, ops.ErrShape, "differ in shape"},
		{"shape", "gradient of another shape", func() error { return grad.Encode(cb, im.wrong, im.a, im.b) }, ops.ErrShape, "differ in shape"},
		{"shape", "slope gradient sources of two shapes", func() error { return bareGrad.EncodeSlopeGradient(cb, im.wrong, im.a, ds) }, ops.ErrShape, "differ in shape"},
		{"nil", "nil command buffer", func() error { return relu.Encode(nil, im.a, im.b) }, ops.ErrInvalidImage, "nil command buffer"},
		{"nil", "nil source", func() error { return relu.Encode(cb, nil, im.b) }, ops.ErrInvalidImage, "nil source"},
		{"nil", "nil dx", func() error { return grad.Encode(cb, im.a, im.b, nil) }, ops.ErrInvalidImage, "nil destination gradient"},
		{"nil", "nil slope gradient", func() error { return bareGrad.EncodeSlopeGradient(cb, im.a, im.b, nil) }, ops.ErrInvalidImage, "nil slope gradient"},
		{"closed", "closed destination", func() error { return relu.Encode(cb, im.a, im.closed) }, ops.ErrClosed, "destination"},
		{"foreign", "source of another device", func() error { return relu.Encode(cb, im.foreign, im.b) }, ops.ErrDevice, "another device"},
		{"aliasing", "in place", func() error { return relu.Encode(cb, im.a, im.a) }, ops.ErrAlias, "shares storage"},
		{"aliasing", "into a view of the source", func() error {
			v := must(im.viewA.ChannelView(0, 3))
			return relu.Encode(cb, im.viewA, v)
		}, ops.ErrAlias, "shares storage"},
		{"aliasing", "dx into dy", func() error { return grad.Encode(cb, im.a, im.b, im.a) }, ops.ErrAlias, "shares storage"},
		{"aliasing", "dx into the source", func() error { return grad.Encode(cb, im.a, im.b, im.b) }, ops.ErrAlias, "shares storage"},
		{"aliasing", "destination over the slopes", func() error {
			buf := must(dev.NewBuffer(2*3*4*4*4, "shared"))
			t.Cleanup(func() { buf.Close() })
			dst := must(ops.NewImageOn(buf, 0, ops.ImageDescriptor{N: 2, C: 3, H: 4, W: 4}))
			return withSlopes(must(ops.NewImageOn(buf, 16, ops.ImageDescriptor{N: 1, C: 3, H: 1, W: 1}))).Encode(cb, im.a, dst)
		}, ops.ErrAlias, "shares storage with the slopes"},
	}
	if im.half != nil {
		cases = append(cases,
			neuronBadCase{"format", "float16 destination of a float32 source", func() error { return relu.Encode(cb, im.a, im.half) }, ops.ErrFormat, "share a format"},
			neuronBadCase{"format", "float16 slopes", func() error {
				return withSlopes(newHalfImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, nil)).Encode(cb, im.a, im.b)
			}, ops.ErrFormat, "parameters are float32"},
			neuronBadCase{"format", "float16 slope gradient", func() error {
				return bareGrad.EncodeSlopeGradient(cb, im.a, im.b, newHalfImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, nil))
			}, ops.ErrFormat, "parameters are float32"})
	}
	neuronRunBad(t, cb, cases)
}

// TestSoftMaxBadInput: bad input to the four softmax kernels.
func TestSoftMaxBadInput(t *testing.T) {
	im := newNeuronBadImages(t)
	dev, cb := im.dev, im.cb
	sm := must(ops.NewSoftMax(dev))
	lg := must(ops.NewLogSoftMaxGradient(dev))
	cases := []neuronBadCase{
		{"device", "nil device", func() error { _, err := ops.NewSoftMax(nil); return err }, ops.ErrDevice, "SoftMax: nil device"},
		{"device", "nil device log", func() error { _, err := ops.NewLogSoftMax(nil); return err }, ops.ErrDevice, "LogSoftMax"},
		{"device", "nil device gradient", func() error { _, err := ops.NewSoftMaxGradient(nil); return err }, ops.ErrDevice, "SoftMaxGradient"},
		{"device", "zero kernel", func() error { return (&ops.SoftMax{}).Encode(cb, im.a, im.b) }, ops.ErrDevice, "not made by its constructor"},
		{"shape", "destination of another shape", func() error { return sm.Encode(cb, im.a, im.wrong) }, ops.ErrShape, "differ in shape"},
		{"shape", "forward result of another shape", func() error { return lg.Encode(cb, im.a, im.wrong, im.b) }, ops.ErrShape, "differ in shape"},
		{"shape", "shape function of an empty image", func() error { _, err := ops.SoftMaxResultDescriptor(ops.ImageDescriptor{N: 1}); return err }, ops.ErrInvalidImage, "< 1"},
		{"nil", "nil command buffer", func() error { return sm.Encode(nil, im.a, im.b) }, ops.ErrInvalidImage, "nil command buffer"},
		{"nil", "nil forward result", func() error { return lg.Encode(cb, im.a, nil, im.b) }, ops.ErrInvalidImage, "nil forward result"},
		{"closed", "closed source", func() error { return sm.Encode(cb, im.closed, im.b) }, ops.ErrClosed, "source"},
		{"foreign", "destination of another device", func() error { return sm.Encode(cb, im.a, im.foreign) }, ops.ErrDevice, "another device"},
		{"aliasing", "in place", func() error { return sm.Encode(cb, im.a, im.a) }, ops.ErrAlias, "shares storage"},
		{"aliasing", "dx into y", func() error { return lg.Encode(cb, im.a, im.b, im.b) }, ops.ErrAlias, "shares storage"},
	}
	if im.half != nil {
		cases = append(cases, neuronBadCase{"format", "mixed formats", func() error { return lg.Encode(cb, im.a, im.half, im.b) }, ops.ErrFormat, "share a format"})
	}
	neuronRunBad(t, cb, cases)
}

// TestArithmeticBadInput: bad input to Arithmetic, ArithmeticGradient and
// their shape function.
func TestArithmeticBadInput(t *testing.T) {
	im := newNeuronBadImages(t)
	dev, cb := im.dev, im.cb
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	def := ops.NewArithmeticDescriptor(ops.ArithmeticAdd)
	with := func(f func(d *ops.ArithmeticDescriptor)) ops.ArithmeticDescriptor {
		d := def
		f(&d)
		return d
	}
	newA := func(d ops.ArithmeticDescriptor) error { _, err := ops.NewArithmetic(dev, d); return err }
	add := must(ops.NewArithmetic(dev, def))
	gx := must(ops.NewArithmeticGradient(dev, def, false))
	t.Cleanup(func() { gx.Close() })
	gy := must(ops.NewArithmeticGradient(dev, def, true))
	t.Cleanup(func() { gy.Close() })
	perChannel := newImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, nil)
	desc := func(n, c, h, w int) ops.ImageDescriptor { return ops.ImageDescriptor{N: n, C: c, H: h, W: w} }
	cases := []neuronBadCase{
		{"device", "nil device", func() error { _, err := ops.NewArithmetic(nil, def); return err }, ops.ErrDevice, "Arithmetic(add): nil device"},
		{"device", "nil device gradient", func() error { _, err := ops.NewArithmeticGradient(nil, def, true); return err }, ops.ErrDevice, "ArithmeticGradient(add, secondary)"},
		{"device", "zero kernel", func() error { return (&ops.Arithmetic{}).Encode(cb, im.a, im.b, im.c) }, ops.ErrDevice, "not made by its constructor"},
		{"device", "zero gradient kernel", func() error { return (&ops.ArithmeticGradient{}).Encode(cb, im.a, im.b, im.c, im.wrong) }, ops.ErrDevice, "not made by its constructor"},
		{"op", "unknown op", func() error { return newA(with(func(d *ops.ArithmeticDescriptor) { d.Op = 7 })) }, ops.ErrGeometry, "unknown arithmetic op 7"},
		{"op", "unknown op name", func() error { _, err := ops.ParseArithmeticOp("power"); return err }, ops.ErrGeometry, `"power"`},
		{"NaN/Inf", "NaN primary scale", func() error { return newA(with(func(d *ops.ArithmeticDescriptor) { d.PrimaryScale = nan })) }, ops.ErrGeometry, "primary scale NaN is not finite"},
		{"NaN/Inf", "infinite secondary scale", func() error { return newA(with(func(d *ops.ArithmeticDescriptor) { d.SecondaryScale = -inf })) }, ops.ErrGeometry, "secondary scale -Inf"},
		{"NaN/Inf", "infinite bias", func() error { return newA(with(func(d *ops.ArithmeticDescriptor) { d.Bias = inf })) }, ops.ErrGeometry, "bias +Inf"},
		{"NaN/Inf", "NaN minimum", func() error { return newA(with(func(d *ops.ArithmeticDescriptor) { d.Minimum = nan })) }, ops.ErrGeometry, "include NaN"},
		{"NaN/Inf", "NaN maximum, gradient", func() error {
			_, err := ops.NewArithmeticGradient(dev, with(func(d *ops.ArithmeticDescriptor) { d.Maximum = nan }), false)
			return err
		}, ops.ErrGeometry, "include NaN"},
		{"NaN/Inf", "NaN set after construction", func() error {
			k := must(ops.NewArithmetic(dev, def))
			k.Bias = nan
			return k.Encode(cb, im.a, im.b, im.c)
		}, ops.ErrGeometry, "bias NaN"},
		{"parameter", "minimum > maximum", func() error {
			return newA(with(func(d *ops.ArithmeticDescriptor) { d.Minimum, d.Maximum = 1, 0 }))
		}, ops.ErrGeometry, "minimum 1 > maximum 0"},
		{"shape", "sources that do not broadcast", func() error { return add.Encode(cb, im.a, im.wrong, im.c) }, ops.ErrShape, "do not broadcast"},
		{"shape", "destination of the wrong shape", func() error { return add.Encode(cb, im.a, perChannel, im.wrong) }, ops.ErrShape, "want the result's shape 2x3x4x4"},
		{"shape", "broadcast destination", func() error { return add.Encode(cb, im.a, im.b, perChannel) }, ops.ErrShape, "want the result's shape"},
		{"shape", "shape function", func() error { _, err := ops.ArithmeticResultDescriptor(desc(2, 3, 4, 4), desc(2, 2, 4, 4)); return err }, ops.ErrShape, "2x3x4x4 and secondary 2x2x4x4 do not broadcast"},
		{"shape", "shape function of an empty image", func() error { _, err := ops.ArithmeticResultDescriptor(desc(2, 3, 0, 4), desc(1, 1, 1, 1)); return err }, ops.ErrInvalidImage, "height H = 0"},
		{"shape", "gradient dy of the wrong shape", func() error { return gx.Encode(cb, im.wrong, im.a, im.b, im.c) }, ops.ErrShape, "source gradient"},
		{"shape", "gradient of a broadcast source into the result's shape", func() error {
			return gy.Encode(cb, im.a, im.b, perChannel, im.c)
		}, ops.ErrShape, "want the secondary source's shape 1x3x1x1"},
		{"nil", "nil command buffer", func() error { return add.Encode(nil, im.a, im.b, im.c) }, ops.ErrInvalidImage, "nil command buffer"},
		{"nil", "nil secondary", func() error { return add.Encode(cb, im.a, nil, im.c) }, ops.ErrInvalidImage, "nil secondary"},
		{"nil", "nil gradient source", func() error { return gx.Encode(cb, im.a, nil, im.b, im.c) }, ops.ErrInvalidImage, "nil primary"},
		{"closed", "closed primary", func() error { return add.Encode(cb, im.closed, im.b, im.c) }, ops.ErrClosed, "primary"},
		{"foreign", "secondary of another device", func() error { return add.Encode(cb, im.a, im.foreign, im.c) }, ops.ErrDevice, "another device"},
		{"aliasing", "into the primary", func() error { return add.Encode(cb, im.a, im.b, im.a) }, ops.ErrAlias, "shares storage"},
		{"aliasing", "into a view of the secondary", func() error {
			whole := newImage(t, dev, padding.Descriptor{N: 2, C: 6, H: 4, W: 4}, nil)
			return add.Encode(cb, im.a, must(whole.ChannelView(0, 3)), must(whole.ChannelView(2, 3)))
		}, ops.ErrAlias, "shares storage"},
		{"aliasing", "gradient into dy", func() error { return gx.Encode(cb, im.a, im.b, im.c, im.a) }, ops.ErrAlias, "shares storage"},
	}
	if im.half != nil {
		cases = append(cases,
			neuronBadCase{"format", "mixed formats", func() error { return add.Encode(cb, im.a, im.half, im.c) }, ops.ErrFormat, "share a format"},
			neuronBadCase{"format", "shape function of mixed formats", func() error {
				_, err := ops.ArithmeticResultDescriptor(desc(1, 1, 1, 1), ops.ImageDescriptor{N: 1, C: 1, H: 1, W: 1, Format: ops.Float16})
				return err
			}, ops.ErrFormat, "float16"})
	}
	neuronRunBad(t, cb, cases)
}
