package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 22: a device that does not exist is reported as that, first, in
// one line with exit status 2: not as "no Vulkan device with compute
// support (install a driver ...)" with the real cause at the end.
func TestNoSuchDeviceIsNamedFirst(t *testing.T) {
	requireVulkan(t)
	for _, args := range [][]string{
		{"devices", "--device", "99"},
		{"selfcheck", "--cases", "1", "--device", "99"},
	} {
		r := runVkmps(t, args...)
		assertOneLineError(t, r, 2, "vk: no such Vulkan device: no device has index 99 (devices: 0 ")
		assert.True(t, strings.HasPrefix(r.stderr, "vkmps "+args[0]+": vk: no such Vulkan device: "), "%v: %q", args, r.stderr)
		assert.NotContains(t, r.stderr, "install", "%v", args)
		assert.NotContains(t, r.stderr, "VKMPS_DEVICE", "%v: the flag chose it", args)
	}
	t.Setenv("VKMPS_DEVICE", "nonexistent")
	for _, args := range [][]string{{"devices"}, {"selfcheck", "--cases", "1"}} {
		r := runVkmps(t, args...)
		assertOneLineError(t, r, 2, `vk: no such Vulkan device: no device name contains "nonexistent" (devices: 0 `)
		assert.True(t, strings.HasSuffix(r.stderr, "(chosen by $VKMPS_DEVICE)\n"), "%v: %q", args, r.stderr)
		assert.NotContains(t, r.stderr, "install", "%v", args)
	}
	// --device beats the environment.
	mustSucceed(t, "devices", "--device", "0")
}

// Issue 22: VKMPS_VALIDATION=banana was silently off. Every command that
// reads it refuses it, naming the variable, before doing anything else.
func TestBadEnvironmentIsAnError(t *testing.T) {
	t.Setenv("VKMPS_VALIDATION", "banana")
	for _, args := range [][]string{{"devices"}, {"selfcheck", "--cases", "1"}, {"bench", "--small"}} {
		r := runVkmps(t, args...)
		assertOneLineError(t, r, 2, `$VKMPS_VALIDATION: vk: invalid argument: validation setting "banana": want 1`)
	}
	t.Setenv("VKMPS_VALIDATION", "")
	for tune, want := range map[string]string{
		"bogus=1":  `$VKMPS_TUNE: ops: invalid tuning: unknown key "bogus"`,
		"ox=3":     "$VKMPS_TUNE: ops: invalid tuning: strip width (ox) 3: want 1, 2, 4 or 8",
		"wg=64,wg": `$VKMPS_TUNE: ops: invalid tuning: "wg" is not key=value`,
	} {
		t.Setenv("VKMPS_TUNE", tune)
		assertOneLineError(t, runVkmps(t, "bench", "--small"), 2, want)
	}
}

// bench applies $VKMPS_TUNE to the kernels it measures and says so in its
// header and its JSON; without it, neither mentions tuning.
func TestBenchReportsTuning(t *testing.T) {
	requireVulkan(t)
	dir := t.TempDir()
	args := []string{"bench", "--shapes", "1,3,9,9,3,2,1", "--ops", "max,avg", "--iters", "1", "--copy-mib", "1", "--warmup", "0s"}
	r := mustSucceed(t, args...)
	assert.NotContains(t, r.stdout, "tuning")
	t.Setenv("VKMPS_TUNE", " vstore=0, ox=2 ")
	jsonPath := filepath.Join(dir, "b.json")
	r = mustSucceed(t, append(args, "--json", jsonPath)...)
	assert.Contains(t, r.stdout, "tuning:  ox=2,vstore=0 (from $VKMPS_TUNE")
	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"tuning":"ox=2,vstore=0"`)
}
