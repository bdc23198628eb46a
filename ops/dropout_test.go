package ops_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Dropout's tolerances: none. The GPU mask equals ref.Dropout's bit for
// bit, and float32 results equal ref.DropoutForward/DropoutGradient (one
// float32 product per kept element, +0 where dropped). Float16 results:
// the same float32 product rounded to half, within one half ulp
// (compareHalf's rule: the device may round to nearest or toward zero);
// dropped elements exactly 0.

// dropCase is one dropout configuration of the GPU tests.
type dropCase struct {
	d       ops.DropoutDescriptor
	shape   padding.Descriptor
	srcView int // > 0: channel views at this channel of wider images
	format  ops.Format
}

func (c dropCase) String() string {
	return fmt.Sprintf("keep %v seed %#x stride %v %v views %d %v", c.d.KeepProbability, c.d.Seed, c.d.MaskStride, c.shape, c.srcView, c.format)
}

// ref returns the reference dropout of c for draw.
func (c dropCase) ref(draw uint32) ref.Dropout {
	s := c.d.MaskStride
	return ref.Dropout{KeepProbability: c.d.KeepProbability, Seed: c.d.Seed, Draw: draw, StrideX: s.X, StrideY: s.Y, StrideC: s.FeatureChannel}
}

// dropResult is what one forward and gradient execution left.
type dropResult struct {
	y, dx []float32
	mask  []bool
	draw  uint32
}

// dropRun makes c's kernels and images and returns a function that runs
// the forward (into a state) and the gradient in one command buffer,
// committed again on every call (a graph's replay).
func dropRun(t *testing.T, dev *vk.Device, c dropCase, x, dy []float32) (*ops.Dropout, func() dropResult) {
	t.Helper()
	ctx := context.Background()
	k, err := ops.NewDropout(dev, c.d)
	require.NoError(t, err)
	t.Cleanup(func() { k.Close() })
	g, err := ops.NewDropoutGradient(dev, c.d)
	require.NoError(t, err)
	st, err := k.NewGradientState(ops.ImageDescriptor{N: c.shape.N, C: c.shape.C, H: c.shape.H, W: c.shape.W, Format: c.format})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	n := len(x)
	src := upImage(t, dev, c.shape, c.format, c.srcView, x)
	dst := upImage(t, dev, c.shape, c.format, c.srcView+1, filled(n, poisonValue))
	dyIm := upImage(t, dev, c.shape, c.format, 0, dy)
	dxIm := upImage(t, dev, c.shape, c.format, c.srcView, filled(n, poisonValue))
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	t.Cleanup(func() { cb.Close() })
	require.NoError(t, k.EncodeToState(cb, src, st, dst), c)
	require.NoError(t, g.Encode(cb, dyIm, st, dxIm), c)
	return k, func() dropResult {
		require.NoError(t, cb.Commit())
		require.NoError(t, cb.Wait(ctx))
		var r dropResult
		var err error
		r.y, err = dst.Read(ctx)
		require.NoError(t, err)
		r.dx, err = dxIm.Read(ctx)
		require.NoError(t, err)
		r.mask, err = st.ReadMask(ctx)
		require.NoError(t, err)
		r.draw, err = st.Draw(ctx)
		require.NoError(t, err)
		return r
	}
}

// dropCheck compares a result with the reference of its draw.
func dropCheck(t *testing.T, c dropCase, x, dy []float32, r dropResult) {
	t.Helper()
	rd := c.ref(r.draw)
	want := rd.Mask(c.shape)
	require.Equal(t, want, r.mask, "%v draw %d: mask", c, r.draw)
	xt, err := ref.TensorOf(c.shape.N, c.shape.C, c.shape.H, c.shape.W, x)
	require.NoError(t, err)
	y, err := ref.DropoutForward(rd, want, xt)
	require.NoError(t, err)
	dyt, err := ref.TensorOf(c.shape.N, c.shape.C, c.shape.H, c.shape.W, dy)
	require.NoError(t, err)
	dx, err := ref.DropoutGradient(rd, want, dyt)
	require.NoError(t, err)
	if c.format == ops.Float16 {
		require.NoError(t, compareHalf(ref.Average, r.y, y.Data, func(int) float64 { return 0 }), "%v forward", c)
		require.NoError(t, compareHalf(ref.Average, r.dx, dx.Data, func(int) float64 { return 0 }), "%v gradient", c)
		for i, v := range y.Data {
			if v == 0 {
				require.Zero(t, r.y[i], "%v: a dropped element", c)
			}
		}
		return
	}
	require.Equal(t, y.Data, r.y, "%v draw %d: forward", c, r.draw)
	require.Equal(t, dx.Data, r.dx, "%v draw %d: gradient", c, r.draw)
}

// GPU against the reference, bit for bit: every combination of mask
// strides, odd sizes and channel counts, rows of 1 to 70 columns (whole
// and partial 32-column groups, vector and scalar paths), channel views,
// float16.
func TestDropoutMatchesReference(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(26))
	half := dev.Limits().Float16Storage
	widths := []int{1, 3, 4, 7, 31, 32, 33, 40, 64, 70}
	for i := 0; i < 24; i++ {
		s := i % 8
		c := dropCase{
			d: ops.DropoutDescriptor{KeepProbability: []float32{0.1, 0.5, 0.8, 0.3}[i%4], Seed: r.Uint64(),
				MaskStride: ops.MaskStride{X: s & 1, Y: s >> 1 & 1, FeatureChannel: s >> 2 & 1}},
			shape: padding.Descriptor{N: 1 + r.Intn(2), C: 1 + r.Intn(16), H: 1 + r.Intn(9), W: widths[i%len(widths)]},
		}
		if i%3 == 1 {
			c.srcView = 1 + r.Intn(2)
		}
		if i%5 == 2 && half {
			c.format = ops.Float16
		}
		t.Run(c.String(), func(t *testing.T) {
			n := c.shape.N * c.shape.C * c.shape.H * c.shape.W
			x, dy := randomData(r, n), randomData(r, n)
			if c.format == ops.Float16 {
				x, dy = toHalf(x), toHalf(dy)
			}
			_, step := dropRun(t, dev, c, x, dy)
			res := step()
			require.Equal(t, uint32(0), res.draw, "a new kernel's first draw")
			dropCheck(t, c, x, dy, res)
		})
	}
}

// Replaying one recorded command buffer draws a fresh mask each time (the
// kernel's GPU draw counter), each equal to the reference of its draw;
// setting the counter back repeats a mask; encoding twice into one
// command buffer draws twice.
func TestDropoutDrawsAndReplay(t *testing.T) {
	ctx := context.Background()
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(27))
	c := dropCase{d: ops.DropoutDescriptor{KeepProbability: 0.5, Seed: 42, MaskStride: ops.DefaultMaskStride},
		shape: padding.Descriptor{N: 2, C: 3, H: 5, W: 37}}
	n := c.shape.N * c.shape.C * c.shape.H * c.shape.W
	x, dy := randomData(r, n), randomData(r, n)
	k, step := dropRun(t, dev, c, x, dy)
	var masks [][]bool
	for i := 0; i < 3; i++ {
		res := step()
		require.Equal(t, uint32(i), res.draw, "replay %d", i)
		dropCheck(t, c, x, dy, res)
		masks = append(masks, res.mask)
	}
	assert.NotEqual(t, masks[0], masks[1])
	assert.NotEqual(t, masks[1], masks[2])
	d, err := k.DrawCounter(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint32(3), d)
	require.NoError(t, k.SetDrawCounter(ctx, 1))
	res := step()
	assert.Equal(t, uint32(1), res.draw)
	assert.Equal(t, masks[1], res.mask, "the same draw gives the same mask")

	// Two encodes in one command buffer: consecutive draws; Encode (no
	// state) draws too.
	st1, st2 := must(k.NewGradientState(ops.ImageDescriptor{N: 2, C: 3, H: 5, W: 37})), must(k.NewGradientState(ops.ImageDescriptor{N: 2, C: 3, H: 5, W: 37}))
	defer st1.Close()
	defer st2.Close()
	src := newImage(t, dev, c.shape, x)
	dst := newImage(t, dev, c.shape, nil)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if err := k.EncodeToState(cb, src, st1, dst); err != nil {
			return err
		}
		if err := k.Encode(cb, src, dst); err != nil {
			return err
		}
		return k.EncodeToState(cb, src, st2, dst)
	}))
	d1, err := st1.Draw(ctx)
	require.NoError(t, err)
	d2, err := st2.Draw(ctx)
	require.NoError(t, err)
	assert.Equal(t, [2]uint32{2, 4}, [2]uint32{d1, d2})
	y, err := dst.Read(ctx)
	require.NoError(t, err)
	m2, err := st2.ReadMask(ctx)
	require.NoError(t, err)
	dropCheck(t, c, x, dy, dropResult{y: y, dx: must(ref.DropoutGradient(c.ref(4), m2, must(ref.TensorOf(2, 3, 5, 37, dy)))).Data, mask: m2, draw: 4})
}

// The mask and the results do not depend on how the work is split into
// dispatches (a device with a small storage-buffer range splits by batch
// images and channels).
func TestDropoutSplits(t *testing.T) {
	dev := vktest.Open(t)
	capped := vktest.Open(t, vk.Options{MaxStorageBufferRange: 16 << 10})
	r := rand.New(rand.NewSource(28))
	for _, s := range []ops.MaskStride{ops.DefaultMaskStride, {X: 1, Y: 1}, {FeatureChannel: 1}} {
		c := dropCase{d: ops.DropoutDescriptor{KeepProbability: 0.6, Seed: 7, MaskStride: s}, shape: padding.Descriptor{N: 3, C: 5, H: 30, W: 45}}
		n := c.shape.N * c.shape.C * c.shape.H * c.shape.W
		x, dy := randomData(r, n), randomData(r, n)
		_, a := dropRun(t, dev, c, x, dy)
		_, b := dropRun(t, capped, c, x, dy)
		ra, rb := a(), b()
		assert.Equal(t, ra.mask, rb.mask, "%v", c)
		assert.True(t, sameBits(ra.y, rb.y) && sameBits(ra.dx, rb.dx), "%v", c)
		dropCheck(t, c, x, dy, rb)
	}
}

// The fraction of kept elements on the GPU is the keep probability (within
// 5 standard deviations), and a channel-broadcast mask drops the same
// pixels in every channel.
func TestDropoutKeepFraction(t *testing.T) {
	ctx := context.Background()
	dev := vktest.Open(t)
	shape := ops.ImageDescriptor{N: 2, C: 16, H: 64, W: 64}
	src := newImage(t, dev, shape.Descriptor(), filled(2*16*64*64, 1))
	dst := newImage(t, dev, shape.Descriptor(), nil)
	for _, p := range []float32{0.05, 0.3, 0.5, 0.9} {
		k := must(ops.NewDropout(dev, ops.DropoutDescriptor{KeepProbability: p, Seed: 99, MaskStride: ops.MaskStride{X: 1, Y: 1}}))
		st := must(k.NewGradientState(shape))
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return k.EncodeToState(cb, src, st, dst) }))
		m, err := st.ReadMask(ctx)
		require.NoError(t, err)
		kept := 0
		for _, v := range m {
			if v {
				kept++
			}
		}
		nm := float64(len(m))
		assert.InDelta(t, p, float64(kept)/nm, 5*math.Sqrt(float64(p)*(1-float64(p))/nm), "keep %v", p)
		y, err := dst.Read(ctx)
		require.NoError(t, err)
		plane := 64 * 64
		for i, v := range y {
			n, px := i/(16*plane), i%plane
			want := float32(0)
			if m[n*plane+px] {
				want = float32(1 / float64(p))
			}
			if v != want {
				t.Fatalf("keep %v: element %d is %v, want %v (the pixel's mask in every channel)", p, i, v, want)
			}
		}
		st.Close()
		k.Close()
	}
}

// DropoutGradient with PyTorch's masks (WriteMask) gives PyTorch's
// gradient exactly (gen_upsampling_cases.py: F.dropout's x * (mask/keep)).
func TestDropoutTorchCases(t *testing.T) {
	ctx := context.Background()
	dev := vktest.Open(t)
	_, drops, err := ref.LoadUpsamplingCases("testdata/torch/upsampling_cases.json")
	require.NoError(t, err)
	for _, tc := range drops {
		rd := tc.Dropout
		d := ops.DropoutDescriptor{KeepProbability: rd.KeepProbability, Seed: 1, MaskStride: ops.MaskStride{X: rd.StrideX, Y: rd.StrideY, FeatureChannel: rd.StrideC}}
		require.Equal(t, tc.Scale, d.Scale(), tc.Name)
		shape := padding.Descriptor{N: tc.InputShape[0], C: tc.InputShape[1], H: tc.InputShape[2], W: tc.InputShape[3]}
		k := must(ops.NewDropout(dev, d))
		st := must(k.NewGradientState(ops.ImageDescriptor{N: shape.N, C: shape.C, H: shape.H, W: shape.W}))
		require.Equal(t, padding.Descriptor{N: tc.MaskShape[0], C: tc.MaskShape[1], H: tc.MaskShape[2], W: tc.MaskShape[3]}, st.Mask)
		require.NoError(t, st.WriteMask(ctx, tc.Mask))
		back, err := st.ReadMask(ctx)
		require.NoError(t, err)
		require.Equal(t, tc.Mask, back, tc.Name)
		g := must(ops.NewDropoutGradient(dev, d))
		dy := newImage(t, dev, shape, tc.GradOutput)
		dx := newImage(t, dev, shape, nil)
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return g.Encode(cb, dy, st, dx) }))
		got, err := dx.Read(ctx)
		require.NoError(t, err)
		assert.Equal(t, tc.GradInput, got, tc.Name)
		st.Close()
		k.Close()
	}
}

// Device-free shapes and the descriptor's values.
func TestDropoutDescriptor(t *testing.T) {
	d := ops.DropoutDescriptor{KeepProbability: 0.8, MaskStride: ops.MaskStride{X: 1, Y: 1}}
	out, err := d.ResultDescriptor(ops.ImageDescriptor{N: 2, C: 3, H: 4, W: 5, Format: ops.Float16})
	require.NoError(t, err)
	assert.Equal(t, ops.ImageDescriptor{N: 2, C: 3, H: 4, W: 5, Format: ops.Float16}, out)
	assert.Equal(t, padding.Descriptor{N: 2, C: 1, H: 4, W: 5}, d.MaskDescriptor(padding.Descriptor{N: 2, C: 3, H: 4, W: 5}))
	assert.Equal(t, float32(1.25), d.Scale())
	assert.Equal(t, uint32(0xcccccd00), d.Threshold()) // float32(0.8) = 0x1.99999ap-1, times 2^32
}

// TestDropoutBadInput: every class of bad input with its sentinel and a
// message naming the kernel; nothing refused is recorded.
func TestDropoutBadInput(t *testing.T) {
	ctx := context.Background()
	dev := vktest.Open(t)
	other := vktest.Open(t)
	r := rand.New(rand.NewSource(29))
	sd := padding.Descriptor{N: 2, C: 3, H: 4, W: 5}
	id := ops.ImageDescriptor{N: 2, C: 3, H: 4, W: 5}
	good := ops.DropoutDescriptor{KeepProbability: 0.5, Seed: 3, MaskStride: ops.DefaultMaskStride}
	src := newImage(t, dev, sd, randomData(r, 120))
	dst := newImage(t, dev, sd, nil)
	wrong := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 4, W: 6}, nil)
	foreign := newImage(t, other, sd, nil)
	closed := newImage(t, dev, sd, nil)
	require.NoError(t, closed.Close())
	k := must(ops.NewDropout(dev, good))
	defer k.Close()
	g := must(ops.NewDropoutGradient(dev, good))
	st := must(k.NewGradientState(id))
	defer st.Close()
	stWrong := must(k.NewGradientState(ops.ImageDescriptor{N: 2, C: 3, H: 4, W: 6}))
	defer stWrong.Close()
	kOther := must(ops.NewDropout(dev, ops.DropoutDescriptor{KeepProbability: 0.7, MaskStride: ops.DefaultMaskStride}))
	defer kOther.Close()
	stOther := must(kOther.NewGradientState(id))
	defer stOther.Close()
	kForeign := must(ops.NewDropout(other, good))
	defer kForeign.Close()
	stForeign := must(kForeign.NewGradientState(id))
	defer stForeign.Close()
	stClosed := must(k.NewGradientState(id))
	require.NoError(t, stClosed.Close())
	kClosed := must(ops.NewDropout(dev, good))
	require.NoError(t, kClosed.Close())
	require.NoError(t, kClosed.Close(), "Close twice")
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	nan := float32(math.NaN())
	keep := func(p float32) func() error {
		return func() error {
			_, err := ops.NewDropout(dev, ops.DropoutDescriptor{KeepProbability: p, MaskStride: ops.DefaultMaskStride})
			return err
		}
	}
	tests := []struct {
		name string
		call func() error
		want error
		msg  string
	}{
		{"keep 0", keep(0), ops.ErrGeometry, "keep probability 0 outside (0, 1)"},
		{"keep 1", keep(1), ops.ErrGeometry, "keep probability 1 outside"},
		{"keep negative", keep(-0.25), ops.ErrGeometry, "-0.25"},
		{"keep above 1", keep(1.5), ops.ErrGeometry, "1.5"},
		{"keep NaN", keep(nan), ops.ErrGeometry, "NaN"},
		{"keep +Inf", keep(float32(math.Inf(1))), ops.ErrGeometry, "+Inf"},
		{"mask stride 2", func() error {
			_, err := ops.NewDropoutGradient(dev, ops.DropoutDescriptor{KeepProbability: 0.5, MaskStride: ops.MaskStride{X: 2, Y: 1, FeatureChannel: 1}})
			return err
		}, ops.ErrGeometry, "mask stride x = 2"},
		{"mask stride -1", func() error {
			_, err := ops.DropoutDescriptor{KeepProbability: 0.5, MaskStride: ops.MaskStride{X: 1, Y: 1, FeatureChannel: -1}}.ResultDescriptor(id)
			return err
		}, ops.ErrGeometry, "feature channel = -1"},
		{"nil device", func() error { _, err := ops.NewDropout(nil, good); return err }, ops.ErrDevice, "Dropout"},
		{"nil device (gradient)", func() error { _, err := ops.NewDropoutGradient(nil, good); return err }, ops.ErrDevice, "DropoutGradient"},
		{"nil command buffer", func() error { return k.Encode(nil, src, dst) }, ops.ErrInvalidImage, "nil command buffer"},
		{"nil source", func() error { return k.Encode(cb, nil, dst) }, ops.ErrInvalidImage, "nil source"},
		{"nil state", func() error { return k.EncodeToState(cb, src, nil, dst) }, ops.ErrState, "nil gradient state"},
		{"closed destination", func() error { return k.Encode(cb, src, closed) }, ops.ErrClosed, "destination"},
		{"image of another device", func() error { return k.Encode(cb, src, foreign) }, ops.ErrDevice, "another device"},
		{"destination of another shape", func() error { return k.Encode(cb, src, wrong) }, ops.ErrShape, "differ in shape"},
		{"aliased images", func() error { return k.Encode(cb, src, src) }, ops.ErrAlias, "share storage"},
		{"state of another shape", func() error { return k.EncodeToState(cb, src, stWrong, dst) }, ops.ErrShape, "state's source"},
		{"state of another kernel", func() error { return k.EncodeToState(cb, src, stOther, dst) }, ops.ErrState, "another descriptor"},
		{"state of another device", func() error { return k.EncodeToState(cb, src, stForeign, dst) }, ops.ErrDevice, "another device"},
		{"closed state", func() error { return k.EncodeToState(cb, src, stClosed, dst) }, ops.ErrClosed, "dropout state"},
		{"closed kernel", func() error { return kClosed.Encode(cb, src, dst) }, ops.ErrClosed, "Dropout"},
		{"closed kernel's counter", func() error { _, err := kClosed.DrawCounter(ctx); return err }, ops.ErrClosed, "Dropout"},
		{"zero-value kernel", func() error { return (&ops.Dropout{}).Encode(cb, src, dst) }, ops.ErrDevice, "NewDropout"},
		{"zero-value state", func() error { return g.Encode(cb, src, &ops.DropoutGradientState{}, dst) }, ops.ErrState, "not made"},
		{"gradient nil state", func() error { return g.Encode(cb, src, nil, dst) }, ops.ErrState, "nil gradient state"},
		{"gradient state of another keep", func() error { return g.Encode(cb, src, stOther, dst) }, ops.ErrState, "keep 0.5"},
		{"gradient of another shape", func() error { return g.Encode(cb, wrong, st, dst) }, ops.ErrShape, "source gradient"},
		{"gradient closed state", func() error { _, err := g.EncodeNew(cb, src, stClosed); return err }, ops.ErrClosed, "DropoutGradient"},
		{"gradient aliased", func() error { return g.Encode(cb, src, st, src) }, ops.ErrAlias, "share storage"},
		{"zero-value gradient", func() error { return (&ops.DropoutGradient{}).Encode(cb, src, st, dst) }, ops.ErrDevice, "NewDropoutGradient"},
		{"mask of the wrong length", func() error { return st.WriteMask(ctx, make([]bool, 7)) }, ops.ErrShape, "7 values"},
		{"state over the storage range", func() error {
			capped := vktest.Open(t, vk.Options{MaxStorageBufferRange: 64 << 10})
			kc := must(ops.NewDropout(capped, good))
			defer kc.Close()
			_, err := kc.NewGradientState(ops.ImageDescriptor{N: 1, C: 1, H: 1 << 15, W: 33})
			return err
		}, ops.ErrDeviceLimit, "max storage buffer range"},
	}
	if dev.Limits().Float16Storage {
		half := newHalfImage(t, dev, sd, nil)
		tests = append(tests, struct {
			name string
			call func() error
			want error
			msg  string
		}{"formats differ", func() error { return k.Encode(cb, src, half) }, ops.ErrFormat, "share a format"})
	}
	for _, tc := range tests {
		var err error
		require.NotPanics(t, func() { err = tc.call() }, tc.name)
		assert.ErrorIs(t, err, tc.want, tc.name)
		if err != nil {
			assert.Contains(t, err.Error(), tc.msg, tc.name)
		}
	}
	assert.Equal(t, 0, cb.Commands(), "nothing refused was recorded")
}
