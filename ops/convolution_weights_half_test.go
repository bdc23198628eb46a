package ops_test

import (
	"context"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Float16 weight gradients on every tile load their operands as the 32-bit
// words holding them where both bindings cover whole words (images of
// NewImage, whose buffers are whole words), and as halves where a binding
// ends halfway through a word its buffer does not hold (images at the end
// of buffers of an odd number of halves): the two agree bit for bit, and
// with the reference within the float32 sums' tolerance. The cases have
// odd sizes, so that values fall in both halves of words at every slice
// position, a stride with dilation, and the bias gradient the tiles fuse;
// a fully connected layer's gradient runs the words of MODE 1.
func TestConvolutionWeightsHalfWords(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	if !dev.Limits().Float16Storage {
		t.Skip("no float16 storage")
	}
	cases := []convCase{
		{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 5, OutputFeatureChannels: 7,
			StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}, n: 3, h: 9, w: 11,
			pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true},
		{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 2, InputFeatureChannels: 3, OutputFeatureChannels: 5,
			StrideX: 2, StrideY: 1, DilationX: 2, DilationY: 1}, n: 1, h: 13, w: 11,
			pads: padding.Pads{Top: 1, Left: 1, Bottom: 0, Right: 1}, bias: true},
	}
	fc := fcCase{n: 7, c: 6, h: 3, w: 3, o: 11, flat: true, bias: true}
	for tile := 0; tile < ops.ConvTileCount(); tile++ {
		t.Run(ops.ConvTileName(tile), func(t *testing.T) {
			force := func(k any) {
				if !ops.ConvForcePath(k, "tiled", tile) {
					t.Skipf("%s does not run tile %s", dev.Info().Name, ops.ConvTileName(tile))
				}
			}
			r := rand.New(rand.NewSource(int64(31 + tile)))
			for _, c := range cases {
				convHalfWeightsCheck(t, dev, c, r, force)
			}
			fcCheck(t, dev, fc, r, true, force)
		})
	}
}

// convHalfWeightsCheck runs the weight and bias gradients of c over
// float16 images made by NewImage and over images at the end of buffers of
// exactly their size, and compares.
func convHalfWeightsCheck(t *testing.T, dev *vk.Device, c convCase, r *rand.Rand, force func(any)) {
	t.Helper()
	d := c.d
	g, err := ops.NewConvolutionGradient(dev, d)
	require.NoError(t, err)
	defer g.Close()
	force(g)
	kx, ky := (d.KernelWidth-1)*d.DilationX+1, (d.KernelHeight-1)*d.DilationY+1
	g.SetForwardOffset(kx/2-c.pads.Left, ky/2-c.pads.Top)
	cd := c.data(r)
	cd.x, cd.dy = toHalf(cd.x), toHalf(cd.dy)
	xd := padding.Descriptor{N: c.n, C: d.InputFeatureChannels, H: c.h, W: c.w}
	dyd := padding.Descriptor{N: c.n, C: d.OutputFeatureChannels, H: cd.oh, W: cd.ow}
	wd := d.WeightsDescriptor()
	ctx := context.Background()
	// Made by NewImage, then at the end of buffers of exactly their values.
	xs, dys := halfImages(t, dev, xd, cd.x, false), halfImages(t, dev, dyd, cd.dy, false)
	var dw, db [2][]float32
	for i := range xs {
		x, dy := xs[i], dys[i]
		dW := newImage(t, dev, padding.Descriptor{N: wd.N, C: wd.C, H: wd.H, W: wd.W}, filled(len(cd.w), poisonValue))
		dB := newImage(t, dev, padding.Descriptor{N: 1, C: d.OutputFeatureChannels, H: 1, W: 1}, filled(d.OutputFeatureChannels, poisonValue))
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return g.EncodeWeights(cb, dy, x, dW, dB) }), c)
		dw[i], err = dW.Read(ctx)
		require.NoError(t, err)
		db[i], err = dB.Read(ctx)
		require.NoError(t, err)
	}
	words, halves := ops.ConvWeightsWordLoads(g)
	require.True(t, words && halves, "%v: word loads %v, half loads %v", c, words, halves)
	require.Equal(t, dw[0], dw[1], "dW of word and half loads %v", c)
	require.Equal(t, db[0], db[1], "db of word and half loads %v", c)
	_, _, rdw, mdw, rdb, mdb := convRefGrads(t, c, cd)
	require.NoError(t, convCompare(dw[0], rdw, mdw, c.n*cd.oh*cd.ow, 1, false), "dW %v", c)
	require.NoError(t, convCompare(db[0], rdb, mdb, c.n*cd.oh*cd.ow, 1, false), "db %v", c)
}
