package ref

import (
	"math"
	"math/rand"
)

// Normal returns n values drawn from the standard normal distribution.
func Normal(r *rand.Rand, n int) []float32 {
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(r.NormFloat64())
	}
	return d
}

// PoolingInput returns n source values that exercise a kernel's edge
// cases: normal values, and when max is set (the max kinds, whose
// tie-breaking and NaN rules SPEC.md fixes) a third of the time small
// integers in {-1, 0, 1} (ties among taps, and with the 0 an outside tap
// reads under EdgeZero) and a third of the time normal values with about
// one NaN in 20.
func PoolingInput(r *rand.Rand, max bool, n int) []float32 {
	d := Normal(r, n)
	if !max {
		return d
	}
	switch r.Intn(3) {
	case 0:
		for i := range d {
			d[i] = float32(r.Intn(3) - 1)
		}
	case 1:
		for i := range d {
			if r.Intn(20) == 0 {
				d[i] = float32(math.NaN())
			}
		}
	}
	return d
}
