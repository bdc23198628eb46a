package vk_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

func TestDevicesListsLimits(t *testing.T) {
	d := vktest.Open(t)
	infos, err := vk.Devices()
	require.NoError(t, err)
	require.NotEmpty(t, infos)
	found := false
	for _, in := range infos {
		assert.NotEmpty(t, in.Name)
		l := in.Limits
		assert.NotZero(t, l.MaxStorageBufferRange, in.Name)
		assert.NotZero(t, l.MaxComputeWorkGroupInvocations, in.Name)
		assert.NotZero(t, l.MaxComputeSharedMemorySize, in.Name)
		assert.NotZero(t, l.MaxComputeWorkGroupCount[0], in.Name)
		if in.Name == d.Info().Name {
			found = true
		}
	}
	assert.True(t, found, "the opened device is among Devices()")
	t.Logf("device: %s", d.Info())
	t.Logf("limits: %+v", d.Limits())
}

func TestChoose(t *testing.T) {
	infos := []vk.Info{
		{Index: 0, Name: "llvmpipe (LLVM 15.0.6, 256 bits)", Type: vk.DeviceCPU},
		{Index: 1, Name: "Intel(R) UHD Graphics", Type: vk.DeviceIntegratedGPU},
		{Index: 2, Name: "NVIDIA H100 80GB HBM3", Type: vk.DeviceDiscreteGPU},
		{Index: 3, Name: "virtio", Type: vk.DeviceVirtualGPU},
	}
	for _, tc := range []struct {
		sel  string
		want int
	}{
		{"", 2}, {"0", 0}, {"3", 3}, {"llvm", 0}, {"h100", 2}, {"INTEL", 1}, {" 1 ", 1},
	} {
		got, err := vk.Choose(infos, tc.sel)
		require.NoError(t, err, tc.sel)
		assert.Equal(t, tc.want, got, "selector %q", tc.sel)
	}
	got, err := vk.Choose(infos[:2], "")
	require.NoError(t, err)
	assert.Equal(t, 1, got, "integrated beats CPU")
	// Issue 22: a selector that matches nothing says so first, then lists
	// the devices; it is not "no Vulkan device (install a driver)".
	for sel, want := range map[string]string{
		"7":      "vk: no such Vulkan device: no device has index 7 (devices: 0 \"llvmpipe",
		"radeon": "vk: no such Vulkan device: no device name contains \"radeon\" (devices: 0 \"llvmpipe",
	} {
		_, err := vk.Choose(infos, sel)
		assert.ErrorIs(t, err, vk.ErrNoSuchDevice, sel)
		assert.NotErrorIs(t, err, vk.ErrNoDevice, sel)
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), want), "selector %q: %v", sel, err)
		assert.Contains(t, err.Error(), "3 \"virtio\"", "the error lists every device")
	}
	_, err = vk.Choose(nil, "")
	assert.ErrorIs(t, err, vk.ErrNoDevice)
}

// vk.Open takes the device from Options only (issue 20): a bad
// $VKMPS_DEVICE does not reach it; a bad Options.Device is
// ErrNoSuchDevice.
func TestOpenIgnoresTheEnvironment(t *testing.T) {
	d := vktest.Open(t)
	name := d.Info().Name
	t.Setenv("VKMPS_DEVICE", "no-such-device-anywhere")
	t.Setenv("VKMPS_VALIDATION", "banana")
	d2, err := vk.Open(vk.Options{})
	require.NoError(t, err)
	assert.False(t, d2.ValidationEnabled(), "ValidationDefault is off in vk.Open")
	require.NoError(t, d2.Close())
	_, err = vk.Open(vk.Options{Device: "no-such-device-anywhere"})
	assert.ErrorIs(t, err, vk.ErrNoSuchDevice)
	d3, err := vk.Open(vk.Options{Device: name[:3], Validation: vk.ValidationOff})
	require.NoError(t, err)
	assert.Equal(t, name, d3.Info().Name)
	require.NoError(t, d3.Close())
	_, err = vk.Open(vk.Options{Validation: vk.Validation(9)})
	assert.ErrorIs(t, err, vk.ErrInvalid)
}

func bytesOf(f []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f))
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	r.Read(b)
	return b
}

// Both memory paths: mapped (lavapipe) and the staging ring of discrete GPUs.
var pathOptions = map[string]vk.Options{
	"direct":  {},
	"staging": {ForceStaging: true, StagingSize: 64 << 10},
}

func TestBufferRoundTrip(t *testing.T) {
	for name, opts := range pathOptions {
		t.Run(name, func(t *testing.T) {
			d := vktest.Open(t, opts)
			ctx := context.Background()
			r := rand.New(rand.NewSource(1))
			for _, size := range []int{4, 100, 4096, 100_003, 1 << 20} {
				b, err := d.NewBuffer(uint64(size), "roundtrip")
				require.NoError(t, err)
				data := randomBytes(r, size)
				require.NoError(t, b.Write(ctx, 0, data))
				got := make([]byte, size)
				require.NoError(t, b.Read(ctx, 0, got))
				require.Equal(t, data, got, "size %d", size)
				// A partial write at an odd offset leaves the rest alone.
				if size > 10 {
					patch := randomBytes(r, size/3)
					require.NoError(t, b.Write(ctx, 3, patch))
					copy(data[3:], patch)
					require.NoError(t, b.Read(ctx, 0, got))
					require.Equal(t, data, got)
					part := make([]byte, 7)
					require.NoError(t, b.Read(ctx, uint64(size-7), part))
					require.Equal(t, data[size-7:], part)
				}
				require.NoError(t, b.Close())
			}
		})
	}
}

func TestBufferErrors(t *testing.T) {
	d := vktest.Open(t)
	ctx := context.Background()
	_, err := d.NewBuffer(0, "empty")
	assert.ErrorIs(t, err, vk.ErrInvalid)
	b, err := d.NewBuffer(16, "small")
	require.NoError(t, err)
	assert.ErrorIs(t, b.Write(ctx, 8, make([]byte, 9)), vk.ErrInvalid)
	assert.ErrorIs(t, b.Read(ctx, 17, make([]byte, 1)), vk.ErrInvalid)
	assert.ErrorIs(t, b.Read(ctx, ^uint64(0), make([]byte, 2)), vk.ErrInvalid, "no overflow")
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "Close twice")
	assert.ErrorIs(t, b.Write(ctx, 0, make([]byte, 4)), vk.ErrClosed)
	assert.ErrorIs(t, b.Read(ctx, 0, make([]byte, 4)), vk.ErrClosed)
}

func TestOutOfDeviceMemory(t *testing.T) {
	d := vktest.Open(t)
	_, err := d.NewBuffer(1<<50, "huge")
	require.ErrorIs(t, err, vk.ErrOutOfDeviceMemory)
	assert.Contains(t, err.Error(), "huge")
	assert.Empty(t, d.LiveSummary())
	// The device keeps working.
	b, err := d.NewBuffer(1024, "after")
	require.NoError(t, err)
	require.NoError(t, b.Write(context.Background(), 0, make([]byte, 1024)))
	require.NoError(t, b.Close())
}

// copyKernel copies n float32 (n a multiple of 4) from src to dst with the
// copy shader.
func copyKernel(t *testing.T, d *vk.Device, cb *vk.CommandBuffer, dst, src vk.BufferRange) {
	t.Helper()
	p, err := d.Pipeline(spirv.Copy, 64)
	require.NoError(t, err)
	var push [12]byte
	binary.LittleEndian.PutUint32(push[0:], uint32(src.Size/16))
	groups := uint32(min((src.Size/16+63)/64, 4096))
	require.NoError(t, cb.Dispatch(p, []vk.BufferRange{src, dst}, push[:], [3]uint32{groups, 1, 1}))
}

func TestCopyKernel(t *testing.T) {
	for name, opts := range pathOptions {
		t.Run(name, func(t *testing.T) {
			d := vktest.Open(t, opts)
			ctx := context.Background()
			const n = 1<<18 + 12
			in := make([]float32, n)
			for i := range in {
				in[i] = float32(i)*0.5 - 7
			}
			src, err := d.NewBuffer(4*n, "src")
			require.NoError(t, err)
			defer src.Close()
			dst, err := d.NewBuffer(4*n, "dst")
			require.NoError(t, err)
			defer dst.Close()
			require.NoError(t, src.Write(ctx, 0, bytesOf(in)))
			require.NoError(t, dst.Write(ctx, 0, make([]byte, 4*n)))

			cb, err := d.NewCommandBuffer()
			require.NoError(t, err)
			defer cb.Close()
			copyKernel(t, d, cb, dst.Whole(), src.Whole())
			require.NoError(t, cb.Commit())
			require.NoError(t, cb.Wait(ctx))
			out := make([]float32, n)
			require.NoError(t, dst.Read(ctx, 0, bytesOf(out)))
			require.Equal(t, in, out)
		})
	}
}

func TestBarriersOnlyWhereNeeded(t *testing.T) {
	d := vktest.Open(t)
	ctx := context.Background()
	const n = 4096
	bufs := make([]*vk.Buffer, 4)
	for i := range bufs {
		b, err := d.NewBuffer(4*n, "chain")
		require.NoError(t, err)
		defer b.Close()
		bufs[i] = b
	}
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	require.NoError(t, bufs[0].Write(ctx, 0, bytesOf(in)))
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	// Two independent copies of halves: no barrier between them.
	half := uint64(2 * n)
	copyKernel(t, d, cb, bufs[1].Range(0, half), bufs[0].Range(0, half))
	copyKernel(t, d, cb, bufs[1].Range(half, half), bufs[0].Range(half, half))
	assert.Equal(t, 0, cb.Barriers())
	// Reading what was just written needs one.
	copyKernel(t, d, cb, bufs[2].Whole(), bufs[1].Whole())
	assert.Equal(t, 1, cb.Barriers())
	// A chain: one per link.
	copyKernel(t, d, cb, bufs[3].Whole(), bufs[2].Whole())
	assert.Equal(t, 2, cb.Barriers())
	// Write-after-read: overwriting a buffer read since the last barrier.
	require.NoError(t, cb.Fill(bufs[2].Whole(), 0))
	assert.Equal(t, 3, cb.Barriers())
	require.NoError(t, cb.Commit())
	require.NoError(t, cb.Wait(ctx))
	out := make([]float32, n)
	require.NoError(t, bufs[3].Read(ctx, 0, bytesOf(out)))
	require.Equal(t, in, out)
	require.NoError(t, bufs[2].Read(ctx, 0, bytesOf(out)))
	require.Equal(t, make([]float32, n), out)
}

func TestTransfers(t *testing.T) {
	d := vktest.Open(t)
	ctx := context.Background()
	a, err := d.NewBuffer(256, "a")
	require.NoError(t, err)
	defer a.Close()
	b, err := d.NewBuffer(256, "b")
	require.NoError(t, err)
	defer b.Close()
	data := randomBytes(rand.New(rand.NewSource(2)), 256)
	require.NoError(t, a.Write(ctx, 0, data))
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	require.NoError(t, cb.Fill(b.Whole(), 0xdeadbeef))
	require.NoError(t, cb.Copy(b.Range(64, 128), a.Range(0, 128)))
	assert.ErrorIs(t, cb.Copy(b.Range(0, 8), a.Range(0, 4)), vk.ErrInvalid)
	assert.ErrorIs(t, cb.Copy(a.Range(0, 8), a.Range(4, 8)), vk.ErrInvalid, "overlap")
	assert.ErrorIs(t, cb.Fill(b.Range(2, 8), 0), vk.ErrInvalid, "unaligned fill")
	require.NoError(t, cb.Commit())
	require.NoError(t, cb.Wait(ctx))
	got := make([]byte, 256)
	require.NoError(t, b.Read(ctx, 0, got))
	for i := 0; i < 64; i += 4 {
		assert.Equal(t, uint32(0xdeadbeef), binary.LittleEndian.Uint32(got[i:]))
	}
	assert.Equal(t, data[:128], got[64:192])
}

func TestDispatchErrors(t *testing.T) {
	d := vktest.Open(t)
	p, err := d.Pipeline(spirv.Copy, 64)
	require.NoError(t, err)
	a, err := d.NewBuffer(64, "a")
	require.NoError(t, err)
	defer a.Close()
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	push := make([]byte, 12)
	g := [3]uint32{1, 1, 1}
	assert.ErrorIs(t, cb.Dispatch(p, []vk.BufferRange{a.Whole()}, push, g), vk.ErrInvalid, "binding count")
	assert.ErrorIs(t, cb.Dispatch(p, []vk.BufferRange{a.Range(0, 32), a.Range(32, 32)}, push[:8], g), vk.ErrInvalid, "push size")
	assert.ErrorIs(t, cb.Dispatch(p, []vk.BufferRange{a.Range(0, 32), a.Range(32, 64)}, push, g), vk.ErrInvalid, "range")
	assert.ErrorIs(t, cb.Dispatch(p, []vk.BufferRange{a.Range(0, 32), a.Range(32, 32)}, push, [3]uint32{1 << 31, 1, 1}), vk.ErrInvalid, "groups")
	assert.ErrorIs(t, cb.Dispatch(nil, nil, nil, g), vk.ErrInvalid)
	if al := d.Limits().MinStorageBufferOffsetAlignment; al > 1 {
		assert.ErrorIs(t, cb.Dispatch(p, []vk.BufferRange{a.Range(1, 16), a.Range(32, 32)}, push, g), vk.ErrInvalid, "alignment")
	}
	_, err = d.Pipeline(spirv.Copy, 1<<20)
	assert.ErrorIs(t, err, vk.ErrInvalid, "workgroup too large")
	_, err = d.Pipeline(spirv.Copy, 64, 1)
	assert.ErrorIs(t, err, vk.ErrInvalid, "too many constants")
	require.NoError(t, cb.Commit())
	assert.ErrorIs(t, cb.Dispatch(p, []vk.BufferRange{a.Range(0, 32), a.Range(32, 32)}, push, g), vk.ErrInvalid, "after commit")
	require.NoError(t, cb.Wait(context.Background()))
	require.NoError(t, cb.Close())
	require.NoError(t, cb.Close())
	assert.ErrorIs(t, cb.Commit(), vk.ErrClosed)
}

func TestPipelineCache(t *testing.T) {
	d := vktest.Open(t)
	p1, err := d.Pipeline(spirv.Copy, 64)
	require.NoError(t, err)
	p2, err := d.Pipeline(spirv.Copy, 64)
	require.NoError(t, err)
	p3, err := d.Pipeline(spirv.Copy, 128)
	require.NoError(t, err)
	assert.Same(t, p1, p2)
	assert.NotSame(t, p1, p3)
	assert.Equal(t, [3]uint32{128, 1, 1}, p3.LocalSize())
	p4, err := d.Pipeline(spirv.Copy)
	require.NoError(t, err)
	assert.Equal(t, [3]uint32{1, 1, 1}, p4.LocalSize(), "declared default")
}

func TestRecommitAndReset(t *testing.T) {
	d := vktest.Open(t)
	ctx := context.Background()
	a, err := d.NewBuffer(4096, "a")
	require.NoError(t, err)
	defer a.Close()
	b, err := d.NewBuffer(4096, "b")
	require.NoError(t, err)
	defer b.Close()
	cb, err := d.NewCommandBuffer(vk.WithTimestamps())
	require.NoError(t, err)
	defer cb.Close()
	copyKernel(t, d, cb, b.Whole(), a.Whole())
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 3; i++ {
		data := randomBytes(r, 4096)
		require.NoError(t, a.Write(ctx, 0, data))
		require.NoError(t, cb.Commit())
		require.NoError(t, cb.Wait(ctx))
		got := make([]byte, 4096)
		require.NoError(t, b.Read(ctx, 0, got))
		require.Equal(t, data, got, "replay %d", i)
		if d.Limits().TimestampsSupported {
			gt, err := cb.GPUTime()
			require.NoError(t, err)
			assert.Greater(t, gt, time.Duration(0))
		}
	}
	require.NoError(t, cb.Reset())
	require.NoError(t, cb.Fill(b.Whole(), 0))
	require.NoError(t, cb.Commit())
	require.NoError(t, cb.Wait(ctx))
	got := make([]byte, 4096)
	require.NoError(t, b.Read(ctx, 0, got))
	require.Equal(t, make([]byte, 4096), got)
}

// longWork records enough copying to keep lavapipe busy for a while.
func longWork(t *testing.T, d *vk.Device, a, b *vk.Buffer, reps int) *vk.CommandBuffer {
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	for i := 0; i < reps; i++ {
		copyKernel(t, d, cb, b.Whole(), a.Whole())
		copyKernel(t, d, cb, a.Whole(), b.Whole())
	}
	return cb
}

func TestWaitHonoursContext(t *testing.T) {
	d := vktest.Open(t)
	const size = 16 << 20
	a, err := d.NewBuffer(size, "a")
	require.NoError(t, err)
	defer a.Close()
	b, err := d.NewBuffer(size, "b")
	require.NoError(t, err)
	defer b.Close()
	cb := longWork(t, d, a, b, 40)
	defer cb.Close()
	require.NoError(t, cb.Commit())
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	start := time.Now()
	err = cb.Wait(ctx)
	elapsed := time.Since(start)
	if err == nil {
		t.Skipf("work finished within 1 ms (%v); cannot observe cancellation here", elapsed)
	}
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, elapsed, 500*time.Millisecond, "Wait returns promptly")
	assert.ErrorIs(t, a.Read(ctx, 0, make([]byte, 4)), context.DeadlineExceeded, "Read waits for the work on its buffer")
	// The device stays usable.
	require.NoError(t, cb.Wait(context.Background()))
	require.NoError(t, a.Read(context.Background(), 0, make([]byte, 4)))
}

func TestCloseWhileBusy(t *testing.T) {
	d := vktest.Open(t)
	a, err := d.NewBuffer(8<<20, "a")
	require.NoError(t, err)
	b, err := d.NewBuffer(8<<20, "b")
	require.NoError(t, err)
	cb := longWork(t, d, a, b, 10)
	require.NoError(t, cb.Commit())
	// Closing everything while the GPU works is safe: release is deferred.
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
	require.NoError(t, cb.Close())
	require.NoError(t, d.WaitIdle(context.Background()))
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "Close twice")
	_, err = d.NewBuffer(16, "after close")
	assert.ErrorIs(t, err, vk.ErrClosed)
}

func TestConcurrentUse(t *testing.T) {
	d := vktest.Open(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			ctx := context.Background()
			r := rand.New(rand.NewSource(int64(g)))
			for it := 0; it < 10; it++ {
				n := 4 * (1 + r.Intn(5000))
				err := func() error {
					a, err := d.NewBuffer(uint64(4*n), "a")
					if err != nil {
						return err
					}
					defer a.Close()
					b, err := d.NewBuffer(uint64(4*n), "b")
					if err != nil {
						return err
					}
					defer b.Close()
					in := make([]float32, n)
					for i := range in {
						in[i] = r.Float32()
					}
					if err := a.Write(ctx, 0, bytesOf(in)); err != nil {
						return err
					}
					cb, err := d.NewCommandBuffer()
					if err != nil {
						return err
					}
					defer cb.Close()
					p, err := d.Pipeline(spirv.Copy, 64)
					if err != nil {
						return err
					}
					var push [12]byte
					binary.LittleEndian.PutUint32(push[0:], uint32(n/4))
					if err := cb.Dispatch(p, []vk.BufferRange{a.Whole(), b.Whole()}, push[:], [3]uint32{uint32((n/4 + 63) / 64), 1, 1}); err != nil {
						return err
					}
					if err := cb.Commit(); err != nil {
						return err
					}
					out := make([]float32, n)
					// Read waits for the command buffer through the buffer.
					if err := b.Read(ctx, 0, bytesOf(out)); err != nil {
						return err
					}
					for i := range in {
						if in[i] != out[i] {
							return errors.New("copy mismatch")
						}
					}
					return nil
				}()
				if err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestErrorUnwrap(t *testing.T) {
	for r, want := range map[vk.Result]error{
		vk.ErrorDeviceLost:        vk.ErrDeviceLost,
		vk.ErrorOutOfDeviceMemory: vk.ErrOutOfDeviceMemory,
		vk.ErrorOutOfHostMemory:   vk.ErrOutOfHostMemory,
		vk.ErrorLayerNotPresent:   vk.ErrUnsupported,
	} {
		err := error(&vk.Error{Op: "vkTest", Result: r})
		assert.ErrorIs(t, err, want)
		assert.Contains(t, err.Error(), "vkTest")
		assert.Contains(t, err.Error(), r.String())
	}
}

func BenchmarkEmptySubmit(b *testing.B) {
	d := vktest.Open(b)
	cb, err := d.NewCommandBuffer()
	require.NoError(b, err)
	defer cb.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := cb.Commit(); err != nil {
			b.Fatal(err)
		}
		if err := cb.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDispatchEncode(b *testing.B) {
	d := vktest.Open(b)
	a, err := d.NewBuffer(1<<16, "a")
	require.NoError(b, err)
	defer a.Close()
	c, err := d.NewBuffer(1<<16, "c")
	require.NoError(b, err)
	defer c.Close()
	p, err := d.Pipeline(spirv.Copy, 64)
	require.NoError(b, err)
	cb, err := d.NewCommandBuffer()
	require.NoError(b, err)
	defer func() { cb.Close() }()
	push := make([]byte, 12)
	binds := []vk.BufferRange{a.Whole(), c.Whole()}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%1000 == 999 {
			b.StopTimer()
			require.NoError(b, cb.Reset())
			b.StartTimer()
		}
		if err := cb.Dispatch(p, binds, push, [3]uint32{1, 1, 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// vulkan-go frees the C copies of nested create-info arrays from finalizers
// that can run before the call reads them; vkmps makes those calls itself.
// Setting up devices and pipelines while the collector runs non-stop must
// not crash.
func TestSetupUnderGCPressure(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for i := 0; i < 8; i++ {
		d := vktest.Open(t)
		for w := uint32(1); w <= 64; w *= 2 {
			_, err := d.Pipeline(spirv.Copy, w)
			require.NoError(t, err)
		}
		b, err := d.NewBuffer(4096, "gc")
		require.NoError(t, err)
		require.NoError(t, b.Write(context.Background(), 0, make([]byte, 4096)))
		require.NoError(t, b.Close())
		vktest.Check(t, d)
		require.NoError(t, d.Close())
	}
}

func TestHostBuffer(t *testing.T) {
	for name, opts := range pathOptions {
		t.Run(name, func(t *testing.T) {
			d := vktest.Open(t, opts)
			ctx := context.Background()
			h, err := d.NewHostBuffer(4096, "host")
			require.NoError(t, err)
			defer h.Close()
			assert.True(t, h.Mapped())
			dev, err := d.NewBuffer(4096, "device")
			require.NoError(t, err)
			defer dev.Close()
			// Device memory is mapped only where it is host-visible
			// (unified memory, lavapipe) and staging is not forced.
			assert.Equal(t, name == "direct" && d.Limits().UnifiedMemory, dev.Mapped())
			data := randomBytes(rand.New(rand.NewSource(9)), 4096)
			require.NoError(t, h.Write(ctx, 0, data))
			// GPU copies between host and device buffers in one command buffer.
			cb, err := d.NewCommandBuffer()
			require.NoError(t, err)
			defer cb.Close()
			require.NoError(t, cb.Copy(dev.Whole(), h.Whole()))
			require.NoError(t, cb.Fill(h.Whole(), 0))
			require.NoError(t, cb.Copy(h.Range(0, 2048), dev.Range(2048, 2048)))
			require.NoError(t, cb.Commit())
			before := d.Submissions()
			require.NoError(t, cb.Wait(ctx))
			got := make([]byte, 4096)
			require.NoError(t, h.Read(ctx, 0, got))
			assert.Equal(t, before, d.Submissions(), "reading a host buffer submits nothing")
			assert.Equal(t, data[2048:], got[:2048])
			assert.Equal(t, make([]byte, 2048), got[2048:])
		})
	}
}

// Closing a buffer that a recorded command buffer uses is safe at any
// point: the memory lives until the command buffer is closed or reset and
// its work has finished.
func TestCloseBuffersBeforeCommit(t *testing.T) {
	for name, opts := range pathOptions {
		t.Run(name, func(t *testing.T) {
			d := vktest.Open(t, opts)
			ctx := context.Background()
			data := randomBytes(rand.New(rand.NewSource(4)), 1<<16)
			src, err := d.NewBuffer(1<<16, "src")
			require.NoError(t, err)
			require.NoError(t, src.Write(ctx, 0, data))
			scratch, err := d.NewBuffer(1<<16, "scratch")
			require.NoError(t, err)
			out, err := d.NewBuffer(1<<16, "out")
			require.NoError(t, err)
			defer out.Close()
			cb, err := d.NewCommandBuffer()
			require.NoError(t, err)
			copyKernel(t, d, cb, scratch.Whole(), src.Whole())
			copyKernel(t, d, cb, out.Whole(), scratch.Whole())
			// Both closed before the work is even submitted.
			require.NoError(t, src.Close())
			require.NoError(t, scratch.Close())
			assert.Equal(t, 3, d.LiveObjects()["buffer"], "kept alive by the recording")
			// Other allocations must not reuse their memory meanwhile.
			for i := 0; i < 4; i++ {
				b, err := d.NewBuffer(1<<16, "other")
				require.NoError(t, err)
				require.NoError(t, b.Write(ctx, 0, make([]byte, 1<<16)))
				defer b.Close()
			}
			require.NoError(t, cb.Commit())
			require.NoError(t, cb.Wait(ctx))
			got := make([]byte, 1<<16)
			require.NoError(t, out.Read(ctx, 0, got))
			require.Equal(t, data, got)
			// A replay still works: the recording keeps its buffers.
			require.NoError(t, cb.Commit())
			require.NoError(t, cb.Wait(ctx))
			require.NoError(t, cb.Close())
			require.NoError(t, d.WaitIdle(ctx))
			assert.Equal(t, 5, d.LiveObjects()["buffer"], "freed once the command buffer closed")
		})
	}
}

// Many Open/Close cycles in one process: on NVIDIA's driver the 31st
// failed in vkCreateInstance until the loader's drivers were kept loaded
// (anchorDrivers).
func TestOpenCloseCycles(t *testing.T) {
	for i := 0; i < 64; i++ {
		d := vktest.Open(t)
		b, err := d.NewBuffer(4096, "cycle")
		require.NoError(t, err, "cycle %d", i)
		require.NoError(t, b.Close())
		vktest.Check(t, d)
		require.NoError(t, d.Close(), "cycle %d", i)
	}
}

// Mark records timestamps between commands: they rise, end within the
// command buffer's GPU time, and running out of marks is an error.
func TestTimestampMarks(t *testing.T) {
	dev := vktest.Open(t)
	if !dev.Limits().TimestampsSupported {
		t.Skip("no timestamps")
	}
	buf, err := dev.NewBuffer(1<<20, "marks")
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	cb, err := dev.NewCommandBuffer(vk.WithTimestampMarks(3))
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	for i := 0; i < 3; i++ {
		if err := cb.Fill(buf.Whole(), uint32(i)); err != nil {
			t.Fatal(err)
		}
		if n, err := cb.Mark(); err != nil || n != i {
			t.Fatalf("mark %d: %d %v", i, n, err)
		}
	}
	if _, err := cb.Mark(); !errors.Is(err, vk.ErrInvalid) {
		t.Fatalf("a fourth mark: %v", err)
	}
	if err := cb.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := cb.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	marks, err := cb.MarkTimes()
	if err != nil {
		t.Fatal(err)
	}
	total, err := cb.GPUTime()
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != 3 || marks[0] > marks[1] || marks[1] > marks[2] || marks[2] > total {
		t.Errorf("marks %v, total %v", marks, total)
	}
}

// A dispatch profile marks after each command while room lasts (the
// caller's own marks taking theirs): it names each command, its times add
// up to no more than the command buffer's, a barrier separates every
// dispatch, and the results are those of the same commands unprofiled.
func TestDispatchProfile(t *testing.T) {
	d := vktest.Open(t)
	if !d.Limits().TimestampsSupported {
		t.Skip("no timestamps")
	}
	ctx := context.Background()
	const n = 4096
	bufs := make([]*vk.Buffer, 3)
	for i := range bufs {
		b, err := d.NewBuffer(4*n, "profile")
		require.NoError(t, err)
		defer b.Close()
		bufs[i] = b
	}
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i) - 9
	}
	require.NoError(t, bufs[0].Write(ctx, 0, bytesOf(in)))
	plain, err := d.NewCommandBuffer(vk.WithTimestamps())
	require.NoError(t, err)
	defer plain.Close()
	_, err = plain.DispatchProfile()
	require.ErrorIs(t, err, vk.ErrInvalid, "a command buffer without WithDispatchProfile")

	cb, err := d.NewCommandBuffer(vk.WithDispatchProfile(4))
	require.NoError(t, err)
	defer cb.Close()
	half := uint64(2 * n)
	// Independent halves: no barrier between them unprofiled, one here;
	// a mark of the caller's own between them takes one of the four.
	copyKernel(t, d, cb, bufs[1].Range(0, half), bufs[0].Range(0, half))
	_, err = cb.Mark()
	require.NoError(t, err)
	copyKernel(t, d, cb, bufs[1].Range(half, half), bufs[0].Range(half, half))
	require.NoError(t, cb.Fill(bufs[2].Whole(), 7))
	copyKernel(t, d, cb, bufs[2].Whole(), bufs[1].Whole()) // the fourth: past the marks
	assert.Equal(t, 3, cb.Barriers())
	_, err = cb.DispatchProfile()
	require.ErrorIs(t, err, vk.ErrInvalid, "before the work has run")
	require.NoError(t, cb.Commit())
	require.NoError(t, cb.Wait(ctx))
	prof, err := cb.DispatchProfile()
	require.NoError(t, err)
	total, err := cb.GPUTime()
	require.NoError(t, err)
	require.Len(t, prof, 3)
	var sum time.Duration
	for i, want := range []string{"copy", "copy", "fill"} {
		assert.Contains(t, prof[i].Shader, want, "command %d", i)
		assert.GreaterOrEqual(t, prof[i].Time, time.Duration(0), "command %d", i)
		sum += prof[i].Time
	}
	assert.Equal(t, [3]uint32{8, 1, 1}, prof[0].Groups) // 512 quads, 64 per workgroup
	assert.Equal(t, []uint32{64}, prof[0].Spec)
	assert.LessOrEqual(t, sum, total)
	out := make([]float32, n)
	require.NoError(t, bufs[2].Read(ctx, 0, bytesOf(out)))
	require.Equal(t, in, out)
}
