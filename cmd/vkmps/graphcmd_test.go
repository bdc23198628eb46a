package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/graph/graphref"
	"github.com/vkmps/vkmps/ops"
)

// graphTestJSON fans x out to three pooling kinds, adds two of them,
// concatenates the sum with the third and ends in a loss: Training sums
// three gradient contributions into grad(x) and slices the concat's.
const graphTestJSON = `{
  "inputs": {"x": [2, 3, 9, 9], "labels": [2, 6, 5, 5]},
  "nodes": [
    {"name": "p1", "op": "max", "sources": ["x"], "kernel": 3, "stride": 2, "padding": {"pad": [1]}},
    {"name": "p2", "op": "avg", "sources": ["x"], "kernel": 3, "stride": 2,
     "padding": {"pad": [1, 1, 1, 1], "count_include_pad": true}},
    {"name": "s", "op": "add", "sources": ["p1", "p2"]},
    {"name": "p3", "op": "l2", "sources": ["x"], "kernel": [3, 3], "stride": [2, 2], "padding": "same"},
    {"name": "cat", "op": "concat", "sources": ["s", "p3"]},
    {"name": "loss", "op": "loss", "loss": "mse", "reduction": "mean", "sources": ["cat", "labels"]}
  ],
  "outputs": ["cat"],
  "loss": "loss"
}`

// graphFixture writes the graph and its inputs to a temporary directory.
type graphFixture struct {
	dir, json, x, labels string
	feeds                map[string][]float64
	shapes               map[string]ops.ImageDescriptor
}

func newGraphFixture(t *testing.T) graphFixture {
	t.Helper()
	dir := t.TempDir()
	f := graphFixture{dir: dir, json: filepath.Join(dir, "g.json"), feeds: map[string][]float64{},
		shapes: map[string]ops.ImageDescriptor{"x": {N: 2, C: 3, H: 9, W: 9}, "labels": {N: 2, C: 6, H: 5, W: 5}}}
	require.NoError(t, os.WriteFile(f.json, []byte(graphTestJSON), 0o644))
	r := rand.New(rand.NewPCG(7, 9))
	for _, name := range []string{"x", "labels"} {
		d := f.shapes[name]
		tt, err := tensorio.New(d.N, d.C, d.H, d.W)
		require.NoError(t, err)
		// Distinct values: no ties in a max window.
		perm := r.Perm(len(tt.Data))
		f.feeds[name] = make([]float64, len(tt.Data))
		for i := range tt.Data {
			tt.Data[i] = float32(perm[i])/float32(len(perm))*2 - 1
			f.feeds[name][i] = float64(tt.Data[i])
		}
		p := writeTensor(t, dir, name+".npy", tt)
		if name == "x" {
			f.x = p
		} else {
			f.labels = p
		}
	}
	return f
}

// assertClose compares a result file with the CPU reference: shape and
// values within 1e-5 + 1e-4*|want| (float32 against float64 sums).
func assertClose(t *testing.T, path string, want []float64, shape [4]int) {
	t.Helper()
	got := readTensor(t, path)
	require.Equal(t, shape, [4]int{got.N, got.C, got.H, got.W}, path)
	require.Len(t, got.Data, len(want), path)
	for i, w := range want {
		if d := math.Abs(float64(got.Data[i]) - w); d > 1e-5+1e-4*math.Abs(w) {
			t.Fatalf("%s[%d] = %g, want %g (difference %g)", filepath.Base(path), i, got.Data[i], w, d)
		}
	}
}

func TestGraphRunMatchesCPU(t *testing.T) {
	requireVulkan(t)
	f := newGraphFixture(t)
	out := filepath.Join(f.dir, "out")
	// labels are not needed for the outputs: run does not ask for them.
	r := mustSucceed(t, "graph", "run", f.json, "--in", "x="+f.x, "--fetch", "s", "--out", out)
	assert.Contains(t, r.stdout, "cat")

	g, _, err := graph.Load(strings.NewReader(graphTestJSON))
	require.NoError(t, err)
	want, err := graphref.Eval(g, f.shapes, f.feeds, g.Image("cat"), g.Image("s"))
	require.NoError(t, err)
	assertClose(t, filepath.Join(out, "cat.npy"), want["cat"], [4]int{2, 6, 5, 5})
	assertClose(t, filepath.Join(out, "s.npy"), want["s"], [4]int{2, 3, 5, 5})
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "only the outputs")
}

func TestGraphTrainMatchesCPU(t *testing.T) {
	requireVulkan(t)
	f := newGraphFixture(t)
	g, _, err := graph.Load(strings.NewReader(graphTestJSON))
	require.NoError(t, err)
	grads, err := g.Training(g.Image("loss").Producer())
	require.NoError(t, err)
	require.Len(t, grads, 1, "the gradient of x; labels take none")
	gx := grads[g.Image("x")]
	require.Equal(t, "grad(x)", gx.Name())
	// Intermediates of the training graph: the concat's slice for s and
	// p1's contribution to grad(x).
	want, err := graphref.Eval(g, f.shapes, f.feeds, g.Image("loss"), gx, g.Image("cat"), g.Image("grad(s)"), g.Image("grad(x)<-p1"))
	require.NoError(t, err)

	var prev []float32
	for _, extra := range [][]string{nil, {"--argmax"}} {
		out := filepath.Join(f.dir, "train"+strings.Join(extra, ""))
		args := append([]string{"graph", "train", f.json, "--in", "x=" + f.x, "--in", "labels=" + f.labels, "--out", out, "--iters", "3",
			"--fetch", "grad(s)", "--fetch", "grad(x)<-p1"}, extra...)
		r := mustSucceed(t, args...)
		assert.True(t, strings.HasPrefix(r.stdout, "loss: "), r.stdout)
		assert.Contains(t, r.stdout, "queue submissions per run: 1)", "the executor replays one command buffer")
		assert.Contains(t, r.stdout, "time: first run")
		assertClose(t, filepath.Join(out, "loss.npy"), want["loss"], [4]int{1, 1, 1, 1})
		assertClose(t, filepath.Join(out, "grad_x_.npy"), want["grad(x)"], [4]int{2, 3, 9, 9})
		assertClose(t, filepath.Join(out, "cat.npy"), want["cat"], [4]int{2, 6, 5, 5})
		assertClose(t, filepath.Join(out, "grad_s_.npy"), want["grad(s)"], [4]int{2, 3, 5, 5})
		assertClose(t, filepath.Join(out, "grad_x__-p1.npy"), want["grad(x)<-p1"], [4]int{2, 3, 9, 9})
		assert.NoFileExists(t, filepath.Join(out, "grad_labels_.npy"))
		// Recording the argmax gives the same gradient, bit for bit.
		dx := readTensor(t, filepath.Join(out, "grad_x_.npy")).Data
		if prev != nil {
			assert.Equal(t, prev, dx)
		}
		prev = dx
	}
}

func TestGraphErrors(t *testing.T) {
	requireVulkan(t)
	f := newGraphFixture(t)
	write := func(name, text string) string {
		p := filepath.Join(f.dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	bad := write("bad.json", `{"inputs": {"x": [1, 1, 4, 4]}, "nodes": [`)
	unknownSrc := write("src.json", `{"inputs": {"x": null}, "nodes": [{"name": "p", "op": "max", "sources": ["nope"], "kernel": 2}]}`)
	noLoss := write("noloss.json", `{"inputs": {"x": null}, "nodes": [{"name": "p", "op": "max", "sources": ["x"], "kernel": 2}]}`)
	small, err := tensorio.New(2, 3, 8, 8)
	require.NoError(t, err)
	wrong := writeTensor(t, f.dir, "wrong.npy", small)
	out := filepath.Join(f.dir, "out")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"bad JSON", []string{"run", bad, "--in", "x=" + f.x}, "JSON"},
		{"unknown source", []string{"run", unknownSrc, "--in", "x=" + f.x}, `"nope"`},
		{"missing file", []string{"run", filepath.Join(f.dir, "none.json"), "--in", "x=" + f.x}, "none.json"},
		{"unknown input", []string{"run", f.json, "--in", "x=" + f.x, "--in", "y=" + f.x}, `input "y"`},
		{"missing --in", []string{"train", f.json, "--in", "x=" + f.x}, `input "labels" needs --in`},
		{"missing --in run", []string{"run", f.json}, `input "x" needs --in`},
		{"wrong shape", []string{"run", f.json, "--in", "x=" + wrong}, `input "x": ` + wrong + " has shape (2, 3, 8, 8)"},
		{"missing npy", []string{"run", f.json, "--in", "x=" + filepath.Join(f.dir, "none.npy")}, "none.npy"},
		{"unknown fetch", []string{"run", f.json, "--in", "x=" + f.x, "--fetch", "zz"}, `"zz"`},
		{"unknown loss", []string{"train", f.json, "--in", "x=" + f.x, "--loss", "p1"}, `loss node "p1"`},
		{"no loss", []string{"train", noLoss, "--in", "x=" + f.x}, "--loss NAME"},
		{"bad --in", []string{"run", f.json, "--in", "x"}, "NAME=FILE.npy"},
		{"twice --in", []string{"run", f.json, "--in", "x=" + f.x, "--in", "x=" + f.x}, "given twice"},
		{"no file", []string{"run", "--in", "x=" + f.x}, "missing FILE.json"},
		{"two files", []string{"run", f.json, f.json}, "unexpected argument"},
		{"subcommand", []string{"fly", f.json}, `"fly"`},
		{"no subcommand", nil, "graph run"},
		{"unknown flag", []string{"run", f.json, "--nope"}, "--nope"},
		{"out is input", []string{"run", f.json, "--in", "x=" + f.x, "--out", f.x}, "not a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"graph"}, c.args...)
			if c.name != "out is input" && len(c.args) > 0 {
				args = append(args, "--out", out)
			}
			r := runVkmps(t, args...)
			assertOneLineError(t, r, 2, c.want)
			assert.NoDirExists(t, out, "no partial output")
		})
	}
}

func TestGraphHelp(t *testing.T) {
	for _, args := range [][]string{{"graph", "--help"}, {"graph", "run", "--help"}, {"graph", "train", "-h"}, {"help", "graph"}} {
		r := runVkmps(t, args...)
		assert.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stdout, "usage: vkmps graph")
		assert.Contains(t, r.stdout, "examples:")
	}
	r := runVkmps(t, "graph", "train", "--help")
	assert.Contains(t, r.stdout, "-loss")
}

func TestGraphFileName(t *testing.T) {
	for name, want := range map[string]string{
		"grad(x)":     "grad_x_.npy",
		"grad(x)<-p1": "grad_x__-p1.npy",
		"a b/c":       "a_b_c.npy",
		"ok.Name-1_2": "ok.Name-1_2.npy",
		"é":           "__.npy",
	} {
		assert.Equal(t, want, graphFileName(name), name)
	}
}
