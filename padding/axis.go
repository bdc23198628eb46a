package padding

import (
	"fmt"
	"math/bits"
)

// Dim names an image axis: X is the width (columns), Y the height (rows).
// The axis matters only for the AddRemainder bits, which treat x (left or
// right) and y (top or bottom) separately.
type Dim int

const (
	X Dim = iota
	Y
)

// String returns "x" or "y".
func (d Dim) String() string {
	if d == Y {
		return "y"
	}
	return "x"
}

// size names the image extent along d in messages.
func (d Dim) size() string {
	if d == Y {
		return "height"
	}
	return "width"
}

// sides names the pads before and after the image along d.
func (d Dim) sides() (before, after string) {
	if d == Y {
		return "top", "bottom"
	}
	return "left", "right"
}

// Axis is the padding decision for one axis.
//
// Destination pixel i reads the window whose centre is Offset + i*stride;
// its first tap is at i*stride - Before and taps step by the dilation over
// ke = (kernel-1)*dilation + 1 pixels. For a reverse filter these are
// positions in the source upsampled by zero insertion, where windows step
// by 1 (see Method.ReverseAxis).
type Axis struct {
	// Dst is the destination size, >= 1.
	Dst int
	// Offset is the source position of the window centre for destination
	// pixel 0 (MPSCNNKernel.offset): floor(ke/2) - Before.
	Offset int
	// Before is the padding before the image (top or left); negative when
	// the first pixels are skipped.
	Before int
	// After is the padding after the image (bottom or right). For a Method
	// it is what the windows reach, readSize - src - Before, negative when
	// the last pixels are left unread. For explicit pads it is the declared
	// pad.
	After int
}

// String returns "dst=D offset=O pads=B,A".
func (a Axis) String() string {
	return fmt.Sprintf("dst=%d offset=%d pads=%d,%d", a.Dst, a.Offset, a.Before, a.After)
}

// EffectiveKernel returns ke = (kernel-1)*dilation + 1, the extent of a
// dilated window. kernel and dilation must be >= 1.
func EffectiveKernel(kernel, dilation int) (int, error) {
	if kernel < 1 {
		return 0, errorf(ErrInvalidGeometry, "kernel %d < 1", kernel)
	}
	if dilation < 1 {
		return 0, errorf(ErrInvalidGeometry, "dilation %d < 1", dilation)
	}
	return effective(kernel, dilation, "")
}

func effective(kernel, dilation int, size string) (int, error) {
	var c checked
	ke := c.add(c.mul(kernel-1, dilation), 1)
	if c.overflow {
		return 0, errorf(ErrOverflow, "window%s (%d-1)*%d+1 overflows int", sep(size), kernel, dilation)
	}
	return ke, nil
}

func sep(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}

// DestSize is MPS's forward destination size for one axis:
// floor((src + style*(window-1) + stride - 1) / stride), window being the
// effective window ke. A result < 1 is ErrEmptyDestination.
func DestSize(src, stride, window int, style Style) (int, error) {
	if err := checkSizes(src, stride, window, style); err != nil {
		return 0, err
	}
	return destSize(src, stride, window, style, "")
}

// DestSizeReverse is MPS's destination size for a reverse (backwards)
// filter, whose stride enlarges the image:
// (src-1)*stride + 1 + style*(window-1). A result < 1 is
// ErrEmptyDestination.
func DestSizeReverse(src, stride, window int, style Style) (int, error) {
	if err := checkSizes(src, stride, window, style); err != nil {
		return 0, err
	}
	u, err := upsampled(src, stride, "")
	if err != nil {
		return 0, err
	}
	return destSize(u, 1, window, style, "")
}

func checkSizes(src, stride, window int, style Style) error {
	switch {
	case src < 1:
		return errorf(ErrInvalidGeometry, "source size %d < 1", src)
	case stride < 1:
		return errorf(ErrInvalidGeometry, "stride %d < 1", stride)
	case window < 1:
		return errorf(ErrInvalidGeometry, "window %d < 1", window)
	case style < StyleValidOnly || style > StyleFull:
		return errorf(ErrInvalidMethod, "style %d is not -1, 0 or +1", int(style))
	}
	return nil
}

func destSize(src, stride, ke int, style Style, size string) (int, error) {
	var c checked
	n := c.add(src, int(style)*(ke-1))
	if c.overflow {
		return 0, errorf(ErrOverflow, "destination%s: %d + %d*(%d-1) overflows int", sep(size), src, int(style), ke)
	}
	dst := ceilDiv(n, stride)
	if dst < 1 {
		return 0, errorf(ErrEmptyDestination, "destination%s %d < 1 (%s: source %d, window %d, stride %d)",
			sep(size), dst, style, src, ke, stride)
	}
	return dst, nil
}

// upsampled returns (src-1)*stride + 1, the size of src after zero
// insertion by stride.
func upsampled(src, stride int, size string) (int, error) {
	var c checked
	u := c.add(c.mul(src-1, stride), 1)
	if c.overflow {
		return 0, errorf(ErrOverflow, "upsampled source%s (%d-1)*%d+1 overflows int", sep(size), src, stride)
	}
	return u, nil
}

// checkAxis validates the geometry of one axis in the fixed order kernel,
// stride, dilation, source.
func checkAxis(d Dim, src, kernel, stride, dilation int) error {
	switch {
	case kernel < 1:
		return errorf(ErrInvalidGeometry, "kernel %s %d < 1", d.size(), kernel)
	case stride < 1:
		return errorf(ErrInvalidGeometry, "stride %s %d < 1", d, stride)
	case dilation < 1:
		return errorf(ErrInvalidGeometry, "dilation %s %d < 1", d, dilation)
	case src < 1:
		return errorf(ErrInvalidGeometry, "source %s %d < 1", d.size(), src)
	}
	return nil
}

// Axis computes the destination size and window placement of one axis of
// a forward filter under m (SPEC "Padding policy"):
//
//	ke       = (kernel-1)*dilation + 1
//	dst      = floor((src + style*(ke-1) + stride - 1) / stride)   (>= 1)
//	readSize = (dst-1)*stride + ke
//	extra    = readSize - src                   (may be negative)
//	before   = AlignCentered:    floor((max(extra,0) + r) / 2)
//	           AlignTopLeft:     0
//	           AlignBottomRight: extra
//	after    = extra - before
//	offset   = floor(ke/2) - before
//
// r is 1 when the AddRemainder bits send this axis's remainder to the top
// (y) or left (x), 0 when to the bottom or right. The Custom,
// CustomWhitelistForNodeFusion and ExcludeEdges bits do not matter here.
func (m Method) Axis(d Dim, src, kernel, stride, dilation int) (Axis, error) {
	if err := checkAxis(d, src, kernel, stride, dilation); err != nil {
		return Axis{}, err
	}
	if err := m.Validate(); err != nil {
		return Axis{}, err
	}
	ke, err := effective(kernel, dilation, d.size())
	if err != nil {
		return Axis{}, err
	}
	return m.axis(d, src, ke, stride)
}

// ReverseAxis is Axis for a reverse (backwards) filter, whose stride
// enlarges the image. The filter is treated as a forward filter with
// stride 1 over the source upsampled by zero insertion, u = (src-1)*stride
// + 1 pixels, so Dst = DestSizeReverse(src, stride, ke, m.Style()) and
// Offset, Before and After are in upsampled coordinates.
func (m Method) ReverseAxis(d Dim, src, kernel, stride, dilation int) (Axis, error) {
	if err := checkAxis(d, src, kernel, stride, dilation); err != nil {
		return Axis{}, err
	}
	if err := m.Validate(); err != nil {
		return Axis{}, err
	}
	ke, err := effective(kernel, dilation, d.size())
	if err != nil {
		return Axis{}, err
	}
	u, err := upsampled(src, stride, d.size())
	if err != nil {
		return Axis{}, err
	}
	return m.axis(d, u, ke, 1)
}

// axis is Axis on validated input.
func (m Method) axis(d Dim, src, ke, stride int) (Axis, error) {
	dst, err := destSize(src, stride, ke, m.Style(), d.size())
	if err != nil {
		return Axis{}, err
	}
	var c checked
	readSize := c.add(c.mul(dst-1, stride), ke)
	if c.overflow {
		return Axis{}, errorf(ErrOverflow, "read size %s (%d-1)*%d+%d overflows int", d.size(), dst, stride, ke)
	}
	extra := readSize - src // both >= 0: cannot overflow
	var before int
	switch m.Align() {
	case AlignCentered:
		r := 1 // remainder before the image (top or left)
		if d == X && m&AddRemainderToTopRight != 0 || d == Y && m&AddRemainderToBottomLeft != 0 {
			r = 0
		}
		before = (max(extra, 0) + r) / 2
	case AlignTopLeft:
		before = 0
	case AlignBottomRight:
		before = extra
	}
	// |before| <= |extra| and extra >= ke - src, so neither subtraction
	// below can overflow: offset lies in [floor(ke/2)-extra, src].
	return Axis{Dst: dst, Offset: ke/2 - before, Before: before, After: extra - before}, nil
}

// ExplicitAxis computes one axis under explicit pads (PyTorch, ONNX):
//
//	dst = floor((src + before + after - ke) / stride) + 1
//
// and in ceil mode ceil instead of floor, then one less if the last
// window would start at or beyond src + before, i.e. if
// (dst-1)*stride >= src + before (PyTorch's pooling_output_shape_pad_lr;
// the rule applies in ceil mode only, as in current PyTorch). The window of
// destination 0 starts at -before: Offset = floor(ke/2) - before. Pads
// must be >= 0; a result < 1 is ErrEmptyDestination.
func ExplicitAxis(d Dim, src, kernel, stride, dilation, before, after int, ceilMode bool) (Axis, error) {
	if err := checkAxis(d, src, kernel, stride, dilation); err != nil {
		return Axis{}, err
	}
	if err := checkPads(d, before, after); err != nil {
		return Axis{}, err
	}
	ke, err := effective(kernel, dilation, d.size())
	if err != nil {
		return Axis{}, err
	}
	return explicitAxis(d, src, ke, stride, before, after, ceilMode, ceilMode)
}

func checkPads(d Dim, before, after int) error {
	b, a := d.sides()
	if before < 0 {
		return errorf(ErrInvalidGeometry, "pad %s %d < 0", b, before)
	}
	if after < 0 {
		return errorf(ErrInvalidGeometry, "pad %s %d < 0", a, after)
	}
	return nil
}

// explicitAxis is ExplicitAxis on validated input; lastWindow says whether
// the last-window rule applies (PyTorch: in ceil mode; Caffe: when any pad
// is non-zero).
func explicitAxis(d Dim, src, ke, stride, before, after int, ceilMode, lastWindow bool) (Axis, error) {
	var c checked
	// src-ke cannot overflow (both in [1, MaxInt]) and the pads are >= 0,
	// so span overflows only if src + before + after - ke does not fit.
	span := c.add(c.add(src-ke, before), after)
	q := floorDiv(span, stride)
	if ceilMode {
		q = ceilDiv(span, stride)
	}
	dst := c.add(q, 1)
	if c.overflow {
		return Axis{}, errorf(ErrOverflow, "destination %s: %d+%d+%d-%d overflows int", d.size(), src, before, after, ke)
	}
	// For dst <= 1 the last window starts at or before -before < src.
	if lastWindow && dst > 1 && startsPast(dst-1, stride, src, before) {
		dst--
	}
	if dst < 1 {
		b, a := d.sides()
		return Axis{}, errorf(ErrEmptyDestination, "destination %s %d < 1 (source %d, pad %s %d, pad %s %d, window %d, stride %d)",
			d.size(), dst, src, b, before, a, after, ke, stride)
	}
	return Axis{Dst: dst, Offset: ke/2 - before, Before: before, After: after}, nil
}

// startsPast reports whether q*stride >= src + before for non-negative
// arguments, exactly (128-bit), so the last-window rule cannot overflow.
func startsPast(q, stride, src, before int) bool {
	hi, lo := bits.Mul64(uint64(q), uint64(stride))
	sum, carry := bits.Add64(uint64(src), uint64(before), 0)
	return hi > carry || hi == carry && lo >= sum
}
