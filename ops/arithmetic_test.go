package ops_test

import (
	"context"
	"fmt"
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

var arithOps = []ops.ArithmeticOp{ops.ArithmeticAdd, ops.ArithmeticSubtract, ops.ArithmeticMultiply, ops.ArithmeticDivide}

// arithShapes are primary and secondary shapes: every broadcast pattern,
// odd sizes, planes of a multiple of 4 values (quads) and not, and
// reductions taken by invocations (N, C) or by workgroups (H, W), in one
// slice or several.
var arithShapes = [][2]padding.Descriptor{
	{{N: 2, C: 3, H: 5, W: 7}, {N: 2, C: 3, H: 5, W: 7}},
	{{N: 3, C: 2, H: 4, W: 4}, {N: 1, C: 2, H: 4, W: 4}},
	{{N: 2, C: 5, H: 3, W: 3}, {N: 2, C: 1, H: 3, W: 3}},
	{{N: 2, C: 3, H: 5, W: 7}, {N: 2, C: 3, H: 1, W: 7}},
	{{N: 2, C: 3, H: 5, W: 7}, {N: 2, C: 3, H: 5, W: 1}},
	{{N: 2, C: 5, H: 6, W: 6}, {N: 1, C: 5, H: 1, W: 1}},
	{{N: 2, C: 3, H: 5, W: 7}, {N: 1, C: 1, H: 1, W: 1}},
	{{N: 1, C: 1, H: 1, W: 1}, {N: 2, C: 3, H: 4, W: 5}},
	{{N: 2, C: 1, H: 4, W: 1}, {N: 1, C: 3, H: 1, W: 5}},
	{{N: 2, C: 6, H: 4, W: 4}, {N: 2, C: 6, H: 1, W: 1}},
	{{N: 3, C: 4, H: 4, W: 4}, {N: 1, C: 1, H: 4, W: 4}},
	{{N: 2, C: 3, H: 24, W: 24}, {N: 1, C: 3, H: 1, W: 1}},
	{{N: 300, C: 2, H: 1, W: 3}, {N: 1, C: 2, H: 1, W: 3}},
	{{N: 1, C: 2, H: 64, W: 64}, {N: 1, C: 2, H: 1, W: 1}},
	{{N: 3, C: 4, H: 16, W: 16}, {N: 1, C: 1, H: 1, W: 1}}, // planes walked across channels and batch images
	{{N: 40, C: 3, H: 2, W: 4}, {N: 1, C: 3, H: 1, W: 1}},  // planes smaller than a workgroup's stride
	{{N: 5, C: 3, H: 15, W: 17}, {N: 1, C: 3, H: 1, W: 1}}, // whole planes reduced by many workgroups, value by value
	{{N: 1, C: 3, H: 1, W: 1}, {N: 5, C: 3, H: 15, W: 17}}, // ... the primary's
	{{N: 2, C: 2, H: 96, W: 96}, {N: 1, C: 2, H: 1, W: 1}}, // ... in quads, several workgroups per output
	{{N: 3, C: 2, H: 32, W: 32}, {N: 3, C: 1, H: 1, W: 1}}, // ... per batch image, channels reduced
}

// arithDescriptors are each op with scales and bias, unclamped and
// clamped.
func arithDescriptors(op ops.ArithmeticOp) []ops.ArithmeticDescriptor {
	d := ops.NewArithmeticDescriptor(op)
	d.PrimaryScale, d.SecondaryScale, d.Bias = 1.5, -0.75, 0.25
	c := d
	c.Minimum, c.Maximum = -0.5, 1
	return []ops.ArithmeticDescriptor{ops.NewArithmeticDescriptor(op), d, c}
}

func arithRef(d ops.ArithmeticDescriptor) ref.Arithmetic {
	return ref.Arithmetic{Op: ref.ArithmeticOp(d.Op), PrimaryScale: float64(d.PrimaryScale), SecondaryScale: float64(d.SecondaryScale),
		Bias: float64(d.Bias), Minimum: float64(d.Minimum), Maximum: float64(d.Maximum)}
}

// arithData returns n sources: normal values, kept away from 0 for a
// divisor.
func arithData(r *rand.Rand, n int, divisor bool) []float32 {
	v := randomData(r, n)
	if divisor {
		for i := range v {
			v[i] = float32(math.Copysign(0.5+math.Abs(float64(v[i])), float64(v[i])))
		}
	}
	return v
}

// arithMagnitudes returns, per element of the source's shape, the sum of
// |dz * partial| over its broadcast set: the scale of a reduction's
// rounding.
func arithMagnitudes(a ref.Arithmetic, dz, x, y ref.Tensor[float32], secondary bool) []float64 {
	abs := func(t ref.Tensor[float32]) ref.Tensor[float32] {
		o := ref.Tensor[float32]{N: t.N, C: t.C, H: t.H, W: t.W, Data: make([]float32, len(t.Data))}
		for i, v := range t.Data {
			o.Data[i] = float32(math.Abs(float64(v)))
		}
		return o
	}
	// |dz * d| = |dz| * |d|; |d| is the partial of |x|, |y| only for add
	// and subtract, so bound it by the partial at (x, y) made positive.
	g, err := ref.ArithmeticGradient(ref.Arithmetic{Op: ref.ArithmeticAdd, PrimaryScale: 1, SecondaryScale: 1,
		Minimum: math.Inf(-1), Maximum: math.Inf(1)}, abs(dz), x, y, secondary)
	if err != nil {
		panic(err)
	}
	// Scale by the largest |partial| over the data.
	big := 0.0
	s, _ := ref.BroadcastShape(x.Shape(), y.Shape())
	for n := 0; n < s.N; n++ {
		for c := 0; c < s.C; c++ {
			for h := 0; h < s.H; h++ {
				for w := 0; w < s.W; w++ {
					at := func(t ref.Tensor[float32]) float64 {
						return float64(t.At(min(n, t.N-1), min(c, t.C-1), min(h, t.H-1), min(w, t.W-1)))
					}
					px, py := a.Partials(at(x), at(y))
					big = math.Max(big, math.Max(math.Abs(px), math.Abs(py)))
				}
			}
		}
	}
	for i := range g.Data {
		g.Data[i] *= big
	}
	return g.Data
}

// arithRun runs the forward and both gradients and returns z, dx, dy'.
func arithRun(t *testing.T, dev *vk.Device, d ops.ArithmeticDescriptor, x, y, dz, z, gx, gy *ops.Image) (zv, gxv, gyv []float32) {
	t.Helper()
	ctx := context.Background()
	k, err := ops.NewArithmetic(dev, d)
	require.NoError(t, err)
	kx, err := ops.NewArithmeticGradient(dev, d, false)
	require.NoError(t, err)
	t.Cleanup(func() { kx.Close() })
	ky, err := ops.NewArithmeticGradient(dev, d, true)
	require.NoError(t, err)
	t.Cleanup(func() { ky.Close() })
	require.True(t, ky.IsSecondarySourceFilter())
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if err := k.Encode(cb, x, y, z); err != nil {
			return err
		}
		if err := kx.Encode(cb, dz, x, y, gx); err != nil {
			return err
		}
		return ky.Encode(cb, dz, x, y, gy)
	}))
	zv, err = z.Read(ctx)
	require.NoError(t, err)
	gxv, err = gx.Read(ctx)
	require.NoError(t, err)
	gyv, err = gy.Read(ctx)
	require.NoError(t, err)
	return zv, gxv, gyv
}

// arithCheck compares a run with the reference.
func arithCheck(t *testing.T, name string, d ops.ArithmeticDescriptor, f ops.Format, xv, yv, dzv []float32, xs, ys padding.Descriptor, zv, gxv, gyv []float32) {
	t.Helper()
	a := arithRef(d)
	xt, _ := ref.TensorOf(xs.N, xs.C, xs.H, xs.W, xv)
	yt, _ := ref.TensorOf(ys.N, ys.C, ys.H, ys.W, yv)
	rs, err := ref.BroadcastShape(xs, ys)
	require.NoError(t, err)
	dzt, _ := ref.TensorOf(rs.N, rs.C, rs.H, rs.W, dzv)
	wantZ, err := ref.ArithmeticForward(a, xt, yt)
	require.NoError(t, err)
	require.NoError(t, neuronCompare(zv, wantZ.Data, f, nil), "%s forward", name)
	for side, got := range [][]float32{gxv, gyv} {
		want, err := ref.ArithmeticGradient(a, dzt, xt, yt, side == 1)
		require.NoError(t, err)
		mag := arithMagnitudes(a, dzt, xt, yt, side == 1)
		require.NoError(t, neuronCompare(got, want.Data, f, func(i int) float64 { return 0x1p-22 * mag[i] }), "%s gradient of source %d", name, side)
	}
}

// TestArithmeticMatchesReference runs every op, forward and both
// gradients, over every broadcast pattern, float32 and float16, with
// scales, bias and clamping.
func TestArithmeticMatchesReference(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(31))
	for _, f := range neuronFormats(dev) {
		for _, sh := range arithShapes {
			for _, op := range arithOps {
				for i, d := range arithDescriptors(op) {
					if f == ops.Float16 && i != 2 {
						continue // float16: the clamped one (the layouts are the same as float32's)
					}
					xs, ys := sh[0], sh[1]
					rs, err := ref.BroadcastShape(xs, ys)
					require.NoError(t, err)
					name := fmt.Sprintf("%v/%v %v/%v", f, xs, ys, d)
					xv := neuronInput(arithData(r, xs.N*xs.C*xs.H*xs.W, false), f)
					yv := neuronInput(arithData(r, ys.N*ys.C*ys.H*ys.W, op == ops.ArithmeticDivide), f)
					dzv := neuronInput(randomData(r, rs.N*rs.C*rs.H*rs.W), f)
					x, y := neuronImage(t, dev, xs, xv, f), neuronImage(t, dev, ys, yv, f)
					dz := neuronImage(t, dev, rs, dzv, f)
					z := neuronImage(t, dev, rs, filled(rs.N*rs.C*rs.H*rs.W, poisonValue), f)
					gx := neuronImage(t, dev, xs, filled(len(xv), poisonValue), f)
					gy := neuronImage(t, dev, ys, filled(len(yv), poisonValue), f)
					zv, gxv, gyv := arithRun(t, dev, d, x, y, dz, z, gx, gy)
					arithCheck(t, name, d, f, xv, yv, dzv, xs, ys, zv, gxv, gyv)
				}
			}
		}
	}
}

// TestArithmeticViewsAndSplits: channel views as sources and destinations
// (runs per batch image, bases off the 4-value boundary), images split
// under a small storage-buffer range (batch groups, channel groups, a
// broadcast source bound once per part), reductions repeating bit for
// bit, and a reduction over images beyond the range refused.
func TestArithmeticViewsAndSplits(t *testing.T) {
	r := rand.New(rand.NewSource(32))
	ctx := context.Background()
	capped := vktest.Open(t, vk.Options{MaxStorageBufferRange: 64 << 10})
	view := func(f ops.Format, d padding.Descriptor, off, extra int, data bool) *ops.Image {
		whole := padding.Descriptor{N: d.N, C: d.C + extra, H: d.H, W: d.W}
		var v []float32
		if data {
			v = neuronInput(randomData(r, whole.N*whole.C*whole.H*whole.W), f)
		}
		return must(neuronImage(t, capped, whole, v, f).ChannelView(off, d.C))
	}
	for _, f := range neuronFormats(capped) {
		for _, c := range []struct{ xs, ys padding.Descriptor }{
			{padding.Descriptor{N: 3, C: 3, H: 5, W: 7}, padding.Descriptor{N: 3, C: 3, H: 5, W: 7}},
			{padding.Descriptor{N: 3, C: 3, H: 4, W: 4}, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}},
			{padding.Descriptor{N: 2, C: 3, H: 24, W: 24}, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}},
			{padding.Descriptor{N: 5, C: 3, H: 40, W: 40}, padding.Descriptor{N: 5, C: 3, H: 40, W: 40}},
			{padding.Descriptor{N: 5, C: 3, H: 40, W: 40}, padding.Descriptor{N: 1, C: 3, H: 1, W: 40}},
			{padding.Descriptor{N: 1, C: 9, H: 64, W: 64}, padding.Descriptor{N: 1, C: 1, H: 64, W: 64}},
		} {
			rs, err := ref.BroadcastShape(c.xs, c.ys)
			require.NoError(t, err)
			d := ops.NewArithmeticDescriptor(ops.ArithmeticMultiply)
			d.PrimaryScale, d.Bias, d.Minimum = 2, 0.5, -1
			name := fmt.Sprintf("%v/%v %v", f, c.xs, c.ys)
			x, y := view(f, c.xs, 1, 2, true), view(f, c.ys, 0, 1, true)
			dzv := neuronInput(randomData(r, rs.N*rs.C*rs.H*rs.W), f)
			dz := neuronImage(t, capped, rs, dzv, f)
			z, gx, gy := view(f, rs, 1, 1, false), view(f, c.xs, 2, 2, false), view(f, c.ys, 1, 1, false)
			xv, err := x.Read(ctx)
			require.NoError(t, err)
			yv, err := y.Read(ctx)
			require.NoError(t, err)
			big := rs.N*rs.C*rs.H*rs.W > 4000      // its views span more than the range in either format
			if big && (c.xs != rs || c.ys != rs) { // a reduction over an image beyond the range
				cb, err := capped.NewCommandBuffer()
				require.NoError(t, err)
				t.Cleanup(func() { cb.Close() })
				secondary := c.ys != rs // the broadcast source, whose gradient is a reduction
				k := must(ops.NewArithmeticGradient(capped, d, secondary))
				t.Cleanup(func() { k.Close() })
				gs := gx
				if secondary {
					gs = gy
				}
				err = k.Encode(cb, dz, x, y, gs)
				require.ErrorIs(t, err, ops.ErrDeviceLimit, name)
				require.Contains(t, err.Error(), "max storage buffer range")
				k2 := must(ops.NewArithmetic(capped, d))
				require.NoError(t, run(t, capped, func(cb *vk.CommandBuffer) error { return k2.Encode(cb, x, y, z) }), name)
				zv, err := z.Read(ctx)
				require.NoError(t, err)
				xt, _ := ref.TensorOf(c.xs.N, c.xs.C, c.xs.H, c.xs.W, xv)
				yt, _ := ref.TensorOf(c.ys.N, c.ys.C, c.ys.H, c.ys.W, yv)
				want, _ := ref.ArithmeticForward(arithRef(d), xt, yt)
				require.NoError(t, neuronCompare(zv, want.Data, f, nil), "%s forward", name)
				continue
			}
			zv, gxv, gyv := arithRun(t, capped, d, x, y, dz, z, gx, gy)
			arithCheck(t, name, d, f, xv, yv, dzv, c.xs, c.ys, zv, gxv, gyv)
			_, gxv2, gyv2 := arithRun(t, capped, d, x, y, dz, z, gx, gy)
			require.True(t, sameBits(gxv, gxv2) && sameBits(gyv, gyv2), "%s: gradients not repeatable", name)
		}
	}
}
