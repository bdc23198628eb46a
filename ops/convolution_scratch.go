package ops

import (
	"fmt"
	"sync"

	"github.com/vkmps/vkmps/vk"
)

// ConvolutionScratch is device memory that kernels of the convolution
// family share for their intermediate values (split-K partial sums, the
// Winograd transforms and products) instead of each keeping its own:
// give it to each with SetScratch. A network's kernels then hold the
// largest of their needs once rather than their sum (ResNet-18's
// training step keeps a scratch per convolution, data gradient and
// weight gradient otherwise: several times its activations).
//
// It grows to the largest need of the kernels encoded with it. A buffer
// it replaces is freed once the work recorded with it is done; a command
// buffer recorded while it grew keeps the older buffers alive until it
// is closed (Grown tells, so that such a recording can be made again,
// as graph's executor does).
//
// Sharing is safe among kernels of one device whose command buffers run
// on its queue: package vk orders the dispatches of one command buffer
// that touch the same memory, and every command buffer begins with a
// barrier. Kernels sharing a scratch must not encode at the same time
// from several goroutines (each kernel already must not). Close frees it
// (safe twice); kernels holding a closed scratch fail to encode with
// ErrClosed until given another (or nil: their own again).
type ConvolutionScratch struct {
	dev    *vk.Device
	mu     sync.Mutex
	im     *Image
	grown  uint64
	closed bool
}

// NewConvolutionScratch makes an empty scratch for the kernels of dev.
func NewConvolutionScratch(dev *vk.Device) (*ConvolutionScratch, error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: ConvolutionScratch: nil device", ErrDevice)
	}
	return &ConvolutionScratch{dev: dev}, nil
}

// Size returns the bytes the scratch holds now.
func (s *ConvolutionScratch) Size() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.im == nil {
		return 0
	}
	return uint64(s.im.Len()) * 4
}

// Grown returns how many times the scratch has grown (a new, larger
// buffer replacing the last).
func (s *ConvolutionScratch) Grown() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grown
}

// Close frees the scratch once the work recorded with it is done. Safe
// twice.
func (s *ConvolutionScratch) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.im == nil {
		return nil
	}
	err := s.im.Close()
	s.im = nil
	return err
}

// image returns the scratch grown to at least n float32 values, for the
// kernel label.
func (s *ConvolutionScratch) image(n int, label string) (*Image, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("%w: %s: its ConvolutionScratch is closed", ErrClosed, label)
	}
	if s.im != nil && s.im.Len() >= n {
		return s.im, nil
	}
	im, err := NewImage(s.dev, ImageDescriptor{N: 1, C: 1, H: 1, W: n, Label: "shared convolution scratch"})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	if s.im != nil {
		s.im.Close()
		s.grown++
	}
	s.im = im
	return im, nil
}

// setScratch makes the engine of kernel label use s (nil: its own
// scratch), freeing its own when it takes a shared one.
func (e *convEngine) setScratch(label string, s *ConvolutionScratch) error {
	if s != nil && s.dev != e.dev {
		return fmt.Errorf("%w: %s: the ConvolutionScratch belongs to another device", ErrDevice, label)
	}
	if s != nil && e.scratch != nil {
		if err := e.scratch.Close(); err != nil {
			return err
		}
		e.scratch = nil
	}
	e.shared = s
	return nil
}
