package ref

import (
	"fmt"
	"math"

	"github.com/vkmps/vkmps/padding"
)

// Float is the element type of a Tensor: float32 (what the GPU kernels
// compute) or float64 (finite-difference checks).
type Float interface{ ~float32 | ~float64 }

// Tensor is a dense NCHW image batch: element (n, c, y, x) is
// Data[((n*C+c)*H+y)*W+x]. len(Data) must be N*C*H*W.
type Tensor[T Float] struct {
	N, C, H, W int
	Data       []T
}

// NewTensor returns a zeroed n x c x h x w tensor. Sizes must be >= 1.
func NewTensor[T Float](n, c, h, w int) Tensor[T] {
	if n < 1 || c < 1 || h < 1 || w < 1 {
		panic(fmt.Sprintf("ref.NewTensor: size %dx%dx%dx%d, every size must be >= 1", n, c, h, w))
	}
	return Tensor[T]{N: n, C: c, H: h, W: w, Data: make([]T, n*c*h*w)}
}

// TensorOf wraps data (not copied) as an n x c x h x w tensor; it fails if a
// size is < 1 or len(data) != n*c*h*w.
func TensorOf[T Float](n, c, h, w int, data []T) (Tensor[T], error) {
	t := Tensor[T]{N: n, C: c, H: h, W: w, Data: data}
	return t, t.check("tensor")
}

// Shape returns the tensor's descriptor.
func (t Tensor[T]) Shape() padding.Descriptor {
	return padding.Descriptor{N: t.N, C: t.C, H: t.H, W: t.W}
}

// Index returns the position of element (n, c, y, x) in Data.
func (t Tensor[T]) Index(n, c, y, x int) int { return ((n*t.C+c)*t.H+y)*t.W + x }

// At returns element (n, c, y, x).
func (t Tensor[T]) At(n, c, y, x int) T { return t.Data[t.Index(n, c, y, x)] }

// Set sets element (n, c, y, x) to v.
func (t Tensor[T]) Set(n, c, y, x int, v T) { t.Data[t.Index(n, c, y, x)] = v }

// check reports a size < 1 or a data length that does not match the shape;
// name says which argument is wrong.
func (t Tensor[T]) check(name string) error {
	if t.N < 1 || t.C < 1 || t.H < 1 || t.W < 1 {
		return fmt.Errorf("%w: %s is %v, every size must be >= 1", ErrShape, name, t.Shape())
	}
	n := t.N
	for _, f := range []int{t.C, t.H, t.W} {
		if n > math.MaxInt/f {
			return fmt.Errorf("%w: %s is %v: too many elements", ErrShape, name, t.Shape())
		}
		n *= f
	}
	if len(t.Data) != n {
		return fmt.Errorf("%w: %s is %v but has %d elements", ErrShape, name, t.Shape(), len(t.Data))
	}
	return nil
}

// checkDesc is check for a bare descriptor.
func checkDesc(name string, d padding.Descriptor) error {
	if d.N < 1 || d.C < 1 || d.H < 1 || d.W < 1 {
		return fmt.Errorf("%w: %s is %v, every size must be >= 1", ErrShape, name, d)
	}
	return nil
}

// sameData reports whether a and b start at the same element (aliasing).
func sameData[T Float](a, b []T) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}
