package ref

import (
	"fmt"
	"math"
)

// Window normalizations in float64: cross-channel (local response),
// spatial and local-contrast normalization (ops.CrossChannelNormalization,
// ops.SpatialNormalization, ops.LocalContrastNormalization). A window of
// size k centred on i covers [i - floor(k/2), i + floor((k-1)/2)] (MPS's
// Q(k) and the pooling convention: even windows lean to the top left);
// values outside the image count as 0 and the divisor is always the full
// window size. Gradients are the exact derivatives of the forward
// formulas (MPS's header formulas for them are approximations).

// CrossChannelNorm is local response normalization across channels:
//
//	y = x / T^beta,  T = delta + alpha/size * sum over channels q in
//	[c - size/2, c + (size-1)/2] of x_q^2
//
// (PyTorch's LocalResponseNorm with k = delta).
type CrossChannelNorm struct {
	Size               int
	Alpha, Beta, Delta float64
}

// normWindow returns the first index and the end of the size-wide window
// centred on i inside [0, n).
func normWindow(i, size, n int) (lo, hi int) {
	lo, hi = i-size/2, i+(size-1)/2+1
	return max(lo, 0), min(hi, n)
}

// normTransposed returns the range of centres whose window holds i.
func normTransposed(i, size, n int) (lo, hi int) {
	lo, hi = i-(size-1)/2, i+size/2+1
	return max(lo, 0), min(hi, n)
}

func (l CrossChannelNorm) check(x Tensor[float64], others ...Tensor[float64]) error {
	if l.Size < 1 {
		return fmt.Errorf("%w: cross-channel normalization size %d < 1", ErrGeometry, l.Size)
	}
	if err := x.check("source"); err != nil {
		return err
	}
	for _, o := range others {
		if err := normSame(x, "image", o); err != nil {
			return err
		}
	}
	return nil
}

// denominators returns T for every value of x.
func (l CrossChannelNorm) denominators(x Tensor[float64]) []float64 {
	t := make([]float64, len(x.Data))
	for n := 0; n < x.N; n++ {
		for c := 0; c < x.C; c++ {
			lo, hi := normWindow(c, l.Size, x.C)
			for p := 0; p < x.H*x.W; p++ {
				s := 0.0
				for q := lo; q < hi; q++ {
					v := x.Data[(n*x.C+q)*x.H*x.W+p]
					s += v * v
				}
				t[(n*x.C+c)*x.H*x.W+p] = l.Delta + l.Alpha/float64(l.Size)*s
			}
		}
	}
	return t
}

// Forward writes y.
func (l CrossChannelNorm) Forward(x Tensor[float64], y *Tensor[float64]) error {
	if y == nil {
		return fmt.Errorf("%w: nil destination", ErrShape)
	}
	if err := l.check(x, *y); err != nil {
		return err
	}
	for i, t := range l.denominators(x) {
		y.Data[i] = x.Data[i] * math.Pow(t, -l.Beta)
	}
	return nil
}

// Gradient writes dx:
//
//	dx_c = dy_c T_c^-beta - 2 alpha beta/size * x_c * sum over r with c in
//	window(r) of dy_r x_r T_r^(-beta-1)
func (l CrossChannelNorm) Gradient(x, dy Tensor[float64], dx *Tensor[float64]) error {
	if dx == nil {
		return fmt.Errorf("%w: nil destination gradient", ErrShape)
	}
	if err := l.check(x, dy, *dx); err != nil {
		return err
	}
	t := l.denominators(x)
	s := make([]float64, len(t))
	for i := range t {
		s[i] = dy.Data[i] * x.Data[i] * math.Pow(t[i], -l.Beta-1)
	}
	plane := x.H * x.W
	k := 2 * l.Alpha * l.Beta / float64(l.Size)
	for n := 0; n < x.N; n++ {
		for c := 0; c < x.C; c++ {
			lo, hi := normTransposed(c, l.Size, x.C)
			for p := 0; p < plane; p++ {
				i := (n*x.C+c)*plane + p
				acc := 0.0
				for r := lo; r < hi; r++ {
					acc += s[(n*x.C+r)*plane+p]
				}
				dx.Data[i] = dy.Data[i]*math.Pow(t[i], -l.Beta) - k*x.Data[i]*acc
			}
		}
	}
	return nil
}

// SpatialNorm is MPS's spatial normalization, per channel over a
// KernelW x KernelH window:
//
//	y = x / T^beta,  T = delta + alpha/(kw*kh) * sum over the window of x^2
type SpatialNorm struct {
	KernelW, KernelH   int
	Alpha, Beta, Delta float64
}

// LocalContrastNorm is MPS's local-contrast normalization, per channel
// over a KernelW x KernelH window of N = kw*kh values (outside ones 0):
//
//	M = sum x / N,  VAR = sum x^2 / N - M^2,  T = delta + alpha*VAR
//	y = pm + ps * (x - p0*M) / T^beta
type LocalContrastNorm struct {
	KernelW, KernelH   int
	Alpha, Beta, Delta float64
	P0, PM, PS         float64
}

// normWindowSums returns, per value, the window sums of x and x^2.
func normWindowSums(x Tensor[float64], kw, kh int) (s1, s2 []float64) {
	s1, s2 = make([]float64, len(x.Data)), make([]float64, len(x.Data))
	for pl := 0; pl < x.N*x.C; pl++ {
		p := x.Data[pl*x.H*x.W:]
		for yy := 0; yy < x.H; yy++ {
			y0, y1 := normWindow(yy, kh, x.H)
			for xx := 0; xx < x.W; xx++ {
				x0, x1 := normWindow(xx, kw, x.W)
				a, b := 0.0, 0.0
				for ty := y0; ty < y1; ty++ {
					for tx := x0; tx < x1; tx++ {
						v := p[ty*x.W+tx]
						a += v
						b += v * v
					}
				}
				i := pl*x.H*x.W + yy*x.W + xx
				s1[i], s2[i] = a, b
			}
		}
	}
	return s1, s2
}

// normGatherTransposed returns, per value q, the sum of v over the values
// whose kw x kh window holds q.
func normGatherTransposed(x Tensor[float64], v []float64, kw, kh int) []float64 {
	out := make([]float64, len(v))
	for pl := 0; pl < x.N*x.C; pl++ {
		base := pl * x.H * x.W
		for yy := 0; yy < x.H; yy++ {
			y0, y1 := normTransposed(yy, kh, x.H)
			for xx := 0; xx < x.W; xx++ {
				x0, x1 := normTransposed(xx, kw, x.W)
				a := 0.0
				for ty := y0; ty < y1; ty++ {
					for tx := x0; tx < x1; tx++ {
						a += v[base+ty*x.W+tx]
					}
				}
				out[base+yy*x.W+xx] = a
			}
		}
	}
	return out
}

func normCheckKernel(what string, kw, kh int, x Tensor[float64], others ...Tensor[float64]) error {
	if kw < 1 || kh < 1 {
		return fmt.Errorf("%w: %s kernel %dx%d: sizes must be >= 1", ErrGeometry, what, kw, kh)
	}
	if err := x.check("source"); err != nil {
		return err
	}
	for _, o := range others {
		if err := normSame(x, "image", o); err != nil {
			return err
		}
	}
	return nil
}

// Forward writes y.
func (s SpatialNorm) Forward(x Tensor[float64], y *Tensor[float64]) error {
	if y == nil {
		return fmt.Errorf("%w: nil destination", ErrShape)
	}
	if err := normCheckKernel("spatial normalization", s.KernelW, s.KernelH, x, *y); err != nil {
		return err
	}
	_, s2 := normWindowSums(x, s.KernelW, s.KernelH)
	k := s.Alpha / float64(s.KernelW*s.KernelH)
	for i := range s2 {
		y.Data[i] = x.Data[i] * math.Pow(s.Delta+k*s2[i], -s.Beta)
	}
	return nil
}

// Gradient writes dx:
//
//	dx_q = dy_q T_q^-beta - 2 alpha beta/N * x_q * sum over p whose window
//	holds q of dy_p x_p T_p^(-beta-1)
func (s SpatialNorm) Gradient(x, dy Tensor[float64], dx *Tensor[float64]) error {
	if dx == nil {
		return fmt.Errorf("%w: nil destination gradient", ErrShape)
	}
	if err := normCheckKernel("spatial normalization", s.KernelW, s.KernelH, x, dy, *dx); err != nil {
		return err
	}
	_, s2 := normWindowSums(x, s.KernelW, s.KernelH)
	nk := float64(s.KernelW * s.KernelH)
	t := make([]float64, len(s2))
	r := make([]float64, len(s2))
	for i := range s2 {
		t[i] = s.Delta + s.Alpha/nk*s2[i]
		r[i] = dy.Data[i] * x.Data[i] * math.Pow(t[i], -s.Beta-1)
	}
	g := normGatherTransposed(x, r, s.KernelW, s.KernelH)
	for i := range t {
		dx.Data[i] = dy.Data[i]*math.Pow(t[i], -s.Beta) - 2*s.Alpha*s.Beta/nk*x.Data[i]*g[i]
	}
	return nil
}

// Forward writes y.
func (l LocalContrastNorm) Forward(x Tensor[float64], y *Tensor[float64]) error {
	if y == nil {
		return fmt.Errorf("%w: nil destination", ErrShape)
	}
	if err := normCheckKernel("local-contrast normalization", l.KernelW, l.KernelH, x, *y); err != nil {
		return err
	}
	s1, s2 := normWindowSums(x, l.KernelW, l.KernelH)
	nk := float64(l.KernelW * l.KernelH)
	for i := range s1 {
		m := s1[i] / nk
		t := l.Delta + l.Alpha*(s2[i]/nk-m*m)
		y.Data[i] = l.PM + l.PS*(x.Data[i]-l.P0*m)*math.Pow(t, -l.Beta)
	}
	return nil
}

// Gradient writes dx. With u_p = x_p - p0 M_p, a_p = dy_p p0 T_p^-beta and
// b_p = dy_p 2 alpha beta u_p T_p^(-beta-1), and sums over the p whose
// window holds q:
//
//	dx_q = ps dy_q T_q^-beta - ps/N * (sum (a_p - b_p M_p) + x_q sum b_p)
func (l LocalContrastNorm) Gradient(x, dy Tensor[float64], dx *Tensor[float64]) error {
	if dx == nil {
		return fmt.Errorf("%w: nil destination gradient", ErrShape)
	}
	if err := normCheckKernel("local-contrast normalization", l.KernelW, l.KernelH, x, dy, *dx); err != nil {
		return err
	}
	s1, s2 := normWindowSums(x, l.KernelW, l.KernelH)
	nk := float64(l.KernelW * l.KernelH)
	t := make([]float64, len(s1))
	va, vb := make([]float64, len(s1)), make([]float64, len(s1))
	for i := range s1 {
		m := s1[i] / nk
		t[i] = l.Delta + l.Alpha*(s2[i]/nk-m*m)
		u := x.Data[i] - l.P0*m
		a := dy.Data[i] * l.P0 * math.Pow(t[i], -l.Beta)
		b := dy.Data[i] * 2 * l.Alpha * l.Beta * u * math.Pow(t[i], -l.Beta-1)
		va[i], vb[i] = a-b*m, b
	}
	ga := normGatherTransposed(x, va, l.KernelW, l.KernelH)
	gb := normGatherTransposed(x, vb, l.KernelW, l.KernelH)
	for i := range t {
		dx.Data[i] = l.PS*dy.Data[i]*math.Pow(t[i], -l.Beta) - l.PS/nk*(ga[i]+x.Data[i]*gb[i])
	}
	return nil
}
