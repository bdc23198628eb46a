package tensorio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strings"
	"unsafe"

	"github.com/sbinet/npyio/npy"
)

// MaxHeaderLen is the longest .npy header dictionary accepted, in bytes.
// numpy writes about 128 for the arrays vkmps reads; the bound keeps a
// corrupt length field from costing memory.
const MaxHeaderLen = 1 << 16

var (
	float32Type = reflect.TypeFor[float32]()
	float64Type = reflect.TypeFor[float64]()
)

// ReadNPY reads one .npy array from r, which must hold exactly that array,
// as described in the package documentation. Errors are *Error without a
// path.
func ReadNPY(r io.Reader) (Tensor, error) {
	if r == nil {
		return Tensor{}, newError(ErrNotNPY, "no data: nil reader")
	}
	return readNPY(r, -1)
}

// ReadNPYFile reads the .npy file at path; errors name path.
func ReadNPYFile(path string) (Tensor, error) {
	f, size, err := openInput(path)
	if err != nil {
		return Tensor{}, err
	}
	defer f.Close()
	t, err := readNPY(f, size)
	return t, withPath(path, err)
}

// openInput opens path read-only and returns its size; a directory is an
// error.
func openInput(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, withPath(path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, withPath(path, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, 0, &Error{Path: path, Err: ErrFormat, Msg: "is a directory, not a file"}
	}
	return f, fi.Size(), nil
}

// readNPY reads an array from r; size is the number of bytes r holds, or
// -1 when unknown.
func readNPY(r io.Reader, size int64) (Tensor, error) {
	hdr, err := readHeaderBytes(r, size)
	if err != nil {
		return Tensor{}, err
	}
	h, err := parseHeader(hdr)
	if err != nil {
		return Tensor{}, err
	}
	dims := h.Descr.Shape
	item, err := checkDType(h.Descr.Type)
	if err != nil {
		return Tensor{}, err
	}
	switch len(dims) {
	case 2, 3, 4:
	default:
		return Tensor{}, newError(ErrShape, "shape %s has rank %d: want (N,C,H,W), (C,H,W) or (H,W)", shapeString(dims), len(dims))
	}
	for _, d := range dims {
		if d == 0 {
			return Tensor{}, newError(ErrShape, "shape %s has a zero-sized dimension", shapeString(dims))
		}
	}
	n, err := elements(dims)
	if err != nil {
		return Tensor{}, err
	}
	if h.Descr.Fortran && !sameInBothOrders(dims) {
		return Tensor{}, newError(ErrFortranOrder, "array %s is in Fortran (column-major) order: save numpy.ascontiguousarray(x) instead", shapeString(dims))
	}
	need := int64(n) * int64(item)
	data, err := readData(r, size, int64(len(hdr)), need, dims, h.Descr.Type)
	if err != nil {
		return Tensor{}, err
	}

	t := Tensor{N: 1, C: 1, H: dims[len(dims)-2], W: dims[len(dims)-1], Rank: len(dims)}
	if len(dims) >= 3 {
		t.C = dims[len(dims)-3]
	}
	if len(dims) == 4 {
		t.N = dims[0]
	}
	if t.Data, err = decode(hdr, data, item, n); err != nil {
		return Tensor{}, err
	}
	return t, nil
}

// readHeaderBytes reads the magic, version, header length and header
// dictionary, checking the length before allocating it.
func readHeaderBytes(r io.Reader, size int64) ([]byte, error) {
	pre := make([]byte, 12)
	if n, err := io.ReadFull(r, pre[:10]); err != nil {
		if n >= len(npy.Magic) && bytes.Equal(pre[:len(npy.Magic)], npy.Magic[:]) {
			return nil, newError(ErrTruncated, "file ends inside the .npy header")
		}
		return nil, notNPY(err)
	}
	if !bytes.Equal(pre[:len(npy.Magic)], npy.Magic[:]) {
		return nil, notNPY(nil)
	}
	major, minor := pre[6], pre[7]
	var hlen int64
	plen := 10
	switch major {
	case 1:
		hlen = int64(binary.LittleEndian.Uint16(pre[8:10]))
	case 2:
		if _, err := io.ReadFull(r, pre[10:12]); err != nil {
			return nil, newError(ErrTruncated, "file ends inside the .npy header")
		}
		hlen = int64(binary.LittleEndian.Uint32(pre[8:12]))
		plen = 12
	default:
		return nil, newError(ErrHeader, "%v: format version %d.%d not supported: want 1.0 or 2.0", ErrHeader, major, minor)
	}
	if hlen > MaxHeaderLen {
		return nil, newError(ErrHeader, "%v: header length %d is more than %d bytes", ErrHeader, hlen, MaxHeaderLen)
	}
	if size >= 0 && int64(plen)+hlen > size {
		return nil, newError(ErrTruncated, "file ends inside the .npy header: header length %d, file size %d", hlen, size)
	}
	hdr := make([]byte, int64(plen)+hlen)
	copy(hdr, pre[:plen])
	if _, err := io.ReadFull(r, hdr[plen:]); err != nil {
		return nil, newError(ErrTruncated, "file ends inside the .npy header")
	}
	if hlen == 0 || hdr[len(hdr)-1] != '\n' {
		return nil, newError(ErrHeader, "%v: header does not end in a newline", ErrHeader)
	}
	return hdr, nil
}

func notNPY(err error) error {
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return newError(ErrNotNPY, "not a .npy file: it does not start with \"\\x93NUMPY\"")
	}
	return newError(ErrNotNPY, "cannot read: %v", err)
}

// parseHeader lets the library parse the header, turning its errors and
// panics (it slices the dictionary by position) into ErrHeader, then
// checks that it read what the dictionary says: the library assumes
// numpy's exact layout and misreads others silently.
func parseHeader(hdr []byte) (h npy.Header, err error) {
	defer func() {
		if recover() != nil {
			err = newError(ErrHeader, "%v: malformed header dictionary", ErrHeader)
		}
	}()
	rr, err := npy.NewReader(bytes.NewReader(hdr))
	if err != nil {
		return h, newError(ErrHeader, "%v: %s", ErrHeader, strings.TrimPrefix(err.Error(), "npy: "))
	}
	h = rr.Header
	for _, d := range h.Descr.Shape {
		if d < 0 {
			return h, newError(ErrHeader, "%v: negative dimension in shape %s", ErrHeader, shapeString(h.Descr.Shape))
		}
	}
	text := string(hdr)
	order := map[bool]string{false: "False", true: "True"}[h.Descr.Fortran]
	for _, want := range []string{
		"'descr': '" + h.Descr.Type + "'",
		"'fortran_order': " + order,
		"'shape': " + shapeString(h.Descr.Shape),
	} {
		if !strings.Contains(text, want) {
			return h, newError(ErrHeader, "%v: header dictionary is not in numpy's format (no %s)", ErrHeader, want)
		}
	}
	return h, nil
}

// checkDType returns the item size of a float32 or float64 descr, or an
// ErrDType error naming the type.
func checkDType(descr string) (int, error) {
	rt := npy.TypeFrom(descr)
	switch {
	case rt == float32Type:
		return 4, nil
	case rt == float64Type:
		return 8, nil
	}
	name := fmt.Sprintf("dtype %q", descr)
	if rt != nil && rt.Kind() != reflect.String {
		name = rt.String()
	}
	return 0, newError(ErrDType, "%s not supported: want float32 or float64 (convert with x.astype(numpy.float32))", name)
}

// sameInBothOrders reports whether C and Fortran order lay dims out the
// same way: at most one dimension exceeds 1.
func sameInBothOrders(dims []int) bool {
	big := 0
	for _, d := range dims {
		if d > 1 {
			big++
		}
	}
	return big <= 1
}

// readData reads exactly need bytes of array data. With a known size it
// checks the size first; with a stream it grows its buffer only as data
// arrives, so a header claiming a huge shape cannot make it allocate.
func readData(r io.Reader, size, offset, need int64, dims []int, descr string) ([]byte, error) {
	if size >= 0 {
		have := size - offset
		if have < need {
			return nil, truncated(dims, descr, need, have)
		}
		if have > need {
			return nil, newError(ErrTrailing, "%d bytes after the %s %s array: is the header's shape right?", have-need, shapeString(dims), descr)
		}
		buf := make([]byte, need)
		if n, err := io.ReadFull(r, buf); err != nil {
			return nil, truncated(dims, descr, need, int64(n))
		}
		return buf, nil
	}
	buf, err := io.ReadAll(io.LimitReader(r, need+1))
	if err != nil {
		return nil, newError(ErrTruncated, "cannot read the data: %v", err)
	}
	if int64(len(buf)) < need {
		return nil, truncated(dims, descr, need, int64(len(buf)))
	}
	if int64(len(buf)) > need {
		return nil, newError(ErrTrailing, "bytes after the %s %s array: is the header's shape right?", shapeString(dims), descr)
	}
	return buf, nil
}

func truncated(dims []int, descr string, need, have int64) error {
	return newError(ErrTruncated, "data truncated: shape %s of %s needs %d bytes, file has %d", shapeString(dims), descr, need, have)
}

// decode lets the library convert the data (byte order, dtype) and turns
// float64 into float32.
func decode(hdr, data []byte, item, n int) ([]float32, error) {
	rr, err := npy.NewReader(io.MultiReader(bytes.NewReader(hdr), bytes.NewReader(data)))
	if err != nil {
		return nil, newError(ErrHeader, "%v: %v", ErrHeader, err)
	}
	if item == 4 {
		out := make([]float32, n)
		if err := rr.Read(&out); err != nil {
			return nil, newError(ErrTruncated, "cannot decode the data: %v", err)
		}
		return out, nil
	}
	f64 := make([]float64, n)
	if err := rr.Read(&f64); err != nil {
		return nil, newError(ErrTruncated, "cannot decode the data: %v", err)
	}
	out := make([]float32, n)
	for i, v := range f64 {
		out[i] = float32(v)
		if math.IsInf(float64(out[i]), 0) && !math.IsInf(v, 0) {
			return nil, newError(ErrRange, "element %d is %g, beyond float32's range", i, v)
		}
	}
	return out, nil
}

// WriteNPY writes t to w as a little-endian float32 .npy array of shape
// t.Shape(): rank 4 (N,C,H,W), or 3 (C,H,W) or 2 (H,W) when t.Rank says so
// and N (and C) are 1. Errors wrap ErrShape or ErrTooLarge.
func WriteNPY(w io.Writer, t Tensor) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if w == nil {
		return newError(ErrOutput, "nil writer")
	}
	// The library takes the shape from a Go array type: build
	// [d0][d1]...float32 over t.Data without copying it.
	typ := float32Type
	shape := t.Shape()
	for i := len(shape) - 1; i >= 0; i-- {
		typ = reflect.ArrayOf(shape[i], typ)
	}
	arr := reflect.NewAt(typ, unsafe.Pointer(unsafe.SliceData(t.Data)))
	return npy.Write(w, arr.Interface())
}
