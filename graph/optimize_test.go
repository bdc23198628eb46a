package graph_test

import (
	"context"
	"math"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/graph/graphref"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk/vktest"
)

// preluGraph is x -> PReLU (trainable slopes "op.a") -> MSE-sum loss.
func preluGraph(t *testing.T) (*graph.Graph, *graph.Node, map[string]ops.ImageDescriptor) {
	g := graph.New()
	x := must(g.Input("x"))
	labels := must(g.Input("labels"))
	op := must(g.Neuron("op", ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: []float32{0.2, -0.3, 0.5}}, x))
	loss := must(g.Loss("loss", ops.LossDescriptor{Type: ops.LossMeanSquaredError, Reduction: ops.ReductionSum}, op.Result(), labels))
	d := ops.ImageDescriptor{N: 2, C: 3, H: 4, W: 3}
	return g, loss, map[string]ops.ImageDescriptor{"x": d, "labels": d}
}

// A training step (forward, gradients, SGD update) is one submission, and
// each step's parameters equal the CPU's plain SGD step from the CPU
// gradient of the previous parameters.
func TestOptimizeSGDStepByStep(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(5))
	g, loss, shapes := preluGraph(t)
	updates := must(g.Optimize(loss, must(ops.ParseOptimizer("sgd", 0.05, 0, 0))))
	e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{loss.Result()}, Compute: updates, Mode: graph.ModeTraining}))
	defer e.Close()

	// The CPU side: the same graph's gradient of the slopes.
	cg, closs, _ := preluGraph(t)
	ga := must(cg.Training(closs))[cg.Image("op.a")]
	feeds := map[string][]float32{"x": randomData(r, n(shapes["x"])), "labels": randomData(r, n(shapes["labels"]))}
	a := to64(must(e.Parameter(ctx, "op.a")))
	for step := 0; step < 4; step++ {
		cpu := must(graphref.Eval(cg, shapes, map[string][]float64{"x": to64(feeds["x"]), "labels": to64(feeds["labels"]), "op.a": a}, closs.Result(), ga))
		before := dev.Submissions()
		out := must(e.Run(ctx, feeds))
		require.Equal(t, uint64(1), dev.Submissions()-before, "one submission per training step")
		require.InDelta(t, cpu[closs.Name()][0], float64(out[loss.Name()][0]), 1e-4*math.Max(1, math.Abs(cpu[closs.Name()][0])), "step %d: the loss is the forward's, before the update", step)
		got := must(e.Parameter(ctx, "op.a"))
		for i := range a {
			a[i] -= 0.05 * cpu[ga.Name()][i]
			require.InDelta(t, a[i], float64(got[i]), 1e-5, "step %d slope %d", step, i)
		}
		a = to64(got)
	}
	require.Equal(t, 4, must(e.TimeStep(ctx)))
}

// Saving a checkpoint and loading it into a new executor continues
// training with the same bits: parameters, Adam's moments and time step.
func TestCheckpointRoundTripContinuesTraining(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(6))
	dir := t.TempDir()
	feeds := []map[string][]float32{}
	for i := 0; i < 4; i++ {
		feeds = append(feeds, map[string][]float32{"x": randomData(r, 72), "labels": randomData(r, 72)})
	}
	compile := func() *graph.Executor {
		g, loss, shapes := preluGraph(t)
		d := must(ops.ParseOptimizer("adam", 0.01, 0, 0))
		updates := must(g.Optimize(loss, d))
		return must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{loss.Result()}, Compute: updates}))
	}
	a := compile()
	defer a.Close()
	for _, f := range feeds[:2] {
		must(a.Run(ctx, f))
	}
	ckpt := filepath.Join(dir, "ckpt.safetensors")
	require.NoError(t, a.SaveCheckpoint(ctx, ckpt))
	require.NoError(t, a.SaveParameters(ctx, dir))
	var want []map[string][]float32
	for _, f := range feeds[2:] {
		want = append(want, must(a.Run(ctx, f)))
	}
	wantA := must(a.Parameter(ctx, "op.a"))

	b := compile()
	defer b.Close()
	require.NoError(t, b.LoadCheckpoint(ctx, ckpt))
	require.Equal(t, 2, must(b.TimeStep(ctx)))
	for i, f := range feeds[2:] {
		require.Equal(t, want[i], must(b.Run(ctx, f)), "step %d after the checkpoint", i+3)
	}
	require.Equal(t, wantA, must(b.Parameter(ctx, "op.a")))

	// The .npy parameters load too (without optimizer state).
	c := compile()
	defer c.Close()
	require.NoError(t, c.LoadParameters(ctx, dir))
	require.NoError(t, c.SetParameter(ctx, "op.a", []float32{1, 2, 3}))
	require.Error(t, c.SetParameter(ctx, "op.a", []float32{1, 2}))
	require.Error(t, c.LoadParameters(ctx, t.TempDir()), "a folder without the files")
}
