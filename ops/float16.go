package ops

import "math"

// Float16Bits returns the IEEE 754 half (binary16) nearest to f, rounding
// ties to even, as its bits: values beyond the half range (|f| >= 65520)
// become ±Inf, values below half the smallest subnormal (2^-25) become ±0,
// subnormals are kept, and a NaN stays a NaN with its sign and the top 10
// bits of its payload (a NaN whose payload lives only in the low bits
// becomes the quiet NaN). Float16 images store these bits.
func Float16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b >> 23 & 0xff)
	man := b & 0x7fffff
	if exp == 0xff { // Inf or NaN
		if man == 0 {
			return sign | 0x7c00
		}
		h := uint16(man >> 13)
		if h == 0 {
			h = 0x200
		}
		return sign | 0x7c00 | h
	}
	e := exp - 127 + 15 // the half's biased exponent
	switch {
	case e >= 0x1f:
		return sign | 0x7c00
	case e >= 1:
		// Normal: 10 of the 23 mantissa bits; a carry out of the mantissa
		// bumps the exponent, up to Inf, which is what rounding wants.
		h := uint32(e)<<10 | man>>13
		if rem := man & 0x1fff; rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
			h++
		}
		return sign | uint16(h)
	case e >= -10:
		// Subnormal half: the value is m * 2^-24 with m = M >> (14-e), M the
		// float's 24-bit significand.
		m := man | 0x800000
		shift := uint(14 - e)
		h := m >> shift
		rem, half := m&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || rem == half && h&1 == 1 {
			h++ // may become 0x400, the smallest normal
		}
		return sign | uint16(h)
	}
	return sign // below 2^-25 (float32 subnormals included)
}

// Float16FromBits returns the float32 value of the half with bits h
// (exactly: every half is a float32); a NaN keeps its sign and payload.
func Float16FromBits(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h >> 10 & 0x1f)
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalise
		e := uint32(127 - 15 + 1)
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}
