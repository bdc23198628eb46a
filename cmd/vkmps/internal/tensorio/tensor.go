package tensorio

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxElements is the most elements a tensor may have (16 GiB of float32):
// a guard against sizes that overflow, far above what a device can pool.
const MaxElements = 1 << 32

// Tensor is float32 data in NCHW order: element (n, c, h, w) is
// Data[((n*C+c)*H+h)*W+w]. Rank is the rank it was read with or is to be
// written with: 4 (N,C,H,W), 3 (C,H,W; N == 1) or 2 (H,W; N == C == 1);
// 0 means 4.
type Tensor struct {
	N, C, H, W int
	Data       []float32
	Rank       int
}

// New returns a zero tensor of shape (n, c, h, w) with Rank 4, or an error
// wrapping ErrShape or ErrTooLarge.
func New(n, c, h, w int) (Tensor, error) {
	t := Tensor{N: n, C: c, H: h, W: w, Rank: 4}
	if _, err := elements([]int{n, c, h, w}); err != nil {
		return Tensor{}, err
	}
	t.Data = make([]float32, n*c*h*w)
	return t, nil
}

// Len returns N*C*H*W.
func (t Tensor) Len() int { return t.N * t.C * t.H * t.W }

// Shape returns the shape at the tensor's rank: [N C H W], [C H W] or
// [H W]. For a rank that the sizes do not allow it returns all four.
func (t Tensor) Shape() []int {
	switch {
	case t.Rank == 3 && t.N == 1:
		return []int{t.C, t.H, t.W}
	case t.Rank == 2 && t.N == 1 && t.C == 1:
		return []int{t.H, t.W}
	}
	return []int{t.N, t.C, t.H, t.W}
}

// ShapeString returns the shape as NumPy prints it, e.g. "(1, 3, 32, 32)".
func (t Tensor) ShapeString() string { return shapeString(t.Shape()) }

// Validate checks that every dimension is >= 1, that len(Data) is
// N*C*H*W, and that Rank is 0, 4, 3 with N == 1, or 2 with N == C == 1.
// Its errors wrap ErrShape or ErrTooLarge.
func (t Tensor) Validate() error {
	n, err := elements([]int{t.N, t.C, t.H, t.W})
	if err != nil {
		return err
	}
	if len(t.Data) != n {
		return newError(ErrShape, "tensor %s has %d values, want %d", shapeString([]int{t.N, t.C, t.H, t.W}), len(t.Data), n)
	}
	switch t.Rank {
	case 0, 4:
	case 3:
		if t.N != 1 {
			return newError(ErrShape, "cannot write shape %s with rank 3: N must be 1", t.ShapeString())
		}
	case 2:
		if t.N != 1 || t.C != 1 {
			return newError(ErrShape, "cannot write shape %s with rank 2: N and C must be 1", t.ShapeString())
		}
	default:
		return newError(ErrShape, "rank %d not supported: want 4, 3 or 2", t.Rank)
	}
	return nil
}

// elements returns the product of dims, or an error when one is < 1 or
// the product exceeds MaxElements.
func elements(dims []int) (int, error) {
	n := 1
	for _, d := range dims {
		if d < 1 {
			return 0, newError(ErrShape, "shape %s has a dimension < 1", shapeString(dims))
		}
		if d > MaxElements || n > MaxElements/d {
			return 0, newError(ErrTooLarge, "shape %s has more than %d elements", shapeString(dims), MaxElements)
		}
		n *= d
	}
	return n, nil
}

// shapeString formats dims as a Python tuple: "(2, 3)", "(3,)", "()".
func shapeString(dims []int) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = strconv.Itoa(d)
	}
	if len(dims) == 1 {
		return "(" + s[0] + ",)"
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// String returns the shape and rank, e.g. "(3, 32, 32) float32".
func (t Tensor) String() string { return fmt.Sprintf("%s float32", t.ShapeString()) }
