package tensorio

import (
	"errors"
	"fmt"
	"io/fs"
)

// The classes of error; every *Error wraps one of them (or, for a file
// that cannot be opened, the fs error: fs.ErrNotExist, fs.ErrPermission).
var (
	// ErrNotNPY: the data does not start with the .npy magic "\x93NUMPY".
	ErrNotNPY = errors.New("not a .npy file")
	// ErrHeader: a bad .npy version, header length or dictionary.
	ErrHeader = errors.New("corrupt .npy header")
	// ErrTruncated: the file ends before the header or data it announces.
	ErrTruncated = errors.New("truncated data")
	// ErrTrailing: bytes follow the .npy data.
	ErrTrailing = errors.New("trailing data")
	// ErrDType: a .npy dtype other than float32 or float64.
	ErrDType = errors.New("unsupported dtype")
	// ErrShape: a rank other than 2, 3 or 4, a dimension < 1, or a tensor
	// whose data or rank does not match its shape.
	ErrShape = errors.New("unsupported shape")
	// ErrFortranOrder: a .npy array in Fortran (column-major) order.
	ErrFortranOrder = errors.New("column-major (Fortran) order not supported")
	// ErrRange: a finite float64 value too large for float32.
	ErrRange = errors.New("value out of float32 range")
	// ErrTooLarge: more than MaxElements elements or MaxPixels pixels,
	// or a PNG claiming more pixels than its size can hold.
	ErrTooLarge = errors.New("too large")
	// ErrPNG: not a PNG file, or a corrupt one.
	ErrPNG = errors.New("not a valid PNG image")
	// ErrFormat: a path that is neither .npy nor .png, or a directory
	// given as an input.
	ErrFormat = errors.New("unsupported file")
	// ErrOutput: an output path CheckOutput or WriteFile refuses.
	ErrOutput = errors.New("refused output path")
)

// Error is a problem with one file (Path, empty for a stream) of class Err
// (one of the Err* sentinels, or an fs error). Its message is
// "PATH: MSG", or MSG alone without a path.
type Error struct {
	Path string
	Err  error
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Unwrap returns the class, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }

func newError(class error, format string, args ...any) *Error {
	return &Error{Err: class, Msg: fmt.Sprintf(format, args...)}
}

// withPath names path in err: an *Error without a path gets it, an
// *fs.PathError becomes "path: reason" (still wrapping the reason, so
// errors.Is(err, fs.ErrNotExist) holds), anything else is wrapped.
func withPath(path string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Path == "" {
			c := *e
			c.Path = path
			return &c
		}
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &Error{Path: path, Err: pe.Err, Msg: pe.Err.Error()}
	}
	return &Error{Path: path, Err: err, Msg: err.Error()}
}
