package ref

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/padding"
)

// torchCasesPath is pool_cases.json relative to this package's directory.
const torchCasesPath = "../testdata/torch/pool_cases.json"

// TestAgainstPyTorch reproduces every PyTorch case: forward output and
// autograd gradient, through the explicit-pads mapping of TorchCase.Geometry.
func TestAgainstPyTorch(t *testing.T) {
	cases, err := LoadTorchCases(torchCasesPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s does not exist yet: run `python3 ops/testdata/torch/gen_pool_cases.py` on a machine with PyTorch (see the script's header)", torchCasesPath)
	}
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	ops := map[string]int{}
	for _, c := range cases {
		ops[c.Op]++
		t.Run(c.Name, func(t *testing.T) {
			g := c.Geometry()
			in, out, dy, wantDx := c.Tensors()
			got := NewTensor[float32](out.N, out.C, out.H, out.W)
			require.NoError(t, Pool(g, in, &got))
			assert.NoError(t, Compare(g.Kind, got.Data, out.Data), "forward %+v", g)
			dx := NewTensor[float32](in.N, in.C, in.H, in.W)
			require.NoError(t, PoolGradient(g, in, dy, &dx))
			assert.NoError(t, Compare(g.Kind, dx.Data, wantDx.Data), "gradient %+v", g)
		})
	}
	for _, op := range []string{"max", "avg", "l2"} {
		assert.Positive(t, ops[op], "no %s cases", op)
	}
}

// fixture is a minimal pool_cases.json: one 2x2 average with
// count_include_pad on a 1x1x2x2 image (pad 1, stride 2, kernel 2).
const fixture = `{"meta": {"format": 1, "torch": "test"}, "cases": [
{"name": "avg_tiny", "op": "avg", "kernel": [2, 2], "stride": [2, 2], "padding": [1, 1],
 "dilation": [1, 1], "ceil_mode": false, "count_include_pad": true,
 "input_shape": [1, 1, 2, 2], "input": [1, 2, 3, 4.5],
 "output_shape": [1, 1, 2, 2], "output": [0.25, 0.5, 0.75, 1.125],
 "grad_output": [1, 2, 3, 4], "grad_input": [0.25, 0.5, 0.75, 1]}
]}`

func writeFixture(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pool_cases.json")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func TestLoadTorchCases(t *testing.T) {
	cases, err := LoadTorchCases(writeFixture(t, fixture))
	require.NoError(t, err)
	require.Len(t, cases, 1)
	c := cases[0]
	assert.Equal(t, "avg_tiny", c.Name)
	assert.Equal(t, []float32{1, 2, 3, 4.5}, c.Input)
	g := c.Geometry()
	assert.Equal(t, Geometry{Kind: Average, KernelW: 2, KernelH: 2, StrideX: 2, StrideY: 2,
		DilationX: 1, DilationY: 1, OffsetX: 0, OffsetY: 0, EdgeMode: padding.EdgeClamp,
		ZeroPad: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}}, g)

	in, out, dy, wantDx := c.Tensors()
	got := NewTensor[float32](1, 1, 2, 2)
	require.NoError(t, Pool(g, in, &got))
	require.NoError(t, Compare(Average, got.Data, out.Data))
	dx := NewTensor[float32](1, 1, 2, 2)
	require.NoError(t, PoolGradient(g, in, dy, &dx))
	require.NoError(t, Compare(Average, dx.Data, wantDx.Data))

	for name, text := range map[string]string{
		"bad op":     `{"meta": {"format": 1}, "cases": [{"op": "min"}]}`,
		"bad format": `{"meta": {"format": 2}, "cases": []}`,
		"bad json":   `{"meta": `,
		"bad length": replaceOnce(fixture, `"input": [1, 2, 3, 4.5]`, `"input": [1, 2, 3]`),
		"bad kernel": replaceOnce(fixture, `"kernel": [2, 2]`, `"kernel": [0, 2]`),
	} {
		_, err := LoadTorchCases(writeFixture(t, text))
		assert.Error(t, err, name)
	}
	_, err = LoadTorchCases(filepath.Join(t.TempDir(), "missing.json"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestTorchGeometryMapping(t *testing.T) {
	// max_pool2d(kernel (2,3), dilation (3,1), padding (1,1)): keY = 4,
	// keX = 3, so OffsetY = 2-1 = 1 and OffsetX = 1-1 = 0; no zero pad.
	c := TorchCase{Op: "max", Kernel: [2]int{2, 3}, Stride: [2]int{1, 2}, Padding: [2]int{1, 1},
		Dilation: [2]int{3, 1}, CountIncludePad: true}
	g := c.Geometry()
	assert.Equal(t, DilatedMax, g.Kind)
	assert.Equal(t, [4]int{1, 0, 1, 2}, [4]int{g.OffsetY, g.OffsetX, g.StrideY, g.StrideX})
	assert.Equal(t, padding.Pads{}, g.ZeroPad)
	c.Op, c.Dilation, c.CountIncludePad = "avg", [2]int{1, 1}, false
	assert.Equal(t, padding.Pads{}, c.Geometry().ZeroPad)
	c.Op = "l2"
	assert.Equal(t, L2Norm, c.Geometry().Kind)
}

func replaceOnce(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic("fixture edit: " + old)
	}
	return strings.Replace(s, old, new, 1)
}
