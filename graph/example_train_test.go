package graph_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// A small network trained with momentum SGD: every run of the compiled
// executor is one whole training step (forward, gradients, every update)
// in one queue submission. The README shows this example.
func Example_training() {
	ctx := context.Background()
	dev, err := vk.Open(vk.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()

	g := graph.New()
	x, _ := g.Input("x")           // 64 x 1 x 28 x 28 images
	labels, _ := g.Input("labels") // 64 x 10 x 1 x 1 one-hot classes
	relu := ops.NewNeuronDescriptor(ops.NeuronReLU)
	c1, _ := g.Convolution("c1", x, ops.ConvolutionDescriptor{KernelWidth: 5, KernelHeight: 5,
		InputFeatureChannels: 1, OutputFeatureChannels: 6, Neuron: relu},
		graph.ConvolutionOptions{Padding: padding.Explicit(padding.Pads{Top: 2, Left: 2, Bottom: 2, Right: 2}, false, false)})
	p1, _ := g.Pooling("p1", ops.KindMax, ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2}, c1.Result(),
		graph.PoolingOptions{Padding: padding.Explicit(padding.Pads{}, false, false)})
	fc, _ := g.FullyConnected("fc", p1.Result(), 6*14*14, 10, ops.NeuronDescriptor{}, graph.ConvolutionOptions{})
	loss, err := g.Loss("loss", ops.LossDescriptor{Type: ops.LossSoftmaxCrossEntropy, Reduction: ops.ReductionMean},
		fc.Result(), labels)
	if err != nil {
		log.Fatal(err)
	}
	// PyTorch's default initialization, reproducible; MPS's SGD defaults.
	g.SeedParameters(1)
	sgd := ops.NewOptimizerDescriptor(ops.OptimizerStochasticGradientDescent, 0.01)
	sgd.MomentumScale = 0.9
	updates, err := g.Optimize(loss, sgd)
	if err != nil {
		log.Fatal(err)
	}
	ex, err := g.Compile(dev, graph.CompileOptions{
		Inputs:  map[string]ops.ImageDescriptor{"x": {N: 64, C: 1, H: 28, W: 28}, "labels": {N: 64, C: 10, H: 1, W: 1}},
		Outputs: []*graph.Image{loss.Result()}, Compute: updates, Mode: graph.ModeTraining})
	if err != nil {
		log.Fatal(err)
	}
	defer ex.Close()
	images, onehot := make([]float32, 64*28*28), make([]float32, 64*10) // your batches
	for step := 0; step < 100; step++ {
		out, err := ex.Run(ctx, map[string][]float32{"x": images, "labels": onehot})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(step, out["loss"][0])
	}
	if err := ex.SaveCheckpoint(ctx, "net.safetensors"); err != nil { // parameters and optimizer state
		log.Fatal(err)
	}
}
