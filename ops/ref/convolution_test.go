package ref

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// convRandGeometry draws a small convolution: groups (depthwise included),
// dilation, asymmetric placement, strides larger than the kernel.
func convRandGeometry(r *rand.Rand) (g Conv, n, c, o, h, w int) {
	g = Conv{KernelW: 1 + r.IntN(3), KernelH: 1 + r.IntN(3), StrideX: 1 + r.IntN(3), StrideY: 1 + r.IntN(2),
		DilationX: 1 + r.IntN(2), DilationY: 1 + r.IntN(2)}
	g.Groups = []int{1, 1, 2, 3}[r.IntN(4)]
	c = g.Groups * (1 + r.IntN(3))
	o = g.Groups * (1 + r.IntN(3))
	if r.IntN(5) == 0 { // depthwise
		g.Groups = c
		o = c
	}
	g.PadTop, g.PadLeft = r.IntN(3), r.IntN(2)
	n, h, w = 1+r.IntN(2), 2+r.IntN(5), 2+r.IntN(5)
	return g, n, c, o, h, w
}

func convRandTensor(r *rand.Rand, n, c, h, w int) Tensor[float64] {
	t := NewTensor[float64](n, c, h, w)
	for i := range t.Data {
		t.Data[i] = r.Float64()*2 - 1
	}
	return t
}

func convRandSlice(r *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = r.Float64()*2 - 1
	}
	return s
}

// convCheckFD compares analytic gradients with central differences of
// loss() w.r.t. every value of params.
func convCheckFD(t *testing.T, name string, params, grad []float64, loss func() float64) {
	t.Helper()
	const h = 1e-5
	for i := range params {
		v := params[i]
		params[i] = v + h
		lp := loss()
		params[i] = v - h
		lm := loss()
		params[i] = v
		num := (lp - lm) / (2 * h)
		require.InDelta(t, num, grad[i], 1e-6*math.Max(1, math.Abs(num)), "%s[%d]", name, i)
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Every convolution gradient (data, weights, bias) against central finite
// differences of L = sum(dy * conv(x, w, b)).
func TestConvGradientsFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for trial := range 60 {
		g, n, c, o, h, w := convRandGeometry(r)
		oh := ConvOutputSize(h, g.KernelH, g.StrideY, g.DilationY, g.PadTop, r.IntN(3))
		ow := ConvOutputSize(w, g.KernelW, g.StrideX, g.DilationX, g.PadLeft, r.IntN(3))
		if oh < 1 || ow < 1 {
			continue
		}
		x := convRandTensor(r, n, c, h, w)
		wt := convRandTensor(r, o, c/g.Groups, g.KernelH, g.KernelW)
		b := convRandSlice(r, o)
		dy := convRandTensor(r, n, o, oh, ow)
		y := NewTensor[float64](n, o, oh, ow)
		loss := func() float64 {
			require.NoError(t, ConvForward(g, x, wt, b, &y))
			return dot(dy.Data, y.Data)
		}
		dx := NewTensor[float64](n, c, h, w)
		require.NoError(t, ConvGradData(g, dy, wt, &dx), "trial %d %+v", trial, g)
		dw := NewTensor[float64](o, c/g.Groups, g.KernelH, g.KernelW)
		db := make([]float64, o)
		require.NoError(t, ConvGradWeights(g, x, dy, &dw, db))
		convCheckFD(t, "dx", x.Data, dx.Data, loss)
		convCheckFD(t, "dw", wt.Data, dw.Data, loss)
		convCheckFD(t, "db", b, db, loss)
	}
}

// convTransposeNaive is conv_transpose2d by its scatter definition.
func convTransposeNaive(g Conv, x, w Tensor[float64], b []float64, y *Tensor[float64]) {
	for i := range y.Data {
		y.Data[i] = 0
	}
	icg, ocg := x.C/g.Groups, y.C/g.Groups
	for n := 0; n < x.N; n++ {
		for i := 0; i < x.C; i++ {
			gr := i / icg
			for iy := 0; iy < x.H; iy++ {
				for ix := 0; ix < x.W; ix++ {
					for oo := 0; oo < ocg; oo++ {
						for ky := 0; ky < g.KernelH; ky++ {
							for kx := 0; kx < g.KernelW; kx++ {
								oy := iy*g.StrideY - g.PadTop + ky*g.DilationY
								ox := ix*g.StrideX - g.PadLeft + kx*g.DilationX
								if oy < 0 || oy >= y.H || ox < 0 || ox >= y.W {
									continue
								}
								y.Data[y.Index(n, gr*ocg+oo, oy, ox)] += x.At(n, i, iy, ix) * w.At(i, oo, ky, kx)
							}
						}
					}
				}
			}
		}
	}
	for i := range y.Data {
		y.Data[i] += b[i/(y.H*y.W)%y.C]
	}
}

// The transpose convolution equals its scatter definition, and its
// gradients match central finite differences.
func TestConvTransposeFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 12))
	for range 60 {
		g, n, c, o, h, w := convRandGeometry(r)
		outPadY, outPadX := r.IntN(g.StrideY), r.IntN(g.StrideX)
		padB, padR := r.IntN(2), r.IntN(2)
		oh := ConvTransposeOutputSize(h, g.KernelH, g.StrideY, g.DilationY, g.PadTop, padB, outPadY)
		ow := ConvTransposeOutputSize(w, g.KernelW, g.StrideX, g.DilationX, g.PadLeft, padR, outPadX)
		if oh < 1 || ow < 1 {
			continue
		}
		x := convRandTensor(r, n, c, h, w)
		wt := convRandTensor(r, c, o/g.Groups, g.KernelH, g.KernelW)
		b := convRandSlice(r, o)
		dy := convRandTensor(r, n, o, oh, ow)
		y := NewTensor[float64](n, o, oh, ow)
		require.NoError(t, ConvTransposeForward(g, x, wt, b, &y))
		naive := NewTensor[float64](n, o, oh, ow)
		convTransposeNaive(g, x, wt, b, &naive)
		for i := range y.Data {
			require.InDelta(t, naive.Data[i], y.Data[i], 1e-12)
		}
		loss := func() float64 {
			require.NoError(t, ConvTransposeForward(g, x, wt, b, &y))
			return dot(dy.Data, y.Data)
		}
		dx := NewTensor[float64](n, c, h, w)
		require.NoError(t, ConvTransposeGradData(g, dy, wt, &dx))
		dw := NewTensor[float64](c, o/g.Groups, g.KernelH, g.KernelW)
		db := make([]float64, o)
		require.NoError(t, ConvTransposeGradWeights(g, x, dy, &dw, db))
		convCheckFD(t, "dx", x.Data, dx.Data, loss)
		convCheckFD(t, "dw", wt.Data, dw.Data, loss)
		convCheckFD(t, "db", b, db, loss)
	}
}

// Fully connected gradients against central finite differences, and the
// layer equals a convolution whose window covers the source.
func TestFullyConnectedFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 13))
	for range 20 {
		n, c, h, w, o := 1+r.IntN(3), 1+r.IntN(4), 1+r.IntN(3), 1+r.IntN(3), 1+r.IntN(5)
		x := convRandTensor(r, n, c, h, w)
		wt := convRandTensor(r, o, c, h, w)
		b := convRandSlice(r, o)
		dy := convRandTensor(r, n, o, 1, 1)
		y := NewTensor[float64](n, o, 1, 1)
		loss := func() float64 {
			require.NoError(t, FullyConnected(x, wt, b, Neuron{}, &y))
			return dot(dy.Data, y.Data)
		}
		loss()
		conv := NewTensor[float64](n, o, 1, 1)
		require.NoError(t, ConvForward(Conv{KernelW: w, KernelH: h, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}, x, wt, b, &conv))
		for i := range conv.Data {
			require.InDelta(t, conv.Data[i], y.Data[i], 1e-12)
		}
		dx := NewTensor[float64](n, c, h, w)
		dw := NewTensor[float64](o, c, h, w)
		db := make([]float64, o)
		require.NoError(t, FullyConnectedGrad(x, wt, dy, &dx, &dw, db))
		convCheckFD(t, "dx", x.Data, dx.Data, loss)
		convCheckFD(t, "dw", wt.Data, dw.Data, loss)
		convCheckFD(t, "db", b, db, loss)
	}
}

// A fused neuron: the chain dy -> NeuronGrad -> linear gradients matches
// finite differences of sum(dy * neuron(conv(x))).
func TestConvFusedNeuronChain(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 14))
	for _, nr := range []Neuron{{Type: NeuronTanH, A: 1.3, B: 0.7}, {Type: NeuronSigmoid}, {Type: NeuronPReLU, PReLU: []float64{0.2, -0.4, 0.5}}} {
		g := Conv{KernelW: 3, KernelH: 2, StrideX: 1, StrideY: 2, DilationX: 1, DilationY: 1, PadTop: 1, PadLeft: 1, Neuron: nr}
		x := convRandTensor(r, 2, 2, 5, 4)
		wt := convRandTensor(r, 3, 2, 2, 3)
		b := convRandSlice(r, 3)
		oh, ow := ConvOutputSize(5, 2, 2, 1, 1, 1), ConvOutputSize(4, 3, 1, 1, 1, 1)
		dy := convRandTensor(r, 2, 3, oh, ow)
		y := NewTensor[float64](2, 3, oh, ow)
		loss := func() float64 {
			require.NoError(t, ConvForward(g, x, wt, b, &y))
			return dot(dy.Data, y.Data)
		}
		lin := g
		lin.Neuron = Neuron{}
		z := NewTensor[float64](2, 3, oh, ow)
		require.NoError(t, ConvForward(lin, x, wt, b, &z))
		dz := NewTensor[float64](2, 3, oh, ow)
		NeuronGrad(nr, z, dy, &dz)
		dx := NewTensor[float64](2, 2, 5, 4)
		require.NoError(t, ConvGradData(g, dz, wt, &dx))
		dw := NewTensor[float64](3, 2, 2, 3)
		db := make([]float64, 3)
		require.NoError(t, ConvGradWeights(g, x, dz, &dw, db))
		convCheckFD(t, "dx", x.Data, dx.Data, loss)
		convCheckFD(t, "dw", wt.Data, dw.Data, loss)
		convCheckFD(t, "db", b, db, loss)
	}
}

func TestConvBadInput(t *testing.T) {
	x := NewTensor[float32](1, 4, 3, 3)
	w := NewTensor[float32](2, 3, 1, 1)
	y := NewTensor[float32](1, 2, 3, 3)
	g := Conv{KernelW: 1, KernelH: 1, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Groups: 2}
	require.ErrorIs(t, ConvForward(g, x, w, nil, &y), ErrConv) // weights 2x3, want 2x2
	g.Groups = 3
	require.ErrorIs(t, ConvForward(g, x, w, nil, &y), ErrConv) // groups do not divide
	g.Groups, g.StrideX = 1, 0
	require.ErrorIs(t, ConvForward(g, x, w, nil, &y), ErrConv)
}

// convTorchTensors returns a case's input, weights (4-D), dy and bias in
// float64.
func convTorch64(c ConvTorchCase) (x, w, dy Tensor[float64], b []float64) {
	t := func(s [4]int, d []float32) Tensor[float64] {
		out := NewTensor[float64](s[0], s[1], s[2], s[3])
		for i, v := range d {
			out.Data[i] = float64(v)
		}
		return out
	}
	ws := [4]int{c.WeightShape[0], 1, 1, 1}
	if len(c.WeightShape) == 4 {
		copy(ws[:], c.WeightShape)
	} else {
		ws[1] = c.WeightShape[1]
	}
	x, w, dy = t(c.InputShape, c.Input), t(ws, c.Weight), t(c.OutputShape, c.GradOutput)
	for _, v := range c.Bias {
		b = append(b, float64(v))
	}
	return x, w, dy, b
}

// The reference agrees with PyTorch (conv2d after pad, conv_transpose2d,
// linear) on every case, forward and gradients, within the float32 sum
// tolerance.
func TestConvMatchesPyTorch(t *testing.T) {
	cases, err := LoadConvTorchCases("../testdata/torch/conv_cases.json")
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	for _, c := range cases {
		x, w, dy, b := convTorch64(c)
		g := c.Conv()
		os := c.OutputShape
		y := NewTensor[float64](os[0], os[1], os[2], os[3])
		dx := NewTensor[float64](x.N, x.C, x.H, x.W)
		dw := NewTensor[float64](w.N, w.C, w.H, w.W)
		var db []float64
		if b != nil {
			db = make([]float64, len(b))
		}
		switch c.Op {
		case "conv":
			require.NoError(t, ConvForward(g, x, w, b, &y), c.Name)
			require.NoError(t, ConvGradData(g, dy, w, &dx), c.Name)
			require.NoError(t, ConvGradWeights(g, x, dy, &dw, db), c.Name)
		case "transpose":
			require.NoError(t, ConvTransposeForward(g, x, w, b, &y), c.Name)
			require.NoError(t, ConvTransposeGradData(g, dy, w, &dx), c.Name)
			require.NoError(t, ConvTransposeGradWeights(g, x, dy, &dw, db), c.Name)
		case "linear":
			w4 := Tensor[float64]{N: w.N, C: x.C, H: x.H, W: x.W, Data: w.Data}
			dw4 := NewTensor[float64](w.N, x.C, x.H, x.W)
			require.NoError(t, FullyConnected(x, w4, b, Neuron{}, &y), c.Name)
			require.NoError(t, FullyConnectedGrad(x, w4, dy, &dx, &dw4, db), c.Name)
			dw.Data = dw4.Data
		}
		for _, cmp := range []struct {
			what  string
			got   []float64
			torch []float32
		}{{"output", y.Data, c.Output}, {"grad_input", dx.Data, c.GradInput}, {"grad_weight", dw.Data, c.GradWeight}, {"grad_bias", db, c.GradBias}} {
			for i, v := range cmp.torch {
				require.InDelta(t, float64(v), cmp.got[i], 1e-4*(1+math.Abs(cmp.got[i])), "%s %s[%d]", c.Name, cmp.what, i)
			}
		}
	}
}
