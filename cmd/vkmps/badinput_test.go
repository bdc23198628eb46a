package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadInput is the command line's table of bad input (issue 10), by
// class, across every command: unknown commands and flags, missing and
// malformed values, values out of range, conflicting flags, corrupt
// .npy/.png files, malformed graph JSON, shapes that do not fit, geometry
// the device cannot do, and outputs that would lose an input. Each exits
// with status 2 and one line naming the problem, creates no file and
// changes no input. (TestPoolErrors, TestGraphErrors, TestBenchErrors and
// TestSelfcheckBadFlags hold more cases of each command.)
func TestBadInput(t *testing.T) {
	requireVulkan(t)
	f := newGraphFixture(t)
	dir := f.dir
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	x := f.x // (2, 3, 9, 9)
	corrupt := file("corrupt.npy", []byte("\x93NUMPY\x01\x00garbage"))
	text := file("text.npy", []byte("hello"))
	ints := file("ints.npy", rawNPY("<i8", "(2, 2)", make([]byte, 32)))
	// "False" becomes "True", one more space of padding keeps the layout.
	fortranNPY := bytes.Replace(rawNPY("<f4", "(2, 2)", make([]byte, 16)), []byte("False, "), []byte("True, "), 1)
	fortranNPY = bytes.Replace(fortranNPY, []byte("\n"), []byte(" \n"), 1)
	fortran := file("fortran.npy", fortranNPY)
	badPNG := file("bad.png", []byte("\x89PNG\r\n\x1a\nnot really"))
	badJSON := file("bad.json", []byte(`{"inputs": {"x": [2, 3, 9, 9]}, "nodes": [`))
	unknownOp := file("op.json", []byte(`{"inputs": {"x": null}, "nodes": [{"name": "p", "op": "min", "sources": ["x"], "kernel": 2}]}`))
	bigWeight := file("w.json", []byte(`{"inputs": {"x": null}, "nodes": [{"name": "l", "op": "loss", "weight": 1e39, "sources": ["x", "x"]}]}`))
	out := filepath.Join(dir, "out.npy")
	pool := func(extra ...string) []string {
		return append([]string{"pool", "--op", "max", "--kernel", "2", "--in", x, "--out", out}, extra...)
	}
	run := func(extra ...string) []string {
		return append([]string{"graph", "run", f.json, "--in", "x=" + x}, extra...)
	}
	tests := []struct {
		class, name string
		args        []string
		want        string
	}{
		{"command", "unknown command", []string{"poool"}, `unknown command "poool"`},
		{"command", "unknown graph subcommand", []string{"graph", "fly", f.json}, `"fly"`},
		{"command", "help on an unknown command", []string{"help", "nope"}, `"nope"`},
		{"flag", "pool", pool("--bogus"), "unknown flag --bogus"},
		{"flag", "pool-grad", []string{"pool-grad", "--bogus"}, "unknown flag --bogus"},
		{"flag", "graph run", run("--bogus"), "--bogus"},
		{"flag", "graph train", []string{"graph", "train", f.json, "--bogus"}, "--bogus"},
		{"flag", "selfcheck", []string{"selfcheck", "--bogus"}, "--bogus"},
		{"flag", "bench", []string{"bench", "--bogus"}, "unknown flag --bogus"},
		{"flag", "demo", []string{"demo", "--bogus"}, "--bogus"},
		{"flag", "devices", []string{"devices", "--bogus"}, "unknown flag --bogus"},
		{"value", "flag without its value", []string{"pool", "--op", "max", "--in", x, "--out", out, "--kernel"}, "flag --kernel needs a value"},
		{"value", "not a number", pool("--stride", "two"), `"two" is not a number`},
		{"value", "unknown choice", []string{"pool", "--op", "min", "--kernel", "2", "--in", x, "--out", out}, `--op: unknown value "min"`},
		{"value", "missing required flag", []string{"pool", "--op", "max", "--in", x, "--out", out}, "flag --kernel is required"},
		{"value", "stray argument", pool("extra"), `unexpected argument "extra"`},
		{"range", "stride 0", pool("--stride", "0"), "--stride: 0 is too small"},
		{"range", "negative pad", pool("--pad", "-1"), "--pad: -1 is too small"},
		{"range", "iterations 0", run("--iters", "0"), "--iters: 0 is too small"},
		{"range", "bench iterations 0", []string{"bench", "--iters", "0"}, "--iters"},
		{"range", "negative selfcheck cases", []string{"selfcheck", "--cases", "-1"}, "--cases: -1 is out of range"},
		{"range", "reserved padding method", pool("--padding-method", "48"), "reserved size pattern"},
		{"conflict", "pad with a padding preset", pool("--pad", "1", "--padding", "same"), "conflicts with"},
		{"conflict", "count-include-pad with max", pool("--count-include-pad"), "applies to --op avg only"},
		{"corrupt input", "corrupt .npy", []string{"pool", "--op", "max", "--kernel", "2", "--in", corrupt, "--out", out}, "corrupt.npy: "},
		{"corrupt input", "not a .npy", []string{"pool", "--op", "max", "--kernel", "2", "--in", text, "--out", out}, "not a .npy file"},
		{"corrupt input", "integer dtype", []string{"pool", "--op", "max", "--kernel", "2", "--in", ints, "--out", out}, "int64 not supported"},
		{"corrupt input", "Fortran order", []string{"pool", "--op", "max", "--kernel", "2", "--in", fortran, "--out", out}, "Fortran"},
		{"corrupt input", "corrupt PNG", []string{"pool", "--op", "max", "--kernel", "2", "--in", badPNG, "--out", out}, "bad.png: "},
		{"corrupt input", "missing input", []string{"pool", "--op", "max", "--kernel", "2", "--in", filepath.Join(dir, "none.npy"), "--out", out}, "none.npy"},
		{"corrupt input", "corrupt graph input", []string{"graph", "run", f.json, "--in", "x=" + corrupt}, "corrupt.npy"},
		{"graph JSON", "truncated JSON", []string{"graph", "run", badJSON, "--in", "x=" + x}, "JSON"},
		{"graph JSON", "unknown op", []string{"graph", "run", unknownOp, "--in", "x=" + x}, `unknown op "min"`},
		{"graph JSON", "weight beyond float32", []string{"graph", "run", bigWeight, "--in", "x=" + x}, "JSON"},
		{"graph JSON", "missing graph file", []string{"graph", "run", filepath.Join(dir, "none.json"), "--in", "x=" + x}, "none.json"},
		{"shape", "gradient of the wrong shape", []string{"pool-grad", "--op", "max", "--kernel", "2", "--in", x, "--grad", x, "--out", out}, "want the forward output's shape"},
		{"shape", "graph input of the wrong shape", []string{"graph", "run", f.json, "--in", "x=" + f.labels}, `input "x": `},
		{"shape", "empty destination", []string{"pool", "--op", "max", "--kernel", "12", "--padding", "valid", "--in", x, "--out", out}, "padding"},
		{"range", "window over the largest extent", []string{"pool", "--op", "avg", "--kernel", "40000", "--padding", "same", "--in", x, "--out", out}, "kernel width 40000 > 32768"},
		{"value", "empty output name", []string{"pool", "--op", "max", "--kernel", "2", "--in", x, "--out", ""}, "flag --out needs a value"},
		{"value", "empty gradient name", []string{"pool-grad", "--op", "max", "--kernel", "2", "--in", x, "--grad", "", "--out", out}, "flag --grad needs a value"},
		{"value", "empty graph output directory", run("--out", ""), "flag --out needs a value"},
		{"range", "pad over half the window", pool("--pad", "2"), "--pad: the top pad 2 is more than half the window's extent 2"},
		{"range", "graph iterations beyond the bound", run("--iters", "100000000000"), "--iters: 100000000000 is more than 1000000000"},
		{"range", "graph iterations beyond int64", run("--iters", "1000000000000000000000"), "-iters"},
		{"output", "JSON over a data file", []string{"bench", "--json", corrupt, "--ops", "max"}, "a .npy name for JSON lines"},
		{"output", "output is the input", []string{"pool", "--op", "max", "--kernel", "2", "--in", x, "--out", x}, "is an input file"},
		{"output", "graph output directory is an input", run("--out", x), "not a directory"},
		{"output", "plot over the JSON", []string{"bench", "--json", filepath.Join(dir, "b.png"), "--plot", filepath.Join(dir, "b.png")}, "b.png: a .png name for JSON lines"},
		{"output", "demo into a file", []string{"demo", "--out", x}, "--out: "},
		{"output", "unknown output format", []string{"pool", "--op", "max", "--kernel", "2", "--in", x, "--out", filepath.Join(dir, "y.txt")}, "unsupported file extension"},
		{"device", "no such device", []string{"selfcheck", "--device", "no-such-gpu", "--cases", "0"}, "no-such-gpu"},
	}
	before := tree(t, dir)
	inputs := map[string]fileState{}
	for _, p := range before {
		inputs[p] = stateOf(t, filepath.Join(dir, p))
	}
	classes := map[string]int{}
	for _, tc := range tests {
		t.Run(tc.class+"/"+tc.name, func(t *testing.T) {
			var r cliResult
			require.NotPanics(t, func() { r = runVkmps(t, tc.args...) })
			if tc.class == "command" { // no command to name: "vkmps: ..."
				r.stderr = "vkmps " + strings.TrimPrefix(r.stderr, "vkmps: ")
			}
			assertOneLineError(t, r, 2, tc.want)
			assert.Equal(t, before, tree(t, dir), "no file added or removed")
		})
		classes[tc.class]++
	}
	for p, st := range inputs {
		now := stateOf(t, filepath.Join(dir, p))
		assert.True(t, bytes.Equal(st.data, now.data), "%s changed", p)
		assert.Equal(t, st.mod, now.mod, "%s touched", p)
	}
	t.Logf("cmd/vkmps: %d bad inputs in %d classes: %v", len(tests), len(classes), classes)
}

// TestNoPanicOnZeroValues: every command given an empty argument, and the
// command line given nothing or empty words, exits with an error or its
// usage, never through the recovered "internal error" of a panic.
func TestNoPanicOnZeroValues(t *testing.T) {
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	lines := [][]string{nil, {""}, {"", ""}, {"help", ""}, {"graph", ""}, {"graph", "run", ""}, {"graph", "train", ""}}
	for _, name := range names {
		lines = append(lines, []string{name, ""}, []string{name, "--in", ""})
	}
	for _, args := range lines {
		r := runVkmps(t, args...)
		assert.Contains(t, []int{0, 2}, r.code, "%q: %s", args, r.stderr)
		assert.NotContains(t, r.stderr, "internal error", "%q", args)
		assert.NotContains(t, r.stderr, "goroutine", "%q", args)
	}
	t.Logf("cmd/vkmps: %d empty command lines, no panic", len(lines))
}
