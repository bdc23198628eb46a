package ops_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

var kinds = []ops.PoolingKind{ops.KindMax, ops.KindAverage, ops.KindL2Norm, ops.KindDilatedMax}

// randomCase draws a forward configuration: kernel 1-7 or 15, stride 1-4,
// dilation 1-3 (dilated max), both edge modes, zero pads, ExcludeEdges,
// sources from 1x1 to 37x29, 1-17 channels, batch 1-3, offsets and clips.
func randomCase(r *rand.Rand, kind ops.PoolingKind) poolCase {
	k := func() int {
		if r.Intn(8) == 0 {
			return 15
		}
		return 1 + r.Intn(7)
	}
	g := ops.Geometry{KernelWidth: k(), KernelHeight: k(), StrideX: 1 + r.Intn(4), StrideY: 1 + r.Intn(4), DilationX: 1, DilationY: 1}
	if kind == ops.KindDilatedMax {
		g.DilationX, g.DilationY = 1+r.Intn(3), 1+r.Intn(3)
	}
	c := poolCase{kind: kind, geom: g, edge: ops.EdgeMode(r.Intn(2))}
	c.src = padding.Descriptor{N: 1 + r.Intn(3), C: 1 + r.Intn(17), H: 1 + r.Intn(29), W: 1 + r.Intn(37)}
	keX, keY := (g.KernelWidth-1)*g.DilationX+1, (g.KernelHeight-1)*g.DilationY+1
	c.dst = padding.Descriptor{N: c.src.N, C: c.src.C, H: 1 + (c.src.H+keY)/g.StrideY, W: 1 + (c.src.W+keX)/g.StrideX}
	c.off = ops.Offset{X: r.Intn(keX+2) - 1, Y: r.Intn(keY+2) - 1}
	if kind == ops.KindAverage {
		if c.edge == ops.EdgeClamp && r.Intn(2) == 0 {
			c.zeroPad = padding.Pads{Top: r.Intn(3), Left: r.Intn(3), Bottom: r.Intn(3), Right: r.Intn(3)}
		}
		if c.edge == ops.EdgeZero && r.Intn(2) == 0 {
			c.exclude = true
			c.edgePads = padding.Pads{Top: r.Intn(3), Left: r.Intn(3), Bottom: r.Intn(3), Right: r.Intn(3)}
		}
	}
	switch r.Intn(4) {
	case 0: // a clip rectangle inside the destination
		c.clip = ops.Region{X: r.Intn(c.dst.W), Y: r.Intn(c.dst.H), Width: r.Intn(4), Height: r.Intn(4)}
	case 1: // a batch window
		if c.src.N > 1 {
			c.off.Z = 1
			c.clip = ops.Region{Z: r.Intn(2), Depth: 1}
		}
	}
	return c
}

func TestPoolingMatchesReference(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(42))
	for _, kind := range kinds {
		t.Run(kind.String(), func(t *testing.T) {
			for i := 0; i < 60; i++ {
				c := randomCase(r, kind)
				checkForward(t, dev, c, randomData(r, c.src.N*c.src.C*c.src.H*c.src.W))
			}
		})
	}
}

// Every kernel size 1-7 and 15 against every stride 1-4 (and dilation 1-3
// for dilated max), both edge modes, on one odd-sized image.
func TestPoolingGeometrySweep(t *testing.T) {
	heavy(t)
	if testing.Short() {
		t.Skip("sweep")
	}
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(7))
	src := padding.Descriptor{N: 2, C: 3, H: 23, W: 19}
	input := randomData(r, src.N*src.C*src.H*src.W)
	for _, kind := range kinds {
		dils := []int{1}
		if kind == ops.KindDilatedMax {
			dils = []int{1, 2, 3}
		}
		for _, k := range []int{1, 2, 3, 4, 5, 6, 7, 15} {
			for s := 1; s <= 4; s++ {
				for _, d := range dils {
					for _, edge := range []ops.EdgeMode{ops.EdgeZero, ops.EdgeClamp} {
						g := ops.Geometry{KernelWidth: k, KernelHeight: (k+1)%8 + 1, StrideX: s, StrideY: 5 - s, DilationX: d, DilationY: d}
						keX, keY := (g.KernelWidth-1)*d+1, (g.KernelHeight-1)*d+1
						c := poolCase{kind: kind, geom: g, edge: edge, src: src,
							dst: padding.Descriptor{N: 2, C: 3, H: (src.H+keY)/g.StrideY + 1, W: (src.W+keX)/g.StrideX + 1},
							off: ops.Offset{X: keX/2 - 1, Y: keY / 2}}
						checkForward(t, dev, c, input)
					}
				}
			}
		}
	}
}

// Hand-worked: kernel 2, dilation 3 reads -2 and +1 around the centre.
func TestDilatedEvenWindowLeansTopLeft(t *testing.T) {
	dev := vktest.Open(t)
	k, err := ops.NewDilatedPoolingMax(dev, 2, 1, 3, 1, 1, 1)
	require.NoError(t, err)
	k.EdgeMode = ops.EdgeClamp
	row := []float32{10, 20, 30, 40, 50, 60, 70}
	src := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 7}, row)
	dst := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 7}, filled(7, 0))
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) }))
	got, err := dst.Read(context.Background())
	require.NoError(t, err)
	// Centre x reads x-2 and x+1; clamped windows skip outside taps, so the
	// last centre (6) reads only pixel 4.
	assert.Equal(t, []float32{20, 30, 40, 50, 60, 70, 50}, got)
}

func TestMaxPropagatesNaN(t *testing.T) {
	dev := vktest.Open(t)
	in := []float32{1, 2, 3, float32(math.NaN()), 5, 6, 7, 8, 9}
	for _, edge := range []ops.EdgeMode{ops.EdgeZero, ops.EdgeClamp} {
		c := poolCase{kind: ops.KindMax, geom: ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1},
			edge: edge, src: padding.Descriptor{N: 1, C: 1, H: 3, W: 3}, dst: padding.Descriptor{N: 1, C: 1, H: 3, W: 3}, off: ops.Offset{X: 1, Y: 1}}
		checkForward(t, dev, c, in)
	}
	// And directly: windows containing the NaN give NaN, others do not.
	k, err := ops.NewPoolingMax(dev, 2, 2, 1, 1)
	require.NoError(t, err)
	k.Offset = ops.Offset{X: 1, Y: 1}
	src := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 3, W: 3}, in)
	dst := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 2, W: 2}, filled(4, 0))
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) }))
	got, err := dst.Read(context.Background())
	require.NoError(t, err)
	assert.True(t, math.IsNaN(float64(got[0])))
	assert.False(t, math.IsNaN(float64(got[1])))
	assert.True(t, math.IsNaN(float64(got[2])))
	assert.Equal(t, float32(9), got[3])
}

// policies lists every valid padding method and the presets.
func policies() []padding.Policy {
	var ps []padding.Policy
	for _, size := range []padding.Method{padding.SizeValidOnly, padding.SizeSame, padding.SizeFull} {
		for _, align := range []padding.Method{padding.AlignCentered, padding.AlignTopLeft, padding.AlignBottomRight} {
			for _, rem := range []padding.Method{padding.AddRemainderToTopLeft, padding.AddRemainderToTopRight, padding.AddRemainderToBottomLeft, padding.AddRemainderToBottomRight} {
				ps = append(ps, padding.WithMethod(size|align|rem))
			}
		}
		ps = append(ps, padding.WithMethod(size|padding.ExcludeEdges))
	}
	return append(ps, padding.TensorFlowSame(), padding.TensorFlowValid(), padding.TensorFlowAveragePooling(),
		padding.TensorFlowAveragePoolingValidOnly(), padding.Caffe(1, 2), padding.Caffe(0, 0),
		padding.Explicit(padding.Pads{Top: 1, Left: 0, Bottom: 2, Right: 1}, true, true),
		padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, false, false))
}

// EncodeNew through every method and preset: the destination has the
// policy's size, and its values are the reference's for the settings the
// policy put on the kernel.
func TestPoolingEveryPaddingPolicy(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(3))
	src := padding.Descriptor{N: 2, C: 5, H: 13, W: 11}
	input := randomData(r, src.N*src.C*src.H*src.W)
	for _, kind := range kinds {
		for _, pol := range policies() {
			g := ops.Geometry{KernelWidth: 3, KernelHeight: 2, StrideX: 2, StrideY: 3, DilationX: 1, DilationY: 1}
			if kind == ops.KindDilatedMax {
				g.DilationX, g.DilationY = 2, 1
			}
			name := fmt.Sprintf("%v/%s", kind, pol.Label())
			f, k, err := newForward(dev, kind, g)
			require.NoError(t, err)
			k.Padding = pol
			im := newImage(t, dev, src, input)
			var dst *ops.Image
			err = run(t, dev, func(cb *vk.CommandBuffer) error {
				var err error
				dst, err = f.EncodeNew(cb, im)
				return err
			})
			require.NoError(t, err, name)
			defer dst.Close()
			res, err := padding.Resolve(pol, []padding.Descriptor{src}, nil, padding.Kernel{KernelW: g.KernelWidth, KernelH: g.KernelHeight,
				StrideX: g.StrideX, StrideY: g.StrideY, DilationX: g.DilationX, DilationY: g.DilationY})
			require.NoError(t, err, name)
			require.Equal(t, res.Dest, dst.Descriptor().Descriptor(), name)
			assert.Equal(t, ops.Offset{X: res.OffsetX, Y: res.OffsetY}, k.Offset, name)
			c := poolCase{kind: kind, geom: g, edge: k.EdgeMode, off: k.Offset, src: src, dst: res.Dest}
			if a, ok := f.(*ops.PoolingAverage); ok {
				c.zeroPad, c.exclude, c.edgePads = a.ZeroPad, a.ExcludeEdges, a.EdgePads
			}
			got, err := dst.Read(context.Background())
			require.NoError(t, err)
			in, _ := ref.TensorOf(src.N, src.C, src.H, src.W, input)
			want := ref.NewTensor[float32](res.Dest.N, res.Dest.C, res.Dest.H, res.Dest.W)
			require.NoError(t, ref.Pool(c.refGeometry(), in, &want), name)
			require.NoError(t, ref.Compare(refKind(kind), got, want.Data), name)
		}
	}
}

func loadTorch(t *testing.T) []ref.TorchCase {
	cases, err := ref.LoadTorchCases(filepath.Join("testdata", "torch", "pool_cases.json"))
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	return cases
}

// torchKernel makes the vkmps kernel for a PyTorch case, configured through
// the explicit-pads policy.
func torchKernel(t *testing.T, dev *vk.Device, c ref.TorchCase) (ops.Pooling, *ops.Kernel) {
	kind := map[string]ops.PoolingKind{"max": ops.KindMax, "avg": ops.KindAverage, "l2": ops.KindL2Norm}[c.Op]
	if kind == ops.KindMax && (c.Dilation[0] > 1 || c.Dilation[1] > 1) {
		kind = ops.KindDilatedMax
	}
	g := ops.Geometry{KernelWidth: c.Kernel[1], KernelHeight: c.Kernel[0], StrideX: c.Stride[1], StrideY: c.Stride[0],
		DilationX: c.Dilation[1], DilationY: c.Dilation[0]}
	f, k, err := newForward(dev, kind, g)
	require.NoError(t, err, c.Name)
	p := c.Padding
	k.Padding = padding.Explicit(padding.Pads{Top: p[0], Left: p[1], Bottom: p[0], Right: p[1]}, c.CeilMode, c.CountIncludePad)
	return f, k
}

// PyTorch's max_pool2d (dilation, ceil_mode), avg_pool2d (count_include_pad
// both ways, ceil_mode) and lp_pool2d(2), made on a GPU by
// testdata/torch/gen_pool_cases.py, through the explicit-pads policy.
func TestPoolingMatchesPyTorch(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	for _, c := range loadTorch(t) {
		f, _ := torchKernel(t, dev, c)
		in, out, _, _ := c.Tensors()
		src := newImage(t, dev, in.Shape(), in.Data)
		var dst *ops.Image
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			dst, err = f.EncodeNew(cb, src)
			return err
		}), c.Name)
		require.Equal(t, out.Shape(), dst.Descriptor().Descriptor(), c.Name)
		got, err := dst.Read(context.Background())
		require.NoError(t, err)
		dst.Close()
		// PyTorch sums in float32 as vkmps does, so the sums agree to
		// float32 rounding; ref.SumTolerance states it.
		require.NoError(t, ref.Compare(c.Geometry().Kind, got, out.Data), c.Name)
	}
}

// Channel views: pooling into two views of one image concatenates without a
// copy, and the source channel offset and count select channels.
func TestChannelOffsetsAndViews(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(5))
	src := padding.Descriptor{N: 2, C: 7, H: 6, W: 5}
	input := randomData(r, src.N*src.C*src.H*src.W)
	im := newImage(t, dev, src, input)
	cat := newImage(t, dev, padding.Descriptor{N: 2, C: 9, H: 3, W: 3}, filled(2*9*9, poisonValue))
	left, err := cat.ChannelView(0, 4)
	require.NoError(t, err)
	right, err := cat.ChannelView(4, 5)
	require.NoError(t, err)
	k, err := ops.NewPoolingMax(dev, 2, 2, 2, 2)
	require.NoError(t, err)
	k.Offset = ops.Offset{X: 1, Y: 1}
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		// Source channels 3..6 into the left view, then 0..4 into the right.
		k.SourceFeatureChannelOffset, k.SourceFeatureChannelMaxCount = 3, 4
		if err := k.Encode(cb, im, left); err != nil {
			return err
		}
		k.SourceFeatureChannelOffset, k.SourceFeatureChannelMaxCount = 0, 5
		return k.Encode(cb, im, right)
	}))
	got, err := cat.Read(ctx)
	require.NoError(t, err)
	in, _ := ref.TensorOf(src.N, src.C, src.H, src.W, input)
	full := ref.NewTensor[float32](2, 7, 3, 3)
	require.NoError(t, ref.Pool(ref.Geometry{Kind: ref.Max, KernelW: 2, KernelH: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1, OffsetX: 1, OffsetY: 1}, in, &full))
	for n := 0; n < 2; n++ {
		for c := 0; c < 9; c++ {
			from := c + 3
			if c >= 4 {
				from = c - 4
			}
			for y := 0; y < 3; y++ {
				for x := 0; x < 3; x++ {
					assert.Equal(t, full.At(n, from, y, x), got[((n*9+c)*3+y)*3+x], "n%d c%d", n, c)
				}
			}
		}
	}
	// Views read back their own channels, and write only them.
	lv, err := left.Read(ctx)
	require.NoError(t, err)
	assert.Len(t, lv, 2*4*9)
	require.NoError(t, left.Write(ctx, filled(2*4*9, 1)))
	got2, err := cat.Read(ctx)
	require.NoError(t, err)
	for n := 0; n < 2; n++ {
		for i := 0; i < 9*9; i++ {
			v := got2[n*81+i]
			if i < 36 {
				assert.Equal(t, float32(1), v)
			} else {
				assert.Equal(t, got[n*81+i], v)
			}
		}
	}
	// A destination channel offset writes from that channel on.
	k.SourceFeatureChannelOffset, k.SourceFeatureChannelMaxCount, k.DestinationFeatureChannelOffset = 0, 2, 7
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return k.Encode(cb, im, cat) }))
	got3, err := cat.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, full.At(1, 1, 2, 2), got3[((1*9+8)*3+2)*3+2])
}

// Tensors larger than the storage-buffer range are split into dispatches
// that each fit; the result is unchanged. The range is capped to 64 KiB
// here so that small tensors need several parts of every kind.
func TestLargeTensorsAreSplit(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, tc := range []struct {
		name string
		src  padding.Descriptor
	}{
		{"whole", padding.Descriptor{N: 1, C: 2, H: 20, W: 20}},                  // fits in one part
		{"batch groups", padding.Descriptor{N: 9, C: 3, H: 40, W: 37}},           // 17.8 KB per batch image
		{"channel groups", padding.Descriptor{N: 2, C: 13, H: 61, W: 57}},        // 13.9 KB per plane
		{"plane over the range", padding.Descriptor{N: 1, C: 1, H: 130, W: 130}}, // 67.6 KB plane: bands of rows
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := vktest.Open(t, vk.Options{MaxStorageBufferRange: 64 << 10})
			for _, kind := range []ops.PoolingKind{ops.KindMax, ops.KindAverage} {
				g := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
				c := poolCase{kind: kind, geom: g, src: tc.src, edge: ops.EdgeClamp,
					dst: padding.Descriptor{N: tc.src.N, C: tc.src.C, H: (tc.src.H + 1) / 2, W: (tc.src.W + 1) / 2}}
				checkForward(t, dev, c, randomData(r, tc.src.N*tc.src.C*tc.src.H*tc.src.W))
			}
		})
	}
}

// A tensor over lavapipe's real 128 MiB range.
func TestTensorOverStorageRange(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 300 MB")
	}
	dev := vktest.Open(t)
	lim := dev.Limits().MaxStorageBufferRange
	if lim > 256<<20 {
		t.Skipf("device range %d bytes: too large to exceed here", lim)
	}
	src := padding.Descriptor{N: 1, C: int(lim/(4*1024*1024)) + 3, H: 1024, W: 1024}
	r := rand.New(rand.NewSource(1))
	c := poolCase{kind: ops.KindMax, geom: ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1},
		src: src, dst: padding.Descriptor{N: 1, C: src.C, H: 512, W: 512}, off: ops.Offset{X: 1, Y: 1}}
	checkForward(t, dev, c, randomData(r, src.C*1024*1024))
}

func TestForwardBadInput(t *testing.T) {
	dev := vktest.Open(t)
	other := vktest.Open(t)
	k, err := ops.NewPoolingMax(dev, 2, 2, 2, 2)
	require.NoError(t, err)
	src := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 8, W: 8}, nil)
	dst := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 4, W: 4}, nil)
	small := newImage(t, dev, padding.Descriptor{N: 2, C: 2, H: 4, W: 4}, nil)
	oneBatch := newImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 4, W: 4}, nil)
	foreign := newImage(t, other, padding.Descriptor{N: 2, C: 3, H: 4, W: 4}, nil)
	closed := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 4, W: 4}, nil)
	require.NoError(t, closed.Close())
	view, err := src.ChannelView(1, 2)
	require.NoError(t, err)

	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	for _, tc := range []struct {
		name     string
		setup    func()
		src, dst *ops.Image
		want     error
		msg      string
	}{
		{"destination too few channels", nil, src, small, ops.ErrChannelRange, "do not fit"},
		{"source is destination", nil, src, src, ops.ErrAlias, "share storage"},
		{"view of the source", nil, src, view, ops.ErrAlias, "share storage"},
		{"closed destination", nil, src, closed, ops.ErrClosed, "destination"},
		{"nil source", nil, nil, dst, ops.ErrInvalidImage, "source"},
		{"other device", nil, src, foreign, ops.ErrDevice, "another device"},
		{"source channel offset", func() { k.SourceFeatureChannelOffset = 3 }, src, dst, ops.ErrChannelRange, "source channel offset 3"},
		{"destination channel offset", func() { k.DestinationFeatureChannelOffset = 1 }, src, dst, ops.ErrChannelRange, "do not fit"},
		{"negative max count", func() { k.SourceFeatureChannelMaxCount = -1 }, src, dst, ops.ErrChannelRange, "max count"},
		{"batch beyond source", func() { k.Offset.Z = 1 }, src, dst, ops.ErrShape, "batch images"},
		{"clip outside", func() { k.ClipRect = ops.Region{X: 4} }, src, dst, ops.ErrGeometry, "clip rectangle"},
		{"clip negative", func() { k.ClipRect = ops.Region{Width: -1} }, src, dst, ops.ErrGeometry, "negative"},
		{"clip batch outside", func() { k.ClipRect = ops.Region{Z: 2} }, src, dst, ops.ErrShape, "batch image 2"},
		{"bad edge mode", func() { k.EdgeMode = 7 }, src, dst, ops.ErrGeometry, "edge mode"},
	} {
		*k = *mustMax(t, dev)
		if tc.setup != nil {
			tc.setup()
		}
		err := k.Encode(cb, tc.src, tc.dst)
		require.ErrorIs(t, err, tc.want, tc.name)
		assert.Contains(t, err.Error(), tc.msg, tc.name)
		assert.Contains(t, err.Error(), "PoolingMax", tc.name)
	}
	// A destination with fewer batch images is fine (the clip says which).
	*k = *mustMax(t, dev)
	require.NoError(t, k.Encode(cb, src, oneBatch))
	require.NoError(t, cb.Commit())
	require.NoError(t, cb.Wait(context.Background()))

	// Geometry and device limits at construction.
	for _, g := range [][4]int{{0, 2, 1, 1}, {2, 2, 0, 1}, {2, -1, 1, 1}} {
		_, err := ops.NewPoolingMax(dev, g[0], g[1], g[2], g[3])
		assert.ErrorIs(t, err, ops.ErrGeometry, "%v", g)
	}
	_, err = ops.NewDilatedPoolingMax(dev, 3, 3, 0, 1, 1, 1)
	assert.ErrorIs(t, err, ops.ErrGeometry)
	side := ops.MaxWindowExtent(dev.Limits())
	_, err = ops.NewPoolingAverage(dev, side, side, 1, 1)
	require.NoError(t, err, "the largest window, on every device")
	_, err = ops.NewPoolingAverage(dev, side+1, side+1, 1, 1)
	require.ErrorIs(t, err, ops.ErrGeometry)
	_, err = ops.NewDilatedPoolingMax(dev, 9, 9, side/8+1, side/8+1, 1, 1)
	require.ErrorIs(t, err, ops.ErrGeometry, "a dilated window's extent counts")
	assert.Contains(t, err.Error(), "window extent")
	_, err = ops.NewPoolingMax(nil, 2, 2, 1, 1)
	assert.ErrorIs(t, err, ops.ErrDevice)
	_, err = ops.NewImage(dev, ops.ImageDescriptor{N: 1, C: 0, H: 2, W: 2})
	assert.ErrorIs(t, err, ops.ErrInvalidImage)
	a, err := ops.NewPoolingAverage(dev, 2, 2, 1, 1)
	require.NoError(t, err)
	a.ZeroPad.Left = -1
	assert.ErrorIs(t, a.Encode(cb, src, dst), ops.ErrGeometry)
}

func mustMax(t *testing.T, dev *vk.Device) *ops.PoolingMax {
	k, err := ops.NewPoolingMax(dev, 2, 2, 2, 2)
	require.NoError(t, err)
	return k
}

func TestImageBadInput(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	im := newImage(t, dev, padding.Descriptor{N: 1, C: 2, H: 3, W: 3}, nil)
	assert.ErrorIs(t, im.Write(ctx, make([]float32, 17)), ops.ErrShape)
	assert.ErrorIs(t, im.ReadInto(ctx, make([]float32, 19)), ops.ErrShape)
	_, err := im.ChannelView(1, 2)
	assert.ErrorIs(t, err, ops.ErrChannelRange)
	_, err = im.ChannelView(-1, 1)
	assert.ErrorIs(t, err, ops.ErrChannelRange)
	v, err := im.ChannelView(1, 1)
	require.NoError(t, err)
	require.NoError(t, im.Close())
	require.NoError(t, im.Close())
	_, err = v.Read(ctx)
	assert.ErrorIs(t, err, ops.ErrClosed, "a view of a closed image")
	assert.ErrorIs(t, im.Write(ctx, make([]float32, 18)), ops.ErrClosed)
	for _, d := range []ops.ImageDescriptor{{N: 0, C: 1, H: 1, W: 1}, {N: 1, C: 1, H: -2, W: 1}, {N: 1 << 40, C: 1 << 20, H: 1 << 20, W: 1}} {
		_, err := ops.NewImage(dev, d)
		assert.ErrorIs(t, err, ops.ErrInvalidImage, "%+v", d)
	}
}

func TestPoolingKindIsMax(t *testing.T) {
	for k, want := range map[ops.PoolingKind]bool{ops.KindMax: true, ops.KindDilatedMax: true, ops.KindAverage: false, ops.KindL2Norm: false} {
		assert.Equal(t, want, k.IsMax(), k.String())
	}
}
