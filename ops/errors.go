package ops

import "errors"

// Sentinel errors; every error from this package wraps one of these (or an
// error of package vk or padding). Messages name the image, kernel and
// value at fault.
var (
	// ErrInvalidImage: an image descriptor with a size < 1, too large, or a
	// nil image.
	ErrInvalidImage = errors.New("ops: invalid image")
	// ErrClosed: an image or kernel used after Close.
	ErrClosed = errors.New("ops: use of a closed image")
	// ErrShape: sizes that do not fit together (data length, source and
	// destination shapes, batch ranges, a gradient of the wrong size).
	ErrShape = errors.New("ops: shape mismatch")
	// ErrChannelRange: a feature-channel offset or count outside an image.
	ErrChannelRange = errors.New("ops: feature channel range out of bounds")
	// ErrAlias: source and destination share storage.
	ErrAlias = errors.New("ops: source and destination overlap")
	// ErrGeometry: kernel size, stride or dilation < 1, a clip rectangle
	// or offset that cannot be used, or a kernel parameter out of its
	// domain (an unknown loss type, a NaN or infinite weight).
	ErrGeometry = errors.New("ops: invalid kernel geometry")
	// ErrDeviceLimit: the device cannot run the kernel as configured (a
	// window larger than its shared memory, a plane larger than its
	// storage-buffer range).
	ErrDeviceLimit = errors.New("ops: beyond the device's limits")
	// ErrDevice: an image or state belongs to another device than the
	// kernel or command buffer.
	ErrDevice = errors.New("ops: object from another device")
	// ErrState: a gradient state that does not match the gradient kernel.
	ErrState = errors.New("ops: gradient state mismatch")
	// ErrFormat: images of different formats in one encode or copy, or a
	// format the operation does not take (Add and Loss take float32 only).
	ErrFormat = errors.New("ops: image format mismatch")
)
