package ref

import (
	"fmt"
	"math"

	"github.com/vkmps/vkmps/padding"
)

// Pool computes the pooling kernel g over src and writes the clipped region
// of dst, whose shape is the destination's (it must be allocated; pixels
// outside the clip are left untouched). dst must not alias src. Errors wrap
// ErrGeometry or ErrShape.
func Pool[T Float](g Geometry, src Tensor[T], dst *Tensor[T]) error {
	if dst == nil {
		return fmt.Errorf("%w: nil destination", ErrShape)
	}
	if err := src.check("source"); err != nil {
		return err
	}
	if err := dst.check("destination"); err != nil {
		return err
	}
	if sameData(src.Data, dst.Data) {
		return fmt.Errorf("%w: source and destination are the same image", ErrShape)
	}
	r, err := g.resolve(src.Shape(), dst.Shape())
	if err != nil || r.empty() {
		return err
	}
	xs, ys := g.plan(r, src.H, src.W)
	for z := r.z0; z < r.z1; z++ {
		for c := 0; c < src.C; c++ {
			p := src.plane(g.OffsetZ+z-r.z0, c)
			for yi, ay := range ys {
				row := dst.Data[dst.Index(z, c, r.y0+yi, r.x0):]
				for xi, ax := range xs {
					row[xi] = pool(&g, p, src.W, ay, ax)
				}
			}
		}
	}
	return nil
}

// Argmax returns, for every pixel of a destination of shape dst (NCHW order,
// N*C*H*W entries), the tap the max kernel g picks: ky*KernelW + kx, or -1
// when the maximum is an outside tap under EdgeZero, the window has no tap
// in the image under EdgeClamp, or the pixel is outside the clip. g.Kind
// must be Max or DilatedMax. This is what a forward pass that records argmax
// indices in its gradient state must store.
func Argmax[T Float](g Geometry, src Tensor[T], dst padding.Descriptor) ([]int32, error) {
	if err := src.check("source"); err != nil {
		return nil, err
	}
	if err := checkDesc("destination", dst); err != nil {
		return nil, err
	}
	if g.Kind.Valid() && !g.Kind.isMax() {
		return nil, fmt.Errorf("%w: Argmax needs kind max or dilated-max, got %v", ErrGeometry, g.Kind)
	}
	r, err := g.resolve(src.Shape(), dst)
	if err != nil {
		return nil, err
	}
	idx := make([]int32, dst.N*dst.C*dst.H*dst.W)
	for i := range idx {
		idx[i] = -1
	}
	if r.empty() {
		return idx, nil
	}
	xs, ys := g.plan(r, src.H, src.W)
	for z := r.z0; z < r.z1; z++ {
		for c := 0; c < src.C; c++ {
			p := src.plane(g.OffsetZ+z-r.z0, c)
			for yi, ay := range ys {
				row := idx[((z*dst.C+c)*dst.H+r.y0+yi)*dst.W+r.x0:]
				for xi, ax := range xs {
					_, t := maxTap(&g, p, src.W, ay, ax)
					row[xi] = int32(t)
				}
			}
		}
	}
	return idx, nil
}

// plane returns the h*w elements of image n, channel c.
func (t Tensor[T]) plane(n, c int) []T {
	size := t.H * t.W
	return t.Data[(n*t.C+c)*size:][:size]
}

// pool evaluates one window of plane p (width w).
func pool[T Float](g *Geometry, p []T, w int, ay, ax axis) T {
	switch g.Kind {
	case Average:
		n := ay.n * ax.n
		if n == 0 {
			return 0
		}
		return T(sum(g, p, w, ay, ax, false) / float64(n))
	case L2Norm:
		return T(math.Sqrt(sum(g, p, w, ay, ax, true)))
	}
	v, _ := maxTap(g, p, w, ay, ax)
	return v
}

// sum adds the in-image taps of a window (their squares if squares) in
// float64.
func sum[T Float](g *Geometry, p []T, w int, ay, ax axis, squares bool) float64 {
	var s float64
	for ty := ay.t0; ty < ay.t1; ty++ {
		row := p[(ay.start+ty*g.DilationY)*w:]
		for tx := ax.t0; tx < ax.t1; tx++ {
			v := float64(row[ax.start+tx*g.DilationX])
			if squares {
				v *= v
			}
			s += v
		}
	}
	return s
}

// maxTap returns the max of a window and its tap index ky*KernelW+kx, or -1
// when an outside tap (EdgeZero) wins or there is no tap (EdgeClamp). The
// first maximum in row-major tap order wins; a NaN beats any number and the
// first NaN wins among NaNs.
func maxTap[T Float](g *Geometry, p []T, w int, ay, ax axis) (T, int) {
	kw := g.KernelW
	var best T
	bi := -1
	if ay.t0 < ay.t1 && ax.t0 < ax.t1 {
		best, bi = p[(ay.start+ay.t0*g.DilationY)*w+ax.start+ax.t0*g.DilationX], ay.t0*kw+ax.t0
	}
scan:
	for ty := ay.t0; ty < ay.t1 && best == best; ty++ {
		row := p[(ay.start+ty*g.DilationY)*w:]
		for tx := ax.t0; tx < ax.t1; tx++ {
			v := row[ax.start+tx*g.DilationX]
			if v > best {
				best, bi = v, ty*kw+tx
			} else if v != v { // the first NaN wins; nothing beats it
				best, bi = v, ty*kw+tx
				break scan
			}
		}
	}
	inside := ay.t0 == 0 && ax.t0 == 0 && ay.t1 == g.KernelH && ax.t1 == kw
	if g.EdgeMode != padding.EdgeZero || inside {
		return best, bi
	}
	// Outside taps read 0. The in-image winner is the first maximum among
	// in-image taps, so the overall first maximum is decided by comparing it
	// with 0 at the first outside tap in row-major order.
	if bi < 0 {
		return 0, -1
	}
	switch {
	case best != best || best > 0:
		return best, bi
	case best < 0:
		return 0, -1
	}
	first := 0 // row-major index of the first outside tap
	if ay.t0 == 0 && ax.t0 == 0 {
		if ax.t1 < kw {
			first = ax.t1
		} else {
			first = ay.t1 * kw
		}
	}
	if bi < first {
		return best, bi
	}
	return 0, -1
}
