package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vkenv"
)

// requireVulkan skips t when the machine has no Vulkan device, unless
// $VKMPS_REQUIRE_DEVICE=1 (make test), which makes it a failure.
func requireVulkan(t testing.TB) {
	t.Helper()
	infos, err := vk.Devices()
	if err == nil && len(infos) > 0 {
		return
	}
	if require, rerr := vkenv.RequireDevice(); require || rerr != nil {
		t.Fatalf("no Vulkan device (VKMPS_REQUIRE_DEVICE=1): %v (%v)", err, rerr)
	}
	t.Skipf("no Vulkan device: %v", err)
}

// cliResult is what one in-process run of vkmps gave.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runVkmps runs the command line args in-process.
// Whatever closeCmdDevice found wrong on the way (objects left open,
// validation messages) fails t, even where the command had already failed
// for another reason.
func runVkmps(t testing.TB, args ...string) cliResult {
	t.Helper()
	deviceProblems.Lock()
	deviceProblems.on = true
	first := len(deviceProblems.errs)
	deviceProblems.Unlock()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	deviceProblems.Lock()
	problems := append([]error(nil), deviceProblems.errs[first:]...)
	deviceProblems.Unlock()
	for _, err := range problems {
		t.Errorf("vkmps %s: closing the device: %v", strings.Join(args, " "), err)
	}
	return cliResult{code, out.String(), errb.String()}
}

// mustSucceed runs args and fails t unless the exit status is 0.
func mustSucceed(t testing.TB, args ...string) cliResult {
	t.Helper()
	r := runVkmps(t, args...)
	require.Equal(t, 0, r.code, "vkmps %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.stdout, r.stderr)
	return r
}

// assertOneLineError checks an error exit: status code, exactly one line
// on stderr starting "vkmps CMD: " and containing want, nothing on stdout.
func assertOneLineError(t testing.TB, r cliResult, code int, want string) {
	t.Helper()
	assert.Equal(t, code, r.code, "stderr: %s", r.stderr)
	assert.Empty(t, r.stdout)
	assert.True(t, strings.HasPrefix(r.stderr, "vkmps "), "stderr %q", r.stderr)
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "want one line, got %q", r.stderr)
	assert.True(t, strings.HasSuffix(r.stderr, "\n"), "stderr %q", r.stderr)
	assert.Contains(t, r.stderr, want)
	assert.NotContains(t, r.stderr, "goroutine", "a stack trace")
	assert.NotContains(t, r.stderr, "internal error")
}

// writeTensor writes t to dir/name (.npy or .png) and returns the path.
func writeTensor(t testing.TB, dir, name string, x tensorio.Tensor) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, tensorio.Write(p, x, tensorio.Image))
	return p
}

// readTensor reads a .npy or .png file.
func readTensor(t testing.TB, path string) tensorio.Tensor {
	t.Helper()
	x, err := tensorio.Read(path)
	require.NoError(t, err)
	return x
}

// rawNPY returns a version 1.0 .npy file with the given header fields and
// data, for inputs tensorio would never write (other dtypes).
func rawNPY(descr, shape string, data []byte) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	total := 10 + len(dict) + 1
	dict += strings.Repeat(" ", (64-total%64)%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(dict)))
	b.WriteString(dict)
	b.Write(data)
	return b.Bytes()
}

// ramp returns a tensor of shape (n,c,h,w) and the given rank whose values
// are distinct and mixed in sign.
func ramp(n, c, h, w, rank int) tensorio.Tensor {
	x := tensorio.Tensor{N: n, C: c, H: h, W: w, Rank: rank, Data: make([]float32, n*c*h*w)}
	for i := range x.Data {
		x.Data[i] = float32((i*37)%101)/50 - 1
	}
	return x
}

// dirEntries lists the names in dir, for "no partial output" checks.
func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
