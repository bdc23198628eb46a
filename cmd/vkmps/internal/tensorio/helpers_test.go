package tensorio_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// npyBytes returns a .npy file laid out exactly as numpy.save writes one
// (format 1.0, dictionary padded with spaces so that the data starts at a
// multiple of 64, then "\n"), with dict as the dictionary text.
func npyBytesDict(dict string, data []byte) []byte {
	pad := 64 - (10+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	hdr := dict + strings.Repeat(" ", pad) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	b.Write(data)
	return b.Bytes()
}

// npyBytes returns numpy's file for an array of dtype descr and shape.
func npyBytes(descr string, fortran bool, shape []int, data []byte) []byte {
	order := "False"
	if fortran {
		order = "True"
	}
	return npyBytesDict(fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, order, pyTuple(shape)), data)
}

func pyTuple(shape []int) string {
	s := make([]string, len(shape))
	for i, d := range shape {
		s[i] = fmt.Sprint(d)
	}
	if len(s) == 1 {
		return "(" + s[0] + ",)"
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// f32Bytes and f64Bytes encode values in the given byte order.
func f32Bytes(order binary.ByteOrder, v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		order.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func f64Bytes(order binary.ByteOrder, v ...float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		order.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// ramp returns n distinct values, some negative.
func ramp(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)*0.25 - 3
	}
	return v
}

// sameBits reports whether a and b hold the same float32 bit patterns.
func sameBits(t *testing.T, want, got []float32) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("element %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

// rawPNG builds a PNG by hand, for the colour types Go's encoder does not
// write (grey+alpha, tRNS): IHDR, extra chunks (type, data pairs), one
// IDAT of rows (each without its filter byte) and IEND.
func rawPNG(w, h int, depth, ctype byte, rows [][]byte, extra ...string) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc.Sum32())
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = depth, ctype
	chunk("IHDR", ihdr)
	for i := 0; i+1 < len(extra); i += 2 {
		chunk(extra[i], []byte(extra[i+1]))
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	for _, r := range rows {
		zw.Write(append([]byte{0}, r...))
	}
	zw.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
}
