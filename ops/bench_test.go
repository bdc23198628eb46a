package ops_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Host-side cost of encoding one kernel (issue 9: at most 2 µs and no
// allocation in steady state).
func BenchmarkEncode(b *testing.B) {
	dev := vktest.Open(b)
	src := newImage(b, dev, padding.Descriptor{N: 2, C: 16, H: 64, W: 64}, nil)
	dst := newImage(b, dev, padding.Descriptor{N: 2, C: 16, H: 32, W: 32}, nil)
	for _, kind := range kinds {
		b.Run(kind.String(), func(b *testing.B) {
			g := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
			if kind == ops.KindDilatedMax {
				g.DilationX, g.DilationY = 2, 2
			}
			k, err := ops.NewPooling(dev, kind, g)
			require.NoError(b, err)
			cb, err := dev.NewCommandBuffer()
			require.NoError(b, err)
			defer func() { cb.Close() }()
			require.NoError(b, k.Encode(cb, src, dst)) // pipeline creation
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%500 == 499 {
					b.StopTimer()
					require.NoError(b, cb.Reset())
					b.StartTimer()
				}
				if err := k.Encode(cb, src, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(kind.String()+"Gradient", func(b *testing.B) {
			g := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
			if kind == ops.KindDilatedMax {
				g.DilationX, g.DilationY = 2, 2
			}
			k, err := ops.NewPooling(dev, kind, g)
			require.NoError(b, err)
			gk, err := ops.NewPoolingGradient(dev, kind, g)
			require.NoError(b, err)
			dx := newImage(b, dev, padding.Descriptor{N: 2, C: 16, H: 64, W: 64}, nil)
			cb, err := dev.NewCommandBuffer()
			require.NoError(b, err)
			defer func() { cb.Close() }()
			state, err := k.EncodeWithState(cb, src, dst)
			require.NoError(b, err)
			defer state.Close()
			out, err := gk.EncodeNew(cb, dst, src, state) // configures gk
			require.NoError(b, err)
			out.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%500 == 499 {
					b.StopTimer()
					require.NoError(b, cb.Reset())
					b.StartTimer()
				}
				if err := gk.Encode(cb, dst, src, state, dx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchShape is one of issue 9's standard shapes: N, C, H, W, kernel,
// stride, pad (PyTorch explicit padding).
type benchShape struct{ n, c, h, w, k, s, p int }

func benchShapes() []benchShape {
	if os.Getenv("VKMPS_BENCH_LARGE") == "1" {
		return []benchShape{{32, 64, 112, 112, 3, 2, 1}, {64, 256, 56, 56, 2, 2, 0}, {8, 512, 28, 28, 3, 1, 1}}
	}
	return []benchShape{{2, 8, 56, 56, 3, 2, 1}, {4, 16, 28, 28, 2, 2, 0}}
}

// gpuWarmup is how long gpuTime keeps the GPU busy before it measures: an
// idle GPU lowers its clocks (without it an H100 timed the VGG layer's
// forward convolution at 3.2 times, and the stem's data gradient at 2.9
// times, what the same kernels took in a sweep minutes later).
const gpuWarmup = 200 * time.Millisecond

// gpuTime runs encode reps times in one command buffer, several times,
// and returns the median GPU time of one encode, after repeating the
// first command buffer for gpuWarmup.
func gpuTime(b *testing.B, dev *vk.Device, reps, iters int, encode func(cb *vk.CommandBuffer) error) time.Duration {
	var ts []time.Duration
	start := time.Now()
	for it := 0; it < iters+1; it++ {
		if it == 1 && time.Since(start) < gpuWarmup {
			it = 0 // still warming up
		}
		cb, err := dev.NewCommandBuffer(vk.WithTimestamps())
		require.NoError(b, err)
		for r := 0; r < reps; r++ {
			require.NoError(b, encode(cb))
		}
		require.NoError(b, cb.Commit())
		require.NoError(b, cb.Wait(context.Background()))
		d, err := cb.GPUTime()
		require.NoError(b, err)
		cb.Close()
		if it > 0 { // the first is a warm-up
			ts = append(ts, d/time.Duration(reps))
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts[len(ts)/2]
}

// benchFormat is BenchmarkGPU's image format: float16 when
// $VKMPS_BENCH_DTYPE is "float16", else float32.
func benchFormat(b *testing.B, dev *vk.Device) ops.Format {
	switch dt := os.Getenv("VKMPS_BENCH_DTYPE"); dt {
	case "", "float32":
		return ops.Float32
	case "float16":
		requireHalf(b, dev)
		return ops.Float16
	default:
		b.Fatalf("VKMPS_BENCH_DTYPE=%q: want float32 or float16", dt)
	}
	return ops.Float32
}

// GPU time of every kernel forward and backward on the standard shapes
// (VKMPS_BENCH_LARGE=1 for issue 9's), reported as gpu-us and GB/s of
// minimum traffic, and the copy bandwidth as the ceiling. Images are
// float32, or float16 with VKMPS_BENCH_DTYPE=float16 (traffic counted at 2
// bytes a value).
func BenchmarkGPU(b *testing.B) {
	dev := vktest.Open(b)
	if !dev.Limits().TimestampsSupported {
		b.Skip("no timestamps")
	}
	format := benchFormat(b, dev)
	newIm := func(d padding.Descriptor, data []float32) *ops.Image {
		if format == ops.Float16 {
			return newHalfImage(b, dev, d, data)
		}
		return newImage(b, dev, d, data)
	}
	esize := float64(format.Size())
	ctx := context.Background()
	r := rand.New(rand.NewSource(1))
	b.Run("copy", func(b *testing.B) {
		size := uint64(256 << 20)
		if dev.Limits().UnifiedMemory {
			size = 32 << 20
		}
		size = min(size, dev.Limits().MaxStorageBufferRange)
		a, err := dev.NewBuffer(size, "copy a")
		require.NoError(b, err)
		defer a.Close()
		c, err := dev.NewBuffer(size, "copy b")
		require.NoError(b, err)
		defer c.Close()
		p, err := dev.Pipeline(spirv.Copy, 256)
		require.NoError(b, err)
		push := make([]byte, 12)
		binary.LittleEndian.PutUint32(push, uint32(size/16))
		groups := uint32(min(size/16/256, uint64(dev.Limits().MaxComputeWorkGroupCount[0])))
		for i := 0; i < b.N; i++ {
			d := gpuTime(b, dev, 10, 5, func(cb *vk.CommandBuffer) error {
				return cb.Dispatch(p, []vk.BufferRange{a.Whole(), c.Whole()}, push, [3]uint32{groups, 1, 1})
			})
			b.ReportMetric(float64(d.Microseconds()), "gpu-us")
			b.ReportMetric(float64(2*size)/d.Seconds()/1e9, "GB/s")
		}
	})
	for _, sh := range benchShapes() {
		srcD := padding.Descriptor{N: sh.n, C: sh.c, H: sh.h, W: sh.w}
		src := newIm(srcD, randomData(r, sh.n*sh.c*sh.h*sh.w))
		for _, kind := range kinds {
			g := ops.Geometry{KernelWidth: sh.k, KernelHeight: sh.k, StrideX: sh.s, StrideY: sh.s, DilationX: 1, DilationY: 1}
			if kind == ops.KindDilatedMax {
				g.DilationX, g.DilationY = 2, 2
			}
			if kind == ops.KindL2Norm && sh.p > 0 {
				continue // PyTorch's lp_pool2d has no padding; the baseline runs it unpadded
			}
			pad := sh.p
			if kind == ops.KindL2Norm {
				pad = 0
			}
			name := fmt.Sprintf("%s/%dx%dx%dx%d-k%ds%dp%d", kind, sh.n, sh.c, sh.h, sh.w, sh.k, sh.s, pad)
			if format != ops.Float32 {
				name += "-" + format.String()
			}
			k, err := ops.NewPooling(dev, kind, g)
			require.NoError(b, err)
			k.Properties().Padding = padding.Explicit(padding.Pads{Top: pad, Left: pad, Bottom: pad, Right: pad}, false, true)
			var dst *ops.Image
			var state *ops.PoolingGradientState
			require.NoError(b, run(b, dev, func(cb *vk.CommandBuffer) error {
				var err error
				dst, state, err = k.EncodeNewWithState(cb, src)
				return err
			}))
			inB, outB := float64(sh.n*sh.c*sh.h*sh.w)*esize, float64(dst.Len())*esize
			b.Run(name+"/fwd", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					d := gpuTime(b, dev, 10, 7, func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) })
					b.ReportMetric(float64(d.Nanoseconds())/1e3, "gpu-us")
					b.ReportMetric((inB+outB)/d.Seconds()/1e9, "GB/s")
				}
			})
			gk, err := ops.NewPoolingGradient(dev, kind, g)
			require.NoError(b, err)
			dy := newIm(dst.Descriptor().Descriptor(), randomData(r, dst.Len()))
			dx := newIm(srcD, nil)
			require.NoError(b, run(b, dev, func(cb *vk.CommandBuffer) error { // configures gk from the state
				out, err := gk.EncodeNew(cb, dy, src, state)
				if err == nil {
					out.Close()
				}
				return err
			}))
			b.Run(name+"/bwd", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					d := gpuTime(b, dev, 10, 7, func(cb *vk.CommandBuffer) error { return gk.Encode(cb, dy, src, state, dx) })
					b.ReportMetric(float64(d.Nanoseconds())/1e3, "gpu-us")
					b.ReportMetric((2*inB+outB)/d.Seconds()/1e9, "GB/s")
				}
			})
			dst.Close()
			state.Close()
		}
		_ = ctx
	}
}

// benchPasses reports whether $VKMPS_BENCH_PASSES=1 asks the benchmarks
// that support it for a dispatch profile (logProfile) of each pass.
func benchPasses() bool { return os.Getenv("VKMPS_BENCH_PASSES") == "1" }

// logProfile runs encode once under a dispatch profile (vk.
// WithDispatchProfile: a barrier before each dispatch, a timestamp after
// it) and logs each command's GPU time, shader, workgroups and
// specialization constants under label: where a kernel's time goes.
func logProfile(b *testing.B, dev *vk.Device, label string, encode func(cb *vk.CommandBuffer) error) {
	cb, err := dev.NewCommandBuffer(vk.WithDispatchProfile(256))
	require.NoError(b, err)
	defer cb.Close()
	require.NoError(b, encode(cb))
	require.NoError(b, cb.Commit())
	require.NoError(b, cb.Wait(context.Background()))
	prof, err := cb.DispatchProfile()
	require.NoError(b, err)
	total, err := cb.GPUTime()
	require.NoError(b, err)
	var s strings.Builder
	fmt.Fprintf(&s, "profile %s: %d commands, %.1f us", label, len(prof), float64(total.Nanoseconds())/1e3)
	for _, d := range prof {
		fmt.Fprintf(&s, "\n  %8.1f us  %s %dx%dx%d spec %v", float64(d.Time.Nanoseconds())/1e3, d.Shader, d.Groups[0], d.Groups[1], d.Groups[2], d.Spec)
	}
	b.Log(s.String())
}
