package vk

/*
#include <stdlib.h>
#include "vkmps.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// frame is the Vulkan state behind one command buffer: its own command
// pool (pools are externally synchronized, so goroutines never share one),
// an optional timestamp query pool, and the C-side dispatch arguments.
// Frames are recycled through the device.
type frame struct {
	pool  vkg.CommandPool
	cmd   C.VkCommandBuffer
	query C.VkQueryPool // nil without timestamps
	// queries is the query pool's size: start, end and the marks.
	queries uint32
	args    *C.vkmps_dispatch
	serial  uint64 // last submission; 0 before the first
}

func (d *Device) newFrame(timestamps bool, marks int) (*frame, error) {
	want := uint32(0)
	if timestamps {
		want = 2 + uint32(marks)
	}
	d.mu.Lock()
	for i := len(d.frames) - 1; i >= 0; i-- {
		f := d.frames[i]
		if (f.query != nil) == timestamps && f.queries >= want {
			d.frames = append(d.frames[:i], d.frames[i+1:]...)
			d.mu.Unlock()
			return f, nil
		}
	}
	d.mu.Unlock()

	f := &frame{}
	pci := vkg.CommandPoolCreateInfo{
		SType:            vkg.StructureTypeCommandPoolCreateInfo,
		QueueFamilyIndex: d.info.queueFamily,
	}
	r := vkg.CreateCommandPool(d.handle, &pci, nil, &f.pool)
	pci.Free()
	if err := check("vkCreateCommandPool", Result(r)); err != nil {
		return nil, d.noteResult(err)
	}
	ai := vkg.CommandBufferAllocateInfo{
		SType:              vkg.StructureTypeCommandBufferAllocateInfo,
		CommandPool:        f.pool,
		Level:              vkg.CommandBufferLevelPrimary,
		CommandBufferCount: 1,
	}
	cmds := make([]vkg.CommandBuffer, 1)
	r = vkg.AllocateCommandBuffers(d.handle, &ai, cmds)
	ai.Free()
	if err := check("vkAllocateCommandBuffers", Result(r)); err != nil {
		vkg.DestroyCommandPool(d.handle, f.pool, nil)
		return nil, d.noteResult(err)
	}
	f.cmd = C.VkCommandBuffer(unsafe.Pointer(cmds[0]))
	if timestamps {
		qci := vkg.QueryPoolCreateInfo{
			SType:      vkg.StructureTypeQueryPoolCreateInfo,
			QueryType:  vkg.QueryTypeTimestamp,
			QueryCount: want,
		}
		var qp vkg.QueryPool
		r = vkg.CreateQueryPool(d.handle, &qci, nil, &qp)
		qci.Free()
		if err := check("vkCreateQueryPool", Result(r)); err != nil {
			f.destroy(d)
			return nil, d.noteResult(err)
		}
		f.query = C.VkQueryPool(unsafe.Pointer(qp))
		f.queries = want
	}
	f.args = (*C.vkmps_dispatch)(C.calloc(1, C.size_t(unsafe.Sizeof(C.vkmps_dispatch{}))))
	if f.args == nil {
		f.destroy(d)
		return nil, ErrOutOfHostMemory
	}
	d.mu.Lock()
	d.allFrames = append(d.allFrames, f)
	d.mu.Unlock()
	return f, nil
}

func (f *frame) destroy(d *Device) {
	if f.query != nil {
		vkg.DestroyQueryPool(d.handle, vkg.QueryPool(unsafe.Pointer(f.query)), nil)
		f.query = nil
	}
	if f.pool != nil {
		vkg.DestroyCommandPool(d.handle, f.pool, nil)
		f.pool = nil
	}
	if f.args != nil {
		C.free(unsafe.Pointer(f.args))
		f.args = nil
	}
}

// begin resets the frame's command pool and begins recording. The frame's
// last submission must have finished.
func (f *frame) begin(d *Device, timestamps bool) error {
	if f.serial != 0 && !d.isComplete(f.serial) {
		return ErrBusy
	}
	if err := check("vkResetCommandPool", Result(vkg.ResetCommandPool(d.handle, f.pool, 0))); err != nil {
		return d.noteResult(err)
	}
	if err := check("vkBeginCommandBuffer", Result(C.vkmps_begin(d.fns, f.cmd, 1))); err != nil {
		return d.noteResult(err)
	}
	if timestamps && f.query != nil {
		C.vkmps_reset_queries(d.fns, f.cmd, f.query, 0, C.uint32_t(f.queries))
		C.vkmps_timestamp(d.fns, f.cmd, f.query, 0, 0)
	}
	return nil
}

// recycle returns a finished frame and descriptor pools to the device.
func (d *Device) recycle(f *frame, pools []C.VkDescriptorPool) {
	for _, p := range pools {
		vkg.ResetDescriptorPool(d.handle, vkg.DescriptorPool(unsafe.Pointer(p)), 0)
	}
	d.frames = append(d.frames, f)
	d.descPools = append(d.descPools, pools...)
}

const (
	poolSets    = 256
	poolBuffers = poolSets * C.VKMPS_MAX_BINDINGS
)

// descriptorPool returns a free descriptor pool, creating one if needed.
func (d *Device) descriptorPool() (C.VkDescriptorPool, error) {
	d.mu.Lock()
	if n := len(d.descPools); n > 0 {
		p := d.descPools[n-1]
		d.descPools = d.descPools[:n-1]
		d.mu.Unlock()
		return p, nil
	}
	d.mu.Unlock()
	var cp C.VkDescriptorPool
	if err := check("vkCreateDescriptorPool", Result(C.vkmps_create_descriptor_pool(d.fns, poolSets, poolBuffers, &cp))); err != nil {
		return nil, d.noteResult(err)
	}
	d.mu.Lock()
	d.allPools = append(d.allPools, cp)
	d.mu.Unlock()
	return cp, nil
}

type cbState int

const (
	cbRecording cbState = iota
	cbEnded
	cbSubmitted
)

// hazard is a byte range of a buffer touched since the last barrier.
type hazard struct {
	buf    *Buffer
	lo, hi uint64
	write  bool
}

// CommandBuffer records dispatches and copies for one submission, in the
// manner of MTLCommandBuffer: record, Commit, Wait. A pipeline barrier is
// recorded only where a command reads or writes a range an earlier
// command of the same command buffer wrote (or writes a range one read);
// each command buffer also starts with a barrier against all earlier
// submissions and ends with one that makes its writes visible to the host.
//
// A committed command buffer can be committed again once it has finished,
// replaying the same work (the graph executor does this). Reset starts a
// new recording. A CommandBuffer is used by one goroutine at a time.
type CommandBuffer struct {
	dev        *Device
	f          *frame
	label      string
	timestamps bool
	marks      int        // capacity for Mark
	marked     int        // marks recorded
	profile    bool       // WithDispatchProfile: a mark after every command
	profiled   []profiled // the commands those marks follow
	state      cbState
	serial     uint64
	used       []*Buffer
	hazards    []hazard
	pools      []C.VkDescriptorPool
	lastPipe   *Pipeline
	dispatches int
	barriers   int
	closed     bool
}

// CommandBufferOption configures NewCommandBuffer.
type CommandBufferOption func(*CommandBuffer)

// WithTimestamps makes the command buffer record GPU timestamps at its
// start and end; GPUTime reads them after Wait.
func WithTimestamps() CommandBufferOption { return func(c *CommandBuffer) { c.timestamps = true } }

// WithTimestampMarks is WithTimestamps with room for n more timestamps,
// which Mark records between commands and MarkTimes reads (a profile of
// the command buffer's work).
func WithTimestampMarks(n int) CommandBufferOption {
	return func(c *CommandBuffer) { c.timestamps, c.marks = true, max(n, 0) }
}

// WithDispatchProfile is WithTimestampMarks(n) that marks after every
// dispatch, copy and fill by itself, while room lasts (the commands past
// the n-th are not profiled); DispatchProfile reads the times. A
// diagnosis of where a kernel's time goes, for benchmarks: each mark
// waits for the commands before it, so the profiled work runs one
// command at a time.
func WithDispatchProfile(n int) CommandBufferOption {
	return func(c *CommandBuffer) { c.timestamps, c.marks, c.profile = true, max(n, 0), true }
}

// profiled is a command WithDispatchProfile marked, and its mark.
type profiled struct {
	d    Dispatched
	mark int
}

// Dispatched is one command of a dispatch profile: the shader (or "copy",
// "fill"), its pipeline's specialization constants, its workgroups, and
// the GPU time from the end of the command before it to its own end.
type Dispatched struct {
	Shader string
	Spec   []uint32
	Groups [3]uint32
	Time   time.Duration
}

// WithLabel names the command buffer in errors.
func WithLabel(label string) CommandBufferOption { return func(c *CommandBuffer) { c.label = label } }

// NewCommandBuffer starts recording a command buffer.
func (d *Device) NewCommandBuffer(opts ...CommandBufferOption) (*CommandBuffer, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	c := &CommandBuffer{dev: d, label: "command buffer"}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.timestamps && !d.info.Limits.TimestampsSupported {
		return nil, fmt.Errorf("%w: timestamps on the compute queue", ErrUnsupported)
	}
	f, err := d.newFrame(c.timestamps, c.marks)
	if err != nil {
		return nil, err
	}
	c.f = f
	if err := c.start(); err != nil {
		d.mu.Lock()
		d.recycle(f, nil)
		d.mu.Unlock()
		return nil, err
	}
	d.track("command-buffer", 1)
	return c, nil
}

func (c *CommandBuffer) start() error {
	if err := c.f.begin(c.dev, c.timestamps); err != nil {
		return err
	}
	C.vkmps_barrier(c.dev.fns, c.f.cmd, 1)
	c.state = cbRecording
	c.marked = 0
	c.profiled = c.profiled[:0]
	c.lastPipe = nil
	c.used = c.used[:0]
	c.hazards = c.hazards[:0]
	c.dispatches, c.barriers = 0, 0
	return nil
}

func (c *CommandBuffer) recording() error {
	if c.closed {
		return fmt.Errorf("%w: %s", ErrClosed, c.label)
	}
	if err := c.dev.usable(); err != nil {
		return err
	}
	if c.state != cbRecording {
		return invalidf("%s: already committed (Reset it to record again)", c.label)
	}
	return nil
}

// checkRange validates a binding; what and index name it in errors
// (index < 0: what alone), formatted only when there is an error.
func (c *CommandBuffer) checkRange(what string, index int, r BufferRange) error {
	b := r.Buffer
	name := func() string {
		if index < 0 {
			return what
		}
		return fmt.Sprintf("%s binding %d", what, index)
	}
	if err := b.usable(); err != nil {
		return fmt.Errorf("%s: %w", name(), err)
	}
	if b.dev != c.dev {
		return invalidf("%s: buffer %q belongs to another device", name(), b.label)
	}
	if r.Size == 0 {
		return invalidf("%s: empty range of buffer %q", name(), b.label)
	}
	if r.Offset > b.size || r.Size > b.size-r.Offset {
		return b.checkRange(name(), r.Offset, r.Size)
	}
	return nil
}

// needBarrier reports whether touching r (writing if write) conflicts with
// a range touched since the last barrier.
func (c *CommandBuffer) needBarrier(r BufferRange, write bool) bool {
	lo, hi := r.Offset, r.Offset+r.Size
	for _, h := range c.hazards {
		if h.buf == r.Buffer && lo < h.hi && h.lo < hi && (write || h.write) {
			return true
		}
	}
	return false
}

func (c *CommandBuffer) touch(r BufferRange, write bool) {
	c.hazards = append(c.hazards, hazard{buf: r.Buffer, lo: r.Offset, hi: r.Offset + r.Size, write: write})
	// Remember the buffer for its lastUse; a short look-back avoids most
	// duplicates without a map.
	n := len(c.used)
	for i := n - 1; i >= 0 && i >= n-8; i-- {
		if c.used[i] == r.Buffer {
			return
		}
	}
	c.used = append(c.used, r.Buffer)
	c.dev.mu.Lock()
	r.Buffer.refs++
	c.dev.mu.Unlock()
}

// releaseUsedLocked drops the references the recording holds on its
// buffers; the caller holds dev.mu.
func (c *CommandBuffer) releaseUsedLocked() {
	for i, b := range c.used {
		b.unrefLocked()
		c.used[i] = nil
	}
	c.used = c.used[:0]
}

// maxHazards bounds the look-back; past it a barrier is cheaper than the
// bookkeeping.
const maxHazards = 128

// Dispatch records a compute dispatch of p with the given storage-buffer
// bindings (one per shader binding, in binding order), push-constant bytes
// (exactly the shader's push-constant size) and workgroup counts. A zero
// group count records nothing. Binding offsets must be multiples of the
// device's MinStorageBufferOffsetAlignment and sizes at most its
// MaxStorageBufferRange.
func (c *CommandBuffer) Dispatch(p *Pipeline, bindings []BufferRange, push []byte, groups [3]uint32) error {
	if err := c.recording(); err != nil {
		return err
	}
	if p == nil || p.dev != c.dev {
		return invalidf("%s: pipeline is nil or belongs to another device", c.label)
	}
	sh := p.shader
	if len(bindings) != p.layout.nbind {
		return invalidf("%s: shader %s has %d bindings, %d given", c.label, sh.ShaderName(), p.layout.nbind, len(bindings))
	}
	if uint32(len(push)) != p.layout.push {
		return invalidf("%s: shader %s takes %d bytes of push constants, %d given", c.label, sh.ShaderName(), p.layout.push, len(push))
	}
	lim := &c.dev.info.Limits
	for axis, g := range groups {
		if g > lim.MaxComputeWorkGroupCount[axis] {
			return invalidf("%s: %d workgroups on axis %d exceed the device's %d", c.label, g, axis, lim.MaxComputeWorkGroupCount[axis])
		}
	}
	barrier := len(c.hazards) >= maxHazards || c.profile // a profile times one command at a time
	for i, r := range bindings {
		if err := c.checkRange(sh.ShaderName(), i, r); err != nil {
			return err
		}
		if r.Size > lim.MaxStorageBufferRange {
			return invalidf("%s: binding %d of %s spans %d bytes, over the device's max storage buffer range %d", c.label, i, sh.ShaderName(), r.Size, lim.MaxStorageBufferRange)
		}
		if a := lim.MinStorageBufferOffsetAlignment; a > 1 && r.Offset%a != 0 {
			return invalidf("%s: binding %d of %s at offset %d, not a multiple of the device's alignment %d", c.label, i, sh.ShaderName(), r.Offset, a)
		}
		if !barrier && c.needBarrier(r, p.writes[i]) {
			barrier = true
		}
	}
	if groups[0] == 0 || groups[1] == 0 || groups[2] == 0 {
		return nil
	}
	a := c.f.args
	a.cmd = c.f.cmd
	a.set_layout = C.VkDescriptorSetLayout(unsafe.Pointer(p.layout.setLayout))
	a.layout = C.VkPipelineLayout(unsafe.Pointer(p.layout.pipeLayout))
	a.pipeline = p.cHandle()
	a.nbind = C.uint32_t(len(bindings))
	for i, r := range bindings {
		a.buffers[i] = r.Buffer.cHandle()
		a.offsets[i] = C.uint64_t(r.Offset)
		a.ranges[i] = C.uint64_t(r.Size)
	}
	a.push_size = C.uint32_t(len(push))
	if len(push) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&a.push[0])), len(push)), push)
	}
	a.groups = [3]C.uint32_t{C.uint32_t(groups[0]), C.uint32_t(groups[1]), C.uint32_t(groups[2])}
	a.barrier = boolInt(barrier)
	a.bind_pipe = boolInt(c.lastPipe != p)
	for attempt := 0; ; attempt++ {
		if len(c.pools) == 0 {
			pool, err := c.dev.descriptorPool()
			if err != nil {
				return err
			}
			c.pools = append(c.pools, pool)
		}
		a.pool = c.pools[len(c.pools)-1]
		r := Result(C.vkmps_record_dispatch(c.dev.fns, a))
		if r == Success {
			break
		}
		if (r == ErrorOutOfPoolMemory || r == ErrorFragmentedPool) && attempt == 0 {
			pool, err := c.dev.descriptorPool()
			if err != nil {
				return err
			}
			c.pools = append(c.pools, pool)
			continue
		}
		return c.dev.noteResult(check("vkAllocateDescriptorSets", r))
	}
	if barrier {
		c.hazards = c.hazards[:0]
		c.barriers++
	}
	for i, r := range bindings {
		c.touch(r, p.writes[i])
	}
	c.lastPipe = p
	c.dispatches++
	if c.profile {
		c.profileMark(Dispatched{Shader: sh.ShaderName(), Spec: append([]uint32(nil), p.spec...), Groups: groups})
	}
	return nil
}

// profileMark marks the end of command d under WithDispatchProfile.
func (c *CommandBuffer) profileMark(d Dispatched) {
	if !c.profile || c.marked >= c.marks {
		return
	}
	if m, err := c.Mark(); err == nil {
		c.profiled = append(c.profiled, profiled{d, m})
	}
}

// DispatchProfile returns the commands WithDispatchProfile marked, in
// order, each with its GPU time, after the work has finished.
func (c *CommandBuffer) DispatchProfile() ([]Dispatched, error) {
	if err := c.dev.usable(); err != nil {
		return nil, err
	}
	if !c.profile {
		return nil, invalidf("%s: made without WithDispatchProfile", c.label)
	}
	marks, err := c.MarkTimes()
	if err != nil {
		return nil, err
	}
	// The time since the mark before (the caller's own Marks included).
	out := make([]Dispatched, len(c.profiled))
	for i, p := range c.profiled {
		out[i] = p.d
		out[i].Time = marks[p.mark]
		if p.mark > 0 {
			out[i].Time -= marks[p.mark-1]
		}
	}
	return out, nil
}

// transferBarrier records a barrier when the transfer touching src
// (read) and dst (written) conflicts with earlier commands.
func (c *CommandBuffer) transferBarrier(src *BufferRange, dst BufferRange) {
	if len(c.hazards) >= maxHazards || c.needBarrier(dst, true) || (src != nil && c.needBarrier(*src, false)) {
		C.vkmps_barrier(c.dev.fns, c.f.cmd, 0)
		c.hazards = c.hazards[:0]
		c.barriers++
	}
	if src != nil {
		c.touch(*src, false)
	}
	c.touch(dst, true)
}

// Copy records a copy of src into dst (vkCmdCopyBuffer). The ranges must
// have the same size and, within one buffer, must not overlap.
func (c *CommandBuffer) Copy(dst, src BufferRange) error {
	if err := c.recording(); err != nil {
		return err
	}
	if err := c.checkRange("copy source", -1, src); err != nil {
		return err
	}
	if err := c.checkRange("copy destination", -1, dst); err != nil {
		return err
	}
	if src.Size != dst.Size {
		return invalidf("%s: copy of %d bytes into a %d-byte range", c.label, src.Size, dst.Size)
	}
	if src.Buffer == dst.Buffer && src.Offset < dst.Offset+dst.Size && dst.Offset < src.Offset+src.Size {
		return invalidf("%s: copy between overlapping ranges of buffer %q", c.label, src.Buffer.label)
	}
	c.transferBarrier(&src, dst)
	C.vkmps_copy(c.dev.fns, c.f.cmd, src.Buffer.cHandle(), C.uint64_t(src.Offset), dst.Buffer.cHandle(), C.uint64_t(dst.Offset), C.uint64_t(src.Size))
	c.dispatches++
	c.profileMark(Dispatched{Shader: "copy"})
	return nil
}

// Fill records filling dst with the 32-bit pattern value
// (vkCmdFillBuffer); its offset and size must be multiples of 4.
func (c *CommandBuffer) Fill(dst BufferRange, value uint32) error {
	if err := c.recording(); err != nil {
		return err
	}
	if err := c.checkRange("fill", -1, dst); err != nil {
		return err
	}
	if dst.Offset%4 != 0 || dst.Size%4 != 0 {
		return invalidf("%s: fill range [%d, +%d) is not 4-byte aligned", c.label, dst.Offset, dst.Size)
	}
	c.transferBarrier(nil, dst)
	C.vkmps_fill(c.dev.fns, c.f.cmd, dst.Buffer.cHandle(), C.uint64_t(dst.Offset), C.uint64_t(dst.Size), C.uint32_t(value))
	c.dispatches++
	c.profileMark(Dispatched{Shader: "fill"})
	return nil
}

// Commands returns the number of dispatches, copies and fills recorded,
// and Barriers the number of barriers recorded between them.
func (c *CommandBuffer) Commands() int { return c.dispatches }

// Barriers returns the number of barriers recorded between commands.
func (c *CommandBuffer) Barriers() int { return c.barriers }

// Commit ends recording (the first time) and submits the command buffer.
// Committing again replays the recording; the previous submission must
// have finished (ErrBusy otherwise).
func (c *CommandBuffer) Commit() error {
	if c.closed {
		return fmt.Errorf("%w: %s", ErrClosed, c.label)
	}
	d := c.dev
	if err := d.usable(); err != nil {
		return err
	}
	switch c.state {
	case cbRecording:
		if c.timestamps {
			C.vkmps_timestamp(d.fns, c.f.cmd, c.f.query, 1, 1)
		}
		C.vkmps_barrier(d.fns, c.f.cmd, 2)
		if err := check("vkEndCommandBuffer", Result(C.vkmps_end(d.fns, c.f.cmd))); err != nil {
			return d.noteResult(err)
		}
		c.state = cbEnded
	case cbSubmitted:
		if !d.isComplete(c.serial) {
			return fmt.Errorf("%w: %s", ErrBusy, c.label)
		}
	}
	serial, err := d.submit(c.f)
	if err != nil {
		return err
	}
	c.serial = serial
	c.state = cbSubmitted
	d.mu.Lock()
	for _, b := range c.used {
		if serial > b.lastUse {
			b.lastUse = serial
		}
	}
	d.mu.Unlock()
	return nil
}

// Wait blocks until the committed work has finished, ctx is done (its
// error is returned; the work goes on), or the device is lost
// (ErrDeviceLost). Waiting on an uncommitted command buffer returns nil,
// unless the device is lost.
func (c *CommandBuffer) Wait(ctx context.Context) error {
	if err := c.dev.usable(); errors.Is(err, ErrDeviceLost) || c.dev == nil {
		return err
	}
	if c.state != cbSubmitted || c.serial == 0 {
		return nil
	}
	return c.dev.waitSerial(ctx, c.serial)
}

// Done reports whether the committed work has finished. On a lost device
// it reports true, so that nothing polls forever; Wait says how it ended.
func (c *CommandBuffer) Done() bool {
	if c.dev == nil || c.dev.lost.Load() {
		return true
	}
	return c.state != cbSubmitted || c.dev.isComplete(c.serial)
}

// GPUTime returns the GPU time between the command buffer's start and end
// timestamps. It needs WithTimestamps and finished work.
func (c *CommandBuffer) GPUTime() (time.Duration, error) {
	if !c.timestamps {
		return 0, invalidf("%s: made without WithTimestamps", c.label)
	}
	if err := c.dev.usable(); err != nil {
		return 0, err
	}
	if c.state != cbSubmitted || !c.Done() {
		return 0, invalidf("%s: work not finished", c.label)
	}
	var ts [2]C.uint64_t
	if err := check("vkGetQueryPoolResults", Result(C.vkmps_query_results(c.dev.fns, c.f.query, 0, 2, &ts[0]))); err != nil {
		return 0, c.dev.noteResult(err)
	}
	mask := ^uint64(0)
	if bits := c.dev.info.timestampValidBits; bits < 64 {
		mask = 1<<bits - 1
	}
	ticks := (uint64(ts[1]) - uint64(ts[0])) & mask
	return time.Duration(float64(ticks) * float64(c.dev.info.Limits.TimestampPeriod)), nil
}

// Mark records a GPU timestamp taken once every command recorded so far
// has finished, and returns its number (from 0). It needs
// WithTimestampMarks with room left.
func (c *CommandBuffer) Mark() (int, error) {
	if c.closed {
		return 0, fmt.Errorf("%w: %s", ErrClosed, c.label)
	}
	if err := c.dev.usable(); err != nil {
		return 0, err
	}
	if c.state != cbRecording {
		return 0, invalidf("%s: Mark after Commit", c.label)
	}
	if c.marked >= c.marks {
		return 0, invalidf("%s: Mark %d beyond the %d marks of WithTimestampMarks", c.label, c.marked, c.marks)
	}
	C.vkmps_timestamp(c.dev.fns, c.f.cmd, c.f.query, C.uint32_t(2+c.marked), 1)
	c.marked++
	return c.marked - 1, nil
}

// MarkTimes returns, for each Mark, the GPU time from the command buffer's
// start to that mark, after the work has finished.
func (c *CommandBuffer) MarkTimes() ([]time.Duration, error) {
	if !c.timestamps {
		return nil, invalidf("%s: made without WithTimestampMarks", c.label)
	}
	if err := c.dev.usable(); err != nil {
		return nil, err
	}
	if c.state != cbSubmitted || !c.Done() {
		return nil, invalidf("%s: work not finished", c.label)
	}
	ts := make([]C.uint64_t, 2+c.marked)
	if err := check("vkGetQueryPoolResults", Result(C.vkmps_query_results(c.dev.fns, c.f.query, 0, C.uint32_t(len(ts)), &ts[0]))); err != nil {
		return nil, c.dev.noteResult(err)
	}
	mask := ^uint64(0)
	if bits := c.dev.info.timestampValidBits; bits < 64 {
		mask = 1<<bits - 1
	}
	out := make([]time.Duration, c.marked)
	for i := range out {
		ticks := (uint64(ts[2+i]) - uint64(ts[0])) & mask
		out[i] = time.Duration(float64(ticks) * float64(c.dev.info.Limits.TimestampPeriod))
	}
	return out, nil
}

// Reset discards the recording and starts a new one. The previous
// submission must have finished.
func (c *CommandBuffer) Reset() error {
	if c.closed {
		return fmt.Errorf("%w: %s", ErrClosed, c.label)
	}
	if err := c.dev.usable(); err != nil {
		return err
	}
	if c.state == cbSubmitted && !c.Done() {
		return fmt.Errorf("%w: %s", ErrBusy, c.label)
	}
	d := c.dev
	d.mu.Lock()
	for _, p := range c.pools {
		vkg.ResetDescriptorPool(d.handle, vkg.DescriptorPool(unsafe.Pointer(p)), 0)
	}
	d.descPools = append(d.descPools, c.pools...)
	c.releaseUsedLocked()
	d.mu.Unlock()
	c.pools = c.pools[:0]
	return c.start()
}

// Close releases the command buffer. Work still executing finishes first;
// its resources are recycled afterwards. Close is safe to call twice.
func (c *CommandBuffer) Close() error {
	if c == nil || c.closed || c.dev == nil {
		return nil
	}
	c.closed = true
	d := c.dev
	if d.closed.Load() {
		return nil
	}
	f, pools := c.f, c.pools
	c.f, c.pools, c.hazards = nil, nil, nil
	serial := uint64(0)
	if c.state == cbSubmitted {
		serial = c.serial
	}
	d.retireAfter(serial, func() {
		c.releaseUsedLocked()
		d.recycle(f, pools)
		d.live["command-buffer"]--
		if d.live["command-buffer"] == 0 {
			delete(d.live, "command-buffer")
		}
	})
	return nil
}
