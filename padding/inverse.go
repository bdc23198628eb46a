package padding

import "fmt"

// inversePolicy sizes the destination of a gradient pass (MPSNNPadding
// inverse).
type inversePolicy struct{ fwd Policy }

// reverseSizer is implemented by forward policies that know the gradient
// destination size better than DestSizeReverse (explicit pads).
type reverseSizer interface {
	reverseSize(d Dim, g, ke, stride int) (int, error)
}

// Inverse returns the policy of the gradient pass of a kernel that used
// forward (MPSNNPadding.inverse). The request's Sources[0] is the gradient
// source (the gradient w.r.t. the forward destination); Kernel is the
// forward kernel's geometry (its Reverse flag is ignored).
//
// Dest is the forward source: H and W from the first state in req.States
// that implements SizeState; without one, per axis the reverse size for
// the opposite Size, DestSizeReverse(g, stride, ke, Opposite style of
// forward.Method()), except for Explicit and Caffe policies, which give
// (g-1)*stride + ke - before - after. N and C come from Sources[0].
//
// The forward policy is then resolved on Dest and must give back the
// gradient source's H and W, otherwise the state does not match and
// Destination returns ErrInvalidGeometry. The result's OffsetX/Y, EdgeMode,
// ZeroPad, Pads and ExcludeEdges are those of that forward pass: OffsetX/Y
// is the position in Dest (the forward source) of the window centre for
// gradient-source pixel (0,0), i.e. the forward offset, not an offset of a
// reverse filter. A gathering gradient kernel finds the windows that
// contain a destination pixel with it.
//
// Method is forward.Method().Opposite()|Custom; Label is
// "inverse(" + forward.Label() + ")".
func Inverse(forward Policy) Policy { return inversePolicy{fwd: forward} }

func (p inversePolicy) Method() Method {
	if p.fwd == nil {
		return Custom
	}
	return p.fwd.Method().Opposite() | Custom
}

func (p inversePolicy) Label() string {
	if p.fwd == nil {
		return "inverse(<nil>)"
	}
	return "inverse(" + p.fwd.Label() + ")"
}

func (p inversePolicy) Destination(req Request) (Result, error) {
	if p.fwd == nil {
		return Result{}, errorf(ErrInvalidMethod, "inverse of a nil policy")
	}
	k := req.Kernel
	if err := checkKernel(k); err != nil {
		return Result{}, err
	}
	if len(req.Sources) == 0 {
		return Result{}, errorf(ErrInvalidGeometry, "no gradient source image")
	}
	g := req.Sources[0]
	if err := checkDescriptor(g, "gradient source", -1); err != nil {
		return Result{}, err
	}
	kex, key, err := windows(k)
	if err != nil {
		return Result{}, err
	}
	dest := Descriptor{N: g.N, C: g.C}
	from := "SizeState"
	if st, ok := findSizeState(req.States); ok {
		sd := st.SourceDescriptor()
		dest.H, dest.W = sd.H, sd.W
		if err := checkDescriptor(dest, "SizeState source", -1); err != nil {
			return Result{}, err
		}
	} else {
		from = "reverse size"
		if dest.W, err = p.reverseSize(X, g.W, kex, k.StrideX); err != nil {
			return Result{}, err
		}
		if dest.H, err = p.reverseSize(Y, g.H, key, k.StrideY); err != nil {
			return Result{}, err
		}
	}
	fk := k
	fk.Reverse = false
	fr, err := resolve(p.fwd, []Descriptor{dest}, req.States, fk)
	if err != nil {
		return Result{}, withOp(err, fmt.Sprintf("forward %s on %s", p.fwd.Label(), dest))
	}
	if fr.Dest.H != g.H || fr.Dest.W != g.W {
		return Result{}, errorf(ErrInvalidGeometry,
			"gradient source %dx%d does not match the forward destination %dx%d of %s %dx%d",
			g.H, g.W, fr.Dest.H, fr.Dest.W, from, dest.H, dest.W)
	}
	return Result{
		Dest:         dest,
		OffsetX:      fr.OffsetX,
		OffsetY:      fr.OffsetY,
		EdgeMode:     fr.EdgeMode,
		ZeroPad:      fr.ZeroPad,
		Pads:         fr.Pads,
		ExcludeEdges: fr.ExcludeEdges,
	}, nil
}

func (p inversePolicy) reverseSize(d Dim, g, ke, stride int) (int, error) {
	if rs, ok := p.fwd.(reverseSizer); ok {
		return rs.reverseSize(d, g, ke, stride)
	}
	m := p.fwd.Method()
	if err := m.Validate(); err != nil {
		return 0, err
	}
	u, err := upsampled(g, stride, d.size())
	if err != nil {
		return 0, err
	}
	n, err := destSize(u, 1, ke, m.Opposite().Style(), d.size())
	return n, withOp(err, "reverse size")
}

func findSizeState(states []State) (SizeState, bool) {
	for _, s := range states {
		if ss, ok := s.(SizeState); ok && ss != nil {
			return ss, true
		}
	}
	return nil, false
}
