//go:build view

package view

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/demoimage"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/panels"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// These tests open windows: they need an X server ($DISPLAY; CI runs them
// under Xvfb, see `make view-test`) and skip without one, unless
// $VKMPS_REQUIRE_DISPLAY=1 makes that a failure.

func needDisplay(t *testing.T) {
	t.Helper()
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		if os.Getenv("VKMPS_REQUIRE_DISPLAY") == "1" {
			t.Fatal("no display ($DISPLAY unset) and VKMPS_REQUIRE_DISPLAY=1")
		}
		t.Skip("no display: run under Xvfb (make view-test)")
	}
	vktest.Open(t) // skips without a Vulkan device
	// glfw wants one thread; the test's goroutine stays on this one.
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
}

func demoConfig(t *testing.T) Config {
	var buf bytes.Buffer
	if err := png.Encode(&buf, demoimage.Render()); err != nil {
		t.Fatal(err)
	}
	x, err := tensorio.ReadPNG(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		Shape: panels.Shape{N: x.N, C: x.C, H: x.H, W: x.W}, Data: x.Data, Name: "demo picture",
		CloseDevice: func(d *vk.Device) error {
			vktest.Check(t, d)
			err := d.Close()
			vktest.CheckMessages(t, d)
			return err
		},
		Log: testLog{t},
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// artifact returns where to keep a screenshot: $VKMPS_ARTIFACTS (CI
// keeps that folder) or the test's temporary folder.
func artifact(t *testing.T, name string) string {
	dir := os.Getenv("VKMPS_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// TestViewKeysAndScreenshot drives the window with key presses sent as X
// events (read back by glfw's callbacks, as typed keys), resizes it, and
// checks the last frame, as the X server shows it and as the swapchain
// image holds it, against the canvas drawn on the CPU from the reference
// kernels.
func TestViewKeysAndScreenshot(t *testing.T) {
	needDisplay(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := demoConfig(t)
	cfg.Keys = []string{"3", "k", "size=900x320", "p", "4", "d", "up", "s"}
	cfg.KeysViaX11 = true
	cfg.Frames = len(cfg.Keys) + 2
	cfg.Screenshot = artifact(t, "view.png")
	cfg.Check = true
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := panels.Settings{Op: 3, Kernel: 5, Stride: 3, Dilation: 3, Padding: 1}
	if res.Settings != want {
		t.Errorf("settings %v after the keys, want %v", res.Settings, want)
	}
	if res.Source != "x11" {
		t.Errorf("screenshot from %q, want the X server's", res.Source)
	}
	for what, m := range map[string]*panels.Mismatch{"swapchain image": res.Swapchain, "window": res.Window} {
		switch {
		case m == nil:
			t.Errorf("%s: not compared", what)
		case m.Pixels > 0:
			t.Errorf("%s: %d pixels off by more than %d levels (per panel %v); first: %s", what, m.Pixels, Tolerance, m.PerPanel, m.First)
		}
	}
	shot, err := os.ReadFile(cfg.Screenshot)
	if err != nil {
		t.Fatal(err)
	}
	im, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if b := im.Bounds(); b.Dx() != 900 || b.Dy() != 320 {
		t.Errorf("screenshot is %v, want 900x320 after the resize", b.Size())
	}
	t.Logf("%d frames; screenshot %s", res.Frames, cfg.Screenshot)
}

// TestViewSettingsTheImageCannotTake: a key asking for a window the
// picture cannot take keeps the last settings and says why, without
// failing.
func TestViewSettingsTheImageCannotTake(t *testing.T) {
	needDisplay(t)
	cfg := demoConfig(t)
	cfg.Shape, cfg.Data = panels.Shape{N: 1, C: 1, H: 5, W: 5}, make([]float32, 25)
	cfg.Keys = []string{"p", "p", "k", "k", "k"} // valid padding, then a 6x6 window on 5x5
	cfg.Frames = 8
	cfg.Check = true
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := (panels.Settings{Kernel: 5, Stride: 2, Dilation: 2, Padding: 2}); res.Settings != want {
		t.Errorf("settings %v, want %v", res.Settings, want)
	}
	if m := res.Swapchain; m == nil || m.Pixels > 0 {
		t.Errorf("swapchain image: %+v", m)
	}
}

func TestNoDisplay(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	_, err := Run(context.Background(), demoConfig(t))
	if !errors.Is(err, ErrNoDisplay) {
		t.Fatalf("got %v, want ErrNoDisplay", err)
	}
}

func TestParseSize(t *testing.T) {
	for s, ok := range map[string]bool{"size=10x20": true, "size=0x20": false, "size=10": false, "k": false} {
		if _, _, got := ParseSize(s); got != ok {
			t.Errorf("ParseSize(%q) ok = %v", s, got)
		}
	}
}
