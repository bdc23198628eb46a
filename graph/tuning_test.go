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

// The convolution-family kernels of a graph share two scratches by
// default (the weight gradients' and the others'): a training step with
// Winograd convolutions and split-K weight gradients, pipelined over
// three runs, gives bit for bit the results of a scratch per kernel
// (ScratchPerKernel), and the shared scratches are used (the kernels'
// own stay empty: ops's TestConvolutionScratchShared).
// The memory saved shows at scale only (the device allocates blocks of
// 128 MiB): vkmps train synthetic reports it.
func TestCompileSharedScratch(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(8))
	shapes := map[string]ops.ImageDescriptor{"x": {N: 4, C: 8, H: 20, W: 20}, "labels": {N: 4, C: 10, H: 1, W: 1}}
	x := randomData(r, n(shapes["x"]))
	labels := make([]float32, 40)
	for i := 0; i < 4; i++ {
		labels[10*i+r.Intn(10)] = 1
	}
	type result struct {
		losses  []float32
		scratch uint64
	}
	train := func(perKernel bool) result {
		g := graph.New()
		xi := must(g.Input("x"))
		li := must(g.Input("labels"))
		pad := graph.ConvolutionOptions{Padding: padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, false, false)}
		d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 8, OutputFeatureChannels: 8,
			Neuron: ops.NewNeuronDescriptor(ops.NeuronReLU)}
		// c2 and c3 have more channels than c1: the first recording
		// grows the scratch the forwards share after c1.
		wide, back := d, d
		wide.OutputFeatureChannels, back.InputFeatureChannels = 16, 16
		c1 := must(g.Convolution("c1", xi, d, pad))
		c2 := must(g.Convolution("c2", c1.Result(), wide, pad))
		c3 := must(g.Convolution("c3", c2.Result(), back, pad))
		f := must(g.FullyConnected("f", c3.Result(), 8*20*20, 10, ops.NeuronDescriptor{}, graph.ConvolutionOptions{}))
		loss := must(g.Loss("loss", ops.LossDescriptor{Type: ops.LossSoftmaxCrossEntropy, Reduction: ops.ReductionMean}, f.Result(), li))
		// Adam: its time step advances once per executed recording, so a
		// discarded first recording (the scratch grew) must not count.
		updates := must(g.Optimize(loss, must(ops.ParseOptimizer("adam", 0.001, 0, 0))))
		tu := ops.ConvolutionTuning{Winograd: true, Splits: 3}
		e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{loss.Result()}, Compute: updates,
			Mode: graph.ModeTraining, Pipelined: true, ConvolutionTuning: tu, ScratchPerKernel: perKernel}))
		defer func() { require.NoError(t, e.Close()) }()
		assert.Zero(t, e.ScratchSize())
		var res result
		var pending []*graph.Pending
		for i := 0; i < 3; i++ {
			p, err := e.Start(ctx, map[string][]float32{"x": x, "labels": labels})
			require.NoError(t, err)
			pending = append(pending, p)
			if len(pending) == 2 {
				out, err := pending[0].Wait(ctx)
				require.NoError(t, err)
				res.losses = append(res.losses, out["loss"]...)
				pending = pending[1:]
			}
		}
		out, err := pending[0].Wait(ctx)
		require.NoError(t, err)
		res.losses = append(res.losses, out["loss"]...)
		res.scratch = e.ScratchSize()
		if !perKernel {
			// The first recording grew it: the step was recorded again.
			assert.Positive(t, graph.ScratchGrown(e))
			// The weight gradients (split K) use theirs, the others theirs.
			w, o := graph.ScratchSizes(e)
			assert.Positive(t, w, "the weight gradients' scratch")
			assert.Positive(t, o, "the other kernels' scratch")
		}
		return res
	}
	shared, own := train(false), train(true)
	require.Len(t, shared.losses, 3)
	assert.Equal(t, own.losses, shared.losses, "shared scratch against a scratch per kernel")
	assert.Less(t, shared.losses[2], shared.losses[0], "it trains")
	assert.Positive(t, shared.scratch)
	assert.Zero(t, own.scratch)
}
