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

// Tolerances of the upsampling kernels against the float64 reference, as
// fractions of upMag's error scale (the sum of the magnitudes of the
// weighted terms of each value plus that of the terms themselves):
//
//   - nearest forward: exact (a copy);
//   - bilinear forward: upTolForward = 2^-20 (4 products of weights
//     rounded once and 3 additions: under 8 ulps of mag);
//   - gradients: upTolGradient = 2^-16 (float32 sums of up to (2s+1)^2
//     terms for s <= 4, rows summed then weighted: under 100 ulps of mag).
//
// Float16 images: the same bound on the float32 result plus one half ulp
// of the rounded value (compareHalf's rule).
const (
	upTolForward  = 0x1p-20
	upTolGradient = 0x1p-16
)

// upCase is one upsampling configuration of the GPU tests.
type upCase struct {
	d        ops.UpsamplingDescriptor
	src      padding.Descriptor
	srcView  int // > 0: the source is a channel view starting at this channel of a wider image
	dstView  int
	format   ops.Format
	sameBits bool // the gradient must also match an unsplit run bit for bit
}

func (c upCase) String() string {
	return fmt.Sprintf("%v src %v views %d/%d %v", c.d, c.src, c.srcView, c.dstView, c.format)
}

func (c upCase) ref() ref.Upsampling {
	return ref.Upsampling{ScaleX: c.d.ScaleX, ScaleY: c.d.ScaleY, Bilinear: c.d.Bilinear, AlignCorners: c.d.AlignCorners}
}

// upImage makes an image of format f (or a channel view at channel view
// of an image with view+2 extra channels, filled with poison) holding data.
func upImage(t testing.TB, dev *vk.Device, d padding.Descriptor, f ops.Format, view int, data []float32) *ops.Image {
	t.Helper()
	if view == 0 {
		if f == ops.Float16 {
			return newHalfImage(t, dev, d, data)
		}
		return newImage(t, dev, d, data)
	}
	wide := d
	wide.C += view + 2
	var im *ops.Image
	if f == ops.Float16 {
		im = newHalfImage(t, dev, wide, filled(wide.N*wide.C*wide.H*wide.W, poisonValue))
	} else {
		im = newImage(t, dev, wide, filled(wide.N*wide.C*wide.H*wide.W, poisonValue))
	}
	v, err := im.ChannelView(view, d.C)
	require.NoError(t, err)
	if data != nil {
		require.NoError(t, v.Write(context.Background(), data))
	}
	return v
}

// upMag returns, per value of the forward result (or of the gradient),
// the scale of its rounding error: the reference run on |in| (the sum of
// the magnitudes of the weighted terms) plus the sum of |in| over the
// terms without their weights. The second part covers the weights'
// absolute error: 1-lambda is rounded in float32 (as in PyTorch), so a
// small weight of a large value is off by about 2^-24 of that value.
func upMag(t *testing.T, c upCase, grad bool, in []float32, shape padding.Descriptor) []float64 {
	abs := make([]float32, len(in))
	for i, v := range in {
		abs[i] = float32(math.Abs(float64(v)))
	}
	x, err := ref.TensorOf(shape.N, shape.C, shape.H, shape.W, abs)
	require.NoError(t, err)
	var out ref.Tensor[float64]
	if grad {
		out, err = ref.UpsampleGradient(c.ref(), x, c.src)
	} else {
		out, err = ref.Upsample(c.ref(), x)
	}
	require.NoError(t, err)
	if !c.d.Bilinear {
		return out.Data
	}
	u, o := c.ref(), c.ref().OutputShape(c.src)
	for n := 0; n < o.N; n++ {
		for ch := 0; ch < o.C; ch++ {
			for yo := 0; yo < o.H; yo++ {
				y0, y1, _ := ref.UpsampleTaps(true, u.AlignCorners, c.src.H, u.ScaleY, yo)
				for xo := 0; xo < o.W; xo++ {
					x0, x1, _ := ref.UpsampleTaps(true, u.AlignCorners, c.src.W, u.ScaleX, xo)
					for _, p := range [4][2]int{{y0, x0}, {y0, x1}, {y1, x0}, {y1, x1}} {
						si := ((n*c.src.C+ch)*c.src.H+p[0])*c.src.W + p[1]
						di := ((n*o.C+ch)*o.H+yo)*o.W + xo
						if grad {
							out.Data[si] += float64(abs[di])
						} else {
							out.Data[di] += float64(abs[si])
						}
					}
				}
			}
		}
	}
	return out.Data
}

// upCompare checks got against want within tol*mag (and, for float16,
// half an ulp more of the rounded value); exact when tol is 0.
func upCompare(got []float32, want, mag []float64, tol float64, f ops.Format) error {
	bad, first := 0, -1
	for i := range got {
		w := want[i]
		bound := tol * mag[i]
		if f == ops.Float16 {
			w = float64(toHalf([]float32{float32(w)})[0])
			bound += ulp16(w)
		}
		g := float64(got[i])
		if g != w && !(math.Abs(g-w) <= bound) {
			if bad == 0 {
				first = i
			}
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d values differ; first at %d: got %v, want %v (magnitude %v)", bad, len(got), first, got[first], want[first], mag[first])
}

// runUpsampling runs c's forward and gradient on the GPU (destinations
// poisoned first) and returns their results.
func runUpsampling(t *testing.T, dev *vk.Device, c upCase, x, dy []float32) (y, dx []float32) {
	t.Helper()
	ctx := context.Background()
	out, err := c.d.ResultDescriptor(ops.ImageDescriptor{N: c.src.N, C: c.src.C, H: c.src.H, W: c.src.W})
	require.NoError(t, err)
	od := out.Descriptor()
	f, err := ops.NewUpsampling(dev, c.d)
	require.NoError(t, err)
	g, err := ops.NewUpsamplingGradient(dev, c.d)
	require.NoError(t, err)
	src := upImage(t, dev, c.src, c.format, c.srcView, x)
	dst := upImage(t, dev, od, c.format, c.dstView, filled(od.N*od.C*od.H*od.W, poisonValue))
	dyIm := upImage(t, dev, od, c.format, c.dstView, dy)
	dxIm := upImage(t, dev, c.src, c.format, c.srcView, filled(len(x), poisonValue))
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if err := f.Encode(cb, src, dst); err != nil {
			return err
		}
		return g.Encode(cb, dyIm, dxIm)
	}), c)
	y, err = dst.Read(ctx)
	require.NoError(t, err)
	dx, err = dxIm.Read(ctx)
	require.NoError(t, err)
	return y, dx
}

// checkUpsampling runs c on the GPU and compares with the reference.
func checkUpsampling(t *testing.T, dev *vk.Device, c upCase, r *rand.Rand) {
	t.Helper()
	x := randomData(r, c.src.N*c.src.C*c.src.H*c.src.W)
	od := c.ref().OutputShape(c.src)
	dy := randomData(r, od.N*od.C*od.H*od.W)
	if c.format == ops.Float16 {
		x, dy = toHalf(x), toHalf(dy)
	}
	y, dx := runUpsampling(t, dev, c, x, dy)
	xt, err := ref.TensorOf(c.src.N, c.src.C, c.src.H, c.src.W, x)
	require.NoError(t, err)
	want, err := ref.Upsample(c.ref(), xt)
	require.NoError(t, err)
	tol := upTolForward
	if !c.d.Bilinear {
		tol = 0
	}
	require.NoError(t, upCompare(y, want.Data, upMag(t, c, false, x, c.src), tol, c.format), "forward %v", c)
	dyt, err := ref.TensorOf(od.N, od.C, od.H, od.W, dy)
	require.NoError(t, err)
	wantDx, err := ref.UpsampleGradient(c.ref(), dyt, c.src)
	require.NoError(t, err)
	require.NoError(t, upCompare(dx, wantDx.Data, upMag(t, c, true, dy, od), upTolGradient, c.format), "gradient %v", c)
}

// GPU against the reference: every mode, scales 1..4 on each axis, odd
// sizes and channel counts, channel views, float32 and float16.
func TestUpsamplingMatchesReference(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(16))
	half := dev.Limits().Float16Storage
	i := 0
	for _, mode := range []ops.UpsamplingDescriptor{{}, {Bilinear: true}, {Bilinear: true, AlignCorners: true}} {
		for sy := 1; sy <= 4; sy++ {
			for sx := 1; sx <= 4; sx++ {
				d := mode
				d.ScaleX, d.ScaleY = sx, sy
				c := upCase{d: d, src: padding.Descriptor{N: 1 + r.Intn(2), C: 1 + r.Intn(16), H: 1 + r.Intn(9), W: 1 + r.Intn(9)}}
				switch i % 4 {
				case 1:
					c.src.W = 4 * (1 + r.Intn(3)) // vector loads and stores
				case 2:
					c.srcView, c.dstView = 1+r.Intn(2), 1+r.Intn(3)
				case 3:
					if half {
						c.format = ops.Float16
					}
				}
				i++
				t.Run(c.String(), func(t *testing.T) { checkUpsampling(t, dev, c, r) })
			}
		}
	}
}

// Aligned corners over sides whose positions reach 2^31 divide them with
// true divisions rather than multiply-high ones: the same results, forced
// here on small images (forward and gradient, both axes).
func TestUpsamplingExactDivisions(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(18))
	defer ops.SetUpsamplingExact(true)()
	for _, c := range []upCase{
		{d: ops.UpsamplingDescriptor{ScaleX: 3, ScaleY: 2, Bilinear: true, AlignCorners: true}, src: padding.Descriptor{N: 2, C: 3, H: 11, W: 7}},
		{d: ops.UpsamplingDescriptor{ScaleX: 1, ScaleY: 4, Bilinear: true, AlignCorners: true}, src: padding.Descriptor{N: 1, C: 2, H: 2, W: 9}},
	} {
		t.Run(c.String(), func(t *testing.T) { checkUpsampling(t, dev, c, r) })
	}
}

// Scales whose gradient windows exceed 32 columns (the weights then
// recomputed per row rather than held in registers), both modes.
func TestUpsamplingWideScales(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(19))
	for _, c := range []upCase{
		{d: ops.UpsamplingDescriptor{ScaleX: 9, ScaleY: 2, Bilinear: true, AlignCorners: true}, src: padding.Descriptor{N: 1, C: 2, H: 3, W: 3}},
		{d: ops.UpsamplingDescriptor{ScaleX: 17, ScaleY: 3, Bilinear: true}, src: padding.Descriptor{N: 1, C: 2, H: 2, W: 3}},
	} {
		t.Run(c.String(), func(t *testing.T) { checkUpsampling(t, dev, c, r) })
	}
}

// Images larger than the storage-buffer range are split into dispatches
// by batch images and by channels; the results are the same bits as one
// dispatch.
func TestUpsamplingSplits(t *testing.T) {
	dev := vktest.Open(t)
	capped := vktest.Open(t, vk.Options{MaxStorageBufferRange: 24 << 10})
	r := rand.New(rand.NewSource(17))
	for _, tc := range []struct {
		d    ops.UpsamplingDescriptor
		h, w int
	}{{ops.UpsamplingDescriptor{ScaleX: 2, ScaleY: 2}, 24, 24}, {ops.UpsamplingDescriptor{ScaleX: 3, ScaleY: 2, Bilinear: true}, 24, 16},
		{ops.UpsamplingDescriptor{ScaleX: 2, ScaleY: 3, Bilinear: true, AlignCorners: true}, 16, 24}} {
		// Upsampled planes of 2304 float32 values (9 KiB): a batch image
		// of 5 channels is over 24 KiB, so the dispatches take 2 channels.
		c := upCase{d: tc.d, src: padding.Descriptor{N: 3, C: 5, H: tc.h, W: tc.w}}
		x := randomData(r, c.src.N*c.src.C*c.src.H*c.src.W)
		od := c.ref().OutputShape(c.src)
		dy := randomData(r, od.N*od.C*od.H*od.W)
		y1, dx1 := runUpsampling(t, dev, c, x, dy)
		y2, dx2 := runUpsampling(t, capped, c, x, dy)
		assert.True(t, sameBits(y1, y2), "%v forward split", c)
		assert.True(t, sameBits(dx1, dx2), "%v gradient split", c)
		checkUpsampling(t, capped, c, r)
	}
	// A plane over the range is refused, not split.
	k := must(ops.NewUpsamplingNearest(capped, 2, 2))
	src := newImage(t, capped, padding.Descriptor{N: 1, C: 1, H: 64, W: 64}, nil)
	dst := newImage(t, capped, padding.Descriptor{N: 1, C: 1, H: 128, W: 128}, nil)
	cb, err := capped.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	err = k.Encode(cb, src, dst)
	assert.ErrorIs(t, err, ops.ErrDeviceLimit)
	assert.ErrorContains(t, err, "128x128")
}

// The GPU kernels against PyTorch's F.interpolate and autograd
// (gen_upsampling_cases.py). PyTorch computes the positions in float32:
// tolerance 1e-5 of the terms' magnitudes on top of the reference's.
func TestUpsamplingTorchCases(t *testing.T) {
	dev := vktest.Open(t)
	ups, _, err := ref.LoadUpsamplingCases("testdata/torch/upsampling_cases.json")
	require.NoError(t, err)
	for _, tc := range ups {
		u := tc.Upsampling
		c := upCase{d: ops.UpsamplingDescriptor{ScaleX: u.ScaleX, ScaleY: u.ScaleY, Bilinear: u.Bilinear, AlignCorners: u.AlignCorners},
			src: padding.Descriptor{N: tc.InputShape[0], C: tc.InputShape[1], H: tc.InputShape[2], W: tc.InputShape[3]}}
		y, dx := runUpsampling(t, dev, c, tc.Input, tc.GradOutput)
		o := tc.OutputShape
		want := make([]float64, len(tc.Output))
		for i, v := range tc.Output {
			want[i] = float64(v)
		}
		tol := 1e-5
		if !u.Bilinear {
			tol = 0
		}
		require.NoError(t, upCompare(y, want, upMag(t, c, false, tc.Input, c.src), tol, ops.Float32), "%s forward", tc.Name)
		wantDx := make([]float64, len(tc.GradInput))
		for i, v := range tc.GradInput {
			wantDx[i] = float64(v)
		}
		require.NoError(t, upCompare(dx, wantDx, upMag(t, c, true, tc.GradOutput, padding.Descriptor{N: o[0], C: o[1], H: o[2], W: o[3]}),
			1e-5, ops.Float32), "%s gradient", tc.Name)
	}
}

// Device-free shape inference and the descriptor's checks.
func TestUpsamplingDescriptor(t *testing.T) {
	d := ops.UpsamplingDescriptor{ScaleX: 3, ScaleY: 2, Bilinear: true}
	out, err := d.ResultDescriptor(ops.ImageDescriptor{N: 2, C: 5, H: 7, W: 9, Format: ops.Float16})
	require.NoError(t, err)
	assert.Equal(t, ops.ImageDescriptor{N: 2, C: 5, H: 14, W: 27, Format: ops.Float16}, out)
	back, err := d.GradientResultDescriptor(out)
	require.NoError(t, err)
	assert.Equal(t, ops.ImageDescriptor{N: 2, C: 5, H: 7, W: 9, Format: ops.Float16}, back)
	assert.Equal(t, "bilinear 3x2", d.String())
	_, err = d.GradientResultDescriptor(ops.ImageDescriptor{N: 1, C: 1, H: 7, W: 9})
	assert.ErrorIs(t, err, ops.ErrShape)
	_, err = ops.UpsamplingDescriptor{ScaleX: 1 << 20, ScaleY: 1}.ResultDescriptor(ops.ImageDescriptor{N: 1, C: 1, H: 1, W: 1 << 12})
	assert.ErrorIs(t, err, ops.ErrGeometry)
	_, err = ops.UpsamplingDescriptor{ScaleX: 4096, ScaleY: 1}.ResultDescriptor(ops.ImageDescriptor{N: 1, C: 1, H: 1, W: 1 << 20})
	assert.ErrorIs(t, err, ops.ErrInvalidImage)
}

// TestUpsamplingBadInput: every class of bad input with its sentinel and
// a message naming the kernel; nothing refused is recorded.
func TestUpsamplingBadInput(t *testing.T) {
	dev := vktest.Open(t)
	other := vktest.Open(t)
	r := rand.New(rand.NewSource(18))
	sd, dd := padding.Descriptor{N: 2, C: 3, H: 4, W: 5}, padding.Descriptor{N: 2, C: 3, H: 8, W: 10}
	src := newImage(t, dev, sd, randomData(r, 120))
	dst := newImage(t, dev, dd, nil)
	foreign := newImage(t, other, dd, nil)
	closed := newImage(t, dev, dd, nil)
	require.NoError(t, closed.Close())
	wrong := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 8, W: 9}, nil)
	fewer := newImage(t, dev, padding.Descriptor{N: 2, C: 2, H: 8, W: 10}, nil)
	shared := newImage(t, dev, padding.Descriptor{N: 2, C: 6, H: 8, W: 10}, nil)
	lo, hi := must(shared.ChannelView(0, 3)), must(shared.ChannelView(2, 3))
	srcOverlap := must(lo.ChannelView(0, 3))
	wide := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 46341}, nil)
	wideOut := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 92682}, nil)
	nearest := must(ops.NewUpsamplingNearest(dev, 2, 2))
	bilinear := must(ops.NewUpsamplingBilinear(dev, 2, 2, false))
	aligned := must(ops.NewUpsamplingBilinear(dev, 2, 1, true))
	grad := must(ops.NewUpsamplingBilinearGradient(dev, 2, 2, true))
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	var half *ops.Image
	if dev.Limits().Float16Storage {
		half = newHalfImage(t, dev, dd, nil)
	}
	tests := []struct {
		name string
		call func() error
		want error
		msg  string
	}{
		{"scale 0", func() error { _, err := ops.NewUpsamplingNearest(dev, 0, 2); return err }, ops.ErrGeometry, "scale factor x = 0"},
		{"negative scale", func() error { _, err := ops.NewUpsamplingBilinear(dev, 2, -1, false); return err }, ops.ErrGeometry, "scale factor y = -1"},
		{"huge scale", func() error { _, err := ops.NewUpsamplingNearestGradient(dev, 1<<13, 1); return err }, ops.ErrGeometry, "outside [1, 4096]"},
		{"align corners without bilinear", func() error {
			_, err := ops.NewUpsampling(dev, ops.UpsamplingDescriptor{ScaleX: 2, ScaleY: 2, AlignCorners: true})
			return err
		}, ops.ErrGeometry, "align corners"},
		{"nil device", func() error { _, err := ops.NewUpsamplingNearest(nil, 2, 2); return err }, ops.ErrDevice, "UpsamplingNearest"},
		{"nil device (generic)", func() error {
			k, err := ops.NewUpsamplingGradient(nil, ops.UpsamplingDescriptor{ScaleX: 2, ScaleY: 2})
			if k != nil {
				return fmt.Errorf("a non-nil kernel with the error %v", err)
			}
			return err
		}, ops.ErrDevice, "UpsamplingNearestGradient"},
		{"nil command buffer", func() error { return nearest.Encode(nil, src, dst) }, ops.ErrInvalidImage, "nil command buffer"},
		{"nil source", func() error { return nearest.Encode(cb, nil, dst) }, ops.ErrInvalidImage, "nil source"},
		{"nil destination gradient", func() error { return grad.Encode(cb, dst, nil) }, ops.ErrInvalidImage, "destination gradient"},
		{"closed destination", func() error { return bilinear.Encode(cb, src, closed) }, ops.ErrClosed, "destination"},
		{"image of another device", func() error { return nearest.Encode(cb, src, foreign) }, ops.ErrDevice, "another device"},
		{"destination of the wrong size", func() error { return nearest.Encode(cb, src, wrong) }, ops.ErrShape, "want 2x3x8x10"},
		{"destination with fewer channels", func() error { return bilinear.Encode(cb, src, fewer) }, ops.ErrShape, "upsampled by 2x2"},
		{"gradient of the wrong size", func() error { return grad.Encode(cb, wrong, src) }, ops.ErrShape, "(9/2)"},
		{"EncodeNew gradient of an odd size", func() error { _, err := grad.EncodeNew(cb, wrong); return err }, ops.ErrShape, "not a multiple"},
		{"aliased source and destination", func() error {
			return must(ops.NewUpsamplingNearest(dev, 1, 1)).Encode(cb, srcOverlap, hi)
		}, ops.ErrAlias, "share storage"},
		{"aligned positions over 32 bits", func() error { return aligned.Encode(cb, wide, wideOut) }, ops.ErrDeviceLimit, "32-bit"},
		{"zero-value kernel", func() error { return (&ops.UpsamplingBilinear{}).Encode(cb, src, dst) }, ops.ErrDevice, "constructor"},
	}
	if half != nil {
		tests = append(tests, struct {
			name string
			call func() error
			want error
			msg  string
		}{"formats differ", func() error { return nearest.Encode(cb, src, half) }, ops.ErrFormat, "share a format"})
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
