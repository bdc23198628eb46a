package ref

import (
	"errors"
	"fmt"

	"github.com/vkmps/vkmps/padding"
)

// Errors returned by this package wrap one of these sentinels.
var (
	// ErrGeometry: a Geometry field is out of range (see Geometry.Validate).
	ErrGeometry = errors.New("ref: invalid geometry")
	// ErrShape: a tensor's shape or data length does not fit the call.
	ErrShape = errors.New("ref: invalid shape")
)

// Kind is the pooling kernel a Geometry describes.
type Kind int

const (
	// Max is MPSCNNPoolingMax: the largest tap (dilation allowed).
	Max Kind = iota
	// Average is MPSCNNPoolingAverage: sum of taps / N(x).
	Average
	// L2Norm is MPSCNNPoolingL2Norm: sqrt of the sum of squared taps.
	L2Norm
	// DilatedMax is MPSCNNDilatedPoolingMax; it computes exactly what Max does.
	DilatedMax
)

// String returns "max", "average", "l2norm" or "dilated-max".
func (k Kind) String() string {
	switch k {
	case Max:
		return "max"
	case Average:
		return "average"
	case L2Norm:
		return "l2norm"
	case DilatedMax:
		return "dilated-max"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool { return k >= Max && k <= DilatedMax }

func (k Kind) isMax() bool { return k == Max || k == DilatedMax }

// Clip is the destination region a kernel writes (MPSCNNKernel.clipRect):
// columns [X, X+W), rows [Y, Y+H), batch images [Z, Z+D). A zero size means
// "from the origin to the end of the destination" in that axis, so the zero
// Clip is the whole destination. A region reaching past the destination is
// intersected with it, as MPS does; origins and sizes must not be negative.
type Clip struct{ X, Y, Z, W, H, D int }

// Geometry is everything a pooling kernel and its gradient read besides the
// images: the forward kernel's settings, as a gradient state records them.
// Sizes, strides and dilations must be >= 1 (dilation 1 means none).
type Geometry struct {
	Kind                 Kind
	KernelW, KernelH     int
	StrideX, StrideY     int
	DilationX, DilationY int

	// OffsetX, OffsetY: source position of the window centre of the clip
	// origin; OffsetZ: source image read by destination image Clip.Z (>= 0).
	OffsetX, OffsetY, OffsetZ int

	// EdgeMode: EdgeZero (outside taps read 0) or EdgeClamp (the window
	// shrinks to the image).
	EdgeMode padding.EdgeMode
	// ZeroPad (Average under EdgeClamp, >= 0 per side): padding cells that
	// count in N(x) and contribute 0.
	ZeroPad padding.Pads
	// ExcludeEdges (Average under EdgeZero): N(x) counts only taps inside the
	// padding region given by Pads.
	ExcludeEdges bool
	// Pads: padding before (Top, Left) and after (Bottom, Right) the image,
	// as the padding policy placed it; negative sides count as 0.
	Pads padding.Pads

	// Clip is the destination region written; the zero value is all of it.
	Clip Clip
}

// Validate checks the fields in declaration order and returns the first
// problem, wrapping ErrGeometry. It never panics.
func (g Geometry) Validate() error {
	bad := func(name string, v int, rule string) error {
		return fmt.Errorf("%w: %s = %d, must be %s", ErrGeometry, name, v, rule)
	}
	if !g.Kind.Valid() {
		return fmt.Errorf("%w: unknown kind %v", ErrGeometry, g.Kind)
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"KernelW", g.KernelW}, {"KernelH", g.KernelH},
		{"StrideX", g.StrideX}, {"StrideY", g.StrideY},
		{"DilationX", g.DilationX}, {"DilationY", g.DilationY},
	} {
		if f.v < 1 {
			return bad(f.name, f.v, ">= 1")
		}
	}
	if g.OffsetZ < 0 {
		return bad("OffsetZ", g.OffsetZ, ">= 0")
	}
	if !g.EdgeMode.Valid() {
		return fmt.Errorf("%w: unknown edge mode %v", ErrGeometry, g.EdgeMode)
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"ZeroPad.Top", g.ZeroPad.Top}, {"ZeroPad.Left", g.ZeroPad.Left},
		{"ZeroPad.Bottom", g.ZeroPad.Bottom}, {"ZeroPad.Right", g.ZeroPad.Right},
		{"Clip.X", g.Clip.X}, {"Clip.Y", g.Clip.Y}, {"Clip.Z", g.Clip.Z},
		{"Clip.W", g.Clip.W}, {"Clip.H", g.Clip.H}, {"Clip.D", g.Clip.D},
	} {
		if f.v < 0 {
			return bad(f.name, f.v, ">= 0")
		}
	}
	return nil
}

// region is the resolved clip: destination [x0,x1) x [y0,y1) x [z0,z1).
type region struct{ x0, x1, y0, y1, z0, z1 int }

func (r region) empty() bool { return r.x0 >= r.x1 || r.y0 >= r.y1 || r.z0 >= r.z1 }

// clipAxis resolves one axis of the clip against a destination size.
func clipAxis(origin, size, dst int) (int, int) {
	end := dst
	if size > 0 && origin+size < dst {
		end = origin + size
	}
	if origin > end {
		origin = end
	}
	return origin, end
}

// resolve validates g against the source and destination shapes and returns
// the destination region to compute.
func (g Geometry) resolve(src, dst padding.Descriptor) (region, error) {
	if err := g.Validate(); err != nil {
		return region{}, err
	}
	if src.C != dst.C {
		return region{}, fmt.Errorf("%w: source has %d channels, destination %d", ErrShape, src.C, dst.C)
	}
	var r region
	r.x0, r.x1 = clipAxis(g.Clip.X, g.Clip.W, dst.W)
	r.y0, r.y1 = clipAxis(g.Clip.Y, g.Clip.H, dst.H)
	r.z0, r.z1 = clipAxis(g.Clip.Z, g.Clip.D, dst.N)
	if r.empty() {
		return r, nil
	}
	if last := g.OffsetZ + r.z1 - r.z0; last > src.N {
		return region{}, fmt.Errorf("%w: destination images %d..%d read source images %d..%d, source has %d",
			ErrShape, r.z0, r.z1-1, g.OffsetZ, last-1, src.N)
	}
	return r, nil
}

// axis is the plan of one destination column (or row): first tap position,
// the range [t0,t1) of tap indices inside the image, and the number of taps
// counted in N(x) by average pooling.
type axis struct{ start, t0, t1, n int }

// tapRange returns the tap indices t in [0,k) with lo <= start+t*d < hi, as
// [t0,t1); an empty range is [0,0).
func tapRange(start, d, k, lo, hi int) (int, int) {
	t0 := max(0, ceilDiv(lo-start, d))
	t1 := min(k, ceilDiv(hi-start, d))
	if t1 <= t0 {
		return 0, 0
	}
	return t0, t1
}

// ceilDiv is ceil(a/b) for b > 0 and any sign of a.
func ceilDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a > 0 {
		q++
	}
	return q
}

// planAxis plans destination indices [i0,i1) of one axis: origin is the clip
// origin, offset/stride/k/d the kernel's, src the source size, and count
// gives the axis's factor of N(x) for a window starting at start.
func planAxis(i0, i1, origin, offset, stride, k, d, src int, count func(start int) int) []axis {
	buf := make([]axis, 0, i1-i0)
	ke := (k-1)*d + 1
	for i := i0; i < i1; i++ {
		start := offset + stride*(i-origin) - ke/2
		t0, t1 := tapRange(start, d, k, 0, src)
		buf = append(buf, axis{start: start, t0: t0, t1: t1, n: count(start)})
	}
	return buf
}

// plan returns the per-column and per-row plans of region r for a source of
// height h and width w.
func (g Geometry) plan(r region, h, w int) (xs, ys []axis) {
	cx := g.counter(g.KernelW, g.DilationX, w, g.Pads.Left, g.Pads.Right, g.ZeroPad.Left, g.ZeroPad.Right)
	cy := g.counter(g.KernelH, g.DilationY, h, g.Pads.Top, g.Pads.Bottom, g.ZeroPad.Top, g.ZeroPad.Bottom)
	xs = planAxis(r.x0, r.x1, g.Clip.X, g.OffsetX, g.StrideX, g.KernelW, g.DilationX, w, cx)
	ys = planAxis(r.y0, r.y1, g.Clip.Y, g.OffsetY, g.StrideY, g.KernelH, g.DilationY, h, cy)
	return xs, ys
}

// counter returns the per-axis factor of average pooling's N(x) for a window
// starting at start; N(x) is the product of the two axes' factors.
func (g Geometry) counter(k, d, src, before, after, zeroBefore, zeroAfter int) func(start int) int {
	if g.Kind != Average {
		return func(int) int { return 0 }
	}
	lo, hi := 0, 0
	switch {
	case g.EdgeMode == padding.EdgeClamp:
		lo, hi = -zeroBefore, src+zeroAfter
	case g.ExcludeEdges:
		lo, hi = -max(before, 0), src+max(after, 0)
	default:
		return func(int) int { return k }
	}
	return func(start int) int {
		t0, t1 := tapRange(start, d, k, lo, hi)
		return t1 - t0
	}
}
