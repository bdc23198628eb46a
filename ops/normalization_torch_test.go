package ops_test

import (
	"errors"
	"io/fs"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// TestNormalizationMatchesPyTorch runs every case of
// testdata/torch/normalization_cases.json (batch_norm in training, with
// prior training steps, and eval; instance_norm; local_response_norm) on
// the GPU and compares the output, dx, dgamma, dbeta and the running
// statistics with PyTorch's: |got - want| <= 2e-4 * max(1, |want|) (both
// compute in float32). ops/ref matches the same cases
// (TestNormalizationAgainstPyTorch there).
func TestNormalizationMatchesPyTorch(t *testing.T) {
	cases, err := ref.LoadNormTorchCases("testdata/torch/normalization_cases.json")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("testdata/torch/normalization_cases.json does not exist: run /usr/bin/python3 ops/testdata/torch/gen_normalization_cases.py")
	}
	require.NoError(t, err)
	dev := vktest.Open(t)
	f64 := func(v []float32) []float64 { return bnF64(v) }
	tol := func(want []float64) func(int) float64 {
		return func(i int) float64 { return 2e-4 * math.Max(1, math.Abs(want[i])) }
	}
	for _, c := range cases {
		d := padding.Descriptor{N: c.Shape[0], C: c.Shape[1], H: c.Shape[2], W: c.Shape[3]}
		x, dy := newImage(t, dev, d, c.Input), newImage(t, dev, d, c.GradOutput)
		y, dx := newImage(t, dev, d, nil), newImage(t, dev, d, nil)
		var dgamma, dbeta, rm, rv *ops.Image
		switch c.Op {
		case "batch_norm":
			gamma, beta := bnParam(t, dev, c.Weight), bnParam(t, dev, c.Bias)
			rm, rv = bnParam(t, dev, c.RunningMean), bnParam(t, dev, c.RunningVar)
			dgamma, dbeta = bnParam(t, dev, make([]float32, d.C)), bnParam(t, dev, make([]float32, d.C))
			desc := ops.NewBatchNormalizationDescriptor(d.C)
			desc.Epsilon, desc.Momentum = float32(c.Eps), float32(c.Momentum)
			bn := must(ops.NewBatchNormalization(dev, desc, gamma, beta, rm, rv))
			g := must(ops.NewBatchNormalizationGradient(bn))
			st := must(bn.NewState())
			priors := make([]*ops.Image, len(c.PriorInputs))
			for i, p := range c.PriorInputs {
				priors[i] = newImage(t, dev, d, p)
			}
			require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
				for _, p := range priors {
					if err := bn.EncodeTraining(cb, p, st, y); err != nil {
						return err
					}
				}
				if c.Training {
					if err := bn.EncodeTraining(cb, x, st, y); err != nil {
						return err
					}
				} else if err := bn.EncodeInference(cb, x, y, st); err != nil {
					return err
				}
				return g.EncodeAll(cb, dy, x, st, dx, dgamma, dbeta)
			}), c.Name)
			st.Close()
			g.Close()
			bn.Close()
		case "instance_norm":
			gamma, beta := bnParam(t, dev, c.Weight), bnParam(t, dev, c.Bias)
			dgamma, dbeta = bnParam(t, dev, make([]float32, d.C)), bnParam(t, dev, make([]float32, d.C))
			desc := ops.NewInstanceNormalizationDescriptor(d.C)
			desc.Epsilon = float32(c.Eps)
			in := must(ops.NewInstanceNormalization(dev, desc, gamma, beta))
			g := must(ops.NewInstanceNormalizationGradient(in))
			require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
				if err := in.Encode(cb, x, y); err != nil {
					return err
				}
				return g.Encode(cb, dy, x, dx, dgamma, dbeta)
			}), c.Name)
			g.Close()
			in.Close()
		case "local_response_norm":
			desc := ops.CrossChannelNormalizationDescriptor{KernelSize: c.Size, Alpha: float32(c.Alpha), Beta: float32(c.Beta), Delta: float32(c.K)}
			f := must(ops.NewCrossChannelNormalization(dev, desc))
			g := must(ops.NewCrossChannelNormalizationGradient(dev, desc))
			require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
				if err := f.Encode(cb, x, y); err != nil {
					return err
				}
				return g.Encode(cb, dy, x, dx)
			}), c.Name)
			g.Close()
			f.Close()
		}
		require.NoError(t, bnCompare("output", bnRead(t, y), f64(c.Output), tol(f64(c.Output))), c.Name)
		require.NoError(t, bnCompare("grad_input", bnRead(t, dx), f64(c.GradInput), tol(f64(c.GradInput))), c.Name)
		if dgamma != nil {
			require.NoError(t, bnCompare("grad_weight", bnRead(t, dgamma), f64(c.GradWeight), tol(f64(c.GradWeight))), c.Name)
			require.NoError(t, bnCompare("grad_bias", bnRead(t, dbeta), f64(c.GradBias), tol(f64(c.GradBias))), c.Name)
		}
		if rm != nil {
			require.NoError(t, bnCompare("running_mean_after", bnRead(t, rm), f64(c.RunningMeanAfter), tol(f64(c.RunningMeanAfter))), c.Name)
			require.NoError(t, bnCompare("running_var_after", bnRead(t, rv), f64(c.RunningVarAfter), tol(f64(c.RunningVarAfter))), c.Name)
		}
	}
}
