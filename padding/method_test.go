package padding

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The values of MPSNeuralNetworkTypes.h (MPSNNPaddingMethod).
func TestMethodValuesMatchMPS(t *testing.T) {
	for _, c := range []struct {
		m    Method
		want uint32
	}{
		{AlignCentered, 0}, {AlignTopLeft, 1}, {AlignBottomRight, 2}, {AlignMask, 3},
		{AddRemainderToTopLeft, 0}, {AddRemainderToTopRight, 4},
		{AddRemainderToBottomLeft, 8}, {AddRemainderToBottomRight, 12}, {AddRemainderToMask, 12},
		{SizeValidOnly, 0}, {SizeSame, 16}, {SizeFull, 32}, {SizeMask, 0x7f0},
		{CustomWhitelistForNodeFusion, 1 << 13}, {Custom, 1 << 14}, {ExcludeEdges, 1 << 15},
		{Valid, 0}, {Same, 16}, {Full, 32},
	} {
		assert.Equal(t, c.want, uint32(c.m), "%v", c.m)
	}
}

func TestMethodValidate(t *testing.T) {
	for _, m := range []Method{
		0, Same, Full, AlignTopLeft | SizeFull, AlignBottomRight | AddRemainderToBottomLeft,
		Custom | SizeSame | AddRemainderToBottomRight, ExcludeEdges | Custom | CustomWhitelistForNodeFusion,
	} {
		assert.NoError(t, m.Validate(), "%v", m)
	}
	for _, c := range []struct {
		m   Method
		msg string
	}{
		{AlignMask, "padding: method 0x3: reserved align pattern 3"},
		{48, "padding: method 0x30: reserved size pattern 0x30"},
		{64, "padding: method 0x40: reserved size pattern 0x40"},
		{0x400 | SizeSame, "padding: method 0x410: reserved size pattern 0x410"},
		{1 << 11, "padding: method 0x800: unknown bits 0x800"},
		{1<<16 | 1<<31, "padding: method 0x80010000: unknown bits 0x80010000"},
	} {
		err := c.m.Validate()
		require.Error(t, err, "%#x", uint32(c.m))
		assert.True(t, errors.Is(err, ErrInvalidMethod))
		assert.EqualError(t, err, c.msg)
	}
}

func TestMethodString(t *testing.T) {
	for _, c := range []struct {
		m    Method
		want string
	}{
		{0, "SizeValidOnly|AlignCentered|AddRemainderToTopLeft"},
		{SizeSame | AlignCentered | AddRemainderToBottomRight, "SizeSame|AlignCentered|AddRemainderToBottomRight"},
		{SizeFull | AlignTopLeft | AddRemainderToTopRight, "SizeFull|AlignTopLeft|AddRemainderToTopRight"},
		{AlignBottomRight | AddRemainderToBottomLeft, "SizeValidOnly|AlignBottomRight|AddRemainderToBottomLeft"},
		{Custom | ExcludeEdges | CustomWhitelistForNodeFusion,
			"SizeValidOnly|AlignCentered|AddRemainderToTopLeft|Custom|CustomWhitelistForNodeFusion|ExcludeEdges"},
		{AlignMask | 48 | 1<<20, "SizeReserved(0x30)|AlignReserved|AddRemainderToTopLeft|0x100000"},
	} {
		assert.Equal(t, c.want, c.m.String())
	}
}

func TestMethodFields(t *testing.T) {
	m := Custom | SizeFull | AlignBottomRight | AddRemainderToTopRight | ExcludeEdges
	assert.Equal(t, SizeFull, m.Size())
	assert.Equal(t, AlignBottomRight, m.Align())
	assert.Equal(t, AddRemainderToTopRight, m.Remainder())
	assert.Equal(t, StyleFull, m.Style())
	assert.Equal(t, StyleValidOnly, Valid.Style())
	assert.Equal(t, StyleSame, Same.Style())

	// The reverse pass uses the opposite Size; the other bits stay.
	assert.Equal(t, m&^SizeMask|SizeValidOnly, m.Opposite())
	assert.Equal(t, Full|AddRemainderToTopLeft, Valid.Opposite())
	assert.Equal(t, Same|AddRemainderToBottomRight, (Same | AddRemainderToBottomRight).Opposite())
	assert.Equal(t, Method(48), Method(48).Opposite())
	for _, m := range []Method{Valid, Same, Full, m} {
		assert.Equal(t, m, m.Opposite().Opposite())
	}
	assert.Equal(t, "valid-only", StyleValidOnly.String())
	assert.Equal(t, "full", StyleFull.String())
	assert.Equal(t, "Style(7)", Style(7).String())
}
