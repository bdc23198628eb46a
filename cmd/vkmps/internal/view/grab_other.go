//go:build view && !(linux && !wayland)

package view

import (
	"errors"
	"image"

	"github.com/go-gl/glfw/v3.3/glfw"
)

// grabWindow reads a window's pixels only on X11; elsewhere the
// screenshot is the swapchain image.
func grabWindow(win *glfw.Window, w, h int) (*image.RGBA, error) {
	return nil, errors.New("window capture needs X11")
}

// sendKey needs X11.
func sendKey(win *glfw.Window, key string) error {
	return errors.New("sending key events needs X11")
}
