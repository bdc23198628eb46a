package graph_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// trainingCases is testdata/torch/training_cases.json (gen_training_cases.py).
type trainingCases struct {
	Init map[string]struct {
		Shape []int
		Data  []float32
	}
	X, Labels [][]float32
	Cases     []struct {
		Optimizer string
		Losses    []float64
		Params    []map[string][]float32
	}
}

// A small LeNet-like network trained in vkmps matches PyTorch step by step
// for each optimizer: the same initial weights and batches give the same
// losses and parameters after every step (issue 17).
func TestTrainingMatchesPyTorchStepByStep(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	b, err := os.ReadFile("testdata/torch/training_cases.json")
	require.NoError(t, err)
	var tc trainingCases
	require.NoError(t, json.Unmarshal(b, &tc))
	optimizers := map[string]ops.OptimizerDescriptor{
		"sgd":              must(ops.ParseOptimizer("sgd", 0.1, 0, 0)),
		"momentum":         must(ops.ParseOptimizer("momentum", 0.05, 0.9, 0)),
		"nesterov":         must(ops.ParseOptimizer("nesterov", 0.05, 0.9, 0)),
		"rmsprop":          must(ops.ParseOptimizer("rmsprop", 0.01, 0, 0)),
		"adam":             must(ops.ParseOptimizer("adam", 0.01, 0, 0)),
		"sgd-weight-decay": must(ops.ParseOptimizer("sgd", 0.1, 0.5, 0.01)),
	}
	for _, c := range tc.Cases {
		t.Run(c.Optimizer, func(t *testing.T) {
			g := graph.New()
			x := must(g.Input("x"))
			labels := must(g.Input("labels"))
			init := func(name string) *graph.Init { return &graph.Init{Data: tc.Init[name].Data} }
			c1 := must(g.Convolution("c1", x, ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 2, OutputFeatureChannels: 4,
				Neuron: ops.NeuronDescriptor{Type: ops.NeuronReLU}}, graph.ConvolutionOptions{Padding: padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, false, false),
				Weights: init("c1.weights"), Bias: init("c1.bias")}))
			p1 := must(g.Pooling("p1", ops.KindMax, geom(2, 2), c1.Result(), graph.PoolingOptions{Padding: padding.Explicit(padding.Pads{}, false, false)}))
			c2 := must(g.Convolution("c2", p1.Result(), ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 4, OutputFeatureChannels: 6,
				Neuron: ops.NewNeuronDescriptor(ops.NeuronTanH)}, graph.ConvolutionOptions{Weights: init("c2.weights"), Bias: init("c2.bias")}))
			f1 := must(g.FullyConnected("f1", c2.Result(), 24, 5, ops.NeuronDescriptor{}, graph.ConvolutionOptions{Weights: init("f1.weights"), Bias: init("f1.bias")}))
			loss := must(g.Loss("loss", ops.LossDescriptor{Type: ops.LossSoftmaxCrossEntropy, Reduction: ops.ReductionMean}, f1.Result(), labels))
			updates := must(g.Optimize(loss, optimizers[c.Optimizer]))
			shapes := map[string]ops.ImageDescriptor{"x": {N: 6, C: 2, H: 8, W: 8}, "labels": {N: 6, C: 5, H: 1, W: 1}}
			e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{loss.Result()}, Compute: updates, Mode: graph.ModeTraining}))
			defer e.Close()
			for s := range c.Losses {
				out := must(e.Run(ctx, map[string][]float32{"x": tc.X[s], "labels": tc.Labels[s]}))
				got := float64(out["loss"][0])
				require.InDelta(t, c.Losses[s], got, 2e-5*math.Max(1, math.Abs(c.Losses[s])), "step %d loss", s+1)
				for name, want := range c.Params[s] {
					v := must(e.Parameter(ctx, name))
					require.Len(t, v, len(want), name)
					for i := range want {
						require.InDelta(t, float64(want[i]), float64(v[i]), 2e-5*math.Max(1, math.Abs(float64(want[i]))), "step %d %s[%d]", s+1, name, i)
					}
				}
			}
		})
	}
}
