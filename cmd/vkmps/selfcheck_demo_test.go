package main

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/demoimage"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vkenv"
)

// selfcheck passes on the device with a small table (and the PyTorch
// cases, found from this package's directory), kernel by kernel.
func TestSelfcheckPasses(t *testing.T) {
	requireVulkan(t)
	r := mustSucceed(t, "selfcheck", "--cases", "3", "--seed", "5")
	assert.Contains(t, r.stdout, "3 random cases per kernel (seed 5); PyTorch cases: 180 from ")
	for _, k := range []string{"PoolingMax", "PoolingAverage", "PoolingL2Norm", "DilatedPoolingMax"} {
		for _, name := range []string{k, k + "Gradient"} {
			assert.Regexp(t, "(?m)^"+name+" +3 +[0-9]+ +ok$", r.stdout)
		}
	}
	assert.Contains(t, r.stdout, "all 8 kernels agree with the reference")
	assert.Empty(t, r.stderr, "no bar when stderr is not a terminal")
}

// A wrong result fails its kernel, names the case and exits with 1; the
// other kernels still pass.
func TestSelfcheckReportsFailures(t *testing.T) {
	requireVulkan(t)
	selfcheckHook = func(kernel string, got []float32) {
		if kernel == "PoolingAverageGradient" && len(got) > 0 {
			got[0] += 0.5
		}
	}
	t.Cleanup(func() { selfcheckHook = nil })
	t.Chdir(t.TempDir()) // no PyTorch cases from here
	r := runVkmps(t, "selfcheck", "--cases", "2")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, "PyTorch cases: not found")
	assert.Regexp(t, `(?m)^PoolingAverageGradient +2 +0 +FAIL \(2 of 2\)$`, r.stdout)
	assert.Regexp(t, `(?m)^PoolingAverage +2 +0 +ok$`, r.stdout)
	assert.Contains(t, r.stdout, "  PoolingAverageGradient: random 0: kernel ")
	assert.Equal(t, "vkmps selfcheck: check failed: 1 of 8 kernels gave wrong results on "+deviceName(t)+"\n", r.stderr)
}

func TestSelfcheckBadFlags(t *testing.T) {
	assertOneLineError(t, runVkmps(t, "selfcheck", "--cases", "-1"), 2, "--cases: -1 is out of range")
	assertOneLineError(t, runVkmps(t, "selfcheck", "--seed", "x"), 2, `invalid value "x" for flag -seed`)
	requireVulkan(t)
	assertOneLineError(t, runVkmps(t, "selfcheck", "--device", "no-such-gpu", "--cases", "0"), 2, "no-such-gpu")
}

// deviceName is the name of the device the commands choose.
func deviceName(t *testing.T) string {
	infos, err := vk.Devices()
	require.NoError(t, err)
	i, err := vk.Choose(infos, vkenv.Device())
	require.NoError(t, err)
	return infos[i].Name
}

// The demo writes its nine PNGs (created directory, atomically: no
// temporary files left) and a summary in which every kernel agrees with
// the reference.
func TestDemo(t *testing.T) {
	requireVulkan(t)
	dir := filepath.Join(t.TempDir(), "new", "demo")
	r := mustSucceed(t, "demo", "--out", dir)
	for _, k := range []string{"PoolingMax", "PoolingAverage", "PoolingL2Norm", "DilatedPoolingMax"} {
		assert.Regexp(t, "(?m)^"+k+` +\(3, 128, 128\) .*(exact|max \|diff\| [0-9.e-]+)$`, r.stdout)
	}
	assert.NotContains(t, r.stdout, "DIFFERS")
	want := []string{"input.png", "max.png", "max-grad.png", "avg.png", "avg-grad.png", "l2.png", "l2-grad.png",
		"dilated-max.png", "dilated-max-grad.png"}
	assert.ElementsMatch(t, want, dirEntries(t, dir))
	assert.Contains(t, r.stdout, "wrote 9 PNGs to "+dir)
	for _, name := range want {
		f, err := os.Open(filepath.Join(dir, name))
		require.NoError(t, err)
		cfg, err := png.DecodeConfig(f)
		f.Close()
		require.NoError(t, err, name)
		switch {
		case name == "input.png":
			assert.Equal(t, [2]int{256, 256}, [2]int{cfg.Width, cfg.Height})
		case strings.HasSuffix(name, "-grad.png"): // 3 panels, 2 per row
			assert.Equal(t, [2]int{2*256 + 1, 2*256 + 1}, [2]int{cfg.Width, cfg.Height}, name)
		default:
			assert.Equal(t, [2]int{128, 128}, [2]int{cfg.Width, cfg.Height}, name)
		}
	}
	// Again into the same directory: files are replaced.
	mustSucceed(t, "demo", "--out", dir)

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	assertOneLineError(t, runVkmps(t, "demo", "--out", file), 2, "--out: ")
}

// The embedded picture is what internal/demoimage draws (go generate
// rewrites it), an opaque RGB image.
func TestDemoPictureIsGenerated(t *testing.T) {
	got, err := png.Decode(bytes.NewReader(demoPNG))
	require.NoError(t, err)
	want := demoimage.Render()
	require.Equal(t, want.Bounds(), got.Bounds())
	_, isRGB := got.(*image.RGBA)
	assert.True(t, isRGB, "an opaque picture is stored as RGB, read as 3 channels")
	for y := range demoimage.Size {
		for x := range demoimage.Size {
			r, g, b, _ := got.At(x, y).RGBA()
			w := want.NRGBAAt(x, y)
			if [3]uint32{r >> 8, g >> 8, b >> 8} != [3]uint32{uint32(w.R), uint32(w.G), uint32(w.B)} {
				t.Fatalf("pixel (%d, %d) is %v, Render draws %v: run go generate ./cmd/vkmps", x, y, got.At(x, y), w)
			}
		}
	}
}

// The real binary: exit statuses 0, 1 and 2 as the shell sees them, one
// line on stderr, nothing else.
func TestBinaryExitCodes(t *testing.T) {
	requireVulkan(t)
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	// $VKMPS_TEST_BINARY: a vkmps built beforehand from this tree, where
	// there is no go command (make docker-test's container).
	bin := os.Getenv("VKMPS_TEST_BINARY")
	if bin == "" {
		if _, err := exec.LookPath("go"); err != nil {
			t.Skip("builds the binary: no go command here, and no $VKMPS_TEST_BINARY")
		}
		bin = filepath.Join(dir, "vkmps")
		build := exec.Command("go", "build", "-o", bin, ".")
		out, err := build.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	x := writeTensor(t, dir, "x.npy", ramp(1, 1, 4, 4, 2))
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"pool", "--op", "max", "--kernel", "2", "--in", x, "--out", filepath.Join(dir, "y.npy")}, 0, ""},
		{[]string{"pool", "--op", "mux", "--kernel", "2", "--in", x, "--out", filepath.Join(dir, "z.npy")}, 2, `--op: unknown value "mux"`},
		{[]string{"pool", "--op", "max", "--kernel", "2", "--in", x, "--out", x}, 2, "is an input file"},
		{[]string{"pool-grad", "--op", "max", "--kernel", "2", "--in", x, "--grad", x, "--out", filepath.Join(dir, "dx.npy")}, 2,
			"want the forward output's shape (2, 2)"},
		{[]string{"selfcheck", "--cases", "1"}, 0, ""},
		{[]string{"demo", "--out", filepath.Join(dir, "demo")}, 0, ""},
		{[]string{"no-such-command"}, 2, `unknown command "no-such-command"`},
		{[]string{"pool", "--help"}, 0, ""},
	}
	for _, tt := range tests {
		cmd := exec.Command(bin, tt.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		assert.Equal(t, tt.code, code, "%v: %s", tt.args, stderr.String())
		if tt.stderr == "" {
			assert.Empty(t, stderr.String(), tt.args)
			continue
		}
		assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "%v: %q", tt.args, stderr.String())
		assert.Contains(t, stderr.String(), tt.stderr, tt.args)
	}
	y := readTensor(t, filepath.Join(dir, "y.npy"))
	assert.Equal(t, []int{2, 2}, y.Shape())
}
