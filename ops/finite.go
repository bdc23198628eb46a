package ops

import (
	"fmt"
	"math"
)

// finite refuses a NaN or infinite scalar parameter (a loss weight, an
// addition's coefficients): on the GPU it would turn every value it
// scales into NaN or Inf without a word. Data values are not checked:
// they follow IEEE arithmetic (max pooling propagates NaN, a NaN label
// gives a NaN loss), as in MPS and PyTorch.
func finite(label, what string, v float32) error {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return fmt.Errorf("%w: %s: %s %v is not finite", ErrGeometry, label, what, v)
	}
	return nil
}
