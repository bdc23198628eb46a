package graph_test

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/graph/graphref"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// A binary convolution node runs on the GPU as on the CPU, for each type
// with and without beta scaling and with pads; training through it is
// an error (inference only, as in MPS).
func TestBinaryConvolutionNode(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(9))
	xd := ops.ImageDescriptor{N: 2, C: 35, H: 6, W: 7}
	for _, typ := range []ops.BinaryConvolutionType{ops.BinaryConvolutionBinaryWeights, ops.BinaryConvolutionXNOR, ops.BinaryConvolutionAND} {
		for _, beta := range []bool{false, true} {
			g := graph.New()
			x := must(g.Input("x"))
			var flags ops.BinaryConvolutionFlags
			if beta {
				flags = ops.BinaryConvolutionUseBetaScaling
			}
			d := ops.NewBinaryConvolutionDescriptor(3, 3, xd.C, 5, typ, flags)
			w := ops.BinaryConvolutionWeights{Weights: randomData(r, 5*xd.C*9), OutputScale: randomData(r, 5), OutputBias: randomData(r, 5),
				InputBias: randomData(r, xd.C)}
			bc := must(g.BinaryConvolution("op", x, d, w, padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, false, false)))
			shapes := map[string]ops.ImageDescriptor{"x": xd}
			xv := randomData(r, n(xd))
			e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes}))
			gpu := must(e.Run(ctx, map[string][]float32{"x": xv}))["op"]
			require.NoError(t, e.Close())
			cpu := must(graphref.Eval(g, shapes, map[string][]float64{"x": to64(xv)}))["op"]
			for i := range cpu {
				require.InDelta(t, cpu[i], float64(gpu[i]), 1e-4*math.Max(1, math.Abs(cpu[i])), "%v beta %v [%d]", typ, beta, i)
			}
			labels := must(g.Input("labels"))
			loss := must(g.Loss("loss", ops.LossDescriptor{Type: ops.LossMeanSquaredError, Reduction: ops.ReductionSum}, bc.Result(), labels))
			_, err := g.Training(loss)
			require.ErrorIs(t, err, errors.ErrUnsupported)
		}
	}
}
