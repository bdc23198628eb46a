package ops_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// fcCase is a fully connected layer: n images of c x h x w to o outputs,
// weights given as o x (c*h*w) x 1 x 1 (flat) or o x c x h x w.
type fcCase struct {
	n, c, h, w, o int
	flat, bias    bool
	neuron        ops.NeuronDescriptor
}

func (c fcCase) desc() ops.ConvolutionDescriptor {
	return ops.ConvolutionDescriptor{KernelWidth: c.w, KernelHeight: c.h, InputFeatureChannels: c.c, OutputFeatureChannels: c.o, Neuron: c.neuron}
}

func (c fcCase) String() string {
	return fmt.Sprintf("fc %dx%dx%dx%d -> %d flat %v bias %v %v", c.n, c.c, c.h, c.w, c.o, c.flat, c.bias, c.neuron)
}

func (c fcCase) weightsShape() padding.Descriptor {
	if c.flat {
		return padding.Descriptor{N: c.o, C: c.c * c.h * c.w, H: 1, W: 1}
	}
	return padding.Descriptor{N: c.o, C: c.c, H: c.h, W: c.w}
}

// fcCheck runs the layer forward (EncodeNew) and its explicit gradients
// and compares with the reference.
func fcCheck(t *testing.T, dev *vk.Device, c fcCase, r *rand.Rand, half bool, force func(any)) {
	t.Helper()
	d := c.desc()
	k, err := ops.NewFullyConnected(dev, d)
	require.NoError(t, err)
	defer k.Close()
	gd := d
	gd.Neuron = ops.NeuronDescriptor{}
	gk, err := ops.NewFullyConnectedGradient(dev, gd)
	require.NoError(t, err)
	defer gk.Close()
	if force != nil {
		force(k)
		force(gk)
	}
	kin := c.c * c.h * c.w
	x := randomData(r, c.n*kin)
	wv := randomData(r, c.o*kin)
	for i := range wv {
		wv[i] *= 0.3
	}
	dyv := randomData(r, c.n*c.o)
	if half {
		x, dyv = toHalf(x), toHalf(dyv)
	}
	var bv []float32
	var b *ops.Image
	if c.bias {
		bv = randomData(r, c.o)
		b = newImage(t, dev, padding.Descriptor{N: 1, C: c.o, H: 1, W: 1}, bv)
	}
	src := convNewImage(t, dev, half, c.n, c.c, c.h, c.w, x)
	w := newImage(t, dev, c.weightsShape(), wv)
	var dst *ops.Image
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		dst, err = k.EncodeNew(cb, src, w, b)
		return err
	}), c)
	defer dst.Close()
	got, err := dst.Read(context.Background())
	require.NoError(t, err)
	x64, w64 := conv64(t, c.n, c.c, c.h, c.w, x), conv64(t, c.o, c.c, c.h, c.w, wv)
	var b64, ab64 []float64
	if c.bias {
		b64 = conv64(t, 1, c.o, 1, 1, bv).Data
		ab64 = ref.Abs(conv64(t, 1, c.o, 1, 1, bv)).Data
	}
	want := ref.NewTensor[float64](c.n, c.o, 1, 1)
	require.NoError(t, ref.FullyConnected(x64, w64, b64, convRefNeuron(c.neuron), &want))
	mag := ref.NewTensor[float64](c.n, c.o, 1, 1)
	require.NoError(t, ref.FullyConnected(ref.Abs(x64), ref.Abs(w64), ab64, ref.Neuron{}, &mag))
	require.NoError(t, convCompare(got, want.Data, mag.Data, kin, convSlope(c.neuron), half), "forward %v", c)

	dy := convNewImage(t, dev, half, c.n, c.o, 1, 1, dyv)
	dx := convNewImage(t, dev, half, c.n, c.c, c.h, c.w, nil)
	dW := newImage(t, dev, c.weightsShape(), nil)
	db := newImage(t, dev, padding.Descriptor{N: 1, C: c.o, H: 1, W: 1}, nil)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if err := gk.EncodeData(cb, dy, w, dx); err != nil {
			return err
		}
		return gk.EncodeWeights(cb, dy, src, dW, db)
	}), c)
	dy64 := conv64(t, c.n, c.o, 1, 1, dyv)
	rdx, mdx := ref.NewTensor[float64](c.n, c.c, c.h, c.w), ref.NewTensor[float64](c.n, c.c, c.h, c.w)
	rdw, mdw := ref.NewTensor[float64](c.o, c.c, c.h, c.w), ref.NewTensor[float64](c.o, c.c, c.h, c.w)
	rdb, mdb := make([]float64, c.o), make([]float64, c.o)
	require.NoError(t, ref.FullyConnectedGrad(x64, w64, dy64, &rdx, &rdw, rdb))
	require.NoError(t, ref.FullyConnectedGrad(ref.Abs(x64), ref.Abs(w64), ref.Abs(dy64), &mdx, &mdw, mdb))
	ctx := context.Background()
	gdx, err := dx.Read(ctx)
	require.NoError(t, err)
	gdw, err := dW.Read(ctx)
	require.NoError(t, err)
	gdb, err := db.Read(ctx)
	require.NoError(t, err)
	require.NoError(t, convCompare(gdx, rdx.Data, mdx.Data, c.o, 1, half), "dx %v", c)
	require.NoError(t, convCompare(gdw, rdw.Data, mdw.Data, c.n, 1, false), "dW %v", c)
	require.NoError(t, convCompare(gdb, rdb, mdb, c.n, 1, false), "db %v", c)
}

// Fully connected layers (nn.Linear after a flatten) and their gradients
// against the reference: both weight layouts, odd sizes, neurons, LeNet's
// layers, float16.
func TestFullyConnectedMatchesReference(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(20240603))
	cases := []fcCase{
		{n: 1, c: 1, h: 1, w: 1, o: 1},
		{n: 3, c: 5, h: 3, w: 2, o: 7, bias: true},
		{n: 2, c: 16, h: 1, w: 1, o: 10, flat: true, bias: true, neuron: ops.NewNeuronDescriptor(ops.NeuronReLU)},
		{n: 5, c: 3, h: 5, w: 5, o: 13, flat: true, bias: true, neuron: ops.NeuronDescriptor{Type: ops.NeuronTanH, A: 1, B: 1}},
		{n: 64, c: 256, h: 1, w: 1, o: 120, flat: true, bias: true, neuron: ops.NewNeuronDescriptor(ops.NeuronReLU)}, // LeNet
		{n: 64, c: 16, h: 4, w: 4, o: 84, bias: true},
		{n: 7, c: 84, h: 1, w: 1, o: 10, flat: true, bias: true},
	}
	for i, c := range cases {
		half := i == 3 && dev.Limits().Float16Storage
		t.Run(fmt.Sprint(i), func(t *testing.T) { fcCheck(t, dev, c, r, half, nil) })
	}
}

// fcDataCheck runs only the fully connected data gradient of c (forced
// with force) and compares it with the reference.
func fcDataCheck(t *testing.T, dev *vk.Device, c fcCase, r *rand.Rand, force func(any)) {
	t.Helper()
	d := c.desc()
	gk, err := ops.NewFullyConnectedGradient(dev, d)
	require.NoError(t, err)
	defer gk.Close()
	force(gk)
	kin := c.c * c.h * c.w
	wv, dyv := randomData(r, c.o*kin), randomData(r, c.n*c.o)
	w := newImage(t, dev, c.weightsShape(), wv)
	dy := newImage(t, dev, padding.Descriptor{N: c.n, C: c.o, H: 1, W: 1}, dyv)
	dx := newImage(t, dev, padding.Descriptor{N: c.n, C: c.c, H: c.h, W: c.w}, nil)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return gk.EncodeData(cb, dy, w, dx) }), c)
	x64 := ref.NewTensor[float64](c.n, c.c, c.h, c.w)
	w64, dy64 := conv64(t, c.o, c.c, c.h, c.w, wv), conv64(t, c.n, c.o, 1, 1, dyv)
	rdx, mdx := ref.NewTensor[float64](c.n, c.c, c.h, c.w), ref.NewTensor[float64](c.n, c.c, c.h, c.w)
	require.NoError(t, ref.FullyConnectedGrad(x64, w64, dy64, &rdx, nil, nil))
	require.NoError(t, ref.FullyConnectedGrad(x64, ref.Abs(w64), ref.Abs(dy64), &mdx, nil, nil))
	got, err := dx.Read(context.Background())
	require.NoError(t, err)
	require.NoError(t, convCompare(got, rdx.Data, mdx.Data, c.o, 1, false), "dx %v", c)
}

// A fully connected layer of a batch of 32 over 600 inputs to 520 outputs splits the K
// of its forward and data gradient by default (its tiles would leave
// most multiprocessors idle: ops/gemm.go's fewTileSplits) and matches
// the reference, in float32 and float16, with a bias and a fused neuron.
func TestFullyConnectedSplitsFewTiles(t *testing.T) {
	dev := vktest.Open(t)
	c := fcCase{n: 32, c: 150, h: 2, w: 2, o: 520, bias: true, neuron: ops.NewNeuronDescriptor(ops.NeuronReLU)}
	for _, half := range []bool{false, true} {
		if half && !dev.Limits().Float16Storage {
			continue
		}
		var kernels []any
		fcCheck(t, dev, c, rand.New(rand.NewSource(51)), half, func(k any) { kernels = append(kernels, k) })
		require.Len(t, kernels, 2)
		for _, k := range kernels {
			require.True(t, ops.ConvSplitK(k), "%T, float16 %v: K split", k, half)
		}
	}
}
