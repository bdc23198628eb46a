package graph_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/graph/graphref"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk/vktest"
)

// deepGraph is a chain of n pooling nodes of all four kinds (stride 1,
// "same" size) ending in a loss, and its training graph.
func deepGraph(t testing.TB, n int) (g *graph.Graph, out *graph.Image, gx *graph.Image) {
	g = graph.New()
	x := must(g.Input("x"))
	labels := must(g.Input("labels"))
	cur := x
	for i := 0; i < n; i++ {
		kind := []ops.PoolingKind{ops.KindMax, ops.KindAverage, ops.KindL2Norm, ops.KindDilatedMax}[i%4]
		gm := geom(3, 1)
		if kind == ops.KindDilatedMax {
			gm.DilationX, gm.DilationY = 2, 2
		}
		cur = must(g.Pooling(fmt.Sprintf("p%d", i), kind, gm, cur, graph.PoolingOptions{})).Result()
	}
	loss := must(g.Loss("loss", ops.LossDescriptor{Reduction: ops.ReductionMean}, cur, labels))
	grads, err := g.Training(loss)
	require.NoError(t, err)
	return g, loss.Result(), grads[x]
}

// Issue 9: a graph of 32 pooling nodes, and its training graph of 64
// kernels more, runs with one queue submission, and agrees with the CPU.
func TestThirtyTwoNodesOneSubmission(t *testing.T) {
	dev := vktest.Open(t)
	g, loss, gx := deepGraph(t, 32)
	shapes := map[string]ops.ImageDescriptor{"x": {N: 1, C: 4, H: 12, W: 12}, "labels": {N: 1, C: 4, H: 12, W: 12}}
	r := rand.New(rand.NewSource(32))
	feeds := map[string][]float32{"x": randomData(r, 576), "labels": randomData(r, 576)}
	e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{loss, gx}}))
	defer e.Close()
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		before := dev.Submissions()
		out := must(e.Run(ctx, feeds))
		require.Equal(t, uint64(1), dev.Submissions()-before, "one queue submission per run (run %d)", i)
		if i == 0 {
			cpu := must(graphref.Eval(g, shapes, map[string][]float64{"x": to64(feeds["x"]), "labels": to64(feeds["labels"])}, loss, gx))
			// Eight L2 layers scale values by about 3^8: tolerances relative to
			// the largest.
			assert.InEpsilon(t, cpu["loss"][0], float64(out["loss"][0]), 1e-5)
			scale := 0.0
			for _, v := range cpu[gx.Name()] {
				scale = math.Max(scale, math.Abs(v))
			}
			require.Greater(t, scale, 0.0)
			for j, v := range cpu[gx.Name()] {
				require.InDelta(t, v, float64(out[gx.Name()][j]), 1e-5*scale, "grad(x)[%d]", j)
			}
		}
	}
}

// Host and device time of one run of the 32-node training graph: feeds
// in, one submission, results out.
func BenchmarkRunDeepTraining(b *testing.B) {
	dev := vktest.Open(b)
	g, loss, gx := deepGraph(b, 32)
	shapes := map[string]ops.ImageDescriptor{"x": {N: 2, C: 16, H: 32, W: 32}, "labels": {N: 2, C: 16, H: 32, W: 32}}
	r := rand.New(rand.NewSource(1))
	feeds := map[string][]float32{"x": randomData(r, 32768), "labels": randomData(r, 32768)}
	e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{loss, gx}}))
	defer e.Close()
	ctx := context.Background()
	_ = must(e.Run(ctx, feeds)) // records
	before := dev.Submissions()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Run(ctx, feeds); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(dev.Submissions()-before)/float64(b.N), "submits/op")
}
