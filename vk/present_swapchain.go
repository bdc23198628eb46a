package vk

/*
#include <stdlib.h>
#include "vkmps.h"
#include "present.h"
*/
import "C"

import "fmt"

// SwapchainOptions configure NewSwapchain.
type SwapchainOptions struct {
	// Width and Height are the window's framebuffer size in pixels, used
	// where the surface lets the swapchain choose its extent (Wayland);
	// X11 and Windows surfaces take the window's size.
	Width, Height int
	// NoVSync prefers the MAILBOX or IMMEDIATE present mode where the
	// surface offers one; the default is FIFO (vsync), which every surface
	// supports.
	NoVSync bool
	// Readback makes the images copyable too, so that Present can copy
	// what it presents into a buffer (PresentDesc.Readback): for tests and
	// screenshots.
	Readback bool
	// Label names the swapchain in errors.
	Label string
}

// presentSlot is one frame in flight: its command buffer, the semaphore
// its acquire signals, and its last submission.
type presentSlot struct {
	f        *frame
	acquired C.VkSemaphore
	serial   uint64
}

// Swapchain presents pictures in a window: each Present copies a picture
// from a buffer into the next swapchain image, on the device's queue after
// the work that wrote it. It is used by one goroutine at a time. Close
// releases it and its surface; it is safe to call twice, and the device's
// Close closes swapchains left open.
type Swapchain struct {
	dev     *Device
	fns     *C.vkmps_present_fns
	opts    SwapchainOptions
	surface Surface
	handle  C.VkSwapchainKHR
	images  []C.VkImage
	// rendered[i] is signalled by the copy into image i and waited on by
	// its presentation. One per image: image i is acquired again only
	// after its previous presentation has consumed the wait.
	rendered      []C.VkSemaphore
	slots         [presentFramesLive]presentSlot
	next          int
	width, height int
	order         PixelOrder
	stale         bool // rebuild before the next acquire
	broken        error
	closed        bool
}

// NewSwapchain makes a swapchain for surface, which it owns from then on
// (it is destroyed with the swapchain, or at once on error). The device
// must have been opened with Options.Present. It fails with ErrUnsupported
// when the device's queue cannot present to the surface or the surface
// offers no 8-bit RGBA/BGRA format that copies can write.
func (d *Device) NewSwapchain(surface Surface, opts SwapchainOptions) (*Swapchain, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	if d.present == nil {
		return nil, fmt.Errorf("%w: swapchain: open the device with Options.Present", ErrInvalid)
	}
	if surface == 0 {
		return nil, invalidf("swapchain: null surface")
	}
	if opts.Label == "" {
		opts.Label = "swapchain"
	}
	s := &Swapchain{dev: d, fns: d.present.fns, opts: opts, surface: surface}
	if err := s.init(); err != nil {
		s.destroy(true)
		return nil, fmt.Errorf("%s: %w", opts.Label, err)
	}
	d.present.mu.Lock()
	d.present.swapchains[s] = struct{}{}
	d.present.mu.Unlock()
	d.track("swapchain", 1)
	return s, nil
}

func (s *Swapchain) init() error {
	d := s.dev
	for i := range s.slots {
		f, err := d.newFrame(false, 0)
		if err != nil {
			return err
		}
		s.slots[i].f = f
		if err := check("vkCreateSemaphore", Result(C.vkmps_create_semaphore(s.fns, &s.slots[i].acquired))); err != nil {
			return d.noteResult(err)
		}
	}
	return s.build()
}

// build (re)creates the swapchain at the surface's current extent; the
// GPU must no longer use the old one. A zero extent (a minimised window)
// leaves it without images until a later build.
func (s *Swapchain) build() error {
	desc := C.vkmps_swapchain_desc{
		width:    C.uint32_t(max(s.opts.Width, 1)),
		height:   C.uint32_t(max(s.opts.Height, 1)),
		readback: boolInt(s.opts.Readback),
		vsync:    boolInt(!s.opts.NoVSync),
	}
	var images [C.VKMPS_MAX_SWAPCHAIN_IMAGES]C.VkImage
	var h C.VkSwapchainKHR
	r := Result(C.vkmps_create_swapchain(s.fns, C.uint64_t(s.surface), C.uint32_t(s.dev.info.queueFamily), s.handle, &desc, &h, &images[0]))
	s.destroyImages()
	switch {
	case r == ErrorFeatureNotPresent && desc.why != nil:
		return fmt.Errorf("%w: %s", ErrUnsupported, C.GoString(desc.why))
	case r == NotReady:
		s.width, s.height, s.stale = 0, 0, true
		return nil
	}
	if err := check("vkCreateSwapchainKHR", r); err != nil {
		return s.dev.noteResult(err)
	}
	s.handle = h
	s.width, s.height = int(desc.width), int(desc.height)
	s.order = PixelBGRA
	if desc.format == C.VK_FORMAT_R8G8B8A8_UNORM || desc.format == C.VK_FORMAT_R8G8B8A8_SRGB {
		s.order = PixelRGBA
	}
	s.images = append(s.images[:0], images[:desc.nimages]...)
	for range s.images {
		var sem C.VkSemaphore
		if err := check("vkCreateSemaphore", Result(C.vkmps_create_semaphore(s.fns, &sem))); err != nil {
			return s.dev.noteResult(err)
		}
		s.rendered = append(s.rendered, sem)
	}
	s.stale = false
	return nil
}

// destroyImages destroys the swapchain handle and per-image semaphores.
func (s *Swapchain) destroyImages() {
	for _, sem := range s.rendered {
		C.vkmps_destroy_semaphore(s.fns, sem)
	}
	s.rendered = s.rendered[:0]
	C.vkmps_destroy_swapchain(s.fns, s.handle)
	s.handle = nil
	s.images = s.images[:0]
}

// idle waits until the GPU and the presentation engine no longer use the
// swapchain's semaphores and images. vkQueueWaitIdle also waits for the
// presentation requests queued before it.
func (s *Swapchain) idle() {
	d := s.dev
	d.queueMu.Lock()
	r := Result(C.vkmps_present_wait_idle(s.fns, d.cQueue()))
	d.queueMu.Unlock()
	_ = d.noteResult(check("vkQueueWaitIdle", r))
	d.mu.Lock()
	_ = d.pollLocked()
	d.mu.Unlock()
}

// Extent returns the size of the swapchain's images: the size of the
// pictures to give Present. It is 0x0 while the window is minimised.
func (s *Swapchain) Extent() (width, height int) { return s.width, s.height }

// PixelOrder returns the byte order of the images' pixels.
func (s *Swapchain) PixelOrder() PixelOrder { return s.order }

// Resize tells the swapchain the window's new framebuffer size; the next
// Present rebuilds the swapchain and returns false, so the caller draws
// again at the new Extent.
func (s *Swapchain) Resize(width, height int) {
	if width != s.opts.Width || height != s.opts.Height {
		s.opts.Width, s.opts.Height = width, height
		s.stale = true
	}
}

func (s *Swapchain) usable() error {
	if s == nil || s.closed {
		return fmt.Errorf("%w: swapchain", ErrClosed)
	}
	if err := s.dev.usable(); err != nil {
		return err
	}
	return s.broken
}

// fail marks the swapchain unusable after err.
func (s *Swapchain) fail(err error) error {
	if err == nil {
		return nil
	}
	if isResult(err, errorSurfaceLost) {
		err = fmt.Errorf("%w: the window's surface was lost", err)
	}
	s.broken = fmt.Errorf("%s: %w", s.opts.Label, err)
	return s.broken
}

func isResult(err error, r Result) bool {
	e, ok := err.(*Error)
	return ok && e.Result == r
}

// Close waits until the GPU and the presentation engine are done with the
// swapchain, then destroys it and its surface. It is safe to call twice.
func (s *Swapchain) Close() error {
	if s == nil || s.closed {
		return nil
	}
	d := s.dev
	if d.closed.Load() || d.present == nil {
		s.closed = true
		return nil // the device destroyed it
	}
	d.present.mu.Lock()
	delete(d.present.swapchains, s)
	d.present.mu.Unlock()
	s.destroy(true)
	d.track("swapchain", -1)
	return nil
}

// destroy releases everything; recycle returns the frames to the device
// (false while the device itself is being destroyed).
func (s *Swapchain) destroy(recycle bool) {
	s.closed = true
	d := s.dev
	if d.handle != nil {
		s.idle()
	}
	s.destroyImages()
	for i := range s.slots {
		sl := &s.slots[i]
		C.vkmps_destroy_semaphore(s.fns, sl.acquired)
		sl.acquired = nil
		if sl.f != nil && recycle {
			d.mu.Lock()
			d.recycle(sl.f, nil)
			d.mu.Unlock()
		}
		sl.f = nil
	}
	C.vkmps_destroy_surface(s.fns, C.uint64_t(s.surface))
	s.surface = 0
}
