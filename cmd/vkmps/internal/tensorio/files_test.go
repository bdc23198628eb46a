package tensorio_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
)

// entries lists dir's names, so tests can assert no temporary file is
// left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestReadWriteFiles(t *testing.T) {
	dir := t.TempDir()
	x := tensorio.Tensor{N: 1, C: 3, H: 2, W: 2, Rank: 3, Data: ramp(12)}

	npyPath := filepath.Join(dir, "x.NPY")
	require.NoError(t, tensorio.Write(npyPath, x, tensorio.Heatmap), "kind is ignored for .npy")
	got, err := tensorio.Read(npyPath)
	require.NoError(t, err)
	assert.Equal(t, x, got)

	pngPath := filepath.Join(dir, "x.png")
	require.NoError(t, tensorio.Write(pngPath, x, tensorio.Image))
	img, err := tensorio.Read(pngPath)
	require.NoError(t, err)
	assert.Equal(t, [4]int{1, 3, 2, 2}, [4]int{img.N, img.C, img.H, img.W})
	assert.Equal(t, float32(0), img.Data[0], "min → 0")
	assert.Equal(t, float32(1), img.Data[11], "max → 1")

	hm := filepath.Join(dir, "g.png")
	require.NoError(t, tensorio.Write(hm, x, tensorio.Heatmap))
	h, err := tensorio.Read(hm)
	require.NoError(t, err)
	assert.Equal(t, 3, h.C, "a heatmap is RGB")
	assert.ElementsMatch(t, []string{"x.NPY", "x.png", "g.png"}, entries(t, dir))

	fi, err := os.Stat(npyPath)
	require.NoError(t, err)
	assert.Equal(t, permAsKept(t, 0o644), fi.Mode().Perm())
}

func TestFormatErrors(t *testing.T) {
	dir := t.TempDir()
	x := tensorio.Tensor{N: 1, C: 1, H: 1, W: 1, Data: []float32{1}}
	for _, p := range []string{"x.tif", "x", "x.npy.bak", "x.npz"} {
		path := filepath.Join(dir, p)
		err := tensorio.Write(path, x, tensorio.Image)
		assert.ErrorIs(t, err, tensorio.ErrFormat)
		assert.EqualError(t, err, path+": unsupported file extension: want .npy or .png")
		_, err = tensorio.Read(path)
		assert.ErrorIs(t, err, tensorio.ErrFormat)
	}
	assert.Empty(t, entries(t, dir))

	_, err := tensorio.Read(filepath.Join(dir, "missing.png"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
	missing := filepath.Join(dir, "missing.png")
	assert.EqualError(t, err, missing+": "+openErrText(t, missing))

	bad := filepath.Join(dir, "bad.png")
	require.NoError(t, os.WriteFile(bad, []byte("not a png"), 0o644))
	_, err = tensorio.Read(bad)
	assert.ErrorIs(t, err, tensorio.ErrPNG)
	assert.EqualError(t, err, bad+": not a PNG file: it does not start with the PNG signature")
}

// TestAtomicWrite: a failed or panicking write leaves no file, no
// temporary file, and an existing destination as it was.
func TestAtomicWrite(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.npy")
	failing := func(w io.Writer) error {
		if _, err := w.Write(make([]byte, 3<<20)); err != nil { // past the buffer
			return err
		}
		return errors.New("disk on fire")
	}
	err := tensorio.WriteFile(out, failing)
	assert.EqualError(t, err, out+": disk on fire")
	assert.Empty(t, entries(t, dir), "no output, no temporary file")

	require.NoError(t, os.WriteFile(out, []byte("precious"), 0o600))
	assert.Error(t, tensorio.WriteFile(out, failing))
	assert.PanicsWithValue(t, "boom", func() {
		tensorio.WriteFile(out, func(w io.Writer) error {
			io.WriteString(w, "partial")
			panic("boom")
		})
	})
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "precious", string(b), "old contents intact")
	assert.Equal(t, []string{"out.npy"}, entries(t, dir))

	// A bad tensor is refused before anything is created.
	bad := tensorio.Tensor{N: 1, C: 1, H: 2, W: 2, Data: make([]float32, 3)}
	err = tensorio.Write(filepath.Join(dir, "new.png"), bad, tensorio.Image)
	assert.ErrorIs(t, err, tensorio.ErrShape)
	assert.EqualError(t, err, filepath.Join(dir, "new.png")+": tensor (1, 1, 2, 2) has 3 values, want 4")
	assert.Equal(t, []string{"out.npy"}, entries(t, dir))

	// Success replaces the file and keeps its permissions.
	require.NoError(t, tensorio.WriteFile(out, func(w io.Writer) error {
		_, err := io.WriteString(w, "new")
		return err
	}))
	b, _ = os.ReadFile(out)
	assert.Equal(t, "new", string(b))
	fi, _ := os.Stat(out)
	assert.Equal(t, permAsKept(t, 0o600), fi.Mode().Perm())
	assert.Equal(t, []string{"out.npy"}, entries(t, dir))
}

func TestWriteFileRefusals(t *testing.T) {
	dir := t.TempDir()
	x := tensorio.Tensor{N: 1, C: 1, H: 1, W: 1, Data: []float32{1}}
	sub := filepath.Join(dir, "sub.npy")
	require.NoError(t, os.Mkdir(sub, 0o755))
	err := tensorio.Write(sub, x, tensorio.Image)
	assert.ErrorIs(t, err, tensorio.ErrOutput)
	assert.EqualError(t, err, sub+": is a directory: want a file name")

	nodir := filepath.Join(dir, "nope", "x.npy")
	err = tensorio.Write(nodir, x, tensorio.Image)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.EqualError(t, err, nodir+": "+openErrText(t, nodir))
	assert.Equal(t, []string{"sub.npy"}, entries(t, dir))
}

// TestCheckOutput is the table of outputs that would lose an input.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("in.npy", []byte("input"), 0o644))
	require.NoError(t, os.WriteFile("other.npy", []byte("other"), 0o644))
	links := symlinked(t, "in.npy", "sym.npy")
	require.NoError(t, os.Link("in.npy", "hard.npy"))
	require.NoError(t, os.Mkdir("d", 0o755))
	links = links && symlinked(t, "d", "dlink")
	abs := filepath.Join(dir, "in.npy")

	tests := []struct {
		out    string
		inputs []string
		msg    string // "" for accepted
	}{
		{"in.npy", []string{"in.npy"}, "in.npy: is an input file: refusing to overwrite it"},
		{"./in.npy", []string{"in.npy"}, "./in.npy: is an input file: refusing to overwrite it"},
		{"in.npy", []string{"./in.npy"}, "in.npy: is an input file: refusing to overwrite it"},
		{abs, []string{"in.npy"}, abs + ": is an input file: refusing to overwrite it"},
		{"d/../in.npy", []string{abs}, "d/../in.npy: is an input file: refusing to overwrite it"},
		{"in.npy", []string{"grad.npy", "in.npy"}, "in.npy: is an input file: refusing to overwrite it"},
		{"sym.npy", []string{"in.npy"}, "sym.npy: is the same file as input in.npy (a link): refusing to overwrite it"},
		{"in.npy", []string{"sym.npy"}, "in.npy: is the same file as input sym.npy (a link): refusing to overwrite it"},
		{"hard.npy", []string{"in.npy"}, "hard.npy: is the same file as input in.npy (a link): refusing to overwrite it"},
		{"dlink/../in.npy", []string{"in.npy"}, "dlink/../in.npy: is an input file: refusing to overwrite it"},
		{"d", []string{"in.npy"}, "d: is a directory: want a file name"},
		{"dlink", nil, "dlink: is a directory: want a file name"},
		{"missing/out.npy", []string{"in.npy"}, "missing/out.npy: directory missing does not exist"},
		{"in.npy/out.npy", []string{"x.npy"}, "in.npy/out.npy: not a directory"},
		{"", []string{"in.npy"}, "no output file given"},
		{"out.npy", []string{"in.npy"}, ""},
		{"other.npy", []string{"in.npy", ""}, ""},
		{"d/in.npy", []string{"in.npy"}, ""},
		{"out.png", nil, ""},
	}
	for _, tt := range tests {
		if !links && (tt.out == "sym.npy" || tt.out == "dlink" || slices.Contains(tt.inputs, "sym.npy")) {
			continue // the rows of the symbolic links
		}
		err := tensorio.CheckOutput(tt.out, tt.inputs...)
		if tt.msg == "" {
			assert.NoError(t, err, tt.out)
			continue
		}
		if assert.Error(t, err, tt.out) {
			assert.Equal(t, tt.msg, err.Error())
			if !strings.Contains(tt.msg, "not a directory") {
				assert.ErrorIs(t, err, tensorio.ErrOutput, tt.out)
			}
		}
	}
	b, err := os.ReadFile("in.npy")
	require.NoError(t, err)
	assert.Equal(t, "input", string(b))
}

// TestInputsUntouched: reading never changes an input.
func TestInputsUntouched(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.npy")
	x := tensorio.Tensor{N: 1, C: 1, H: 2, W: 2, Data: ramp(4)}
	require.NoError(t, tensorio.Write(in, x, tensorio.Image))
	require.NoError(t, os.Chmod(in, 0o444))
	before, err := os.ReadFile(in)
	require.NoError(t, err)
	fi0, _ := os.Stat(in)
	_, err = tensorio.Read(in)
	require.NoError(t, err)
	after, _ := os.ReadFile(in)
	fi1, _ := os.Stat(in)
	assert.Equal(t, before, after)
	assert.Equal(t, fi0.ModTime(), fi1.ModTime())
}
