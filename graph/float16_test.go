package graph_test

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// A float16 graph runs end to end (issue 20): a small residual network
// with convolution, batch normalization, a residual addition (whose
// gradient is summed), pooling, a fully connected layer, a loss and SGD
// updates trains with every image in half precision and float32
// parameters, and its losses follow the float32 graph's.
func TestFloat16GraphTrains(t *testing.T) {
	dev := vktest.Open(t)
	if !dev.Limits().Float16Storage {
		t.Skip("no 16-bit storage")
	}
	ctx := context.Background()
	build := func() (*graph.Graph, *graph.Node, []*graph.Image) {
		g := graph.New()
		x := must(g.Input("x"))
		labels := must(g.Input("labels"))
		pad1 := graph.ConvolutionOptions{Padding: padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, false, false), NoBias: true}
		c1 := must(g.Convolution("c1", x, ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 3, OutputFeatureChannels: 8}, pad1))
		bnd := ops.NewBatchNormalizationDescriptor(8)
		bnd.Neuron = ops.NeuronDescriptor{Type: ops.NeuronReLU}
		b1 := must(g.BatchNormalization("b1", c1.Result(), bnd, graph.BatchNormOptions{}))
		c2 := must(g.Convolution("c2", b1.Result(), ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 8, OutputFeatureChannels: 8}, pad1))
		add := must(g.Add("add", c2.Result(), b1.Result()))
		p := must(g.Pooling("p", ops.KindAverage, geom(2, 2), add.Result(), graph.PoolingOptions{Padding: padding.Explicit(padding.Pads{}, false, false)}))
		f := must(g.FullyConnected("f", p.Result(), 8*4*4, 5, ops.NeuronDescriptor{}, graph.ConvolutionOptions{}))
		loss := must(g.Loss("loss", ops.LossDescriptor{Type: ops.LossSoftmaxCrossEntropy, Reduction: ops.ReductionMean}, f.Result(), labels))
		updates := must(g.Optimize(loss, must(ops.ParseOptimizer("momentum", 0.05, 0.9, 0))))
		return g, loss, updates
	}
	r := rand.New(rand.NewSource(11))
	shapes := map[string]ops.ImageDescriptor{"x": {N: 4, C: 3, H: 8, W: 8}, "labels": {N: 4, C: 5, H: 1, W: 1}}
	x := randomData(r, n(shapes["x"]))
	labels := make([]float32, 20)
	for i := 0; i < 4; i++ {
		labels[5*i+r.Intn(5)] = 1
	}
	losses := map[ops.Format][]float64{}
	for _, f := range []ops.Format{ops.Float32, ops.Float16} {
		g, loss, updates := build()
		e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{loss.Result()}, Compute: updates, Mode: graph.ModeTraining, Format: f}))
		for step := 0; step < 5; step++ {
			out := must(e.Run(ctx, map[string][]float32{"x": x, "labels": labels}))
			losses[f] = append(losses[f], float64(out["loss"][0]))
		}
		require.NoError(t, e.Close())
	}
	for i := range losses[ops.Float32] {
		require.InDelta(t, losses[ops.Float32][i], losses[ops.Float16][i], 0.02*math.Max(1, losses[ops.Float32][i]), "step %d", i+1)
	}
	require.Less(t, losses[ops.Float16][4], losses[ops.Float16][0], "float16 training lowers the loss")
}
