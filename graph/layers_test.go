package graph_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/graph/graphref"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// layerCase is one layer between an input "x" and an MSE-sum loss: the
// graph's training gradients (of x and of every trainable parameter) on
// the GPU must equal the CPU's (graphref), which must equal central finite
// differences of the CPU's loss.
type layerCase struct {
	name  string
	x     ops.ImageDescriptor
	build func(g *graph.Graph, x *graph.Image) (*graph.Image, error)
	mode  graph.Mode
	// extra inputs besides x (an arithmetic's second source), by name.
	extra map[string]ops.ImageDescriptor
	// tol is the GPU-vs-CPU tolerance relative to max(1, |value|);
	// default 1e-4.
	tol float64
	// skip leaves finite-difference probe i of image name out (near a
	// kink, where a central difference straddles two slopes).
	skip func(name string, i int, v []float64) bool
}

var layerCases = []layerCase{
	{name: "relu a=0.1", x: ops.ImageDescriptor{N: 2, C: 3, H: 4, W: 5}, build: neuronLayer(ops.NeuronDescriptor{Type: ops.NeuronReLU, A: 0.1})},
	{name: "tanh", x: ops.ImageDescriptor{N: 1, C: 2, H: 3, W: 7}, build: neuronLayer(ops.NewNeuronDescriptor(ops.NeuronTanH))},
	{name: "gelu", x: ops.ImageDescriptor{N: 1, C: 2, H: 3, W: 3}, build: neuronLayer(ops.NewNeuronDescriptor(ops.NeuronGeLU))},
	{name: "prelu", x: ops.ImageDescriptor{N: 2, C: 3, H: 3, W: 2}, build: neuronLayer(ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: []float32{0.25, -0.5, 0.1}})},
	{name: "softmax", x: ops.ImageDescriptor{N: 2, C: 5, H: 2, W: 3}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.SoftMax("op", x, false))
	}},
	{name: "add", x: ops.ImageDescriptor{N: 2, C: 3, H: 2, W: 3}, extra: map[string]ops.ImageDescriptor{"y": {N: 2, C: 3, H: 2, W: 3}},
		build: arithLayer(ops.NewArithmeticDescriptor(ops.ArithmeticAdd))},
	{name: "add broadcast", x: ops.ImageDescriptor{N: 2, C: 3, H: 2, W: 3}, extra: map[string]ops.ImageDescriptor{"y": {N: 1, C: 3, H: 1, W: 3}},
		build: arithLayer(ops.NewArithmeticDescriptor(ops.ArithmeticAdd))},
	{name: "subtract scaled", x: ops.ImageDescriptor{N: 1, C: 2, H: 3, W: 3}, extra: map[string]ops.ImageDescriptor{"y": {N: 1, C: 1, H: 3, W: 3}},
		build: arithLayer(ops.ArithmeticDescriptor{Op: ops.ArithmeticSubtract, PrimaryScale: 1.5, SecondaryScale: -2, Bias: 0.25,
			Minimum: float32(math.Inf(-1)), Maximum: float32(math.Inf(1))})},
	{name: "multiply clamped", x: ops.ImageDescriptor{N: 2, C: 2, H: 2, W: 2}, extra: map[string]ops.ImageDescriptor{"y": {N: 2, C: 1, H: 2, W: 2}},
		build: arithLayer(ops.ArithmeticDescriptor{Op: ops.ArithmeticMultiply, PrimaryScale: 1, SecondaryScale: 1, Minimum: -0.5, Maximum: 0.7}),
		skip:  func(name string, i int, v []float64) bool { return true }}, // the clamp's edges: FD checked in ops/ref
	{name: "divide", x: ops.ImageDescriptor{N: 1, C: 2, H: 2, W: 3}, extra: map[string]ops.ImageDescriptor{"y": {N: 1, C: 2, H: 1, W: 1}},
		build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
			// y offset away from 0 by an addition first: 3 + y.
			three := must(g.Arithmetic("shift", ops.ArithmeticDescriptor{Op: ops.ArithmeticAdd, PrimaryScale: 1, SecondaryScale: 0, Bias: 3,
				Minimum: float32(math.Inf(-1)), Maximum: float32(math.Inf(1))}, g.Image("y"), g.Image("y")))
			return result(g.Arithmetic("op", ops.NewArithmeticDescriptor(ops.ArithmeticDivide), x, three.Result()))
		}},
	{name: "upsample_nearest 3x2", x: ops.ImageDescriptor{N: 1, C: 2, H: 3, W: 2}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.Upsampling("op", ops.UpsamplingDescriptor{ScaleX: 3, ScaleY: 2}, x))
	}},
	{name: "upsample_bilinear", x: ops.ImageDescriptor{N: 2, C: 1, H: 3, W: 4}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.Upsampling("op", ops.UpsamplingDescriptor{ScaleX: 2, ScaleY: 3, Bilinear: true}, x))
	}},
	{name: "upsample_bilinear align_corners", x: ops.ImageDescriptor{N: 1, C: 2, H: 2, W: 3}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.Upsampling("op", ops.UpsamplingDescriptor{ScaleX: 2, ScaleY: 2, Bilinear: true, AlignCorners: true}, x))
	}},
	{name: "conv 3x3 pad 1", x: ops.ImageDescriptor{N: 2, C: 3, H: 5, W: 6}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.Convolution("op", x, ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 3, OutputFeatureChannels: 4},
			graph.ConvolutionOptions{Padding: padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, false, false)}))
	}},
	{name: "conv stride dilation groups tanh", x: ops.ImageDescriptor{N: 1, C: 4, H: 8, W: 11}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.Convolution("op", x, ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 2, InputFeatureChannels: 4, OutputFeatureChannels: 6,
			Groups: 2, StrideX: 3, StrideY: 1, DilationX: 2, DilationY: 2, Neuron: ops.NewNeuronDescriptor(ops.NeuronTanH)},
			graph.ConvolutionOptions{Padding: padding.Explicit(padding.Pads{Top: 0, Left: 1, Bottom: 1, Right: 1}, false, false)}))
	}},
	{name: "depthwise same", x: ops.ImageDescriptor{N: 2, C: 3, H: 5, W: 5}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.Convolution("op", x, ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 3, OutputFeatureChannels: 3, Groups: 3},
			graph.ConvolutionOptions{Padding: padding.WithMethod(padding.Same), NoBias: true}))
	}},
	{name: "conv_transpose", x: ops.ImageDescriptor{N: 2, C: 4, H: 3, W: 4}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.ConvolutionTranspose("op", x, ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 4, OutputFeatureChannels: 4,
			Groups: 2, StrideX: 2, StrideY: 3}, graph.ConvolutionOptions{Padding: ops.ConvolutionTransposePadding(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, 1, 2)}))
	}},
	{name: "fully_connected relu", x: ops.ImageDescriptor{N: 3, C: 2, H: 3, W: 2}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.FullyConnected("op", x, 12, 5, ops.NeuronDescriptor{Type: ops.NeuronReLU}, graph.ConvolutionOptions{}))
	}, skip: func(string, int, []float64) bool { return false }},
	{name: "batch_norm training", mode: graph.ModeTraining, x: ops.ImageDescriptor{N: 3, C: 3, H: 2, W: 3}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.BatchNormalization("op", x, ops.NewBatchNormalizationDescriptor(3), graph.BatchNormOptions{
			Gamma: &graph.Init{Data: []float32{1.5, -0.5, 0.8}}, Beta: &graph.Init{Data: []float32{0.1, 0.2, -0.3}}}))
	}},
	{name: "batch_norm inference relu", x: ops.ImageDescriptor{N: 2, C: 2, H: 3, W: 2}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		d := ops.NewBatchNormalizationDescriptor(2)
		d.Neuron = ops.NeuronDescriptor{Type: ops.NeuronReLU, A: 0.1}
		return result(g.BatchNormalization("op", x, d, graph.BatchNormOptions{
			RunningMean: &graph.Init{Data: []float32{0.3, -0.2}}, RunningVariance: &graph.Init{Data: []float32{0.5, 2}}}))
	}},
	{name: "dropout training", mode: graph.ModeTraining, x: ops.ImageDescriptor{N: 2, C: 3, H: 5, W: 6}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.Dropout("op", x, ops.DropoutDescriptor{KeepProbability: 0.7, Seed: 42, MaskStride: ops.MaskStride{X: 1, Y: 1, FeatureChannel: 0}}))
	}},
	{name: "dropout inference", x: ops.ImageDescriptor{N: 1, C: 2, H: 3, W: 3}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.Dropout("op", x, ops.DropoutDescriptor{KeepProbability: 0.5, Seed: 1, MaskStride: ops.DefaultMaskStride}))
	}},
	{name: "instance_norm", x: ops.ImageDescriptor{N: 2, C: 3, H: 3, W: 4}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.InstanceNormalization("op", x, ops.NewInstanceNormalizationDescriptor(3),
			&graph.Init{Data: []float32{1.2, -0.7, 0.4}}, &graph.Init{Data: []float32{0.1, 0, -0.2}}))
	}},
	{name: "cross_channel_norm", x: ops.ImageDescriptor{N: 1, C: 5, H: 2, W: 3}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		d := ops.NewCrossChannelNormalizationDescriptor(3)
		d.Alpha, d.Beta, d.Delta = 0.5, 0.75, 2
		return result(g.WindowNormalization("op", x, graph.WindowNormOp{Kind: graph.CrossChannelNorm, CrossChannel: d}))
	}},
	{name: "spatial_norm", x: ops.ImageDescriptor{N: 2, C: 2, H: 4, W: 5}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.WindowNormalization("op", x, graph.WindowNormOp{Kind: graph.SpatialNorm, Spatial: ops.NewSpatialNormalizationDescriptor(3, 3)}))
	}},
	{name: "local_contrast_norm", x: ops.ImageDescriptor{N: 1, C: 2, H: 5, W: 4}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.WindowNormalization("op", x, graph.WindowNormOp{Kind: graph.LocalContrastNorm, LocalContrast: ops.NewLocalContrastNormalizationDescriptor(3, 3)}))
	}, tol: 3e-4},
	{name: "log_softmax", x: ops.ImageDescriptor{N: 1, C: 7, H: 3, W: 2}, build: func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.SoftMax("op", x, true))
	}},
}

func result(n *graph.Node, err error) (*graph.Image, error) {
	if err != nil {
		return nil, err
	}
	return n.Result(), nil
}

func arithLayer(d ops.ArithmeticDescriptor) func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
	return func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
		return result(g.Arithmetic("op", d, x, g.Image("y")))
	}
}

func neuronLayer(d ops.NeuronDescriptor) func(g *graph.Graph, x *graph.Image) (*graph.Image, error) {
	return func(g *graph.Graph, x *graph.Image) (*graph.Image, error) { return result(g.Neuron("op", d, x)) }
}

// TestLayersTrainAgainstReferenceAndFiniteDifferences runs layerCases.
func TestLayersTrainAgainstReferenceAndFiniteDifferences(t *testing.T) {
	dev := vktest.Open(t)
	for _, c := range layerCases {
		t.Run(c.name, func(t *testing.T) { checkLayer(t, dev, c) })
	}
}

func checkLayer(t *testing.T, dev *vk.Device, c layerCase) {
	ctx := context.Background()
	r := rand.New(rand.NewSource(int64(len(c.name))))
	g := graph.New()
	x := must(g.Input("x"))
	shapes := map[string]ops.ImageDescriptor{"x": c.x}
	names := []string{"x"}
	for name, d := range c.extra {
		must(g.Input(name))
		shapes[name] = d
		names = append(names, name)
	}
	sort.Strings(names)
	top := must(c.build(g, x))
	labels := must(g.Input("labels"))
	lossNode := must(g.Loss("loss", ops.LossDescriptor{Type: ops.LossMeanSquaredError, Reduction: ops.ReductionSum}, top, labels))
	loss := lossNode.Result()
	shapes["labels"] = must(g.InferShapes(shapes, top))[top]
	grads := must(g.Training(lossNode))
	feeds := map[string][]float32{}
	for name, d := range shapes {
		feeds[name] = randomData(r, n(d))
	}
	// The images the loss is differentiated by: the inputs (not the
	// labels) and the trainable parameters.
	var wrt []*graph.Image
	for _, name := range names {
		wrt = append(wrt, g.Image(name))
	}
	for _, p := range g.Parameters() {
		if p.Trainable() {
			wrt = append(wrt, p)
		}
	}
	outs := []*graph.Image{loss}
	for _, im := range wrt {
		require.NotNil(t, grads[im], "%s gets a gradient", im.Name())
		outs = append(outs, grads[im])
	}
	e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: outs, Mode: c.mode}))
	gpu := must(e.Run(ctx, feeds))
	require.NoError(t, e.Close())

	f64 := map[string][]float64{}
	for k, v := range feeds {
		f64[k] = to64(v)
	}
	for _, p := range g.Parameters() {
		f64[p.Name()] = to64(must(p.InitialValues()))
	}
	cpu := must(graphref.EvalMode(g, c.mode, shapes, f64, outs...))
	tol := c.tol
	if tol == 0 {
		tol = 1e-4
	}
	for _, o := range outs {
		want, got := cpu[o.Name()], gpu[o.Name()]
		require.Len(t, got, len(want), o.Name())
		for i := range want {
			require.InDelta(t, want[i], float64(got[i]), tol*math.Max(1, math.Abs(want[i])), "%s[%d]: GPU vs CPU", o.Name(), i)
		}
	}
	lossAt := func(name string, v []float64) float64 {
		f := map[string][]float64{}
		for k, w := range f64 {
			f[k] = w
		}
		f[name] = v
		return must(graphref.EvalMode(g, c.mode, shapes, f, loss))[loss.Name()][0]
	}
	const h = 1e-6
	for _, im := range wrt {
		base := f64[im.Name()]
		for i := range base {
			if c.skip != nil && c.skip(im.Name(), i, base) {
				continue
			}
			p := append([]float64(nil), base...)
			m := append([]float64(nil), base...)
			p[i] += h
			m[i] -= h
			fd := (lossAt(im.Name(), p) - lossAt(im.Name(), m)) / (2 * h)
			got := cpu[grads[im].Name()][i]
			require.InDelta(t, fd, got, 1e-5*math.Max(1, math.Abs(fd)), fmt.Sprintf("d loss / d %s[%d]", im.Name(), i))
		}
	}
}
