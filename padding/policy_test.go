package padding

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func kernel(k, s int) Kernel {
	return Kernel{Name: "PoolingAverage", KernelW: k, KernelH: k, StrideX: s, StrideY: s, DilationX: 1, DilationY: 1}
}

func TestResolvePresets(t *testing.T) {
	src := []Descriptor{{N: 1, C: 2, H: 5, W: 6}}
	k := kernel(3, 2)
	k.ZeroPad = Pads{1, 1, 1, 1} // a kernel's current setting, kept by plain methods

	// TF SAME: H 5 -> 3 (pad 1,1), W 6 -> 3 (pad 0,1).
	same := Result{
		Dest: Descriptor{1, 2, 3, 3}, OffsetX: 1, OffsetY: 0,
		EdgeMode: EdgeZero, ZeroPad: k.ZeroPad, Pads: Pads{Top: 1, Left: 0, Bottom: 1, Right: 1},
	}
	// TF VALID: H 5 -> 2 (reads 0..4), W 6 -> 2 (reads 0..4, pixel 5 unread).
	valid := Result{
		Dest: Descriptor{1, 2, 2, 2}, OffsetX: 1, OffsetY: 1,
		EdgeMode: EdgeZero, ZeroPad: k.ZeroPad, Pads: Pads{Top: 0, Left: 0, Bottom: 0, Right: -1},
	}
	clamp := func(r Result) Result { r.EdgeMode, r.ZeroPad = EdgeClamp, Pads{}; return r }
	for _, c := range []struct {
		p      Policy
		label  string
		method Method
		want   Result
	}{
		{TensorFlowSame(), "tensorflow-same", SizeSame | AddRemainderToBottomRight, same},
		{WithMethod(SizeSame | AddRemainderToBottomRight), "SizeSame|AlignCentered|AddRemainderToBottomRight",
			SizeSame | AddRemainderToBottomRight, same},
		{TensorFlowValid(), "tensorflow-valid", SizeValidOnly, valid},
		{WithMethod(Valid), "valid", Valid, valid},
		{TensorFlowAveragePooling(), "tensorflow-average-pooling",
			Custom | SizeSame | AddRemainderToBottomRight, clamp(same)},
		{TensorFlowAveragePoolingValidOnly(), "tensorflow-average-pooling-valid-only", Custom, clamp(valid)},
	} {
		assert.Equal(t, c.label, c.p.Label())
		assert.Equal(t, c.method, c.p.Method(), c.label)
		r, err := Resolve(c.p, src, nil, k)
		require.NoError(t, err, c.label)
		assert.Equal(t, c.want, r, c.label)
	}
	assert.Equal(t, "same", WithMethod(Same).Label())
	assert.Equal(t, "full", WithMethod(Full).Label())

	// The ExcludeEdges bit reaches the result; Same pads 1 on each side.
	r, err := Resolve(WithMethod(Same|ExcludeEdges), src, nil, kernel(3, 1))
	require.NoError(t, err)
	assert.True(t, r.ExcludeEdges)
	assert.Equal(t, Pads{1, 1, 1, 1}, r.Pads)
	assert.Equal(t, Descriptor{1, 2, 5, 6}, r.Dest)
}

func TestResolveReverseKernel(t *testing.T) {
	k := kernel(3, 2)
	k.Reverse = true
	for _, m := range []Method{Valid, Same, Full} {
		r, err := Resolve(WithMethod(m), []Descriptor{{1, 1, 4, 5}}, nil, k)
		require.NoError(t, err)
		h, _ := DestSizeReverse(4, 2, 3, m.Style())
		w, _ := DestSizeReverse(5, 2, 3, m.Style())
		assert.Equal(t, Descriptor{1, 1, h, w}, r.Dest, "%v", m)
	}
	_, err := Resolve(Explicit(Pads{}, false, false), []Descriptor{{1, 1, 4, 5}}, nil, k)
	assert.ErrorIs(t, err, ErrInvalidGeometry)
}

func TestExplicitPolicy(t *testing.T) {
	src := []Descriptor{{N: 2, C: 3, H: 5, W: 6}}
	p := Pads{Top: 1, Left: 0, Bottom: 1, Right: 1}
	k := kernel(2, 2)
	k.EdgeMode = EdgeZero
	r, err := Resolve(Explicit(p, true, true), src, nil, k)
	require.NoError(t, err)
	// H: ceil((5+2-2)/2)+1 = 4, last window would start at 6 >= 5+1: 3.
	// W: ceil((6+1-2)/2)+1 = 4, last window starts at 6 >= 6+0: 3.
	assert.Equal(t, Result{
		Dest: Descriptor{2, 3, 3, 3}, OffsetX: 1, OffsetY: 0,
		EdgeMode: EdgeClamp, ZeroPad: p, Pads: p,
	}, r)
	assert.Equal(t, "explicit(1,0,1,1) ceil count-include-pad", Explicit(p, true, true).Label())
	assert.Equal(t, "explicit(1,0,1,1)", Explicit(p, false, false).Label())
	assert.Equal(t, Custom, Explicit(p, false, false).Method())

	r, err = Resolve(Explicit(p, false, false), src, nil, k)
	require.NoError(t, err)
	assert.Equal(t, Descriptor{2, 3, 3, 3}, r.Dest)
	assert.Equal(t, Pads{}, r.ZeroPad)
	assert.Equal(t, EdgeClamp, r.EdgeMode)

	// The suggestion for Custom may be empty: a 2-pixel image with a
	// 3-wide window has no ValidOnly output, but pads make one.
	r, err = Resolve(Explicit(Pads{1, 1, 1, 1}, false, true), []Descriptor{{1, 1, 2, 2}}, nil, kernel(3, 1))
	require.NoError(t, err)
	assert.Equal(t, Descriptor{1, 1, 2, 2}, r.Dest)

	_, err = Resolve(Explicit(Pads{Top: 0, Left: 0, Bottom: 0, Right: -1}, false, false), src, nil, k)
	require.ErrorIs(t, err, ErrInvalidGeometry)
	assert.EqualError(t, err, "padding: PoolingAverage explicit(0,0,0,-1): pad right -1 < 0")
}

func TestCaffePolicy(t *testing.T) {
	p := Caffe(1, 2)
	assert.Equal(t, "caffe(1,2)", p.Label())
	assert.Equal(t, Custom|ExcludeEdges, p.Method())
	r, err := Resolve(p, []Descriptor{{1, 4, 7, 8}}, nil, kernel(3, 2))
	require.NoError(t, err)
	// H: ceil((7+2-3)/2)+1 = 4; W: ceil((8+4-3)/2)+1 = 6, last window
	// would start at 10 >= 8+2: 5.
	pads := Pads{Top: 1, Left: 2, Bottom: 1, Right: 2}
	assert.Equal(t, Result{
		Dest: Descriptor{1, 4, 4, 5}, OffsetX: -1, OffsetY: 0,
		EdgeMode: EdgeClamp, ZeroPad: pads, Pads: pads, ExcludeEdges: true,
	}, r)
	_, err = Resolve(Caffe(-1, 0), []Descriptor{{1, 1, 4, 4}}, nil, kernel(3, 2))
	assert.ErrorIs(t, err, ErrInvalidGeometry)
}

type sizeState Descriptor

func (s sizeState) SourceDescriptor() Descriptor { return Descriptor(s) }

func TestInverse(t *testing.T) {
	k := kernel(3, 2)
	fwd := TensorFlowSame()
	inv := Inverse(fwd)
	assert.Equal(t, "inverse(tensorflow-same)", inv.Label())
	assert.Equal(t, Custom|SizeSame|AddRemainderToBottomRight, inv.Method())
	assert.Equal(t, Custom|SizeFull, Inverse(WithMethod(Valid)).Method())

	// 7 and 8 both pool to 4 under TF SAME 3/2: the state decides.
	g := []Descriptor{{N: 2, C: 3, H: 4, W: 4}}
	for _, size := range []int{7, 8} {
		f, err := Resolve(fwd, []Descriptor{{2, 3, size, size}}, nil, k)
		require.NoError(t, err)
		require.Equal(t, 4, f.Dest.H)
		st := []State{"unrelated", sizeState{N: 9, C: 9, H: size, W: size}}
		r, err := Resolve(inv, g, st, k)
		require.NoError(t, err)
		want := f
		want.Dest = Descriptor{2, 3, size, size}
		assert.Equal(t, want, r, "size %d", size)
	}
	// Without a state: the opposite Size (Same) reverse size, 7.
	r, err := Resolve(inv, g, nil, k)
	require.NoError(t, err)
	assert.Equal(t, Descriptor{2, 3, 7, 7}, r.Dest)
	// Reverse flag on the gradient kernel does not change the answer.
	k.Reverse = true
	r2, err := Resolve(inv, g, nil, k)
	require.NoError(t, err)
	assert.Equal(t, r, r2)
	k.Reverse = false

	// A state that does not match the gradient is an error.
	_, err = Resolve(inv, g, []State{sizeState{H: 9, W: 7}}, k)
	require.ErrorIs(t, err, ErrInvalidGeometry)
	assert.EqualError(t, err, "padding: PoolingAverage inverse(tensorflow-same): "+
		"gradient source 4x4 does not match the forward destination 5x4 of SizeState 9x7")

	// Valid forward -> Full reverse.
	r, err = Resolve(Inverse(WithMethod(Valid)), []Descriptor{{1, 1, 5, 5}}, nil, kernel(3, 1))
	require.NoError(t, err)
	assert.Equal(t, Descriptor{1, 1, 7, 7}, r.Dest)
	assert.Equal(t, 1, r.OffsetX)

	// Full forward -> Valid reverse: the suggestion may be empty (Custom).
	fullK := kernel(2, 4)
	r, err = Resolve(Inverse(WithMethod(Full)), []Descriptor{{1, 1, 1, 1}}, []State{sizeState{H: 2, W: 2}}, fullK)
	require.NoError(t, err)
	assert.Equal(t, Descriptor{1, 1, 2, 2}, r.Dest)
	_, err = Resolve(Inverse(WithMethod(Full)), []Descriptor{{1, 1, 1, 1}}, nil, fullK)
	assert.ErrorIs(t, err, ErrEmptyDestination)
	assert.EqualError(t, err, "padding: PoolingAverage inverse(full): reverse size: "+
		"destination width 0 < 1 (valid-only: source 1, window 2, stride 1)")

	// Explicit pads: (g-1)*stride + ke - before - after.
	p := Explicit(Pads{1, 1, 1, 1}, false, true)
	f, err := Resolve(p, []Descriptor{{1, 1, 7, 7}}, nil, k)
	require.NoError(t, err)
	r, err = Resolve(Inverse(p), []Descriptor{{1, 1, f.Dest.H, f.Dest.W}}, nil, k)
	require.NoError(t, err)
	assert.Equal(t, Descriptor{1, 1, 7, 7}, r.Dest)
	assert.Equal(t, f.OffsetX, r.OffsetX)
	assert.Equal(t, f.ZeroPad, r.ZeroPad)

	_, err = Resolve(Inverse(nil), g, nil, k)
	assert.ErrorIs(t, err, ErrInvalidMethod)
}

// growTo4 is a custom policy: it rounds the suggested size up to a
// multiple of 4.
type growTo4 struct{}

func (growTo4) Method() Method { return Custom | SizeSame }
func (growTo4) Label() string  { return "grow-to-4" }
func (growTo4) Destination(req Request) (Result, error) {
	r := req.Suggested
	r.Dest.H = (r.Dest.H + 3) &^ 3
	r.Dest.W = (r.Dest.W + 3) &^ 3
	return r, nil
}

// badPolicy returns whatever it is told to.
type badPolicy struct {
	r   Result
	err error
}

func (badPolicy) Method() Method                        { return Same }
func (badPolicy) Label() string                         { return "bad" }
func (p badPolicy) Destination(Request) (Result, error) { return p.r, p.err }

func TestCustomPolicy(t *testing.T) {
	r, err := Resolve(growTo4{}, []Descriptor{{1, 1, 5, 9}}, nil, kernel(3, 1))
	require.NoError(t, err)
	assert.Equal(t, Descriptor{1, 1, 8, 12}, r.Dest)
	assert.Equal(t, 0, r.OffsetX)
}

var errUser = errors.New("user says no")

func TestResolveErrors(t *testing.T) {
	good := kernel(3, 1)
	src := []Descriptor{{1, 1, 5, 5}}
	with := func(f func(*Kernel)) Kernel { k := good; f(&k); return k }
	okResult := Result{Dest: Descriptor{1, 1, 1, 1}}
	for _, c := range []struct {
		name     string
		p        Policy
		src      []Descriptor
		k        Kernel
		sentinel error
		msg      string
	}{
		{"nil policy", nil, src, good, ErrInvalidMethod, "padding: nil policy"},
		{"kernel width", WithMethod(Same), src, with(func(k *Kernel) { k.KernelW = 0 }), ErrInvalidGeometry,
			"padding: PoolingAverage same: kernel width 0 < 1"},
		{"kernel height", WithMethod(Same), src, with(func(k *Kernel) { k.KernelH = -2 }), ErrInvalidGeometry,
			"padding: PoolingAverage same: kernel height -2 < 1"},
		{"stride x", WithMethod(Same), src, with(func(k *Kernel) { k.StrideX = 0 }), ErrInvalidGeometry,
			"padding: PoolingAverage same: stride x 0 < 1"},
		{"stride y", WithMethod(Same), src, with(func(k *Kernel) { k.StrideY = 0 }), ErrInvalidGeometry,
			"padding: PoolingAverage same: stride y 0 < 1"},
		{"dilation x", WithMethod(Same), src, with(func(k *Kernel) { k.DilationX = 0 }), ErrInvalidGeometry,
			"padding: PoolingAverage same: dilation x 0 < 1"},
		{"dilation y", WithMethod(Same), src, with(func(k *Kernel) { k.DilationY = 0; k.Name = "" }), ErrInvalidGeometry,
			"padding: same: dilation y 0 < 1"},
		{"no source", WithMethod(Same), nil, good, ErrInvalidGeometry, "padding: PoolingAverage same: no source image"},
		{"source batch", WithMethod(Same), []Descriptor{{0, 1, 5, 5}}, good, ErrInvalidGeometry,
			"padding: PoolingAverage same: source 0 batch size 0 < 1"},
		{"source width", WithMethod(Same), []Descriptor{{1, 1, 5, 5}, {1, 1, 5, 0}}, good, ErrInvalidGeometry,
			"padding: PoolingAverage same: source 1 width 0 < 1"},
		{"reserved size", WithMethod(48), src, good, ErrInvalidMethod,
			"padding: PoolingAverage SizeReserved(0x30)|AlignCentered|AddRemainderToTopLeft: method 0x30: reserved size pattern 0x30"},
		{"reserved align", WithMethod(Same | AlignMask), src, good, ErrInvalidMethod, ""},
		{"empty", WithMethod(Valid), []Descriptor{{1, 1, 2, 5}}, good, ErrEmptyDestination,
			"padding: PoolingAverage valid: destination height 0 < 1 (valid-only: source 2, window 3, stride 1)"},
		{"overflow window", WithMethod(Same), src, with(func(k *Kernel) { k.DilationX = math.MaxInt/2 + 1 }), ErrOverflow,
			"padding: PoolingAverage same: window width (3-1)*4611686018427387904+1 overflows int"},
		{"overflow full", WithMethod(Full), []Descriptor{{1, 1, 5, math.MaxInt}}, good, ErrOverflow, ""},
		{"overflow reverse", WithMethod(Same), []Descriptor{{1, 1, 5, math.MaxInt / 2}},
			with(func(k *Kernel) { k.Reverse = true; k.StrideX = 3 }), ErrOverflow, ""},
		{"overflow explicit", Explicit(Pads{Right: math.MaxInt}, false, false), src, good, ErrOverflow, ""},
		{"policy error", badPolicy{err: errUser}, src, good, errUser, "padding: PoolingAverage bad: user says no"},
		{"empty result", badPolicy{r: Result{Dest: Descriptor{1, 1, 0, 1}}}, src, good, ErrEmptyDestination,
			"padding: PoolingAverage bad: destination height 0 < 1"},
		{"edge mode", badPolicy{r: Result{Dest: okResult.Dest, EdgeMode: 7}}, src, good, ErrInvalidGeometry,
			"padding: PoolingAverage bad: edge mode EdgeMode(7) is neither zero nor clamp"},
		{"zero pad", badPolicy{r: Result{Dest: okResult.Dest, ZeroPad: Pads{Left: -1}}}, src, good, ErrInvalidGeometry,
			"padding: PoolingAverage bad: zero pad left -1 < 0"},
		{"negative caffe pad", Caffe(0, -3), src, good, ErrInvalidGeometry,
			"padding: PoolingAverage caffe(0,-3): pad left -3 < 0"},
		{"explicit empty", Explicit(Pads{}, true, false), []Descriptor{{1, 1, 1, 5}}, good, ErrEmptyDestination,
			"padding: PoolingAverage explicit(0,0,0,0) ceil: destination height -1 < 1 (source 1, pad top 0, pad bottom 0, window 3, stride 1)"},
	} {
		r, err := Resolve(c.p, c.src, nil, c.k)
		require.Error(t, err, c.name)
		assert.Equal(t, Result{}, r, c.name)
		assert.ErrorIs(t, err, c.sentinel, c.name)
		if c.msg != "" {
			assert.EqualError(t, err, c.msg, c.name)
		}
	}

	// Errors of the forward pass inside Inverse keep their context.
	_, err := Resolve(Inverse(Explicit(Pads{Top: -1}, false, false)), src, []State{sizeState{H: 7, W: 7}}, good)
	assert.ErrorIs(t, err, ErrInvalidGeometry)
	assert.EqualError(t, err, "padding: PoolingAverage inverse(explicit(-1,0,0,0)): "+
		"forward explicit(-1,0,0,0) on 1x1x7x7: pad top -1 < 0")

	// The per-axis helpers check kernel, stride, dilation, source, in
	// that order, and name the axis and value.
	for _, c := range []struct {
		a   func() (Axis, error)
		msg string
	}{
		{func() (Axis, error) { return Same.Axis(Y, 0, 0, 0, 0) }, "padding: kernel height 0 < 1"},
		{func() (Axis, error) { return Same.Axis(X, 0, 1, 0, 0) }, "padding: stride x 0 < 1"},
		{func() (Axis, error) { return Full.ReverseAxis(Y, 0, 1, 1, 0) }, "padding: dilation y 0 < 1"},
		{func() (Axis, error) { return Valid.Axis(X, 0, 1, 1, 1) }, "padding: source width 0 < 1"},
		{func() (Axis, error) { return Method(48).Axis(X, 1, 1, 1, 1) }, "padding: method 0x30: reserved size pattern 0x30"},
		{func() (Axis, error) { return ExplicitAxis(Y, 5, 3, 1, 1, 0, -2, false) }, "padding: pad bottom -2 < 0"},
	} {
		_, err := c.a()
		assert.EqualError(t, err, c.msg)
	}
	for _, c := range []struct {
		src, stride, window int
		msg                 string
	}{{0, 1, 1, "padding: source size 0 < 1"}, {1, 0, 1, "padding: stride 0 < 1"}, {1, 1, 0, "padding: window 0 < 1"}} {
		_, err := DestSize(c.src, c.stride, c.window, StyleSame)
		assert.EqualError(t, err, c.msg)
		_, err = DestSizeReverse(c.src, c.stride, c.window, StyleSame)
		assert.EqualError(t, err, c.msg)
	}
	_, err = Same.Axis(Y, 5, 0, 1, 1)
	assert.EqualError(t, err, "padding: kernel height 0 < 1")
	_, err = ExplicitAxis(X, 5, 3, 1, 1, -1, 0, false)
	assert.EqualError(t, err, "padding: pad left -1 < 0")
	_, err = EffectiveKernel(3, 0)
	assert.EqualError(t, err, "padding: dilation 0 < 1")
	_, err = DestSize(5, 1, 3, 2)
	assert.ErrorIs(t, err, ErrInvalidMethod)
	ke, err := EffectiveKernel(2, 3)
	require.NoError(t, err)
	assert.Equal(t, 4, ke)
}
