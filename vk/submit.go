package vk

/*
#include "vkmps.h"
*/
import "C"

import (
	"context"
	"time"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// Submissions and their completion.
//
// Every submission gets a serial number and a fence from the device's
// pool. A goroutine waiting for a submission holds a reference on its
// entry, so the fence is reset and reused only once it has signalled, its
// entry has left the pending list, and nobody waits on it: vkResetFences
// and vkQueueSubmit need the fence externally synchronized, while
// vkWaitForFences and vkGetFenceStatus do not.

// pendingSubmit is a submission not yet seen finished.
type pendingSubmit struct {
	serial uint64
	fence  C.VkFence
	refs   int  // goroutines waiting on fence
	done   bool // left the pending list
}

// getFence returns an unsignaled fence; the caller holds d.mu.
func (d *Device) getFenceLocked() (C.VkFence, error) {
	if n := len(d.fences); n > 0 {
		f := d.fences[n-1]
		d.fences = d.fences[:n-1]
		return f, nil
	}
	fci := vkg.FenceCreateInfo{SType: vkg.StructureTypeFenceCreateInfo}
	var fence vkg.Fence
	r := vkg.CreateFence(d.handle, &fci, nil, &fence)
	fci.Free()
	if err := check("vkCreateFence", Result(r)); err != nil {
		return nil, d.noteResult(err)
	}
	f := C.VkFence(unsafe.Pointer(fence))
	d.allFences = append(d.allFences, f)
	return f, nil
}

// releaseLocked returns a finished entry's fence to the pool once no
// goroutine waits on it; the caller holds d.mu.
func (d *Device) releaseLocked(p *pendingSubmit) {
	if !p.done || p.refs > 0 {
		return
	}
	if C.vkmps_reset_fence(d.fns, p.fence) == C.VK_SUCCESS {
		d.fences = append(d.fences, p.fence)
	}
	p.fence = nil
	d.freeSubs = append(d.freeSubs, p)
}

// submit submits the frame's recorded command buffer and returns its
// serial. Serials follow submission order.
func (d *Device) submit(f *frame) (uint64, error) { return d.submitWith(f, nil) }

// submitWith is submit with the vkQueueSubmit call made by qsubmit, when
// not nil, with the fence to signal (presentation adds semaphores). It
// runs with queueMu held.
func (d *Device) submitWith(f *frame, qsubmit func(fence C.VkFence) Result) (uint64, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	d.queueMu.Lock()
	defer d.queueMu.Unlock()
	d.mu.Lock()
	fence, err := d.getFenceLocked()
	d.mu.Unlock()
	if err != nil {
		return 0, err
	}
	var r Result
	if qsubmit != nil {
		r = qsubmit(fence)
	} else {
		r = Result(C.vkmps_submit(d.fns, d.cQueue(), f.cmd, fence))
	}
	if err := check("vkQueueSubmit", r); err != nil {
		d.mu.Lock()
		d.fences = append(d.fences, fence)
		d.mu.Unlock()
		return 0, d.noteResult(err)
	}
	d.mu.Lock()
	var p *pendingSubmit
	if n := len(d.freeSubs); n > 0 {
		p = d.freeSubs[n-1]
		d.freeSubs = d.freeSubs[:n-1]
	} else {
		p = new(pendingSubmit)
	}
	d.serial++
	*p = pendingSubmit{serial: d.serial, fence: fence}
	d.pending = append(d.pending, p)
	f.serial = d.serial
	d.mu.Unlock()
	d.submissions.Add(1)
	return f.serial, nil
}

// pollLocked retires finished submissions in order without blocking; the
// caller holds d.mu.
func (d *Device) pollLocked() error {
	for len(d.pending) > 0 {
		p := d.pending[0]
		r := Result(C.vkmps_wait_fence(d.fns, p.fence, 0))
		if r == NotReady {
			break
		}
		if err := check("vkGetFenceStatus", r); err != nil {
			return d.noteResult(err)
		}
		n := copy(d.pending, d.pending[1:])
		d.pending[n] = nil
		d.pending = d.pending[:n]
		d.completed = p.serial
		p.done = true
		d.releaseLocked(p)
	}
	if len(d.pending) == 0 {
		d.completed = d.serial
	}
	d.runRetiredLocked()
	return nil
}

func (d *Device) runRetiredLocked() {
	n := 0
	for _, r := range d.retired {
		if r.serial <= d.completed {
			r.fn()
			continue
		}
		d.retired[n] = r
		n++
	}
	d.retired = d.retired[:n]
}

// retireAfter runs fn once submission serial has finished (at once if it
// has). fn runs with d.mu held.
func (d *Device) retireAfter(serial uint64, fn func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_ = d.pollLocked()
	d.retireAfterLocked(serial, fn)
}

// retireAfterLocked is retireAfter for a caller holding d.mu.
func (d *Device) retireAfterLocked(serial uint64, fn func()) {
	if serial <= d.completed {
		fn()
		return
	}
	d.retired = append(d.retired, retired{serial: serial, fn: fn})
}

// isComplete reports whether submission serial has finished.
func (d *Device) isComplete(serial uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if serial <= d.completed {
		return true
	}
	_ = d.pollLocked()
	return serial <= d.completed
}

// waitSerial blocks until submission serial (and every earlier one) has
// finished, the context is done, or the device is lost.
func (d *Device) waitSerial(ctx context.Context, serial uint64) error {
	for {
		d.mu.Lock()
		if err := d.pollLocked(); err != nil {
			d.mu.Unlock()
			return err
		}
		if serial <= d.completed {
			d.mu.Unlock()
			return nil
		}
		p := d.pending[0]
		p.refs++
		d.mu.Unlock()
		err := d.waitFence(ctx, p.fence)
		d.mu.Lock()
		p.refs--
		d.releaseLocked(p)
		d.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// waitFence waits for a fence, waking every few milliseconds to honour
// ctx when it can be cancelled.
func (d *Device) waitFence(ctx context.Context, fence C.VkFence) error {
	slice := uint64(time.Second)
	if ctx.Done() != nil {
		slice = uint64(2 * time.Millisecond)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.lost.Load() {
			return ErrDeviceLost
		}
		r := Result(C.vkmps_wait_fence(d.fns, fence, C.uint64_t(slice)))
		if r == Success {
			return nil
		}
		if err := check("vkWaitForFences", r); err != nil {
			return d.noteResult(err)
		}
	}
}

// Submissions returns the number of queue submissions made on the device
// so far (command buffers and staging copies).
func (d *Device) Submissions() uint64 { return d.submissions.Load() }
