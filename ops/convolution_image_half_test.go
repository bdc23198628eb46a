package ops_test

import (
	"context"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Float16 image GEMMs (forward convolution, data gradient, fully
// connected forward and data gradient) on every tile load their source
// value by value as the 32-bit words holding the values where its binding
// covers whole words (images of NewImage, whose buffers are whole words),
// and as halves where it ends halfway through a word its buffer does not
// hold (images at the end of buffers of an odd number of halves): the two
// agree bit for bit, and with the reference within its tolerance. The
// cases cover each source mode: im2col (forward, a stride with dilation),
// gather (stride-1 data gradient, and a dilated strided one), phases
// (stride-2 data gradient), rows (fully connected), and the quads of a
// pointwise convolution (VEC_B, loaded as words always), each with odd
// sizes so that values fall in both halves of words at every slice
// position.
func TestConvolutionImageHalfWords(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	if !dev.Limits().Float16Storage {
		t.Skip("no float16 storage")
	}
	cases := []struct {
		c    convCase
		quad bool // forward on VEC_B quads
	}{
		{c: convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 5, OutputFeatureChannels: 7,
			StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}, n: 3, h: 9, w: 11,
			pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}},
		{c: convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 2, InputFeatureChannels: 3, OutputFeatureChannels: 5,
			StrideX: 2, StrideY: 1, DilationX: 2, DilationY: 1}, n: 1, h: 13, w: 11,
			pads: padding.Pads{Top: 1, Left: 1, Bottom: 0, Right: 1}, bias: true}},
		{c: convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 3, OutputFeatureChannels: 5,
			StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}, n: 1, h: 9, w: 13,
			pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}}},
		{c: convCase{d: ops.ConvolutionDescriptor{KernelWidth: 1, KernelHeight: 1, InputFeatureChannels: 5, OutputFeatureChannels: 7,
			StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}, n: 3, h: 4, w: 3, bias: true}, quad: true},
	}
	fc := fcCase{n: 7, c: 5, h: 3, w: 3, o: 11, flat: true, bias: true}
	for tile := 0; tile < ops.ConvTileCount(); tile++ {
		t.Run(ops.ConvTileName(tile), func(t *testing.T) {
			force := func(k any) {
				if !ops.ConvForcePath(k, "tiled", tile) {
					t.Skipf("%s does not run tile %s", dev.Info().Name, ops.ConvTileName(tile))
				}
			}
			r := rand.New(rand.NewSource(int64(47 + tile)))
			for _, c := range cases {
				convHalfImageCheck(t, dev, c.c, c.quad, r, force)
			}
			fcHalfImageCheck(t, dev, fc, r, force)
		})
	}
}

// halfImages returns a float16 image of data made by NewImage and one at
// the end of a buffer of exactly its values; data must be an odd number
// of values (so that the second's binding ends halfway through a word)
// unless even is set.
func halfImages(t *testing.T, dev *vk.Device, pd padding.Descriptor, data []float32, even bool) [2]*ops.Image {
	t.Helper()
	require.True(t, even || len(data)%2 == 1, "%v: need an odd number of values", pd)
	buf, err := dev.NewBuffer(uint64(len(data))*2, "odd float16 image")
	require.NoError(t, err)
	t.Cleanup(func() { buf.Close() })
	im, err := ops.NewImageOn(buf, 0, ops.ImageDescriptor{N: pd.N, C: pd.C, H: pd.H, W: pd.W, Format: ops.Float16})
	require.NoError(t, err)
	t.Cleanup(func() { im.Close() })
	require.NoError(t, im.Write(context.Background(), data))
	return [2]*ops.Image{newHalfImage(t, dev, pd, data), im}
}

// halfRun runs enc over both sources into a fresh float16 destination of
// pd each and returns the two results.
func halfRun(t *testing.T, dev *vk.Device, src [2]*ops.Image, pd padding.Descriptor, enc func(cb *vk.CommandBuffer, src, dst *ops.Image) error) [2][]float32 {
	t.Helper()
	var out [2][]float32
	for i, s := range src {
		dst := newHalfImage(t, dev, pd, filled(pd.N*pd.C*pd.H*pd.W, poisonValue))
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return enc(cb, s, dst) }))
		var err error
		out[i], err = dst.Read(context.Background())
		require.NoError(t, err)
	}
	return out
}

// convHalfImageCheck runs c forward and its data gradient over float16
// sources of both kinds and compares.
func convHalfImageCheck(t *testing.T, dev *vk.Device, c convCase, quad bool, r *rand.Rand, force func(any)) {
	t.Helper()
	d := c.d
	k, err := ops.NewConvolution(dev, d)
	require.NoError(t, err)
	defer k.Close()
	g, err := ops.NewConvolutionGradient(dev, d)
	require.NoError(t, err)
	defer g.Close()
	force(k)
	force(g)
	cd := c.data(r)
	cd.x, cd.dy = toHalf(cd.x), toHalf(cd.dy)
	xd := padding.Descriptor{N: c.n, C: d.InputFeatureChannels, H: c.h, W: c.w}
	dyd := padding.Descriptor{N: c.n, C: d.OutputFeatureChannels, H: cd.oh, W: cd.ow}
	w, b := convParams(t, dev, c, cd)
	kx, ky := (d.KernelWidth-1)*d.DilationX+1, (d.KernelHeight-1)*d.DilationY+1
	k.Offset = ops.Offset{X: kx/2 - c.pads.Left, Y: ky/2 - c.pads.Top} // PyTorch's pads, as EncodeNew sets it
	y := halfRun(t, dev, halfImages(t, dev, xd, cd.x, quad), dyd, func(cb *vk.CommandBuffer, src, dst *ops.Image) error {
		return k.Encode(cb, src, w, b, dst)
	})
	g.SetForwardOffset(kx/2-c.pads.Left, ky/2-c.pads.Top)
	dx := halfRun(t, dev, halfImages(t, dev, dyd, cd.dy, quad), xd, func(cb *vk.CommandBuffer, dy, dst *ops.Image) error {
		return g.EncodeData(cb, dy, w, dst)
	})
	words, halves, quads := ops.ConvImageWordLoads(k)
	if quad {
		require.True(t, quads, "%v: forward without quad loads", c)
	} else {
		require.True(t, words && halves, "%v: forward word loads %v, half loads %v", c, words, halves)
		words, halves, _ = ops.ConvImageWordLoads(g)
		require.True(t, words && halves, "%v: data gradient word loads %v, half loads %v", c, words, halves)
	}
	require.Equal(t, y[0], y[1], "forward of word and half loads %v", c)
	require.Equal(t, dx[0], dx[1], "dx of word and half loads %v", c)
	want, mag := convRefForward(t, c, cd)
	require.NoError(t, convCompare(y[0], want, mag, d.InputFeatureChannels*d.KernelWidth*d.KernelHeight, 1, true), "forward %v", c)
	rdx, mdx, _, _, _, _ := convRefGrads(t, c, cd)
	require.NoError(t, convCompare(dx[0], rdx, mdx, d.OutputFeatureChannels*d.KernelWidth*d.KernelHeight, 1, true), "dx %v", c)
}

// fcHalfImageCheck runs the fully connected layer c forward and its data
// gradient over float16 sources of both kinds and compares.
func fcHalfImageCheck(t *testing.T, dev *vk.Device, c fcCase, r *rand.Rand, force func(any)) {
	t.Helper()
	k, err := ops.NewFullyConnected(dev, c.desc())
	require.NoError(t, err)
	defer k.Close()
	gk, err := ops.NewFullyConnectedGradient(dev, c.desc())
	require.NoError(t, err)
	defer gk.Close()
	force(k)
	force(gk)
	kin := c.c * c.h * c.w
	x, dyv := toHalf(randomData(r, c.n*kin)), toHalf(randomData(r, c.n*c.o))
	wv := randomData(r, c.o*kin)
	bv := randomData(r, c.o)
	w := newImage(t, dev, c.weightsShape(), wv)
	b := newImage(t, dev, padding.Descriptor{N: 1, C: c.o, H: 1, W: 1}, bv)
	xd := padding.Descriptor{N: c.n, C: c.c, H: c.h, W: c.w}
	yd := padding.Descriptor{N: c.n, C: c.o, H: 1, W: 1}
	y := halfRun(t, dev, halfImages(t, dev, xd, x, false), yd, func(cb *vk.CommandBuffer, src, dst *ops.Image) error {
		return k.Encode(cb, src, w, b, dst)
	})
	dx := halfRun(t, dev, halfImages(t, dev, yd, dyv, false), xd, func(cb *vk.CommandBuffer, dy, dst *ops.Image) error {
		return gk.EncodeData(cb, dy, w, dst)
	})
	for _, kk := range []any{k, gk} {
		words, halves, _ := ops.ConvImageWordLoads(kk)
		require.True(t, words && halves, "%v: word loads %v, half loads %v", c, words, halves)
	}
	require.Equal(t, y[0], y[1], "forward of word and half loads %v", c)
	require.Equal(t, dx[0], dx[1], "dx of word and half loads %v", c)
	x64, w64 := conv64(t, c.n, c.c, c.h, c.w, x), conv64(t, c.o, c.c, c.h, c.w, wv)
	b64, ab64 := conv64(t, 1, c.o, 1, 1, bv).Data, ref.Abs(conv64(t, 1, c.o, 1, 1, bv)).Data
	want, mag := ref.NewTensor[float64](c.n, c.o, 1, 1), ref.NewTensor[float64](c.n, c.o, 1, 1)
	require.NoError(t, ref.FullyConnected(x64, w64, b64, ref.Neuron{}, &want))
	require.NoError(t, ref.FullyConnected(ref.Abs(x64), ref.Abs(w64), ab64, ref.Neuron{}, &mag))
	require.NoError(t, convCompare(y[0], want.Data, mag.Data, kin, 1, true), "forward %v", c)
	dy64 := conv64(t, c.n, c.o, 1, 1, dyv)
	rdx, mdx := ref.NewTensor[float64](c.n, c.c, c.h, c.w), ref.NewTensor[float64](c.n, c.c, c.h, c.w)
	rdw, mdw := ref.NewTensor[float64](c.o, c.c, c.h, c.w), ref.NewTensor[float64](c.o, c.c, c.h, c.w)
	rdb, mdb := make([]float64, c.o), make([]float64, c.o)
	require.NoError(t, ref.FullyConnectedGrad(x64, w64, dy64, &rdx, &rdw, rdb))
	require.NoError(t, ref.FullyConnectedGrad(ref.Abs(x64), ref.Abs(w64), ref.Abs(dy64), &mdx, &mdw, mdb))
	require.NoError(t, convCompare(dx[0], rdx.Data, mdx.Data, c.o, 1, true), "dx %v", c)
}
