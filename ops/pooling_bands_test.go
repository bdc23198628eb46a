package ops_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// bandsCases are geometries over planes larger than an 8 KiB storage
// range (a 67x71 plane is 19 KB in float32, 9.5 KB in float16): direct, tiled and global
// passes, strides and dilations, even windows, offsets that put windows
// wholly in the padding above and below, and clip rectangles.
func bandsCases(r *rand.Rand) []poolCase {
	src := padding.Descriptor{N: 2, C: 2, H: 67, W: 71}
	geoms := []ops.Geometry{
		{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1},
		{KernelWidth: 5, KernelHeight: 4, StrideX: 1, StrideY: 3, DilationX: 1, DilationY: 1},
		{KernelWidth: 3, KernelHeight: 3, StrideX: 1, StrideY: 1, DilationX: 2, DilationY: 3},
		{KernelWidth: 9, KernelHeight: 11, StrideX: 2, StrideY: 1, DilationX: 1, DilationY: 1}, // tiled
	}
	var out []poolCase
	for i, g := range geoms {
		for _, kind := range kinds {
			if kind == ops.KindDilatedMax && g.DilationX == 1 || kind != ops.KindDilatedMax && g.DilationX != 1 {
				continue
			}
			keX, keY := (g.KernelWidth-1)*g.DilationX+1, (g.KernelHeight-1)*g.DilationY+1
			c := poolCase{kind: kind, geom: g, edge: ops.EdgeMode(i % 2), src: src,
				dst: padding.Descriptor{N: 2, C: 2, H: (src.H+keY)/g.StrideY + 3, W: (src.W+keX)/g.StrideX + 1},
				off: ops.Offset{X: keX/2 - 1, Y: keY/2 - 2*keY}}
			if i%2 == 1 {
				c.clip = ops.Region{X: 1, Y: 2, Height: c.dst.H - 3}
			}
			if kind == ops.KindAverage && c.edge == ops.EdgeClamp {
				c.zeroPad = padding.Pads{Top: 1, Left: 2, Bottom: 2, Right: 1}
			}
			if kind == ops.KindAverage && c.edge == ops.EdgeZero {
				c.exclude, c.edgePads = true, padding.Pads{Top: 2, Left: 1, Bottom: 1, Right: 0}
			}
			out = append(out, c)
		}
	}
	return out
}

// TestPlanesOverStorageRangeInBands: a plane larger than the device's
// storage-buffer range (capped to 8 KiB here, as lavapipe's 128 MiB caps
// an 8192x8192 float32 plane) runs in bands of rows with their windows'
// halo, forward (with argmax recorded or not) and backward, float32 and
// float16, and gives the reference's results: exactly for max, within
// ref.SumTolerance for sums (float16: compareHalf's tolerance).
func TestPlanesOverStorageRangeInBands(t *testing.T) {
	dev := vktest.Open(t, vk.Options{MaxStorageBufferRange: 8 << 10})
	r := rand.New(rand.NewSource(22))
	half := dev.Limits().Float16Storage
	for i, c := range bandsCases(r) {
		t.Run(fmt.Sprintf("%d %v", i, c.kind), func(t *testing.T) {
			in := gradInput(r, c.kind, c.src.N*c.src.C*c.src.H*c.src.W)
			dy := randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)
			checkForward(t, dev, c, in)
			checkGradient(t, dev, c, in, dy, c.kind.IsMax() && i%2 == 0)
			if half && c.geom.KernelWidth == 3 { // float16 too, for a few
				checkForwardHalf(t, dev, c, in, c.kind.IsMax())
				checkGradientHalf(t, dev, c, in, dy, c.kind.IsMax() && i%2 == 1)
			}
		})
	}
}

// TestLargeWindows: windows whose tile does not fit the device's shared
// memory (16x16 at stride 16 on lavapipe's 32 KiB; 64x64 at stride 64 on
// every device) read their taps directly, and their gradients' unrolled
// cells would be too large, so they loop over windows: forward (argmax
// recorded or not) and backward match the reference, float32 and float16.
// Also a tiled window whose gather stays unrolled and a dilated one.
func TestLargeWindows(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(23))
	half := dev.Limits().Float16Storage
	for i, tc := range []struct {
		g   ops.Geometry
		src padding.Descriptor
	}{
		{ops.Geometry{KernelWidth: 16, KernelHeight: 16, StrideX: 16, StrideY: 16, DilationX: 1, DilationY: 1}, padding.Descriptor{N: 1, C: 3, H: 50, W: 47}},
		{ops.Geometry{KernelWidth: 64, KernelHeight: 64, StrideX: 64, StrideY: 64, DilationX: 1, DilationY: 1}, padding.Descriptor{N: 1, C: 2, H: 131, W: 70}},
		{ops.Geometry{KernelWidth: 17, KernelHeight: 24, StrideX: 9, StrideY: 5, DilationX: 1, DilationY: 1}, padding.Descriptor{N: 2, C: 1, H: 41, W: 39}},
		{ops.Geometry{KernelWidth: 9, KernelHeight: 9, StrideX: 3, StrideY: 3, DilationX: 5, DilationY: 4}, padding.Descriptor{N: 1, C: 2, H: 45, W: 50}},
		{ops.Geometry{KernelWidth: 12, KernelHeight: 12, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}, padding.Descriptor{N: 1, C: 1, H: 20, W: 21}},
	} {
		for _, kind := range kinds {
			g := tc.g
			if (kind == ops.KindDilatedMax) != (g.DilationX > 1) || i > 0 && i != 3 && kind != []ops.PoolingKind{ops.KindMax, ops.KindAverage, ops.KindL2Norm}[i%3] {
				continue // every kind at 16x16; one kind each of the others
			}
			t.Run(fmt.Sprintf("%d %v", i, kind), func(t *testing.T) {
				keX, keY := (g.KernelWidth-1)*g.DilationX+1, (g.KernelHeight-1)*g.DilationY+1
				c := poolCase{kind: kind, geom: g, edge: ops.EdgeMode(i % 2), src: tc.src,
					dst: padding.Descriptor{N: tc.src.N, C: tc.src.C, H: (tc.src.H+keY)/g.StrideY + 1, W: (tc.src.W+keX)/g.StrideX + 1},
					off: ops.Offset{X: keX/2 - 2, Y: keY/2 - 3}}
				if kind == ops.KindAverage && c.edge == ops.EdgeClamp {
					c.zeroPad = padding.Pads{Top: 2, Left: 1, Bottom: 3, Right: 2}
				}
				in := gradInput(r, kind, c.src.N*c.src.C*c.src.H*c.src.W)
				dy := randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)
				checkForward(t, dev, c, in)
				checkGradient(t, dev, c, in, dy, kind.IsMax() && i%2 == 0)
				if half && i == 0 {
					checkForwardHalf(t, dev, c, in, kind.IsMax())
					checkGradientHalf(t, dev, c, in, dy, kind.IsMax())
				}
			})
		}
	}
}

// TestPlaneOverRealStorageRange: one float32 plane just over lavapipe's
// real 128 MiB range (8192 columns x 4100 rows; the 8192x8192 is
// twice the time), pooled 2x2 forward and backward (argmax recorded) in
// bands, against the reference.
func TestPlaneOverRealStorageRange(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 0.9 GB")
	}
	dev := vktest.Open(t)
	lim := dev.Limits().MaxStorageBufferRange
	const w, h = 8192, 4100
	if lim >= w*h*4 {
		t.Skipf("device range %d bytes holds a %dx%d float32 plane", lim, h, w)
	}
	r := rand.New(rand.NewSource(24))
	src := padding.Descriptor{N: 1, C: 1, H: h, W: w}
	c := poolCase{kind: ops.KindMax, geom: ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1},
		src: src, dst: padding.Descriptor{N: 1, C: 1, H: h / 2, W: w / 2}, off: ops.Offset{X: 1, Y: 1}}
	in := randomData(r, w*h)
	checkForward(t, dev, c, in)
	checkGradient(t, dev, c, in, randomData(r, w*h/4), true)
}

// BenchmarkPoolingBands: GPU time of 2x2 max and average pooling, forward
// and backward, of one 8192x8192 float32 plane (256 MiB), on the device as
// it is and with its storage range capped to 128 MiB (lavapipe's), which
// splits the plane into bands: the cost of the bands.
//
//	go test ./ops -run XXX -bench BenchmarkPoolingBands -benchtime 1x
func BenchmarkPoolingBands(b *testing.B) {
	for _, capRange := range []uint64{0, 128 << 20} {
		dev := vktest.Open(b, vk.Options{MaxStorageBufferRange: capRange})
		if !dev.Limits().TimestampsSupported {
			b.Skip("no timestamps")
		}
		r := rand.New(rand.NewSource(1))
		const side = 8192
		srcD := padding.Descriptor{N: 1, C: 1, H: side, W: side}
		src := newImage(b, dev, srcD, randomData(r, side*side))
		for _, kind := range []ops.PoolingKind{ops.KindMax, ops.KindAverage} {
			benchPoolingPair(b, dev, fmt.Sprintf("range%dMiB/%v", dev.Limits().MaxStorageBufferRange>>20, kind), kind,
				ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}, src, r)
		}
	}
}

// BenchmarkPoolingLargeWindows: GPU time of windows that read their taps
// directly where their tile exceeds shared memory (16x16 at stride 16
// beyond 32 KiB, 64x64 at stride 64 everywhere) and of gradients that
// loop over windows (those, and 12x12 at stride 1), forward and backward.
//
//	go test ./ops -run XXX -bench BenchmarkPoolingLargeWindows -benchtime 1x
func BenchmarkPoolingLargeWindows(b *testing.B) {
	dev := vktest.Open(b)
	if !dev.Limits().TimestampsSupported {
		b.Skip("no timestamps")
	}
	r := rand.New(rand.NewSource(1))
	for _, tc := range []struct {
		k, s int
		src  padding.Descriptor
	}{
		{16, 16, padding.Descriptor{N: 8, C: 64, H: 256, W: 256}},
		{64, 64, padding.Descriptor{N: 4, C: 32, H: 512, W: 512}},
		{12, 1, padding.Descriptor{N: 8, C: 64, H: 112, W: 112}},
	} {
		src := newImage(b, dev, tc.src, randomData(r, tc.src.N*tc.src.C*tc.src.H*tc.src.W))
		for _, kind := range []ops.PoolingKind{ops.KindMax, ops.KindAverage} {
			name := fmt.Sprintf("%v/%dx%dx%dx%d-k%ds%d", kind, tc.src.N, tc.src.C, tc.src.H, tc.src.W, tc.k, tc.s)
			benchPoolingPair(b, dev, name, kind, ops.Geometry{KernelWidth: tc.k, KernelHeight: tc.k, StrideX: tc.s, StrideY: tc.s, DilationX: 1, DilationY: 1}, src, r)
		}
		src.Close()
	}
}

// benchPoolingPair times kind's forward (name/fwd) and backward (name/bwd)
// on src, padding valid.
func benchPoolingPair(b *testing.B, dev *vk.Device, name string, kind ops.PoolingKind, g ops.Geometry, src *ops.Image, r *rand.Rand) {
	k, err := ops.NewPooling(dev, kind, g)
	require.NoError(b, err)
	k.Properties().Padding = padding.WithMethod(padding.Valid)
	var dst *ops.Image
	var state *ops.PoolingGradientState
	require.NoError(b, run(b, dev, func(cb *vk.CommandBuffer) error {
		var err error
		dst, state, err = k.EncodeNewWithState(cb, src)
		return err
	}))
	defer dst.Close()
	defer state.Close()
	inB, outB := float64(src.Len())*4, float64(dst.Len())*4
	b.Run(name+"/fwd", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			d := gpuTime(b, dev, 3, 5, func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) })
			b.ReportMetric(float64(d.Nanoseconds())/1e3, "gpu-us")
			b.ReportMetric((inB+outB)/d.Seconds()/1e9, "GB/s")
		}
	})
	gk, err := ops.NewPoolingGradient(dev, kind, g)
	require.NoError(b, err)
	dy := newImage(b, dev, dst.Descriptor().Descriptor(), randomData(r, dst.Len()))
	defer dy.Close()
	dx := newImage(b, dev, src.Descriptor().Descriptor(), nil)
	defer dx.Close()
	require.NoError(b, run(b, dev, func(cb *vk.CommandBuffer) error { // configures gk from the state
		out, err := gk.EncodeNew(cb, dy, src, state)
		if err == nil {
			out.Close()
		}
		return err
	}))
	b.Run(name+"/bwd", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			d := gpuTime(b, dev, 3, 5, func(cb *vk.CommandBuffer) error { return gk.Encode(cb, dy, src, state, dx) })
			b.ReportMetric(float64(d.Nanoseconds())/1e3, "gpu-us")
			b.ReportMetric((2*inB+outB)/d.Seconds()/1e9, "GB/s")
		}
	})
}
