package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/ops/ref"
)

// torchCasesPath is the PyTorch testdata of the kernel issues, from this
// package's directory.
var torchCasesPath = filepath.Join("..", "..", "ops", "testdata", "torch", "pool_cases.json")

// torchArgs returns the vkmps flags of a PyTorch case: PyTorch's
// max_pool2d, avg_pool2d and lp_pool2d(2) arguments, one for one.
func torchArgs(c ref.TorchCase) []string {
	pair := func(p [2]int) string { return fmt.Sprintf("%d,%d", p[0], p[1]) }
	args := []string{"--op", c.Op, "--kernel", pair(c.Kernel), "--stride", pair(c.Stride), "--pad", pair(c.Padding), "--quiet"}
	if c.Op == "max" {
		args = append(args, "--dilation", pair(c.Dilation))
	}
	if c.CeilMode {
		args = append(args, "--ceil-mode")
	}
	if c.CountIncludePad {
		args = append(args, "--count-include-pad")
	}
	return args
}

// `vkmps pool` and `vkmps pool-grad` agree with PyTorch on every case of
// ops/testdata/torch/pool_cases.json (180 cases, max_pool2d with dilation
// and ceil_mode, avg_pool2d with count_include_pad both ways, lp_pool2d):
// the inputs go through .npy files and the command line, and the .npy
// outputs are compared exactly for max and within ref.SumTolerance for the
// sums. All 180 run: 360 command runs take about 15 s on lavapipe with
// validation on, in parallel subtests.
func TestPoolAgreesWithPyTorch(t *testing.T) {
	requireVulkan(t)
	cases, err := ref.LoadTorchCases(torchCasesPath)
	require.NoError(t, err)
	require.Len(t, cases, 180)
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel() // each run opens its own device: independent
			dir := t.TempDir()
			in, out, dy, dx := c.Tensors()
			tensor := func(x ref.Tensor[float32]) tensorio.Tensor {
				return tensorio.Tensor{N: x.N, C: x.C, H: x.H, W: x.W, Data: x.Data, Rank: 4}
			}
			inPath := writeTensor(t, dir, "x.npy", tensor(in))
			dyPath := writeTensor(t, dir, "dy.npy", tensor(dy))
			args := torchArgs(c)

			yPath := filepath.Join(dir, "y.npy")
			mustSucceed(t, append([]string{"pool", "--in", inPath, "--out", yPath}, args...)...)
			y := readTensor(t, yPath)
			require.Equal(t, []int{out.N, out.C, out.H, out.W}, y.Shape())
			require.NoError(t, ref.Compare(c.Geometry().Kind, y.Data, out.Data))

			dxPath := filepath.Join(dir, "dx.npy")
			gargs := append([]string{"pool-grad", "--in", inPath, "--grad", dyPath, "--out", dxPath}, args...)
			if i%2 == 1 {
				gargs = append(gargs, "--argmax")
			}
			mustSucceed(t, gargs...)
			got := readTensor(t, dxPath)
			require.Equal(t, []int{in.N, in.C, in.H, in.W}, got.Shape())
			require.NoError(t, ref.Compare(c.Geometry().Kind, got.Data, dx.Data))
		})
	}
}
