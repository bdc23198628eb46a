package ops

import (
	"math/bits"
	"math/rand"
	"testing"
)

// upMagic's divisions equal n/d for numerators below 2^31: every divisor
// up to 4096 against numerators near multiples of it and random ones, and
// random large divisors.
func TestUpMagicDivision(t *testing.T) {
	div := func(n, d uint32) uint32 {
		m, s := upMagic(d)
		hi, _ := bits.Mul32(n, m)
		return (hi + n) >> s
	}
	r := rand.New(rand.NewSource(1))
	check := func(n, d uint32) {
		if n >= 1<<31 {
			return
		}
		if got := div(n, d); got != n/d {
			t.Fatalf("%d / %d: got %d, want %d", n, d, got, n/d)
		}
	}
	for d := uint32(1); d <= 4096; d++ {
		for _, q := range []uint32{0, 1, 2, 1000, (1<<31 - 1) / d} {
			for _, off := range []int64{-1, 0, 1, int64(d) - 1} {
				if n := int64(q)*int64(d) + off; n >= 0 {
					check(uint32(n), d)
				}
			}
		}
		for k := 0; k < 50; k++ {
			check(uint32(r.Int31()), d)
		}
	}
	for k := 0; k < 100000; k++ {
		check(uint32(r.Int31()), uint32(r.Int31n(1<<31-1))+1)
	}
	check(1<<31-1, 1<<31-1)
}
