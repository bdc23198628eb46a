package ref

import (
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/padding"
)

// Random123's known answers for Philox4x32-10 (kat_vectors: counter, key,
// result).
func TestPhilox4x32KnownAnswers(t *testing.T) {
	for _, c := range []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0)}, [2]uint32{^uint32(0), ^uint32(0)},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	} {
		assert.Equal(t, c.want, Philox4x32(c.ctr, c.key), "counter %08x key %08x", c.ctr, c.key)
	}
}

func TestDropoutValidate(t *testing.T) {
	ok := Dropout{KeepProbability: 0.5, StrideX: 1, StrideY: 1, StrideC: 1}
	require.NoError(t, ok.Validate())
	for _, k := range []float32{0, 1, -0.5, 1.5, float32(math.NaN()), float32(math.Inf(1))} {
		d := ok
		d.KeepProbability = k
		assert.True(t, errors.Is(d.Validate(), ErrGeometry), "keep %v", k)
	}
	for _, s := range [][3]int{{2, 1, 1}, {1, -1, 1}, {1, 1, 3}} {
		d := ok
		d.StrideX, d.StrideY, d.StrideC = s[0], s[1], s[2]
		assert.True(t, errors.Is(d.Validate(), ErrGeometry), "strides %v", s)
	}
}

func TestDropoutThreshold(t *testing.T) {
	for _, c := range []struct {
		keep float32
		want uint32
	}{{0.5, 1 << 31}, {0.25, 1 << 30}, {0.75, 3 << 30}, {1 - 0x1p-24, 1<<32 - 256}, {0x1p-32, 1}} {
		assert.Equal(t, c.want, Dropout{KeepProbability: c.keep}.Threshold(), "keep %v", c.keep)
	}
}

// The fraction of kept elements is the keep probability (within 5
// standard deviations), two draws and two seeds are independent (their
// agreement is p^2 + (1-p)^2), and each mask bit equals MaskBit's.
func TestDropoutMaskStatistics(t *testing.T) {
	shape := padding.Descriptor{N: 2, C: 7, H: 33, W: 61}
	for _, p := range []float32{0.1, 0.5, 0.8, 0.97} {
		d := Dropout{KeepProbability: p, Seed: 0x1234_5678_9abc, StrideX: 1, StrideY: 1, StrideC: 1}
		m := d.Mask(shape)
		n := float64(len(m))
		sigma := math.Sqrt(float64(p) * (1 - float64(p)) / n)
		assert.InDelta(t, p, frac(m), 5*sigma, "keep %v", p)
		agree := float64(p)*float64(p) + (1-float64(p))*(1-float64(p))
		sigmaA := math.Sqrt(agree * (1 - agree) / n)
		next := d
		next.Draw++
		assert.InDelta(t, agree, agreement(m, next.Mask(shape)), 5*sigmaA, "keep %v: draws 0 and 1", p)
		other := d
		other.Seed++
		assert.InDelta(t, agree, agreement(m, other.Mask(shape)), 5*sigmaA, "keep %v: seeds s and s+1", p)
		hi := d
		hi.Seed ^= 1 << 40
		assert.InDelta(t, agree, agreement(m, hi.Mask(shape)), 5*sigmaA, "keep %v: seed high bits", p)
		r := rand.New(rand.NewSource(int64(p * 100)))
		for k := 0; k < 200; k++ {
			i := r.Intn(len(m))
			x, y, c, b := i%shape.W, i/shape.W%shape.H, i/(shape.W*shape.H)%shape.C, i/(shape.W*shape.H*shape.C)
			require.Equal(t, m[i], d.MaskBit(shape.C, b, c, y, x), "element %d", i)
		}
	}
}

func frac(m []bool) float64 {
	k := 0
	for _, v := range m {
		if v {
			k++
		}
	}
	return float64(k) / float64(len(m))
}

func agreement(a, b []bool) float64 {
	k := 0
	for i := range a {
		if a[i] == b[i] {
			k++
		}
	}
	return float64(k) / float64(len(a))
}

// A stride of 0 broadcasts: the mask shrinks on that axis and every
// element along it is kept or dropped together.
func TestDropoutBroadcast(t *testing.T) {
	shape := padding.Descriptor{N: 2, C: 5, H: 6, W: 7}
	r := rand.New(rand.NewSource(2))
	x := NewTensor[float32](shape.N, shape.C, shape.H, shape.W)
	for i := range x.Data {
		x.Data[i] = float32(r.NormFloat64()) + 10 // never 0
	}
	for s := 0; s < 8; s++ {
		d := Dropout{KeepProbability: 0.5, Seed: 7, StrideX: s & 1, StrideY: s >> 1 & 1, StrideC: s >> 2 & 1}
		m := d.MaskShape(shape)
		want := padding.Descriptor{N: 2, C: 1, H: 1, W: 1}
		if d.StrideC == 1 {
			want.C = 5
		}
		if d.StrideY == 1 {
			want.H = 6
		}
		if d.StrideX == 1 {
			want.W = 7
		}
		require.Equal(t, want, m, "strides %d", s)
		y, err := DropoutForward(d, d.Mask(shape), x)
		require.NoError(t, err)
		for n := 0; n < shape.N; n++ {
			for c := 0; c < shape.C; c++ {
				for yy := 0; yy < shape.H; yy++ {
					for xx := 0; xx < shape.W; xx++ {
						kept := y.At(n, c, yy, xx) != 0
						require.Equal(t, d.MaskBit(m.C, n, c*d.StrideC, yy*d.StrideY, xx*d.StrideX), kept)
						if kept {
							require.Equal(t, x.At(n, c, yy, xx)*2, y.At(n, c, yy, xx))
						}
					}
				}
			}
		}
	}
}

// Dropout's gradient for a fixed mask against central differences of
// L(x) = sum(w * y(x)) in float64.
func TestDropoutGradientFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	shape := padding.Descriptor{N: 2, C: 3, H: 4, W: 5}
	for _, d := range []Dropout{
		{KeepProbability: 0.3, Seed: 1, StrideX: 1, StrideY: 1, StrideC: 1},
		{KeepProbability: 0.7, Seed: 2, StrideX: 1, StrideY: 0, StrideC: 0},
	} {
		mask := d.Mask(shape)
		x := NewTensor[float64](shape.N, shape.C, shape.H, shape.W)
		w := NewTensor[float64](shape.N, shape.C, shape.H, shape.W)
		for i := range x.Data {
			x.Data[i], w.Data[i] = r.NormFloat64(), r.NormFloat64()
		}
		loss := func() float64 {
			y, err := DropoutForward(d, mask, x)
			require.NoError(t, err)
			s := 0.0
			for i, v := range y.Data {
				s += w.Data[i] * v
			}
			return s
		}
		dx, err := DropoutGradient(d, mask, w)
		require.NoError(t, err)
		const h = 1e-4
		for i := range x.Data {
			v := x.Data[i]
			x.Data[i] = v + h
			lp := loss()
			x.Data[i] = v - h
			lm := loss()
			x.Data[i] = v
			require.InDelta(t, (lp-lm)/(2*h), dx.Data[i], 1e-8, "element %d", i)
		}
	}
}

func TestDropoutTorchFormula(t *testing.T) {
	_, drops, err := LoadUpsamplingCases("../testdata/torch/upsampling_cases.json")
	require.NoError(t, err)
	require.NotEmpty(t, drops)
	for _, c := range drops {
		d := c.Dropout
		require.Equal(t, c.Scale, float32(d.Scale()), c.Name)
		s := c.InputShape
		x := Tensor[float32]{N: s[0], C: s[1], H: s[2], W: s[3], Data: c.Input}
		y, err := DropoutForward(d, c.Mask, x)
		require.NoError(t, err, c.Name)
		assert.Equal(t, c.Output, y.Data, c.Name)
		dy := Tensor[float32]{N: s[0], C: s[1], H: s[2], W: s[3], Data: c.GradOutput}
		dx, err := DropoutGradient(d, c.Mask, dy)
		require.NoError(t, err, c.Name)
		assert.Equal(t, c.GradInput, dx.Data, c.Name)
	}
}
