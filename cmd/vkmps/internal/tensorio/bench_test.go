package tensorio_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
)

// A 1x3x512x512 image: the size of the demo's pictures.
func benchTensor(b *testing.B) tensorio.Tensor {
	x, err := tensorio.New(1, 3, 512, 512)
	if err != nil {
		b.Fatal(err)
	}
	copy(x.Data, ramp(len(x.Data)))
	return x
}

func BenchmarkWriteNPY(b *testing.B) {
	x := benchTensor(b)
	b.SetBytes(int64(4 * len(x.Data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := tensorio.WriteNPY(io.Discard, x); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadNPY(b *testing.B) {
	x := benchTensor(b)
	var buf bytes.Buffer
	if err := tensorio.WriteNPY(&buf, x); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tensorio.ReadNPY(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWritePNG(b *testing.B) {
	x := benchTensor(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := tensorio.WritePNG(io.Discard, x); err != nil {
			b.Fatal(err)
		}
	}
}
