package vk_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// TestBadInput is package vk's table of bad input (issue 10): every class
// (sizes < 1, ranges out of bounds, limits the device cannot do, mismatched
// counts, aliasing, wrong state, closed and foreign objects, nil values)
// with the sentinel it must give and a piece of its message. Nothing in
// it may panic, and nothing it refuses is recorded.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	dev := vktest.Open(t)
	other := vktest.Open(t)
	capped := vktest.Open(t, vk.Options{MaxStorageBufferRange: 1 << 10})
	closedDev := vktest.Open(t)
	require.NoError(t, closedDev.Close())

	newBuf := func(d *vk.Device, size uint64, label string) *vk.Buffer {
		b, err := d.NewBuffer(size, label)
		require.NoError(t, err)
		t.Cleanup(func() { b.Close() })
		return b
	}
	a, b := newBuf(dev, 4096, "a"), newBuf(dev, 4096, "b")
	foreign := newBuf(other, 4096, "foreign")
	closedBuf := newBuf(dev, 64, "closed")
	require.NoError(t, closedBuf.Close())
	big := newBuf(capped, 4096, "big")
	p, err := dev.Pipeline(spirv.Copy, 64)
	require.NoError(t, err)
	pOther, err := other.Pipeline(spirv.Copy, 64)
	require.NoError(t, err)
	pCapped, err := capped.Pipeline(spirv.Copy, 64)
	require.NoError(t, err)
	newCB := func(d *vk.Device, opts ...vk.CommandBufferOption) *vk.CommandBuffer {
		cb, err := d.NewCommandBuffer(opts...)
		require.NoError(t, err)
		t.Cleanup(func() { cb.Close() })
		return cb
	}
	cb := newCB(dev)
	cbCapped := newCB(capped)
	committed := newCB(dev)
	require.NoError(t, committed.Commit())
	require.NoError(t, committed.Wait(ctx))
	closedCB := newCB(dev)
	require.NoError(t, closedCB.Close())
	push := make([]byte, 12)
	pair := []vk.BufferRange{a.Whole(), b.Whole()}
	one := [3]uint32{1, 1, 1}
	lim := dev.Limits()

	tests := []struct {
		class, name string
		call        func() error
		want        error
		msg         string
	}{
		{"size < 1", "buffer of 0 bytes", func() error { _, err := dev.NewBuffer(0, "empty"); return err }, vk.ErrInvalid, `buffer "empty": size 0`},
		{"size < 1", "host buffer of 0 bytes", func() error { _, err := dev.NewHostBuffer(0, "empty"); return err }, vk.ErrInvalid, "size 0"},
		{"size < 1", "empty binding", func() error { return cb.Dispatch(p, []vk.BufferRange{a.Range(0, 0), b.Whole()}, push, one) }, vk.ErrInvalid, "empty range"},
		{"size < 1", "empty fill", func() error { return cb.Fill(a.Range(0, 0), 0) }, vk.ErrInvalid, "empty range"},
		{"out of range", "write past the end", func() error { return a.Write(ctx, 4090, make([]byte, 8)) }, vk.ErrInvalid, "outside its 4096 bytes"},
		{"out of range", "read past the end", func() error { return a.Read(ctx, 4097, make([]byte, 1)) }, vk.ErrInvalid, "outside"},
		{"out of range", "offset overflowing", func() error { return a.Read(ctx, ^uint64(0), make([]byte, 2)) }, vk.ErrInvalid, "outside"},
		{"out of range", "binding past the end", func() error { return cb.Dispatch(p, []vk.BufferRange{a.Range(4000, 200), b.Whole()}, push, one) }, vk.ErrInvalid, "outside"},
		{"out of range", "copy past the end", func() error { return cb.Copy(b.Range(4000, 200), a.Range(0, 200)) }, vk.ErrInvalid, "outside"},
		{"device limit", "too many workgroups", func() error { return cb.Dispatch(p, pair, push, [3]uint32{lim.MaxComputeWorkGroupCount[0] + 1, 1, 1}) }, vk.ErrInvalid, "workgroups on axis 0"},
		{"device limit", "workgroup too large", func() error { _, err := dev.Pipeline(spirv.Copy, 1<<20); return err }, vk.ErrInvalid, "workgroup size"},
		{"device limit", "binding over the storage range", func() error {
			return cbCapped.Dispatch(pCapped, []vk.BufferRange{big.Whole(), big.Range(0, 16)}, push, one)
		}, vk.ErrInvalid, "max storage buffer range 1024"},
		{"device limit", "misaligned binding", func() error {
			if lim.MinStorageBufferOffsetAlignment <= 1 {
				return vk.ErrInvalid // nothing to misalign
			}
			return cb.Dispatch(p, []vk.BufferRange{a.Range(1, 16), b.Whole()}, push, one)
		}, vk.ErrInvalid, ""},
		{"device limit", "unaligned fill", func() error { return cb.Fill(a.Range(2, 8), 0) }, vk.ErrInvalid, "not 4-byte aligned"},
		{"device limit", "memory beyond the device", func() error { _, err := dev.NewBuffer(1<<50, "huge"); return err }, vk.ErrOutOfDeviceMemory, `"huge"`},
		{"mismatch", "binding count", func() error { return cb.Dispatch(p, pair[:1], push, one) }, vk.ErrInvalid, "has 2 bindings, 1 given"},
		{"mismatch", "push-constant size", func() error { return cb.Dispatch(p, pair, push[:8], one) }, vk.ErrInvalid, "12 bytes of push constants, 8 given"},
		{"mismatch", "specialization constants", func() error { _, err := dev.Pipeline(spirv.Copy, 64, 1); return err }, vk.ErrInvalid, "specialization constants"},
		{"mismatch", "copy sizes", func() error { return cb.Copy(b.Range(0, 8), a.Range(0, 4)) }, vk.ErrInvalid, "copy of 4 bytes into a 8-byte range"},
		{"aliasing", "overlapping copy", func() error { return cb.Copy(a.Range(0, 8), a.Range(4, 8)) }, vk.ErrInvalid, "overlapping"},
		{"state", "dispatch after commit", func() error { return committed.Dispatch(p, pair, push, one) }, vk.ErrInvalid, "already committed"},
		{"state", "fill after commit", func() error { return committed.Fill(a.Whole(), 0) }, vk.ErrInvalid, "already committed"},
		{"state", "GPU time without timestamps", func() error { _, err := committed.GPUTime(); return err }, vk.ErrInvalid, "WithTimestamps"},
		{"closed", "write to a closed buffer", func() error { return closedBuf.Write(ctx, 0, make([]byte, 4)) }, vk.ErrClosed, `"closed"`},
		{"closed", "read a closed buffer", func() error { return closedBuf.Read(ctx, 0, make([]byte, 4)) }, vk.ErrClosed, `"closed"`},
		{"closed", "bind a closed buffer", func() error { return cb.Dispatch(p, []vk.BufferRange{closedBuf.Whole(), b.Whole()}, push, one) }, vk.ErrClosed, "binding 0"},
		{"closed", "copy from a closed buffer", func() error { return cb.Copy(a.Range(0, 64), closedBuf.Whole()) }, vk.ErrClosed, "copy source"},
		{"closed", "commit a closed command buffer", func() error { return closedCB.Commit() }, vk.ErrClosed, "command buffer"},
		{"closed", "dispatch on a closed command buffer", func() error { return closedCB.Dispatch(p, pair, push, one) }, vk.ErrClosed, ""},
		{"closed", "reset a closed command buffer", func() error { return closedCB.Reset() }, vk.ErrClosed, ""},
		{"closed", "buffer of a closed device", func() error { _, err := closedDev.NewBuffer(16, "x"); return err }, vk.ErrClosed, ""},
		{"closed", "command buffer of a closed device", func() error { _, err := closedDev.NewCommandBuffer(); return err }, vk.ErrClosed, ""},
		{"closed", "pipeline of a closed device", func() error { _, err := closedDev.Pipeline(spirv.Copy); return err }, vk.ErrClosed, ""},
		{"closed", "wait on a closed device", func() error { return closedDev.WaitIdle(ctx) }, vk.ErrClosed, ""},
		{"foreign", "buffer of another device", func() error { return cb.Dispatch(p, []vk.BufferRange{foreign.Whole(), b.Whole()}, push, one) }, vk.ErrInvalid, "another device"},
		{"foreign", "pipeline of another device", func() error { return cb.Dispatch(pOther, pair, push, one) }, vk.ErrInvalid, "another device"},
		{"foreign", "copy from another device", func() error { return cb.Copy(a.Whole(), foreign.Whole()) }, vk.ErrInvalid, "another device"},
		{"nil", "nil pipeline", func() error { return cb.Dispatch(nil, pair, push, one) }, vk.ErrInvalid, "pipeline is nil"},
		{"nil", "nil shader", func() error { _, err := dev.Pipeline(nil); return err }, vk.ErrInvalid, "nil shader"},
		{"nil", "nil buffer in a binding", func() error { return cb.Dispatch(p, []vk.BufferRange{{}, b.Whole()}, push, one) }, vk.ErrInvalid, "nil buffer"},
		{"nil", "nil copy ranges", func() error { return cb.Copy(vk.BufferRange{}, vk.BufferRange{}) }, vk.ErrInvalid, "nil buffer"},
		{"nil", "nil fill range", func() error { return cb.Fill(vk.BufferRange{}, 0) }, vk.ErrInvalid, "nil buffer"},
		{"selector", "no such device", func() error { _, err := vk.Choose([]vk.Info{dev.Info()}, "no-such-gpu"); return err }, vk.ErrNoSuchDevice, "no-such-gpu"},
		{"selector", "index out of range", func() error { _, err := vk.Choose([]vk.Info{dev.Info()}, "7"); return err }, vk.ErrNoSuchDevice, "index 7"},
		{"selector", "no devices", func() error { _, err := vk.Choose(nil, ""); return err }, vk.ErrNoDevice, ""},
	}
	classes := map[string]int{}
	for _, tc := range tests {
		t.Run(tc.class+"/"+tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
		})
		classes[tc.class]++
	}
	assert.Equal(t, 0, cb.Commands(), "nothing refused was recorded")
	assert.Equal(t, 0, cbCapped.Commands())
	t.Logf("vk: %d bad inputs in %d classes: %v", len(tests), len(classes), classes)
}

// TestNoPanicOnZeroValues: nil and zero arguments to every exported
// constructor, recorder and transfer of package vk, and zero-value objects
// (not made by their constructor), give errors, never a panic. Methods
// called on a nil pointer stay programmer errors, as in the standard
// library; Close is the exception (safe on nil, as documented).
func TestNoPanicOnZeroValues(t *testing.T) {
	ctx := context.Background()
	dev := vktest.Open(t)
	cb, err := dev.NewCommandBuffer(nil, vk.WithLabel(""))
	require.NoError(t, err)
	defer cb.Close()
	var zeroBuf vk.Buffer
	var zeroCB vk.CommandBuffer
	var zeroDev vk.Device
	calls := map[string]func() error{
		"NewBuffer(0, \"\")":           func() error { _, err := dev.NewBuffer(0, ""); return err },
		"NewHostBuffer(0, \"\")":       func() error { _, err := dev.NewHostBuffer(0, ""); return err },
		"Pipeline(nil)":                func() error { _, err := dev.Pipeline(nil); return err },
		"Dispatch(nil, nil, nil, 0)":   func() error { return cb.Dispatch(nil, nil, nil, [3]uint32{}) },
		"Copy(zero, zero)":             func() error { return cb.Copy(vk.BufferRange{}, vk.BufferRange{}) },
		"Fill(zero)":                   func() error { return cb.Fill(vk.BufferRange{}, 0) },
		"WaitIdle(nil ctx)":            nil, // a nil context is a programmer error in Go
		"zero Buffer.Write":            func() error { return zeroBuf.Write(ctx, 0, []byte{1}) },
		"zero Buffer.Read":             func() error { return zeroBuf.Read(ctx, 0, []byte{1}) },
		"zero Buffer in a copy":        func() error { return cb.Copy(zeroBuf.Whole(), zeroBuf.Whole()) },
		"zero CommandBuffer.Dispatch":  func() error { return zeroCB.Dispatch(nil, nil, nil, [3]uint32{}) },
		"zero CommandBuffer.Copy":      func() error { return zeroCB.Copy(vk.BufferRange{}, vk.BufferRange{}) },
		"zero CommandBuffer.Fill":      func() error { return zeroCB.Fill(vk.BufferRange{}, 0) },
		"zero CommandBuffer.Commit":    func() error { return zeroCB.Commit() },
		"zero CommandBuffer.Wait":      func() error { return zeroCB.Wait(ctx) },
		"zero CommandBuffer.Reset":     func() error { return zeroCB.Reset() },
		"zero CommandBuffer.GPUTime":   func() error { _, err := zeroCB.GPUTime(); return err },
		"zero CommandBuffer.Close":     func() error { zeroCB.Close(); return vk.ErrInvalid },
		"zero Device.NewBuffer":        func() error { _, err := zeroDev.NewBuffer(4, ""); return err },
		"zero Device.NewCommandBuffer": func() error { _, err := zeroDev.NewCommandBuffer(); return err },
		"zero Device.Pipeline":         func() error { _, err := zeroDev.Pipeline(spirv.Copy); return err },
		"zero Device.WaitIdle":         func() error { return zeroDev.WaitIdle(ctx) },
		"nil Buffer.Close":             func() error { (*vk.Buffer)(nil).Close(); return vk.ErrInvalid },
		"nil CommandBuffer.Close":      func() error { (*vk.CommandBuffer)(nil).Close(); return vk.ErrInvalid },
		"Choose(nil, \"\")":            func() error { _, err := vk.Choose(nil, ""); return err },
	}
	n := 0
	for name, call := range calls {
		if call == nil {
			continue
		}
		n++
		var err error
		if !assert.NotPanics(t, func() { err = call() }, name) {
			continue
		}
		assert.Error(t, err, name)
	}
	assert.Equal(t, 0, cb.Commands())
	t.Logf("vk: %d nil or zero-value calls, no panic", n)
}
