//go:build view

package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/panels"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/view"
)

// glfw must be called from the main thread: main runs on it.
func init() { runtime.LockOSThread() }

func startViewer(ctx context.Context, e *env, v viewFlags) error {
	p := v.picture
	cfg := view.Config{
		Device: v.device, Shape: panels.Shape{N: p.N, C: p.C, H: p.H, W: p.W}, Data: p.Data, Name: v.name,
		Width: v.size.X, Height: v.size.Y, NoVSync: v.noVSync, Keys: v.keys, KeysViaX11: v.x11, Frames: v.frames,
		Screenshot: v.screenshot, Check: v.check, CloseDevice: closeCmdDevice,
	}
	if len(v.keys) > 0 || v.frames > 0 {
		cfg.Log = e.stdout
	}
	res, err := view.Run(ctx, cfg)
	switch {
	case errors.Is(err, view.ErrNoDisplay):
		return fmt.Errorf("cannot open a window (%v): the viewer needs a display (X11 $DISPLAY, or Wayland with XWayland); %s", err, headlessHint)
	case errors.Is(err, view.ErrCannotPresent):
		return fmt.Errorf("%v (another device may present: --device, see `vkmps devices`); %s", err, headlessHint)
	case err != nil:
		return err
	}
	if len(v.keys) > 0 || v.frames > 0 || v.screenshot != "" {
		fmt.Fprintf(e.stdout, "presented %d frames: %v\n", res.Frames, res.Settings)
	}
	if v.screenshot != "" {
		fmt.Fprintf(e.stdout, "wrote %s (from the %s)\n", v.screenshot, map[string]string{"x11": "X server", "swapchain": "swapchain image"}[res.Source])
	}
	if !v.check {
		return nil
	}
	bad := 0
	for _, m := range []struct {
		what string
		m    *panels.Mismatch
	}{{"swapchain image", res.Swapchain}, {"window (X server)", res.Window}} {
		if m.m == nil {
			continue
		}
		if m.m.Pixels > 0 {
			bad++
			fmt.Fprintf(e.stdout, "%s: %d pixels off by more than %d levels (input %d, result %d, gradient %d, background %d); first: %s\n",
				m.what, m.m.Pixels, view.Tolerance, m.m.PerPanel[0], m.m.PerPanel[1], m.m.PerPanel[2], m.m.PerPanel[3], m.m.First)
		} else {
			fmt.Fprintf(e.stdout, "%s: matches the CPU reference (largest difference %d levels)\n", m.what, m.m.Worst)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%w: %w", errCheckFailed, view.ErrMismatch)
	}
	return nil
}
