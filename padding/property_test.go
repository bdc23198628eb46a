package padding

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// randMethod returns a valid Method with random Align and AddRemainder.
func randMethod(rng *rand.Rand, size Method) Method {
	return size | Method(rng.IntN(3)) | Method(rng.IntN(4))<<2
}

// Window extents are [first tap, last tap + 1); with dilation a window can
// straddle a pixel without a tap on it, so "touch" and "cover" are about
// extents, as MPS's size definitions are.
func TestPropertiesRandomGeometry(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 2026))
	for n := 0; n < 20000; n++ {
		src, k, s, dil := 1+rng.IntN(40), 1+rng.IntN(7), 1+rng.IntN(5), 1+rng.IntN(4)
		ke := (k-1)*dil + 1
		d := Dim(rng.IntN(2))
		msg := func(m Method) []any {
			return []any{"%v %v src %d k %d s %d d %d", m, d, src, k, s, dil}
		}

		// ValidOnly: every window lies wholly inside the image, whatever
		// the alignment.
		m := randMethod(rng, SizeValidOnly)
		a, err := m.Axis(d, src, k, s, dil)
		if src < ke {
			require.ErrorIs(t, err, ErrEmptyDestination, msg(m)...)
		} else {
			require.NoError(t, err, msg(m)...)
			for i := 0; i < a.Dst; i++ {
				b, e := extent(a, i, s, ke)
				require.True(t, b >= 0 && e <= src, msg(m)...)
			}
			// ... and it is the largest such destination.
			_, e := extent(a, a.Dst, s, ke)
			require.Greater(t, e, src, msg(m)...)
		}

		// Same: ceil(src/stride) outputs.
		m = randMethod(rng, SizeSame)
		a, err = m.Axis(d, src, k, s, dil)
		require.NoError(t, err, msg(m)...)
		require.Equal(t, (src+s-1)/s, a.Dst, msg(m)...)

		// Full, centred: every window touches the image, and when the
		// stride does not exceed the window they cover every pixel.
		m = Full | Method(rng.IntN(4))<<2
		a, err = m.Axis(d, src, k, s, dil)
		require.NoError(t, err, msg(m)...)
		covered := make([]bool, src)
		for i := 0; i < a.Dst; i++ {
			b, e := extent(a, i, s, ke)
			require.True(t, e > 0 && b < src, msg(m)...)
			for p := max(b, 0); p < min(e, src); p++ {
				covered[p] = true
			}
		}
		if s <= ke {
			for p, c := range covered {
				require.True(t, c, "pixel %d: %v", p, msg(m))
			}
		}
		// ... and it is the largest such destination.
		b, _ := extent(a, a.Dst, s, ke)
		_, e := extent(a, -1, s, ke)
		require.True(t, b >= src || e <= 0, msg(m)...)

		// Every method: offset = floor(ke/2) - before, before + after = extra.
		m = randMethod(rng, Method(rng.IntN(3))<<4)
		if a, err = m.Axis(d, src, k, s, dil); err == nil {
			require.Equal(t, ke/2-a.Before, a.Offset)
			require.Equal(t, (a.Dst-1)*s+ke-src, a.Before+a.After)
		}

		// Explicit: the first tap of destination 0 is at -before, and in
		// ceil mode with PyTorch's own limit (pads <= ke/2) no window starts
		// in or past the padding after the image. (With larger pads the
		// rule still removes only one window, as PyTorch's does.)
		before, after, ceil := rng.IntN(4), rng.IntN(4), rng.IntN(2) == 1
		a, err = ExplicitAxis(d, src, k, s, dil, before, after, ceil)
		if want := torchOut(src, k, before, after, s, dil, ceil); want < 1 {
			require.ErrorIs(t, err, ErrEmptyDestination)
		} else {
			require.NoError(t, err)
			require.Equal(t, want, a.Dst)
			require.Equal(t, -before, taps(a, 0, s, k, dil)[0])
			if ceil && before <= ke/2 && after <= ke/2 {
				b, _ := extent(a, a.Dst-1, s, ke)
				require.Less(t, b, src, "src %d k %d s %d d %d pads %d,%d %v", src, k, s, dil, before, after, a)
			}
		}
	}
}
