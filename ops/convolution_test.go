package ops_test

import (
	"context"
	"fmt"
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

// Tolerances of the convolution family against ops/ref (float64 sums of
// the same float32 inputs). A float32 sum of K products, added in any
// order, is within ref.ConvTolerance(K) * (1 + S) of the exact sum, S the
// sum of the products' magnitudes (the reference run on |inputs|); a fused
// neuron with slope at most L scales that by L and adds its own rounding,
// 2e-6 * (1 + |want|) (GLSL's exp, tanh and the erf fit). Float16 images:
// the result is then rounded to half once, adding ulp16(want).

// convCase is one convolution configuration of the tests.
type convCase struct {
	d       ops.ConvolutionDescriptor
	n, h, w int
	pads    padding.Pads
	bias    bool
	// slack scales convCompareSlack's allowance for products of halves
	// (0: 1, a rounding of the result per product's worth of magnitude;
	// winogradCoopSlack for the Winograd products of halves, which round
	// more). A field of the case, not a package variable: tests that set
	// it run in parallel.
	slack float64
}

// halfSlack is c.slack, 1 where unset.
func (c convCase) halfSlack() float64 {
	if c.slack == 0 {
		return 1
	}
	return c.slack
}

// weightsHalf reports whether the weight gradients of c's images in half
// precision (half) are compared with the half allowance: only under a
// slack above 1 (the Winograd products of halves, whose D and V are
// rounded to halves too); else their sums of float32 products keep the
// float32 tolerance.
func (c convCase) weightsHalf(half bool) bool { return half && c.halfSlack() > 1 }

func (c convCase) String() string {
	d := c.d
	return fmt.Sprintf("%dx%dx%dx%d k%dx%d s%dx%d d%dx%d g%d ->%d pads %v bias %v %v", c.n, d.InputFeatureChannels, c.h, c.w,
		d.KernelWidth, d.KernelHeight, d.StrideX, d.StrideY, d.DilationX, d.DilationY, d.Groups, d.OutputFeatureChannels, c.pads, c.bias, d.Neuron)
}

func (c convCase) refConv() ref.Conv {
	d := c.d
	return ref.Conv{KernelW: d.KernelWidth, KernelH: d.KernelHeight, StrideX: d.StrideX, StrideY: d.StrideY,
		DilationX: d.DilationX, DilationY: d.DilationY, Groups: d.Groups, PadTop: c.pads.Top, PadLeft: c.pads.Left,
		Neuron: convRefNeuron(d.Neuron)}
}

func (c convCase) outSize() (int, int) {
	d := c.d
	return ref.ConvOutputSize(c.h, d.KernelHeight, d.StrideY, d.DilationY, c.pads.Top, c.pads.Bottom),
		ref.ConvOutputSize(c.w, d.KernelWidth, d.StrideX, d.DilationX, c.pads.Left, c.pads.Right)
}

func convRefNeuron(n ops.NeuronDescriptor) ref.Neuron {
	r := ref.Neuron{Type: ref.NeuronType(n.Type), A: float64(n.A), B: float64(n.B), C: float64(n.C)}
	for _, a := range n.PReLU {
		r.PReLU = append(r.PReLU, float64(a))
	}
	return r
}

// convSlope bounds |f'| of the test neurons, for the tolerance.
func convSlope(n ops.NeuronDescriptor) float64 {
	s := 1.0
	for _, v := range append([]float32{n.A, n.B}, n.PReLU...) {
		s = math.Max(s, math.Abs(float64(v)))
	}
	return s
}

func conv64(t testing.TB, n, c, h, w int, d []float32) ref.Tensor[float64] {
	out := make([]float64, len(d))
	for i, v := range d {
		out[i] = float64(v)
	}
	tt, err := ref.TensorOf(n, c, h, w, out)
	require.NoError(t, err)
	return tt
}

// convCompare checks got against want with magnitudes mag, K products
// per value, slope L of a fused neuron; half adds a half ulp and a
// rounding of the result per product's worth of magnitude.
func convCompare(got []float32, want, mag []float64, k int, slope float64, half bool) error {
	return convCompareSlack(got, want, mag, k, slope, half, 1)
}

// convCompareSlack is convCompare with the half allowance's rounding
// scaled by slack (convCase.slack).
func convCompareSlack(got []float32, want, mag []float64, k int, slope float64, half bool, slack float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("got %d values, want %d", len(got), len(want))
	}
	tol := ref.ConvTolerance(k)
	bad, first := 0, -1
	var worst float64
	for i := range got {
		g, w := float64(got[i]), want[i]
		if math.IsNaN(g) && math.IsNaN(w) {
			continue
		}
		lim := tol*(1+mag[i])*slope + 2e-6*(1+math.Abs(w))
		if half {
			lim += ulp16(w) + slack*0x1p-11*(1+mag[i])*slope
		}
		if !(math.Abs(g-w) <= lim) {
			if bad == 0 {
				first = i
				worst = lim
			}
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d values differ; first at %d: got %v, want %v (tolerance %g)", bad, len(got), first, got[first], want[first], worst)
}

// convData is a case's random data: source, weights, bias, dy.
type convData struct {
	x, w, b, dy []float32
	oh, ow      int
}

func (c convCase) data(r *rand.Rand) convData {
	d := c.d
	var cd convData
	cd.oh, cd.ow = c.outSize()
	cd.x = randomData(r, c.n*d.InputFeatureChannels*c.h*c.w)
	scale := float32(1 / math.Sqrt(float64(d.InputFeatureChannels/max(d.Groups, 1)*d.KernelWidth*d.KernelHeight)))
	cd.w = randomData(r, d.OutputFeatureChannels*d.InputFeatureChannels/max(d.Groups, 1)*d.KernelHeight*d.KernelWidth)
	for i := range cd.w {
		cd.w[i] *= scale
	}
	if c.bias {
		cd.b = randomData(r, d.OutputFeatureChannels)
	}
	cd.dy = randomData(r, c.n*d.OutputFeatureChannels*cd.oh*cd.ow)
	return cd
}

// convNewImage makes a float32 or float16 image.
func convNewImage(t testing.TB, dev *vk.Device, half bool, n, c, h, w int, data []float32) *ops.Image {
	d := padding.Descriptor{N: n, C: c, H: h, W: w}
	if half {
		return newHalfImage(t, dev, d, data)
	}
	return newImage(t, dev, d, data)
}

// convParams uploads weights and bias.
func convParams(t testing.TB, dev *vk.Device, c convCase, cd convData) (w, b *ops.Image) {
	wd := c.d.WeightsDescriptor()
	w = newImage(t, dev, padding.Descriptor{N: wd.N, C: wd.C, H: wd.H, W: wd.W}, cd.w)
	if c.bias {
		b = newImage(t, dev, padding.Descriptor{N: 1, C: c.d.OutputFeatureChannels, H: 1, W: 1}, cd.b)
	}
	return w, b
}

// convRefForward returns the reference forward output and its magnitudes.
func convRefForward(t testing.TB, c convCase, cd convData) (want, mag []float64) {
	d := c.d
	g := c.refConv()
	x := conv64(t, c.n, d.InputFeatureChannels, c.h, c.w, cd.x)
	wd := d.WeightsDescriptor()
	w := conv64(t, wd.N, wd.C, wd.H, wd.W, cd.w)
	var b []float64
	if c.bias {
		b = conv64(t, 1, len(cd.b), 1, 1, cd.b).Data
	}
	y := ref.NewTensor[float64](c.n, d.OutputFeatureChannels, cd.oh, cd.ow)
	require.NoError(t, ref.ConvForward(g, x, w, b, &y))
	g.Neuron = ref.Neuron{}
	m := ref.NewTensor[float64](c.n, d.OutputFeatureChannels, cd.oh, cd.ow)
	var ab []float64
	if b != nil {
		ab = ref.Abs(conv64(t, 1, len(b), 1, 1, cd.b)).Data
	}
	require.NoError(t, ref.ConvForward(g, ref.Abs(x), ref.Abs(w), ab, &m))
	return y.Data, m.Data
}

// convCheckForward runs c forward (EncodeNew with PyTorch's pads) and
// compares with the reference.
func convCheckForward(t *testing.T, dev *vk.Device, k *ops.Convolution, c convCase, cd convData, half bool) {
	t.Helper()
	d := c.d
	src := convNewImage(t, dev, half, c.n, d.InputFeatureChannels, c.h, c.w, cd.x)
	if half {
		cd.x = toHalf(cd.x)
	}
	w, b := convParams(t, dev, c, cd)
	k.Padding = padding.Explicit(c.pads, false, false)
	var dst *ops.Image
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		dst, err = k.EncodeNew(cb, src, w, b)
		return err
	}), c)
	defer dst.Close()
	require.Equal(t, ops.ImageDescriptor{N: c.n, C: d.OutputFeatureChannels, H: cd.oh, W: cd.ow}, ops.ImageDescriptor{N: dst.N(), C: dst.C(), H: dst.H(), W: dst.W()}, c)
	got, err := dst.Read(context.Background())
	require.NoError(t, err)
	want, mag := convRefForward(t, c, cd)
	kk := d.InputFeatureChannels / max(d.Groups, 1) * d.KernelWidth * d.KernelHeight
	require.NoError(t, convCompareSlack(got, want, mag, kk, convSlope(d.Neuron), half, c.halfSlack()), c)
}

// convRandomCase draws a case: odd sizes, channels 1..16, groups
// (depthwise included), dilation, asymmetric pads, strides above the
// kernel, batches above 1.
func convRandomCase(r *rand.Rand) convCase {
	for {
		d := ops.ConvolutionDescriptor{KernelWidth: 1 + r.Intn(4), KernelHeight: 1 + r.Intn(4), StrideX: 1 + r.Intn(3), StrideY: 1 + r.Intn(3),
			DilationX: 1 + r.Intn(2), DilationY: 1 + r.Intn(2)}
		g := []int{1, 1, 2, 3}[r.Intn(4)]
		d.Groups = g
		d.InputFeatureChannels = g * (1 + r.Intn(16/g))
		d.OutputFeatureChannels = g * (1 + r.Intn(16/g))
		if r.Intn(4) == 0 {
			d.InputFeatureChannels = 1 + r.Intn(16)
			d.Groups = d.InputFeatureChannels
			d.OutputFeatureChannels = d.InputFeatureChannels * (1 + r.Intn(2))
		}
		c := convCase{d: d, n: 1 + r.Intn(3), h: 1 + r.Intn(12), w: 1 + r.Intn(12), bias: r.Intn(3) > 0,
			pads: padding.Pads{Top: r.Intn(3), Left: r.Intn(3), Bottom: r.Intn(3), Right: r.Intn(2)}}
		if oh, ow := c.outSize(); oh >= 1 && ow >= 1 {
			return c
		}
	}
}

// convRefGrads returns the reference dx, dW, db and their magnitudes.
func convRefGrads(t testing.TB, c convCase, cd convData) (dx, dxMag, dw, dwMag, db, dbMag []float64) {
	d := c.d
	g := c.refConv()
	g.Neuron = ref.Neuron{}
	x := conv64(t, c.n, d.InputFeatureChannels, c.h, c.w, cd.x)
	wd := d.WeightsDescriptor()
	w := conv64(t, wd.N, wd.C, wd.H, wd.W, cd.w)
	dy := conv64(t, c.n, d.OutputFeatureChannels, cd.oh, cd.ow, cd.dy)
	t1 := ref.NewTensor[float64](c.n, d.InputFeatureChannels, c.h, c.w)
	t2 := ref.NewTensor[float64](c.n, d.InputFeatureChannels, c.h, c.w)
	require.NoError(t, ref.ConvGradData(g, dy, w, &t1))
	require.NoError(t, ref.ConvGradData(g, ref.Abs(dy), ref.Abs(w), &t2))
	w1 := ref.NewTensor[float64](wd.N, wd.C, wd.H, wd.W)
	w2 := ref.NewTensor[float64](wd.N, wd.C, wd.H, wd.W)
	b1, b2 := make([]float64, d.OutputFeatureChannels), make([]float64, d.OutputFeatureChannels)
	require.NoError(t, ref.ConvGradWeights(g, x, dy, &w1, b1))
	require.NoError(t, ref.ConvGradWeights(g, ref.Abs(x), ref.Abs(dy), &w2, b2))
	return t1.Data, t2.Data, w1.Data, w2.Data, b1, b2
}

// convCheckGradients runs the explicit gradient forms of c and compares.
func convCheckGradients(t *testing.T, dev *vk.Device, k *ops.ConvolutionGradient, c convCase, cd convData, half bool) {
	t.Helper()
	d := c.d
	if half {
		cd.x, cd.dy = toHalf(cd.x), toHalf(cd.dy)
	}
	x := convNewImage(t, dev, half, c.n, d.InputFeatureChannels, c.h, c.w, cd.x)
	dy := convNewImage(t, dev, half, c.n, d.OutputFeatureChannels, cd.oh, cd.ow, cd.dy)
	w, _ := convParams(t, dev, c, cd)
	dx := convNewImage(t, dev, half, c.n, d.InputFeatureChannels, c.h, c.w, filled(c.n*d.InputFeatureChannels*c.h*c.w, poisonValue))
	wd := d.WeightsDescriptor()
	dW := newImage(t, dev, padding.Descriptor{N: wd.N, C: wd.C, H: wd.H, W: wd.W}, filled(len(cd.w), poisonValue))
	db := newImage(t, dev, padding.Descriptor{N: 1, C: d.OutputFeatureChannels, H: 1, W: 1}, filled(d.OutputFeatureChannels, poisonValue))
	kx, ky := (d.KernelWidth-1)*d.DilationX+1, (d.KernelHeight-1)*d.DilationY+1
	k.SetForwardOffset(kx/2-c.pads.Left, ky/2-c.pads.Top)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if err := k.EncodeData(cb, dy, w, dx); err != nil {
			return err
		}
		return k.EncodeWeights(cb, dy, x, dW, db)
	}), c)
	ctx := context.Background()
	gdx, err := dx.Read(ctx)
	require.NoError(t, err)
	gdw, err := dW.Read(ctx)
	require.NoError(t, err)
	gdb, err := db.Read(ctx)
	require.NoError(t, err)
	rdx, mdx, rdw, mdw, rdb, mdb := convRefGrads(t, c, cd)
	g := d.OutputFeatureChannels / max(d.Groups, 1)
	require.NoError(t, convCompareSlack(gdx, rdx, mdx, g*d.KernelWidth*d.KernelHeight, 1, half, c.halfSlack()), "dx %v", c)
	require.NoError(t, convCompareSlack(gdw, rdw, mdw, c.n*cd.oh*cd.ow, 1, c.weightsHalf(half), c.halfSlack()), "dW %v", c)
	require.NoError(t, convCompare(gdb, rdb, mdb, c.n*cd.oh*cd.ow, 1, false), "db %v", c)
}

// convRunCase checks c forward and its explicit gradients on the path
// chosen (or forced with force(k) on each kernel made).
func convRunCase(t *testing.T, dev *vk.Device, c convCase, r *rand.Rand, half bool, force func(k any)) {
	t.Helper()
	k, err := ops.NewConvolution(dev, c.d)
	require.NoError(t, err)
	defer k.Close()
	gd := c.d
	gd.Neuron = ops.NeuronDescriptor{}
	g, err := ops.NewConvolutionGradient(dev, gd)
	require.NoError(t, err)
	defer g.Close()
	if force != nil {
		force(k)
		force(g)
	}
	cd := c.data(r)
	convCheckForward(t, dev, k, c, cd, half)
	convCheckGradients(t, dev, g, c, cd, half)
}

// The convolution and its three gradients against the float64 reference
// over a random table: odd sizes, channels 1..16, groups (depthwise and
// channel multipliers included), dilations, asymmetric pads, strides above
// the kernel, batches above 1, fused neurons (PReLU included), float16
// rows. Tolerances: see convCompare.
func TestConvolutionMatchesReference(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(20240601))
	neurons := []ops.NeuronDescriptor{{}, ops.NewNeuronDescriptor(ops.NeuronReLU), {Type: ops.NeuronTanH, A: 1.5, B: 0.5},
		ops.NewNeuronDescriptor(ops.NeuronSigmoid), {Type: ops.NeuronELU, A: 0.7}, ops.NewNeuronDescriptor(ops.NeuronGeLU)}
	for i := 0; i < 10; i++ {
		c := convRandomCase(r)
		switch i % 4 {
		case 1:
			c.d.Neuron = neurons[r.Intn(len(neurons))]
		case 2:
			s := make([]float32, c.d.OutputFeatureChannels)
			for j := range s {
				s[j] = float32(r.Float64() - 0.5)
			}
			c.d.Neuron = ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: s}
		}
		half := i%5 == 4 && dev.Limits().Float16Storage
		t.Run(fmt.Sprint(i), func(t *testing.T) { convRunCase(t, dev, c, r, half, nil) })
	}
	if dev.Limits().Float16Storage {
		// Float16 through the depthwise kernels (and the strided data
		// gradient's phases).
		dw := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 6, OutputFeatureChannels: 6,
			Groups: 6, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Neuron: ops.NewNeuronDescriptor(ops.NeuronReLU)}, n: 2, h: 9, w: 10,
			pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}
		t.Run("depthwise float16", func(t *testing.T) { convRunCase(t, dev, dw, r, true, nil) })
		dw.d.StrideX, dw.d.Groups, dw.d.OutputFeatureChannels = 2, 1, 4
		t.Run("strided float16", func(t *testing.T) { convRunCase(t, dev, dw, r, true, nil) })
	}
}

// convCheckData runs only the explicit data gradient of c (forced with
// force) and compares it with the reference.
func convCheckData(t *testing.T, dev *vk.Device, c convCase, r *rand.Rand, force func(any)) {
	t.Helper()
	d := c.d
	k, err := ops.NewConvolutionGradient(dev, d)
	require.NoError(t, err)
	defer k.Close()
	force(k)
	cd := c.data(r)
	dy := newImage(t, dev, padding.Descriptor{N: c.n, C: d.OutputFeatureChannels, H: cd.oh, W: cd.ow}, cd.dy)
	w, _ := convParams(t, dev, c, cd)
	dx := newImage(t, dev, padding.Descriptor{N: c.n, C: d.InputFeatureChannels, H: c.h, W: c.w}, filled(c.n*d.InputFeatureChannels*c.h*c.w, poisonValue))
	kx, ky := (d.KernelWidth-1)*d.DilationX+1, (d.KernelHeight-1)*d.DilationY+1
	k.SetForwardOffset(kx/2-c.pads.Left, ky/2-c.pads.Top)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return k.EncodeData(cb, dy, w, dx) }), c)
	got, err := dx.Read(context.Background())
	require.NoError(t, err)
	rdx, mdx, _, _, _, _ := convRefGrads(t, c, cd)
	require.NoError(t, convCompare(got, rdx, mdx, d.OutputFeatureChannels/d.Groups*d.KernelWidth*d.KernelHeight, 1, false), "dx %v", c)
}
