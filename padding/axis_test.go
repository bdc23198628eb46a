package padding

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var tfSameMethod = SizeSame | AlignCentered | AddRemainderToBottomRight

func TestTensorFlowSameTable(t *testing.T) {
	for _, c := range []struct {
		src, k, s, d        int
		out, before, offset int
	}{
		{5, 3, 2, 1, 3, 1, 0},  // pad_total 2
		{6, 3, 2, 1, 3, 0, 1},  // pad_total 1, the odd pixel after
		{7, 2, 1, 1, 7, 0, 1},  // even window: pad 0 before, 1 after
		{6, 1, 2, 1, 3, 0, 0},  // kernel < stride: reads 0, 2, 4
		{10, 3, 3, 2, 4, 2, 0}, // ke 5, pad_total 4
		{1, 4, 1, 1, 1, 1, 1},  // pad_total 3
	} {
		out, before, _ := tfSame(c.src, (c.k-1)*c.d+1, c.s)
		require.Equal(t, []int{c.out, c.before}, []int{out, before}, "reference %+v", c)
		for _, d := range []Dim{X, Y} {
			a, err := tfSameMethod.Axis(d, c.src, c.k, c.s, c.d)
			require.NoError(t, err)
			assert.Equal(t, Axis{Dst: c.out, Offset: c.offset, Before: c.before, After: a.After}, a, "%+v %v", c, d)
		}
	}
	// Sweep.
	for src := 1; src <= 24; src++ {
		for k := 1; k <= 6; k++ {
			for s := 1; s <= 4; s++ {
				for d := 1; d <= 3; d++ {
					ke := (k-1)*d + 1
					out, before, total := tfSame(src, ke, s)
					extra := (out-1)*s + ke - src
					for _, dim := range []Dim{X, Y} {
						a, err := tfSameMethod.Axis(dim, src, k, s, d)
						require.NoError(t, err)
						want := Axis{Dst: out, Offset: ke/2 - before, Before: before, After: extra - before}
						require.Equal(t, want, a, "src %d k %d s %d d %d", src, k, s, d)
						if extra >= 0 {
							require.Equal(t, total-before, a.After)
						}
					}
				}
			}
		}
	}
}

func TestTensorFlowValidTable(t *testing.T) {
	for _, c := range []struct{ src, k, s, d, out int }{
		{5, 3, 2, 1, 2}, {6, 3, 2, 1, 2}, {7, 3, 2, 1, 3}, {3, 3, 1, 1, 1}, {10, 2, 3, 3, 3},
	} {
		require.Equal(t, c.out, tfValid(c.src, (c.k-1)*c.d+1, c.s), "reference %+v", c)
	}
	for src := 1; src <= 24; src++ {
		for k := 1; k <= 6; k++ {
			for s := 1; s <= 4; s++ {
				for d := 1; d <= 3; d++ {
					ke := (k-1)*d + 1
					a, err := Valid.Axis(X, src, k, s, d)
					if src < ke {
						require.ErrorIs(t, err, ErrEmptyDestination)
						continue
					}
					require.NoError(t, err)
					// Windows start at pixel 0 whatever is left over.
					want := Axis{Dst: tfValid(src, ke, s), Offset: ke / 2, Before: 0}
					want.After = (want.Dst-1)*s + ke - src
					require.Equal(t, want, a, "src %d k %d s %d d %d", src, k, s, d)
				}
			}
		}
	}
}

func TestPyTorchOutputSizeTable(t *testing.T) {
	for _, c := range []struct {
		src, k, s, pl, pr, d int
		ceil                 bool
		out                  int
	}{
		{5, 2, 2, 0, 0, 1, false, 2},
		{5, 2, 2, 0, 0, 1, true, 3},
		{5, 2, 2, 1, 1, 1, true, 3}, // ceil gives 4; window 3 would start at 5 = src
		{5, 2, 2, 1, 1, 1, false, 3},
		{4, 1, 2, 0, 0, 1, true, 2}, // ceil gives 3; window 2 would start at 4 = src
		{6, 3, 2, 1, 1, 1, false, 3},
		{6, 3, 2, 1, 1, 1, true, 4},
		{7, 3, 2, 1, 1, 2, false, 3}, // dilation 2: ke 5
		{7, 3, 2, 1, 1, 2, true, 3},
		{112, 3, 2, 1, 1, 1, false, 56},
		{112, 3, 2, 1, 1, 1, true, 57},
		{5, 3, 2, 0, 1, 1, true, 3}, // asymmetric (ONNX)
		{2, 3, 2, 0, 0, 1, true, 1}, // window larger than the image, ceil: one output
		{1, 3, 2, 0, 0, 1, true, 0}, // ... but not 2 pixels larger
	} {
		require.Equal(t, c.out, torchOut(c.src, c.k, c.pl, c.pr, c.s, c.d, c.ceil), "reference %+v", c)
		a, err := ExplicitAxis(Y, c.src, c.k, c.s, c.d, c.pl, c.pr, c.ceil)
		if c.out < 1 {
			require.ErrorIs(t, err, ErrEmptyDestination, "%+v", c)
			continue
		}
		require.NoError(t, err, "%+v", c)
		assert.Equal(t, c.out, a.Dst, "%+v", c)
		assert.Equal(t, ((c.k-1)*c.d+1)/2-c.pl, a.Offset, "%+v", c)
	}
	for src := 1; src <= 20; src++ {
		for k := 1; k <= 5; k++ {
			for s := 1; s <= 4; s++ {
				for d := 1; d <= 3; d++ {
					for pl := 0; pl <= 3; pl++ {
						for pr := 0; pr <= 3; pr++ {
							for _, ceil := range []bool{false, true} {
								want := torchOut(src, k, pl, pr, s, d, ceil)
								a, err := ExplicitAxis(X, src, k, s, d, pl, pr, ceil)
								if want < 1 {
									require.ErrorIs(t, err, ErrEmptyDestination)
									continue
								}
								require.NoError(t, err)
								require.Equal(t, want, a.Dst, "src %d k %d s %d d %d pads %d,%d ceil %v", src, k, s, d, pl, pr, ceil)
								require.Equal(t, Axis{Dst: want, Offset: ((k-1)*d+1)/2 - pl, Before: pl, After: pr}, a)
							}
						}
					}
				}
			}
		}
	}
}

func TestCaffeOutputSizeTable(t *testing.T) {
	for _, c := range []struct{ src, k, s, padH, padW, outH, outW int }{
		{5, 3, 2, 1, 1, 3, 3},
		{112, 3, 2, 0, 0, 56, 56}, // GoogLeNet pool1
		{6, 3, 2, 0, 0, 3, 3},     // ceil: the last window reads past the image
		{4, 1, 2, 0, 0, 3, 3},     // no pad, no last-window rule (Caffe's quirk)
		{4, 1, 2, 0, 1, 2, 3},     // a pad on either axis turns the rule on for both
		{4, 1, 2, 1, 1, 3, 3},
	} {
		require.Equal(t, c.outH, caffeOut(c.src, c.k, c.padH, c.s, c.padH != 0 || c.padW != 0), "reference %+v", c)
		require.Equal(t, c.outW, caffeOut(c.src, c.k, c.padW, c.s, c.padH != 0 || c.padW != 0), "reference %+v", c)
		k := Kernel{KernelW: c.k, KernelH: c.k, StrideX: c.s, StrideY: c.s, DilationX: 1, DilationY: 1}
		r, err := Resolve(Caffe(c.padH, c.padW), []Descriptor{{1, 1, c.src, c.src}}, nil, k)
		require.NoError(t, err, "%+v", c)
		assert.Equal(t, Descriptor{1, 1, c.outH, c.outW}, r.Dest, "%+v", c)
	}
	for src := 1; src <= 20; src++ {
		for k := 1; k <= 5; k++ {
			for s := 1; s <= 4; s++ {
				for ph := 0; ph <= 2; ph++ {
					for pw := 0; pw <= 2; pw++ {
						anyPad := ph != 0 || pw != 0
						wantH, wantW := caffeOut(src, k, ph, s, anyPad), caffeOut(src, k, pw, s, anyPad)
						kk := Kernel{KernelW: k, KernelH: k, StrideX: s, StrideY: s, DilationX: 1, DilationY: 1}
						r, err := Resolve(Caffe(ph, pw), []Descriptor{{2, 3, src, src}}, nil, kk)
						if wantH < 1 || wantW < 1 {
							require.ErrorIs(t, err, ErrEmptyDestination)
							continue
						}
						require.NoError(t, err)
						require.Equal(t, Descriptor{2, 3, wantH, wantW}, r.Dest, "src %d k %d s %d pads %d,%d", src, k, s, ph, pw)
						require.Equal(t, k/2-ph, r.OffsetY)
						require.Equal(t, k/2-pw, r.OffsetX)
					}
				}
			}
		}
	}
}

// taps returns the source positions of the window of destination i.
func taps(a Axis, i, stride, k, d int) []int {
	var p []int
	c := a.Offset + i*stride
	ke := (k-1)*d + 1
	for j := 0; j < k; j++ {
		p = append(p, c-ke/2+j*d)
	}
	return p
}

func TestHandWorkedMPS(t *testing.T) {
	// MaxGradient seed: kernel 2, dilation 3 reads -2 and +1 around the
	// centre; kernel 2 without dilation reads -1 and 0.
	a, err := Same.Axis(X, 9, 2, 1, 3)
	require.NoError(t, err)
	c := a.Offset
	assert.Equal(t, []int{c - 2, c + 1}, taps(a, 0, 1, 2, 3))
	a, err = Same.Axis(X, 9, 2, 1, 1)
	require.NoError(t, err)
	assert.Equal(t, []int{a.Offset - 1, a.Offset}, taps(a, 0, 1, 2, 1))

	// 1x1 stride 2 under TensorFlow SAME reads 0, 2, 4 (5 or 6 pixels).
	for _, src := range []int{5, 6} {
		a, err := tfSameMethod.Axis(X, src, 1, 2, 1)
		require.NoError(t, err)
		assert.Equal(t, 3, a.Dst)
		var got []int
		for i := 0; i < a.Dst; i++ {
			got = append(got, taps(a, i, 2, 1, 1)...)
		}
		assert.Equal(t, []int{0, 2, 4}, got, "src %d", src)
	}

	for _, c := range []struct {
		name           string
		m              Method
		d              Dim
		src, k, s, dil int
		want           Axis
	}{
		// Same, 3x3 stride 1: one pixel each side.
		{"same 3", Same, X, 5, 3, 1, 1, Axis{Dst: 5, Offset: 0, Before: 1, After: 1}},
		// Even window: the odd pixel goes where AddRemainder says, per axis.
		{"TL x", Same | AddRemainderToTopLeft, X, 4, 2, 1, 1, Axis{4, 0, 1, 0}},
		{"TL y", Same | AddRemainderToTopLeft, Y, 4, 2, 1, 1, Axis{4, 0, 1, 0}},
		{"TR x", Same | AddRemainderToTopRight, X, 4, 2, 1, 1, Axis{4, 1, 0, 1}},
		{"TR y", Same | AddRemainderToTopRight, Y, 4, 2, 1, 1, Axis{4, 0, 1, 0}},
		{"BL x", Same | AddRemainderToBottomLeft, X, 4, 2, 1, 1, Axis{4, 0, 1, 0}},
		{"BL y", Same | AddRemainderToBottomLeft, Y, 4, 2, 1, 1, Axis{4, 1, 0, 1}},
		{"BR y", Same | AddRemainderToBottomRight, Y, 4, 2, 1, 1, Axis{4, 1, 0, 1}},
		// Alignment: grid flush with one edge.
		{"align TL", Same | AlignTopLeft, X, 5, 3, 1, 1, Axis{5, 1, 0, 2}},
		{"align BR", Same | AlignBottomRight, X, 5, 3, 1, 1, Axis{5, -1, 2, 0}},
		// ValidOnly, 8 pixels, 3 wide stride 2: 3 outputs read 0..6, pixel 7 unread.
		{"valid centred", Valid, X, 8, 3, 2, 1, Axis{3, 1, 0, -1}},
		{"valid BR", Valid | AlignBottomRight, X, 8, 3, 2, 1, Axis{3, 2, -1, 0}},
		// Full, 4 pixels, 3 wide: 6 outputs, 2 pixels of padding each side.
		{"full", Full, X, 4, 3, 1, 1, Axis{6, -1, 2, 2}},
		{"full s2", Full, X, 4, 3, 2, 1, Axis{3, -1, 2, 1}},
	} {
		a, err := c.m.Axis(c.d, c.src, c.k, c.s, c.dil)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, a, c.name)
	}
}

func TestDestSize(t *testing.T) {
	for _, c := range []struct {
		src, stride, window int
		style               Style
		fwd, rev            int
	}{
		{5, 2, 3, StyleValidOnly, 2, 7},
		{5, 2, 3, StyleSame, 3, 9},
		{5, 2, 3, StyleFull, 4, 11},
		{4, 2, 3, StyleSame, 2, 7},
		{1, 1, 1, StyleValidOnly, 1, 1},
	} {
		got, err := DestSize(c.src, c.stride, c.window, c.style)
		require.NoError(t, err)
		assert.Equal(t, c.fwd, got, "%+v", c)
		got, err = DestSizeReverse(c.src, c.stride, c.window, c.style)
		require.NoError(t, err)
		assert.Equal(t, c.rev, got, "%+v", c)
	}
	_, err := DestSize(2, 1, 3, StyleValidOnly)
	assert.ErrorIs(t, err, ErrEmptyDestination)
	_, err = DestSizeReverse(1, 4, 3, StyleValidOnly)
	assert.ErrorIs(t, err, ErrEmptyDestination)

	// A reverse pass with the opposite Size undoes the forward size.
	for src := 1; src <= 30; src++ {
		for ke := 1; ke <= 7; ke++ {
			for _, st := range []Style{StyleValidOnly, StyleSame, StyleFull} {
				fwd, err := DestSize(src, 1, ke, st)
				if err != nil {
					continue
				}
				back, err := DestSizeReverse(fwd, 1, ke, -st)
				require.NoError(t, err)
				require.Equal(t, src, back, "src %d ke %d %v", src, ke, st)
			}
		}
	}
}

func TestReverseAxis(t *testing.T) {
	// 4 pixels upsampled by 2 is 7; Same keeps 7 and pads 1 each side.
	a, err := Same.ReverseAxis(X, 4, 3, 2, 1)
	require.NoError(t, err)
	assert.Equal(t, Axis{Dst: 7, Offset: 0, Before: 1, After: 1}, a)
	a, err = Full.ReverseAxis(Y, 4, 3, 2, 1)
	require.NoError(t, err)
	assert.Equal(t, Axis{Dst: 9, Offset: -1, Before: 2, After: 2}, a)
	a, err = Valid.ReverseAxis(Y, 4, 3, 2, 1)
	require.NoError(t, err)
	assert.Equal(t, Axis{Dst: 5, Offset: 1, Before: 0, After: 0}, a)
	for _, st := range []Method{Valid, Same, Full} {
		for src := 1; src < 10; src++ {
			a, err := st.ReverseAxis(X, src, 3, 3, 2)
			want, werr := DestSizeReverse(src, 3, 5, st.Style())
			if werr != nil {
				require.ErrorIs(t, err, ErrEmptyDestination)
				continue
			}
			require.NoError(t, err)
			require.Equal(t, want, a.Dst)
		}
	}
}
