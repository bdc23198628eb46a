package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/flagx"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/panels"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
)

func init() {
	register(&command{
		name:    "view",
		summary: "a window showing a kernel's result and gradient live (build with `make view`)",
		usage: `[--in IMAGE.png] [--device D] [--size W,H]

Opens a window that shows, side by side, a picture (the demo's by
default), the result of a pooling kernel on it and the gradient dL/dx of
L = sum(y^2)/2 as a heatmap (red positive, blue negative), drawn by
compute shaders and presented through a Vulkan swapchain on the device
that runs the kernels. Keys change the kernel and the view follows at
once; the window title shows the settings:

  1 2 3 4, o/O (tab)   max, average, L2-norm, dilated max; next/previous
  k/K (up/down)        kernel size +1/-1 (square window, 1..15)
  s/S (right/left)     stride +1/-1 (1..15)
  d/D                  dilation +1/-1 (dilated max only, 1..8)
  p/P                  padding: same, same-zero, valid, full, tf-same,
                       tf-valid, pytorch ((k-1)/2*dilation each side)
  r                    back to the start: max 3x3, stride 2, same padding
  q, Escape            quit

It needs a display (X11, or Wayland with XWayland) and a device that can
present to it; without one it says so and exits with status 2: the
headless commands (demo, pool, bench) need neither.

The viewer is built only with the build tag "view" (make view), since
glfw needs the X11 development packages (make deps-view installs them).

Test mode, for CI under Xvfb: --keys feeds keys, one per frame, through
the same path as typed ones (with --x11-keys, as X key events sent to the
window, which glfw reads as it reads a keyboard); --frames stops after that many frames;
--screenshot writes the last frame (read from the X server, else from
the swapchain image); --check compares it with the canvas drawn on the
CPU from the reference kernels and exits with status 1 on a difference.

examples:
  make view
  vkmps view --in photo.png
  xvfb-run -a vkmps view --keys 2,k,p --screenshot shot.png --check`,
		run: runView,
	})
}

// viewFlags is what the view command was given.
type viewFlags struct {
	device, in, screenshot string
	size                   flagx.PairXY
	keys                   []string
	frames                 int
	check, noVSync, x11    bool
	picture                tensorio.Tensor
	name                   string
}

func runView(ctx context.Context, e *env, args []string) error {
	c := commands["view"]
	fs := newFlags(c, e)
	sel := fs.String("device", "", "device `D`: index or part of its name (default $VKMPS_DEVICE, then the best)")
	in := fs.String("in", "", "picture `IMAGE.png` (default: the demo's built-in picture)")
	size := flagx.NewPairXY(fs, "size", 1184, 400, 1, "window size `W,H` in screen coordinates")
	keys := fs.String("keys", "", "test mode: keys `K1,K2,...` applied one per frame (characters as typed, or escape, tab, up, down, left, right; size=WxH resizes the window)")
	frames := fs.Int("frames", 0, "test mode: quit after `N` frames (default with --keys: their count + 3)")
	shot := fs.String("screenshot", "", "write the last frame to `FILE.png`")
	check := fs.Bool("check", false, "compare the last frame with the CPU reference's drawing; exit 1 on a difference")
	x11Keys := fs.Bool("x11-keys", false, "test mode: send --keys to the window as X key events, which glfw reads as typed keys")
	noVSync := fs.Bool("no-vsync", false, "present without waiting for vertical blank where the window system allows")
	if err := parse(c, e, fs, args); err != nil {
		return err
	}
	v := viewFlags{device: *sel, in: *in, screenshot: *shot, size: *size, frames: *frames, check: *check, noVSync: *noVSync, x11: *x11Keys}
	for _, k := range strings.Split(*keys, ",") {
		if k = strings.TrimSpace(k); k != "" {
			v.keys = append(v.keys, k)
		}
	}
	for _, k := range v.keys {
		if !panels.KnownKey(k) && !viewResizeStep(k) {
			return usageError(c, fmt.Errorf("flag --keys: unknown key %q", k))
		}
	}
	if v.frames < 0 {
		return usageError(c, fmt.Errorf("flag --frames: %d < 0", v.frames))
	}
	if len(v.keys) > 0 && v.frames == 0 {
		v.frames = len(v.keys) + 3
	}
	var err error
	if v.in == "" {
		v.picture, err = tensorio.ReadPNG(bytes.NewReader(demoPNG))
		v.name = "demo picture"
	} else {
		if f, ferr := tensorio.FormatOf(v.in); ferr == nil && f == tensorio.PNG {
			v.picture, err = readInput(ctx, v.in, nil) // Ctrl-C ends a wait on a pipe
		} else {
			v.picture, err = tensorio.ReadPNGFile(v.in)
		}
		v.name = filepath.Base(v.in)
	}
	if err != nil {
		return fmt.Errorf("--in: %w", err)
	}
	return startViewer(ctx, e, v)
}

// viewResizeStep reports whether a --keys step is a resize, size=WxH.
func viewResizeStep(k string) bool {
	var w, h int
	rest, ok := strings.CutPrefix(k, "size=")
	n, err := fmt.Sscanf(rest, "%dx%d", &w, &h)
	return ok && n == 2 && err == nil && w > 0 && h > 0
}

// headlessHint points from the viewer to the commands that need no window.
const headlessHint = "the headless commands need none: `vkmps demo`, `vkmps pool`, `vkmps bench`"
