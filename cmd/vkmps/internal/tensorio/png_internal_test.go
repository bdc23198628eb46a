package tensorio

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGridTooLarge checks the PNG size guard without allocating the
// tensor it guards against.
func TestGridTooLarge(t *testing.T) {
	g, err := newGrid(Tensor{N: 1, C: 2, H: 8191, W: 8192}, 2)
	require.NoError(t, err)
	assert.Equal(t, [2]int{2*8192 + 1, 8191}, [2]int{g.width, g.height}, "16385 x 8191 <= 1<<27")

	_, err = newGrid(Tensor{N: 1, C: 2, H: 8192, W: 8193}, 2)
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.EqualError(t, err, "a PNG of (1, 2, 8192, 8193) is more than 134217728 pixels: write .npy instead")

	_, err = newGrid(Tensor{N: 1 << 40, C: 1 << 20, H: 1 << 20, W: 1 << 20}, 1<<20)
	assert.ErrorIs(t, err, ErrTooLarge, "no int overflow")
}
