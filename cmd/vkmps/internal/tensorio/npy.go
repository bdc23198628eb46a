package tensorio

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/sbinet/npyio/npy"
)

// MaxHeaderLen is the longest .npy header dictionary accepted, in bytes.
// numpy writes about 128 for the arrays vkmps reads; the bound keeps a
// corrupt length field from costing memory.
const MaxHeaderLen = 1 << 16

// npyMagic starts every .npy file.
const npyMagic = "\x93NUMPY"

var float32Type = reflect.TypeFor[float32]()

// ReadNPY reads one .npy array from r, which must hold exactly that array,
// as described in the package documentation. Errors are *Error without a
// path.
func ReadNPY(r io.Reader) (Tensor, error) {
	if r == nil {
		return Tensor{}, newError(ErrNotNPY, "no data: nil reader")
	}
	return readNPY(r, -1, nil)
}

// ReadNPYFile reads the .npy file at path; errors name path.
func ReadNPYFile(path string) (Tensor, error) {
	return readFile(nil, path, NPY, nil)
}

// npyHeader is what a .npy header says.
type npyHeader struct {
	shape   []int
	fortran bool
	descr   string           // the dtype as written, for messages
	order   binary.ByteOrder // of the values
	item    int              // 4 (float32) or 8 (float64)
	length  int64            // bytes of magic, version, length and dictionary
}

// readNPY reads an array from r; size is the number of bytes r holds, or
// -1 when unknown (a pipe). check, when not nil, sees the shape before
// the data is read.
func readNPY(r io.Reader, size int64, check Check) (Tensor, error) {
	h, err := readNPYHeader(r, size)
	if err != nil {
		return Tensor{}, err
	}
	dims := h.shape
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
	if h.fortran && !sameInBothOrders(dims) {
		return Tensor{}, newError(ErrFortranOrder, "array %s is in Fortran (column-major) order: save numpy.ascontiguousarray(x) instead", shapeString(dims))
	}
	t := Tensor{N: 1, C: 1, H: dims[len(dims)-2], W: dims[len(dims)-1], Rank: len(dims)}
	if len(dims) >= 3 {
		t.C = dims[len(dims)-3]
	}
	if len(dims) == 4 {
		t.N = dims[0]
	}
	need := int64(n) * int64(h.item)
	if size >= 0 {
		have := size - h.length
		if have < need {
			return Tensor{}, truncated(dims, h.descr, need, have)
		}
		if have > need {
			return Tensor{}, newError(ErrTrailing, "%d bytes after the %s %s array: is the header's shape right?", have-need, shapeString(dims), h.descr)
		}
	}
	if check != nil {
		if err := check(t.N, t.C, t.H, t.W); err != nil {
			return Tensor{}, err
		}
	}
	if t.Data, err = readValues(r, h, n, size >= 0); err != nil {
		return Tensor{}, err
	}
	return t, nil
}

// readNPYHeader reads the magic, version, header length and dictionary,
// checking the length before allocating it, and parses the dictionary.
func readNPYHeader(r io.Reader, size int64) (npyHeader, error) {
	var h npyHeader
	pre := make([]byte, 12)
	if n, err := io.ReadFull(r, pre[:10]); err != nil {
		if isInterrupt(err) {
			return h, err
		}
		if n >= len(npyMagic) && string(pre[:len(npyMagic)]) == npyMagic {
			return h, newError(ErrTruncated, "file ends inside the .npy header")
		}
		return h, notNPY(err)
	}
	if string(pre[:len(npyMagic)]) != npyMagic {
		return h, notNPY(nil)
	}
	major, minor := pre[6], pre[7]
	var hlen int64
	plen := 10
	switch major {
	case 1:
		hlen = int64(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		if _, err := io.ReadFull(r, pre[10:12]); err != nil {
			if isInterrupt(err) {
				return h, err
			}
			return h, newError(ErrTruncated, "file ends inside the .npy header")
		}
		hlen = int64(binary.LittleEndian.Uint32(pre[8:12]))
		plen = 12
	default:
		return h, newError(ErrHeader, "%v: format version %d.%d not supported: want 1.0, 2.0 or 3.0", ErrHeader, major, minor)
	}
	if hlen > MaxHeaderLen {
		return h, newError(ErrHeader, "%v: header length %d is more than %d bytes", ErrHeader, hlen, MaxHeaderLen)
	}
	if size >= 0 && int64(plen)+hlen > size {
		return h, newError(ErrTruncated, "file ends inside the .npy header: header length %d, file size %d", hlen, size)
	}
	dict := make([]byte, hlen)
	if _, err := io.ReadFull(r, dict); err != nil {
		if isInterrupt(err) {
			return h, err
		}
		return h, newError(ErrTruncated, "file ends inside the .npy header")
	}
	h.length = int64(plen) + hlen
	text := string(dict)
	if major < 3 {
		// Latin-1, as numpy decodes formats 1.0 and 2.0.
		var b strings.Builder
		for _, c := range dict {
			b.WriteRune(rune(c))
		}
		text = b.String()
	} else if !isUTF8(dict) {
		return h, newError(ErrHeader, "%v: a format 3.0 header must be UTF-8", ErrHeader)
	}
	if err := h.parse(text, major < 3); err != nil {
		return h, err
	}
	return h, nil
}

func isUTF8(b []byte) bool { return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) }

func notNPY(err error) error {
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return newError(ErrNotNPY, "not a .npy file: it does not start with \"\\x93NUMPY\"")
	}
	return newError(ErrNotNPY, "cannot read: %v", err)
}

// parse reads the header dictionary as numpy.load does: a Python literal
// (ast.literal_eval), a dictionary with exactly the keys 'descr',
// 'fortran_order' and 'shape' in any order, shape a tuple of integers,
// fortran_order a bool, descr a dtype. py2 accepts Python 2 long suffixes
// (formats 1.0 and 2.0).
func (h *npyHeader) parse(text string, py2 bool) error {
	bad := func(format string, args ...any) error {
		return newError(ErrHeader, "%v: %s", ErrHeader, fmt.Sprintf(format, args...))
	}
	d, err := pyParse(text, py2)
	if err != nil {
		return bad("%v", err)
	}
	if d.kind != pyDict {
		return bad("the header is a %s, not a dictionary", d.kind)
	}
	keys := d.keys()
	if len(keys) == 0 {
		keys = []string{"none"}
	}
	if len(keys) != 3 {
		return bad("want the keys 'descr', 'fortran_order' and 'shape', got %s", strings.Join(keys, ", "))
	}
	descr, ok1 := d.get("descr")
	order, ok2 := d.get("fortran_order")
	shape, ok3 := d.get("shape")
	if !ok1 || !ok2 || !ok3 {
		return bad("want the keys 'descr', 'fortran_order' and 'shape', got %s", strings.Join(keys, ", "))
	}
	if shape.kind != pyTuple {
		return bad("shape %s is not a tuple of integers", shape.src)
	}
	for _, v := range shape.items {
		if v.kind != pyInt {
			return bad("shape %s is not a tuple of integers", shape.src)
		}
		if v.num.Sign() < 0 {
			return bad("negative dimension in shape %s", shape.src)
		}
		if !v.num.IsInt64() || v.num.Int64() > math.MaxInt32*int64(math.MaxInt32) {
			return newError(ErrTooLarge, "shape %s has more than %d elements", shape.src, MaxElements)
		}
		h.shape = append(h.shape, int(v.num.Int64()))
	}
	if order.kind != pyBool {
		return bad("fortran_order %s is not True or False", order.src)
	}
	h.fortran = order.b
	return h.dtype(descr)
}

// dtype reads the descr value: float32 or float64 in either byte order,
// in any spelling numpy.dtype accepts for them; anything else is an
// ErrDType naming the type.
func (h *npyHeader) dtype(v pyValue) error {
	h.descr = v.src
	switch v.kind {
	case pyList:
		return newError(ErrDType, "structured dtype %s (a record array) not supported: want a plain float32 or float64 array (save x[name] for one field, or numpy.lib.recfunctions.structured_to_unstructured(x))", shorten(v.src))
	case pyTuple:
		return newError(ErrDType, "dtype %s (a sub-array or structured type) not supported: want float32 or float64", shorten(v.src))
	case pyStr:
	default:
		return newError(ErrHeader, "%v: descr %s is not a valid dtype descriptor", ErrHeader, shorten(v.src))
	}
	s := v.str
	h.descr = s
	if strings.Contains(s, ",") {
		return newError(ErrDType, "structured dtype %q (a record array) not supported: want a plain float32 or float64 array", s)
	}
	body, order := s, binary.ByteOrder(binary.NativeEndian)
	if len(body) > 0 {
		switch body[0] {
		case '<':
			order, body = binary.LittleEndian, body[1:]
		case '>':
			order, body = binary.BigEndian, body[1:]
		case '=', '|':
			body = body[1:]
		}
	}
	h.order = order
	switch body {
	case "f4", "f", "float32", "single":
		h.item = 4
		return nil
	case "f8", "d", "float64", "double", "float", "float_":
		h.item = 8
		return nil
	}
	return newError(ErrDType, "%s not supported: want float32 or float64 (convert with x.astype(numpy.float32))", dtypeName(s, body))
}

// dtypeName names a dtype other than float32 and float64 in messages.
func dtypeName(descr, body string) string {
	names := map[string]string{"b1": "bool", "?": "bool", "f2": "float16", "e": "float16", "c8": "complex64", "c16": "complex128",
		"i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64", "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
		"b": "int8", "B": "uint8", "h": "int16", "H": "uint16", "i": "int32", "I": "uint32", "l": "int64", "L": "uint64",
		"q": "int64", "Q": "uint64", "F": "complex64", "D": "complex128", "O": "object (pickled Python objects)"}
	if n, ok := names[body]; ok {
		return n
	}
	return "dtype " + strconv.Quote(descr)
}

func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
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

// readValues reads n values of h's type from r and converts them to
// float32. With known (the file's size was checked) it allocates the
// result at once; from a stream it grows it only as data arrives, so that
// a header claiming a huge shape costs nothing. Trailing bytes of a
// stream are an error.
func readValues(r io.Reader, h npyHeader, n int, known bool) ([]float32, error) {
	capacity := n
	if !known {
		capacity = min(n, 1<<14)
	}
	out := make([]float32, 0, capacity)
	chunk := make([]byte, 1<<16)
	chunk = chunk[:len(chunk)/h.item*h.item]
	need := int64(n) * int64(h.item)
	var got int64
	for got < need {
		want := min(int64(len(chunk)), need-got)
		k, err := io.ReadFull(r, chunk[:want])
		if k%h.item != 0 && err == nil {
			err = io.ErrUnexpectedEOF
		}
		if k > 0 {
			items := k / h.item
			if len(out)+items > cap(out) {
				grown := make([]float32, len(out), min(n, max(2*cap(out), len(out)+items)))
				copy(grown, out)
				out = grown
			}
			base := len(out)
			out = out[:base+items]
			if err := convert(out[base:], chunk[:items*h.item], h, base); err != nil {
				return nil, err
			}
			got += int64(k)
		}
		if err != nil {
			if isInterrupt(err) {
				return nil, err
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, truncated(h.shape, h.descr, need, got)
			}
			return nil, newError(ErrTruncated, "cannot read the data: %v", err)
		}
	}
	if !known {
		var one [1]byte
		k, err := io.ReadFull(r, one[:])
		if isInterrupt(err) {
			return nil, err
		}
		if k > 0 {
			return nil, newError(ErrTrailing, "bytes after the %s %s array: is the header's shape right?", shapeString(h.shape), h.descr)
		}
	}
	return out, nil
}

// convert decodes values of h's type from b into dst; first is the index
// of dst[0], for messages.
func convert(dst []float32, b []byte, h npyHeader, first int) error {
	if h.item == 4 {
		if h.order == binary.NativeEndian {
			copy(dst, unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(dst)))
			return nil
		}
		for i := range dst {
			dst[i] = math.Float32frombits(h.order.Uint32(b[4*i:]))
		}
		return nil
	}
	for i := range dst {
		v := math.Float64frombits(h.order.Uint64(b[8*i:]))
		dst[i] = float32(v)
		if math.IsInf(float64(dst[i]), 0) && !math.IsInf(v, 0) {
			return newError(ErrRange, "element %d is %g, beyond float32's range", first+i, v)
		}
	}
	return nil
}

func truncated(dims []int, descr string, need, have int64) error {
	return newError(ErrTruncated, "data truncated: shape %s of %s needs %d bytes, file has %d", shapeString(dims), descr, need, have)
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
