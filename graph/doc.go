// Package graph is a small graph executor for vkmps's kernels in the manner
// of MPSNNGraph: image nodes are handles, filter nodes consume images and
// produce one result image, and a training graph is derived from an
// inference graph that ends in a loss.
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
// and EdgeClamp. Concat joins along the feature channels; Add adds two
// images of one shape; Slice takes a channel range; Loss is mean squared
// error or softmax cross-entropy over channels with reduction none, sum or
// mean (PyTorch's conventions: the mean is over values for MSE, over pixels
// for cross-entropy).
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
// overlap share memory (MemoryPlan gives the peak). Executor.Run records the
// whole graph into one command buffer on its first call, with only the
// barriers the hazards need, and replays it afterwards: exactly one queue
// submission per run, also on discrete GPUs, where inputs and outputs move
// through host-visible staging copied inside that command buffer.
//
// EvalCPU runs the same graph on the CPU in float64 with package ops/ref,
// for checking results and taking finite differences.
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
// Ops: "max", "avg", "l2", "dilated-max" (fields kernel, stride, dilation
// as [H, W] or one number; padding; edge "zero" or "clamp", default clamp;
// zero_pad [top, left, bottom, right] for avg), "concat", "add", "slice"
// (offset, count) and "loss" (loss "mse" or "softmax-cross-entropy",
// reduction "none", "sum" or "mean" (default), weight). "padding" is a
// name ("valid", "same", "full", "tf-same", "tf-valid", "tf-avg",
// "tf-avg-valid") or an object: {"method": N} (MPSNNPaddingMethod bits),
// {"pad": [t, l, b, r], "ceil_mode": b, "count_include_pad": b} (PyTorch),
// or {"caffe": [ph, pw]}. Input shapes may be null and given at compile
// time. "loss" names the node `vkmps graph train` derives gradients from.
// Nodes may appear in any order; unknown fields, ops and sources, duplicate
// names and cycles are errors naming the node.
package graph
