package tensorio

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Format is a tensor file format, chosen by extension.
type Format int

// The formats: .npy and .png, in any case.
const (
	NPY Format = iota + 1
	PNG
)

// FormatOf returns the format of path from its extension, or an error
// wrapping ErrFormat that names path.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy":
		return NPY, nil
	case ".png":
		return PNG, nil
	}
	return 0, &Error{Path: path, Err: ErrFormat, Msg: "unsupported file extension: want .npy or .png"}
}

// Kind says how Write draws a PNG; .npy output ignores it.
type Kind int

const (
	// Image is a result, normalised min..max (WritePNG).
	Image Kind = iota
	// Heatmap is a gradient, on a blue-white-red scale (WriteHeatmapPNG).
	Heatmap
)

// Read reads the .npy or .png file at path, by extension (ReadContext
// without a context or a check).
func Read(path string) (Tensor, error) {
	return ReadContext(nil, path, nil)
}

// Write writes t to path atomically (see WriteFile): .npy as float32 at
// t's rank (WriteNPY), .png as an Image (WritePNG) or a Heatmap
// (WriteHeatmapPNG). t is checked before anything is created.
func Write(path string, t Tensor, kind Kind) error {
	f, err := FormatOf(path)
	if err != nil {
		return err
	}
	if err := t.Validate(); err != nil {
		return withPath(path, err)
	}
	encode := func(w io.Writer) error { return WriteNPY(w, t) }
	if f == PNG && kind == Heatmap {
		encode = func(w io.Writer) error { return WriteHeatmapPNG(w, t) }
	} else if f == PNG {
		encode = func(w io.Writer) error { return WritePNG(w, t) }
	}
	return WriteFile(path, encode)
}

// WriteFile writes path atomically: write fills a temporary file in the
// same directory (".NAME.tmp*", buffered), which is synced and renamed
// over path only when write, the flush and the sync all succeed. On any
// error, or a panic in write, the temporary file is removed and path is
// untouched: absent if it was absent, its old contents otherwise. The
// file gets path's old permissions, or 0644. A directory at path is an
// error. Errors name path.
func WriteFile(path string, write func(w io.Writer) error) (err error) {
	if write == nil {
		return &Error{Path: path, Err: ErrOutput, Msg: "nothing to write (nil function)"}
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return &Error{Path: path, Err: ErrOutput, Msg: "is a directory: want a file name"}
		}
		mode = fi.Mode().Perm()
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return withPath(path, err)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return withPath(path, err)
	}
	if err := bw.Flush(); err != nil {
		return withPath(path, err)
	}
	if err := f.Chmod(mode); err != nil {
		return withPath(path, err)
	}
	if err := f.Sync(); err != nil {
		return withPath(path, err)
	}
	if err := f.Close(); err != nil {
		return withPath(path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return withPath(path, err)
	}
	done = true
	return nil
}

// CheckOutput refuses an output path before any work is done: empty; an
// existing directory; in a directory that does not exist; or the same
// file as one of inputs, whether by name (cleaned absolute paths, so
// "./x.npy" is "x.npy") or as a symbolic or hard link (os.SameFile).
// Errors wrap ErrOutput and name out. Empty inputs are skipped.
func CheckOutput(out string, inputs ...string) error {
	refuse := func(msg string) error { return &Error{Path: out, Err: ErrOutput, Msg: msg} }
	if out == "" {
		return &Error{Err: ErrOutput, Msg: "no output file given"}
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return withPath(out, err)
	}
	outInfo, statErr := os.Stat(out)
	switch {
	case statErr == nil && outInfo.IsDir():
		return refuse("is a directory: want a file name")
	case statErr != nil && !errors.Is(statErr, fs.ErrNotExist):
		return withPath(out, statErr)
	}
	if di, err := os.Stat(filepath.Dir(absOut)); err != nil || !di.IsDir() {
		if err == nil {
			// A file used as a folder: Unix said so above (ENOTDIR);
			// Windows says "path not found" (its syscall.ENOTDIR too).
			return refuse("not a directory")
		}
		return refuse("directory " + filepath.Dir(out) + " does not exist")
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		absIn, err := filepath.Abs(in)
		if err != nil {
			return withPath(in, err)
		}
		if absIn == absOut {
			return refuse("is an input file: refusing to overwrite it")
		}
		if statErr != nil {
			continue // out does not exist, so it is no link to in
		}
		if inInfo, err := os.Stat(in); err == nil && os.SameFile(inInfo, outInfo) {
			return refuse("is the same file as input " + in + " (a link): refusing to overwrite it")
		}
	}
	return nil
}
