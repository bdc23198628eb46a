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

// convTCase is a transpose convolution: PyTorch's padding pads and
// output_padding (opX, opY).
type convTCase struct {
	convCase
	opX, opY int
}

func (c convTCase) outSize() (int, int) {
	d := c.d
	return ref.ConvTransposeOutputSize(c.h, d.KernelHeight, d.StrideY, d.DilationY, c.pads.Top, c.pads.Bottom, c.opY),
		ref.ConvTransposeOutputSize(c.w, d.KernelWidth, d.StrideX, d.DilationX, c.pads.Left, c.pads.Right, c.opX)
}

func convRandomTCase(r *rand.Rand) convTCase {
	for {
		c := convTCase{convCase: convRandomCase(r)}
		d := &c.d
		if d.Groups == d.InputFeatureChannels && r.Intn(2) == 0 {
			// The transpose of a depthwise convolution: groups = O.
			d.InputFeatureChannels, d.OutputFeatureChannels = d.OutputFeatureChannels, d.InputFeatureChannels
			d.Groups = d.OutputFeatureChannels
		}
		c.opX, c.opY = r.Intn(max(d.StrideX, d.DilationX)), r.Intn(max(d.StrideY, d.DilationY))
		if oh, ow := c.outSize(); oh >= 1 && ow >= 1 {
			return c
		}
	}
}

// convTData is a transpose case's data: x the source, dy of its output.
func (c convTCase) data(r *rand.Rand) convData {
	d := c.d
	var cd convData
	cd.oh, cd.ow = c.outSize()
	cd.x = randomData(r, c.n*d.InputFeatureChannels*c.h*c.w)
	wd := d.TransposeWeightsDescriptor()
	cd.w = randomData(r, wd.N*wd.C*wd.H*wd.W)
	for i := range cd.w {
		cd.w[i] *= 0.5
	}
	if c.bias {
		cd.b = randomData(r, d.OutputFeatureChannels)
	}
	cd.dy = randomData(r, c.n*d.OutputFeatureChannels*cd.oh*cd.ow)
	return cd
}

// convTCheck runs c forward (EncodeNew with ConvolutionTransposePadding)
// and its explicit gradients, comparing with the reference.
func convTCheck(t *testing.T, dev *vk.Device, c convTCase, cd convData, half bool, force func(any)) {
	t.Helper()
	d := c.d
	k, err := ops.NewConvolutionTranspose(dev, d)
	require.NoError(t, err)
	defer k.Close()
	gd := d
	gd.Neuron = ops.NeuronDescriptor{}
	gk, err := ops.NewConvolutionTransposeGradient(dev, gd)
	require.NoError(t, err)
	defer gk.Close()
	if force != nil {
		force(k)
		force(gk)
	}
	if half {
		cd.x, cd.dy = toHalf(cd.x), toHalf(cd.dy)
	}
	src := convNewImage(t, dev, half, c.n, d.InputFeatureChannels, c.h, c.w, cd.x)
	wd := d.TransposeWeightsDescriptor()
	w := newImage(t, dev, padding.Descriptor{N: wd.N, C: wd.C, H: wd.H, W: wd.W}, cd.w)
	var b *ops.Image
	if c.bias {
		b = newImage(t, dev, padding.Descriptor{N: 1, C: d.OutputFeatureChannels, H: 1, W: 1}, cd.b)
	}
	k.Padding = ops.ConvolutionTransposePadding(c.pads, c.opX, c.opY)
	var dst *ops.Image
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		dst, err = k.EncodeNew(cb, src, w, b)
		return err
	}), c)
	defer dst.Close()
	require.Equal(t, [2]int{cd.oh, cd.ow}, [2]int{dst.H(), dst.W()}, c)
	got, err := dst.Read(context.Background())
	require.NoError(t, err)

	g := ref.Conv{KernelW: d.KernelWidth, KernelH: d.KernelHeight, StrideX: d.StrideX, StrideY: d.StrideY,
		DilationX: d.DilationX, DilationY: d.DilationY, Groups: d.Groups, PadTop: c.pads.Top, PadLeft: c.pads.Left,
		Neuron: convRefNeuron(d.Neuron)}
	x := conv64(t, c.n, d.InputFeatureChannels, c.h, c.w, cd.x)
	wt := conv64(t, wd.N, wd.C, wd.H, wd.W, cd.w)
	var bias, absBias []float64
	if c.bias {
		bias = conv64(t, 1, len(cd.b), 1, 1, cd.b).Data
		absBias = ref.Abs(conv64(t, 1, len(cd.b), 1, 1, cd.b)).Data
	}
	want := ref.NewTensor[float64](c.n, d.OutputFeatureChannels, cd.oh, cd.ow)
	require.NoError(t, ref.ConvTransposeForward(g, x, wt, bias, &want))
	lin := g
	lin.Neuron = ref.Neuron{}
	mag := ref.NewTensor[float64](c.n, d.OutputFeatureChannels, cd.oh, cd.ow)
	require.NoError(t, ref.ConvTransposeForward(lin, ref.Abs(x), ref.Abs(wt), absBias, &mag))
	kk := d.InputFeatureChannels / d.Groups * d.KernelWidth * d.KernelHeight
	require.NoError(t, convCompareSlack(got, want.Data, mag.Data, kk, convSlope(d.Neuron), half, c.halfSlack()), "forward %v", c)

	// Gradients (explicit forms).
	dy := convNewImage(t, dev, half, c.n, d.OutputFeatureChannels, cd.oh, cd.ow, cd.dy)
	dx := convNewImage(t, dev, half, c.n, d.InputFeatureChannels, c.h, c.w, nil)
	dW := newImage(t, dev, padding.Descriptor{N: wd.N, C: wd.C, H: wd.H, W: wd.W}, nil)
	db := newImage(t, dev, padding.Descriptor{N: 1, C: d.OutputFeatureChannels, H: 1, W: 1}, nil)
	gk.SetForwardOffset(k.Offset.X, k.Offset.Y)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if err := gk.EncodeData(cb, dy, w, dx); err != nil {
			return err
		}
		return gk.EncodeWeights(cb, dy, src, dW, db)
	}), c)
	dy64 := conv64(t, c.n, d.OutputFeatureChannels, cd.oh, cd.ow, cd.dy)
	rdx := ref.NewTensor[float64](c.n, d.InputFeatureChannels, c.h, c.w)
	mdx := ref.NewTensor[float64](c.n, d.InputFeatureChannels, c.h, c.w)
	require.NoError(t, ref.ConvTransposeGradData(lin, dy64, wt, &rdx))
	require.NoError(t, ref.ConvTransposeGradData(lin, ref.Abs(dy64), ref.Abs(wt), &mdx))
	rdw := ref.NewTensor[float64](wd.N, wd.C, wd.H, wd.W)
	mdw := ref.NewTensor[float64](wd.N, wd.C, wd.H, wd.W)
	rdb, mdb := make([]float64, d.OutputFeatureChannels), make([]float64, d.OutputFeatureChannels)
	require.NoError(t, ref.ConvTransposeGradWeights(lin, x, dy64, &rdw, rdb))
	require.NoError(t, ref.ConvTransposeGradWeights(lin, ref.Abs(x), ref.Abs(dy64), &mdw, mdb))
	ctx := context.Background()
	gdx, err := dx.Read(ctx)
	require.NoError(t, err)
	gdw, err := dW.Read(ctx)
	require.NoError(t, err)
	gdb, err := db.Read(ctx)
	require.NoError(t, err)
	require.NoError(t, convCompareSlack(gdx, rdx.Data, mdx.Data, d.OutputFeatureChannels/d.Groups*d.KernelWidth*d.KernelHeight, 1, half, c.halfSlack()), "dx %v", c)
	require.NoError(t, convCompareSlack(gdw, rdw.Data, mdw.Data, c.n*cd.oh*cd.ow, 1, c.weightsHalf(half), c.halfSlack()), "dW %v", c)
	require.NoError(t, convCompare(gdb, rdb, mdb, c.n*cd.oh*cd.ow, 1, false), "db %v", c)
}

func (c convTCase) String() string {
	return fmt.Sprintf("transpose %v out %d,%d", c.convCase, c.opX, c.opY)
}

// The transpose convolution (PyTorch's ConvTranspose2d: padding,
// output_padding, groups, dilation, strides) and its gradients against the
// reference over a random table.
func TestConvolutionTransposeMatchesReference(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(20240602))
	for i := 0; i < 5; i++ {
		c := convRandomTCase(r)
		if i%3 == 1 {
			c.d.Neuron = ops.NeuronDescriptor{Type: ops.NeuronTanH, A: 1, B: 1}
		}
		half := i%4 == 3 && dev.Limits().Float16Storage
		t.Run(fmt.Sprint(i), func(t *testing.T) { convTCheck(t, dev, c, c.data(r), half, nil) })
	}
}

// MPS's reverse size rule for padding methods: (src-1)*stride + 1 +
// style*(ke-1), with Offset placing the windows as the policy says; the
// result equals PyTorch's transpose with pad = Offset - floor(ke/2) + ke-1
// (and a bottom pad making the size).
func TestConvolutionTransposeMPSPolicies(t *testing.T) {
	dev := vktest.Open(t)
	d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 2, InputFeatureChannels: 3, OutputFeatureChannels: 2,
		StrideX: 2, StrideY: 3, DilationX: 1, DilationY: 1, Groups: 1}
	r := rand.New(rand.NewSource(5))
	for _, m := range []padding.Method{padding.Valid, padding.Same, padding.Full, padding.Same | padding.AddRemainderToBottomRight} {
		want, _, err := d.TransposeResultDescriptor(ops.ImageDescriptor{N: 1, C: 3, H: 4, W: 5}, padding.WithMethod(m))
		require.NoError(t, err)
		style := m.Style()
		require.Equal(t, (4-1)*3+1+int(style)*(2-1), want.H, m)
		require.Equal(t, (5-1)*2+1+int(style)*(3-1), want.W, m)
		k, err := ops.NewConvolutionTranspose(dev, d)
		require.NoError(t, err)
		k.Padding = padding.WithMethod(m)
		got, err := k.DestinationImageDescriptor(ops.ImageDescriptor{N: 1, C: 3, H: 4, W: 5})
		require.NoError(t, err)
		require.Equal(t, want.H, got.H)
		// The same windows as PyTorch with these pads.
		padT := k.Offset.Y - 1 + 1
		padL := k.Offset.X - 1 + 2
		c := convTCase{convCase: convCase{d: d, n: 1, h: 4, w: 5, pads: padding.Pads{Top: padT, Left: padL}}}
		c.pads.Bottom = ref.ConvTransposeOutputSize(4, 2, 3, 1, padT, 0, 0) - want.H
		c.pads.Right = ref.ConvTransposeOutputSize(5, 3, 2, 1, padL, 0, 0) - want.W
		if c.pads.Top < 0 || c.pads.Left < 0 || c.pads.Bottom < 0 || c.pads.Right < 0 {
			// Pads PyTorch cannot express; the sizes above are the check.
			k.Close()
			continue
		}
		cd := c.data(r)
		src := newImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 4, W: 5}, cd.x)
		wd := d.TransposeWeightsDescriptor()
		w := newImage(t, dev, padding.Descriptor{N: wd.N, C: wd.C, H: wd.H, W: wd.W}, cd.w)
		var dst *ops.Image
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			dst, err = k.EncodeNew(cb, src, w, nil)
			return err
		}))
		out, err := dst.Read(context.Background())
		require.NoError(t, err)
		dst.Close()
		k.Close()
		g := ref.Conv{KernelW: 3, KernelH: 2, StrideX: 2, StrideY: 3, DilationX: 1, DilationY: 1, Groups: 1, PadTop: padT, PadLeft: padL}
		ref64 := ref.NewTensor[float64](1, 2, want.H, want.W)
		require.NoError(t, ref.ConvTransposeForward(g, conv64(t, 1, 3, 4, 5, cd.x), conv64(t, wd.N, wd.C, wd.H, wd.W, cd.w), nil, &ref64))
		mag := ref.NewTensor[float64](1, 2, want.H, want.W)
		require.NoError(t, ref.ConvTransposeForward(g, ref.Abs(conv64(t, 1, 3, 4, 5, cd.x)), ref.Abs(conv64(t, wd.N, wd.C, wd.H, wd.W, cd.w)), nil, &mag))
		require.NoError(t, convCompare(out, ref64.Data, mag.Data, 18, 1, false), m)
	}
}
