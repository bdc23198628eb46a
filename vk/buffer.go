package vk

/*
#include "vkmps.h"
*/
import "C"

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// Buffer is a device-local storage buffer. Its memory is sub-allocated from
// a larger block. On devices whose device-local memory is host-visible
// (lavapipe, integrated GPUs) Write and Read copy through a mapping;
// elsewhere they go through the device's staging ring.
//
// Write and Read wait for submitted work that uses the buffer, so data the
// GPU still reads or writes is never overwritten or read early. Close is
// safe to call twice, and while the GPU still uses the buffer: its memory
// is freed once that work has finished.
type Buffer struct {
	dev    *Device
	handle vkg.Buffer
	mem    allocation
	size   uint64
	label  string
	// lastUse is the serial of the latest submission that used the buffer;
	// refs counts the command buffers that recorded a use and have not been
	// reset or closed; closePending marks a Close waiting for refs to reach
	// zero (all guarded by dev.mu).
	lastUse      uint64
	refs         int
	closePending bool
	closed       atomic.Bool
}

// BufferRange is a byte range of a buffer: the unit commands bind.
type BufferRange struct {
	Buffer *Buffer
	Offset uint64
	Size   uint64
}

// Whole returns the range covering the entire buffer.
func (b *Buffer) Whole() BufferRange { return BufferRange{Buffer: b, Size: b.size} }

// Range returns the range [offset, offset+size) of b.
func (b *Buffer) Range(offset, size uint64) BufferRange {
	return BufferRange{Buffer: b, Offset: offset, Size: size}
}

const bufferUsage = vkg.BufferUsageFlags(vkg.BufferUsageStorageBufferBit | vkg.BufferUsageTransferSrcBit | vkg.BufferUsageTransferDstBit)

// NewBuffer creates a storage buffer of size bytes. The label names it in
// errors and in LiveObjects. Its contents start undefined.
func (d *Device) NewBuffer(size uint64, label string) (*Buffer, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, invalidf("buffer %q: size 0", label)
	}
	h, mem, err := d.createBuffer(size, bufferUsage, useStorage)
	if err != nil {
		return nil, fmt.Errorf("buffer %q (%d bytes): %w", label, size, err)
	}
	d.track("buffer", 1)
	return &Buffer{dev: d, handle: h, mem: mem, size: size, label: label}, nil
}

func (d *Device) createBuffer(size uint64, usage vkg.BufferUsageFlags, use memoryUse) (vkg.Buffer, allocation, error) {
	ci := vkg.BufferCreateInfo{
		SType:       vkg.StructureTypeBufferCreateInfo,
		Size:        vkg.DeviceSize(size),
		Usage:       usage,
		SharingMode: vkg.SharingModeExclusive,
	}
	var h vkg.Buffer
	r := vkg.CreateBuffer(d.handle, &ci, nil, &h)
	ci.Free()
	if err := check("vkCreateBuffer", Result(r)); err != nil {
		return nil, allocation{}, d.noteResult(err)
	}
	var req vkg.MemoryRequirements
	vkg.GetBufferMemoryRequirements(d.handle, h, &req)
	req.Deref()
	align := uint64(req.Alignment)
	if a := d.info.Limits.MinStorageBufferOffsetAlignment; a > align {
		align = a
	}
	mem, err := d.mem.alloc(uint64(req.Size), align, req.MemoryTypeBits, use)
	if err != nil {
		vkg.DestroyBuffer(d.handle, h, nil)
		return nil, allocation{}, err
	}
	if err := check("vkBindBufferMemory", Result(vkg.BindBufferMemory(d.handle, h, mem.block.mem, vkg.DeviceSize(mem.off)))); err != nil {
		d.mem.free(mem)
		vkg.DestroyBuffer(d.handle, h, nil)
		return nil, allocation{}, err
	}
	return h, mem, nil
}

// NewHostBuffer creates a buffer in host-visible memory (cached where the
// device offers it): Write and Read copy directly, and the GPU can read and
// write it too (slower than device-local memory on a discrete GPU). Graph
// executors use such buffers to stage inputs and outputs inside their one
// command buffer.
func (d *Device) NewHostBuffer(size uint64, label string) (*Buffer, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, invalidf("buffer %q: size 0", label)
	}
	h, mem, err := d.createBuffer(size, bufferUsage, useStaging)
	if err != nil {
		return nil, fmt.Errorf("host buffer %q (%d bytes): %w", label, size, err)
	}
	d.track("buffer", 1)
	return &Buffer{dev: d, handle: h, mem: mem, size: size, label: label}, nil
}

// Mapped reports whether Write and Read reach the buffer's memory directly
// (host-visible memory) rather than through the staging ring.
func (b *Buffer) Mapped() bool { return b.mem.block.mapped != nil }

// Size returns the buffer's size in bytes.
func (b *Buffer) Size() uint64 { return b.size }

// Label returns the label given at creation.
func (b *Buffer) Label() string { return b.label }

// Device returns the device the buffer belongs to.
func (b *Buffer) Device() *Device { return b.dev }

func (b *Buffer) cHandle() C.VkBuffer { return C.VkBuffer(unsafe.Pointer(b.handle)) }

// Close releases the buffer. It is safe while command buffers that use it
// are recorded, committed or running: the memory is freed once every such
// command buffer is closed or reset and its work has finished.
func (b *Buffer) Close() error {
	if b == nil || b.closed.Swap(true) {
		return nil
	}
	d := b.dev
	if d.closed.Load() {
		return nil // the device released everything
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if b.refs > 0 {
		b.closePending = true
		return nil
	}
	d.retireAfterLocked(b.lastUse, b.destroyLocked)
	return nil
}

// destroyLocked frees the buffer; the caller holds dev.mu.
func (b *Buffer) destroyLocked() {
	d := b.dev
	vkg.DestroyBuffer(d.handle, b.handle, nil)
	d.mem.free(b.mem)
	d.live["buffer"]--
	if d.live["buffer"] == 0 {
		delete(d.live, "buffer")
	}
}

// unrefLocked drops a command buffer's reference; the caller holds dev.mu.
func (b *Buffer) unrefLocked() {
	b.refs--
	if b.refs == 0 && b.closePending {
		b.closePending = false
		b.dev.retireAfterLocked(b.lastUse, b.destroyLocked)
	}
}

func (b *Buffer) usable() error {
	if b == nil {
		return invalidf("nil buffer")
	}
	if b.closed.Load() {
		return fmt.Errorf("%w: buffer %q", ErrClosed, b.label)
	}
	return b.dev.usable()
}

func (b *Buffer) checkRange(op string, off, n uint64) error {
	if off > b.size || n > b.size-off {
		return invalidf("%s buffer %q: range [%d, %d) outside its %d bytes", op, b.label, off, off+n, b.size)
	}
	return nil
}

// waitIdle waits for the submitted work that uses the buffer.
func (b *Buffer) waitIdle(ctx context.Context) error {
	b.dev.mu.Lock()
	last := b.lastUse
	b.dev.mu.Unlock()
	return b.dev.waitSerial(ctx, last)
}

// Write copies data into the buffer at byte offset off, after waiting for
// submitted work that uses the buffer. With the staging path it returns
// once the data is in the staging ring and its copy is submitted; later
// submissions see it.
func (b *Buffer) Write(ctx context.Context, off uint64, data []byte) error {
	if err := b.usable(); err != nil {
		return err
	}
	if err := b.checkRange("write", off, uint64(len(data))); err != nil {
		return err
	}
	if len(data) == 0 {
		return nil
	}
	if err := b.waitIdle(ctx); err != nil {
		return err
	}
	if p := b.mem.block.mapped; p != nil {
		dst := unsafe.Slice((*byte)(unsafe.Add(p, b.mem.off+off)), len(data))
		copy(dst, data)
		return b.syncMapped(off, uint64(len(data)), false)
	}
	return b.dev.staging.upload(ctx, b, off, data)
}

// Read copies len(dst) bytes from byte offset off into dst, after waiting
// for submitted work that uses the buffer.
func (b *Buffer) Read(ctx context.Context, off uint64, dst []byte) error {
	if err := b.usable(); err != nil {
		return err
	}
	if err := b.checkRange("read", off, uint64(len(dst))); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	if err := b.waitIdle(ctx); err != nil {
		return err
	}
	if p := b.mem.block.mapped; p != nil {
		if err := b.syncMapped(off, uint64(len(dst)), true); err != nil {
			return err
		}
		copy(dst, unsafe.Slice((*byte)(unsafe.Add(p, b.mem.off+off)), len(dst)))
		return nil
	}
	return b.dev.staging.download(ctx, b, off, dst)
}

// syncMapped flushes (or, with invalidate, invalidates) the atom-aligned
// memory range holding [off, off+n) of b; coherent memory needs neither.
func (b *Buffer) syncMapped(off, n uint64, invalidate bool) error {
	if b.mem.block.coherent {
		return nil
	}
	atom := b.dev.info.Limits.NonCoherentAtomSize
	if atom == 0 {
		atom = 1
	}
	start := (b.mem.off + off) / atom * atom
	end := (b.mem.off + off + n + atom - 1) / atom * atom
	if end > b.mem.block.size {
		end = b.mem.block.size
	}
	op := "vkFlushMappedMemoryRanges"
	if invalidate {
		op = "vkInvalidateMappedMemoryRanges"
	}
	mem := C.VkDeviceMemory(unsafe.Pointer(b.mem.block.mem))
	return check(op, Result(C.vkmps_flush(b.dev.fns, mem, C.uint64_t(start), C.uint64_t(end-start), boolInt(invalidate))))
}

// staging moves data between the host and device-local memory through a
// host-visible ring split in two halves, so that the host fills one half
// while the GPU copies the other.
type staging struct {
	dev    *Device
	mu     sync.Mutex
	handle vkg.Buffer
	mem    allocation
	half   uint64
	frames [2]*frame
	serial [2]uint64 // last submission using each half
	next   int
}

func newStaging(d *Device, size uint64) (*staging, error) {
	size = (size + 31) &^ 31
	h, mem, err := d.createBuffer(size, vkg.BufferUsageFlags(vkg.BufferUsageTransferSrcBit|vkg.BufferUsageTransferDstBit), useStaging)
	if err != nil {
		return nil, fmt.Errorf("staging ring: %w", err)
	}
	s := &staging{dev: d, handle: h, mem: mem, half: size / 2}
	for i := range s.frames {
		f, err := d.newFrame(false, 0)
		if err != nil {
			s.destroy()
			return nil, err
		}
		s.frames[i] = f
	}
	return s, nil
}

func (s *staging) destroy() {
	d := s.dev
	vkg.DestroyBuffer(d.handle, s.handle, nil)
	d.mem.free(s.mem)
	// Frames are in d.allFrames and destroyed with the device.
}

func (s *staging) ptr(half int) unsafe.Pointer {
	return unsafe.Add(s.mem.block.mapped, s.mem.off+uint64(half)*s.half)
}

// copyChunk records and submits one copy between the staging half and b,
// returning the submission's serial.
func (s *staging) copyChunk(half int, b *Buffer, off, n uint64, toDevice bool) (uint64, error) {
	d := s.dev
	f := s.frames[half]
	if err := f.begin(d, false); err != nil {
		return 0, err
	}
	src := C.VkBuffer(unsafe.Pointer(s.handle))
	srcOff := C.uint64_t(uint64(half) * s.half)
	dst, dstOff := b.cHandle(), C.uint64_t(off)
	C.vkmps_barrier(d.fns, f.cmd, 1)
	if toDevice {
		C.vkmps_copy(d.fns, f.cmd, src, srcOff, dst, dstOff, C.uint64_t(n))
	} else {
		C.vkmps_copy(d.fns, f.cmd, dst, dstOff, src, srcOff, C.uint64_t(n))
	}
	C.vkmps_barrier(d.fns, f.cmd, 2)
	if err := check("vkEndCommandBuffer", Result(C.vkmps_end(d.fns, f.cmd))); err != nil {
		return 0, err
	}
	serial, err := d.submit(f)
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	if serial > b.lastUse {
		b.lastUse = serial
	}
	d.mu.Unlock()
	s.serial[half] = serial
	return serial, nil
}

func (s *staging) upload(ctx context.Context, b *Buffer, off uint64, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for done := uint64(0); done < uint64(len(data)); {
		n := min(s.half, uint64(len(data))-done)
		h := s.next
		s.next ^= 1
		if err := s.dev.waitSerial(ctx, s.serial[h]); err != nil {
			return err
		}
		copy(unsafe.Slice((*byte)(s.ptr(h)), n), data[done:done+n])
		if _, err := s.copyChunk(h, b, off+done, n, true); err != nil {
			return err
		}
		done += n
	}
	return nil
}

func (s *staging) download(ctx context.Context, b *Buffer, off uint64, dst []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Copy chunk i+1 on the GPU while the host reads chunk i.
	type chunk struct {
		half   int
		at, n  uint64
		serial uint64
	}
	var prev *chunk
	drain := func(c *chunk) error {
		if err := s.dev.waitSerial(ctx, c.serial); err != nil {
			return err
		}
		copy(dst[c.at:c.at+c.n], unsafe.Slice((*byte)(s.ptr(c.half)), c.n))
		return nil
	}
	for done := uint64(0); done < uint64(len(dst)); {
		n := min(s.half, uint64(len(dst))-done)
		h := s.next
		s.next ^= 1
		if err := s.dev.waitSerial(ctx, s.serial[h]); err != nil {
			return err
		}
		serial, err := s.copyChunk(h, b, off+done, n, false)
		if err != nil {
			return err
		}
		if prev != nil {
			if err := drain(prev); err != nil {
				return err
			}
		}
		prev = &chunk{half: h, at: done, n: n, serial: serial}
		done += n
	}
	return drain(prev)
}
