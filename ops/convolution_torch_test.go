package ops_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// The GPU kernels against PyTorch (ops/testdata/torch/conv_cases.json):
// F.conv2d after F.pad (asymmetric pads), F.conv_transpose2d (padding,
// output_padding) and F.linear, forward and the autograd gradients, within
// 2e-4 * (1 + |torch|) (two float32 sums of at most 64 products of
// magnitude ~1 in different orders). The reference is checked against all
// of the file in package ref; the GPU runs the first cases of each op
// (every geometry is a pipeline lavapipe compiles) and is checked against
// the reference over larger tables elsewhere.
func TestConvolutionMatchesPyTorch(t *testing.T) {
	cases, err := ref.LoadConvTorchCases("testdata/torch/conv_cases.json")
	require.NoError(t, err)
	dev := vktest.Open(t)
	ctx := context.Background()
	seen := map[string]int{}
	for _, c := range cases {
		if seen[c.Op]++; seen[c.Op] > 5 {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			is, os := c.InputShape, c.OutputShape
			d := ops.ConvolutionDescriptor{KernelWidth: c.Kernel[1], KernelHeight: c.Kernel[0], InputFeatureChannels: is[1],
				OutputFeatureChannels: os[1], Groups: c.Groups, StrideX: c.Stride[1], StrideY: c.Stride[0],
				DilationX: c.Dilation[1], DilationY: c.Dilation[0]}
			ws := padding.Descriptor{N: c.WeightShape[0], C: c.WeightShape[1], H: 1, W: 1}
			if len(c.WeightShape) == 4 {
				ws.H, ws.W = c.WeightShape[2], c.WeightShape[3]
			}
			src := newImage(t, dev, padding.Descriptor{N: is[0], C: is[1], H: is[2], W: is[3]}, c.Input)
			w := newImage(t, dev, ws, c.Weight)
			var b, db *ops.Image
			if c.Bias != nil {
				b = newImage(t, dev, padding.Descriptor{N: 1, C: os[1], H: 1, W: 1}, c.Bias)
				db = newImage(t, dev, padding.Descriptor{N: 1, C: os[1], H: 1, W: 1}, nil)
			}
			dy := newImage(t, dev, padding.Descriptor{N: os[0], C: os[1], H: os[2], W: os[3]}, c.GradOutput)
			dx := newImage(t, dev, padding.Descriptor{N: is[0], C: is[1], H: is[2], W: is[3]}, nil)
			dW := newImage(t, dev, ws, nil)
			pads := padding.Pads{Top: c.Padding[0], Left: c.Padding[1], Bottom: c.Padding[2], Right: c.Padding[3]}
			var dst *ops.Image
			require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
				var err error
				switch c.Op {
				case "conv":
					k := must(ops.NewConvolution(dev, d))
					defer k.Close()
					g := must(ops.NewConvolutionGradient(dev, d))
					defer g.Close()
					k.Padding = padding.Explicit(pads, false, false)
					if dst, err = k.EncodeNew(cb, src, w, b); err != nil {
						return err
					}
					g.SetForwardOffset(k.Offset.X, k.Offset.Y)
					if err := g.EncodeData(cb, dy, w, dx); err != nil {
						return err
					}
					return g.EncodeWeights(cb, dy, src, dW, db)
				case "transpose":
					k := must(ops.NewConvolutionTranspose(dev, d))
					defer k.Close()
					g := must(ops.NewConvolutionTransposeGradient(dev, d))
					defer g.Close()
					k.Padding = ops.ConvolutionTransposePadding(pads, c.OutputPadding[1], c.OutputPadding[0])
					if dst, err = k.EncodeNew(cb, src, w, b); err != nil {
						return err
					}
					g.SetForwardOffset(k.Offset.X, k.Offset.Y)
					if err := g.EncodeData(cb, dy, w, dx); err != nil {
						return err
					}
					return g.EncodeWeights(cb, dy, src, dW, db)
				default:
					d.KernelWidth, d.KernelHeight = is[3], is[2]
					k := must(ops.NewFullyConnected(dev, d))
					defer k.Close()
					g := must(ops.NewFullyConnectedGradient(dev, d))
					defer g.Close()
					if dst, err = k.EncodeNew(cb, src, w, b); err != nil {
						return err
					}
					if err := g.EncodeData(cb, dy, w, dx); err != nil {
						return err
					}
					return g.EncodeWeights(cb, dy, src, dW, db)
				}
			}), c.Name)
			defer dst.Close()
			require.Equal(t, [4]int{os[0], os[1], os[2], os[3]}, [4]int{dst.N(), dst.C(), dst.H(), dst.W()})
			check := func(what string, im *ops.Image, want []float32) {
				got, err := im.Read(ctx)
				require.NoError(t, err)
				for i, v := range want {
					require.InDelta(t, v, got[i], 2e-4*(1+math.Abs(float64(v))), "%s %s[%d]", c.Name, what, i)
				}
			}
			check("output", dst, c.Output)
			check("grad_input", dx, c.GradInput)
			check("grad_weight", dW, c.GradWeight)
			if db != nil {
				check("grad_bias", db, c.GradBias)
			}
		})
	}
}
