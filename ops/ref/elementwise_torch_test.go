package ref

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// torchWithin reports whether a float32 PyTorch value matches the
// reference: 3e-5 relative to max(1, |want|), plus extra (the rounding of
// a float32 sum, for reductions).
func torchWithin(got float32, want, extra float64) bool {
	return math.Abs(float64(got)-want) <= 3e-5*math.Max(1, math.Abs(want))+extra
}

// TestElementwiseMatchesPyTorch checks the neuron, softmax and arithmetic
// references, forward and gradients, against PyTorch's (CPU, float32).
func TestElementwiseMatchesPyTorch(t *testing.T) {
	cases, err := LoadElementwiseTorchCases("../testdata/torch/elementwise_cases.json")
	require.NoError(t, err)
	kinds := map[string]int{}
	for _, c := range cases {
		kinds[c.Kind]++
		x := c.Inputs[0]
		dy := Tensor[float32]{N: c.Output.N, C: c.Output.C, H: c.Output.H, W: c.Output.W, Data: c.GradOutput}
		var y, dx []float64
		var dxs [][]float64
		sumTol := 0.0
		switch c.Kind {
		case "neuron":
			y, err = NeuronForward(c.Neuron, x)
			require.NoError(t, err, c.Name)
			dx, err = NeuronGradient(c.Neuron, dy, x)
			require.NoError(t, err, c.Name)
			dxs = [][]float64{dx}
			if c.Neuron.Type == NeuronPReLU {
				ds, err := PReLUSlopeGradient(dy, x)
				require.NoError(t, err)
				for i := range ds {
					require.True(t, torchWithin(c.GradPReLU[i], ds[i], 1e-5*float64(len(x.Data))), "%s slope %d: %v, want %v", c.Name, i, c.GradPReLU[i], ds[i])
				}
			}
		case "softmax", "log_softmax":
			log := c.Kind == "log_softmax"
			y, err = SoftMax(x, log)
			require.NoError(t, err, c.Name)
			// MPS's gradient takes the forward's result: give it PyTorch's.
			dx, err = SoftMaxGradient(dy, c.Output, log)
			require.NoError(t, err, c.Name)
			dxs = [][]float64{dx}
			sumTol = 1e-6 * float64(x.C)
		case "arithmetic":
			z, err := ArithmeticForward(c.Arithmetic, c.Inputs[0], c.Inputs[1])
			require.NoError(t, err, c.Name)
			y = z.Data
			for side := 0; side < 2; side++ {
				g, err := ArithmeticGradient(c.Arithmetic, dy, c.Inputs[0], c.Inputs[1], side == 1)
				require.NoError(t, err, c.Name)
				require.Equal(t, c.Inputs[side].Shape(), g.Shape(), c.Name)
				dxs = append(dxs, g.Data)
			}
			sumTol = 1e-6 * float64(len(c.Output.Data))
		}
		for i := range y {
			require.True(t, torchWithin(c.Output.Data[i], y[i], 0), "%s y[%d]: PyTorch %v, reference %v", c.Name, i, c.Output.Data[i], y[i])
		}
		for s, want := range dxs {
			for i := range want {
				require.True(t, torchWithin(c.GradInputs[s][i], want[i], sumTol), "%s d%d[%d]: PyTorch %v, reference %v", c.Name, s, i, c.GradInputs[s][i], want[i])
			}
		}
	}
	require.Equal(t, map[string]int{"neuron": 25, "softmax": 4, "log_softmax": 4, "arithmetic": 24}, kinds)
}
