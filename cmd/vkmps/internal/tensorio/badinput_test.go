package tensorio_test

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
)

// TestBadInput is package tensorio's table of bad input (issue 10): one
// row or more for every class of error, over streams, files and outputs,
// with the class it must give and its message; none panics, and a refused
// write leaves nothing behind. TestReadNPYErrors, TestReadPNGErrors,
// TestWriteNPYErrors and TestCheckOutput hold the full tables of each.
//
// NaN and Inf in .npy data are values, read as they are (the kernels
// propagate them); only a finite float64 beyond float32's range is an
// error (ErrRange), since converting it would change it silently.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	le := binary.LittleEndian
	readNPY := func(b []byte) func() error {
		return func() error { _, err := tensorio.ReadNPY(bytes.NewReader(b)); return err }
	}
	readPNG := func(b []byte) func() error {
		return func() error { _, err := tensorio.ReadPNG(bytes.NewReader(b)); return err }
	}
	read := func(path string) func() error {
		return func() error { _, err := tensorio.Read(path); return err }
	}
	good := tensorio.Tensor{N: 1, C: 1, H: 2, W: 2, Data: []float32{1, 2, 3, 4}}
	write := func(name string, x tensorio.Tensor) func() error {
		return func() error { return tensorio.Write(filepath.Join(dir, name), x, tensorio.Image) }
	}
	input := file("in.npy", npyBytes("<f4", false, []int{2, 2}, f32Bytes(le, 1, 2, 3, 4)))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	valid := rawPNG(2, 2, 8, 0, [][]byte{{1, 2}, {3, 4}})

	tests := []struct {
		class, name string
		call        func() error
		want        error
		msg         string
	}{
		{"not npy", "empty stream", readNPY(nil), tensorio.ErrNotNPY, "does not start with"},
		{"not npy", "a PNG named .npy", read(file("png.npy", valid)), tensorio.ErrNotNPY, "png.npy: not a .npy file"},
		{"corrupt npy", "version 4", readNPY([]byte("\x93NUMPY\x04\x00\x10\x00\x00\x00{}")), tensorio.ErrHeader, "format version 4.0"},
		{"corrupt npy", "not a dictionary", readNPY(npyBytesDict("hello", nil)), tensorio.ErrHeader, `"hello" is not a literal`},
		{"corrupt npy", "a key too many", readNPY(npyBytesDict("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), 'x': 1}", make([]byte, 4))), tensorio.ErrHeader, "want the keys"},
		{"corrupt npy", "negative dimension", readNPY(npyBytes("<f4", false, []int{-2, 3}, nil)), tensorio.ErrHeader, "negative dimension"},
		{"corrupt npy", "header cut short", readNPY([]byte("\x93NUMPY\x01\x00\x40\x00{'descr'")), tensorio.ErrTruncated, "inside the .npy header"},
		{"corrupt npy", "data cut short", readNPY(npyBytes("<f4", false, []int{2, 3}, make([]byte, 20))), tensorio.ErrTruncated, "needs 24 bytes, file has 20"},
		{"corrupt npy", "data left over", readNPY(npyBytes("<f4", false, []int{2, 3}, make([]byte, 25))), tensorio.ErrTrailing, "bytes after"},
		{"dtype", "int64", readNPY(npyBytes("<i8", false, []int{2, 3}, make([]byte, 48))), tensorio.ErrDType, "int64 not supported"},
		{"dtype", "float16", readNPY(npyBytes("<f2", false, []int{2, 3}, make([]byte, 12))), tensorio.ErrDType, "float16 not supported"},
		{"dtype", "structured", readNPY(npyBytesDict("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3), }", make([]byte, 24))), tensorio.ErrDType, "structured dtype"},
		{"shape", "rank 1", readNPY(npyBytes("<f4", false, []int{5}, make([]byte, 20))), tensorio.ErrShape, "rank 1"},
		{"shape", "rank 5", readNPY(npyBytes("<f4", false, []int{1, 1, 1, 2, 2}, make([]byte, 16))), tensorio.ErrShape, "rank 5"},
		{"shape", "zero-sized", readNPY(npyBytes("<f4", false, []int{1, 0, 3}, nil)), tensorio.ErrShape, "zero-sized"},
		{"order", "Fortran order", readNPY(npyBytes("<f4", true, []int{2, 3}, make([]byte, 24))), tensorio.ErrFortranOrder, "Fortran"},
		{"range", "float64 beyond float32", readNPY(npyBytes("<f8", false, []int{1, 1}, f64Bytes(le, -1e300))), tensorio.ErrRange, "beyond float32's range"},
		{"too large", "absurd shape", readNPY(npyBytes("<f4", false, []int{1 << 40, 1 << 40}, nil)), tensorio.ErrTooLarge, "more than"},
		{"too large", "PNG of too many pixels", readPNG(rawPNG(100000, 100000, 8, 0, nil)), tensorio.ErrTooLarge, "more than"},
		{"too large", "PNG bomb", readPNG(rawPNG(10000, 10000, 8, 0, nil)), tensorio.ErrTooLarge, "can hold"},
		{"corrupt PNG", "not a PNG", readPNG([]byte("GIF89a")), tensorio.ErrPNG, "PNG signature"},
		{"corrupt PNG", "bad checksum", readPNG(append(append([]byte{}, valid[:30]...), append([]byte{valid[30] ^ 1}, valid[31:]...)...)), tensorio.ErrPNG, "checksum"},
		{"corrupt PNG", "truncated", readPNG(valid[:40]), tensorio.ErrPNG, "EOF"},
		{"file", "missing", read(filepath.Join(dir, "missing.npy")), fs.ErrNotExist, "missing.npy"},
		{"file", "a directory", func() error { _, err := tensorio.ReadNPYFile(filepath.Join(dir, "sub")); return err }, tensorio.ErrFormat, "is a directory"},
		{"file", "unknown extension", read(file("x.csv", []byte("1,2"))), tensorio.ErrFormat, "unsupported file extension"},
		{"write", "data of the wrong length", write("short.npy", tensorio.Tensor{N: 1, C: 1, H: 2, W: 2, Data: make([]float32, 3)}), tensorio.ErrShape, "has 3 values, want 4"},
		{"write", "size < 1", write("zero.png", tensorio.Tensor{N: 1, C: 0, H: 2, W: 2}), tensorio.ErrShape, "dimension < 1"},
		{"write", "rank that cannot hold the shape", write("r2.npy", tensorio.Tensor{N: 1, C: 2, H: 1, W: 1, Rank: 2, Data: make([]float32, 2)}), tensorio.ErrShape, "N and C must be 1"},
		{"write", "unknown extension", write("x.jpg", good), tensorio.ErrFormat, "unsupported file extension"},
		{"output", "the input itself", func() error { return tensorio.CheckOutput(input, input) }, tensorio.ErrOutput, "is an input file"},
		{"output", "a directory", func() error { return tensorio.CheckOutput(filepath.Join(dir, "sub"), input) }, tensorio.ErrOutput, "is a directory"},
		{"output", "missing directory", func() error { return tensorio.CheckOutput(filepath.Join(dir, "no", "x.npy")) }, tensorio.ErrOutput, "does not exist"},
		{"output", "empty name", func() error { return tensorio.CheckOutput("", input) }, tensorio.ErrOutput, "no output file"},
		{"new", "size < 1", func() error { _, err := tensorio.New(1, 0, 1, 1); return err }, tensorio.ErrShape, ""},
		{"nil", "nil reader", func() error { _, err := tensorio.ReadNPY(nil); return err }, tensorio.ErrNotNPY, "nil reader"},
		{"nil", "nil writer", func() error { return tensorio.WriteNPY(nil, good) }, tensorio.ErrOutput, "nil writer"},
		{"nil", "nil write function", func() error { return tensorio.WriteFile(filepath.Join(dir, "f.npy"), nil) }, tensorio.ErrOutput, "nil function"},
	}
	before, err := os.ReadDir(dir)
	require.NoError(t, err)
	classes := map[string]int{}
	for _, tc := range tests {
		t.Run(tc.class+"/"+tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
		})
		classes[tc.class]++
	}
	after, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Equal(t, len(before), len(after), "refused writes leave no file")

	// NaN and Inf are values: read, written and read back as they are.
	nan, inf := float32(math.NaN()), float32(math.Inf(-1))
	x, err := tensorio.ReadNPY(bytes.NewReader(npyBytes("<f8", false, []int{1, 3}, f64Bytes(le, math.NaN(), math.Inf(-1), 2))))
	require.NoError(t, err)
	assert.True(t, math.IsNaN(float64(x.Data[0])))
	assert.Equal(t, []float32{inf, 2}, x.Data[1:])
	var b bytes.Buffer
	require.NoError(t, tensorio.WriteNPY(&b, tensorio.Tensor{N: 1, C: 1, H: 1, W: 2, Data: []float32{nan, inf}}))
	y, err := tensorio.ReadNPY(&b)
	require.NoError(t, err)
	assert.True(t, math.IsNaN(float64(y.Data[0])))
	assert.Equal(t, inf, y.Data[1])
	t.Logf("tensorio: %d bad inputs in %d classes: %v", len(tests), len(classes), classes)
}

// TestNoPanicOnZeroValues: nil readers, writers and functions and zero
// tensors given to every exported reader and writer of package tensorio
// give errors, never a panic.
func TestNoPanicOnZeroValues(t *testing.T) {
	calls := map[string]func(){
		"ReadNPY(nil)":               func() { tensorio.ReadNPY(nil) },
		"ReadPNG(nil)":               func() { tensorio.ReadPNG(nil) },
		"WriteNPY(nil, zero)":        func() { tensorio.WriteNPY(nil, tensorio.Tensor{}) },
		"WriteNPY(nil, good)":        func() { tensorio.WriteNPY(nil, tensorio.Tensor{N: 1, C: 1, H: 1, W: 1, Data: []float32{1}}) },
		"WritePNG(nil, good)":        func() { tensorio.WritePNG(nil, tensorio.Tensor{N: 1, C: 1, H: 1, W: 1, Data: []float32{1}}) },
		"WriteHeatmapPNG(nil, zero)": func() { tensorio.WriteHeatmapPNG(nil, tensorio.Tensor{}) },
		"WriteFile(nil fn)":          func() { tensorio.WriteFile(t.TempDir()+"/x.npy", nil) },
		"Read(\"\")":                 func() { tensorio.Read("") },
		"Write(\"\", zero)":          func() { tensorio.Write("", tensorio.Tensor{}, 0) },
		"CheckOutput(\"\")":          func() { tensorio.CheckOutput("") },
		"FormatOf(\"\")":             func() { tensorio.FormatOf("") },
		"zero Validate":              func() { (tensorio.Tensor{}).Validate() },
		"zero String":                func() { _ = (tensorio.Tensor{}).String() },
	}
	for name, f := range calls {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panics: %v", name, r)
				}
			}()
			f()
		}()
	}
	t.Logf("tensorio: %d nil or zero-value calls, no panic", len(calls))
}
