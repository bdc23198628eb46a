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

// argmaxInput draws a max pooling source that sends strips down each path
// of the argmax passes: ref.PoolingInput (ties, NaNs), ReLU outputs (border
// windows whose maximum is 0, tying with outside taps under EdgeZero), only
// negative values (outside zeros win at the border), and -inf values
// (windows whose maximum is -inf, as outside taps under EdgeClamp).
func argmaxInput(r *rand.Rand, which, n int) []float32 {
	d := ref.PoolingInput(r, true, n)
	for i := range d {
		switch which % 4 {
		case 1:
			d[i] = max(d[i], 0)
		case 2:
			d[i] = -float32(math.Abs(float64(d[i]))) - 0.25
		case 3:
			if r.Intn(3) == 0 {
				d[i] = float32(math.Inf(-1))
			}
		}
	}
	return d
}

// argmaxCase is a direct-path max or dilated max case (at most 64 taps)
// with geometries like the benchmark's among random ones.
func argmaxCase(r *rand.Rand, i int) poolCase {
	kind := []ops.PoolingKind{ops.KindMax, ops.KindDilatedMax}[i%2]
	g := ops.Geometry{KernelWidth: 1 + r.Intn(4), KernelHeight: 1 + r.Intn(4), StrideX: 1 + r.Intn(3), StrideY: 1 + r.Intn(3), DilationX: 1, DilationY: 1}
	switch i % 6 {
	case 0:
		g = ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	case 2:
		g = ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	case 4:
		g = ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}
	}
	if kind == ops.KindDilatedMax {
		g.DilationX, g.DilationY = 2, 1+r.Intn(3)
	}
	c := poolCase{kind: kind, geom: g, edge: ops.EdgeMode(r.Intn(2))}
	c.src = padding.Descriptor{N: 1 + r.Intn(2), C: 1 + r.Intn(5), H: 2 + r.Intn(14), W: 4 * (1 + r.Intn(6))}
	if r.Intn(3) == 0 {
		c.src.W += 1 + r.Intn(3) // rows not a multiple of the load width
	}
	keX, keY := (g.KernelWidth-1)*g.DilationX+1, (g.KernelHeight-1)*g.DilationY+1
	c.dst = padding.Descriptor{N: c.src.N, C: c.src.C, H: 1 + (c.src.H+keY)/g.StrideY, W: 1 + (c.src.W+keX)/g.StrideX}
	c.off = ops.Offset{X: r.Intn(keX+2) - 1, Y: r.Intn(keY+2) - 1}
	return c
}

// argmaxRun runs c's forward recording the argmax under tuning tu, then
// the gradient from the recorded codes and the gradient that recomputes
// them (both under tu), on float16 images when half; it returns the
// forward's values, the codes and the two dx.
func argmaxRun(t *testing.T, dev *vk.Device, c poolCase, tu ops.Tuning, half bool, input, dy []float32) (y []float32, codes []int32, dx [2][]float32) {
	t.Helper()
	img := func(d padding.Descriptor, data []float32) *ops.Image {
		if half {
			return newHalfImage(t, dev, d, data)
		}
		return newImage(t, dev, d, data)
	}
	src, dyIm := img(c.src, input), img(c.dst, dy)
	dst := img(c.dst, filled(c.dst.N*c.dst.C*c.dst.H*c.dst.W, poisonValue))
	for i, record := range []bool{true, false} {
		f, k, err := newForward(dev, c.kind, c.geom)
		require.NoError(t, err, c)
		c.configure(f, k)
		require.NoError(t, f.SetTuning(tu))
		f.SetRecordArgmax(record)
		g, err := ops.NewPoolingGradient(dev, c.kind, c.geom)
		require.NoError(t, err, c)
		require.NoError(t, g.SetTuning(tu))
		var st *ops.PoolingGradientState
		var dxIm *ops.Image
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			if st, err = f.EncodeWithState(cb, src, dst); err != nil {
				return err
			}
			dxIm, err = g.EncodeNew(cb, dyIm, src, st)
			return err
		}), c)
		dx[i], err = dxIm.Read(context.Background())
		require.NoError(t, err)
		require.NoError(t, dxIm.Close())
		if record {
			y, err = dst.Read(context.Background())
			require.NoError(t, err)
			codes, err = st.ReadArgmax(context.Background())
			require.NoError(t, err)
		}
		require.NoError(t, st.Close())
	}
	return y, codes, dx
}

// Every argmax pass (tap by tap, two-phase, and their fast forms with the
// full pass behind them) gives the reference's values, argmax codes and
// gradients, recorded or recomputed, on float32 and float16 images, over
// inputs that reach the fast pass and its fallback. Each tuning and
// precision draws 8 cases of its own (96 geometries in all; 16 each took
// about 3.5 minutes on CI's cold lavapipe, most of it compiling).
func TestArgmaxPassesMatchReference(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(2121))
	cases := 8
	if testing.Short() {
		cases = 4
	}
	for _, half := range []bool{false, true} {
		if half && !dev.Limits().Float16Storage {
			t.Log("float16 images not supported: float32 only")
			continue
		}
		tunings := []ops.Tuning{}
		for mode := ops.ArgmaxTapByTap; mode <= ops.ArgmaxFastTwoPhase; mode++ {
			tunings = append(tunings, ops.Tuning{Argmax: mode})
		}
		// Several rows an invocation (each row's strip in turn, the pass on
		// halves included; the random heights leave the last invocation
		// partly past the clip), with planes too.
		tunings = append(tunings, ops.Tuning{StripRows: 2}, ops.Tuning{StripRows: 4, StripPlanes: 2})
		for _, tu := range tunings {
			t.Run(fmt.Sprintf("half=%v/argmax=%d/oy=%d", half, tu.Argmax, tu.StripRows), func(t *testing.T) {
				for i := 0; i < cases; i++ {
					c := argmaxCase(r, i)
					n := c.src.N * c.src.C * c.src.H * c.src.W
					in, dy := argmaxInput(r, i/2, n), randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)
					if half {
						in, dy = toHalf(in), toHalf(dy)
					}
					y, codes, dx := argmaxRun(t, dev, c, tu, half, in, dy)
					inT, err := ref.TensorOf(c.src.N, c.src.C, c.src.H, c.src.W, in)
					require.NoError(t, err)
					want := ref.NewTensor[float32](c.dst.N, c.dst.C, c.dst.H, c.dst.W)
					require.NoError(t, ref.Pool(c.refGeometry(), inT, &want), c)
					wantCodes, err := ref.Argmax(c.refGeometry(), inT, c.dst)
					require.NoError(t, err)
					wantDx := refGradient(t, c, in, dy)
					compare := func(got, want []float32) error { return ref.Compare(refKind(c.kind), got, want) }
					if half {
						compare = func(got, want []float32) error { return compareHalf(refKind(c.kind), got, want, nil) }
					}
					require.NoError(t, compare(y, want.Data), "values: %v", c)
					require.Equal(t, wantCodes, codes, "codes: %v", c)
					require.NoError(t, compare(dx[0], wantDx), "gradient, recorded argmax: %v", c)
					require.NoError(t, compare(dx[1], wantDx), "gradient, recomputed argmax: %v", c)
				}
			})
		}
	}
}
