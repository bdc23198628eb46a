package ref

import (
	"math"
	"math/rand/v2"

	"github.com/vkmps/vkmps/padding"
)

// This file holds a deliberately naive transcription of SPEC.md (every tap
// visited, N(x) counted tap by tap) and random geometry for the tests that
// check the real implementation against it.

// naiveClip returns the destination ranges written for dst.
func naiveClip(g Geometry, dst padding.Descriptor) (x0, x1, y0, y1, z0, z1 int) {
	end := func(o, s, d int) int {
		if s == 0 || o+s > d {
			return d
		}
		return o + s
	}
	return g.Clip.X, end(g.Clip.X, g.Clip.W, dst.W), g.Clip.Y, end(g.Clip.Y, g.Clip.H, dst.H),
		g.Clip.Z, end(g.Clip.Z, g.Clip.D, dst.N)
}

// naiveEval computes destination pixel (x, y) of channel c from source image
// n in float64: the value, the chosen tap (max) and N(x) (average).
func naiveEval[T Float](g Geometry, src Tensor[T], n, c, y, x int) (val float64, arg, count int) {
	keX := (g.KernelW-1)*g.DilationX + 1
	keY := (g.KernelH-1)*g.DilationY + 1
	sx0 := g.OffsetX + g.StrideX*(x-g.Clip.X) - keX/2
	sy0 := g.OffsetY + g.StrideY*(y-g.Clip.Y) - keY/2
	zero := g.EdgeMode == padding.EdgeZero
	var best float64
	bestArg, seen := -1, false
	var s, s2 float64
	inImage, counted := 0, 0
	for ky := 0; ky < g.KernelH; ky++ {
		for kx := 0; kx < g.KernelW; kx++ {
			sy, sx := sy0+ky*g.DilationY, sx0+kx*g.DilationX
			in := sy >= 0 && sy < src.H && sx >= 0 && sx < src.W
			var v float64
			if in {
				v = float64(src.At(n, c, sy, sx))
				inImage++
				s += v
				s2 += v * v
			}
			// N(x) for average pooling.
			switch {
			case !zero:
				if sy >= -g.ZeroPad.Top && sy < src.H+g.ZeroPad.Bottom &&
					sx >= -g.ZeroPad.Left && sx < src.W+g.ZeroPad.Right {
					counted++
				}
			case g.ExcludeEdges:
				if sy >= -max(g.Pads.Top, 0) && sy < src.H+max(g.Pads.Bottom, 0) &&
					sx >= -max(g.Pads.Left, 0) && sx < src.W+max(g.Pads.Right, 0) {
					counted++
				}
			default:
				counted++
			}
			// Max: sequential scan, first maximum wins, first NaN wins.
			if !in && !zero {
				continue
			}
			arg := -1
			if in {
				arg = ky*g.KernelW + kx
			}
			if !seen || (!math.IsNaN(best) && (v > best || math.IsNaN(v))) {
				best, bestArg, seen = v, arg, true
			}
		}
	}
	switch g.Kind {
	case Average:
		if counted == 0 || (!zero && inImage == 0) {
			return 0, -1, counted
		}
		return s / float64(counted), -1, counted
	case L2Norm:
		return math.Sqrt(s2), -1, 0
	}
	if !seen {
		return 0, -1, 0
	}
	return best, bestArg, 0
}

// naiveTap returns the source position of tap t of destination pixel (x, y).
func naiveTap(g Geometry, x, y, t int) (int, int) {
	keX := (g.KernelW-1)*g.DilationX + 1
	keY := (g.KernelH-1)*g.DilationY + 1
	ky, kx := t/g.KernelW, t%g.KernelW
	return g.OffsetY + g.StrideY*(y-g.Clip.Y) - keY/2 + ky*g.DilationY,
		g.OffsetX + g.StrideX*(x-g.Clip.X) - keX/2 + kx*g.DilationX
}

// naivePool returns the forward destination (starting from fill) and argmax.
func naivePool[T Float](g Geometry, src Tensor[T], dst padding.Descriptor, fill T) (Tensor[T], []int32) {
	out := NewTensor[T](dst.N, dst.C, dst.H, dst.W)
	idx := make([]int32, len(out.Data))
	for i := range out.Data {
		out.Data[i], idx[i] = fill, -1
	}
	x0, x1, y0, y1, z0, z1 := naiveClip(g, dst)
	for z := z0; z < z1; z++ {
		for c := 0; c < dst.C; c++ {
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					v, a, _ := naiveEval(g, src, g.OffsetZ+z-z0, c, y, x)
					if g.Kind.isMax() {
						// Max copies a tap: take it from the source to keep NaN payloads and -0.
						if a >= 0 {
							sy, sx := naiveTap(g, x, y, a)
							out.Set(z, c, y, x, src.At(g.OffsetZ+z-z0, c, sy, sx))
						} else {
							out.Set(z, c, y, x, T(v))
						}
					} else {
						out.Set(z, c, y, x, T(v))
					}
					idx[out.Index(z, c, y, x)] = int32(a)
				}
			}
		}
	}
	return out, idx
}

// naiveGrad scatters every window's gradient in row-major window order
// (max in T, sums in float64).
func naiveGrad[T Float](g Geometry, src, dy Tensor[T]) Tensor[T] {
	dx := NewTensor[T](src.N, src.C, src.H, src.W)
	acc := make([]float64, len(dx.Data))
	x0, x1, y0, y1, z0, z1 := naiveClip(g, dy.Shape())
	for z := z0; z < z1; z++ {
		n := g.OffsetZ + z - z0
		for c := 0; c < src.C; c++ {
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					d := dy.At(z, c, y, x)
					out, a, count := naiveEval(g, src, n, c, y, x)
					if g.Kind.isMax() {
						if a >= 0 {
							sy, sx := naiveTap(g, x, y, a)
							dx.Data[dx.Index(n, c, sy, sx)] += d
						}
						continue
					}
					for t := 0; t < g.KernelW*g.KernelH; t++ {
						sy, sx := naiveTap(g, x, y, t)
						if sy < 0 || sy >= src.H || sx < 0 || sx >= src.W {
							continue
						}
						i := dx.Index(n, c, sy, sx)
						switch {
						case g.Kind == Average:
							acc[i] += float64(d) / float64(count) // count >= 1: tap i is in it
						case out != 0:
							acc[i] += float64(d) * float64(src.Data[i]) / out
						}
					}
				}
			}
		}
	}
	if !g.Kind.isMax() {
		for i, v := range acc {
			dx.Data[i] = T(v)
		}
	}
	return dx
}

// randGeometry draws a random valid geometry of kind k with source and
// destination shapes that fit it.
func randGeometry(rng *rand.Rand, k Kind) (Geometry, padding.Descriptor, padding.Descriptor) {
	r := func(lo, hi int) int { return lo + rng.IntN(hi-lo+1) }
	g := Geometry{
		Kind:    k,
		KernelW: r(1, 5), KernelH: r(1, 5),
		StrideX: r(1, 3), StrideY: r(1, 3),
		DilationX: 1, DilationY: 1,
		OffsetX: r(-3, 5), OffsetY: r(-3, 5),
		EdgeMode:     padding.EdgeMode(rng.IntN(2)),
		ZeroPad:      padding.Pads{Top: r(0, 2), Left: r(0, 2), Bottom: r(0, 2), Right: r(0, 2)},
		ExcludeEdges: rng.IntN(2) == 0,
		Pads:         padding.Pads{Top: r(-2, 3), Left: r(-2, 3), Bottom: r(-2, 3), Right: r(-2, 3)},
	}
	if rng.IntN(2) == 0 {
		g.DilationX, g.DilationY = r(1, 3), r(1, 3)
	}
	c := r(1, 3)
	src := padding.Descriptor{N: r(1, 3), C: c, H: r(1, 9), W: r(1, 9)}
	dst := padding.Descriptor{N: r(1, src.N), C: c, H: r(1, 7), W: r(1, 7)}
	if rng.IntN(3) > 0 {
		g.Clip = Clip{X: r(0, dst.W-1), Y: r(0, dst.H-1), Z: r(0, dst.N-1), W: r(0, 8), H: r(0, 8), D: r(0, 3)}
	}
	_, _, _, _, z0, z1 := naiveClip(g, dst)
	g.OffsetZ = r(0, src.N-(z1-z0))
	return g, src, dst
}

// randTensor fills a tensor of shape d with f().
func randTensor[T Float](d padding.Descriptor, f func() T) Tensor[T] {
	t := NewTensor[T](d.N, d.C, d.H, d.W)
	for i := range t.Data {
		t.Data[i] = f()
	}
	return t
}
