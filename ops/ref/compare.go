package ref

import (
	"fmt"
	"math"
)

// SumTolerance is the relative tolerance for kernels that sum (Average,
// L2Norm, forward and gradient) against this reference:
// |got - want| <= SumTolerance * max(1, |want|). It covers float32
// accumulation of up to 15x15 taps of magnitude <= 1 in any order.
const SumTolerance = 2e-5

// Compare checks a kernel's output (forward or gradient) against this
// package's: equal values (==, and NaN matches NaN) for Max and DilatedMax,
// within SumTolerance for Average and L2Norm. It returns nil or an error
// naming the first mismatch and how many values differ.
func Compare[T Float](k Kind, got, want []T) error {
	if len(got) != len(want) {
		return fmt.Errorf("%v: got %d values, want %d", k, len(got), len(want))
	}
	bad, first := 0, -1
	for i := range got {
		if !within(k, float64(got[i]), float64(want[i])) {
			if bad == 0 {
				first = i
			}
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	return fmt.Errorf("%v: %d of %d values differ; first at %d: got %v, want %v",
		k, bad, len(got), first, got[first], want[first])
}

func within(k Kind, got, want float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	if got == want || k.isMax() {
		return got == want
	}
	return math.Abs(got-want) <= SumTolerance*max(1, math.Abs(want))
}
