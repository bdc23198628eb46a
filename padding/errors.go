package padding

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package makes wraps exactly one of
// them; test with errors.Is. Errors returned by a user's policy are passed
// on, wrapped with context.
var (
	// ErrInvalidGeometry: a kernel size, stride or dilation < 1, a source
	// size < 1, no source, a negative explicit pad, an invalid edge mode or
	// zero pad in a result, or a gradient size that does not match its state.
	ErrInvalidGeometry = errors.New("padding: invalid geometry")
	// ErrInvalidMethod: a reserved Align or Size pattern, an unknown bit, or
	// a nil policy.
	ErrInvalidMethod = errors.New("padding: invalid method")
	// ErrEmptyDestination: the destination would have fewer than 1 pixel
	// on an axis (e.g. ValidOnly with an image smaller than the window).
	ErrEmptyDestination = errors.New("padding: empty destination")
	// ErrOverflow: an intermediate size does not fit in an int.
	ErrOverflow = errors.New("padding: integer overflow")
)

// Error is the error type of this package. Error() reads
// "padding: [Op: ]Msg", e.g. "padding: kernel width 0 < 1" or
// "padding: PoolingMax tensorflow-same: destination height 0 < 1 (...)".
type Error struct {
	Err error  // one of the sentinels above
	Op  string // optional context: kernel name and policy label
	Msg string // what is wrong, naming the axis and the value
}

func (e *Error) Error() string {
	if e.Op == "" {
		return "padding: " + e.Msg
	}
	return "padding: " + e.Op + ": " + e.Msg
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

func errorf(sentinel error, format string, args ...any) error {
	return &Error{Err: sentinel, Msg: fmt.Sprintf(format, args...)}
}

// withOp adds context to err: an *Error gets op prepended to its Op; any
// other error is wrapped so that errors.Is still finds its sentinel.
func withOp(err error, op string) error {
	if err == nil || op == "" {
		return err
	}
	if pe, ok := err.(*Error); ok {
		c := *pe
		if c.Op == "" {
			c.Op = op
		} else {
			c.Op = op + ": " + c.Op
		}
		return &c
	}
	return fmt.Errorf("padding: %s: %w", op, err)
}
