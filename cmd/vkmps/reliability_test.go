package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// TestDeviceProblemsFailCommands: closeCmdDevice, which every command
// closes its device with, turns validation messages (and, with the layer
// on, objects left open) into an error, and reports them to the tests
// even when the command already failed; so a command that misuses Vulkan
// fails its tests.
func TestDeviceProblemsFailCommands(t *testing.T) {
	requireVulkan(t)
	dev, err := openCmdDevice("")
	require.NoError(t, err)
	vktest.AddMessage(dev, false, "TEST-warning", "an injected warning")
	var leaked *vk.Buffer
	if dev.ValidationEnabled() {
		leaked, err = dev.NewBuffer(16, "leaked")
		require.NoError(t, err)
	}
	deviceProblems.Lock()
	deviceProblems.on = true
	first := len(deviceProblems.errs)
	deviceProblems.Unlock()
	err = closeCmdDevice(dev)
	require.ErrorIs(t, err, vk.ErrValidation, "a warning is enough")
	assert.Contains(t, err.Error(), "an injected warning")
	if leaked != nil {
		assert.Contains(t, err.Error(), `objects still open`)
		assert.Contains(t, err.Error(), "buffer=1")
	}
	deviceProblems.Lock()
	got := deviceProblems.errs[first:]
	deviceProblems.Unlock()
	require.Len(t, got, 1, "reported to the tests")
	assert.Same(t, err, got[0])
	assert.NoError(t, closeCmdDevice(dev), "closing twice reports nothing")
}

// fileState is what "untouched" compares: contents and modification time.
type fileState struct {
	data []byte
	mod  time.Time
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fileState{b, fi.ModTime()}
}

// tree lists the files under dir, relative, sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	}))
	sort.Strings(out)
	return out
}

// TestOutputsAtomicInputsUntouched covers every command that writes: pool,
// pool-grad, graph run, graph train, bench --json/--plot and demo. Each
// replaces outputs that exist (whole, keeping their permissions) with no
// temporary file left, never changes an input, and a run that fails after
// its inputs were read leaves the old outputs as they were.
func TestOutputsAtomicInputsUntouched(t *testing.T) {
	requireVulkan(t)
	// What the outputs hold before: any contents, except that bench
	// replaces only reports it wrote itself (checkReportOutput).
	oldFor := func(tc, out string) string {
		switch {
		case tc == "bench" && strings.HasSuffix(out, ".jsonl"):
			return `{"vkmps":"bench","device":"old"}` + "\n"
		case tc == "bench":
			return "\x89PNG\r\n\x1a\nold"
		}
		return "old contents"
	}
	for _, tc := range []struct {
		name    string
		inputs  []string // created by the fixture in dir
		outputs []string // relative to dir
		ok      []string // arguments of a successful run ({} is dir)
		fail    []string // arguments of a run failing after reading its inputs
	}{
		{"pool", []string{"x.npy"}, []string{"y.npy"},
			[]string{"pool", "--op", "avg", "--kernel", "2", "--in", "{}/x.npy", "--out", "{}/y.npy", "--quiet"},
			[]string{"pool", "--op", "max", "--kernel", "12", "--padding", "valid", "--in", "{}/x.npy", "--out", "{}/y.npy"}},
		{"pool-grad", []string{"x.npy", "dy.npy"}, []string{"dx.png"},
			[]string{"pool-grad", "--op", "max", "--kernel", "2", "--in", "{}/x.npy", "--grad", "{}/dy.npy", "--out", "{}/dx.png", "--quiet"},
			[]string{"pool-grad", "--op", "max", "--kernel", "3", "--in", "{}/x.npy", "--grad", "{}/dy.npy", "--out", "{}/dx.png"}},
		{"graph run", []string{"g.json", "x.npy", "labels.npy"}, []string{"out/cat.npy"},
			[]string{"graph", "run", "{}/g.json", "--in", "x={}/x.npy", "--out", "{}/out"},
			[]string{"graph", "run", "{}/g.json", "--in", "x={}/labels.npy", "--out", "{}/out"}},
		{"graph train", []string{"g.json", "x.npy", "labels.npy"}, []string{"out/grad_x_.npy", "out/loss.npy"},
			[]string{"graph", "train", "{}/g.json", "--in", "x={}/x.npy", "--in", "labels={}/labels.npy", "--out", "{}/out"},
			[]string{"graph", "train", "{}/g.json", "--in", "x={}/x.npy", "--in", "labels={}/x.npy", "--out", "{}/out"}},
		{"bench", nil, []string{"b.jsonl", "b.png"},
			[]string{"bench", "--shapes", "1,2,8,8,2,2,0", "--ops", "max", "--iters", "1", "--copy-mib", "1", "--json", "{}/b.jsonl", "--plot", "{}/b.png"},
			[]string{"bench", "--shapes", "1,2,8,8,2,2,0", "--ops", "max", "--iters", "0", "--json", "{}/b.jsonl", "--plot", "{}/b.png"}},
		{"demo", nil, []string{"demo/max.png", "demo/input.png"},
			[]string{"demo", "--out", "{}/demo"},
			[]string{"demo", "--out", "{}/demo", "--bogus"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := newGraphFixture(t) // x (2,3,9,9), labels (2,6,5,5), g.json
			inputs := map[string]fileState{}
			for _, in := range tc.inputs {
				p := filepath.Join(dir, in)
				if in == "dy.npy" { // the shape of the 2x2 max pooling of x
					r := runVkmps(t, "pool", "--op", "max", "--kernel", "2", "--in", f.x, "--out", p, "--quiet")
					require.Equal(t, 0, r.code, r.stderr)
					continue
				}
				src := map[string]string{"g.json": f.json, "x.npy": f.x, "labels.npy": f.labels}[in]
				require.NoError(t, os.WriteFile(p, mustRead(t, src), 0o644))
			}
			for _, in := range tc.inputs {
				inputs[in] = stateOf(t, filepath.Join(dir, in))
			}
			perms := map[string]os.FileMode{} // 0o600, or 0o666 on Windows
			for _, out := range tc.outputs {
				p := filepath.Join(dir, out)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(oldFor(tc.name, out)), 0o600))
				fi, err := os.Stat(p)
				require.NoError(t, err)
				perms[out] = fi.Mode().Perm()
			}
			expand := func(args []string) []string {
				out := make([]string, len(args))
				for i, a := range args {
					out[i] = strings.ReplaceAll(a, "{}", dir)
				}
				return out
			}
			before := tree(t, dir)

			// A failing run: exit 2, old outputs intact, nothing new.
			r := runVkmps(t, expand(tc.fail)...)
			assert.Equal(t, 2, r.code, "stderr: %s", r.stderr)
			assert.Equal(t, before, tree(t, dir), "no file added or removed")
			for _, out := range tc.outputs {
				b := mustRead(t, filepath.Join(dir, out))
				assert.Equal(t, oldFor(tc.name, out), string(b), "%s kept", out)
			}

			// A successful run replaces the outputs, whole.
			r = mustSucceed(t, expand(tc.ok)...)
			after := tree(t, dir)
			for _, name := range after {
				assert.NotContains(t, name, ".tmp", "temporary file left")
			}
			for _, out := range tc.outputs {
				p := filepath.Join(dir, out)
				b := mustRead(t, p)
				assert.NotEqual(t, oldFor(tc.name, out), string(b), "%s replaced", out)
				fi, err := os.Stat(p)
				require.NoError(t, err)
				assert.Equal(t, perms[out], fi.Mode().Perm(), "%s keeps its permissions", out)
				if strings.HasSuffix(out, ".npy") {
					readTensor(t, p)
				}
			}
			for in, st := range inputs {
				now := stateOf(t, filepath.Join(dir, in))
				assert.True(t, bytes.Equal(st.data, now.data), "%s changed", in)
				assert.Equal(t, st.mod, now.mod, "%s touched", in)
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
