package vkenv_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vkenv"
	"github.com/vkmps/vkmps/vk/vktest"
)

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		device, validation string
		in                 vk.Options
		want               vk.Options
	}{
		{"", "", vk.Options{}, vk.Options{}},
		{"1", "1", vk.Options{}, vk.Options{Device: "1", Validation: vk.ValidationSync}},
		{" llvm ", "SYNC", vk.Options{}, vk.Options{Device: "llvm", Validation: vk.ValidationSync}},
		{"", "core", vk.Options{}, vk.Options{Validation: vk.ValidationCore}},
		{"", "0", vk.Options{}, vk.Options{Validation: vk.ValidationOff}},
		{"", "off", vk.Options{}, vk.Options{Validation: vk.ValidationOff}},
		// What the caller set explicitly wins.
		{"nvidia", "1", vk.Options{Device: "llvm", Validation: vk.ValidationOff}, vk.Options{Device: "llvm", Validation: vk.ValidationOff}},
		{"", "0", vk.Options{Validation: vk.ValidationCore}, vk.Options{Validation: vk.ValidationCore}},
		// An explicit setting makes even a bad variable harmless.
		{"", "banana", vk.Options{Validation: vk.ValidationSync}, vk.Options{Validation: vk.ValidationSync}},
	} {
		t.Setenv(vkenv.DeviceVar, tc.device)
		t.Setenv(vkenv.ValidationVar, tc.validation)
		got, err := vkenv.Options(tc.in)
		require.NoError(t, err, "%+v", tc)
		assert.Equal(t, tc.want, got, "%+v", tc)
	}
}

// A value that means nothing is an error naming the variable, not
// silence (issue 22: VKMPS_VALIDATION=banana was quietly off).
func TestBadValues(t *testing.T) {
	t.Setenv(vkenv.ValidationVar, "banana")
	_, err := vkenv.Options(vk.Options{})
	require.Error(t, err)
	assert.ErrorIs(t, err, vk.ErrInvalid)
	assert.True(t, strings.HasPrefix(err.Error(), `$VKMPS_VALIDATION: vk: invalid argument: validation setting "banana": want 1`), err.Error())
	_, err = vkenv.Open(vk.Options{})
	assert.ErrorIs(t, err, vk.ErrInvalid, "Open reads the same")

	for _, s := range []string{"2", "maybe", "yes please"} {
		t.Setenv(vkenv.RequireDeviceVar, s)
		_, err := vkenv.RequireDevice()
		assert.ErrorIs(t, err, vk.ErrInvalid, s)
		assert.Contains(t, err.Error(), "VKMPS_REQUIRE_DEVICE", s)
	}
	for s, want := range map[string]bool{"": false, "0": false, "1": true, "true": true, "off": false} {
		t.Setenv(vkenv.RequireDeviceVar, s)
		got, err := vkenv.RequireDevice()
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
}

// A device selector that matches no device is reported as that, first,
// with the variable that chose it (issue 22), and not as "no Vulkan
// device (install a driver)", which would also make the tests skip.
func TestNoSuchDevice(t *testing.T) {
	d := vktest.Open(t)
	t.Setenv(vkenv.DeviceVar, "nonexistent")
	t.Setenv(vkenv.ValidationVar, "0")
	_, err := vkenv.Open(vk.Options{})
	require.Error(t, err)
	assert.ErrorIs(t, err, vk.ErrNoSuchDevice)
	assert.NotErrorIs(t, err, vk.ErrNoDevice)
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, `vk: no such Vulkan device: no device name contains "nonexistent" (devices: `), msg)
	assert.Contains(t, msg, d.Info().Name)
	assert.True(t, strings.HasSuffix(msg, "(chosen by $VKMPS_DEVICE)"), msg)

	_, err = vkenv.Open(vk.Options{Device: "99"})
	assert.ErrorIs(t, err, vk.ErrNoSuchDevice)
	assert.True(t, strings.HasPrefix(err.Error(), "vk: no such Vulkan device: no device has index 99 (devices: "), err.Error())
	assert.NotContains(t, err.Error(), "VKMPS_DEVICE", "the caller chose this one")
}
