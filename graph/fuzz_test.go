package graph_test

import (
	"bytes"
	"errors"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/graph/graphref"
	"github.com/vkmps/vkmps/ops"
)

// fuzzSeeds are the seed corpus of FuzzLoad: valid graphs using every op,
// field and padding form, and broken ones (every error of TestJSONGraphs
// and TestBadInput, and then some).
var fuzzSeeds = []string{
	// Valid.
	`{"inputs": {"x": [1, 3, 12, 12], "labels": null}, "nodes": [
	  {"name": "loss", "op": "loss", "loss": "mse", "reduction": "sum", "sources": ["cat", "labels"]},
	  {"name": "cat", "op": "concat", "sources": ["p1", "p2"]},
	  {"name": "p1", "op": "max", "sources": ["x"], "kernel": [3, 3], "stride": 2, "padding": "same"},
	  {"name": "p2", "op": "avg", "sources": ["x"], "kernel": 2, "stride": [2, 2],
	   "padding": {"pad": [0, 0, 0, 0], "ceil_mode": true, "count_include_pad": false}}],
	  "outputs": ["loss"], "loss": "loss"}`,
	`{"inputs": {"x": [2, 4, 9, 7]}, "nodes": [
	  {"name": "d", "op": "dilated-max", "sources": ["x"], "kernel": 2, "dilation": [2, 1], "padding": "full", "edge": "zero"},
	  {"name": "l", "op": "l2", "sources": ["x"], "kernel": [3, 1], "padding": {"caffe": [1, 0]}},
	  {"name": "a", "op": "avg", "sources": ["x"], "kernel": 3, "padding": {"method": 16}, "zero_pad": [1, 1, 0, 0]},
	  {"name": "s", "op": "slice", "sources": ["x"], "offset": 1, "count": 2},
	  {"name": "sum", "op": "add", "sources": ["a", "x"]}], "outputs": ["d", "l", "s", "sum"]}`,
	`{"inputs": {"x": [1, 6, 4, 4], "y": [1, 6, 4, 4]}, "nodes": [
	  {"name": "loss", "op": "loss", "loss": "softmax-cross-entropy", "reduction": "none", "weight": 0.5, "sources": ["x", "y"]}],
	  "loss": "loss"}`,
	`{"inputs": {"x": [1, 1, 5, 5]}, "nodes": [
	  {"name": "t", "op": "max", "sources": ["x"], "kernel": 2, "padding": "tf-same"},
	  {"name": "u", "op": "avg", "sources": ["t"], "kernel": 2, "padding": "tf-avg-valid"},
	  {"name": "v", "op": "avg", "sources": ["x"], "kernel": 3, "padding": "tf-avg"},
	  {"name": "w", "op": "max", "sources": ["x"], "kernel": 3, "padding": "valid"},
	  {"name": "c", "op": "concat", "sources": ["x", "x"]}]}`,
	`{"inputs": {"x": null}, "nodes": []}`,
	`{}`,
	// Broken.
	`{"nodes": [{"name": "a", "op": "max", "sources": ["nope"], "kernel": 2}]}`,
	`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "add", "sources": ["b", "x"]}, {"name": "b", "op": "add", "sources": ["a", "x"]}]}`,
	`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"]}]}`,
	`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "maxx", "sources": ["x"]}]}`,
	`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "padding": {"method": 3}}]}`,
	`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": [1, 2, 3]}]}`,
	`{"inputs": {"x": null}, "nodes": [{"name": "x", "op": "max", "sources": ["x"], "kernel": 2}]}`,
	`{"inputs": {"x": [1, 2]}, "nodes": []}`,
	`{"inputs": {"x": [1, 0, -3, 4]}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2}]}`,
	`{"inputs": {"x": [1, 1, 1, 1]}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 9, "padding": "valid"}]}`,
	`{"inputs": {"x": [1, 1, 4, 4], "y": [1, 2, 4, 4]}, "nodes": [{"name": "a", "op": "add", "sources": ["x", "y"]}]}`,
	`{"inputs": {"x": [1, 1, 4, 4]}, "nodes": [{"name": "a", "op": "slice", "sources": ["x"], "offset": 1, "count": 1}]}`,
	`{"inputs": {"x": [1, 1, 4, 4]}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "padding": {"pad": [-1]}}]}`,
	`{"inputs": {"x": [1, 1, 4, 4]}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "zero_pad": 1}]}`,
	`{"inputs": {"x": [9223372036854775807, 9223372036854775807, 2, 2]}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2}]}`,
	`{"inputs": {"x": [1, 1, 4, 4]}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "stride": 9223372036854775807, "padding": "full"}]}`,
	`{"inputs": {"x": [1, 1, 4, 4]}, "nodes": [{"name": "a", "op": "loss", "loss": "hinge", "sources": ["x", "x"]}]}`,
	`{"inputs": {"x": [1, 1, 4, 4]}, "nodes": [{"name": "a", "op": "loss", "weight": 1e39, "sources": ["x", "x"]}]}`,
	`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2}], "loss": "a"}`,
	`{"inputs": {"x": null}, "nodes": [], "outputs": ["q"]}`,
	`{"inputs": {"x": null}, "bogus": 1}`,
	`{"inputs": {"x": null}} {}`,
	`[1, 2`,
	``,
	`null`,
	`{"nodes": [{"name": ""}]}`,
	`{"nodes": [null]}`,
}

// nodeOrInput matches the part of an error that names where it is.
var nodeOrInput = regexp.MustCompile(`(node|input|output|image|loss) "`)

// FuzzLoad: Load never panics; whatever it refuses is an ErrGraph; a
// graph it accepts infers its shapes (missing input shapes taken as
// 1x2x8x8), derives its training graph when it names a loss, and runs on
// the CPU when small, or fails with an error naming the node or input at
// fault, never a panic. Seeds run in plain go test; longer runs:
//
//	go test -run '^$' -fuzz '^FuzzLoad$' -fuzztime 3m ./graph
func FuzzLoad(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, file, err := graph.Load(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, graph.ErrGraph) {
				t.Fatalf("Load error %q is not an ErrGraph", err)
			}
			return
		}
		shapes, err := file.Shapes()
		if err != nil {
			t.Fatalf("Load accepted what Shapes refuses: %v", err)
		}
		for name := range file.Inputs {
			if _, ok := shapes[name]; !ok {
				shapes[name] = ops.ImageDescriptor{N: 1, C: 2, H: 8, W: 8}
			}
		}
		var outs []*graph.Image
		for _, o := range file.Outputs {
			outs = append(outs, g.Image(o))
		}
		checkErr := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, graph.ErrGraph) && !errors.Is(err, graph.ErrShape) {
				t.Fatalf("%s: error %q is neither ErrGraph nor ErrShape", what, err)
			}
			if !nodeOrInput.MatchString(err.Error()) {
				t.Fatalf("%s: error %q names no node or input", what, err)
			}
		}
		desc, err := g.InferShapes(shapes, outs...)
		if err != nil {
			checkErr("InferShapes", err)
			return
		}
		total := 0 // values to evaluate, capped
		count := func(desc map[*graph.Image]ops.ImageDescriptor) {
			total = 0
			for im, d := range desc {
				if d.N < 1 || d.C < 1 || d.H < 1 || d.W < 1 {
					t.Fatalf("image %q inferred with shape %dx%dx%dx%d", im.Name(), d.N, d.C, d.H, d.W)
				}
				if total < 1<<20 {
					total += min(d.N*d.C*d.H*d.W, 1<<20)
				}
			}
		}
		count(desc)
		if file.Loss != "" {
			grads, err := g.Training(g.Image(file.Loss).Producer())
			if err != nil {
				checkErr("Training", err)
				return
			}
			var gouts []*graph.Image
			for _, gi := range grads {
				gouts = append(gouts, gi)
			}
			sort.Slice(gouts, func(i, j int) bool { return gouts[i].Name() < gouts[j].Name() })
			if len(gouts) > 0 {
				outs = append(outs, gouts...)
				if desc, err = g.InferShapes(shapes, outs...); err != nil {
					checkErr("InferShapes of the gradients", err)
					return
				}
				count(desc)
			}
		}
		if total > 1<<14 {
			return // too large to evaluate on every fuzz input
		}
		feeds := map[string][]float64{}
		for im, d := range desc { // the inputs the outputs need (counted in total)
			if im.IsInput() {
				feeds[im.Name()] = make([]float64, d.N*d.C*d.H*d.W)
			}
		}
		if _, err := graphref.Eval(g, shapes, feeds, outs...); err != nil && !strings.Contains(err.Error(), `node "`) {
			checkErr("EvalCPU", err)
		}
	})
}
