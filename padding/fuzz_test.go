package padding

import (
	"errors"
	"math"
	"math/big"
	"testing"
)

// The fuzz target compares Method.Axis, Method.ReverseAxis and
// ExplicitAxis with the SPEC formulas evaluated exactly in math/big, for
// any int input: a result must match the exact value, ErrOverflow must
// mean that an intermediate of the formula does not fit in an int, and
// the window invariants must hold. Plain `go test` runs the f.Add corpus
// (and testdata/fuzz/FuzzAxis, if present).

func bn(x int) *big.Int { return big.NewInt(int64(x)) }

var (
	bigMaxInt = bn(math.MaxInt)
	bigMinInt = bn(math.MinInt)
)

func fits(x *big.Int) bool { return x.Cmp(bigMinInt) >= 0 && x.Cmp(bigMaxInt) <= 0 }

func badd(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) }
func bsub(a, b *big.Int) *big.Int { return new(big.Int).Sub(a, b) }
func bmul(a, b *big.Int) *big.Int { return new(big.Int).Mul(a, b) }

// bfloor is floor(a/b) for b > 0 (big.Int.Div is Euclidean).
func bfloor(a, b *big.Int) *big.Int { return new(big.Int).Div(a, b) }

// bceil is ceil(a/b) for b > 0.
func bceil(a, b *big.Int) *big.Int { return new(big.Int).Neg(bfloor(new(big.Int).Neg(a), b)) }

var one = bn(1)

// exact is one axis evaluated exactly: the result, and the effective
// window, source size and stride the windows step over (upsampled source
// and stride 1 for a reverse filter).
type exact struct {
	dst, before, after, offset, ke, src, stride *big.Int
}

// exactAxis evaluates the SPEC formulas exactly, or returns the sentinel
// the implementation must return, checking in the implementation's order.
func exactAxis(m Method, d Dim, src, k, s, dil int, reverse bool) (exact, error) {
	if k < 1 || s < 1 || dil < 1 || src < 1 {
		return exact{}, ErrInvalidGeometry
	}
	if m.Validate() != nil {
		return exact{}, ErrInvalidMethod
	}
	ke := badd(bmul(bn(k-1), bn(dil)), one)
	if !fits(ke) {
		return exact{}, ErrOverflow
	}
	S, st := bn(src), bn(s)
	if reverse {
		S = badd(bmul(bn(src-1), st), one)
		if !fits(S) {
			return exact{}, ErrOverflow
		}
		st = one
	}
	n := badd(S, bmul(bn(int(m.Style())), bsub(ke, one)))
	if !fits(n) {
		return exact{}, ErrOverflow
	}
	dst := bceil(n, st)
	if dst.Cmp(one) < 0 {
		return exact{}, ErrEmptyDestination
	}
	readSize := badd(bmul(bsub(dst, one), st), ke)
	if !fits(readSize) {
		return exact{}, ErrOverflow
	}
	extra := bsub(readSize, S)
	var before *big.Int
	switch m.Align() {
	case AlignCentered:
		r := 1
		if d == X && m&AddRemainderToTopRight != 0 || d == Y && m&AddRemainderToBottomLeft != 0 {
			r = 0
		}
		e := extra
		if e.Sign() < 0 {
			e = bn(0)
		}
		before = bfloor(badd(e, bn(r)), bn(2))
	case AlignTopLeft:
		before = bn(0)
	case AlignBottomRight:
		before = extra
	}
	return exact{
		dst: dst, before: before, after: bsub(extra, before),
		offset: bsub(bfloor(ke, bn(2)), before), ke: ke, src: S, stride: st,
	}, nil
}

func exactExplicit(src, k, s, dil, before, after int, ceil bool) (exact, error) {
	if k < 1 || s < 1 || dil < 1 || src < 1 || before < 0 || after < 0 {
		return exact{}, ErrInvalidGeometry
	}
	ke := badd(bmul(bn(k-1), bn(dil)), one)
	if !fits(ke) {
		return exact{}, ErrOverflow
	}
	S, st, B := bn(src), bn(s), bn(before)
	span := bsub(badd(badd(S, B), bn(after)), ke)
	if !fits(span) {
		return exact{}, ErrOverflow
	}
	q := bfloor(span, st)
	if ceil {
		q = bceil(span, st)
	}
	dst := badd(q, one)
	if !fits(dst) {
		return exact{}, ErrOverflow
	}
	if ceil && bmul(bsub(dst, one), st).Cmp(badd(S, B)) >= 0 {
		dst = bsub(dst, one)
	}
	if dst.Cmp(one) < 0 {
		return exact{}, ErrEmptyDestination
	}
	return exact{
		dst: dst, before: B, after: bn(after),
		offset: bsub(bfloor(ke, bn(2)), B), ke: ke, src: S, stride: st,
	}, nil
}

// check compares got with want exactly and checks the window invariants
// of m's Size (only the first-tap rule for explicit pads).
func (want exact) check(t *testing.T, got Axis, m Method, explicit bool) {
	t.Helper()
	for _, c := range []struct {
		name string
		got  int
		want *big.Int
	}{{"dst", got.Dst, want.dst}, {"offset", got.Offset, want.offset},
		{"before", got.Before, want.before}, {"after", got.After, want.after}} {
		if !fits(c.want) || bn(c.got).Cmp(c.want) != 0 {
			t.Fatalf("%s = %d, exact %v", c.name, c.got, c.want)
		}
	}
	// Extents of the first and last windows; windows step by stride, so
	// these two bound them all.
	first := new(big.Int).Neg(want.before)
	last := bsub(bmul(bsub(want.dst, one), want.stride), want.before)
	firstEnd, lastEnd := badd(first, want.ke), badd(last, want.ke)
	zero := bn(0)
	if bsub(want.offset, bfloor(want.ke, bn(2))).Cmp(first) != 0 {
		t.Fatalf("first tap %v, want -before %v", bsub(want.offset, bfloor(want.ke, bn(2))), first)
	}
	if explicit {
		return
	}
	switch m.Size() {
	case SizeValidOnly:
		if first.Cmp(zero) < 0 || lastEnd.Cmp(want.src) > 0 {
			t.Fatalf("valid-only windows [%v, %v) leave the image of %v", first, lastEnd, want.src)
		}
	case SizeSame:
		if want.dst.Cmp(bceil(want.src, want.stride)) != 0 {
			t.Fatalf("same: dst %v != ceil(%v/%v)", want.dst, want.src, want.stride)
		}
	case SizeFull:
		if m.Align() != AlignCentered {
			return
		}
		if firstEnd.Cmp(zero) <= 0 || last.Cmp(want.src) >= 0 {
			t.Fatalf("full: a window misses the image: first ends %v, last starts %v, src %v", firstEnd, last, want.src)
		}
		if want.stride.Cmp(want.ke) <= 0 && (first.Cmp(zero) > 0 || lastEnd.Cmp(want.src) < 0) {
			t.Fatalf("full: windows [%v, %v) do not cover [0, %v)", first, lastEnd, want.src)
		}
	}
}

func sentinel(err error) error {
	for _, s := range []error{ErrInvalidGeometry, ErrInvalidMethod, ErrEmptyDestination, ErrOverflow} {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}

func FuzzAxis(f *testing.F) {
	add := func(src, k, s, d int, m Method, before, after int, ceil bool) {
		f.Add(src, k, s, d, uint32(m), before, after, ceil)
	}
	add(5, 3, 2, 1, SizeSame|AddRemainderToBottomRight, 1, 1, false)
	add(6, 1, 2, 1, SizeSame|AddRemainderToBottomRight, 0, 0, true)
	add(9, 2, 1, 3, Full|AlignTopLeft, 1, 0, true)
	add(8, 3, 2, 1, Valid|AlignBottomRight, 0, 2, false)
	add(4, 3, 1, 1, Full|AddRemainderToTopRight, 3, 3, true)
	add(112, 3, 2, 1, SizeSame|AddRemainderToBottomLeft, 1, 1, true)
	add(2, 3, 1, 1, Valid, 0, 0, false)         // empty
	add(0, 0, 0, 0, AlignMask|48, -1, -1, true) // invalid everything
	add(1, 1, 1, 1, 1<<20, 0, 0, false)         // unknown bit
	add(math.MaxInt, 2, 1, 1, Full, math.MaxInt, 1, true)
	add(math.MaxInt, math.MaxInt, math.MaxInt, math.MaxInt, Same, 0, 0, true)
	add(math.MaxInt-1, 1, math.MaxInt, 1, Full|AlignBottomRight, 0, math.MaxInt, false)
	add(3, 1<<40, 1, 1<<30, Full, 0, 0, false)        // ke overflows
	add(1<<62, 2, 1<<62, 1, Same, 1<<62, 1<<62, true) // reverse upsampling overflows
	add(math.MinInt, math.MinInt, -1, -1, Full, math.MinInt, math.MinInt, true)
	f.Fuzz(func(t *testing.T, src, k, s, dil int, method uint32, before, after int, ceil bool) {
		m := Method(method)
		_ = m.String()
		fuzzAxis(t, m, src, k, s, dil, before, after, ceil)
		// The same input folded into small valid geometry, where most
		// real images are, also compared with PyTorch's formula.
		fold := func(x, n int) int { return int(uint(x) % uint(n)) }
		m = m&(AddRemainderToMask|Custom|ExcludeEdges) | Method(fold(int(m), 3)) | Method(fold(int(m>>4), 3))<<4
		src, k, s, dil = 1+fold(src, 64), 1+fold(k, 8), 1+fold(s, 6), 1+fold(dil, 4)
		before, after = fold(before, 5), fold(after, 5)
		fuzzAxis(t, m, src, k, s, dil, before, after, ceil)
		a, err := ExplicitAxis(X, src, k, s, dil, before, after, ceil)
		if want := torchOut(src, k, before, after, s, dil, ceil); want >= 1 && (err != nil || a.Dst != want) {
			t.Fatalf("explicit %v, %v; PyTorch %d", a, err, want)
		}
	})
}

func fuzzAxis(t *testing.T, m Method, src, k, s, dil, before, after int, ceil bool) {
	t.Helper()
	for _, d := range []Dim{X, Y} {
		for _, reverse := range []bool{false, true} {
			var got Axis
			var err error
			if reverse {
				got, err = m.ReverseAxis(d, src, k, s, dil)
			} else {
				got, err = m.Axis(d, src, k, s, dil)
			}
			want, werr := exactAxis(m, d, src, k, s, dil, reverse)
			if werr != nil {
				if sentinel(err) != werr {
					t.Fatalf("%v reverse %v: err %v, want %v", d, reverse, err, werr)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%v reverse %v: unexpected %v", d, reverse, err)
			}
			want.check(t, got, m, false)
		}
		got, err := ExplicitAxis(d, src, k, s, dil, before, after, ceil)
		want, werr := exactExplicit(src, k, s, dil, before, after, ceil)
		if werr != nil {
			if sentinel(err) != werr {
				t.Fatalf("explicit %v: err %v, want %v", d, err, werr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("explicit %v: unexpected %v", d, err)
		}
		want.check(t, got, 0, true)
	}
}
