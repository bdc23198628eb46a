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

// convSub copies channels [c0, c0+c) of batch images [n0, n0+n) of an
// N x C x H x W tensor.
func convSub(t ref.Tensor[float64], n0, n, c0, c int) ref.Tensor[float64] {
	out := ref.NewTensor[float64](n, c, t.H, t.W)
	for b := 0; b < n; b++ {
		for ch := 0; ch < c; ch++ {
			for p := 0; p < t.H*t.W; p++ {
				out.Data[(b*c+ch)*t.H*t.W+p] = t.Data[((n0+b)*t.C+c0+ch)*t.H*t.W+p]
			}
		}
	}
	return out
}

// MPS's form: a convolution with a fused PReLU encoded with state from a
// channel range and batch offset of its source into a channel range of its
// destination; the gradient from the state includes the neuron, writes dx
// into the channels and batch images the forward read (the rest 0) and
// the weight and bias gradients into the state's images.
func TestConvolutionGradientWithState(t *testing.T) {
	slopes := []float32{0.1, -0.3, 0.25, 0.5, -0.1}
	d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 2, InputFeatureChannels: 4, OutputFeatureChannels: 5, Groups: 1,
		StrideX: 1, StrideY: 2, DilationX: 2, DilationY: 1, Neuron: ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: slopes}}
	t.Run("gemm", func(t *testing.T) { convCheckWithState(t, d, ops.ConvolutionTuning{}) })
	// Winograd's passes over the same regions: a 3x3 stride-1 window.
	d.KernelHeight, d.StrideY, d.DilationX = 3, 1, 1
	t.Run("winograd", func(t *testing.T) { convCheckWithState(t, d, ops.ConvolutionTuning{Winograd: true}) })
}

// convCheckWithState runs d forward with a state (source and destination
// channel offsets, a batch offset, a fused PReLU) and its gradient from
// the state under tuning tu, against the reference; then the gradient
// options.
func convCheckWithState(t *testing.T, d ops.ConvolutionDescriptor, tu ops.ConvolutionTuning) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(11))
	const n, h, w = 3, 7, 6
	in, out, kw, kh := d.InputFeatureChannels, d.OutputFeatureChannels, d.KernelWidth, d.KernelHeight
	k, err := ops.NewConvolution(dev, d)
	require.NoError(t, err)
	defer k.Close()
	require.NoError(t, k.SetTuning(tu))
	gk, err := ops.NewConvolutionGradient(dev, d)
	require.NoError(t, err)
	defer gk.Close()
	require.NoError(t, gk.SetTuning(tu))
	x := randomData(r, n*(in+2)*h*w)
	wv := randomData(r, out*in*kh*kw)
	bv := randomData(r, out)
	src := newImage(t, dev, padding.Descriptor{N: n, C: in + 2, H: h, W: w}, x)
	wt := newImage(t, dev, padding.Descriptor{N: out, C: in, H: kh, W: kw}, wv)
	b := newImage(t, dev, padding.Descriptor{N: 1, C: out, H: 1, W: 1}, bv)
	k.SourceFeatureChannelOffset, k.DestinationFeatureChannelOffset, k.Offset.Z = 1, 2, 1
	pads := padding.Pads{Top: 1, Left: 2, Bottom: 0, Right: 1}
	k.Padding = padding.Explicit(pads, false, false)
	var dst, dx *ops.Image
	var st *ops.ConvolutionGradientState
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		dst, st, err = k.EncodeNewWithState(cb, src, wt, b)
		return err
	}))
	defer dst.Close()
	defer st.Close()
	require.Equal(t, 2+out, dst.C())
	require.Equal(t, n-1, dst.N())
	oh, ow := dst.H(), dst.W()
	dyv := randomData(r, dst.Len())
	dy := newImage(t, dev, dst.Descriptor().Descriptor(), dyv)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		dx, err = gk.EncodeNewWithState(cb, dy, src, st)
		return err
	}))
	defer dx.Close()

	g := ref.Conv{KernelW: kw, KernelH: kh, StrideX: d.StrideX, StrideY: d.StrideY, DilationX: d.DilationX, DilationY: d.DilationY,
		Groups: 1, PadTop: 1, PadLeft: 2}
	x64 := convSub(conv64(t, n, in+2, h, w, x), 1, n-1, 1, in)
	w64 := conv64(t, out, in, kh, kw, wv)
	b64 := conv64(t, 1, out, 1, 1, bv).Data
	z := ref.NewTensor[float64](n-1, out, oh, ow)
	require.NoError(t, ref.ConvForward(g, x64, w64, b64, &z))
	mag := ref.NewTensor[float64](n-1, out, oh, ow)
	require.NoError(t, ref.ConvForward(g, ref.Abs(x64), ref.Abs(w64), ref.Abs(conv64(t, 1, out, 1, 1, bv)).Data, &mag))
	nr := convRefNeuron(d.Neuron)
	y := ref.NewTensor[float64](n-1, out, oh, ow)
	for i, v := range z.Data {
		y.Data[i] = nr.Forward(v, i/(oh*ow)%out)
	}
	gotY, err := dst.Read(context.Background())
	require.NoError(t, err)
	gotSub := convSub(conv64(t, n-1, 2+out, oh, ow, gotY), 0, n-1, 2, out)
	require.NoError(t, convCompare(convF32(gotSub.Data), y.Data, mag.Data, in*kh*kw, 1, false))

	dy64 := convSub(conv64(t, n-1, 2+out, oh, ow, dyv), 0, n-1, 2, out)
	dz := ref.NewTensor[float64](n-1, out, oh, ow)
	ref.NeuronGrad(nr, z, dy64, &dz)
	rdx := ref.NewTensor[float64](n-1, in, h, w)
	mdx := ref.NewTensor[float64](n-1, in, h, w)
	require.NoError(t, ref.ConvGradData(g, dz, w64, &rdx))
	require.NoError(t, ref.ConvGradData(g, ref.Abs(dz), ref.Abs(w64), &mdx))
	gotDx, err := dx.Read(context.Background())
	require.NoError(t, err)
	gdx := conv64(t, n, in+2, h, w, gotDx)
	for i, v := range gdx.Data {
		b, c := i/(h*w*(in+2)), i/(h*w)%(in+2)
		if b == 0 || c == 0 || c == in+1 {
			require.Zero(t, v, "dx value %d, outside what the forward read", i)
		}
	}
	require.NoError(t, convCompare(convF32(convSub(gdx, 1, n-1, 1, in).Data), rdx.Data, mdx.Data, out*kh*kw, 1, false))

	rdw := ref.NewTensor[float64](out, in, kh, kw)
	mdw := ref.NewTensor[float64](out, in, kh, kw)
	rdb, mdb := make([]float64, out), make([]float64, out)
	require.NoError(t, ref.ConvGradWeights(g, x64, dz, &rdw, rdb))
	require.NoError(t, ref.ConvGradWeights(g, ref.Abs(x64), ref.Abs(dz), &mdw, mdb))
	gdw, gdb, err := st.ReadGradients(context.Background())
	require.NoError(t, err)
	require.NoError(t, convCompare(gdw, rdw.Data, mdw.Data, (n-1)*oh*ow, 1, false))
	require.NoError(t, convCompare(gdb, rdb, mdb, (n-1)*oh*ow, 1, false))

	// Options: data only leaves the state's gradients alone, weights only
	// needs no dx.
	gk.GradientOption = ops.ConvolutionGradientWithData
	dx2 := newImage(t, dev, padding.Descriptor{N: n, C: in + 2, H: h, W: w}, filled(n*(in+2)*h*w, 0))
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if err := ops.Fill(cb, st.GradientForWeights(), 7); err != nil {
			return err
		}
		return gk.EncodeWithState(cb, dy, src, st, dx2)
	}))
	got2, err := dx2.Read(context.Background())
	require.NoError(t, err)
	require.True(t, sameBits(got2, gotDx), "data-only dx equals the full gradient's")
	w7, _, err := st.ReadGradients(context.Background())
	require.NoError(t, err)
	require.Equal(t, filled(len(w7), 7), w7)
	gk.GradientOption = ops.ConvolutionGradientWithWeightsAndBias
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return gk.EncodeWithState(cb, dy, src, st, nil) }))
	gdw2, _, err := st.ReadGradients(context.Background())
	require.NoError(t, err)
	require.True(t, sameBits(gdw2, gdw), "weights-only dW repeats bit for bit")
	if tu.Winograd {
		for _, kk := range []any{k, gk} {
			require.Equal(t, "winograd", ops.ConvLastPath(kk))
		}
		require.Equal(t, "winograd", ops.ConvLastWeightsPath(gk))
	}
}

func convF32(d []float64) []float32 {
	out := make([]float32, len(d))
	for i, v := range d {
		out[i] = float32(v)
	}
	return out
}

// The transpose convolution and the fully connected layer through their
// states with fused neurons: the gradients include the neuron.
func TestConvolutionTransposeAndFullyConnectedWithState(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(12))
	ctx := context.Background()
	t.Run("transpose", func(t *testing.T) {
		d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 4, OutputFeatureChannels: 6, Groups: 2,
			StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1, Neuron: ops.NeuronDescriptor{Type: ops.NeuronTanH, A: 1, B: 1}}
		k := must(ops.NewConvolutionTranspose(dev, d))
		defer k.Close()
		gk := must(ops.NewConvolutionTransposeGradient(dev, d))
		defer gk.Close()
		x := randomData(r, 2*4*5*4)
		wv := randomData(r, 4*3*9)
		bv := randomData(r, 6)
		src := newImage(t, dev, padding.Descriptor{N: 2, C: 4, H: 5, W: 4}, x)
		wt := newImage(t, dev, padding.Descriptor{N: 4, C: 3, H: 3, W: 3}, wv)
		b := newImage(t, dev, padding.Descriptor{N: 1, C: 6, H: 1, W: 1}, bv)
		k.Padding = ops.ConvolutionTransposePadding(padding.Pads{Top: 1, Left: 0, Bottom: 1, Right: 2}, 1, 0)
		var dst, dx *ops.Image
		var st *ops.ConvolutionGradientState
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			dst, st, err = k.EncodeNewWithState(cb, src, wt, b)
			return err
		}))
		defer dst.Close()
		defer st.Close()
		dyv := randomData(r, dst.Len())
		dy := newImage(t, dev, dst.Descriptor().Descriptor(), dyv)
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			dx, err = gk.EncodeNewWithState(cb, dy, src, st)
			return err
		}))
		defer dx.Close()
		oh, ow := dst.H(), dst.W()
		g := ref.Conv{KernelW: 3, KernelH: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1, Groups: 2, PadTop: 1, PadLeft: 0}
		x64, w64, b64 := conv64(t, 2, 4, 5, 4, x), conv64(t, 4, 3, 3, 3, wv), conv64(t, 1, 6, 1, 1, bv).Data
		z := ref.NewTensor[float64](2, 6, oh, ow)
		require.NoError(t, ref.ConvTransposeForward(g, x64, w64, b64, &z))
		nr := convRefNeuron(d.Neuron)
		dz := ref.NewTensor[float64](2, 6, oh, ow)
		ref.NeuronGrad(nr, z, conv64(t, 2, 6, oh, ow, dyv), &dz)
		rdx := ref.NewTensor[float64](2, 4, 5, 4)
		require.NoError(t, ref.ConvTransposeGradData(g, dz, w64, &rdx))
		rdw := ref.NewTensor[float64](4, 3, 3, 3)
		rdb := make([]float64, 6)
		require.NoError(t, ref.ConvTransposeGradWeights(g, x64, dz, &rdw, rdb))
		gdx, err := dx.Read(ctx)
		require.NoError(t, err)
		gdw, gdb, err := st.ReadGradients(ctx)
		require.NoError(t, err)
		convNear(t, gdx, rdx.Data, "dx")
		convNear(t, gdw, rdw.Data, "dW")
		convNear(t, gdb, rdb, "db")
	})
	t.Run("fully connected", func(t *testing.T) {
		d := ops.ConvolutionDescriptor{KernelWidth: 2, KernelHeight: 3, InputFeatureChannels: 5, OutputFeatureChannels: 7,
			Neuron: ops.NeuronDescriptor{Type: ops.NeuronSigmoid}}
		k := must(ops.NewFullyConnected(dev, d))
		defer k.Close()
		gk := must(ops.NewFullyConnectedGradient(dev, d))
		defer gk.Close()
		x := randomData(r, 4*5*3*2)
		wv := randomData(r, 7*30)
		bv := randomData(r, 7)
		src := newImage(t, dev, padding.Descriptor{N: 4, C: 5, H: 3, W: 2}, x)
		wt := newImage(t, dev, padding.Descriptor{N: 7, C: 30, H: 1, W: 1}, wv)
		b := newImage(t, dev, padding.Descriptor{N: 1, C: 7, H: 1, W: 1}, bv)
		var dst, dx *ops.Image
		var st *ops.ConvolutionGradientState
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			dst, st, err = k.EncodeNewWithState(cb, src, wt, b)
			return err
		}))
		defer dst.Close()
		defer st.Close()
		dyv := randomData(r, dst.Len())
		dy := newImage(t, dev, dst.Descriptor().Descriptor(), dyv)
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			dx, err = gk.EncodeNewWithState(cb, dy, src, st)
			return err
		}))
		defer dx.Close()
		x64, w64 := conv64(t, 4, 5, 3, 2, x), conv64(t, 7, 5, 3, 2, wv)
		z := ref.NewTensor[float64](4, 7, 1, 1)
		require.NoError(t, ref.FullyConnected(x64, w64, conv64(t, 1, 7, 1, 1, bv).Data, ref.Neuron{}, &z))
		dz := ref.NewTensor[float64](4, 7, 1, 1)
		ref.NeuronGrad(convRefNeuron(d.Neuron), z, conv64(t, 4, 7, 1, 1, dyv), &dz)
		rdx, rdw := ref.NewTensor[float64](4, 5, 3, 2), ref.NewTensor[float64](7, 5, 3, 2)
		rdb := make([]float64, 7)
		require.NoError(t, ref.FullyConnectedGrad(x64, w64, dz, &rdx, &rdw, rdb))
		gdx, err := dx.Read(ctx)
		require.NoError(t, err)
		gdw, gdb, err := st.ReadGradients(ctx)
		require.NoError(t, err)
		require.Equal(t, ops.ImageDescriptor{N: 7, C: 30, H: 1, W: 1}, ops.ImageDescriptor{N: st.GradientForWeights().N(),
			C: st.GradientForWeights().C(), H: st.GradientForWeights().H(), W: st.GradientForWeights().W()}, "dW in the weights' layout")
		convNear(t, gdx, rdx.Data, "dx")
		convNear(t, gdw, rdw.Data, "dW")
		convNear(t, gdb, rdb, "db")
	})
}

// convNear compares small gradients whose inputs have magnitude ~1:
// within 1e-4 * (1 + |want|).
func convNear(t *testing.T, got []float32, want []float64, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	for i := range got {
		require.LessOrEqual(t, math.Abs(float64(got[i])-want[i]), 1e-4*(1+math.Abs(want[i])), "%s[%d]: got %v want %v", what, i, got[i], want[i])
	}
}
