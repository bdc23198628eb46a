package graph_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/graph/graphref"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// TestBadInput is package graph's table of bad input (issue 10), by class:
// malformed graphs (names, nil and foreign sources, arity, cycles),
// geometry < 1 and parameters out of their domain (NaN/Inf weights),
// shapes that do not fit or do not exist, geometry the device cannot do,
// malformed JSON, bad feeds, closed executors and cancelled runs. Each
// gives its sentinel and names the node, image or input at fault; none
// panics. (TestBadGraphs and TestJSONGraphs check more messages.)
func TestBadInput(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	g := graph.New()
	x := must(g.Input("x"))
	y := must(g.Input("y"))
	p := must(g.Pooling("p", ops.KindMax, geom(2, 2), x, graph.PoolingOptions{}))
	cat := must(g.Concat("cat", x, p.Result()))
	addXY := must(g.Add("addxy", x, y))
	lossXY := must(g.Loss("lossxy", ops.LossDescriptor{}, x, y))
	valid := must(g.Pooling("valid", ops.KindMax, geom(9, 1), x, graph.PoolingOptions{Padding: padding.WithMethod(padding.Valid)}))
	side := ops.MaxWindowExtent(dev.Limits()) + 1
	wide := must(g.Pooling("wide", ops.KindAverage, geom(side, 1), x, graph.PoolingOptions{}))
	sl := must(g.Slice("sl", x, 1, 2))
	other := graph.New()
	foreign := must(other.Input("f"))
	shapes := map[string]ops.ImageDescriptor{"x": {N: 1, C: 2, H: 8, W: 8}, "y": {N: 1, C: 3, H: 8, W: 8}}
	compile := func(in map[string]ops.ImageDescriptor, outs ...*graph.Image) func() error {
		return func() error {
			e, err := g.Compile(dev, graph.CompileOptions{Inputs: in, Outputs: outs})
			if err == nil {
				e.Close()
			}
			return err
		}
	}
	e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{p.Result()}}))
	defer e.Close()
	closedE := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{p.Result()}}))
	require.NoError(t, closedE.Close())
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	load := func(js string) func() error {
		return func() error { _, _, err := graph.Load(strings.NewReader(js)); return err }
	}
	g1 := geom(2, 1)
	nan := float32(math.NaN())

	tests := []struct {
		class, name string
		call        func() error
		want        error
		msg         string
	}{
		{"malformed", "empty name", func() error { _, err := g.Input(""); return err }, graph.ErrGraph, "empty name"},
		{"malformed", "duplicate name", func() error { _, err := g.Input("x"); return err }, graph.ErrGraph, `"x" is used twice`},
		{"malformed", "nil source", func() error { _, err := g.Add("a1", x, nil); return err }, graph.ErrGraph, `node "a1": source 1 is nil`},
		{"malformed", "source of another graph", func() error { _, err := g.Add("a2", x, foreign); return err }, graph.ErrGraph, "another graph"},
		{"malformed", "concat of nothing", func() error { _, err := g.Concat("c0"); return err }, graph.ErrGraph, `node "c0"`},
		{"malformed", "training from a non-loss", func() error { _, err := g.Training(p); return err }, graph.ErrGraph, `node "p" (max) is not a loss node`},
		{"malformed", "gradient of a nil image", func() error { _, err := p.GradientFilters(nil); return err }, graph.ErrGraph, "nil source gradient"},
		{"malformed", "output of another graph", func() error {
			_, err := g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{foreign}})
			return err
		}, graph.ErrGraph, "another graph"},
		{"malformed", "nil output", func() error {
			_, err := g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{nil}})
			return err
		}, graph.ErrGraph, "nil"},
		{"malformed", "nothing to run", func() error { _, err := graph.New().Compile(dev, graph.CompileOptions{}); return err }, graph.ErrGraph, "no node"},
		{"malformed", "nil device", func() error { _, err := g.Compile(nil, graph.CompileOptions{Inputs: shapes}); return err }, graph.ErrGraph, "nil device"},
		{"size < 1", "kernel width 0", func() error {
			_, err := g.Pooling("k0", ops.KindMax, ops.Geometry{KernelHeight: 2, StrideX: 1, StrideY: 1}, x, graph.PoolingOptions{})
			return err
		}, graph.ErrGraph, `node "k0": kernel width 0 < 1`},
		{"size < 1", "stride 0", func() error {
			_, err := g.Pooling("s0", ops.KindMax, ops.Geometry{KernelWidth: 2, KernelHeight: 2}, x, graph.PoolingOptions{})
			return err
		}, graph.ErrGraph, "stride x 0 < 1"},
		{"size < 1", "empty slice", func() error { _, err := g.Slice("sl0", x, 0, 0); return err }, graph.ErrGraph, `node "sl0"`},
		{"size < 1", "input of 0 channels", compile(map[string]ops.ImageDescriptor{"x": {N: 1, C: 0, H: 8, W: 8}}, p.Result()), graph.ErrShape, `input "x": shape 1x0x8x8 has a size < 1`},
		{"size < 1", "input too large to count", compile(map[string]ops.ImageDescriptor{"x": {N: math.MaxInt, C: math.MaxInt, H: 8, W: 8}}, p.Result()), graph.ErrShape, `input "x"`},
		{"parameter", "dilated average", func() error {
			_, err := g.Pooling("avgdil", ops.KindAverage, ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 1, StrideY: 1, DilationX: 2, DilationY: 1}, x, graph.PoolingOptions{})
			return err
		}, graph.ErrGraph, `node "avgdil"`},
		{"parameter", "unknown edge mode", func() error {
			_, err := g.Pooling("e9", ops.KindMax, g1, x, graph.PoolingOptions{EdgeMode: 9, EdgeSet: true})
			return err
		}, graph.ErrGraph, `node "e9": edge mode`},
		{"parameter", "unknown loss type", func() error { _, err := g.Loss("l9", ops.LossDescriptor{Type: 17}, x, y); return err }, graph.ErrGraph, `node "l9": `},
		{"parameter", "unknown reduction", func() error { _, err := g.Loss("r9", ops.LossDescriptor{Reduction: 9}, x, y); return err }, graph.ErrGraph, "unknown reduction 9"},
		{"NaN/Inf", "NaN loss weight", func() error { _, err := g.Loss("wn", ops.LossDescriptor{Weight: nan}, x, y); return err }, graph.ErrGraph, `node "wn": ops: invalid kernel geometry: Loss: weight NaN is not finite`},
		{"NaN/Inf", "infinite loss weight", func() error {
			_, err := g.Loss("wi", ops.LossDescriptor{Weight: float32(math.Inf(-1))}, x, y)
			return err
		}, graph.ErrGraph, "weight -Inf is not finite"},
		{"shape", "missing input shape", compile(nil, p.Result()), graph.ErrGraph, `missing the shape of input "x"`},
		{"shape", "unknown input", compile(map[string]ops.ImageDescriptor{"x": shapes["x"], "zz": shapes["x"]}, p.Result()), graph.ErrGraph, `no input named "zz"`},
		{"shape", "concat of different sizes", compile(shapes, cat.Result()), graph.ErrShape, `node "cat"`},
		{"shape", "add of different shapes", compile(shapes, addXY.Result()), graph.ErrShape, `node "addxy"`},
		{"shape", "labels of another shape", compile(shapes, lossXY.Result()), graph.ErrShape, `node "lossxy"`},
		{"shape", "valid window over the image", compile(shapes, valid.Result()), graph.ErrShape, `node "valid"`},
		{"shape", "slice past the channels", compile(map[string]ops.ImageDescriptor{"x": {N: 1, C: 2, H: 4, W: 4}}, sl.Result()), graph.ErrShape, `node "sl"`},
		{"geometry", "window over the largest kernel (any window that fits runs, tiled or not)", compile(map[string]ops.ImageDescriptor{"x": {N: 1, C: 1, H: 4, W: 4}}, wide.Result()), ops.ErrGeometry, `node "wide"`},
		{"device limit", "arena over device memory", func() error {
			big := graph.New()
			in := must(big.Input("in"))
			mid := must(big.Pooling("mid", ops.KindMax, g1, in, graph.PoolingOptions{Padding: padding.Explicit(padding.Pads{Bottom: 1 << 17, Right: 1 << 17}, false, false)}))
			out := must(big.Pooling("out", ops.KindMax, ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 1 << 15, StrideY: 1 << 15}, mid.Result(),
				graph.PoolingOptions{Padding: padding.WithMethod(padding.Valid)}))
			_, err := big.Compile(dev, graph.CompileOptions{Inputs: map[string]ops.ImageDescriptor{"in": {N: 1, C: 64, H: 1, W: 1}}, Outputs: []*graph.Image{out.Result()}})
			return err
		}, vk.ErrOutOfDeviceMemory, "graph arena"},
		{"feed", "feed of the wrong length", func() error { _, err := e.Run(ctx, map[string][]float32{"x": make([]float32, 5)}); return err }, graph.ErrShape, `input "x": 5 values, want 128`},
		{"feed", "unknown feed", func() error {
			_, err := e.Run(ctx, map[string][]float32{"x": make([]float32, 128), "q": nil})
			return err
		}, graph.ErrGraph, `no input named "q"`},
		{"feed", "missing feed", func() error { _, err := e.Run(ctx, nil); return err }, graph.ErrGraph, `input "x" not fed`},
		{"closed", "run of a closed executor", func() error { _, err := closedE.Run(ctx, map[string][]float32{"x": make([]float32, 128)}); return err }, graph.ErrGraph, "closed"},
		{"cancelled", "run with a cancelled context", func() error { _, err := e.Run(cancelled, map[string][]float32{"x": make([]float32, 128)}); return err }, context.Canceled, ""},
		{"JSON", "truncated", load(`{"inputs": {"x": [1, 1, 4, 4]}, "nodes": [`), graph.ErrGraph, "JSON"},
		{"JSON", "not an object", load(`[1, 2]`), graph.ErrGraph, "JSON"},
		{"JSON", "empty", load(``), graph.ErrGraph, "JSON"},
		{"JSON", "unknown field", load(`{"inputs": {"x": null}, "bogus": 1}`), graph.ErrGraph, `unknown field "bogus"`},
		{"JSON", "trailing data", load(`{"inputs": {"x": null}} {}`), graph.ErrGraph, "data after"},
		{"JSON", "wrong type", load(`{"inputs": {"x": "big"}}`), graph.ErrGraph, "JSON"},
		{"JSON", "float32 overflow", load(`{"inputs": {"x": null}, "nodes": [{"name": "l", "op": "loss", "weight": 1e39, "sources": ["x", "x"]}]}`), graph.ErrGraph, "JSON"},
		{"JSON", "unknown source", load(`{"nodes": [{"name": "a", "op": "max", "sources": ["nope"], "kernel": 2}]}`), graph.ErrGraph, `node "a": unknown source "nope"`},
		{"JSON", "cycle", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "add", "sources": ["b", "x"]}, {"name": "b", "op": "add", "sources": ["a", "x"]}]}`), graph.ErrGraph, "cycle"},
		{"JSON", "unknown op", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "maxx", "sources": ["x"]}]}`), graph.ErrGraph, `node "a": unknown op "maxx"`},
		{"JSON", "node without a name", load(`{"inputs": {"x": null}, "nodes": [{"op": "max", "sources": ["x"], "kernel": 2}]}`), graph.ErrGraph, "node 0 has no name"},
		{"JSON", "node named as an input", load(`{"inputs": {"x": null}, "nodes": [{"name": "x", "op": "max", "sources": ["x"], "kernel": 2}]}`), graph.ErrGraph, `node "x" has the name of an input`},
		{"JSON", "kernel missing", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"]}]}`), graph.ErrGraph, `node "a": kernel is required`},
		{"JSON", "kernel of three numbers", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": [1, 2, 3]}]}`), graph.ErrGraph, "want 1 or 2 numbers"},
		{"JSON", "negative stride", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "stride": -1}]}`), graph.ErrGraph, "stride: -1 < 1"},
		{"JSON", "unknown padding", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "padding": "sideways"}]}`), graph.ErrGraph, `unknown padding "sideways"`},
		{"JSON", "two padding forms", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "padding": {"method": 16, "pad": 1}}]}`), graph.ErrGraph, "exactly one"},
		{"JSON", "reserved padding method", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "padding": {"method": 48}}]}`), graph.ErrGraph, `node "a": padding: method 0x30: reserved size pattern`},
		{"JSON", "negative pad", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "padding": {"pad": [0, -1]}}]}`), graph.ErrGraph, "padding.pad: -1 < 0"},
		{"JSON", "unknown edge", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "edge": "wrap"}]}`), graph.ErrGraph, `edge "wrap"`},
		{"JSON", "zero pad on max", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "zero_pad": 1}]}`), graph.ErrGraph, "avg only"},
		{"JSON", "wrong arity", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "add", "sources": ["x"]}]}`), graph.ErrGraph, "add takes 2 sources, got 1"},
		{"JSON", "unknown loss", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "loss", "loss": "hingeless", "sources": ["x", "x"]}]}`), graph.ErrGraph, `loss "hingeless"`},
		{"JSON", "unknown reduction", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "loss", "loss": "mse", "reduction": "max", "sources": ["x", "x"]}]}`), graph.ErrGraph, `reduction "max"`},
		{"JSON", "shape of two numbers", load(`{"inputs": {"x": [1, 2]}, "nodes": []}`), graph.ErrGraph, `input "x": shape needs 4 numbers`},
		{"JSON", "unknown output", load(`{"inputs": {"x": null}, "nodes": [], "outputs": ["q"]}`), graph.ErrGraph, `output "q": no such image`},
		{"JSON", "loss that is no loss", load(`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2}], "loss": "a"}`), graph.ErrGraph, `loss "a" is a max node`},
		{"JSON", "loss that does not exist", load(`{"inputs": {"x": null}, "nodes": [], "loss": "z"}`), graph.ErrGraph, `loss "z": no such node`},
		{"JSON", "slice offset overflowing", func() error {
			g, f, err := graph.Load(strings.NewReader(`{"inputs": {"x": [1, 3, 4, 4]}, "nodes": [{"name": "s", "op": "slice", "sources": ["x"], "offset": 9223372036854775807, "count": 2}]}`))
			if err != nil {
				return err
			}
			_, err = g.InferShapes(must(f.Shapes()))
			return err
		}, graph.ErrShape, `node "s"`},
	}
	classes := map[string]int{}
	for _, tc := range tests {
		t.Run(tc.class+"/"+tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
		})
		classes[tc.class]++
	}
	t.Logf("graph: %d bad inputs in %d classes: %v", len(tests), len(classes), classes)
}

// TestNoPanicOnZeroValues: nil and zero arguments to every exported
// constructor and builder of package graph, and zero-value graphs,
// files, nodes and executors (not made by their constructors), give
// errors, never a panic.
func TestNoPanicOnZeroValues(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	g := graph.New()
	x := must(g.Input("x"))
	p := must(g.Pooling("p", ops.KindMax, geom(2, 2), x, graph.PoolingOptions{}))
	var zg graph.Graph
	var zf graph.File
	var zn graph.Node
	var ze graph.Executor
	calls := map[string]func() error{
		"Load(nil)":         func() error { _, _, err := graph.Load(nil); return err },
		"ParsePolicy(\"\")": func() error { _, err := graph.ParsePolicy(""); return err },
		"Pooling(zero)":     func() error { _, err := g.Pooling("", 0, ops.Geometry{}, nil, graph.PoolingOptions{}); return err },
		"Pooling(kind 99)":  func() error { _, err := g.Pooling("k99", 99, geom(2, 2), x, graph.PoolingOptions{}); return err },
		"Pooling(nil source)": func() error {
			_, err := g.Pooling("ns", ops.KindMax, geom(2, 2), nil, graph.PoolingOptions{})
			return err
		},
		"Concat(nil)":             func() error { _, err := g.Concat("c", nil); return err },
		"Add(nil, nil)":           func() error { _, err := g.Add("a", nil, nil); return err },
		"Loss(zero, nil, nil)":    func() error { _, err := g.Loss("l", ops.LossDescriptor{}, nil, nil); return err },
		"Slice(nil)":              func() error { _, err := g.Slice("s", nil, 0, 1); return err },
		"Training(nil)":           func() error { _, err := g.Training(nil); return err },
		"Training(zero node)":     func() error { _, err := g.Training(&zn); return err },
		"Compile(dev, zero)":      func() error { _, err := g.Compile(dev, graph.CompileOptions{}); return err },
		"Compile(nil, zero)":      func() error { _, err := g.Compile(nil, graph.CompileOptions{}); return err },
		"InferShapes(nil)":        func() error { _, err := g.InferShapes(nil); return err },
		"InferShapes(nil output)": func() error { _, err := g.InferShapes(nil, nil); return err },
		"EvalCPU(nil, nil)":       func() error { _, err := graphref.Eval(g, nil, nil); return err },
		"EvalCPU(no feed)": func() error {
			_, err := graphref.Eval(g, map[string]ops.ImageDescriptor{"x": {N: 1, C: 1, H: 2, W: 2}}, nil)
			return err
		},
		"GradientFilter(nil)": func() error { _, err := p.GradientFilter(nil); return err },
		"zero Graph.Input":    func() error { im, err := zg.Input("x"); return errUnless(im != nil && zg.Image("x") == im, err) },
		"zero Graph.Pooling": func() error {
			_, err := zg.Pooling("p", ops.KindMax, geom(2, 2), x, graph.PoolingOptions{})
			return err
		},
		"zero Graph.Compile":        func() error { _, err := zg.Compile(dev, graph.CompileOptions{}); return err },
		"zero Graph.Training":       func() error { _, err := zg.Training(p); return err },
		"zero Graph.InferShapes":    func() error { d, err := zg.InferShapes(nil); return errUnless(len(d) == 0, err) },
		"zero Graph.EvalCPU":        func() error { v, err := graphref.Eval(&zg, nil, nil); return errUnless(len(v) == 0, err) },
		"EvalCPU(nil output)":       func() error { _, err := graphref.Eval(g, nil, nil, nil); return err },
		"zero File.Build":           func() error { g, err := zf.Build(); return errUnless(g != nil, err) },
		"zero File.Shapes":          func() error { s, err := zf.Shapes(); return errUnless(len(s) == 0, err) },
		"zero Node.GradientFilter":  func() error { _, err := zn.GradientFilter(x); return err },
		"zero Node.GradientFilters": func() error { _, err := zn.GradientFilters(x); return err },
		"zero Executor.Run":         func() error { _, err := ze.Run(ctx, nil); return err },
		"zero Executor.Close":       func() error { ze.Close(); return graph.ErrGraph },
	}
	for name, call := range calls {
		var err error
		if !assert.NotPanics(t, func() { err = call() }, name) {
			continue
		}
		assert.Error(t, err, name)
	}
	t.Logf("graph: %d nil or zero-value calls, no panic", len(calls))
}

// errUnless returns err, or ErrGraph when ok: for calls on zero values
// that work (a zero Graph is an empty graph), so that the loop's "an
// error" check passes only when they did what they should.
func errUnless(ok bool, err error) error {
	if err == nil && ok {
		return graph.ErrGraph
	}
	return err
}
