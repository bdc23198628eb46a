package ref

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/padding"
)

// row returns a 1x1x1xW image.
func row(v ...float64) Tensor[float64] {
	t, err := TensorOf(1, 1, 1, len(v), v)
	if err != nil {
		panic(err)
	}
	return t
}

// geom1D is a 1-row geometry: KernelH, StrideY, dilations 1 unless set.
func geom1D(k Kind, kw int, e padding.EdgeMode) Geometry {
	return Geometry{Kind: k, KernelW: kw, KernelH: 1, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, EdgeMode: e}
}

// pool1D runs g over src into a 1x1x1xw destination.
func pool1D(t *testing.T, g Geometry, src Tensor[float64], w int) []float64 {
	t.Helper()
	dst := NewTensor[float64](1, 1, 1, w)
	require.NoError(t, Pool(g, src, &dst))
	return dst.Data
}

func TestDilatedEvenWindowReadsMinus2Plus1(t *testing.T) {
	// k=2, d=3: ke=4, first tap at c-2, second at c+1 (the MaxGradient seed).
	src := row(100, 5, 100, 100, 2, 100, 100, 100)
	g := geom1D(DilatedMax, 2, padding.EdgeClamp)
	g.DilationX, g.OffsetX = 3, 3 // centre 3: taps 1 and 4
	assert.Equal(t, []float64{5}, pool1D(t, g, src, 1))
	idx, err := Argmax(g, src, padding.Descriptor{N: 1, C: 1, H: 1, W: 1})
	require.NoError(t, err)
	assert.Equal(t, []int32{0}, idx)

	g.Kind = Average
	assert.Equal(t, []float64{3.5}, pool1D(t, g, src, 1))
	dx := NewTensor[float64](1, 1, 1, 8)
	require.NoError(t, PoolGradient(g, src, row(1), &dx))
	assert.Equal(t, []float64{0, 0.5, 0, 0, 0.5, 0, 0, 0}, dx.Data)
}

func TestEvenWindowsLeanTopLeft(t *testing.T) {
	// 4x4 image with value 10*y + x.
	src := NewTensor[float64](1, 1, 4, 4)
	for y := range 4 {
		for x := range 4 {
			src.Set(0, 0, y, x, float64(10*y+x))
		}
	}
	g := Geometry{Kind: Average, KernelW: 2, KernelH: 2, StrideX: 2, StrideY: 2,
		DilationX: 1, DilationY: 1, EdgeMode: padding.EdgeClamp}
	dst := NewTensor[float64](1, 1, 2, 2)
	// Offset 0: window of (0,0) is rows/cols -1..0, so it reads pixel (0,0)
	// only; window of (1,1) is centred at (2,2) and reads rows/cols 1..2.
	require.NoError(t, Pool(g, src, &dst))
	assert.Equal(t, []float64{0, (1 + 2) / 2.0, (10 + 20) / 2.0, (11 + 12 + 21 + 22) / 4.0}, dst.Data)
	// Offset 1: the usual non-overlapping 2x2 pooling.
	g.OffsetX, g.OffsetY = 1, 1
	require.NoError(t, Pool(g, src, &dst))
	assert.Equal(t, []float64{5.5, 7.5, 25.5, 27.5}, dst.Data)

	// k=4: taps c-2 .. c+1.
	g1 := geom1D(Max, 4, padding.EdgeClamp)
	g1.OffsetX = 3
	idx, err := Argmax(g1, row(0, 9, 0, 0, 0, 8, 0), padding.Descriptor{N: 1, C: 1, H: 1, W: 1})
	require.NoError(t, err)
	assert.Equal(t, []int32{0}, idx, "pixel 1 is tap 0 of the window centred at 3")
	assert.Equal(t, []float64{9}, pool1D(t, g1, row(0, 9, 0, 0, 0, 8, 0), 1))
	assert.Equal(t, []float64{7}, pool1D(t, g1, row(0, 1, 0, 0, 7, 8, 0), 1), "pixel 5 is outside")
}

func TestMaxZeroVersusClamp(t *testing.T) {
	// All-negative 3x3 image: under Zero every edge window sees an outside 0.
	src := NewTensor[float64](1, 1, 3, 3)
	for i := range src.Data {
		src.Data[i] = -float64(i + 1) // -1 .. -9 row-major
	}
	g := Geometry{Kind: Max, KernelW: 3, KernelH: 3, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}
	shape := padding.Descriptor{N: 1, C: 1, H: 3, W: 3}
	dst := NewTensor[float64](1, 1, 3, 3)

	g.EdgeMode = padding.EdgeZero
	require.NoError(t, Pool(g, src, &dst))
	assert.Equal(t, []float64{0, 0, 0, 0, -1, 0, 0, 0, 0}, dst.Data)
	idx, err := Argmax(g, src, shape)
	require.NoError(t, err)
	assert.Equal(t, []int32{-1, -1, -1, -1, 0, -1, -1, -1, -1}, idx)

	g.EdgeMode = padding.EdgeClamp
	require.NoError(t, Pool(g, src, &dst))
	assert.Equal(t, []float64{-1, -1, -2, -1, -1, -2, -4, -4, -5}, dst.Data)
	idx, err = Argmax(g, src, shape)
	require.NoError(t, err)
	// Corner (0,0) centred at pixel (0,0): its max -1 is tap (1,1) = 4.
	assert.Equal(t, []int32{4, 3, 3, 1, 0, 0, 1, 0, 0}, idx)
}

func TestAverageCount(t *testing.T) {
	src := row(1, 2, 3, 4)
	// kW=3 centred on each pixel, plus one window wholly outside (x=6: taps 5..7).
	for _, tc := range []struct {
		name string
		edit func(*Geometry)
		want []float64
	}{
		{"zero: N=k", func(g *Geometry) {}, []float64{3.0 / 3, 6.0 / 3, 9.0 / 3, 7.0 / 3, 4.0 / 3, 0, 0}},
		{"zero, exclude, pads 1,0", func(g *Geometry) {
			g.ExcludeEdges, g.Pads = true, padding.Pads{Left: 1, Right: 0}
		}, []float64{3.0 / 3, 2, 3, 7.0 / 2, 4.0 / 1, 0, 0}},
		{"zero, exclude, pads -1,2: negative counts as 0", func(g *Geometry) {
			g.ExcludeEdges, g.Pads = true, padding.Pads{Left: -1, Right: 2}
		}, []float64{3.0 / 2, 2, 3, 7.0 / 3, 4.0 / 3, 0, 0}},
		{"zero, exclude, no region left: N=0", func(g *Geometry) {
			g.ExcludeEdges = true
		}, []float64{3.0 / 2, 2, 3, 7.0 / 2, 4.0 / 1, 0, 0}},
		{"clamp: in-image count", func(g *Geometry) {
			g.EdgeMode = padding.EdgeClamp
		}, []float64{3.0 / 2, 2, 3, 7.0 / 2, 4.0 / 1, 0, 0}},
		{"clamp, zero pad left 1", func(g *Geometry) {
			g.EdgeMode, g.ZeroPad = padding.EdgeClamp, padding.Pads{Left: 1}
		}, []float64{3.0 / 3, 2, 3, 7.0 / 2, 4.0 / 1, 0, 0}},
		{"clamp, zero pad right 2: window with no in-image tap is 0", func(g *Geometry) {
			g.EdgeMode, g.ZeroPad = padding.EdgeClamp, padding.Pads{Right: 2}
		}, []float64{3.0 / 2, 2, 3, 7.0 / 3, 4.0 / 3, 0, 0}},
		{"clamp ignores ExcludeEdges", func(g *Geometry) {
			g.EdgeMode, g.ExcludeEdges, g.Pads = padding.EdgeClamp, true, padding.Pads{Left: 5, Right: 5}
		}, []float64{3.0 / 2, 2, 3, 7.0 / 2, 4.0 / 1, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := geom1D(Average, 3, padding.EdgeZero)
			tc.edit(&g)
			got := pool1D(t, g, src, 7)
			assert.InDeltaSlice(t, tc.want, got, 1e-15)
		})
	}
	// 2-D: N is the product of the per-axis counts (clamp, zero pads 1 top,
	// 0 elsewhere; 3x3 window centred on the corner reads 2x2 pixels, N=3*2).
	img := NewTensor[float64](1, 1, 2, 2)
	copy(img.Data, []float64{1, 2, 3, 4})
	g := Geometry{Kind: Average, KernelW: 3, KernelH: 3, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1,
		EdgeMode: padding.EdgeClamp, ZeroPad: padding.Pads{Top: 1}}
	dst := NewTensor[float64](1, 1, 1, 1)
	require.NoError(t, Pool(g, img, &dst))
	assert.InDelta(t, 10.0/6, dst.Data[0], 1e-15)
}

func TestNaNPropagates(t *testing.T) {
	nan := math.NaN()
	for _, e := range []padding.EdgeMode{padding.EdgeZero, padding.EdgeClamp} {
		for _, k := range []Kind{Max, DilatedMax, Average, L2Norm} {
			g := geom1D(k, 3, e)
			got := pool1D(t, g, row(-1, nan, -3), 3)
			for i, v := range got {
				assert.True(t, math.IsNaN(v), "%v %v pixel %d = %v", k, e, i, v)
			}
		}
	}
}

func TestWindowWhollyOutside(t *testing.T) {
	src := row(-5, -6, 7)
	for _, e := range []padding.EdgeMode{padding.EdgeZero, padding.EdgeClamp} {
		for _, k := range []Kind{Max, DilatedMax, Average, L2Norm} {
			g := geom1D(k, 2, e)
			g.OffsetX = 10
			g.ZeroPad = padding.Pads{Left: 20, Right: 20}
			assert.Equal(t, []float64{0, 0}, pool1D(t, g, src, 2), "%v %v", k, e)
			g.OffsetX = -10
			assert.Equal(t, []float64{0, 0}, pool1D(t, g, src, 2), "%v %v", k, e)
			if k.isMax() {
				idx, err := Argmax(g, src, padding.Descriptor{N: 1, C: 1, H: 1, W: 2})
				require.NoError(t, err)
				assert.Equal(t, []int32{-1, -1}, idx)
			}
			dx := NewTensor[float64](1, 1, 1, 3)
			dx.Data[0] = 99 // must be overwritten
			require.NoError(t, PoolGradient(g, src, row(1, 1), &dx))
			assert.Equal(t, []float64{0, 0, 0}, dx.Data)
		}
	}
}

func TestClipOffsetBatch(t *testing.T) {
	// Source value encodes its position: 1000n + 100c + 10y + x.
	src := NewTensor[float64](3, 2, 4, 5)
	for n := range 3 {
		for c := range 2 {
			for y := range 4 {
				for x := range 5 {
					src.Set(n, c, y, x, float64(1000*n+100*c+10*y+x))
				}
			}
		}
	}
	// 1x1 max = a pick: destination (x, y) of image z reads source
	// (1 + 2*(x-1), 2 + (y-2)) of image 1 + z.
	g := Geometry{Kind: Max, KernelW: 1, KernelH: 1, StrideX: 2, StrideY: 1, DilationX: 1, DilationY: 1,
		OffsetX: 1, OffsetY: 2, OffsetZ: 1, Clip: Clip{X: 1, Y: 2, Z: 0, W: 2, H: 1, D: 2}}
	dst := NewTensor[float64](2, 2, 4, 4)
	for i := range dst.Data {
		dst.Data[i] = -1
	}
	require.NoError(t, Pool(g, src, &dst))
	for z := range 2 {
		for c := range 2 {
			for y := range 4 {
				for x := range 4 {
					want := -1.0
					if y == 2 && (x == 1 || x == 2) {
						want = float64(1000*(1+z) + 100*c + 10*2 + 1 + 2*(x-1))
					}
					assert.Equal(t, want, dst.At(z, c, y, x), "z%d c%d y%d x%d", z, c, y, x)
				}
			}
		}
	}

	// Gradient: dy at the clipped pixels lands on the picked source pixels of
	// images 1 and 2; image 0 and everything else is 0; dy outside the clip
	// is ignored.
	dy := NewTensor[float64](2, 2, 4, 4)
	for i := range dy.Data {
		dy.Data[i] = 1
	}
	dx := NewTensor[float64](3, 2, 4, 5)
	require.NoError(t, PoolGradient(g, src, dy, &dx))
	var sum float64
	for _, v := range dx.Data {
		sum += v
	}
	assert.Equal(t, 2.0*2*2, sum)
	assert.Equal(t, 1.0, dx.At(1, 0, 2, 1))
	assert.Equal(t, 1.0, dx.At(2, 1, 2, 3))

	// A clip reaching past the destination is intersected with it; a zero
	// size runs to the end.
	g.Clip = Clip{X: 3, Y: 3, Z: 1, W: 100, H: 0, D: 100}
	g.OffsetZ = 0
	for i := range dst.Data {
		dst.Data[i] = -1
	}
	require.NoError(t, Pool(g, src, &dst))
	written := 0
	for _, v := range dst.Data {
		if v != -1 {
			written++
		}
	}
	assert.Equal(t, 1*1*1*2, written) // x=3, y=3, z=1, both channels
	assert.Equal(t, float64(0*1000+100*1+10*2+1), dst.At(1, 1, 3, 3))

	// Source images out of range.
	g.OffsetZ = 3
	assert.ErrorIs(t, Pool(g, src, &dst), ErrShape)
}

func TestValidate(t *testing.T) {
	ok := Geometry{Kind: Max, KernelW: 1, KernelH: 1, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}
	require.NoError(t, ok.Validate())
	for name, edit := range map[string]func(*Geometry){
		"Kind":           func(g *Geometry) { g.Kind = 7 },
		"KernelW":        func(g *Geometry) { g.KernelW = 0 },
		"KernelH":        func(g *Geometry) { g.KernelH = -1 },
		"StrideX":        func(g *Geometry) { g.StrideX = 0 },
		"StrideY":        func(g *Geometry) { g.StrideY = 0 },
		"DilationX":      func(g *Geometry) { g.DilationX = 0 },
		"DilationY":      func(g *Geometry) { g.DilationY = 0 },
		"OffsetZ":        func(g *Geometry) { g.OffsetZ = -1 },
		"edge mode":      func(g *Geometry) { g.EdgeMode = 9 },
		"ZeroPad.Bottom": func(g *Geometry) { g.ZeroPad.Bottom = -1 },
		"Clip.X":         func(g *Geometry) { g.Clip.X = -1 },
		"Clip.D":         func(g *Geometry) { g.Clip.D = -2 },
	} {
		g := ok
		edit(&g)
		err := g.Validate()
		require.ErrorIs(t, err, ErrGeometry, name)
		assert.Contains(t, err.Error(), name)
		dst := NewTensor[float32](1, 1, 1, 1)
		assert.ErrorIs(t, Pool(g, NewTensor[float32](1, 1, 1, 1), &dst), ErrGeometry, name)
	}
}

func TestShapeErrors(t *testing.T) {
	g := Geometry{Kind: Average, KernelW: 2, KernelH: 2, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}
	src := NewTensor[float32](1, 2, 3, 3)
	dst := NewTensor[float32](1, 2, 2, 2)
	require.NoError(t, Pool(g, src, &dst))

	assert.ErrorIs(t, Pool(g, src, nil), ErrShape)
	other := NewTensor[float32](1, 3, 2, 2)
	assert.ErrorIs(t, Pool(g, src, &other), ErrShape, "channel mismatch")
	short := Tensor[float32]{N: 1, C: 2, H: 2, W: 2, Data: make([]float32, 7)}
	assert.ErrorIs(t, Pool(g, src, &short), ErrShape, "data length")
	_, err := TensorOf(1, 0, 2, 2, []float32{})
	assert.ErrorIs(t, err, ErrShape)
	same := src
	assert.ErrorIs(t, Pool(g, src, &same), ErrShape, "aliasing")

	dx := NewTensor[float32](1, 2, 3, 3)
	require.NoError(t, PoolGradient(g, src, dst, &dx))
	wrong := NewTensor[float32](1, 2, 3, 4)
	assert.ErrorIs(t, PoolGradient(g, src, dst, &wrong), ErrShape, "dx shape")
	assert.ErrorIs(t, PoolGradient(g, src, dst, nil), ErrShape)
	assert.ErrorIs(t, PoolGradient(g, src, dst, &same), ErrShape, "dx aliases src")

	_, err = Argmax(g, src, dst.Shape())
	assert.ErrorIs(t, err, ErrGeometry, "Argmax of average")
	g.Kind = Max
	_, err = Argmax(g, src, padding.Descriptor{N: 1, C: 2, H: 0, W: 1})
	assert.ErrorIs(t, err, ErrShape)
}

// TestAgainstNaive checks Pool, Argmax and PoolGradient against the naive
// transcription of SPEC.md over random geometry, with inputs full of ties,
// zeros, -0 and NaN, in float32 and float64.
func TestAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 3000 {
		k := Kind(trial % 4)
		g, sd, dd := randGeometry(rng, k)
		vals := []float64{-1, -0.5, 0, math.Copysign(0, -1), 0.5, 1, 2}
		pick := func() float64 {
			if rng.IntN(40) == 0 {
				return math.NaN()
			}
			return vals[rng.IntN(len(vals))]
		}
		if k == L2Norm || k == Average {
			pick = func() float64 { return rng.Float64()*2 - 1 }
		}
		src := randTensor(sd, pick)
		dy := randTensor(dd, func() float64 { return rng.Float64()*2 - 1 })
		checkNaive(t, trial, g, src, dy, dd)
		checkNaive(t, trial, g, convert[float32](src), convert[float32](dy), dd)
	}
}

func convert[U, T Float](t Tensor[T]) Tensor[U] {
	u := NewTensor[U](t.N, t.C, t.H, t.W)
	for i, v := range t.Data {
		u.Data[i] = U(v)
	}
	return u
}

func checkNaive[T Float](t *testing.T, trial int, g Geometry, src, dy Tensor[T], dd padding.Descriptor) {
	t.Helper()
	const fill = -77
	want, wantIdx := naivePool(g, src, dd, fill)
	got := NewTensor[T](dd.N, dd.C, dd.H, dd.W)
	for i := range got.Data {
		got.Data[i] = fill
	}
	require.NoError(t, Pool(g, src, &got), "trial %d %+v", trial, g)
	if g.Kind.isMax() {
		for i := range got.Data {
			// Bit-exact, NaN payloads and the sign of zero included.
			require.Equal(t, math.Float64bits(float64(want.Data[i])), math.Float64bits(float64(got.Data[i])),
				"trial %d %+v pixel %d: got %v want %v", trial, g, i, got.Data[i], want.Data[i])
		}
		idx, err := Argmax(g, src, dd)
		require.NoError(t, err)
		require.Equal(t, wantIdx, idx, "trial %d %+v", trial, g)
	} else {
		require.NoError(t, Compare(g.Kind, got.Data, want.Data), "trial %d %+v", trial, g)
	}
	wantDx := naiveGrad(g, src, dy)
	dx := NewTensor[T](src.N, src.C, src.H, src.W)
	require.NoError(t, PoolGradient(g, src, dy, &dx))
	require.NoError(t, Compare(g.Kind, dx.Data, wantDx.Data), "trial %d %+v", trial, g)
}
