package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
)

// refPool computes what `vkmps pool` must give for kind, a padding policy,
// an edge mode and zero pads on x, with the CPU reference: the policy
// resolved on the CPU, then ref.Pool.
func refPool(t *testing.T, kind ref.Kind, k padding.Kernel, pol padding.Policy, x tensorio.Tensor) []float32 {
	t.Helper()
	src := padding.Descriptor{N: x.N, C: x.C, H: x.H, W: x.W}
	r, err := padding.Resolve(pol, []padding.Descriptor{src}, nil, k)
	require.NoError(t, err)
	g := ref.Geometry{Kind: kind, KernelW: k.KernelW, KernelH: k.KernelH, StrideX: k.StrideX, StrideY: k.StrideY,
		DilationX: max(k.DilationX, 1), DilationY: max(k.DilationY, 1), OffsetX: r.OffsetX, OffsetY: r.OffsetY,
		EdgeMode: r.EdgeMode, ZeroPad: r.ZeroPad, ExcludeEdges: r.ExcludeEdges, Pads: r.Pads}
	in, err := ref.TensorOf(x.N, x.C, x.H, x.W, x.Data)
	require.NoError(t, err)
	out := ref.NewTensor[float32](r.Dest.N, r.Dest.C, r.Dest.H, r.Dest.W)
	require.NoError(t, ref.Pool(g, in, &out))
	return out.Data
}

// The MPS policies, presets and edge flags reach the kernel as documented:
// each command line gives the CPU reference's result for the policy it
// names.
func TestPoolPolicies(t *testing.T) {
	requireVulkan(t)
	dir := t.TempDir()
	x := ramp(2, 3, 9, 11, 4)
	in := writeTensor(t, dir, "x.npy", x)
	k33 := padding.Kernel{KernelW: 3, KernelH: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	k23 := padding.Kernel{KernelW: 3, KernelH: 2, StrideX: 1, StrideY: 2, DilationX: 1, DilationY: 1}
	withEdge := func(k padding.Kernel, e padding.EdgeMode, zp padding.Pads) padding.Kernel {
		k.EdgeMode, k.ZeroPad = e, zp
		return k
	}
	dil := k33
	dil.DilationX, dil.DilationY = 2, 3
	tests := []struct {
		args []string
		kind ref.Kind
		k    padding.Kernel
		pol  padding.Policy
	}{
		{[]string{"--op", "max", "--kernel", "3", "--stride", "2"}, ref.Max, k33, padding.Explicit(padding.Pads{}, false, false)},
		{[]string{"--op", "max", "--kernel", "3", "--stride", "2", "--padding", "same"}, ref.Max, k33, padding.WithMethod(padding.Same)},
		{[]string{"--op", "avg", "--kernel", "3", "--stride", "2", "--padding", "full", "--edge", "clamp"}, ref.Average,
			withEdge(k33, padding.EdgeClamp, padding.Pads{}), padding.WithMethod(padding.Full)},
		{[]string{"--op", "avg", "--kernel", "3", "--stride", "2", "--padding", "same", "--edge", "clamp", "--zero-pad", "1,0"}, ref.Average,
			withEdge(k33, padding.EdgeClamp, padding.Pads{Left: 1, Right: 1}), padding.WithMethod(padding.Same)},
		{[]string{"--op", "avg", "--kernel", "3", "--stride", "2", "--padding-method", "0x8010"}, ref.Average, k33,
			padding.WithMethod(padding.Same | padding.ExcludeEdges)},
		{[]string{"--op", "avg", "--kernel", "3", "--stride", "2", "--padding-method", "18"}, ref.Average, k33,
			padding.WithMethod(padding.Same | padding.AlignBottomRight)},
		{[]string{"--op", "avg", "--kernel", "3", "--stride", "2", "--padding", "tf-same"}, ref.Average, k33, padding.TensorFlowAveragePooling()},
		{[]string{"--op", "avg", "--kernel", "3", "--stride", "2", "--padding", "tf-valid"}, ref.Average, k33, padding.TensorFlowAveragePoolingValidOnly()},
		{[]string{"--op", "max", "--kernel", "3", "--stride", "2", "--padding", "tf-same"}, ref.Max,
			withEdge(k33, padding.EdgeClamp, padding.Pads{}), padding.TensorFlowSame()},
		{[]string{"--op", "l2", "--kernel", "3", "--stride", "2", "--padding", "tf-valid"}, ref.L2Norm,
			withEdge(k33, padding.EdgeClamp, padding.Pads{}), padding.TensorFlowValid()},
		{[]string{"--op", "avg", "--kernel", "3", "--stride", "2", "--padding", "caffe", "--pad", "1,0"}, ref.Average, k33, padding.Caffe(1, 0)},
		{[]string{"--op", "max", "--kernel", "3", "--stride", "2", "--padding", "caffe"}, ref.Max, k33, padding.Caffe(0, 0)},
		{[]string{"--op", "avg", "--kernel", "2,3", "--stride", "2,1", "--pad", "1,0,0,1", "--count-include-pad", "--ceil-mode"}, ref.Average, k23,
			padding.Explicit(padding.Pads{Top: 1, Right: 1}, true, true)},
		{[]string{"--op", "dilated-max", "--kernel", "3", "--stride", "2", "--dilation", "3,2", "--padding", "valid", "--edge", "clamp"}, ref.DilatedMax,
			withEdge(dil, padding.EdgeClamp, padding.Pads{}), padding.WithMethod(padding.Valid)},
		{[]string{"--op", "max", "--kernel", "3", "--stride", "2", "--dilation", "3,2", "--pad", "2"}, ref.DilatedMax, dil,
			padding.Explicit(padding.Pads{Top: 2, Left: 2, Bottom: 2, Right: 2}, false, false)},
	}
	for i, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := filepath.Join(dir, "y"+string(rune('a'+i))+".npy")
			mustSucceed(t, append([]string{"pool", "--in", in, "--out", out, "--quiet"}, tt.args...)...)
			got := readTensor(t, out)
			require.NoError(t, ref.Compare(tt.kind, got.Data, refPool(t, tt.kind, tt.k, tt.pol, x)))
		})
	}
}

// Ranks, dtypes and formats: (H,W), (C,H,W) and (N,C,H,W) .npy in float32
// or float64 give float32 outputs of the same rank; a PNG in is (1,C,H,W)
// with rank 3; PNG outputs are pictures and heatmaps; the summary line.
func TestPoolFormats(t *testing.T) {
	requireVulkan(t)
	dir := t.TempDir()
	for _, x := range []tensorio.Tensor{ramp(1, 1, 6, 8, 2), ramp(1, 2, 6, 8, 3), ramp(2, 2, 6, 8, 4)} {
		in := writeTensor(t, dir, "x.npy", x)
		out := filepath.Join(dir, "y.npy")
		r := mustSucceed(t, "pool", "--op", "max", "--kernel", "2", "--in", in, "--out", out)
		y := readTensor(t, out)
		assert.Equal(t, x.Rank, len(y.Shape()))
		assert.Equal(t, []int{x.N, x.C, 3, 4}, []int{y.N, y.C, y.H, y.W})
		assert.Equal(t, 1, strings.Count(r.stdout, "\n"))
		assert.Contains(t, r.stdout, "PoolingMax (PoolingMax 2x2 stride 2x2, padding explicit(0,0,0,0), edge clamp)")
		assert.Contains(t, r.stdout, x.ShapeString()+" -> out "+y.ShapeString())
		assert.Contains(t, r.stdout, "wrote "+out)
	}

	// float64 in, converted.
	data := make([]byte, 8*12)
	for i := range 12 {
		binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(float64(i)))
	}
	in64 := filepath.Join(dir, "x64.npy")
	require.NoError(t, os.WriteFile(in64, rawNPY("<f8", "(3, 4)", data), 0o644))
	out := filepath.Join(dir, "y64.npy")
	mustSucceed(t, "pool", "--op", "avg", "--kernel", "1,2", "--in", in64, "--out", out, "--quiet")
	assert.Equal(t, []float32{0.5, 2.5, 4.5, 6.5, 8.5, 10.5}, readTensor(t, out).Data)

	// PNG in (RGB, rank 3) and PNG out, for pool and pool-grad.
	rgb := ramp(1, 3, 16, 12, 3)
	for i := range rgb.Data {
		rgb.Data[i] = (rgb.Data[i] + 1) / 2
	}
	png := writeTensor(t, dir, "x.png", rgb)
	outNPY, outPNG := filepath.Join(dir, "p.npy"), filepath.Join(dir, "p.png")
	r := mustSucceed(t, "pool", "--op", "l2", "--kernel", "2", "--in", png, "--out", outNPY)
	assert.Contains(t, r.stdout, "in (3, 16, 12) -> out (3, 8, 6)")
	assert.Equal(t, []int{3, 8, 6}, readTensor(t, outNPY).Shape())
	mustSucceed(t, "pool", "--op", "l2", "--kernel", "2", "--in", png, "--out", outPNG, "--quiet")
	p := readTensor(t, outPNG)
	assert.Equal(t, []int{1, 3, 8, 6}, []int{p.N, p.C, p.H, p.W})

	dy := writeTensor(t, dir, "dy.npy", ramp(1, 3, 8, 6, 3))
	heat := filepath.Join(dir, "dx.png")
	r = mustSucceed(t, "pool-grad", "--op", "max", "--kernel", "2", "--in", png, "--grad", dy, "--out", heat)
	assert.Contains(t, r.stdout, "PoolingMaxGradient (PoolingMax 2x2 stride 2x2")
	assert.Contains(t, r.stdout, "dy (3, 8, 6), in (3, 16, 12) -> dx (3, 16, 12)")
	h := readTensor(t, heat)
	assert.Equal(t, 3, h.C, "a heatmap is RGB")
	assert.Equal(t, 16*2+1, h.H, "3 channel panels in 2 rows, 1-pixel gaps")
}

// pool-grad gives the CPU reference's gradient, the same with --argmax,
// and accepts dy at another rank of the same shape.
func TestPoolGradMatchesReference(t *testing.T) {
	requireVulkan(t)
	dir := t.TempDir()
	x := ramp(2, 3, 10, 9, 4)
	for i := range x.Data {
		x.Data[i] = float32(math.Round(float64(x.Data[i]) * 3)) // ties
	}
	in := writeTensor(t, dir, "x.npy", x)
	for _, op := range []string{"max", "avg", "l2", "dilated-max"} {
		args := []string{"--op", op, "--kernel", "3", "--stride", "2", "--padding", "same", "--edge", "clamp", "--quiet"}
		kind := map[string]ref.Kind{"max": ref.Max, "avg": ref.Average, "l2": ref.L2Norm, "dilated-max": ref.DilatedMax}[op]
		if op == "dilated-max" {
			args = append(args, "--dilation", "2")
		}
		yPath := filepath.Join(dir, op+"-y.npy")
		mustSucceed(t, append([]string{"pool", "--in", in, "--out", yPath}, args...)...)
		y := readTensor(t, yPath)
		dy := ramp(y.N, y.C, y.H, y.W, 4)
		dyPath := writeTensor(t, dir, op+"-dy.npy", dy)
		dxPath := filepath.Join(dir, op+"-dx.npy")
		mustSucceed(t, append([]string{"pool-grad", "--in", in, "--grad", dyPath, "--out", dxPath}, args...)...)
		got := readTensor(t, dxPath)

		// The reference, with the geometry the policy gives.
		g := ref.Geometry{Kind: kind, KernelW: 3, KernelH: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1, EdgeMode: padding.EdgeClamp}
		if op == "dilated-max" {
			g.DilationX, g.DilationY = 2, 2
		}
		ke := (3-1)*g.DilationX + 1
		res, err := padding.Resolve(padding.WithMethod(padding.Same), []padding.Descriptor{{N: 2, C: 3, H: 10, W: 9}}, nil,
			padding.Kernel{KernelW: 3, KernelH: 3, StrideX: 2, StrideY: 2, DilationX: g.DilationX, DilationY: g.DilationY, EdgeMode: padding.EdgeClamp})
		require.NoError(t, err)
		require.Equal(t, ke/2-res.Pads.Left, res.OffsetX)
		g.OffsetX, g.OffsetY = res.OffsetX, res.OffsetY
		xin, _ := ref.TensorOf(x.N, x.C, x.H, x.W, x.Data)
		dyT, _ := ref.TensorOf(dy.N, dy.C, dy.H, dy.W, dy.Data)
		want := ref.NewTensor[float32](x.N, x.C, x.H, x.W)
		require.NoError(t, ref.PoolGradient(g, xin, dyT, &want))
		require.NoError(t, ref.Compare(kind, got.Data, want.Data), op)

		if kind == ref.Max || kind == ref.DilatedMax {
			am := filepath.Join(dir, op+"-dx-argmax.npy")
			mustSucceed(t, append([]string{"pool-grad", "--argmax", "--in", in, "--grad", dyPath, "--out", am}, args...)...)
			assert.Equal(t, got.Data, readTensor(t, am).Data, "--argmax gives the same bits")
		}
	}

	// dy as (C,H,W) for a (C,H,W) input, and as (1,C,H,W): the same shape.
	x3 := ramp(1, 2, 6, 6, 3)
	in3 := writeTensor(t, dir, "x3.npy", x3)
	for i, dy := range []tensorio.Tensor{ramp(1, 2, 3, 3, 3), ramp(1, 2, 3, 3, 4)} {
		dyPath := writeTensor(t, dir, "dy3.npy", dy)
		out := filepath.Join(dir, "dx3.npy")
		mustSucceed(t, "pool-grad", "--op", "avg", "--kernel", "2", "--in", in3, "--grad", dyPath, "--out", out, "--quiet")
		dx := readTensor(t, out)
		assert.Equal(t, []int{2, 6, 6}, dx.Shape(), "dx has the input's rank (dy rank %d)", 3+i)
		assert.InDelta(t, dy.Data[0]/4, dx.Data[0], 1e-7)
	}
}

// Every class of bad input gives exit status 2 and one clear line, before
// any output exists; an input named as the output is left as it was.
func TestPoolErrors(t *testing.T) {
	requireVulkan(t)
	dir := t.TempDir()
	x := writeTensor(t, dir, "x.npy", ramp(1, 2, 4, 4, 4))
	small := writeTensor(t, dir, "small.npy", ramp(1, 1, 3, 3, 4))
	dy := writeTensor(t, dir, "dy.npy", ramp(1, 2, 2, 2, 4))
	dyBad := writeTensor(t, dir, "dybad.npy", ramp(1, 2, 3, 3, 4))
	corrupt := filepath.Join(dir, "corrupt.npy")
	require.NoError(t, os.WriteFile(corrupt, []byte("\x93NUMPY\x01\x00garbage"), 0o644))
	notNPY := filepath.Join(dir, "text.npy")
	require.NoError(t, os.WriteFile(notNPY, []byte("hello"), 0o644))
	ints := filepath.Join(dir, "ints.npy")
	require.NoError(t, os.WriteFile(ints, rawNPY("<i8", "(2, 2)", make([]byte, 32)), 0o644))
	truncated := filepath.Join(dir, "trunc.npy")
	require.NoError(t, os.WriteFile(truncated, rawNPY("<f4", "(4, 4)", make([]byte, 20)), 0o644))
	rank5 := filepath.Join(dir, "rank5.npy")
	require.NoError(t, os.WriteFile(rank5, rawNPY("<f4", "(1, 1, 1, 2, 2)", make([]byte, 16)), 0o644))
	out := filepath.Join(dir, "out.npy")
	before := dirEntries(t, dir)

	base := []string{"--op", "max", "--kernel", "2", "--in", x, "--out", out}
	with := func(extra ...string) []string { return append(append([]string{"pool"}, base...), extra...) }
	grad := func(extra ...string) []string {
		return append([]string{"pool-grad", "--op", "max", "--kernel", "2", "--in", x, "--out", out}, extra...)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown op", []string{"pool", "--op", "min", "--kernel", "2", "--in", x, "--out", out}, `--op: unknown value "min": want one of max, avg, l2, dilated-max`},
		{"unknown flag", with("--bogus", "1"), "unknown flag --bogus"},
		{"flag without value", []string{"pool", "--op", "max", "--in", x, "--out", out, "--kernel"}, "flag --kernel needs a value"},
		{"stray argument", with("extra.npy"), `unexpected argument "extra.npy"`},
		{"malformed kernel", []string{"pool", "--op", "max", "--kernel", "3,x", "--in", x, "--out", out}, `--kernel: "3,x" is not a number ("x")`},
		{"zero stride", with("--stride", "0"), "--stride: 0 is too small: must be >= 1"},
		{"negative pad", with("--pad", "-1"), "--pad: -1 is too small: must be >= 0"},
		{"missing op", []string{"pool", "--kernel", "2", "--in", x, "--out", out}, "flag --op is required"},
		{"missing kernel", []string{"pool", "--op", "max", "--in", x, "--out", out}, "flag --kernel is required"},
		{"missing in", []string{"pool", "--op", "max", "--kernel", "2", "--out", out}, "flag --in is required"},
		{"missing out", []string{"pool", "--op", "max", "--kernel", "2", "--in", x}, "flag --out is required"},
		{"missing grad", grad(), "flag --grad is required"},
		{"pad and padding", with("--pad", "1", "--padding", "same"), "flag --pad conflicts with flag --padding same"},
		{"pad and method", with("--pad", "1", "--padding-method", "16"), "flag --pad conflicts with flag --padding-method"},
		{"padding and method", with("--padding", "same", "--padding-method", "16"), "flag --padding conflicts with flag --padding-method"},
		{"ceil without pads", with("--padding", "same", "--ceil-mode"), "flag --ceil-mode applies to explicit pads (--pad) only"},
		{"count-include-pad with max", with("--count-include-pad"), "flag --count-include-pad applies to --op avg only, not max"},
		{"count-include-pad without pads", []string{"pool", "--op", "avg", "--kernel", "2", "--in", x, "--out", out, "--padding", "valid", "--count-include-pad"},
			"flag --count-include-pad applies to explicit pads (--pad) only"},
		{"zero-pad with max", with("--padding", "same", "--edge", "clamp", "--zero-pad", "1"), "flag --zero-pad applies to --op avg only, not max"},
		{"zero-pad with pads", []string{"pool", "--op", "avg", "--kernel", "2", "--in", x, "--out", out, "--zero-pad", "1"},
			"flag --zero-pad applies to --padding valid|same|full and --padding-method only"},
		{"zero-pad without clamp", []string{"pool", "--op", "avg", "--kernel", "2", "--in", x, "--out", out, "--padding", "same", "--zero-pad", "1"},
			"flag --zero-pad needs --edge clamp"},
		{"edge with pads", with("--pad", "1", "--edge", "zero"), "flag --edge applies to --padding valid|same|full and --padding-method only: explicit pads"},
		{"edge by default", with("--edge", "clamp"), "explicit pads (--pad, the default) use clamp"},
		{"edge with preset", with("--padding", "tf-same", "--edge", "zero"), "--padding tf-same sets the edge mode itself"},
		{"dilation with avg", []string{"pool", "--op", "avg", "--kernel", "2", "--dilation", "2", "--in", x, "--out", out},
			"flag --dilation applies to --op max and dilated-max only, not avg"},
		{"asymmetric caffe", with("--padding", "caffe", "--pad", "1,0,0,0"), "flag --padding caffe takes symmetric pads"},
		{"bad method", with("--padding-method", "sixteen"), `--padding-method: "sixteen" is not a number`},
		{"reserved method", with("--padding-method", "48"), "--padding-method: 48: padding: method 0x30: reserved size pattern"},
		{"custom method", with("--padding-method", "0x4010"), "sets a Custom bit"},
		{"missing input", with("--in", filepath.Join(dir, "nope.npy")), "nope.npy: "},
		{"corrupt npy", with("--in", corrupt), "corrupt.npy: "},
		{"not npy", with("--in", notNPY), "text.npy: not a .npy file"},
		{"wrong dtype", with("--in", ints), "ints.npy: int64 not supported: want float32 or float64"},
		{"truncated npy", with("--in", truncated), "trunc.npy: data truncated"},
		{"rank 5", with("--in", rank5), "rank5.npy: "},
		{"bad input extension", with("--in", filepath.Join(dir, "x.txt")), "x.txt: unsupported file extension"},
		{"bad output extension", []string{"pool", "--op", "max", "--kernel", "2", "--in", x, "--out", filepath.Join(dir, "y.txt")}, "y.txt: unsupported file extension"},
		{"output dir missing", []string{"pool", "--op", "max", "--kernel", "2", "--in", x, "--out", filepath.Join(dir, "no", "y.npy")}, "does not exist"},
		{"output is a dir", []string{"pool", "--op", "max", "--kernel", "2", "--in", x, "--out", dir + "/sub.npy"}, "is a directory"},
		{"empty destination", []string{"pool", "--op", "max", "--kernel", "5", "--padding", "valid", "--in", small, "--out", out}, "padding"},
		{"window beyond pads", []string{"pool", "--op", "avg", "--kernel", "5", "--in", small, "--out", out}, "padding"},
		{"grad shape", grad("--grad", dyBad), "has shape (1, 2, 3, 3), want the forward output's shape (1, 2, 2, 2)"},
		{"grad missing", grad("--grad", filepath.Join(dir, "nody.npy")), "nody.npy: "},
		{"out is in", []string{"pool", "--op", "max", "--kernel", "2", "--in", x, "--out", x}, "x.npy: is an input file: refusing to overwrite it"},
		{"out is grad", grad("--grad", dy, "--out", dy), "dy.npy: is an input file"},
		{"out is in via ./", []string{"pool", "--op", "max", "--kernel", "2", "--in", x, "--out", filepath.Join(dir, ".", "x.npy")}, "is an input file"},
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.npy"), 0o755))
	before = append(before, "sub.npy")
	inputs := map[string][]byte{}
	for _, p := range []string{x, dy} {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		inputs[p] = b
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runVkmps(t, tt.args...)
			assertOneLineError(t, r, 2, tt.want)
			assert.ElementsMatch(t, before, dirEntries(t, dir), "no output, no temporary file")
			for p, b := range inputs {
				now, err := os.ReadFile(p)
				require.NoError(t, err)
				assert.True(t, bytes.Equal(b, now), "%s changed", p)
			}
		})
	}
}

// --help on pool and pool-grad prints the usage with examples to stdout
// and exits 0; `vkmps help pool` is the same.
func TestPoolHelp(t *testing.T) {
	for _, name := range []string{"pool", "pool-grad", "selfcheck", "demo"} {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			r := runVkmps(t, args...)
			assert.Equal(t, 0, r.code, args)
			assert.Contains(t, r.stdout, "usage: vkmps "+name, args)
			assert.Contains(t, r.stdout, "examples:", args)
			assert.Empty(t, r.stderr, args)
		}
	}
	r := runVkmps(t, "pool", "--help")
	assert.Contains(t, r.stdout, "vkmps uses --pad 0 (PyTorch's default)")
	assert.Contains(t, r.stdout, "-ceil-mode")
}
