// Package vktest opens Vulkan devices for tests: the device and the
// validation layer as the environment asks ($VKMPS_DEVICE,
// $VKMPS_VALIDATION, read by package vkenv), a clean skip when the machine
// has no Vulkan device (a failure instead when $VKMPS_REQUIRE_DEVICE=1, as
// `make test` and `make docker-test` set), and a cleanup that fails the
// test on any validation message, any object left open or an error from
// Device.Close.
package vktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vkenv"
)

// Open opens a device for t with opts completed from the environment
// (vkenv.Open: an explicit opts.Device or vk.ValidationOff wins) and
// registers its checks and Close with t.Cleanup. Without a Vulkan loader or
// device it skips t, unless $VKMPS_REQUIRE_DEVICE=1; every other error,
// an unreadable environment variable or a device selector that matches
// nothing included, fails t.
func Open(t testing.TB, opts ...vk.Options) *vk.Device {
	t.Helper()
	var o vk.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	require, err := vkenv.RequireDevice()
	if err != nil {
		t.Fatalf("vktest: %v", err)
	}
	d, err := vkenv.Open(o)
	if err != nil {
		if (errors.Is(err, vk.ErrNoLoader) || errors.Is(err, vk.ErrNoDevice)) && !require {
			t.Skipf("no Vulkan device: %v", err)
		}
		t.Fatalf("vk.Open: %v", err)
	}
	t.Cleanup(func() {
		Check(t, d)
		if err := d.Close(); err != nil && !markedLost(d) {
			t.Errorf("closing %s: %v", d.Info().Name, err)
		}
		CheckMessages(t, d)
	})
	return d
}

// Check fails t if d has objects still open or validation messages. It
// first waits for submitted work, since objects closed while the GPU still
// uses them are released when that work finishes.
func Check(t testing.TB, d *vk.Device) {
	t.Helper()
	if d.Closed() || markedLost(d) {
		CheckMessages(t, d)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.WaitIdle(ctx); err != nil {
		t.Errorf("waiting for %s to go idle: %v", d.Info().Name, err)
	}
	if s := d.LiveSummary(); s != "" {
		t.Errorf("objects still open on %s: %s", d.Info().Name, s)
	}
	CheckMessages(t, d)
}

// CheckMessages fails t for each validation message d collected.
func CheckMessages(t testing.TB, d *vk.Device) {
	t.Helper()
	for _, m := range d.ValidationMessages() {
		t.Errorf("validation: %s", m)
	}
}
