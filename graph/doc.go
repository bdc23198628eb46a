// Package graph is a graph executor for vkmps's kernels in the manner of
// MPSNNGraph: image nodes are handles, filter nodes consume images and
// produce result images, a training graph is derived from an inference
// graph that ends in a loss, and optimizers update the parameters the
// graph owns, one queue submission per training step.
//
// # Building
//
//	g := graph.New()
//	x, _ := g.Input("x")
//	labels, _ := g.Input("labels")
//	p1, _ := g.Pooling("p1", ops.KindMax, ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2}, x, graph.PoolingOptions{})
//	p2, _ := g.Pooling("p2", ops.KindAverage, ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2}, x, graph.PoolingOptions{})
//	cat, _ := g.Concat("cat", p1.Result(), p2.Result())
//	loss, _ := g.Loss("loss", ops.LossDescriptor{Type: ops.LossMeanSquaredError, Reduction: ops.ReductionMean}, cat.Result(), labels)
//	grads, _ := g.Training(loss)       // grads[x] is the image "grad(x)"
//
// Pooling nodes default to MPS's node defaults: padding.WithMethod(Same)
// and EdgeClamp; convolution-family nodes to PyTorch's explicit zero pads.
// Besides pooling, concatenation, slices and arithmetic (add, subtract,
// multiply, divide with scales, bias, clamp and broadcasting), a graph
// holds the training family: Neuron (every MPS neuron type; PReLU with
// trainable slopes), SoftMax, Convolution, ConvolutionTranspose,
// FullyConnected, BatchNormalization, InstanceNormalization,
// CrossChannelNormalization, Dropout, Upsampling, BinaryConvolution
// (inference only) and Loss (all ten MPS loss types, four reductions).
//
// # Parameters and training
//
// Layers own their parameters: images of the graph ("c1.weights",
// "c1.bias", "bn.gamma", "bn.running_mean", "prelu.a", ...) in PyTorch's
// layouts, made from given values or PyTorch's default initialization
// (Init), trainable unless frozen (Image.Freeze). Training derives the
// gradient of every input and trainable parameter ("grad(c1.weights)");
// Optimize adds an update node per trainable parameter (an ops.Optimizer:
// SGD, momentum, Nesterov, RMSProp, Adam) so that one compiled run is one
// whole training step — forward, gradients, updates — in one command
// buffer, one queue submission, replayed every step. A graph compiled with
// ModeTraining normalizes batches with their statistics (and updates the
// running ones) and drops out; ModeInference uses the running statistics
// and passes dropout through at no cost. Executor.Parameter,
// SetParameter, SaveParameters/LoadParameters (one .npy per parameter) and
// SaveCheckpoint/LoadCheckpoint (safetensors: parameters, optimizer state,
// time step) move parameters in and out; DataSet and Batches iterate
// mini-batches with a seeded shuffle; CompileOptions.Pipelined lets Start
// feed and submit step k+1 while step k runs, and Format Float16 runs every
// image in half precision (parameters stay float32).
//
// # Gradients
//
// Node.GradientFilter(dy) returns a forward node's gradient node, wired to
// the forward node's source image and state (MPSNNFilterNode
// gradientFilterWithSource:); Node.GradientFilters returns one per source:
// a concatenation gives a channel slice per source, an addition passes dy
// to each side (free: the gradient shares dy's memory), a loss gives the
// gradient of its prediction. Graph.Training walks back from a loss node,
// makes every gradient node, and sums gradients with addition nodes
// wherever an image feeds several filters. The gradient of image X is named
// "grad(X)"; several contributions are named "grad(X)<-NODE" and summed.
//
// # Running
//
// Graph.Compile takes a device, the input shapes and the outputs wanted
// (default: the sinks; naming an intermediate keeps it). It infers every
// shape through each node's padding policy, checks the graph (errors name
// the node: unknown image, missing input shape, shape mismatch), and plans
// memory: inputs and outputs get images of their own, every intermediate
// lives in one arena buffer, placed first-fit when its node runs and freed
// after the last node that reads it, so images whose lifetimes do not
// overlap share memory (MemoryPlan gives the peak); the convolution-family
// kernels share two ops.ConvolutionScratch, the weight gradients' and the
// others' (Executor.ScratchSize; unless CompileOptions.ScratchPerKernel),
// and each weight gradient is recorded a node later than it was made, so
// that its work runs beside the next node's. Executor.Run records the
// whole graph into one command buffer on its first call, with only the
// barriers the hazards need, and replays it afterwards: exactly one queue
// submission per run, also on discrete GPUs, where inputs and outputs move
// through host-visible staging copied inside that command buffer. Inputs
// named in CompileOptions.Resident instead stay on the device from run to
// run (Executor.WriteInput sets them): a batch or data set that does not
// change costs no transfer per run.
//
// Package graphref runs the same graph on the CPU in float64 with package
// ops/ref, for checking results and taking finite differences; package
// graph does not depend on it.
//
// # Ops
//
// Each op is a type of this package (PoolingOp, ConcatOp, LossOp, ...;
// Node.Operation returns it) in a file of its own that holds its shape
// inference, its gradient nodes, its kernels and its JSON form, which it
// registers in the JSON op table (OpNames lists them).
//
// # JSON
//
// Load reads a graph from JSON (File documents every field):
//
//	{
//	  "inputs":  {"x": [1, 3, 32, 32], "labels": [1, 6, 8, 8]},
//	  "nodes": [
//	    {"name": "p1", "op": "max", "sources": ["x"], "kernel": [3, 3], "stride": [2, 2], "padding": "same"},
//	    {"name": "p2", "op": "avg", "sources": ["x"], "kernel": 2, "stride": 2,
//	     "padding": {"pad": [0, 0, 1, 1], "ceil_mode": true, "count_include_pad": false}},
//	    {"name": "cat", "op": "concat", "sources": ["p1", "p2"]},
//	    {"name": "loss", "op": "loss", "loss": "mse", "reduction": "mean", "sources": ["cat", "labels"]}
//	  ],
//	  "outputs": ["loss"],
//	  "loss": "loss"
//	}
//
// Ops (OpNames lists them; the fields of each are those of
// ../shared/TRAINING.md): "max", "avg", "l2", "dilated-max" (kernel,
// stride, dilation as [H, W] or one number; padding; edge "zero" or
// "clamp", default clamp; zero_pad [top, left, bottom, right] for avg),
// "concat", "slice" (offset, count), "add", "subtract", "multiply",
// "divide" (primary_scale, secondary_scale, bias, minimum, maximum),
// "neuron" (type, a, b, c; prelu's a a list), "softmax", "log_softmax",
// "conv", "conv_transpose" (weights, bias, groups, neuron, stride,
// dilation, padding, output_padding), "fully_connected" (weights, bias,
// neuron), "batch_norm" (gamma, beta, running_mean, running_var, epsilon,
// momentum, neuron), "instance_norm" (gamma, beta, epsilon),
// "cross_channel_norm" (size, alpha, beta, delta), "dropout"
// (keep_probability, seed, mask_stride), "upsample_nearest",
// "upsample_bilinear" (scale, align_corners), "binary_conv" (type,
// weights, bias, scale, beta_scaling, input_bias, input_scale) and "loss"
// (loss, reduction, weight, label_smoothing, delta, epsilon). Parameter
// files are .npy paths relative to the graph file (LoadFile); without them
// layers need their sizes (conv: in_channels, out_channels, kernel;
// fully_connected: in_features, out_features; batch_norm: channels) and
// start from PyTorch's default initialization. "padding" is a
// name ("valid", "same", "full", "tf-same", "tf-valid", "tf-avg",
// "tf-avg-valid") or an object: {"method": N} (MPSNNPaddingMethod bits),
// {"pad": [t, l, b, r], "ceil_mode": b, "count_include_pad": b} (PyTorch),
// or {"caffe": [ph, pw]}. Input shapes may be null and given at compile
// time. "loss" names the node `vkmps graph train` derives gradients from.
// Nodes may appear in any order; unknown fields, ops and sources, duplicate
// names and cycles are errors naming the node.
package graph
