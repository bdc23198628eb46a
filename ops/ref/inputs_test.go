package ref

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
)

// PoolingInput gives sums plain normal values and the max kinds, over
// draws, inputs with ties in {-1, 0, 1} and inputs with NaNs.
func TestPoolingInput(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		for _, v := range PoolingInput(r, false, 200) {
			assert.False(t, math.IsNaN(float64(v)))
		}
	}
	var ties, nans, plain int
	for i := 0; i < 60; i++ {
		d := PoolingInput(r, true, 200)
		small, nan := true, false
		for _, v := range d {
			nan = nan || math.IsNaN(float64(v))
			small = small && (v == -1 || v == 0 || v == 1)
		}
		switch {
		case small:
			ties++
		case nan:
			nans++
		default:
			plain++
		}
	}
	assert.Positive(t, ties)
	assert.Positive(t, nans)
	assert.Positive(t, plain)
	assert.Len(t, Normal(r, 7), 7)
}
