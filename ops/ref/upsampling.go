package ref

import (
	"fmt"

	"github.com/vkmps/vkmps/padding"
)

// Upsampling is an upsampling by integer factors (MPSCNNUpsamplingNearest,
// MPSCNNUpsamplingBilinear), defined as PyTorch's F.interpolate with
// scale_factor=(ScaleY, ScaleX): the result is H*ScaleY × W*ScaleX and,
// per axis with in source pixels, out = in*s destination pixels and
// destination index d,
//
//	nearest:                  i0 = floor(d / s)
//	bilinear, align_corners false: src = max(0, (d + 0.5)/s - 0.5)
//	bilinear, align_corners true:  src = d * (in-1)/(out-1)  (0 when out = 1)
//
// and for bilinear i0 = floor(src), i1 = min(i0+1, in-1), lambda = src - i0;
// a destination value is the separable blend
//
//	(1-ly)*((1-lx)*x[y0][x0] + lx*x[y0][x1]) + ly*((1-lx)*x[y1][x0] + lx*x[y1][x1]).
//
// UpsampleTaps computes src as an exact fraction of integers (PyTorch
// computes it in float32, so its weights differ from these by an ulp or so).
type Upsampling struct {
	ScaleX, ScaleY int
	Bilinear       bool
	// AlignCorners is F.interpolate's align_corners (bilinear only).
	AlignCorners bool
}

// Validate checks the scales (>= 1) and that AlignCorners goes with
// Bilinear.
func (u Upsampling) Validate() error {
	if u.ScaleX < 1 || u.ScaleY < 1 {
		return fmt.Errorf("%w: upsampling scale %dx%d: scales must be integers >= 1", ErrGeometry, u.ScaleX, u.ScaleY)
	}
	if u.AlignCorners && !u.Bilinear {
		return fmt.Errorf("%w: upsampling: align corners is for bilinear upsampling only", ErrGeometry)
	}
	return nil
}

// OutputShape returns the shape of the upsampled image of src.
func (u Upsampling) OutputShape(src padding.Descriptor) padding.Descriptor {
	return padding.Descriptor{N: src.N, C: src.C, H: src.H * u.ScaleY, W: src.W * u.ScaleX}
}

// UpsampleTaps returns, for destination index d of an axis of in source
// pixels upsampled by s, the two source indices a destination value blends
// and the weight of the second: value = (1-lambda)*x[i0] + lambda*x[i1]. For
// nearest i1 = i0 and lambda = 0. lambda is an exact fraction rounded once
// to float64.
func UpsampleTaps(bilinear, alignCorners bool, in, s, d int) (i0, i1 int, lambda float64) {
	switch {
	case !bilinear:
		i0 = d / s
		return i0, i0, 0
	case !alignCorners:
		// src = (2d + 1 - s) / (2s), clamped at 0.
		if n := 2*d + 1 - s; n > 0 {
			i0, lambda = n/(2*s), float64(n%(2*s))/float64(2*s)
		}
	default:
		// src = d (in-1) / (out-1).
		if den := in*s - 1; den > 0 {
			num := d * (in - 1)
			i0, lambda = num/den, float64(num%den)/float64(den)
		}
	}
	i1 = i0
	if i0 < in-1 {
		i1 = i0 + 1
	}
	return i0, i1, lambda
}

// Upsample returns the upsampled image of x in float64 (see Upsampling).
func Upsample[T Float](u Upsampling, x Tensor[T]) (Tensor[float64], error) {
	if err := u.Validate(); err != nil {
		return Tensor[float64]{}, err
	}
	if err := x.check("source"); err != nil {
		return Tensor[float64]{}, err
	}
	o := u.OutputShape(x.Shape())
	out := NewTensor[float64](o.N, o.C, o.H, o.W)
	for n := 0; n < x.N; n++ {
		for c := 0; c < x.C; c++ {
			at := func(y, xx int) float64 { return float64(x.At(n, c, y, xx)) }
			for yo := 0; yo < o.H; yo++ {
				y0, y1, ly := UpsampleTaps(u.Bilinear, u.AlignCorners, x.H, u.ScaleY, yo)
				for xo := 0; xo < o.W; xo++ {
					x0, x1, lx := UpsampleTaps(u.Bilinear, u.AlignCorners, x.W, u.ScaleX, xo)
					v := at(y0, x0)
					if u.Bilinear {
						v = (1-ly)*((1-lx)*at(y0, x0)+lx*at(y0, x1)) + ly*((1-lx)*at(y1, x0)+lx*at(y1, x1))
					}
					out.Set(n, c, yo, xo, v)
				}
			}
		}
	}
	return out, nil
}

// UpsampleGradient returns the gradient of Upsample with respect to its
// source of shape src, given dy of the upsampled shape: each dy value is
// scattered to the (up to four) source pixels its destination blended,
// times their weights, in float64 (the transpose of Upsample; MPS's
// MPSCNNUpsamplingNearestGradient and ...BilinearGradient, PyTorch's
// autograd).
func UpsampleGradient[T Float](u Upsampling, dy Tensor[T], src padding.Descriptor) (Tensor[float64], error) {
	if err := u.Validate(); err != nil {
		return Tensor[float64]{}, err
	}
	if err := checkDesc("upsampling source", src); err != nil {
		return Tensor[float64]{}, err
	}
	if err := dy.check("source gradient"); err != nil {
		return Tensor[float64]{}, err
	}
	if o := u.OutputShape(src); dy.Shape() != o {
		return Tensor[float64]{}, fmt.Errorf("%w: source gradient %v, want the upsampled shape %v", ErrShape, dy.Shape(), o)
	}
	dx := NewTensor[float64](src.N, src.C, src.H, src.W)
	for n := 0; n < dy.N; n++ {
		for c := 0; c < dy.C; c++ {
			add := func(y, x int, v float64) { dx.Data[dx.Index(n, c, y, x)] += v }
			for yo := 0; yo < dy.H; yo++ {
				y0, y1, ly := UpsampleTaps(u.Bilinear, u.AlignCorners, src.H, u.ScaleY, yo)
				for xo := 0; xo < dy.W; xo++ {
					x0, x1, lx := UpsampleTaps(u.Bilinear, u.AlignCorners, src.W, u.ScaleX, xo)
					g := float64(dy.At(n, c, yo, xo))
					if !u.Bilinear {
						add(y0, x0, g)
						continue
					}
					add(y0, x0, (1-ly)*(1-lx)*g)
					add(y0, x1, (1-ly)*lx*g)
					add(y1, x0, ly*(1-lx)*g)
					add(y1, x1, ly*lx*g)
				}
			}
		}
	}
	return dx, nil
}
