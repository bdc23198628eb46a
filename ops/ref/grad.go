package ref

import (
	"fmt"
	"math"
)

// PoolGradient computes the gradient of the pooling kernel g: given the
// forward source src and dy, the loss gradient w.r.t. the forward
// destination (dy has the forward destination's shape), it writes dx, the
// gradient w.r.t. src. dx must have src's shape and is written everywhere:
// 0 where no window of the forward clip reaches. Values of dy outside the
// clip are ignored. dx must not alias src or dy. Errors wrap ErrGeometry or
// ErrShape.
//
// Max sums dy in the element type, per source pixel in row-major window
// order (bit-exact with a GPU gathering in that order); Average and L2Norm
// accumulate in float64 and round once.
func PoolGradient[T Float](g Geometry, src, dy Tensor[T], dx *Tensor[T]) error {
	if dx == nil {
		return fmt.Errorf("%w: nil destination gradient", ErrShape)
	}
	if err := src.check("source"); err != nil {
		return err
	}
	if err := dy.check("source gradient"); err != nil {
		return err
	}
	if err := dx.check("destination gradient"); err != nil {
		return err
	}
	if dx.Shape() != src.Shape() {
		return fmt.Errorf("%w: destination gradient is %v, must be the forward source's %v",
			ErrShape, dx.Shape(), src.Shape())
	}
	if sameData(dx.Data, src.Data) || sameData(dx.Data, dy.Data) {
		return fmt.Errorf("%w: destination gradient aliases an input", ErrShape)
	}
	r, err := g.resolve(src.Shape(), dy.Shape())
	if err != nil {
		return err
	}
	clear(dx.Data)
	if r.empty() {
		return nil
	}
	xs, ys := g.plan(r, src.H, src.W)
	var acc []float64
	if !g.Kind.isMax() {
		acc = make([]float64, src.H*src.W)
	}
	for z := r.z0; z < r.z1; z++ {
		n := g.OffsetZ + z - r.z0
		for c := 0; c < src.C; c++ {
			p, q := src.plane(n, c), dx.plane(n, c)
			if g.Kind.isMax() {
				maxGrad(&g, p, q, src.W, dy, z, c, r, xs, ys)
				continue
			}
			clear(acc)
			sumGrad(&g, p, acc, src.W, dy, z, c, r, xs, ys)
			for i, v := range acc {
				q[i] = T(v)
			}
		}
	}
	return nil
}

// maxGrad adds each window's dy to its argmax in q.
func maxGrad[T Float](g *Geometry, p, q []T, w int, dy Tensor[T], z, c int, r region, xs, ys []axis) {
	for yi, ay := range ys {
		row := dy.Data[dy.Index(z, c, r.y0+yi, r.x0):]
		for xi, ax := range xs {
			_, t := maxTap(g, p, w, ay, ax)
			if t < 0 {
				continue
			}
			ty, tx := t/g.KernelW, t%g.KernelW
			q[(ay.start+ty*g.DilationY)*w+ax.start+tx*g.DilationX] += row[xi]
		}
	}
}

// sumGrad adds dy/N(w) (Average) or dy*in/out (L2Norm) to the in-image taps
// of every window, in float64.
func sumGrad[T Float](g *Geometry, p []T, acc []float64, w int, dy Tensor[T], z, c int, r region, xs, ys []axis) {
	for yi, ay := range ys {
		row := dy.Data[dy.Index(z, c, r.y0+yi, r.x0):]
		for xi, ax := range xs {
			// scale is the gradient per tap (Average) or per unit of input
			// (L2Norm); a window with N = 0 or out = 0 contributes nothing.
			var scale float64
			if g.Kind == Average {
				n := ay.n * ax.n
				if n == 0 {
					continue
				}
				scale = float64(row[xi]) / float64(n)
			} else {
				out := math.Sqrt(sum(g, p, w, ay, ax, true))
				if out == 0 {
					continue
				}
				scale = float64(row[xi]) / out
			}
			for ty := ay.t0; ty < ay.t1; ty++ {
				base := (ay.start + ty*g.DilationY) * w
				for tx := ax.t0; tx < ax.t1; tx++ {
					i := base + ax.start + tx*g.DilationX
					if g.Kind == Average {
						acc[i] += scale
					} else {
						acc[i] += scale * float64(p[i])
					}
				}
			}
		}
	}
}
