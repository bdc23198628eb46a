package vk

/*
#include <stdlib.h>
#include "vkmps.h"
#include "present.h"
*/
import "C"

import (
	"context"
	"fmt"
	"time"
)

// PresentDesc is what Present shows.
type PresentDesc struct {
	// Src holds the picture: Width x Height pixels of 4 bytes in the
	// swapchain's PixelOrder, row after row with no padding; its offset is
	// a multiple of 4. The work writing it must be committed before
	// Present: the copy follows it on the queue.
	Src           BufferRange
	Width, Height int
	// Readback, when its Buffer is set, receives the presented image as it
	// is in the swapchain (Extent() pixels in PixelOrder(), the picture's
	// part that fits, black elsewhere). It needs SwapchainOptions.Readback.
	// Read it with Buffer.Read, which waits for the copy.
	Readback BufferRange
}

// Present shows a picture: it acquires the next image, copies the
// picture's top-left part that fits into it (black where the picture does
// not cover it) and queues the image for presentation. It does not wait
// for the GPU.
//
// presented is false, with a nil error, when nothing was shown because the
// window changed size or was minimised (the swapchain was out of date):
// the swapchain is then rebuilt at the new Extent and the caller draws
// again.
func (s *Swapchain) Present(ctx context.Context, desc PresentDesc) (presented bool, err error) {
	if err := s.usable(); err != nil {
		return false, err
	}
	d := s.dev
	if s.stale {
		for i := range s.slots {
			if err := d.waitSerial(ctx, s.slots[i].serial); err != nil {
				return false, err
			}
		}
		s.idle()
		if err := s.build(); err != nil {
			s.broken = err
			return false, err
		}
		return false, nil
	}
	if err := s.checkDesc(desc); err != nil {
		return false, err
	}
	slot := &s.slots[s.next]
	if err := d.waitSerial(ctx, slot.serial); err != nil {
		return false, err
	}
	var index C.uint32_t
	for {
		r := Result(C.vkmps_acquire(s.fns, s.handle, C.uint64_t(100*time.Millisecond), slot.acquired, &index))
		if r == Success || r == suboptimal {
			if r == suboptimal {
				s.stale = true // present this one, rebuild before the next
			}
			break
		}
		if r == errorOutOfDate {
			s.stale = true
			return false, nil
		}
		if r == Timeout || r == NotReady {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			continue
		}
		return false, s.fail(d.noteResult(check("vkAcquireNextImageKHR", r)))
	}
	// From here the acquire semaphore is signalled: a failure leaves the
	// swapchain broken (its next wait would be unsound).
	f := slot.f
	if err := f.begin(d, false); err != nil {
		return false, s.fail(err)
	}
	C.vkmps_barrier(d.fns, f.cmd, 1) // earlier submissions' writes of Src before the copy
	var rb C.VkBuffer
	var rbOff C.uint64_t
	if desc.Readback.Buffer != nil {
		rb, rbOff = desc.Readback.Buffer.cHandle(), C.uint64_t(desc.Readback.Offset)
	}
	C.vkmps_record_present_copy(s.fns, f.cmd, s.images[index], C.uint32_t(s.width), C.uint32_t(s.height),
		desc.Src.Buffer.cHandle(), C.uint64_t(desc.Src.Offset), C.uint32_t(desc.Width), C.uint32_t(desc.Height), rb, rbOff)
	if rb != nil {
		C.vkmps_barrier(d.fns, f.cmd, 2) // the readback before host reads
	}
	if err := check("vkEndCommandBuffer", Result(C.vkmps_end(d.fns, f.cmd))); err != nil {
		return false, s.fail(d.noteResult(err))
	}
	rendered := s.rendered[index]
	serial, err := d.submitWith(f, func(fence C.VkFence) Result {
		return Result(C.vkmps_submit_present(s.fns, d.cQueue(), f.cmd, slot.acquired, rendered, fence))
	})
	if err != nil {
		return false, s.fail(err)
	}
	slot.serial = serial
	s.next = (s.next + 1) % len(s.slots)
	d.mu.Lock()
	for _, b := range []*Buffer{desc.Src.Buffer, desc.Readback.Buffer} {
		if b != nil && serial > b.lastUse {
			b.lastUse = serial
		}
	}
	d.mu.Unlock()

	d.queueMu.Lock()
	r := Result(C.vkmps_queue_present(s.fns, d.cQueue(), s.handle, index, rendered))
	d.queueMu.Unlock()
	switch r {
	case Success:
		return true, nil
	case suboptimal:
		s.stale = true
		return true, nil
	case errorOutOfDate:
		// The copy ran (and the readback holds it) but nothing was shown.
		s.stale = true
		return false, nil
	}
	return false, s.fail(d.noteResult(check("vkQueuePresentKHR", r)))
}

func (s *Swapchain) checkDesc(desc PresentDesc) error {
	if desc.Width < 1 || desc.Height < 1 {
		return invalidf("%s: picture of %dx%d pixels", s.opts.Label, desc.Width, desc.Height)
	}
	need := uint64(desc.Width) * uint64(desc.Height) * 4
	for _, c := range []struct {
		what string
		r    BufferRange
		need uint64
	}{{"picture", desc.Src, need}, {"readback", desc.Readback, uint64(s.width) * uint64(s.height) * 4}} {
		if c.r.Buffer == nil {
			if c.what == "picture" {
				return invalidf("%s: no picture buffer", s.opts.Label)
			}
			continue
		}
		if err := c.r.Buffer.usable(); err != nil {
			return fmt.Errorf("%s %s: %w", s.opts.Label, c.what, err)
		}
		if c.r.Buffer.dev != s.dev {
			return invalidf("%s: %s buffer %q belongs to another device", s.opts.Label, c.what, c.r.Buffer.label)
		}
		if c.r.Offset%4 != 0 || c.r.Size < c.need || c.r.Offset+c.need > c.r.Buffer.size {
			return invalidf("%s: %s range [%d, +%d) of buffer %q: want %d bytes at a multiple of 4", s.opts.Label, c.what,
				c.r.Offset, c.r.Size, c.r.Buffer.label, c.need)
		}
	}
	if desc.Readback.Buffer != nil && !s.opts.Readback {
		return invalidf("%s: readback asked for, but the swapchain was made without SwapchainOptions.Readback", s.opts.Label)
	}
	return nil
}
