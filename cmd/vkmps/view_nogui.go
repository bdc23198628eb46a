//go:build !view

package main

import (
	"context"
	"errors"
)

// startViewer: this vkmps was built without the viewer.
func startViewer(ctx context.Context, e *env, v viewFlags) error {
	return errors.New("this vkmps was built without the viewer: build it with `make view` " +
		"(go build -tags view ./cmd/vkmps; glfw needs the X11 development packages, which `make deps-view` installs); " + headlessHint)
}
