package graph

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"unsafe"

	"github.com/sbinet/npyio/npy"
)

// maxParamElements bounds the size of one parameter file (2^31 values).
const maxParamElements = 1 << 31

// ReadNPY reads a float32 or float64 .npy array of rank 0 to 4 in C order
// from r (NumPy's format 1.0 to 3.0): its values as float32 and its shape.
// It is how graph files' parameters and checkpoints are read.
func ReadNPY(r io.Reader) ([]float32, []int, error) {
	if r == nil {
		return nil, nil, fmt.Errorf("%w: nil reader", ErrGraph)
	}
	br := bufio.NewReader(r)
	rr, err := npy.NewReader(br)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: not a .npy array: %v", ErrGraph, err)
	}
	h := rr.Header.Descr
	if h.Fortran {
		big := 0
		for _, d := range h.Shape {
			if d > 1 {
				big++
			}
		}
		if big > 1 {
			return nil, nil, fmt.Errorf("%w: .npy array in Fortran order: save numpy.ascontiguousarray(x)", ErrGraph)
		}
	}
	if len(h.Shape) > 4 {
		return nil, nil, fmt.Errorf("%w: .npy array of rank %d: want at most 4", ErrShape, len(h.Shape))
	}
	n := 1
	for _, d := range h.Shape {
		if d < 1 || n > maxParamElements/d {
			return nil, nil, fmt.Errorf("%w: .npy shape %v: every size must be >= 1, at most 2^31 values", ErrShape, h.Shape)
		}
		n *= d
	}
	shape := append([]int(nil), h.Shape...)
	switch npy.TypeFrom(h.Type) {
	case reflect.TypeFor[float32]():
		out := make([]float32, 0, min(n, 1<<20))
		out, err = readChunked(rr, out, n)
		if err != nil {
			return nil, nil, err
		}
		return out, shape, trailing(br)
	case reflect.TypeFor[float64]():
		f64 := make([]float64, n)
		if err := rr.Read(&f64); err != nil {
			return nil, nil, fmt.Errorf("%w: .npy data: %v", ErrGraph, err)
		}
		out := make([]float32, n)
		for i, v := range f64 {
			out[i] = float32(v)
			if math.IsInf(float64(out[i]), 0) && !math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("%w: .npy value %d is %g, beyond float32's range", ErrGraph, i, v)
			}
		}
		return out, shape, trailing(br)
	}
	return nil, nil, fmt.Errorf("%w: .npy dtype %q: want float32 or float64 (x.astype(numpy.float32))", ErrGraph, h.Type)
}

// readChunked reads n float32 values in pieces, so that a header claiming
// a huge shape costs no more memory than the data present.
func readChunked(rr *npy.Reader, out []float32, n int) ([]float32, error) {
	for len(out) < n {
		k := min(n-len(out), 1<<20)
		buf := make([]float32, k)
		if err := rr.Read(&buf); err != nil {
			return nil, fmt.Errorf("%w: .npy data truncated after %d of %d values", ErrGraph, len(out), n)
		}
		out = append(out, buf...)
	}
	return out, nil
}

func trailing(r io.Reader) error {
	var b [1]byte
	if n, _ := r.Read(b[:]); n > 0 {
		return fmt.Errorf("%w: bytes after the .npy data (is the header's shape right?)", ErrGraph)
	}
	return nil
}

// readNPYFS reads the .npy file name of fsys.
func readNPYFS(fsys fs.FS, name string) ([]float32, []int, error) {
	f, err := fsys.Open(filepath.ToSlash(filepath.Clean(name)))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	v, s, err := ReadNPY(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return v, s, nil
}

// WriteNPY writes data as a little-endian float32 .npy array of the given
// shape (whose sizes multiply to len(data); an empty shape is a scalar).
func WriteNPY(w io.Writer, data []float32, shape []int) error {
	n := 1
	for _, d := range shape {
		if d < 1 {
			return fmt.Errorf("%w: .npy shape %v", ErrShape, shape)
		}
		n *= d
	}
	if n != len(data) {
		return fmt.Errorf("%w: %d values for .npy shape %v", ErrShape, len(data), shape)
	}
	typ := reflect.TypeFor[float32]()
	for i := len(shape) - 1; i >= 0; i-- {
		typ = reflect.ArrayOf(shape[i], typ)
	}
	if len(data) == 0 {
		data = make([]float32, 1)
	}
	arr := reflect.NewAt(typ, unsafe.Pointer(unsafe.SliceData(data)))
	var buf bytes.Buffer
	if err := npy.Write(&buf, arr.Interface()); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writeFileAtomic writes path through a temporary file in its folder and a
// rename, so a failure leaves no partial file and an existing one intact.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriter(tmp)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	return nil
}
