package vk

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/spirv"
)

// openInternal opens a device for an internal test, which cannot use
// vktest or vkenv (they import this package): it completes opts from
// $VKMPS_DEVICE and $VKMPS_VALIDATION as vkenv.Options does and skips
// cleanly without a device unless $VKMPS_REQUIRE_DEVICE=1 (or without the
// validation layer, when opts ask for it).
func openInternal(t *testing.T, opts Options) *Device {
	t.Helper()
	if opts.Device == "" {
		opts.Device = os.Getenv("VKMPS_DEVICE")
	}
	if opts.Validation == ValidationDefault {
		v, err := ParseValidation(os.Getenv("VKMPS_VALIDATION"))
		require.NoError(t, err, "$VKMPS_VALIDATION")
		opts.Validation = v
	}
	d, err := Open(opts)
	if err != nil {
		required := os.Getenv("VKMPS_REQUIRE_DEVICE") == "1"
		if (errors.Is(err, ErrNoLoader) || errors.Is(err, ErrNoDevice)) && !required {
			t.Skipf("no Vulkan device: %v", err)
		}
		if errors.Is(err, ErrUnsupported) && opts.Validation != ValidationOff && !required {
			t.Skipf("no validation layer: %v", err)
		}
		t.Fatalf("Open: %v", err)
	}
	return d
}

// TestDeviceLostEverywhere: once the device is lost, every public method
// that would touch the GPU returns ErrDeviceLost promptly (no hang, no
// crash), and the rest (accessors, Close) still work. An exported method
// of Device, Buffer, CommandBuffer or Pipeline in neither table is called
// with zero-value arguments, so a new method cannot skip the question.
func TestDeviceLostEverywhere(t *testing.T) {
	for name, opts := range map[string]Options{"direct": {}, "staging": {ForceStaging: true, StagingSize: 64 << 10}} {
		t.Run(name, func(t *testing.T) { testDeviceLost(t, opts) })
	}
}

func testDeviceLost(t *testing.T, opts Options) {
	d := openInternal(t, opts)
	ctx := context.Background()
	const size = 4 << 20
	a, err := d.NewBuffer(size, "a")
	require.NoError(t, err)
	b, err := d.NewBuffer(size, "b")
	require.NoError(t, err)
	h, err := d.NewHostBuffer(4096, "host")
	require.NoError(t, err)
	p, err := d.Pipeline(spirv.Copy, 64)
	require.NoError(t, err)
	push := make([]byte, 12)
	binary.LittleEndian.PutUint32(push, size/16)
	binds := []BufferRange{a.Whole(), b.Whole()}
	groups := [3]uint32{size / 16 / 64, 1, 1}

	recording, err := d.NewCommandBuffer()
	require.NoError(t, err)
	require.NoError(t, recording.Dispatch(p, binds, push, groups))
	var finished *CommandBuffer
	if d.Limits().TimestampsSupported {
		finished, err = d.NewCommandBuffer(WithTimestamps())
	} else {
		finished, err = d.NewCommandBuffer()
	}
	require.NoError(t, err)
	require.NoError(t, finished.Fill(h.Whole(), 7))
	require.NoError(t, finished.Commit())
	require.NoError(t, finished.Wait(ctx))
	var marked *CommandBuffer // finished, with a timestamp mark
	if d.Limits().TimestampsSupported {
		marked, err = d.NewCommandBuffer(WithTimestampMarks(1))
		require.NoError(t, err)
		require.NoError(t, marked.Fill(h.Whole(), 8))
		_, err = marked.Mark()
		require.NoError(t, err)
		require.NoError(t, marked.Commit())
		require.NoError(t, marked.Wait(ctx))
	}
	// Work running when the device is lost: a waiter must come back.
	running, err := d.NewCommandBuffer()
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		require.NoError(t, running.Dispatch(p, binds, push, groups))
		require.NoError(t, running.Dispatch(p, []BufferRange{b.Whole(), a.Whole()}, push, groups))
	}
	require.NoError(t, running.Commit())
	waiterCtx, stop := context.WithCancel(ctx) // cancellable: short wait slices
	defer stop()
	waited := make(chan error, 1)
	go func() { waited <- running.Wait(waiterCtx) }()
	time.Sleep(2 * time.Millisecond)

	d.markLost()
	select {
	case err := <-waited:
		if err != nil { // nil: the work had finished before the loss
			assert.ErrorIs(t, err, ErrDeviceLost, "a waiter blocked at the loss")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait hangs after the device was lost")
	}

	deadline, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fails := map[string]func() error{
		"Device.WaitIdle":             func() error { return d.WaitIdle(deadline) },
		"Device.NewBuffer":            func() error { _, err := d.NewBuffer(16, "x"); return err },
		"Device.NewHostBuffer":        func() error { _, err := d.NewHostBuffer(16, "x"); return err },
		"Device.NewCommandBuffer":     func() error { _, err := d.NewCommandBuffer(); return err },
		"Device.Pipeline":             func() error { _, err := d.Pipeline(spirv.Copy, 32); return err },
		"Buffer.Write":                func() error { return a.Write(deadline, 0, make([]byte, 16)) },
		"Buffer.Read":                 func() error { return a.Read(deadline, 0, make([]byte, 16)) },
		"CommandBuffer.Dispatch":      func() error { return recording.Dispatch(p, binds, push, groups) },
		"CommandBuffer.Copy":          func() error { return recording.Copy(b.Range(0, 16), a.Range(0, 16)) },
		"CommandBuffer.Fill":          func() error { return recording.Fill(a.Range(0, 16), 0) },
		"CommandBuffer.Commit":        func() error { return recording.Commit() },
		"CommandBuffer.Wait":          func() error { return running.Wait(deadline) },
		"CommandBuffer.Reset":         func() error { return finished.Reset() },
		"CommandBuffer.GPUTime":       func() error { _, err := finished.GPUTime(); return err },
		"CommandBuffer.Commit(again)": func() error { return finished.Commit() },
		"CommandBuffer.Wait(unsubmitted)": func() error {
			return recording.Wait(deadline)
		},
	}
	if !finished.timestamps {
		fails["CommandBuffer.GPUTime"] = func() error { return ErrDeviceLost } // ErrInvalid first: no timestamps
	}
	fails["CommandBuffer.Mark"] = func() error { _, err := recording.Mark(); return err }
	fails["CommandBuffer.MarkTimes"] = func() error { return ErrDeviceLost } // ErrInvalid first: no marks
	if marked != nil {
		fails["CommandBuffer.MarkTimes"] = func() error { _, err := marked.MarkTimes(); return err }
	}
	works := map[string]func(){
		"Device.Close":              nil, // below
		"Device.Closed":             func() { assert.False(t, d.Closed()) },
		"Device.Info":               func() { assert.NotEmpty(t, d.Info().Name) },
		"Device.Limits":             func() { assert.NotZero(t, d.Limits().MaxStorageBufferRange) },
		"Device.LiveObjects":        func() { assert.NotEmpty(t, d.LiveObjects()) },
		"Device.LiveSummary":        func() { assert.NotEmpty(t, d.LiveSummary()) },
		"Device.MemoryStats":        func() { assert.NotZero(t, d.MemoryStats().Blocks) },
		"Device.Submissions":        func() { assert.NotZero(t, d.Submissions()) },
		"Device.ValidationEnabled":  func() { d.ValidationEnabled() },
		"Device.ValidationMessages": func() { assert.Empty(t, d.ValidationMessages()) },
		"Buffer.Close":              nil,
		"Buffer.Device":             func() { assert.Same(t, d, a.Device()) },
		"Buffer.Label":              func() { assert.Equal(t, "a", a.Label()) },
		"Buffer.Mapped":             func() { h.Mapped() },
		"Buffer.Range":              func() { assert.Equal(t, uint64(8), a.Range(8, 8).Offset) },
		"Buffer.Size":               func() { assert.Equal(t, uint64(size), a.Size()) },
		"Buffer.Whole":              func() { assert.Equal(t, uint64(size), a.Whole().Size) },
		"CommandBuffer.Barriers":    func() { recording.Barriers() },
		"CommandBuffer.Commands":    func() { assert.Equal(t, 1, recording.Commands()) },
		"CommandBuffer.Done":        func() { assert.True(t, running.Done(), "nothing polls Done forever") },
		"CommandBuffer.Close":       nil,
		"Pipeline.LocalSize":        func() { assert.Equal(t, [3]uint32{64, 1, 1}, p.LocalSize()) },
		"Pipeline.Shader":           func() { assert.Same(t, spirv.Copy, p.Shader()) },
		"Pipeline.Spec":             func() { assert.Equal(t, []uint32{64}, p.Spec()) },
	}

	// Methods in neither table (added since) are called with zero-value
	// arguments: they must not panic, and an error they return must be
	// ErrDeviceLost.
	for _, recv := range []any{d, a, recording, p} {
		rv := reflect.ValueOf(recv)
		rt := rv.Type()
		for i := 0; i < rt.NumMethod(); i++ {
			m := rt.Method(i)
			name := rt.Elem().Name() + "." + m.Name
			if _, ok := fails[name]; ok {
				continue
			}
			if _, ok := works[name]; ok {
				continue
			}
			fails[name] = func() error { return callZero(rv.Method(i)) }
		}
	}

	names := make([]string, 0, len(fails))
	for name := range fails {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		start := time.Now()
		err := fails[name]()
		assert.ErrorIs(t, err, ErrDeviceLost, name)
		assert.Less(t, time.Since(start), time.Second, "%s returns promptly", name)
	}
	for name, f := range works {
		if f != nil {
			f()
		}
		_ = name
	}
	t.Logf("%d calls fail with ErrDeviceLost, %d methods keep working", len(fails), len(works))

	// Closing everything after the loss is safe, twice.
	if marked != nil {
		require.NoError(t, marked.Close())
	}
	for _, c := range []interface{ Close() error }{recording, finished, running, a, b, h, a, recording} {
		require.NoError(t, c.Close())
	}
	require.NoError(t, d.Close())
	require.NoError(t, d.Close())
	assert.Empty(t, d.ValidationMessages())
}

// callZero calls m with zero values for its arguments and returns its
// last result when that is an error, ErrDeviceLost when it returns none
// (nothing to check but that it did not panic).
func callZero(m reflect.Value) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	mt := m.Type()
	if mt.IsVariadic() {
		return ErrDeviceLost // the variadic ones are in the tables
	}
	args := make([]reflect.Value, mt.NumIn())
	for i := range args {
		args[i] = reflect.Zero(mt.In(i))
		if mt.In(i) == reflect.TypeOf((*context.Context)(nil)).Elem() {
			args[i] = reflect.ValueOf(context.Background())
		}
	}
	out := m.Call(args)
	if n := len(out); n > 0 && mt.Out(n-1) == reflect.TypeOf((*error)(nil)).Elem() {
		err, _ := out[n-1].Interface().(error)
		return err
	}
	return ErrDeviceLost
}
