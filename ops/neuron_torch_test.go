package ops_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// neuronTorchCompare checks GPU values against PyTorch's float32 ones:
// |got - want| <= 3e-5 * max(1, |want|) + extra (both sides round in
// float32 with their own exp, log, tanh; extra covers sums).
func neuronTorchCompare(t *testing.T, what string, got, want []float32, extra float64) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		w := float64(want[i])
		require.LessOrEqual(t, math.Abs(float64(got[i])-w), 3e-5*math.Max(1, math.Abs(w))+extra, "%s[%d]: got %v, PyTorch %v", what, i, got[i], want[i])
	}
}

// TestElementwiseMatchesPyTorch runs the PyTorch cases of
// ops/testdata/torch/elementwise_cases.json (neurons incl. PReLU's slope
// gradient, softmax and log-softmax, arithmetic with broadcasting and
// clamping; made by gen_elementwise_cases.py) on the GPU in float32 and
// compares with PyTorch. ops/ref checks the same cases against its
// reference, which TestNeuronMatchesReference and its kin hold the GPU to.
func TestElementwiseMatchesPyTorch(t *testing.T) {
	cases, err := ref.LoadElementwiseTorchCases("testdata/torch/elementwise_cases.json")
	require.NoError(t, err)
	dev := vktest.Open(t)
	ctx := context.Background()
	shape := func(t ref.Tensor[float32]) padding.Descriptor { return t.Shape() }
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			x := newImage(t, dev, shape(c.Inputs[0]), c.Inputs[0].Data)
			dy := newImage(t, dev, shape(c.Output), c.GradOutput)
			out := newImage(t, dev, shape(c.Output), nil)
			dx := newImage(t, dev, shape(c.Inputs[0]), nil)
			sumTol := 0.0
			var extra []*ops.Image
			switch c.Kind {
			case "neuron":
				typ, err := ops.ParseNeuronType(c.NeuronName)
				require.NoError(t, err)
				d := ops.NeuronDescriptor{Type: typ, A: float32(c.Neuron.A), B: float32(c.Neuron.B), C: float32(c.Neuron.C)}
				for _, s := range c.Neuron.PReLU {
					d.PReLU = append(d.PReLU, float32(s))
				}
				f := must(ops.NewNeuron(dev, d))
				t.Cleanup(func() { f.Close() })
				g := must(ops.NewNeuronGradient(dev, d))
				t.Cleanup(func() { g.Close() })
				var ds *ops.Image
				require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
					if err := f.Encode(cb, x, out); err != nil {
						return err
					}
					if typ == ops.NeuronPReLU {
						ds = newImage(t, dev, padding.Descriptor{N: 1, C: x.C(), H: 1, W: 1}, nil)
						if err := g.EncodeSlopeGradient(cb, dy, x, ds); err != nil {
							return err
						}
					}
					return g.Encode(cb, dy, x, dx)
				}))
				if ds != nil {
					got, err := ds.Read(ctx)
					require.NoError(t, err)
					neuronTorchCompare(t, "slope gradient", got, c.GradPReLU, 1e-5*float64(x.Len()))
				}
			case "softmax", "log_softmax":
				// The gradient takes the forward's result: PyTorch's.
				yt := newImage(t, dev, shape(c.Output), c.Output.Data)
				require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
					if c.Kind == "softmax" {
						if err := must(ops.NewSoftMax(dev)).Encode(cb, x, out); err != nil {
							return err
						}
						return must(ops.NewSoftMaxGradient(dev)).Encode(cb, dy, yt, dx)
					}
					if err := must(ops.NewLogSoftMax(dev)).Encode(cb, x, out); err != nil {
						return err
					}
					return must(ops.NewLogSoftMaxGradient(dev)).Encode(cb, dy, yt, dx)
				}))
				sumTol = 1e-6 * float64(x.C())
			case "arithmetic":
				op, err := ops.ParseArithmeticOp(c.ArithmeticOpName)
				require.NoError(t, err)
				a := c.Arithmetic
				d := ops.ArithmeticDescriptor{Op: op, PrimaryScale: float32(a.PrimaryScale), SecondaryScale: float32(a.SecondaryScale),
					Bias: float32(a.Bias), Minimum: float32(a.Minimum), Maximum: float32(a.Maximum)}
				y := newImage(t, dev, shape(c.Inputs[1]), c.Inputs[1].Data)
				dyy := newImage(t, dev, shape(c.Inputs[1]), nil)
				extra = append(extra, dyy)
				gx := must(ops.NewArithmeticGradient(dev, d, false))
				t.Cleanup(func() { gx.Close() })
				gy := must(ops.NewArithmeticGradient(dev, d, true))
				t.Cleanup(func() { gy.Close() })
				require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
					if err := must(ops.NewArithmetic(dev, d)).Encode(cb, x, y, out); err != nil {
						return err
					}
					if err := gx.Encode(cb, dy, x, y, dx); err != nil {
						return err
					}
					return gy.Encode(cb, dy, x, y, dyy)
				}))
				sumTol = 1e-6 * float64(dy.Len())
			}
			got, err := out.Read(ctx)
			require.NoError(t, err)
			neuronTorchCompare(t, "result", got, c.Output.Data, 0)
			got, err = dx.Read(ctx)
			require.NoError(t, err)
			neuronTorchCompare(t, "gradient", got, c.GradInputs[0], sumTol)
			for i, im := range extra {
				got, err := im.Read(ctx)
				require.NoError(t, err)
				neuronTorchCompare(t, "secondary gradient", got, c.GradInputs[i+1], sumTol)
			}
		})
	}
}
