package ops_test

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Instance normalization on the GPU against ops/ref, with the tolerances
// of batch normalization (batch_normalization_test.go): y and dx 1e-4
// relative (plus ulp16 for float16 results), dgamma and dbeta 1e-5 of the
// sum of their terms' magnitudes.

type inCase struct {
	n, c, h, w   int
	format       ops.Format
	scale, shift float32
	// chunk > 0: planes of more than chunk bytes of input take the
	// chunked passes (segments of about chunk bytes).
	chunk int
}

func inRun(t *testing.T, dev *vk.Device, r *rand.Rand, c inCase) {
	t.Helper()
	d := padding.Descriptor{N: c.n, C: c.c, H: c.h, W: c.w}
	cnt := c.n * c.c * c.h * c.w
	xv, dyv := randomData(r, cnt), randomData(r, cnt)
	for i := range xv {
		xv[i] = xv[i]*c.scale + c.shift
	}
	if c.format == ops.Float16 {
		xv, dyv = toHalf(xv), toHalf(dyv)
	}
	gv, bv := randomData(r, c.c), randomData(r, c.c)
	gamma, beta := bnParam(t, dev, gv), bnParam(t, dev, bv)
	dgamma, dbeta := bnParam(t, dev, make([]float32, c.c)), bnParam(t, dev, make([]float32, c.c))
	x, dy := bnImage(t, dev, c.format, d, xv), bnImage(t, dev, c.format, d, dyv)
	y, dx := bnImage(t, dev, c.format, d, nil), bnImage(t, dev, c.format, d, nil)
	in := must(ops.NewInstanceNormalization(dev, ops.NewInstanceNormalizationDescriptor(c.c), gamma, beta))
	defer in.Close()
	g := must(ops.NewInstanceNormalizationGradient(in))
	defer g.Close()
	ops.SetINChunkBytes(in, c.chunk)
	ops.SetINChunkBytes(g, c.chunk)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if err := in.Encode(cb, x, y); err != nil {
			return err
		}
		return g.Encode(cb, dy, x, dx, dgamma, dbeta)
	}))

	xt := must(ref.TensorOf(c.n, c.c, c.h, c.w, bnF64(xv)))
	dyt := must(ref.TensorOf(c.n, c.c, c.h, c.w, bnF64(dyv)))
	rin := ref.InstanceNorm{Epsilon: 1e-5}
	wy := ref.NewTensor[float64](c.n, c.c, c.h, c.w)
	require.NoError(t, rin.Forward(xt, bnF64(gv), bnF64(bv), &wy))
	wdx := ref.NewTensor[float64](c.n, c.c, c.h, c.w)
	wdg, wdb := make([]float64, c.c), make([]float64, c.c)
	require.NoError(t, rin.Gradient(xt, dyt, bnF64(gv), &wdx, wdg, wdb))
	mean, variance := ref.InstanceNormStatistics(xt)
	l1g, l1b := make([]float64, c.c), make([]float64, c.c)
	plane := c.h * c.w
	for i := range xt.Data {
		pl := i / plane
		ch := pl % c.c
		xhat := (xt.Data[i] - mean[pl]) / math.Sqrt(variance[pl]+1e-5)
		l1b[ch] += math.Abs(dyt.Data[i])
		l1g[ch] += math.Abs(dyt.Data[i] * xhat)
	}
	l1 := func(v []float64) func(int) float64 { return func(i int) float64 { return 1e-5 * math.Max(1, v[i]) } }
	require.NoError(t, bnCompare("y", bnRead(t, y), wy.Data, bnValueTol(c.format, wy.Data)), "%+v", c)
	require.NoError(t, bnCompare("dx", bnRead(t, dx), wdx.Data, bnValueTol(c.format, wdx.Data)), "%+v", c)
	require.NoError(t, bnCompare("dgamma", bnRead(t, dgamma), wdg, l1(l1g)), "%+v", c)
	require.NoError(t, bnCompare("dbeta", bnRead(t, dbeta), wdb, l1(l1b)), "%+v", c)
}

// TestInstanceNormalizationMatchesReference runs each case with one
// workgroup per plane and with the chunked passes (64-byte segments: odd
// planes load values one by one, planes of a multiple of 4 by quads).
func TestInstanceNormalizationMatchesReference(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(11))
	half := dev.Limits().Float16Storage
	for _, chunk := range []int{0, 64} {
		for _, c := range []inCase{
			{n: 1, c: 1, h: 1, w: 3},
			{n: 2, c: 3, h: 5, w: 7},
			{n: 5, c: 16, h: 4, w: 4},
			{n: 3, c: 5, h: 1, w: 1},
			{n: 1, c: 7, h: 23, w: 31},
			{n: 4, c: 9, h: 8, w: 12, scale: 0.5, shift: 300},
		} {
			if c.scale == 0 {
				c.scale = 1
			}
			c.chunk = chunk
			inRun(t, dev, r, c)
			if half && c.shift == 0 {
				c.format = ops.Float16
				inRun(t, dev, r, c)
			}
		}
	}
}

// TestInstanceNormalizationLargeTensorsAreSplit: with a 4 KiB storage
// range, groups of whole planes.
func TestInstanceNormalizationLargeTensorsAreSplit(t *testing.T) {
	dev := vktest.Open(t, vk.Options{MaxStorageBufferRange: 4 << 10})
	r := rand.New(rand.NewSource(12))
	for _, chunk := range []int{0, 256} {
		inRun(t, dev, r, inCase{n: 3, c: 6, h: 16, w: 16, scale: 1, chunk: chunk})
		inRun(t, dev, r, inCase{n: 6, c: 3, h: 8, w: 8, scale: 2, shift: 1, chunk: chunk})
	}
}
