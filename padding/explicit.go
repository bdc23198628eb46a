package padding

import "fmt"

// explicitPolicy is explicit per-side padding: PyTorch/ONNX (Explicit) or
// Caffe (Caffe).
type explicitPolicy struct {
	pads            Pads
	ceilMode        bool
	countIncludePad bool
	caffe           bool
}

// Explicit returns explicit pads (top, left, bottom, right), the padding
// of PyTorch and ONNX pooling. Per axis (see ExplicitAxis):
//
//	dst    = floor((src + before + after - ke) / stride) + 1
//	         (ceilMode: ceil, then one less if (dst-1)*stride >= src + before)
//	offset = floor(ke/2) - before      (destination 0 reads from -before)
//
// The result uses EdgeClamp; ZeroPad is p when countIncludePad (the divisor
// counts the pads, PyTorch count_include_pad=True) and zero otherwise
// (only in-image taps count). Result.Pads is p. Max pooling ignores
// ZeroPad, so use countIncludePad=false or true alike for it.
//
// Negative pads are reported by Destination (hence Resolve) as
// ErrInvalidGeometry, so that Explicit can be used in expressions. Pads
// larger than the window are allowed (ONNX allows them); windows lying
// wholly in the padding then output 0. Explicit pads do not apply to
// reverse kernels; use Inverse for gradients.
//
// Method is Custom: the suggestion is not used. Label is
// "explicit(top,left,bottom,right)" followed by " ceil" and
// " count-include-pad" when set.
func Explicit(p Pads, ceilMode, countIncludePad bool) Policy {
	return explicitPolicy{pads: p, ceilMode: ceilMode, countIncludePad: countIncludePad}
}

// Caffe returns Caffe's pooling padding: symmetric pads padH (top and
// bottom) and padW (left and right), a ceil output size
// ceil((src + 2*pad - ke)/stride) + 1, reduced by one when the last window
// would start at or beyond src + pad; Caffe applies that rule, on both
// axes, only when padH or padW is non-zero, and so does this policy (with
// padH = padW = 0 and a stride larger than the window the last window can
// then lie outside the image and outputs 0).
//
// Caffe's average pooling divides by the window clipped to the padded
// image [-pad, src+pad). The result realises it as EdgeClamp with ZeroPad =
// the pads, which gives the same N(x) as that clipped divisor (and max
// pooling under EdgeClamp ignores the padding, as Caffe's does). The
// Method is Custom|ExcludeEdges and Result.ExcludeEdges is set with
// Result.Pads = the pads, so a kernel run under EdgeZero with ExcludeEdges
// would count the same taps. Caffe has no dilation; a kernel's dilation
// is applied as everywhere else (ke).
//
// Negative pads are reported by Destination as ErrInvalidGeometry. Label
// "caffe(padH,padW)".
func Caffe(padH, padW int) Policy {
	return explicitPolicy{
		pads:            Pads{Top: padH, Left: padW, Bottom: padH, Right: padW},
		ceilMode:        true,
		countIncludePad: true,
		caffe:           true,
	}
}

func (p explicitPolicy) Method() Method {
	if p.caffe {
		return Custom | ExcludeEdges
	}
	return Custom
}

func (p explicitPolicy) Label() string {
	if p.caffe {
		return fmt.Sprintf("caffe(%d,%d)", p.pads.Top, p.pads.Left)
	}
	s := "explicit(" + p.pads.String() + ")"
	if p.ceilMode {
		s += " ceil"
	}
	if p.countIncludePad {
		s += " count-include-pad"
	}
	return s
}

func (p explicitPolicy) Destination(req Request) (Result, error) {
	if req.Kernel.Reverse {
		return Result{}, errorf(ErrInvalidGeometry, "explicit pads do not apply to a reverse kernel (use Inverse for gradients)")
	}
	if len(req.Sources) == 0 {
		return Result{}, errorf(ErrInvalidGeometry, "no source image")
	}
	src, k := req.Sources[0], req.Kernel
	if err := checkKernel(k); err != nil {
		return Result{}, err
	}
	if err := checkDescriptor(src, "source", 0); err != nil {
		return Result{}, err
	}
	if err := p.checkPads(); err != nil {
		return Result{}, err
	}
	kex, key, err := windows(k)
	if err != nil {
		return Result{}, err
	}
	lastWindow := p.ceilMode
	if p.caffe {
		lastWindow = p.pads != Pads{}
	}
	ax, err := explicitAxis(X, src.W, kex, k.StrideX, p.pads.Left, p.pads.Right, p.ceilMode, lastWindow)
	if err != nil {
		return Result{}, err
	}
	ay, err := explicitAxis(Y, src.H, key, k.StrideY, p.pads.Top, p.pads.Bottom, p.ceilMode, lastWindow)
	if err != nil {
		return Result{}, err
	}
	r := Result{
		Dest:         Descriptor{N: src.N, C: src.C, H: ay.Dst, W: ax.Dst},
		OffsetX:      ax.Offset,
		OffsetY:      ay.Offset,
		EdgeMode:     EdgeClamp,
		Pads:         p.pads,
		ExcludeEdges: p.caffe,
	}
	if p.countIncludePad {
		r.ZeroPad = p.pads
	}
	return r, nil
}

func (p explicitPolicy) checkPads() error {
	if err := checkPads(Y, p.pads.Top, p.pads.Bottom); err != nil {
		return err
	}
	return checkPads(X, p.pads.Left, p.pads.Right)
}

// reverseSize is the gradient destination size for gradient source g when
// no SizeState is given: the smallest forward source giving g outputs in
// floor mode, (g-1)*stride + ke - before - after.
func (p explicitPolicy) reverseSize(d Dim, g, ke, stride int) (int, error) {
	if err := p.checkPads(); err != nil {
		return 0, err
	}
	before, after := p.pads.Left, p.pads.Right
	if d == Y {
		before, after = p.pads.Top, p.pads.Bottom
	}
	var c checked
	n := c.sub(c.sub(c.add(c.mul(g-1, stride), ke), before), after)
	if c.overflow {
		return 0, errorf(ErrOverflow, "gradient destination %s overflows int", d.size())
	}
	if n < 1 {
		return 0, errorf(ErrEmptyDestination, "gradient destination %s %d < 1 (gradient source %d, window %d, stride %d, pads %d,%d)",
			d.size(), n, g, ke, stride, before, after)
	}
	return n, nil
}
