package ops_test

import (
	"context"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// float32→half rounding: ties to even, overflow to Inf, subnormals, NaN.
func TestFloat16Bits(t *testing.T) {
	f := math.Float32frombits
	for _, tc := range []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000}, {float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff}, {-65504, 0xfbff},
		{0.1, 0x2e66}, {1.0 / 3, 0x3555},
		// 1 + 2^-11 lies halfway between 1 and 1+2^-10: to even (1).
		{1 + 0x1p-11, 0x3c00},
		// 1 + 3*2^-11 lies halfway between 1+2^-10 and 1+2^-9: to even (up).
		{1 + 3*0x1p-11, 0x3c02},
		// Just above and below the halfway point.
		{f(0x3f801001), 0x3c01}, {f(0x3f800fff), 0x3c00},
		// A carry out of the mantissa: 2047/1024 rounds up to 2.
		{2 - 0x1p-11, 0x4000},
		// Overflow: 65519.99 stays at the largest half, 65520 (the midpoint
		// to 65536) rounds to even, beyond the range: Inf.
		{65519.99, 0x7bff}, {65520, 0x7c00}, {-70000, 0xfc00}, {1e30, 0x7c00},
		{float32(math.Inf(1)), 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		// Subnormals: 2^-24 is the smallest; 2^-25 is the tie with 0 (to even:
		// 0); a hair above rounds up; 3*2^-25 ties to 2*2^-24.
		{0x1p-24, 0x0001}, {0x1p-25, 0x0000}, {f(0x33000001), 0x0001}, {3 * 0x1p-25, 0x0002},
		{0x1p-14, 0x0400}, {0x1p-14 - 0x1p-24, 0x03ff}, {-0x1p-20, 0x8010},
		// The largest subnormal plus half an ulp ties up to the smallest normal.
		{0x1p-14 - 0x1p-25, 0x0400},
		{0x1p-26, 0x0000}, {-0x1p-26, 0x8000}, {f(0x00000001), 0x0000}, // a float32 subnormal
		// NaN stays NaN with its sign and top payload bits; a payload in the
		// low bits only becomes the quiet NaN.
		{f(0x7fc00000), 0x7e00}, {f(0xffc00000), 0xfe00}, {f(0x7f802000), 0x7c01}, {f(0x7f800001), 0x7e00},
	} {
		assert.Equal(t, tc.want, ops.Float16Bits(tc.in), "%g (%#08x)", tc.in, math.Float32bits(tc.in))
	}
}

// Every half survives Float16FromBits then Float16Bits bit for bit, and
// Float16FromBits agrees with the binary16 definition.
func TestFloat16RoundTripExhaustive(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		v := ops.Float16FromBits(h)
		require.Equal(t, h, ops.Float16Bits(v), "half %#04x -> %g", h, v)
		exp, man := int(h>>10&0x1f), float64(h&0x3ff)
		var want float64
		switch {
		case exp == 0x1f && man != 0:
			require.True(t, math.IsNaN(float64(v)), "half %#04x", h)
			continue
		case exp == 0x1f:
			want = math.Inf(1)
		case exp == 0:
			want = man * 0x1p-24
		default:
			want = (1 + man/1024) * math.Ldexp(1, exp-15)
		}
		if h&0x8000 != 0 {
			want = -want
		}
		require.Equal(t, want, float64(v), "half %#04x", h)
		require.Equal(t, h&0x8000 != 0, math.Signbit(float64(v)), "half %#04x", h)
	}
}

// Float16Bits against an independent rounding: the nearest of all finite
// halves (ties to the even bit pattern), over random float32 bit patterns
// and every midpoint between neighbouring halves.
func TestFloat16BitsNearest(t *testing.T) {
	var halves []float64 // the finite non-negative halves, ascending (index = bits)
	for h := 0; h <= 0x7bff; h++ {
		halves = append(halves, float64(ops.Float16FromBits(uint16(h))))
	}
	halves = append(halves, 65536) // bits 0x7c00 (Inf): where rounding past the largest half goes
	nearest := func(x float32) uint16 {
		a := math.Abs(float64(x))
		var sign uint16
		if math.Signbit(float64(x)) {
			sign = 0x8000
		}
		if a >= 65520 { // the midpoint between 65504 and 2^16
			return sign | 0x7c00
		}
		i := sort.SearchFloat64s(halves, a) // halves[i-1] < a <= halves[i]
		if i == 0 {
			return sign
		}
		lo, hi := halves[i-1], halves[i]
		switch {
		case a-lo < hi-a:
			return sign | uint16(i-1)
		case a-lo > hi-a:
			return sign | uint16(i)
		case (i-1)%2 == 0:
			return sign | uint16(i-1)
		}
		return sign | uint16(i)
	}
	r := rand.New(rand.NewSource(16))
	check := func(x float32) {
		if math.IsNaN(float64(x)) {
			return
		}
		require.Equal(t, nearest(x), ops.Float16Bits(x), "%g (%#08x)", x, math.Float32bits(x))
	}
	for i := 0; i < 200000; i++ {
		check(math.Float32frombits(r.Uint32()))
		check(float32(r.NormFloat64() * math.Pow(2, float64(r.Intn(40)-25))))
	}
	for i := 1; i < len(halves)-1; i++ {
		mid := float32((halves[i-1] + halves[i]) / 2) // exact in float32
		check(mid)
		check(-mid)
		check(math.Nextafter32(mid, 0))
		check(math.Nextafter32(mid, 1e9))
	}
}

// Write converts to half and Read back exactly; WriteFloat16 and
// ReadFloat16 move bits; the kernels' own loads and stores (a 1x1 max pool)
// keep all 65536 halves, NaNs as NaNs.
func TestFloat16ImageRoundTrip(t *testing.T) {
	dev := vktest.Open(t)
	requireHalf(t, dev)
	ctx := context.Background()
	d := padding.Descriptor{N: 1, C: 1, H: 256, W: 256}
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	im := newHalfImage(t, dev, d, nil)
	assert.Equal(t, ops.Float16, im.Format())
	assert.Equal(t, ops.Float16, im.Descriptor().Format)
	assert.Contains(t, im.String(), "float16")
	require.NoError(t, im.WriteFloat16(ctx, all))
	bits, err := im.ReadFloat16(ctx)
	require.NoError(t, err)
	require.Equal(t, all, bits)
	vals, err := im.Read(ctx)
	require.NoError(t, err)
	for i, v := range vals {
		require.Equal(t, math.Float32bits(ops.Float16FromBits(uint16(i))), math.Float32bits(v), "half %#04x", i)
	}
	require.NoError(t, im.WriteFloat16(ctx, make([]uint16, len(all))))
	require.NoError(t, im.Write(ctx, vals))
	bits, err = im.ReadFloat16(ctx)
	require.NoError(t, err)
	require.Equal(t, all, bits)

	// Through a shader: load, compare in float32, store.
	k, err := ops.NewPoolingMax(dev, 1, 1, 1, 1)
	require.NoError(t, err)
	out := newHalfImage(t, dev, d, nil)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return k.Encode(cb, im, out) }))
	bits, err = out.ReadFloat16(ctx)
	require.NoError(t, err)
	for i, h := range bits {
		if isNaN16(uint16(i)) {
			require.True(t, isNaN16(h), "half %#04x became %#04x", i, h)
			continue
		}
		require.Equal(t, uint16(i), h, "half %#04x", i)
	}

	// Odd lengths and odd offsets: a 1x3x1x1 image, its middle channel.
	odd := newHalfImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, []float32{1, 2, 3})
	mid, err := odd.ChannelView(1, 1)
	require.NoError(t, err)
	require.NoError(t, mid.Write(ctx, []float32{-0.1}))
	got, err := odd.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, ops.Float16FromBits(ops.Float16Bits(-0.1)), 3}, got)
	h, err := mid.ReadFloat16(ctx)
	require.NoError(t, err)
	assert.Equal(t, []uint16{0xae66}, h)
}

// Fill and Copy on float16 images and views whose runs start and end in
// the middle of a word leave the neighbouring values alone; Copy between
// formats is refused.
func TestFloat16FillAndCopy(t *testing.T) {
	dev := vktest.Open(t)
	requireHalf(t, dev)
	ctx := context.Background()
	d := padding.Descriptor{N: 2, C: 3, H: 3, W: 3} // 9-value planes: views at odd offsets
	r := rand.New(rand.NewSource(17))
	a := newHalfImage(t, dev, d, randomData(r, 54))
	before, err := a.Read(ctx)
	require.NoError(t, err)
	view, err := a.ChannelView(1, 1)
	require.NoError(t, err)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return ops.Fill(cb, view, 0.1) }))
	got, err := a.Read(ctx)
	require.NoError(t, err)
	tenth := ops.Float16FromBits(ops.Float16Bits(0.1))
	for i, v := range got {
		want := before[i]
		if i/9%3 == 1 {
			want = tenth
		}
		require.Equal(t, want, v, "value %d", i)
	}
	// Copy a's channels 0..1 into b's channels 1..2.
	b := newHalfImage(t, dev, d, filled(54, 7))
	src, err := a.ChannelView(0, 2)
	require.NoError(t, err)
	dst, err := b.ChannelView(1, 2)
	require.NoError(t, err)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return ops.Copy(cb, src, dst) }))
	gotB, err := b.Read(ctx)
	require.NoError(t, err)
	for n := 0; n < 2; n++ {
		assert.Equal(t, filled(9, 7), gotB[n*27:n*27+9])
		assert.Equal(t, got[n*27:n*27+18], gotB[n*27+9:n*27+27])
	}
	// Formats do not mix.
	f32 := newImage(t, dev, d, nil)
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	err = ops.Copy(cb, a, f32)
	require.ErrorIs(t, err, ops.ErrFormat)
	assert.Contains(t, err.Error(), "float16")
	assert.Contains(t, err.Error(), "float32")
}

func isNaN16(h uint16) bool { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 }
