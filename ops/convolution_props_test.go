package ops_test

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// convProps is the descriptor of the property tests (one geometry, so
// they share pipelines).
var convProps = ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 3, OutputFeatureChannels: 4,
	Groups: 1, StrideX: 2, StrideY: 1, DilationX: 1, DilationY: 1}

// MPS padding methods size the destination as padding.Resolve says and
// set Offset; the result is the reference convolution whose first tap is
// Offset - floor(ke/2).
func TestConvolutionPaddingPolicies(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(21))
	x := randomData(r, 2*3*7*8)
	wv := randomData(r, 4*3*9)
	src := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 7, W: 8}, x)
	w := newImage(t, dev, padding.Descriptor{N: 4, C: 3, H: 3, W: 3}, wv)
	for _, p := range []padding.Policy{nil, padding.WithMethod(padding.Valid), padding.WithMethod(padding.Full),
		padding.TensorFlowSame(), padding.WithMethod(padding.Same | padding.AlignTopLeft)} {
		want, res, err := convProps.ResultDescriptor(ops.ImageDescriptor{N: 2, C: 3, H: 7, W: 8}, p)
		require.NoError(t, err)
		k := must(ops.NewConvolution(dev, convProps))
		k.Padding = p
		var dst *ops.Image
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			dst, err = k.EncodeNew(cb, src, w, nil)
			return err
		}))
		require.Equal(t, [4]int{want.N, want.C, want.H, want.W}, [4]int{dst.N(), dst.C(), dst.H(), dst.W()})
		require.Equal(t, ops.Offset{X: res.OffsetX, Y: res.OffsetY}, k.Offset)
		got, err := dst.Read(context.Background())
		require.NoError(t, err)
		c := convCase{d: convProps, n: 2, h: 7, w: 8, pads: padding.Pads{Top: 1 - res.OffsetY, Left: 1 - res.OffsetX}}
		g := c.refConv()
		y := ref.NewTensor[float64](2, 4, dst.H(), dst.W())
		mag := ref.NewTensor[float64](2, 4, dst.H(), dst.W())
		x64, w64 := conv64(t, 2, 3, 7, 8, x), conv64(t, 4, 3, 3, 3, wv)
		require.NoError(t, ref.ConvForward(g, x64, w64, nil, &y))
		require.NoError(t, ref.ConvForward(g, ref.Abs(x64), ref.Abs(w64), nil, &mag))
		require.NoError(t, convCompare(got, y.Data, mag.Data, 27, 1, false), "%v", p)
		dst.Close()
		k.Close()
	}
}

// Encode with explicit properties: a channel range of the source, a
// channel range, clip rectangle and batch range of the destination (the
// rest untouched), Offset set by hand.
func TestConvolutionChannelsAndClip(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(22))
	x := randomData(r, 3*5*6*9)
	wv := randomData(r, 4*3*9)
	bv := randomData(r, 4)
	src := newImage(t, dev, padding.Descriptor{N: 3, C: 5, H: 6, W: 9}, x)
	w := newImage(t, dev, padding.Descriptor{N: 4, C: 3, H: 3, W: 3}, wv)
	b := newImage(t, dev, padding.Descriptor{N: 1, C: 4, H: 1, W: 1}, bv)
	dd := padding.Descriptor{N: 3, C: 7, H: 6, W: 5}
	init := filled(3*7*6*5, poisonValue)
	dst := newImage(t, dev, dd, init)
	k := must(ops.NewConvolution(dev, convProps))
	defer k.Close()
	k.SourceFeatureChannelOffset, k.DestinationFeatureChannelOffset = 2, 1
	k.Offset = ops.Offset{X: 0, Y: 1, Z: 1}
	k.ClipRect = ops.Region{X: 1, Y: 2, Z: 0, Width: 3, Height: 3, Depth: 2}
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, w, b, dst) }))
	got, err := dst.Read(context.Background())
	require.NoError(t, err)
	// Reference: output pixel (i, j) of the clip reads windows centred on
	// Offset + (2i, j): first tap Offset - 1.
	g := ref.Conv{KernelW: 3, KernelH: 3, StrideX: 2, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 1, PadLeft: 1, PadTop: 0}
	x64 := convSub(conv64(t, 3, 5, 6, 9, x), 1, 2, 2, 3)
	w64 := conv64(t, 4, 3, 3, 3, wv)
	y := ref.NewTensor[float64](2, 4, 3, 3)
	require.NoError(t, ref.ConvForward(g, x64, w64, conv64(t, 1, 4, 1, 1, bv).Data, &y))
	for n := 0; n < 3; n++ {
		for c := 0; c < 7; c++ {
			for yy := 0; yy < 6; yy++ {
				for xx := 0; xx < 5; xx++ {
					v := got[((n*7+c)*6+yy)*5+xx]
					in := n < 2 && c >= 1 && c < 5 && yy >= 2 && yy < 5 && xx >= 1 && xx < 4
					if !in {
						require.Equal(t, float32(poisonValue), v, "outside the clip (%d,%d,%d,%d)", n, c, yy, xx)
						continue
					}
					want := y.At(n, c-1, yy-2, xx-1)
					require.InDelta(t, want, float64(v), 1e-4*(1+math.Abs(want)), "(%d,%d,%d,%d)", n, c, yy, xx)
				}
			}
		}
	}
}

// NaN in the source reaches exactly the outputs whose windows read it;
// results repeat bit for bit, the split-K weight gradient included.
func TestConvolutionNaNAndDeterminism(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(23))
	x := randomData(r, 2*3*7*8)
	x[3*7*8+2*8+5] = float32(math.NaN()) // batch 1, channel 0, (5, 2)
	wv := randomData(r, 4*3*9)
	src := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 7, W: 8}, x)
	w := newImage(t, dev, padding.Descriptor{N: 4, C: 3, H: 3, W: 3}, wv)
	k := must(ops.NewConvolution(dev, convProps))
	defer k.Close()
	k.Padding = padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, false, false)
	var dst *ops.Image
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		dst, err = k.EncodeNew(cb, src, w, nil)
		return err
	}))
	defer dst.Close()
	got, err := dst.Read(context.Background())
	require.NoError(t, err)
	for i, v := range got {
		n, p := i/(4*dst.H()*dst.W()), i%(dst.H()*dst.W())
		oy, ox := p/dst.W(), p%dst.W()
		reads := n == 1 && oy >= 1 && oy <= 3 && 2*ox-1 <= 5 && 2*ox+1 >= 5
		require.Equal(t, reads, math.IsNaN(float64(v)), "output %d", i)
	}

	// Determinism: a large-K weight gradient (split-K, ordered sums) twice.
	d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 8, OutputFeatureChannels: 8,
		Groups: 1, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}
	gk := must(ops.NewConvolutionGradient(dev, d))
	defer gk.Close()
	gk.SetForwardOffset(1, 1)
	xs := newImage(t, dev, padding.Descriptor{N: 8, C: 8, H: 24, W: 24}, randomData(r, 8*8*24*24))
	dy := newImage(t, dev, padding.Descriptor{N: 8, C: 8, H: 24, W: 24}, randomData(r, 8*8*24*24))
	var first, firstB []float32
	for i := 0; i < 2; i++ {
		dW := newImage(t, dev, padding.Descriptor{N: 8, C: 8, H: 3, W: 3}, nil)
		db := newImage(t, dev, padding.Descriptor{N: 1, C: 8, H: 1, W: 1}, nil)
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return gk.EncodeWeights(cb, dy, xs, dW, db) }))
		gw, err := dW.Read(context.Background())
		require.NoError(t, err)
		gb, err := db.Read(context.Background())
		require.NoError(t, err)
		if i == 0 {
			first, firstB = gw, gb
			continue
		}
		require.True(t, sameBits(first, gw), "weight gradients repeat bit for bit")
		require.True(t, sameBits(firstB, gb), "bias gradients repeat bit for bit")
	}
}

// A device whose storage-buffer range holds only part of a batch: the
// forward, the data gradient and the weight gradient are split by batch
// images (the weight gradient's parts added like its splits) and give the
// unsplit results (bit for bit, the weight and bias gradients apart, whose
// sums the parts regroup); weights over the range are refused with
// ErrDeviceLimit naming the limit.
func TestConvolutionLargeTensorsAreSplit(t *testing.T) {
	full := vktest.Open(t)
	capped := vktest.Open(t, vk.Options{MaxStorageBufferRange: 4 << 10})
	r := rand.New(rand.NewSource(24))
	x := randomData(r, 5*3*10*10) // 1200 B per image: 3 images per binding
	wv := randomData(r, 4*3*9)
	bv := randomData(r, 4)
	dyv := randomData(r, 5*4*10*10)
	results := func(dev *vk.Device) [][]float32 {
		src := newImage(t, dev, padding.Descriptor{N: 5, C: 3, H: 10, W: 10}, x)
		w := newImage(t, dev, padding.Descriptor{N: 4, C: 3, H: 3, W: 3}, wv)
		b := newImage(t, dev, padding.Descriptor{N: 1, C: 4, H: 1, W: 1}, bv)
		dy := newImage(t, dev, padding.Descriptor{N: 5, C: 4, H: 10, W: 10}, dyv)
		dst := newImage(t, dev, padding.Descriptor{N: 5, C: 4, H: 10, W: 10}, nil)
		dx := newImage(t, dev, padding.Descriptor{N: 5, C: 3, H: 10, W: 10}, nil)
		dW := newImage(t, dev, padding.Descriptor{N: 4, C: 3, H: 3, W: 3}, nil)
		db := newImage(t, dev, padding.Descriptor{N: 1, C: 4, H: 1, W: 1}, nil)
		desc := convProps
		desc.StrideX = 1
		desc.Neuron = ops.NeuronDescriptor{Type: ops.NeuronTanH, A: 1, B: 1}
		k := must(ops.NewConvolution(dev, desc))
		defer k.Close()
		gk := must(ops.NewConvolutionGradient(dev, desc))
		defer gk.Close()
		k.Offset = ops.Offset{X: 1, Y: 1}
		gk.SetForwardOffset(1, 1)
		var st *ops.ConvolutionGradientState
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			if st, err = k.EncodeWithState(cb, src, w, b, dst); err != nil {
				return err
			}
			if err := gk.EncodeWithState(cb, dy, src, st, dx); err != nil {
				return err
			}
			return gk.EncodeWeights(cb, dy, src, dW, db)
		}))
		defer st.Close()
		var out [][]float32
		for _, im := range []*ops.Image{dst, dx, dW, db, st.GradientForWeights(), st.GradientForBiases()} {
			v, err := im.Read(context.Background())
			require.NoError(t, err)
			out = append(out, v)
		}
		return out
	}
	want, got := results(full), results(capped)
	for i := range want {
		if i < 2 {
			require.True(t, sameBits(want[i], got[i]), "result %d differs when split", i)
			continue
		}
		// Weight and bias gradients: the parts change the order of the sums.
		for j := range want[i] {
			require.InDelta(t, want[i][j], got[i][j], 1e-4*(1+math.Abs(float64(want[i][j]))), "result %d[%d]", i, j)
		}
	}
	big := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 32, OutputFeatureChannels: 32,
		Groups: 1, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}
	k := must(ops.NewConvolution(capped, big))
	defer k.Close()
	wBig := newImage(t, capped, padding.Descriptor{N: 32, C: 32, H: 3, W: 3}, nil)
	cb := mustConvCB(t, capped)
	err := k.Encode(cb, newImage(t, capped, padding.Descriptor{N: 1, C: 32, H: 4, W: 4}, nil), wBig, nil,
		newImage(t, capped, padding.Descriptor{N: 1, C: 32, H: 4, W: 4}, nil))
	require.ErrorIs(t, err, ops.ErrDeviceLimit)
	require.Contains(t, err.Error(), "max storage buffer range")
	require.Zero(t, cb.Commands())
}

func mustConvCB(t *testing.T, dev *vk.Device) *vk.CommandBuffer {
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	t.Cleanup(func() { cb.Close() })
	return cb
}
