package ref

import (
	"errors"
	"io/fs"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

const normTorchPath = "../testdata/torch/normalization_cases.json"

// normTorchClose compares float64 results with PyTorch's float32 ones:
// |got - want| <= 1e-4 * max(1, |want|) (PyTorch sums and powers in
// float32).
func normTorchClose(t *testing.T, what string, got []float64, want []float32) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range got {
		w := float64(want[i])
		require.InDelta(t, w, got[i], 1e-4*math.Max(1, math.Abs(w)), "%s[%d]", what, i)
	}
}

// NormTorchReference computes a case with this package: output, dx, and
// for the affine ops dgamma, dbeta and (batch_norm) the running
// statistics after the case.
func normTorchReference(t *testing.T, c NormTorchCase) (y, dx, dg, db, rm, rv []float64) {
	t.Helper()
	x, dy := c.Tensor(nil), c.Tensor(c.GradOutput)
	yt := NewTensor[float64](x.N, x.C, x.H, x.W)
	dxt := NewTensor[float64](x.N, x.C, x.H, x.W)
	dg, db = make([]float64, x.C), make([]float64, x.C)
	w64 := func(v []float32) []float64 { return c.Tensor(v).Data }
	switch c.Op {
	case "batch_norm":
		b := BatchNorm{Epsilon: c.Eps}
		rm, rv = w64(c.RunningMean), w64(c.RunningVar)
		m := x.N * x.H * x.W
		for _, p := range c.PriorInputs {
			pm, pv := BatchNormStatistics(c.Tensor(p))
			UpdateRunning(rm, rv, pm, pv, m, c.Momentum)
		}
		mean, variance := rm, rv
		if c.Training {
			mean, variance = BatchNormStatistics(x)
		}
		require.NoError(t, b.Forward(x, w64(c.Weight), w64(c.Bias), mean, variance, &yt))
		require.NoError(t, b.Gradient(x, dy, w64(c.Weight), w64(c.Bias), mean, variance, c.Training, &dxt, dg, db))
		if c.Training {
			rm, rv = append([]float64(nil), rm...), append([]float64(nil), rv...)
			UpdateRunning(rm, rv, mean, variance, m, c.Momentum)
		}
	case "instance_norm":
		in := InstanceNorm{Epsilon: c.Eps}
		require.NoError(t, in.Forward(x, w64(c.Weight), w64(c.Bias), &yt))
		require.NoError(t, in.Gradient(x, dy, w64(c.Weight), &dxt, dg, db))
	case "local_response_norm":
		l := CrossChannelNorm{Size: c.Size, Alpha: c.Alpha, Beta: c.Beta, Delta: c.K}
		require.NoError(t, l.Forward(x, &yt))
		require.NoError(t, l.Gradient(x, dy, &dxt))
	}
	return yt.Data, dxt.Data, dg, db, rm, rv
}

// TestNormalizationAgainstPyTorch reproduces every PyTorch case: output,
// gradients and running statistics.
func TestNormalizationAgainstPyTorch(t *testing.T) {
	cases, err := LoadNormTorchCases(normTorchPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s does not exist: run /usr/bin/python3 ops/testdata/torch/gen_normalization_cases.py", normTorchPath)
	}
	require.NoError(t, err)
	ops := map[string]int{}
	for _, c := range cases {
		ops[c.Op]++
		t.Run(c.Name, func(t *testing.T) {
			y, dx, dg, db, rm, rv := normTorchReference(t, c)
			normTorchClose(t, "output", y, c.Output)
			normTorchClose(t, "grad_input", dx, c.GradInput)
			if c.Op != "local_response_norm" {
				normTorchClose(t, "grad_weight", dg, c.GradWeight)
				normTorchClose(t, "grad_bias", db, c.GradBias)
			}
			if c.Op == "batch_norm" {
				normTorchClose(t, "running_mean_after", rm, c.RunningMeanAfter)
				normTorchClose(t, "running_var_after", rv, c.RunningVarAfter)
			}
		})
	}
	for _, op := range []string{"batch_norm", "instance_norm", "local_response_norm"} {
		require.Positive(t, ops[op], "no %s cases", op)
	}
}
