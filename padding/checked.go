package padding

import "math"

// checked does int arithmetic and remembers whether any step overflowed,
// so a formula can be written out once and tested for overflow at the end.
type checked struct{ overflow bool }

func (c *checked) add(a, b int) int {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		c.overflow = true
	}
	return s
}

func (c *checked) sub(a, b int) int {
	s := a - b
	if (b > 0 && s > a) || (b < 0 && s < a) {
		c.overflow = true
	}
	return s
}

func (c *checked) mul(a, b int) int {
	p := a * b
	if a != 0 && (p/a != b || (a == -1 && b == math.MinInt)) {
		c.overflow = true
	}
	return p
}

// floorDiv returns floor(a/b) for b > 0 (Go's / truncates toward zero).
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// ceilDiv returns ceil(a/b) for b > 0, i.e. floor((a+b-1)/b) without
// forming a+b-1.
func ceilDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a > 0 {
		q++
	}
	return q
}
