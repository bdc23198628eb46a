package tensorio_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
)

func TestNPYRoundTrip(t *testing.T) {
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32}
	for _, tc := range []struct {
		n, c, h, w, rank int
		shape            []int
	}{
		{2, 3, 4, 5, 4, []int{2, 3, 4, 5}},
		{1, 1, 1, 1, 4, []int{1, 1, 1, 1}},
		{1, 3, 4, 5, 3, []int{3, 4, 5}},
		{1, 1, 7, 2, 2, []int{7, 2}},
		{1, 1, 1, 9, 0, []int{1, 1, 1, 9}},
	} {
		t.Run(fmt.Sprint(tc.shape), func(t *testing.T) {
			in := tensorio.Tensor{N: tc.n, C: tc.c, H: tc.h, W: tc.w, Rank: tc.rank, Data: ramp(tc.n * tc.c * tc.h * tc.w)}
			copy(in.Data, special)
			var buf bytes.Buffer
			require.NoError(t, tensorio.WriteNPY(&buf, in))
			assert.Contains(t, buf.String(), "'descr': '<f4', 'fortran_order': False, 'shape': "+pyTuple(tc.shape))

			out, err := tensorio.ReadNPY(bytes.NewReader(buf.Bytes()))
			require.NoError(t, err)
			assert.Equal(t, [4]int{tc.n, tc.c, tc.h, tc.w}, [4]int{out.N, out.C, out.H, out.W})
			assert.Equal(t, len(tc.shape), out.Rank, "rank mirrors the file")
			assert.Equal(t, tc.shape, out.Shape())
			sameBits(t, in.Data, out.Data)

			// The library reads back what it wrote, too.
			var flat []float32
			require.NoError(t, npy.Read(bytes.NewReader(buf.Bytes()), &flat))
			sameBits(t, in.Data, flat)
		})
	}
}

// TestReadNumpyFiles reads files laid out byte for byte as numpy.save
// writes them, in both byte orders and both float types.
func TestReadNumpyFiles(t *testing.T) {
	want := []float32{1.5, -2, 0, 3.25, 1e-3, 65504}
	f64 := make([]float64, len(want))
	for i, v := range want {
		f64[i] = float64(v)
	}
	for _, tc := range []struct {
		descr string
		data  []byte
	}{
		{"<f4", f32Bytes(binary.LittleEndian, want...)},
		{">f4", f32Bytes(binary.BigEndian, want...)},
		{"<f8", f64Bytes(binary.LittleEndian, f64...)},
		{">f8", f64Bytes(binary.BigEndian, f64...)},
	} {
		for _, shape := range [][]int{{2, 3}, {1, 2, 3}, {2, 1, 3}, {1, 2, 1, 3}, {3, 1, 2, 1}} {
			t.Run(tc.descr+pyTuple(shape), func(t *testing.T) {
				got, err := tensorio.ReadNPY(bytes.NewReader(npyBytes(tc.descr, false, shape, tc.data)))
				require.NoError(t, err)
				assert.Equal(t, len(shape), got.Rank)
				assert.Equal(t, shape, got.Shape())
				assert.Equal(t, len(got.Data), got.N*got.C*got.H*got.W)
				sameBits(t, want, got.Data)
			})
		}
	}
}

func TestFloat64Conversion(t *testing.T) {
	data := f64Bytes(binary.LittleEndian, 0.1, math.Inf(-1), math.NaN(), 1e-50, -3.4e38)
	got, err := tensorio.ReadNPY(bytes.NewReader(npyBytes("<f8", false, []int{1, 5}, data)))
	require.NoError(t, err)
	assert.Equal(t, float32(0.1), got.Data[0], "rounded to nearest")
	assert.True(t, math.IsInf(float64(got.Data[1]), -1), "infinities stay infinite")
	assert.True(t, math.IsNaN(float64(got.Data[2])))
	assert.Equal(t, float32(0), got.Data[3], "underflow to zero is not an error")
	assert.Equal(t, float32(-3.4e38), got.Data[4])

	_, err = tensorio.ReadNPY(bytes.NewReader(npyBytes("<f8", false, []int{1, 2},
		f64Bytes(binary.LittleEndian, 1, -1e300))))
	assert.ErrorIs(t, err, tensorio.ErrRange)
	assert.EqualError(t, err, "element 1 is -1e+300, beyond float32's range")
}

// TestFortranOrder refuses column-major arrays: the library reads their
// data into a slice in file order without transposing (shown below), so
// accepting them would silently transpose the tensor.
func TestFortranOrder(t *testing.T) {
	// numpy.asfortranarray([[1, 2, 3], [4, 5, 6]]) stores 1 4 2 5 3 6.
	file := npyBytes("<f4", true, []int{2, 3}, f32Bytes(binary.LittleEndian, 1, 4, 2, 5, 3, 6))
	var raw []float32
	require.NoError(t, npy.Read(bytes.NewReader(file), &raw))
	assert.Equal(t, []float32{1, 4, 2, 5, 3, 6}, raw, "the library does not transpose")

	_, err := tensorio.ReadNPY(bytes.NewReader(file))
	assert.ErrorIs(t, err, tensorio.ErrFortranOrder)
	assert.EqualError(t, err, "array (2, 3) is in Fortran (column-major) order: save numpy.ascontiguousarray(x) instead")

	// With at most one dimension > 1 both orders agree, so it is read.
	got, err := tensorio.ReadNPY(bytes.NewReader(npyBytes("<f4", true, []int{1, 1, 3}, f32Bytes(binary.LittleEndian, 7, 8, 9))))
	require.NoError(t, err)
	assert.Equal(t, []float32{7, 8, 9}, got.Data)
}

// TestReadNPYErrors is the table of bad .npy inputs (issue 10): each
// gives its class and its exact message, and never a panic.
func TestReadNPYErrors(t *testing.T) {
	good := func(shape []int) []byte {
		n := 1
		for _, d := range shape {
			n *= d
		}
		return f32Bytes(binary.LittleEndian, make([]float32, n)...)
	}
	v2 := func(major byte, hlen uint32, rest string) []byte {
		b := append([]byte("\x93NUMPY"), major, 0)
		b = binary.LittleEndian.AppendUint32(b, hlen)
		return append(b, rest...)
	}
	f4 := func(shape ...int) []byte { return npyBytes("<f4", false, shape, good(shape)) }
	tests := []struct {
		name  string
		file  []byte
		class error
		msg   string
	}{
		{"empty", nil, tensorio.ErrNotNPY, `not a .npy file: it does not start with "\x93NUMPY"`},
		{"text", []byte("x,y\n1,2\n"), tensorio.ErrNotNPY, `not a .npy file: it does not start with "\x93NUMPY"`},
		{"png", rawPNG(1, 1, 8, 0, [][]byte{{0}}), tensorio.ErrNotNPY, `not a .npy file: it does not start with "\x93NUMPY"`},
		{"npz (zip)", []byte("PK\x03\x04 a zip archive"), tensorio.ErrNotNPY, `not a .npy file: it does not start with "\x93NUMPY"`},
		{"magic only", []byte("\x93NUMPY"), tensorio.ErrTruncated, "file ends inside the .npy header"},
		{"no v2 length", []byte("\x93NUMPY\x02\x00\x10\x00"), tensorio.ErrTruncated, "file ends inside the .npy header"},
		{"version 4", v2(4, 16, "{}"), tensorio.ErrHeader, "corrupt .npy header: format version 4.0 not supported: want 1.0, 2.0 or 3.0"},
		{"version 3, not UTF-8", v2(3, 3, "{\xff}"), tensorio.ErrHeader, "corrupt .npy header: a format 3.0 header must be UTF-8"},
		{"version 0", []byte("\x93NUMPY\x00\x00\x10\x00"), tensorio.ErrHeader, "corrupt .npy header: format version 0.0 not supported: want 1.0, 2.0 or 3.0"},
		{"huge header length", v2(2, 1<<31, "{"), tensorio.ErrHeader, "corrupt .npy header: header length 2147483648 is more than 65536 bytes"},
		{"short header", []byte("\x93NUMPY\x01\x00\x40\x00{'descr'"), tensorio.ErrTruncated, "file ends inside the .npy header"},
		{"zero header", []byte("\x93NUMPY\x01\x00\x00\x00"), tensorio.ErrHeader, "corrupt .npy header: cannot parse the header dictionary at byte 0: unexpected end of header"},
		{"empty dictionary", []byte("\x93NUMPY\x01\x00\x04\x00{}  "), tensorio.ErrHeader, "corrupt .npy header: want the keys 'descr', 'fortran_order' and 'shape', got none"},
		{"not a dict", npyBytesDict("hello", nil), tensorio.ErrHeader, `corrupt .npy header: cannot parse the header dictionary at byte 0: "hello" is not a literal`},
		{"a set", npyBytesDict("{'descr', 'shape'}", nil), tensorio.ErrHeader, "corrupt .npy header: the header is a set, not a dictionary"},
		{"unclosed", npyBytesDict("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", nil), tensorio.ErrHeader, "corrupt .npy header: cannot parse the header dictionary at byte 118: unexpected end of header"},
		{"python 3 longs", []byte("\x93NUMPY\x03\x00\x3b\x00\x00\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3)}\n"), tensorio.ErrHeader, `corrupt .npy header: cannot parse the header dictionary at byte 51: "2L" is not a number`},
		{"bad fortran_order", npyBytesDict("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }", good([]int{2, 3})), tensorio.ErrHeader, "corrupt .npy header: fortran_order 0 is not True or False"},
		{"shape in brackets", npyBytesDict("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", good([]int{2, 3})), tensorio.ErrHeader, "corrupt .npy header: shape [2, 3] is not a tuple of integers"},
		{"shape of floats", npyBytesDict("{'descr': '<f4', 'fortran_order': False, 'shape': (2.0, 3), }", good([]int{2, 3})), tensorio.ErrHeader, "corrupt .npy header: shape (2.0, 3) is not a tuple of integers"},
		{"shape of bools", npyBytesDict("{'descr': '<f4', 'fortran_order': False, 'shape': (True, 3), }", good([]int{1, 3})), tensorio.ErrHeader, "corrupt .npy header: shape (True, 3) is not a tuple of integers"},
		{"missing key", npyBytesDict("{'descr': '<f4', 'fortran': False, 'shape': (2, 3), }", good([]int{2, 3})), tensorio.ErrHeader, "corrupt .npy header: want the keys 'descr', 'fortran_order' and 'shape', got 'descr', 'fortran', 'shape'"},
		{"extra key", npyBytesDict("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", good([]int{2, 3})), tensorio.ErrHeader, "corrupt .npy header: want the keys 'descr', 'fortran_order' and 'shape', got 'descr', 'fortran_order', 'shape', 'x'"},
		{"bytes descr", npyBytesDict("{'descr': b'<f4', 'fortran_order': False, 'shape': (2, 3), }", good([]int{2, 3})), tensorio.ErrHeader, "corrupt .npy header: descr b'<f4' is not a valid dtype descriptor"},
		{"deep nesting", npyBytesDict("{'descr': "+strings.Repeat("(", 100)+"}", nil), tensorio.ErrHeader, "corrupt .npy header: cannot parse the header dictionary at byte 73: nested more than 64 deep"},
		{"structured", npyBytesDict("{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': False, 'shape': (2, 3), }", make([]byte, 48)), tensorio.ErrDType,
			"structured dtype [('x', '<f4'), ('y', '<f4')] (a record array) not supported: want a plain float32 or float64 array (save x[name] for one field, or numpy.lib.recfunctions.structured_to_unstructured(x))"},
		{"structured string", npyBytes("f4,f4", false, []int{2, 3}, make([]byte, 48)), tensorio.ErrDType, `structured dtype "f4,f4" (a record array) not supported: want a plain float32 or float64 array`},
		{"sub-array", npyBytesDict("{'descr': ('<f4', (2,)), 'fortran_order': False, 'shape': (2, 3), }", make([]byte, 48)), tensorio.ErrDType, "dtype ('<f4', (2,)) (a sub-array or structured type) not supported: want float32 or float64"},
		{"object", npyBytes("|O", false, []int{2, 3}, make([]byte, 48)), tensorio.ErrDType, "object (pickled Python objects) not supported: want float32 or float64 (convert with x.astype(numpy.float32))"},
		{"negative dimension", npyBytes("<f4", false, []int{-2, 3}, nil), tensorio.ErrHeader, "corrupt .npy header: negative dimension in shape (-2, 3)"},
		{"int64", npyBytes("<i8", false, []int{2, 3}, make([]byte, 48)), tensorio.ErrDType, "int64 not supported: want float32 or float64 (convert with x.astype(numpy.float32))"},
		{"uint8", npyBytes("|u1", false, []int{2, 3}, make([]byte, 6)), tensorio.ErrDType, "uint8 not supported: want float32 or float64 (convert with x.astype(numpy.float32))"},
		{"bool", npyBytes("|b1", false, []int{2, 3}, make([]byte, 6)), tensorio.ErrDType, "bool not supported: want float32 or float64 (convert with x.astype(numpy.float32))"},
		{"complex128", npyBytes("<c16", false, []int{2, 3}, make([]byte, 96)), tensorio.ErrDType, "complex128 not supported: want float32 or float64 (convert with x.astype(numpy.float32))"},
		{"float16", npyBytes("<f2", false, []int{2, 3}, make([]byte, 12)), tensorio.ErrDType, "float16 not supported: want float32 or float64 (convert with x.astype(numpy.float32))"},
		{"string", npyBytes("<U5", false, []int{2, 3}, make([]byte, 120)), tensorio.ErrDType, `dtype "<U5" not supported: want float32 or float64 (convert with x.astype(numpy.float32))`},
		{"datetime", npyBytes("<M8[ns]", false, []int{2, 3}, make([]byte, 48)), tensorio.ErrDType, `dtype "<M8[ns]" not supported: want float32 or float64 (convert with x.astype(numpy.float32))`},
		{"scalar", f4(), tensorio.ErrShape, "shape () has rank 0: want (N,C,H,W), (C,H,W) or (H,W)"},
		{"rank 1", f4(5), tensorio.ErrShape, "shape (5,) has rank 1: want (N,C,H,W), (C,H,W) or (H,W)"},
		{"rank 5", f4(1, 1, 1, 2, 2), tensorio.ErrShape, "shape (1, 1, 1, 2, 2) has rank 5: want (N,C,H,W), (C,H,W) or (H,W)"},
		{"zero-sized", f4(1, 0, 3), tensorio.ErrShape, "shape (1, 0, 3) has a zero-sized dimension"},
		{"zero-sized 2-D", f4(0, 0), tensorio.ErrShape, "shape (0, 0) has a zero-sized dimension"},
		{"absurd shape", npyBytes("<f4", false, []int{100000, 100000, 100000, 100000}, nil), tensorio.ErrTooLarge, "shape (100000, 100000, 100000, 100000) has more than 4294967296 elements"},
		{"overflowing shape", npyBytes("<f8", false, []int{1 << 62, 1 << 62}, nil), tensorio.ErrTooLarge, "shape (4611686018427387904, 4611686018427387904) has more than 4294967296 elements"},
		{"huge claim, no data", npyBytes("<f4", false, []int{65536, 65536}, nil), tensorio.ErrTruncated, "data truncated: shape (65536, 65536) of <f4 needs 17179869184 bytes, file has 0"},
		{"truncated data", npyBytes("<f4", false, []int{2, 3}, make([]byte, 20)), tensorio.ErrTruncated, "data truncated: shape (2, 3) of <f4 needs 24 bytes, file has 20"},
		{"truncated f8", npyBytes(">f8", false, []int{2, 3}, make([]byte, 24)), tensorio.ErrTruncated, "data truncated: shape (2, 3) of >f8 needs 48 bytes, file has 24"},
		{"trailing data", npyBytes("<f4", false, []int{2, 3}, make([]byte, 25)), tensorio.ErrTrailing, "bytes after the (2, 3) <f4 array: is the header's shape right?"},
		{"fortran", npyBytes("<f4", true, []int{2, 3}, make([]byte, 24)), tensorio.ErrFortranOrder, "array (2, 3) is in Fortran (column-major) order: save numpy.ascontiguousarray(x) instead"},
		{"float64 overflow", npyBytes("<f8", false, []int{1, 1}, f64Bytes(binary.LittleEndian, 1e39)), tensorio.ErrRange, "element 0 is 1e+39, beyond float32's range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tensorio.ReadNPY(bytes.NewReader(tt.file))
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.class)
			assert.Equal(t, tt.msg, err.Error())

			// From a file, the message names it; the size check gives
			// the same class.
			path := filepath.Join(t.TempDir(), "bad.npy")
			require.NoError(t, os.WriteFile(path, tt.file, 0o644))
			_, err = tensorio.ReadNPYFile(path)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.class)
			assert.True(t, strings.HasPrefix(err.Error(), path+": "), err.Error())
		})
	}
}

func TestReadNPYFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.npy")
	_, err := tensorio.ReadNPYFile(missing)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.EqualError(t, err, missing+": "+openErrText(t, missing))

	_, err = tensorio.ReadNPYFile(dir)
	assert.ErrorIs(t, err, tensorio.ErrFormat)
	assert.EqualError(t, err, dir+": is a directory, not a file")

	path := filepath.Join(dir, "short.npy")
	require.NoError(t, os.WriteFile(path, npyBytes("<f4", false, []int{2, 3}, make([]byte, 20)), 0o644))
	_, err = tensorio.ReadNPYFile(path)
	assert.EqualError(t, err, path+": data truncated: shape (2, 3) of <f4 needs 24 bytes, file has 20")
}

// TestHugeClaimAllocatesLittle: a header claiming 16 GiB in a file of a
// hundred bytes is refused without allocating anything near that size,
// from a file (size check) and from a stream (bounded reads).
func TestHugeClaimAllocatesLittle(t *testing.T) {
	file := npyBytes("<f4", false, []int{1, 1, 65536, 65535}, make([]byte, 64))
	path := filepath.Join(t.TempDir(), "huge.npy")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	for name, read := range map[string]func() error{
		"file":   func() error { _, err := tensorio.ReadNPYFile(path); return err },
		"stream": func() error { _, err := tensorio.ReadNPY(bytes.NewReader(file)); return err },
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := read()
		runtime.ReadMemStats(&after)
		assert.ErrorIs(t, err, tensorio.ErrTruncated, name)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), name)
	}
}

func TestWriteNPYErrors(t *testing.T) {
	for _, tc := range []struct {
		t     tensorio.Tensor
		class error
		msg   string
	}{
		{tensorio.Tensor{N: 2, C: 1, H: 1, W: 1, Rank: 3, Data: make([]float32, 2)}, tensorio.ErrShape, "cannot write shape (2, 1, 1, 1) with rank 3: N must be 1"},
		{tensorio.Tensor{N: 1, C: 2, H: 1, W: 1, Rank: 2, Data: make([]float32, 2)}, tensorio.ErrShape, "cannot write shape (1, 2, 1, 1) with rank 2: N and C must be 1"},
		{tensorio.Tensor{N: 1, C: 1, H: 1, W: 1, Rank: 5, Data: make([]float32, 1)}, tensorio.ErrShape, "rank 5 not supported: want 4, 3 or 2"},
		{tensorio.Tensor{N: 1, C: 1, H: 2, W: 2, Data: make([]float32, 3)}, tensorio.ErrShape, "tensor (1, 1, 2, 2) has 3 values, want 4"},
		{tensorio.Tensor{N: 1, C: 0, H: 2, W: 2}, tensorio.ErrShape, "shape (1, 0, 2, 2) has a dimension < 1"},
		{tensorio.Tensor{N: 1 << 20, C: 1 << 20, H: 1 << 20, W: 1}, tensorio.ErrTooLarge, "shape (1048576, 1048576, 1048576, 1) has more than 4294967296 elements"},
	} {
		var buf bytes.Buffer
		err := tensorio.WriteNPY(&buf, tc.t)
		assert.ErrorIs(t, err, tc.class)
		assert.EqualError(t, err, tc.msg)
		assert.Zero(t, buf.Len(), "nothing written")
	}
}

func TestNew(t *testing.T) {
	x, err := tensorio.New(2, 3, 4, 5)
	require.NoError(t, err)
	assert.Len(t, x.Data, 120)
	assert.Equal(t, "(2, 3, 4, 5) float32", x.String())
	assert.NoError(t, x.Validate())
	_, err = tensorio.New(1, 0, 1, 1)
	assert.True(t, errors.Is(err, tensorio.ErrShape))
}

// TestNumpyHeaderVerdicts reads the files of testdata/npy_headers.json
// (gen_npy_headers.py): headers numpy.load accepts that numpy.save never
// writes (spacing, key order, quotes, comments, line continuations,
// integer and dtype spellings, Python 2 longs, formats 2.0 and 3.0) and
// headers it refuses, each with numpy's verdict. tensorio reads what
// numpy reads, with its shape and values, refuses what numpy refuses, and
// refuses what numpy reads but vkmps does not support (other dtypes,
// structured dtypes, ranks other than 2-4) with ErrDType or ErrShape.
func TestNumpyHeaderVerdicts(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "npy_headers.json"))
	require.NoError(t, err)
	var table struct {
		Numpy string
		Cases []struct {
			Name, File, Dtype, Error string
			Shape                    []int
			Values                   []float64
		}
	}
	require.NoError(t, json.Unmarshal(raw, &table))
	require.NotEmpty(t, table.Cases)
	read, refused := 0, 0
	for _, c := range table.Cases {
		t.Run(c.Name, func(t *testing.T) {
			file, err := base64.StdEncoding.DecodeString(c.File)
			require.NoError(t, err)
			got, err := tensorio.ReadNPY(bytes.NewReader(file))
			float := c.Dtype == "float32" || c.Dtype == "float64" || c.Dtype == ">f4" || c.Dtype == ">f8"
			switch {
			case c.Error != "":
				require.Error(t, err, "numpy %s refuses it: %s", table.Numpy, c.Error)
				var e *tensorio.Error
				assert.ErrorAs(t, err, &e)
				refused++
			case !float:
				assert.ErrorIs(t, err, tensorio.ErrDType, "numpy reads %s", c.Dtype)
			case len(c.Shape) < 2 || len(c.Shape) > 4:
				assert.ErrorIs(t, err, tensorio.ErrShape)
			default:
				require.NoError(t, err, "numpy %s reads it", table.Numpy)
				assert.Equal(t, c.Shape, got.Shape())
				want := make([]float32, len(c.Values))
				for i, v := range c.Values {
					want[i] = float32(v)
				}
				assert.Equal(t, want, got.Data)
				read++
			}
		})
	}
	assert.Greater(t, read, 30)
	assert.Greater(t, refused, 15)
}
