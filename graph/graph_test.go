package graph_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
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

func geom(k, s int) ops.Geometry {
	return ops.Geometry{KernelWidth: k, KernelHeight: k, StrideX: s, StrideY: s, DilationX: 1, DilationY: 1}
}

// must returns v, panicking (which fails the test) on an error.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func randomData(r *rand.Rand, n int) []float32 {
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(r.NormFloat64())
	}
	return d
}

func to64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func n(d ops.ImageDescriptor) int { return d.N * d.C * d.H * d.W }

// A graph's results equal the same kernels encoded by hand, bit for bit.
func TestGraphMatchesHandEncoded(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(1))
	xd := ops.ImageDescriptor{N: 2, C: 3, H: 17, W: 13}
	xv := randomData(r, n(xd))

	g := graph.New()
	x := must(g.Input("x"))
	p1 := must(g.Pooling("p1", ops.KindMax, geom(3, 2), x, graph.PoolingOptions{}))
	exp := padding.Explicit(padding.Pads{Top: 1, Left: 0, Bottom: 1, Right: 2}, true, false)
	p2 := must(g.Pooling("p2", ops.KindAverage, geom(3, 2), x, graph.PoolingOptions{Padding: exp}))
	cat := must(g.Concat("cat", p1.Result(), p2.Result()))
	p3 := must(g.Pooling("p3", ops.KindL2Norm, geom(2, 1), cat.Result(), graph.PoolingOptions{EdgeMode: ops.EdgeZero, EdgeSet: true}))
	sum := must(g.Add("sum", p3.Result(), p3.Result()))
	e := must(g.Compile(dev, graph.CompileOptions{Inputs: map[string]ops.ImageDescriptor{"x": xd}, Outputs: []*graph.Image{sum.Result(), cat.Result()}}))
	defer e.Close()
	out := must(e.Run(ctx, map[string][]float32{"x": xv}))

	// By hand.
	xi := must(ops.NewImage(dev, xd))
	defer xi.Close()
	require.NoError(t, xi.Write(ctx, xv))
	cb := must(dev.NewCommandBuffer())
	defer cb.Close()
	k1 := must(ops.NewPoolingMax(dev, 3, 3, 2, 2))
	k1.EdgeMode = ops.EdgeClamp
	a := must(k1.EncodeNew(cb, xi))
	defer a.Close()
	k2 := must(ops.NewPoolingAverage(dev, 3, 3, 2, 2))
	k2.Padding = exp
	b := must(k2.EncodeNew(cb, xi))
	defer b.Close()
	cd := a.Descriptor()
	cd.C += b.C()
	ci := must(ops.NewImage(dev, cd))
	defer ci.Close()
	require.NoError(t, ops.Copy(cb, a, must(ci.ChannelView(0, a.C()))))
	require.NoError(t, ops.Copy(cb, b, must(ci.ChannelView(a.C(), b.C()))))
	k3 := must(ops.NewPoolingL2Norm(dev, 2, 2, 1, 1))
	c := must(k3.EncodeNew(cb, ci))
	defer c.Close()
	s := must(ops.NewImage(dev, c.Descriptor()))
	defer s.Close()
	add := must(ops.NewAdd(dev))
	require.NoError(t, add.Encode(cb, c, c, s))
	require.NoError(t, cb.Commit())
	require.NoError(t, cb.Wait(ctx))
	assert.Equal(t, must(ci.Read(ctx)), out["cat"])
	assert.Equal(t, must(s.Read(ctx)), out["sum"])
}

// randomGraph builds a small graph over input x ending in a loss against
// labels, with fan-out (x and an intermediate feed several filters),
// concatenation and addition. It returns the graph, its loss node and the
// shapes of x and labels.
func randomGraph(t *testing.T, r *rand.Rand) (*graph.Graph, *graph.Node, map[string]ops.ImageDescriptor) {
	g := graph.New()
	x := must(g.Input("x"))
	labels := must(g.Input("labels"))
	kinds := []ops.PoolingKind{ops.KindMax, ops.KindAverage, ops.KindL2Norm, ops.KindDilatedMax}
	pool := func(name string, src *graph.Image) *graph.Image {
		kind := kinds[r.Intn(len(kinds))]
		gm := ops.Geometry{KernelWidth: 1 + r.Intn(3), KernelHeight: 1 + r.Intn(3), StrideX: 1 + r.Intn(2), StrideY: 1 + r.Intn(2), DilationX: 1, DilationY: 1}
		if kind == ops.KindDilatedMax {
			gm.DilationX, gm.DilationY = 1+r.Intn(2), 2
		}
		o := graph.PoolingOptions{}
		switch r.Intn(3) {
		case 1:
			o.Padding = padding.WithMethod(padding.Valid)
		case 2:
			o.Padding = padding.Explicit(padding.Pads{Top: r.Intn(2), Left: r.Intn(2), Bottom: r.Intn(2), Right: r.Intn(2)}, r.Intn(2) == 0, r.Intn(2) == 0)
		}
		if r.Intn(3) == 0 && kind != ops.KindAverage {
			o.EdgeMode, o.EdgeSet = ops.EdgeZero, true
		}
		return must(g.Pooling(name, kind, gm, src, o)).Result()
	}
	// Two branches from x (fan-out) with the same output size (stride 1,
	// same padding), concatenated; one branch also feeds an addition.
	same := graph.PoolingOptions{}
	b1 := must(g.Pooling("b1", ops.KindMax, geom(3, 1), x, same)).Result()
	b2 := must(g.Pooling("b2", ops.KindAverage, geom(2, 1), x, same)).Result()
	sum := must(g.Add("sum", b1, b2)).Result()
	cat := must(g.Concat("cat", sum, b1, b2)).Result()
	top := pool("top", cat)
	loss := must(g.Loss("loss", ops.LossDescriptor{Type: ops.LossMeanSquaredError, Reduction: ops.ReductionSum}, top, labels))
	xd := ops.ImageDescriptor{N: 1 + r.Intn(2), C: 1 + r.Intn(3), H: 5 + r.Intn(6), W: 5 + r.Intn(6)}
	shapes := map[string]ops.ImageDescriptor{"x": xd}
	// The labels have the prediction's shape.
	pd := must(g.InferShapes(shapes, top))
	shapes["labels"] = pd[top]
	return g, loss, shapes
}

// xFiniteDifferences returns the central finite differences (step 1e-6)
// of loss with respect to each value of the input "x", the graph
// evaluated on the CPU in float64 at feeds.
func xFiniteDifferences(g *graph.Graph, shapes map[string]ops.ImageDescriptor, feeds map[string][]float64, loss *graph.Node) []float64 {
	lossAt := func(xs []float64) float64 {
		f := map[string][]float64{"x": xs, "labels": feeds["labels"]}
		return must(graphref.Eval(g, shapes, f, loss.Result()))[loss.Name()][0]
	}
	const h = 1e-6
	fd := make([]float64, len(feeds["x"]))
	for i := range fd {
		xp := append([]float64(nil), feeds["x"]...)
		xm := append([]float64(nil), feeds["x"]...)
		xp[i] += h
		xm[i] -= h
		fd[i] = (lossAt(xp) - lossAt(xm)) / (2 * h)
	}
	return fd
}

// The training graph's gradients equal central finite differences of the
// whole graph's loss computed on the CPU in float64, on random graphs with
// fan-out, concatenation and addition.
func TestTrainingMatchesFiniteDifferences(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(2))
	for trial := 0; trial < 8; trial++ {
		g, loss, shapes := randomGraph(t, r)
		grads := must(g.Training(loss))
		x := g.Image("x")
		gx := grads[x]
		require.NotNil(t, gx, "x gets a gradient")
		assert.Nil(t, grads[g.Image("labels")], "labels take no gradient")
		xv := randomData(r, n(shapes["x"]))
		lv := randomData(r, n(shapes["labels"]))
		e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{loss.Result(), gx}, RecordArgmax: trial%2 == 0}))
		out := must(e.Run(ctx, map[string][]float32{"x": xv, "labels": lv}))
		require.NoError(t, e.Close())

		// CPU: the loss as a function of x, and its training graph.
		feeds := map[string][]float64{"x": to64(xv), "labels": to64(lv)}
		cpu := must(graphref.Eval(g, shapes, feeds, loss.Result(), gx))
		assert.InDelta(t, cpu[loss.Name()][0], float64(out[loss.Name()][0]), 1e-3*math.Max(1, math.Abs(cpu[loss.Name()][0])), "trial %d loss", trial)
		for i, fd := range xFiniteDifferences(g, shapes, feeds, loss) {
			got := float64(out[gx.Name()][i])
			require.InDelta(t, fd, got, 2e-3*math.Max(1, math.Abs(fd)), "trial %d: d loss / d x[%d]", trial, i)
			require.InDelta(t, cpu[gx.Name()][i], got, 1e-4*math.Max(1, math.Abs(fd)), "trial %d: CPU training graph, x[%d]", trial, i)
		}
	}
}

// Cross-entropy and a loss with a weight and mean reduction, through a
// hand-built gradient graph (GradientFilter by hand instead of Training).
func TestHandBuiltGradientGraph(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(3))
	g := graph.New()
	x := must(g.Input("x"))
	labels := must(g.Input("labels"))
	p := must(g.Pooling("p", ops.KindAverage, geom(2, 2), x, graph.PoolingOptions{}))
	loss := must(g.Loss("loss", ops.LossDescriptor{Type: ops.LossSoftmaxCrossEntropy, Reduction: ops.ReductionMean, Weight: 2}, p.Result(), labels))
	lg := must(loss.GradientFilters(nil))
	require.Len(t, lg, 2)
	require.Nil(t, lg[1], "no gradient for labels")
	pg := must(p.GradientFilter(lg[0].Result()))
	assert.Equal(t, "avg-gradient", pg.Op())
	assert.Same(t, p, pg.Forward())
	xd := ops.ImageDescriptor{N: 2, C: 4, H: 6, W: 6}
	ld := ops.ImageDescriptor{N: 2, C: 4, H: 3, W: 3}
	xv := randomData(r, n(xd))
	lv := make([]float32, n(ld))
	for i := range lv {
		lv[i] = r.Float32()
	}
	shapes := map[string]ops.ImageDescriptor{"x": xd, "labels": ld}
	e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{loss.Result(), pg.Result()}}))
	defer e.Close()
	out := must(e.Run(ctx, map[string][]float32{"x": xv, "labels": lv}))
	cpu := must(graphref.Eval(g, shapes, map[string][]float64{"x": to64(xv), "labels": to64(lv)}, loss.Result(), pg.Result()))
	assert.InDelta(t, cpu["loss"][0], float64(out["loss"][0]), 1e-4)
	for i, v := range cpu[pg.Result().Name()] {
		require.InDelta(t, v, float64(out[pg.Result().Name()][i]), 1e-5)
	}
}

// On a deep chain the memory plan's peak is far below the sum of the
// intermediates, and the results are those of the CPU.
func TestMemoryPlanSharesMemory(t *testing.T) {
	for name, opts := range map[string]vk.Options{"direct": {}, "staging": {ForceStaging: true}} {
		t.Run(name, func(t *testing.T) {
			dev := vktest.Open(t, opts)
			ctx := context.Background()
			g := graph.New()
			x := must(g.Input("x"))
			cur := x
			for i := 0; i < 12; i++ {
				kind := []ops.PoolingKind{ops.KindMax, ops.KindAverage, ops.KindL2Norm}[i%3]
				cur = must(g.Pooling(fmt.Sprintf("p%d", i), kind, geom(3, 1), cur, graph.PoolingOptions{})).Result()
			}
			xd := ops.ImageDescriptor{N: 2, C: 8, H: 32, W: 32}
			e := must(g.Compile(dev, graph.CompileOptions{Inputs: map[string]ops.ImageDescriptor{"x": xd}}))
			defer e.Close()
			plan := e.Plan()
			t.Logf("plan: arena %d bytes, intermediates %d bytes, dedicated %d", plan.Arena, plan.Intermediates, plan.Dedicated)
			assert.Equal(t, uint64(11*n(xd)*4), plan.Intermediates)
			assert.LessOrEqual(t, plan.Arena, uint64(2*n(xd)*4), "two buffers suffice for a chain")
			xv := randomData(rand.New(rand.NewSource(4)), n(xd))
			before := dev.Submissions()
			out := must(e.Run(ctx, map[string][]float32{"x": xv}))
			assert.Equal(t, uint64(1), dev.Submissions()-before, "one queue submission per run")
			cpu := must(graphref.Eval(g, map[string]ops.ImageDescriptor{"x": xd}, map[string][]float64{"x": to64(xv)}))
			for i, v := range cpu["p11"] {
				require.InDelta(t, v, float64(out["p11"][i]), 1e-4*math.Max(1, math.Abs(v)))
			}
			// Repeated runs replay the recording: still one submission, no
			// new objects, fresh inputs honoured.
			live := dev.LiveSummary()
			for i := 0; i < 5; i++ {
				xv = randomData(rand.New(rand.NewSource(int64(10+i))), n(xd))
				before = dev.Submissions()
				out = must(e.Run(ctx, map[string][]float32{"x": xv}))
				assert.Equal(t, uint64(1), dev.Submissions()-before)
			}
			assert.Equal(t, live, dev.LiveSummary())
			cpu = must(graphref.Eval(g, map[string]ops.ImageDescriptor{"x": xd}, map[string][]float64{"x": to64(xv)}))
			for i, v := range cpu["p11"] {
				require.InDelta(t, v, float64(out["p11"][i]), 1e-4*math.Max(1, math.Abs(v)))
			}
		})
	}
}

// Training with intermediates returned on request and the argmax option.
func TestTrainingRunsAndFetchesIntermediates(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	g := graph.New()
	x := must(g.Input("x"))
	labels := must(g.Input("labels"))
	p1 := must(g.Pooling("p1", ops.KindMax, geom(2, 2), x, graph.PoolingOptions{}))
	p2 := must(g.Pooling("p2", ops.KindMax, geom(3, 1), p1.Result(), graph.PoolingOptions{}))
	loss := must(g.Loss("loss", ops.LossDescriptor{Reduction: ops.ReductionMean}, p2.Result(), labels))
	grads := must(g.Training(loss))
	gx := grads[x]
	require.Equal(t, "grad(x)", gx.Name())
	shapes := map[string]ops.ImageDescriptor{"x": {N: 1, C: 2, H: 8, W: 8}, "labels": {N: 1, C: 2, H: 4, W: 4}}
	r := rand.New(rand.NewSource(5))
	feeds := map[string][]float32{"x": randomData(r, 128), "labels": randomData(r, 32)}
	var results []map[string][]float32
	for _, argmax := range []bool{false, true} {
		e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, RecordArgmax: argmax,
			Outputs: []*graph.Image{loss.Result(), gx, p1.Result(), g.Image("grad(p1)")}}))
		out := must(e.Run(ctx, feeds))
		require.NoError(t, e.Close())
		assert.Len(t, out, 4)
		results = append(results, out)
	}
	assert.Equal(t, results[0], results[1], "the argmax state gives the same gradients")
}

func TestBadGraphs(t *testing.T) {
	dev := vktest.Open(t)
	g := graph.New()
	x := must(g.Input("x"))
	_, err := g.Input("x")
	assert.ErrorContains(t, err, `"x" is used twice`)
	p := must(g.Pooling("p", ops.KindMax, geom(2, 2), x, graph.PoolingOptions{}))
	_, err = g.Pooling("bad", ops.KindMax, ops.Geometry{KernelWidth: 0, KernelHeight: 2, StrideX: 1, StrideY: 1}, x, graph.PoolingOptions{})
	assert.ErrorContains(t, err, `node "bad": kernel width 0 < 1`)
	_, err = g.Pooling("avgdil", ops.KindAverage, ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 1, StrideY: 1, DilationX: 2, DilationY: 1}, x, graph.PoolingOptions{})
	assert.ErrorContains(t, err, `node "avgdil"`)
	_, err = g.Add("add1", x, nil)
	assert.ErrorContains(t, err, `node "add1": source 1 is nil`)
	other := graph.New()
	y := must(other.Input("y"))
	_, err = g.Add("mixed", x, y)
	assert.ErrorContains(t, err, "another graph")
	cat := must(g.Concat("cat", x, p.Result()))
	add := must(g.Add("add", x, p.Result()))
	_, err = p.GradientFilters(nil)
	assert.ErrorContains(t, err, "nil source gradient")
	_, err = g.Training(p)
	assert.ErrorContains(t, err, `node "p" (max) is not a loss node`)

	shapes := map[string]ops.ImageDescriptor{"x": {N: 1, C: 2, H: 8, W: 8}}
	_, err = g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{cat.Result()}})
	assert.ErrorIs(t, err, graph.ErrShape)
	assert.ErrorContains(t, err, `node "cat"`)
	_, err = g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{add.Result()}})
	assert.ErrorContains(t, err, `node "add"`)
	_, err = g.Compile(dev, graph.CompileOptions{Outputs: []*graph.Image{p.Result()}})
	assert.ErrorContains(t, err, `missing the shape of input "x"`)
	_, err = g.Compile(dev, graph.CompileOptions{Inputs: map[string]ops.ImageDescriptor{"x": {N: 1, C: 1, H: 4, W: 4}, "zz": {N: 1, C: 1, H: 1, W: 1}}, Outputs: []*graph.Image{p.Result()}})
	assert.ErrorContains(t, err, `no input named "zz"`)
	// A valid-only window larger than the image.
	v := must(g.Pooling("valid", ops.KindMax, geom(9, 1), x, graph.PoolingOptions{Padding: padding.WithMethod(padding.Valid)}))
	_, err = g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{v.Result()}})
	assert.ErrorContains(t, err, `node "valid"`)

	e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{p.Result()}}))
	defer e.Close()
	ctx := context.Background()
	_, err = e.Run(ctx, map[string][]float32{"x": make([]float32, 5)})
	assert.ErrorContains(t, err, `input "x": 5 values, want 128`)
	_, err = e.Run(ctx, map[string][]float32{"x": make([]float32, 128), "q": nil})
	assert.ErrorContains(t, err, `no input named "q"`)
	_, err = e.Run(ctx, map[string][]float32{})
	assert.ErrorContains(t, err, `input "x" not fed`)
	require.NoError(t, e.Close())
	require.NoError(t, e.Close())
	_, err = e.Run(ctx, map[string][]float32{"x": make([]float32, 128)})
	assert.ErrorContains(t, err, "closed")
}

func TestJSONGraphs(t *testing.T) {
	dev := vktest.Open(t)
	const good = `{
	  "inputs": {"x": [1, 3, 12, 12], "labels": null},
	  "nodes": [
	    {"name": "loss", "op": "loss", "loss": "mse", "reduction": "sum", "sources": ["cat", "labels"]},
	    {"name": "cat", "op": "concat", "sources": ["p1", "p2"]},
	    {"name": "p1", "op": "max", "sources": ["x"], "kernel": [3, 3], "stride": 2, "padding": "same"},
	    {"name": "p2", "op": "avg", "sources": ["x"], "kernel": 2, "stride": [2, 2],
	     "padding": {"pad": [0, 0, 0, 0], "ceil_mode": true, "count_include_pad": false}}
	  ],
	  "outputs": ["loss"],
	  "loss": "loss"
	}`
	g, f, err := graph.Load(strings.NewReader(good))
	require.NoError(t, err)
	shapes := must(f.Shapes())
	shapes["labels"] = ops.ImageDescriptor{N: 1, C: 6, H: 6, W: 6}
	grads := must(g.Training(g.Image(f.Loss).Producer()))
	e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{g.Image("loss"), grads[g.Image("x")]}}))
	defer e.Close()
	r := rand.New(rand.NewSource(6))
	out := must(e.Run(context.Background(), map[string][]float32{"x": randomData(r, 432), "labels": randomData(r, 216)}))
	assert.Len(t, out["grad(x)"], 432)

	for _, tc := range []struct{ json, want string }{
		{`{"nodes": [{"name": "a", "op": "max", "sources": ["nope"], "kernel": 2}]}`, `node "a": unknown source "nope"`},
		{`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "add", "sources": ["b", "x"]}, {"name": "b", "op": "add", "sources": ["a", "x"]}]}`, "cycle"},
		{`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"]}]}`, `node "a": kernel is required`},
		{`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "maxx", "sources": ["x"]}]}`, `node "a": unknown op "maxx"`},
		{`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "padding": "sideways"}]}`, `node "a": unknown padding "sideways"`},
		{`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2, "padding": {"method": 3}}]}`, `node "a"`},
		{`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": [1, 2, 3]}]}`, `node "a": kernel: want 1 or 2 numbers`},
		{`{"inputs": {"x": null}, "nodes": [{"name": "x", "op": "max", "sources": ["x"], "kernel": 2}]}`, `node "x" has the name of an input`},
		{`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2}, {"name": "a", "op": "max", "sources": ["x"], "kernel": 2}]}`, `node "a" is defined twice`},
		{`{"inputs": {"x": null}, "nodes": [], "outputs": ["q"]}`, `output "q": no such image`},
		{`{"inputs": {"x": [1, 2]}, "nodes": []}`, `input "x": shape needs 4 numbers`},
		{`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "max", "sources": ["x"], "kernel": 2}], "loss": "a"}`, `loss "a" is a max node`},
		{`{"inputs": {"x": null}, "bogus": 1}`, `unknown field "bogus"`},
		{`{"inputs": {"x": null}} {}`, "data after"},
		{`[1, 2`, "JSON"},
		{`{"inputs": {"x": null}, "nodes": [{"name": "a", "op": "loss", "loss": "hinges", "sources": ["x", "x"]}]}`, `node "a": loss "hinges"`},
	} {
		_, _, err := graph.Load(strings.NewReader(tc.json))
		require.Error(t, err, tc.json)
		assert.ErrorIs(t, err, graph.ErrGraph, tc.json)
		assert.Contains(t, err.Error(), tc.want, tc.json)
	}
}

// Graphs that read an image twice in one node, slice, and compute labels
// from the input: the training gradients still equal finite differences.
func TestTrainingEdgeCases(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	build := map[string]func(g *graph.Graph, x, labels *graph.Image) *graph.Image{
		"concat x,x": func(g *graph.Graph, x, _ *graph.Image) *graph.Image {
			return must(g.Concat("c", x, x)).Result()
		},
		"add p,p": func(g *graph.Graph, x, _ *graph.Image) *graph.Image {
			p := must(g.Pooling("p", ops.KindMax, geom(3, 1), x, graph.PoolingOptions{})).Result()
			return must(g.Add("s", p, p)).Result()
		},
		"slice": func(g *graph.Graph, x, _ *graph.Image) *graph.Image {
			p := must(g.Pooling("p", ops.KindAverage, geom(2, 1), x, graph.PoolingOptions{})).Result()
			c := must(g.Concat("c", p, x)).Result()
			return must(g.Slice("sl", c, 1, 3)).Result()
		},
	}
	for name, f := range build {
		t.Run(name, func(t *testing.T) {
			g := graph.New()
			x := must(g.Input("x"))
			labels := must(g.Input("labels"))
			pred := f(g, x, labels)
			loss := must(g.Loss("loss", ops.LossDescriptor{Reduction: ops.ReductionSum}, pred, labels))
			grads := must(g.Training(loss))
			gx := grads[x]
			require.NotNil(t, gx)
			require.Equal(t, "grad(x)", gx.Name())
			xd := ops.ImageDescriptor{N: 1, C: 2, H: 5, W: 5}
			shapes := map[string]ops.ImageDescriptor{"x": xd}
			shapes["labels"] = must(g.InferShapes(shapes, pred))[pred]
			r := rand.New(rand.NewSource(7))
			xv, lv := randomData(r, n(xd)), randomData(r, n(shapes["labels"]))
			e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{gx}}))
			defer e.Close()
			d, ok := e.Shape("grad(x)")
			require.True(t, ok)
			assert.Equal(t, n(xd), n(d))
			out := must(e.Run(ctx, map[string][]float32{"x": xv, "labels": lv}))
			lossAt := func(xs []float64) float64 {
				v := must(graphref.Eval(g, shapes, map[string][]float64{"x": xs, "labels": to64(lv)}, loss.Result()))
				return v["loss"][0]
			}
			for i := range xv {
				xp, xm := to64(xv), to64(xv)
				xp[i] += 1e-6
				xm[i] -= 1e-6
				fd := (lossAt(xp) - lossAt(xm)) / 2e-6
				require.InDelta(t, fd, float64(out["grad(x)"][i]), 2e-3*math.Max(1, math.Abs(fd)), "x[%d]", i)
			}
		})
	}
	// Labels computed from the input: the gradient of x comes only through
	// the prediction, and keeps its name.
	g := graph.New()
	x := must(g.Input("x"))
	pred := must(g.Pooling("p", ops.KindMax, geom(2, 2), x, graph.PoolingOptions{})).Result()
	lab := must(g.Pooling("l", ops.KindAverage, geom(2, 2), x, graph.PoolingOptions{})).Result()
	loss := must(g.Loss("loss", ops.LossDescriptor{}, pred, lab))
	grads := must(g.Training(loss))
	require.NotNil(t, grads[x])
	assert.Equal(t, "grad(x)", grads[x].Name())
}

// A neuron whose result feeds two nodes (a residual block's ReLU after
// its addition, as ResNet's) takes both contributions to its gradient
// itself: the training graph holds no sum node for it, its gradient node
// reads the two contributions (SumDy), and the gradients match the CPU
// evaluation of the same graph and central finite differences of its
// loss; a PReLU in the same place keeps its sum node (its slope gradient
// reads the sum too).
func TestTrainingNeuronGradientSumsItsContributions(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	for _, prelu := range []bool{false, true} {
		r := rand.New(rand.NewSource(17))
		g := graph.New()
		x := must(g.Input("x"))
		labels := must(g.Input("labels"))
		pad := graph.ConvolutionOptions{Padding: padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, false, false)}
		c1 := must(g.Convolution("c1", x, ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 2, OutputFeatureChannels: 4}, pad))
		nd := ops.NewNeuronDescriptor(ops.NeuronReLU)
		if prelu {
			nd = ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: []float32{0.1, -0.2, 0.3, 0.05}}
		}
		act := must(g.Neuron("act", nd, c1.Result()))
		c2 := must(g.Convolution("c2", act.Result(), ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 4, OutputFeatureChannels: 4}, pad))
		add := must(g.Add("add", c2.Result(), act.Result()))
		out := must(g.Neuron("out", ops.NewNeuronDescriptor(ops.NeuronTanH), add.Result()))
		loss := must(g.Loss("loss", ops.LossDescriptor{Type: ops.LossMeanSquaredError, Reduction: ops.ReductionSum}, out.Result(), labels))
		grads := must(g.Training(loss))
		gx, gw := grads[x], grads[g.Image("c1.weights")]
		require.NotNil(t, gx)
		require.NotNil(t, gw)
		sums, fused := 0, 0
		for _, nd := range g.Nodes() {
			if nd.Op() == "sum" {
				sums++
			}
			if o, ok := nd.Operation().(graph.NeuronGradientOp); ok && o.SumDy {
				fused++
				require.Same(t, act, nd.Forward(), "the fused gradient is act's")
			}
		}
		if prelu {
			assert.Equal(t, 0, fused, "PReLU keeps its sum")
			assert.Positive(t, sums, "PReLU's sum node")
		} else {
			assert.Equal(t, 1, fused, "act's gradient sums its contributions")
			assert.Equal(t, 0, sums, "no sum node")
		}

		shapes := map[string]ops.ImageDescriptor{"x": {N: 2, C: 2, H: 5, W: 6}, "labels": {N: 2, C: 4, H: 5, W: 6}}
		xv := randomData(r, n(shapes["x"]))
		lv := randomData(r, n(shapes["labels"]))
		e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{loss.Result(), gx, gw}}))
		got := must(e.Run(ctx, map[string][]float32{"x": xv, "labels": lv}))
		require.NoError(t, e.Close())
		feeds := map[string][]float64{"x": to64(xv), "labels": to64(lv)}
		cpu := must(graphref.Eval(g, shapes, feeds, loss.Result(), gx, gw))
		for _, im := range []*graph.Image{gx, gw} {
			for i, v := range cpu[im.Name()] {
				require.InDelta(t, v, float64(got[im.Name()][i]), 1e-4*math.Max(1, math.Abs(v)), "prelu %v: %s[%d] against the CPU", prelu, im.Name(), i)
			}
		}
		for i, fd := range xFiniteDifferences(g, shapes, feeds, loss) {
			require.InDelta(t, fd, float64(got[gx.Name()][i]), 2e-3*math.Max(1, math.Abs(fd)), "prelu %v: d loss / d x[%d]", prelu, i)
		}
	}
}
