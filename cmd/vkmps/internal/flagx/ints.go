package flagx

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxValue is the largest number any integer flag accepts: the kernels
// take their geometry as 32-bit integers.
const MaxValue = math.MaxInt32

// Error is a bad value for one flag. Its message names the flag with two
// dashes, e.g. `--kernel: "3,x" is not a number ("x")`.
type Error struct {
	Flag string // the flag's name, without dashes
	Msg  string // what is wrong, quoting the value
}

func (e *Error) Error() string { return "--" + e.Flag + ": " + e.Msg }

// parseInts parses s as 1..max comma-separated integers, each in
// [min, MaxValue]. want describes the accepted forms for messages.
func parseInts(name, s string, counts []int, min int, want string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &Error{name, fmt.Sprintf("empty value: want %s", want)}
	}
	parts := strings.Split(s, ",")
	ok := false
	for _, c := range counts {
		ok = ok || len(parts) == c
	}
	if !ok {
		return nil, &Error{name, fmt.Sprintf("%q has %d numbers: want %s", s, len(parts), want)}
	}
	v := make([]int, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		n, err := strconv.Atoi(p)
		switch {
		case errors.Is(err, strconv.ErrRange) || err == nil && n > MaxValue:
			return nil, &Error{name, fmt.Sprintf("%s is too large: must be <= %d", p, MaxValue)}
		case err != nil:
			return nil, &Error{name, fmt.Sprintf("%q is not a number (%q)", s, p)}
		case n < min:
			return nil, &Error{name, fmt.Sprintf("%d is too small: must be >= %d", n, min)}
		}
		v[i] = n
	}
	return v, nil
}

// PairHW is two integers in (height, width) order: --kernel KH,KW,
// --stride SH,SW, --dilation DH,DW. One number sets both. Make one with
// NewPairHW; its zero value accepts any non-negative numbers.
type PairHW struct {
	H, W int // height (y) then width (x), as on the command line

	name string
	min  int
	set  bool
	err  error
}

// NewPairHW returns a PairHW for flag name with default (h, w) whose
// members must be >= min, registered on fs with usage when fs is not nil.
// Put the placeholder in back quotes in usage ("window `KH,KW`") so that
// --help shows it.
func NewPairHW(fs *flag.FlagSet, name string, h, w, min int, usage string) *PairHW {
	p := &PairHW{H: h, W: w, name: name, min: min}
	register(fs, p, name, usage)
	return p
}

// Set parses "H,W" or "N" (both N); on error H and W are unchanged.
func (p *PairHW) Set(s string) error {
	v, err := parseInts(p.name, s, []int{1, 2}, p.min, p.want())
	p.err = err
	if err != nil {
		return err
	}
	if len(v) == 1 {
		v = append(v, v[0])
	}
	p.H, p.W, p.set = v[0], v[1], true
	return nil
}

func (p *PairHW) want() string {
	return fmt.Sprintf("%s or one number", placeholder(p.name, "H", "W"))
}

// String returns "H,W".
func (p *PairHW) String() string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("%d,%d", p.H, p.W)
}

// Get returns [2]int{H, W}, for flag.Getter.
func (p *PairHW) Get() any { return [2]int{p.H, p.W} }

// IsSet reports whether Set succeeded at least once (the flag was given).
func (p *PairHW) IsSet() bool { return p.set }

func (p *PairHW) lastErr() error { return p.err }

// PairXY is two integers in (x, y) order, x (width) first: --zero-pad X,Y.
// One number sets both. Make one with NewPairXY.
type PairXY struct {
	X, Y int // x (width) then y (height), as on the command line

	name string
	min  int
	set  bool
	err  error
}

// NewPairXY returns a PairXY for flag name with default (x, y) whose
// members must be >= min, registered on fs with usage when fs is not nil.
func NewPairXY(fs *flag.FlagSet, name string, x, y, min int, usage string) *PairXY {
	p := &PairXY{X: x, Y: y, name: name, min: min}
	register(fs, p, name, usage)
	return p
}

// Set parses "X,Y" or "N" (both N); on error X and Y are unchanged.
func (p *PairXY) Set(s string) error {
	v, err := parseInts(p.name, s, []int{1, 2}, p.min, "X,Y or one number")
	p.err = err
	if err != nil {
		return err
	}
	if len(v) == 1 {
		v = append(v, v[0])
	}
	p.X, p.Y, p.set = v[0], v[1], true
	return nil
}

// String returns "X,Y".
func (p *PairXY) String() string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("%d,%d", p.X, p.Y)
}

// Get returns [2]int{X, Y}, for flag.Getter.
func (p *PairXY) Get() any { return [2]int{p.X, p.Y} }

// IsSet reports whether Set succeeded at least once (the flag was given).
func (p *PairXY) IsSet() bool { return p.set }

func (p *PairXY) lastErr() error { return p.err }

// Quad is the four pads of --pad T,L,B,R (top, left, bottom, right, the
// PyTorch/ONNX explicit padding). Set accepts 1 number (all four sides),
// 2 (PH,PW: Top=Bottom=PH, Left=Right=PW, PyTorch's padding=(PH,PW)) or
// 4 (T,L,B,R). Make one with NewQuad; the default is all zeros.
type Quad struct {
	Top, Left, Bottom, Right int

	name string
	min  int
	set  bool
	err  error
}

// NewQuad returns a Quad for flag name, all sides 0, whose members must be
// >= min, registered on fs with usage when fs is not nil.
func NewQuad(fs *flag.FlagSet, name string, min int, usage string) *Quad {
	q := &Quad{name: name, min: min}
	register(fs, q, name, usage)
	return q
}

// Set parses "T,L,B,R", "PH,PW" or "N"; on error the sides are unchanged.
func (q *Quad) Set(s string) error {
	v, err := parseInts(q.name, s, []int{1, 2, 4}, q.min, "T,L,B,R, PH,PW or one number")
	q.err = err
	if err != nil {
		return err
	}
	switch len(v) {
	case 1:
		q.Top, q.Left, q.Bottom, q.Right = v[0], v[0], v[0], v[0]
	case 2:
		q.Top, q.Left, q.Bottom, q.Right = v[0], v[1], v[0], v[1]
	default:
		q.Top, q.Left, q.Bottom, q.Right = v[0], v[1], v[2], v[3]
	}
	q.set = true
	return nil
}

// String returns "T,L,B,R".
func (q *Quad) String() string {
	if q == nil {
		return ""
	}
	return fmt.Sprintf("%d,%d,%d,%d", q.Top, q.Left, q.Bottom, q.Right)
}

// Get returns [4]int{Top, Left, Bottom, Right}, for flag.Getter.
func (q *Quad) Get() any { return [4]int{q.Top, q.Left, q.Bottom, q.Right} }

// IsSet reports whether Set succeeded at least once (the flag was given).
func (q *Quad) IsSet() bool { return q.set }

func (q *Quad) lastErr() error { return q.err }

// placeholder returns the flag's usual placeholder: "KH,KW" for kernel,
// "SH,SW" for stride, "DH,DW" for dilation, else "H,W".
func placeholder(name, a, b string) string {
	prefix := map[string]string{"kernel": "K", "stride": "S", "dilation": "D"}[name]
	return prefix + a + "," + prefix + b
}
