package tensorio_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/png"
	"math"
	"testing"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
)

// FuzzReadNPY: ReadNPY never panics; whatever it accepts is a consistent
// tensor that writes and reads back bit for bit; whatever it refuses is
// an *Error of a known class. The seeds (run by plain go test) are valid
// files of every rank and dtype and the broken headers of
// TestReadNPYErrors. Longer runs:
//
//	go test -fuzz FuzzReadNPY -fuzztime 10m ./cmd/vkmps/internal/tensorio
func FuzzReadNPY(f *testing.F) {
	le, be := binary.LittleEndian, binary.BigEndian
	f.Add(npyBytes("<f4", false, []int{2, 3}, f32Bytes(le, 1, 2, 3, 4, 5, 6)))
	f.Add(npyBytes(">f4", false, []int{1, 2, 2}, f32Bytes(be, 1, float32(math.NaN()), 3, 4)))
	f.Add(npyBytes("<f8", false, []int{1, 1, 1, 2}, f64Bytes(le, 1e-300, -7)))
	f.Add(npyBytes(">f8", false, []int{2, 1}, f64Bytes(be, 1e300, 0)))
	f.Add(npyBytes("<f4", true, []int{1, 3}, f32Bytes(le, 1, 2, 3)))
	f.Add(npyBytes("<f4", true, []int{2, 2}, f32Bytes(le, 1, 2, 3, 4)))
	f.Add(npyBytes("<i8", false, []int{1, 1}, make([]byte, 8)))
	f.Add(npyBytes("<U3", false, []int{1, 1}, make([]byte, 12)))
	f.Add(npyBytes("<f4", false, []int{5}, make([]byte, 20)))
	f.Add(npyBytes("<f4", false, nil, make([]byte, 4)))
	f.Add(npyBytes("<f4", false, []int{1, 0}, nil))
	f.Add(npyBytes("<f4", false, []int{-1, -1}, nil))
	f.Add(npyBytes("<f4", false, []int{1 << 40, 1 << 40}, nil))
	f.Add(npyBytes("<f4", false, []int{65536, 65536}, nil))
	f.Add(npyBytes("<f4", false, []int{2, 3}, make([]byte, 23)))
	f.Add(npyBytes("<f4", false, []int{2, 3}, make([]byte, 25)))
	f.Add(npyBytesDict("{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4', }", make([]byte, 24)))
	f.Add(npyBytesDict("{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", make([]byte, 24)))
	f.Add(npyBytesDict("{'descr':'<f4','fortran_order':False,'shape':(2,3)}", make([]byte, 24)))
	f.Add(npyBytesDict("{}", nil))
	f.Add(npyBytesDict("", nil))
	f.Add([]byte("\x93NUMPY\x02\x00\x0c\x00\x00\x00{'descr': }\n"))
	f.Add([]byte("\x93NUMPY\x01\x00\x04\x00{}  "))
	f.Add([]byte("\x93NUMPY\x01\x00\xff\xff"))
	f.Add([]byte("\x93NUMPY\x03\x00"))
	f.Add([]byte("\x93NUMPY"))
	f.Add([]byte("not npy"))
	f.Add([]byte{})
	var w bytes.Buffer
	tensorio.WriteNPY(&w, tensorio.Tensor{N: 2, C: 1, H: 1, W: 3, Data: []float32{1, 2, 3, 4, 5, 6}})
	f.Add(w.Bytes())

	classes := []error{tensorio.ErrNotNPY, tensorio.ErrHeader, tensorio.ErrTruncated, tensorio.ErrTrailing,
		tensorio.ErrDType, tensorio.ErrShape, tensorio.ErrFortranOrder, tensorio.ErrRange, tensorio.ErrTooLarge}
	f.Fuzz(func(t *testing.T, file []byte) {
		x, err := tensorio.ReadNPY(bytes.NewReader(file))
		if err != nil {
			var e *tensorio.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %q (%T) is not a *tensorio.Error", err, err)
			}
			known := false
			for _, c := range classes {
				known = known || errors.Is(err, c)
			}
			if !known || e.Msg == "" {
				t.Fatalf("error %q has no known class", err)
			}
			return
		}
		if x.N < 1 || x.C < 1 || x.H < 1 || x.W < 1 || len(x.Data) != x.N*x.C*x.H*x.W {
			t.Fatalf("inconsistent tensor: (%d, %d, %d, %d) with %d values", x.N, x.C, x.H, x.W, len(x.Data))
		}
		if x.Rank < 2 || x.Rank > 4 || x.Rank < 4 && x.N != 1 || x.Rank == 2 && x.C != 1 {
			t.Fatalf("rank %d for (%d, %d, %d, %d)", x.Rank, x.N, x.C, x.H, x.W)
		}
		if err := x.Validate(); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := tensorio.WriteNPY(&b, x); err != nil {
			t.Fatal(err)
		}
		y, err := tensorio.ReadNPY(&b)
		if err != nil {
			t.Fatalf("cannot read back what was accepted: %v", err)
		}
		if y.N != x.N || y.C != x.C || y.H != x.H || y.W != x.W || y.Rank != x.Rank {
			t.Fatalf("shape changed: %v rank %d, then %v rank %d", x, x.Rank, y, y.Rank)
		}
		for i := range x.Data {
			if math.Float32bits(x.Data[i]) != math.Float32bits(y.Data[i]) {
				t.Fatalf("element %d changed: %v, then %v", i, x.Data[i], y.Data[i])
			}
		}
	})
}

// FuzzReadPNG: ReadPNG never panics, and what it accepts is a consistent
// (1,C,H,W) tensor with C in 1..4 and values in 0..1.
func FuzzReadPNG(f *testing.F) {
	f.Add(rawPNG(2, 1, 8, 4, [][]byte{{10, 255, 20, 0}}))
	f.Add(rawPNG(2, 1, 8, 0, [][]byte{{7, 9}}, "tRNS", "\x00\x09"))
	f.Add(rawPNG(1, 1, 8, 2, [][]byte{{1, 2, 3}}, "tRNS", "\x00\x01\x00\x02\x00\x03"))
	f.Add(rawPNG(3, 1, 8, 3, [][]byte{{0, 1, 2}}, "PLTE", "\xff\x00\x00\x00\x00\x33\x01\x02\x03", "tRNS", "\xff\x00\x80"))
	f.Add(rawPNG(10000, 10000, 8, 0, nil))
	var b bytes.Buffer
	png.Encode(&b, image.NewNRGBA64(image.Rect(0, 0, 3, 2)))
	f.Add(b.Bytes())
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Fuzz(func(t *testing.T, file []byte) {
		x, err := tensorio.ReadPNG(bytes.NewReader(file))
		if err != nil {
			var e *tensorio.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %q (%T) is not a *tensorio.Error", err, err)
			}
			return
		}
		if x.N != 1 || x.C < 1 || x.C > 4 || x.Rank != 3 || len(x.Data) != x.C*x.H*x.W {
			t.Fatalf("inconsistent tensor (%d, %d, %d, %d) rank %d with %d values", x.N, x.C, x.H, x.W, x.Rank, len(x.Data))
		}
		for i, v := range x.Data {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("element %d is %v", i, v)
			}
		}
	})
}
