package ops_test

import (
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// GPU time of a 3x3 binary convolution, 256 to 256 channels, pad 1,
// stride 1, float32 images: XNOR and AND, with and without beta scaling,
// the binarizing pass included. Reported as gpu-us and binary GOPS (2 ops
// per binary multiply-add, N*O*H*W*I*9 of them, as FLOPs count a float
// convolution). Issue 19's shape, 32x256x56x56, with VKMPS_BENCH_LARGE=1
// (the default is 2x256x28x28, for lavapipe):
//
//	VKMPS_BENCH_LARGE=1 go test ./ops -run XXX -bench BenchmarkBinaryConvolution -benchtime 5x
func BenchmarkBinaryConvolution(b *testing.B) {
	dev := vktest.Open(b)
	if !dev.Limits().TimestampsSupported {
		b.Skip("no timestamps")
	}
	n, c, h, w := 2, 256, 28, 28
	if os.Getenv("VKMPS_BENCH_LARGE") == "1" {
		n, h, w = 32, 56, 56
	}
	o, k := 256, 3
	r := rand.New(rand.NewSource(1))
	src := newImage(b, dev, padding.Descriptor{N: n, C: c, H: h, W: w}, randomData(r, n*c*h*w))
	dst := newImage(b, dev, padding.Descriptor{N: n, C: o, H: h, W: w}, nil)
	weights := randomData(r, o*c*k*k)
	ops2 := 2 * float64(n) * float64(o) * float64(h*w) * float64(c*k*k)
	for _, typ := range []ops.BinaryConvolutionType{ops.BinaryConvolutionXNOR, ops.BinaryConvolutionAND} {
		for _, flags := range []ops.BinaryConvolutionFlags{ops.BinaryConvolutionFlagsNone, ops.BinaryConvolutionUseBetaScaling} {
			name := fmt.Sprintf("%v/%dx%dx%dx%d-k%d-o%d", typ, n, c, h, w, k, o)
			if flags != 0 {
				name += "-beta"
			}
			b.Run(name, func(b *testing.B) {
				bk, err := ops.NewBinaryConvolution(dev, ops.NewBinaryConvolutionDescriptor(k, k, c, o, typ, flags),
					ops.BinaryConvolutionWeights{Weights: weights})
				require.NoError(b, err)
				defer bk.Close()
				bk.Offset = ops.Offset{X: 1, Y: 1} // pad 1: window centres on the pixels
				for i := 0; i < b.N; i++ {
					d := gpuTime(b, dev, 5, 5, func(cb *vk.CommandBuffer) error { return bk.Encode(cb, src, dst) })
					b.ReportMetric(float64(d.Nanoseconds())/1e3, "gpu-us")
					b.ReportMetric(ops2/d.Seconds()/1e9, "binary-GOPS")
				}
			})
		}
	}
	// The float32 convolution of the same shape and padding (the GEMM's own
	// choice of path), for the ratio in one run.
	b.Run(fmt.Sprintf("float32-convolution/%dx%dx%dx%d-k%d-o%d", n, c, h, w, k, o), func(b *testing.B) {
		d := ops.ConvolutionDescriptor{KernelWidth: k, KernelHeight: k, InputFeatureChannels: c, OutputFeatureChannels: o}
		fk, err := ops.NewConvolution(dev, d)
		require.NoError(b, err)
		defer fk.Close()
		fk.Padding = padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, false, false)
		_, err = fk.DestinationImageDescriptor(src.Descriptor()) // sets Offset from the padding
		require.NoError(b, err)
		wd := d.WeightsDescriptor()
		fw := newImage(b, dev, padding.Descriptor{N: wd.N, C: wd.C, H: wd.H, W: wd.W}, weights)
		for i := 0; i < b.N; i++ {
			d := gpuTime(b, dev, 2, 3, func(cb *vk.CommandBuffer) error { return fk.Encode(cb, src, fw, nil, dst) })
			b.ReportMetric(float64(d.Nanoseconds())/1e3, "gpu-us")
			b.ReportMetric(ops2/d.Seconds()/1e12, "TFLOP/s")
		}
	})
}
