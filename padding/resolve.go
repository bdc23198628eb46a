package padding

import (
	"strconv"
	"strings"
)

// Resolve applies policy p to kernel k reading sources, the way an MPS
// kernel's destination-creating encode consults its padding policy.
//
// It checks, in this order: kernel width and height, stride x and y,
// dilation x and y (all >= 1), that there is a source, that every source
// has N, C, H, W >= 1, and that p.Method() is valid. It then computes the
// suggestion from p.Method() (Custom bit ignored): per axis Method.Axis,
// or Method.ReverseAxis when k.Reverse, on sources[0]; Dest.N and Dest.C
// from sources[0]; EdgeMode and ZeroPad from k; Pads = Before/After per
// axis; ExcludeEdges from its bit. When p's Method has the Custom bit, an
// axis whose suggested size would be empty is not an error: that axis is
// suggested as zeros and the policy must compute its own.
//
// Finally it calls p.Destination and checks its result: Dest N, C, H,
// W >= 1, a defined EdgeMode, ZeroPad >= 0. Errors carry k.Name and
// p.Label() as context.
func Resolve(p Policy, sources []Descriptor, states []State, k Kernel) (Result, error) {
	if p == nil {
		return Result{}, errorf(ErrInvalidMethod, "nil policy")
	}
	r, err := resolve(p, sources, states, k)
	if err != nil {
		return Result{}, withOp(err, strings.TrimSpace(k.Name+" "+p.Label()))
	}
	return r, nil
}

func resolve(p Policy, sources []Descriptor, states []State, k Kernel) (Result, error) {
	if err := checkKernel(k); err != nil {
		return Result{}, err
	}
	if len(sources) == 0 {
		return Result{}, errorf(ErrInvalidGeometry, "no source image")
	}
	for i, s := range sources {
		if err := checkDescriptor(s, "source", i); err != nil {
			return Result{}, err
		}
	}
	m := p.Method()
	if err := m.Validate(); err != nil {
		return Result{}, err
	}
	kex, key, err := windows(k)
	if err != nil {
		return Result{}, err
	}
	src := sources[0]
	ax, err := suggestAxis(m, X, src.W, kex, k.StrideX, k.Reverse)
	if err != nil {
		return Result{}, err
	}
	ay, err := suggestAxis(m, Y, src.H, key, k.StrideY, k.Reverse)
	if err != nil {
		return Result{}, err
	}
	req := Request{
		Sources: sources,
		States:  states,
		Kernel:  k,
		Suggested: Result{
			Dest:         Descriptor{N: src.N, C: src.C, H: ay.Dst, W: ax.Dst},
			OffsetX:      ax.Offset,
			OffsetY:      ay.Offset,
			EdgeMode:     k.EdgeMode,
			ZeroPad:      k.ZeroPad,
			Pads:         Pads{Top: ay.Before, Left: ax.Before, Bottom: ay.After, Right: ax.After},
			ExcludeEdges: m&ExcludeEdges != 0,
		},
	}
	r, err := p.Destination(req)
	if err != nil {
		return Result{}, err
	}
	return r, checkResult(r)
}

// checkKernel validates k's geometry in the fixed order kernel width and
// height, stride x and y, dilation x and y.
func checkKernel(k Kernel) error {
	switch {
	case k.KernelW < 1:
		return errorf(ErrInvalidGeometry, "kernel width %d < 1", k.KernelW)
	case k.KernelH < 1:
		return errorf(ErrInvalidGeometry, "kernel height %d < 1", k.KernelH)
	case k.StrideX < 1:
		return errorf(ErrInvalidGeometry, "stride x %d < 1", k.StrideX)
	case k.StrideY < 1:
		return errorf(ErrInvalidGeometry, "stride y %d < 1", k.StrideY)
	case k.DilationX < 1:
		return errorf(ErrInvalidGeometry, "dilation x %d < 1", k.DilationX)
	case k.DilationY < 1:
		return errorf(ErrInvalidGeometry, "dilation y %d < 1", k.DilationY)
	}
	return nil
}

// windows returns the effective window ke of each axis of a checked k.
func windows(k Kernel) (kex, key int, err error) {
	if kex, err = effective(k.KernelW, k.DilationX, X.size()); err != nil {
		return 0, 0, err
	}
	if key, err = effective(k.KernelH, k.DilationY, Y.size()); err != nil {
		return 0, 0, err
	}
	return kex, key, nil
}

func checkDescriptor(d Descriptor, what string, i int) error {
	name := what
	if i >= 0 {
		name += " " + strconv.Itoa(i)
	}
	switch {
	case d.N < 1:
		return errorf(ErrInvalidGeometry, "%s batch size %d < 1", name, d.N)
	case d.C < 1:
		return errorf(ErrInvalidGeometry, "%s channels %d < 1", name, d.C)
	case d.H < 1:
		return errorf(ErrInvalidGeometry, "%s height %d < 1", name, d.H)
	case d.W < 1:
		return errorf(ErrInvalidGeometry, "%s width %d < 1", name, d.W)
	}
	return nil
}

func suggestAxis(m Method, d Dim, src, ke, stride int, reverse bool) (Axis, error) {
	var a Axis
	var err error
	if reverse {
		var u int
		if u, err = upsampled(src, stride, d.size()); err == nil {
			a, err = m.axis(d, u, ke, 1)
		}
	} else {
		a, err = m.axis(d, src, ke, stride)
	}
	if err != nil && m&Custom != 0 && isEmpty(err) {
		return Axis{}, nil
	}
	return a, err
}

func isEmpty(err error) bool {
	pe, ok := err.(*Error)
	return ok && pe.Err == ErrEmptyDestination
}

func checkResult(r Result) error {
	d := r.Dest
	switch {
	case d.N < 1:
		return errorf(ErrEmptyDestination, "destination batch size %d < 1", d.N)
	case d.C < 1:
		return errorf(ErrEmptyDestination, "destination channels %d < 1", d.C)
	case d.H < 1:
		return errorf(ErrEmptyDestination, "destination height %d < 1", d.H)
	case d.W < 1:
		return errorf(ErrEmptyDestination, "destination width %d < 1", d.W)
	case !r.EdgeMode.Valid():
		return errorf(ErrInvalidGeometry, "edge mode %v is neither zero nor clamp", r.EdgeMode)
	}
	z := r.ZeroPad
	for _, s := range []struct {
		name string
		v    int
	}{{"top", z.Top}, {"left", z.Left}, {"bottom", z.Bottom}, {"right", z.Right}} {
		if s.v < 0 {
			return errorf(ErrInvalidGeometry, "zero pad %s %d < 0", s.name, s.v)
		}
	}
	return nil
}
