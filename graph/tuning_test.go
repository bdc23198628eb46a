package graph_test

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// CompileOptions.ConvolutionTuning reaches the convolution kernels: a 3x3
// convolution of 8 channels (no Winograd by default) under winograd=1
// gives the default's results within the family's
// tolerance but not bit for bit (its sums run in another order), the
// training step's weight gradient as well; an invalid tuning is refused
// at Compile.
func TestCompileConvolutionTuning(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(3))
	shapes := map[string]ops.ImageDescriptor{"x": {N: 2, C: 8, H: 9, W: 11}, "labels": {N: 2, C: 8, H: 9, W: 11}}
	x := randomData(r, n(shapes["x"]))
	labels := randomData(r, n(shapes["labels"]))
	run := func(tune string) (y, w []float32) {
		tu, err := ops.ParseConvolutionTuning(tune)
		require.NoError(t, err)
		g := graph.New()
		xi := must(g.Input("x"))
		li := must(g.Input("labels"))
		pad := graph.ConvolutionOptions{Padding: padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, false, false)}
		c := must(g.Convolution("c", xi, ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 8, OutputFeatureChannels: 8}, pad))
		loss := must(g.Loss("loss", ops.LossDescriptor{Type: ops.LossMeanSquaredError, Reduction: ops.ReductionSum}, c.Result(), li))
		updates := must(g.Optimize(loss, must(ops.ParseOptimizer("sgd", 0.01, 0, 0))))
		e, err := g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{c.Result()}, Compute: updates,
			Mode: graph.ModeTraining, ConvolutionTuning: tu})
		require.NoError(t, err, tune)
		defer func() { require.NoError(t, e.Close()) }()
		out := must(e.Run(ctx, map[string][]float32{"x": x, "labels": labels}))
		w, err = e.Parameter(ctx, "c.weights")
		require.NoError(t, err)
		return out["c"], w
	}
	y0, w0 := run("")
	y, w := run("winograd=1")
	for name, p := range map[string][2][]float32{"result": {y0, y}, "updated weights": {w0, w}} {
		require.Len(t, p[1], len(p[0]))
		same := true
		for i := range p[0] {
			assert.InDelta(t, p[0][i], p[1][i], 1e-4*(1+math.Abs(float64(p[0][i]))), "%s [%d]", name, i)
			same = same && p[0][i] == p[1][i]
		}
		assert.False(t, same, "%s bit for bit the default's: the tuning did not reach the kernels", name)
	}

	g := graph.New()
	xi := must(g.Input("x"))
	c := must(g.Convolution("c", xi, ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 8, OutputFeatureChannels: 8}, graph.ConvolutionOptions{}))
	_, err := g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{c.Result()},
		ConvolutionTuning: ops.ConvolutionTuning{Winograd: true, NoWinograd: true}})
	require.ErrorIs(t, err, graph.ErrGraph)
	require.ErrorIs(t, err, ops.ErrTuning)
	require.ErrorContains(t, err, "Winograd both forced and refused")
}
