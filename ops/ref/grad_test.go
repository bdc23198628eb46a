package ref

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/padding"
)

// TestGradientFiniteDifferences checks PoolGradient against central finite
// differences of L(src) = sum(dy * Pool(src)) in float64 over random
// geometry. Max inputs are distinct multiples of 0.01 offset by 0.005 (never
// 0, the value of an outside tap), so a step of 1e-4 never changes an argmax;
// L2 inputs have |v| >= 0.2 so every window with an in-image tap has
// out >= 0.2.
func TestGradientFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 5))
	for trial := range 400 {
		k := Kind(trial % 4)
		g, sd, dd := randGeometry(rng, k)
		size := sd.N * sd.C * sd.H * sd.W
		var src Tensor[float64]
		switch k {
		case Max, DilatedMax:
			perm := rng.Perm(size)
			i := 0
			src = randTensor(sd, func() float64 { i++; return (float64(perm[i-1]-size/2) + 0.5) * 0.01 })
		case L2Norm:
			src = randTensor(sd, func() float64 {
				v := 0.2 + 0.8*rng.Float64()
				if rng.IntN(2) == 0 {
					v = -v
				}
				return v
			})
		default:
			src = randTensor(sd, func() float64 { return rng.Float64()*2 - 1 })
		}
		dy := randTensor(dd, func() float64 { return rng.Float64()*2 - 1 })

		loss := func() float64 {
			out := NewTensor[float64](dd.N, dd.C, dd.H, dd.W)
			require.NoError(t, Pool(g, src, &out))
			var l float64
			for i, v := range out.Data {
				l += dy.Data[i] * v
			}
			return l
		}
		dx := NewTensor[float64](sd.N, sd.C, sd.H, sd.W)
		require.NoError(t, PoolGradient(g, src, dy, &dx))

		const h = 1e-4
		for i := range src.Data {
			v := src.Data[i]
			src.Data[i] = v + h
			lp := loss()
			src.Data[i] = v - h
			lm := loss()
			src.Data[i] = v
			fd := (lp - lm) / (2 * h)
			require.InDelta(t, fd, dx.Data[i], 1e-7*(1+math.Abs(fd)),
				"trial %d %+v src %v element %d", trial, g, sd, i)
		}
	}
}

func TestMaxTieRule(t *testing.T) {
	nan1 := math.Float64frombits(0x7ff8000000000001)
	nan2 := math.Float64frombits(0x7ff8000000000002)
	negZero := math.Copysign(0, -1)
	for _, tc := range []struct {
		name   string
		src    []float64
		offset int
		edge   padding.EdgeMode
		arg    int32
		grad   []float64
	}{
		{"first max wins", []float64{5, 5, 1}, 1, padding.EdgeClamp, 0, []float64{1, 0, 0}},
		{"first max wins, later", []float64{1, 5, 5}, 1, padding.EdgeClamp, 1, []float64{0, 1, 0}},
		{"NaN beats a larger number", []float64{9, nan1, 1}, 1, padding.EdgeClamp, 1, []float64{0, 1, 0}},
		{"NaN first stays", []float64{nan1, 7, 9}, 1, padding.EdgeClamp, 0, []float64{1, 0, 0}},
		{"first NaN wins", []float64{1, nan1, nan2}, 1, padding.EdgeClamp, 1, []float64{0, 1, 0}},
		{"NaN beats an outside 0", []float64{-1, nan2, -3}, 0, padding.EdgeZero, 2, []float64{0, 1, 0}},
		{"outside 0 before in-image 0 wins", []float64{0, -1, -2}, 0, padding.EdgeZero, -1, []float64{0, 0, 0}},
		{"in-image 0 before outside 0 wins", []float64{-1, -2, 0}, 2, padding.EdgeZero, 1, []float64{0, 0, 1}},
		{"in-image -0 before outside +0 wins", []float64{-1, -2, negZero}, 2, padding.EdgeZero, 1, []float64{0, 0, 1}},
		{"positive beats outside 0", []float64{-1, 3, -2}, 0, padding.EdgeZero, 2, []float64{0, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := geom1D(Max, 3, tc.edge)
			g.OffsetX = tc.offset
			src := row(tc.src...)
			idx, err := Argmax(g, src, padding.Descriptor{N: 1, C: 1, H: 1, W: 1})
			require.NoError(t, err)
			assert.Equal(t, []int32{tc.arg}, idx)
			got := pool1D(t, g, src, 1)[0]
			want := 0.0
			if tc.arg >= 0 {
				want = tc.src[tc.offset-1+int(tc.arg)]
			}
			assert.Equal(t, math.Float64bits(want), math.Float64bits(got), "got %v want %v", got, want)
			dx := NewTensor[float64](1, 1, 1, 3)
			require.NoError(t, PoolGradient(g, src, row(1), &dx))
			assert.Equal(t, tc.grad, dx.Data)
		})
	}

	// 2-D: the first outside tap in row-major order is (0,1) when row 0 is
	// in the image, so an in-image 0 at (0,0) wins over it...
	img := NewTensor[float64](1, 1, 1, 1)
	g := Geometry{Kind: Max, KernelW: 2, KernelH: 2, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, OffsetX: 1, OffsetY: 1}
	one := padding.Descriptor{N: 1, C: 1, H: 1, W: 1}
	idx, err := Argmax(g, img, one)
	require.NoError(t, err)
	assert.Equal(t, []int32{0}, idx)
	// ...and loses to the outside tap (0,0) when the window leans over the
	// top-left corner.
	g.OffsetX, g.OffsetY = 0, 0
	idx, err = Argmax(g, img, one)
	require.NoError(t, err)
	assert.Equal(t, []int32{-1}, idx)
}

func TestMaxGradientSumsOverlappingWindows(t *testing.T) {
	// Three 3-wide windows pick pixel 2: its dx is the sum of their dy.
	g := geom1D(Max, 3, padding.EdgeClamp)
	src := row(0, 1, 9, 1, 0)
	dy := row(1, 2, 4, 8, 16)
	dx := NewTensor[float64](1, 1, 1, 5)
	require.NoError(t, PoolGradient(g, src, dy, &dx))
	assert.Equal(t, []float64{0, 1, 2 + 4 + 8, 16, 0}, dx.Data)
}

func TestL2GradientZeroWindow(t *testing.T) {
	// A window whose output is 0 contributes 0, never NaN.
	g := geom1D(L2Norm, 2, padding.EdgeZero)
	g.OffsetX = 1
	src := row(0, 0, 3, 4)
	dy := row(1, 1, 1, 1)
	out := pool1D(t, g, src, 4)
	assert.Equal(t, []float64{0, 3, 5, 4}, out)
	dx := NewTensor[float64](1, 1, 1, 4)
	require.NoError(t, PoolGradient(g, src, dy, &dx))
	assert.InDeltaSlice(t, []float64{0, 0, 1 + 3.0/5, 4.0/5 + 1}, dx.Data, 1e-15)
}
