package ref

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/padding"
)

// UpsampleTaps's exact fractions against PyTorch's formulas in float64.
func TestUpsampleTaps(t *testing.T) {
	for in := 1; in <= 9; in++ {
		for s := 1; s <= 5; s++ {
			out := in * s
			for d := 0; d < out; d++ {
				i0, i1, l := UpsampleTaps(false, false, in, s, d)
				require.Equal(t, [3]float64{float64(d / s), float64(d / s), 0}, [3]float64{float64(i0), float64(i1), l})
				for _, align := range []bool{false, true} {
					var src float64
					switch {
					case !align:
						src = math.Max(0, (float64(d)+0.5)/float64(s)-0.5)
					case out > 1:
						src = float64(d) * float64(in-1) / float64(out-1)
					}
					w0 := int(math.Floor(src + 1e-12))
					w1 := min(w0+1, in-1)
					i0, i1, l := UpsampleTaps(true, align, in, s, d)
					name := fmt.Sprintf("in %d s %d d %d align %v", in, s, d, align)
					require.Equal(t, w0, i0, name)
					require.Equal(t, w1, i1, name)
					require.InDelta(t, src-float64(w0), l, 1e-12, name)
					require.True(t, l >= 0 && l < 1, name)
				}
			}
		}
	}
}

// MPS's documented example: nearest 2x replicates each pixel into a 2x2
// block and the gradient sums each block.
func TestUpsampleNearestExample(t *testing.T) {
	u := Upsampling{ScaleX: 2, ScaleY: 2}
	x, err := TensorOf(1, 1, 2, 2, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	y, err := Upsample(u, x)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, y.Data)
	dy, err := TensorOf(1, 1, 4, 4, []float32{1, 2, 10, 20, 3, 4, 30, 40, 100, 200, 1000, 2000, 300, 400, 3000, 4000})
	require.NoError(t, err)
	dx, err := UpsampleGradient(u, dy, x.Shape())
	require.NoError(t, err)
	assert.Equal(t, []float64{10, 100, 1000, 10000}, dx.Data)
}

// Every upsampling's gradient against central differences of
// L(x) = sum(w * Upsample(x)) in float64, over random odd shapes and
// scales 1..4 per axis.
func TestUpsampleGradientFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for i := 0; i < 24; i++ {
		u := Upsampling{ScaleX: 1 + r.Intn(4), ScaleY: 1 + r.Intn(4), Bilinear: i%3 != 0, AlignCorners: i%3 == 2}
		src := padding.Descriptor{N: 1 + r.Intn(2), C: 1 + r.Intn(3), H: 1 + r.Intn(5), W: 1 + r.Intn(5)}
		o := u.OutputShape(src)
		x := NewTensor[float64](src.N, src.C, src.H, src.W)
		for k := range x.Data {
			x.Data[k] = r.NormFloat64()
		}
		w := NewTensor[float64](o.N, o.C, o.H, o.W)
		for k := range w.Data {
			w.Data[k] = r.NormFloat64()
		}
		loss := func() float64 {
			y, err := Upsample(u, x)
			require.NoError(t, err)
			s := 0.0
			for k, v := range y.Data {
				s += w.Data[k] * v
			}
			return s
		}
		dx, err := UpsampleGradient(u, w, src)
		require.NoError(t, err)
		const h = 1e-4
		for k := range x.Data {
			v := x.Data[k]
			x.Data[k] = v + h
			lp := loss()
			x.Data[k] = v - h
			lm := loss()
			x.Data[k] = v
			require.InDelta(t, (lp-lm)/(2*h), dx.Data[k], 1e-7, "%+v %v element %d", u, src, k)
		}
	}
}

func TestUpsamplingValidate(t *testing.T) {
	for _, u := range []Upsampling{{ScaleX: 0, ScaleY: 1}, {ScaleX: 2, ScaleY: -1}, {ScaleX: 2, ScaleY: 2, AlignCorners: true}} {
		assert.True(t, errors.Is(u.Validate(), ErrGeometry), "%+v", u)
	}
	_, err := UpsampleGradient(Upsampling{ScaleX: 2, ScaleY: 2}, NewTensor[float32](1, 1, 3, 4), padding.Descriptor{N: 1, C: 1, H: 2, W: 2})
	assert.True(t, errors.Is(err, ErrShape), "%v", err)
}

// The reference against PyTorch's F.interpolate and autograd. PyTorch
// computes the source positions in float32 (ours are exact fractions) and
// sums in float32, hence a tolerance: 1e-5 of the sum of magnitudes.
func TestUpsampleTorchCases(t *testing.T) {
	ups, _, err := LoadUpsamplingCases("../testdata/torch/upsampling_cases.json")
	require.NoError(t, err)
	require.NotEmpty(t, ups)
	for _, c := range ups {
		i := c.InputShape
		x := Tensor[float32]{N: i[0], C: i[1], H: i[2], W: i[3], Data: c.Input}
		y, err := Upsample(c.Upsampling, x)
		require.NoError(t, err, c.Name)
		for k, v := range y.Data {
			if !c.Upsampling.Bilinear {
				require.Equal(t, float64(c.Output[k]), v, "%s output %d", c.Name, k)
			}
			require.InDelta(t, c.Output[k], v, 1e-5, "%s output %d", c.Name, k)
		}
		o := c.OutputShape
		dy := Tensor[float32]{N: o[0], C: o[1], H: o[2], W: o[3], Data: c.GradOutput}
		dx, err := UpsampleGradient(c.Upsampling, dy, x.Shape())
		require.NoError(t, err, c.Name)
		for k, v := range dx.Data {
			tol := 1e-5 * float64(c.Upsampling.ScaleX*c.Upsampling.ScaleY*4)
			require.InDelta(t, c.GradInput[k], v, tol, "%s grad_input %d", c.Name, k)
		}
	}
}
