package mnist

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The real MNIST files from the module cache: 60,000 and 10,000 28x28
// images with digit labels (the first training digit is a 5, as every
// MNIST user knows).
func TestLoadRealMNIST(t *testing.T) {
	dir, err := Dir("mnist")
	if err != nil {
		t.Skipf("MNIST files not available: %v", err)
	}
	train, test, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 60000 || test.Len() != 10000 || train.Rows != 28 || train.Cols != 28 {
		t.Fatalf("train %d test %d %dx%d", train.Len(), test.Len(), train.Rows, train.Cols)
	}
	if train.Labels[0] != 5 || test.Labels[0] != 7 {
		t.Errorf("first labels %d %d, want 5 and 7", train.Labels[0], test.Labels[0])
	}
	x := train.Subset(2).Normalize(0.1307, 0.3081)
	if len(x) != 2*784 {
		t.Errorf("%d values", len(x))
	}
}

func writeIDX(t *testing.T, path string, magic uint32, dims []uint32, data []byte, gz bool) {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, d)
	}
	b.Write(data)
	out := b.Bytes()
	if gz {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(out)
		w.Close()
		out = z.Bytes()
		path += ".gz"
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Bad files are errors naming the file, and a header claiming billions of
// images costs no memory.
func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	im, lb := filepath.Join(dir, "im"), filepath.Join(dir, "lb")
	writeIDX(t, im, 0x803, []uint32{2, 2, 2}, []byte{0, 1, 2, 3, 4, 5, 6, 7}, true)
	writeIDX(t, lb, 0x801, []uint32{2}, []byte{3, 9}, false)
	s, err := ReadSet(im, lb)
	if err != nil || s.Len() != 2 || s.Labels[1] != 9 {
		t.Fatalf("%v %+v", err, s)
	}
	for name, f := range map[string]func(){
		"wrong magic":   func() { writeIDX(t, lb, 0x803, []uint32{2}, []byte{3, 9}, false) },
		"label 10":      func() { writeIDX(t, lb, 0x801, []uint32{2}, []byte{3, 10}, false) },
		"count":         func() { writeIDX(t, lb, 0x801, []uint32{3}, []byte{3, 9, 1}, false) },
		"truncated":     func() { writeIDX(t, lb, 0x801, []uint32{2}, []byte{3}, false) },
		"billion files": func() { writeIDX(t, im, 0x803, []uint32{1 << 30, 28, 28}, nil, true) },
	} {
		f()
		if _, err := ReadSet(im, lb); !errors.Is(err, ErrData) {
			t.Errorf("%s: %v", name, err)
		}
		writeIDX(t, im, 0x803, []uint32{2, 2, 2}, []byte{0, 1, 2, 3, 4, 5, 6, 7}, true)
		writeIDX(t, lb, 0x801, []uint32{2}, []byte{3, 9}, false)
	}
	if _, err := Dir("cifar"); !errors.Is(err, ErrData) {
		t.Errorf("unknown set: %v", err)
	}
}
