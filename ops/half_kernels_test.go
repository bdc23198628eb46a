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

// Float16 images through every kernel. The kernels load halves, compute in
// float32 and round each result to half once. They are checked against
// ops/ref run in float32 on the same (half) inputs, its results rounded to
// half:
//
//   - max kinds (forward values, argmax, gradients): equal. The maximum of
//     halves is one of them, and a max gradient adds the same float32
//     values in the same order as the reference, so both round the same
//     float32 to half.
//   - sums (average, L2 norm, forward and gradient): |got - want| <=
//     ulp16(want) + ref.SumTolerance*max(1, |want|). The device's float32
//     result s and the reference's s' differ by at most
//     ref.SumTolerance*max(1, |s'|) (the float32 kernels' contract, same
//     inputs); rounding each to half moves it by at most half an ulp, so
//     the halves differ by at most one ulp more. For |want| >= 1 this is
//     within a relative 2^-10 + 2e-5.

// requireHalf skips t on a device without 16-bit storage (the kernels'
// float16 path needs it; lavapipe has it).
func requireHalf(t testing.TB, dev *vk.Device) {
	t.Helper()
	if !dev.Limits().Float16Storage {
		t.Skipf("%s has no 16-bit storage buffer access", dev.Info().Name)
	}
}

// newHalfImage makes a float16 image holding data rounded to half.
func newHalfImage(t testing.TB, dev *vk.Device, d padding.Descriptor, data []float32) *ops.Image {
	t.Helper()
	im, err := ops.NewImage(dev, ops.ImageDescriptor{N: d.N, C: d.C, H: d.H, W: d.W, Format: ops.Float16})
	require.NoError(t, err)
	t.Cleanup(func() { im.Close() })
	if data != nil {
		require.NoError(t, im.Write(context.Background(), data))
	}
	return im
}

// toHalf returns d rounded to half: what a float16 image holds.
func toHalf(d []float32) []float32 {
	out := make([]float32, len(d))
	for i, v := range d {
		out[i] = ops.Float16FromBits(ops.Float16Bits(v))
	}
	return out
}

// ulp16 is the spacing of halves at |x| (that of subnormals below 2^-14).
func ulp16(x float64) float64 {
	a := math.Abs(x)
	if a < 0x1p-14 {
		return 0x1p-24
	}
	_, e := math.Frexp(a) // a = m * 2^e, 0.5 <= m < 1
	return math.Ldexp(1, e-11)
}

// compareHalf checks a float16 kernel's output against the float32
// reference want32 (see the tolerance above); extra, when not nil, adds a
// per-value allowance.
func compareHalf(k ref.Kind, got, want32 []float32, extra func(i int) float64) error {
	if len(got) != len(want32) {
		return fmt.Errorf("%v: got %d values, want %d", k, len(got), len(want32))
	}
	want := toHalf(want32)
	bad, first := 0, -1
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		ok := g == w || math.IsNaN(g) && math.IsNaN(w)
		if !ok && k != ref.Max && k != ref.DilatedMax && !math.IsNaN(g) && !math.IsNaN(w) {
			tol := ulp16(w) + ref.SumTolerance*max(1, math.Abs(w))
			if extra != nil {
				tol += extra(i)
			}
			ok = math.Abs(g-w) <= tol
		}
		if !ok {
			if bad == 0 {
				first = i
			}
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	return fmt.Errorf("%v (float16): %d of %d values differ; first at %d: got %v, want %v (float32 reference %v)",
		k, bad, len(got), first, got[first], want[first], want32[first])
}

// checkForwardHalf is checkForward on float16 images; with record, a max
// kind records the argmax too (the argmax shaders write the values), and
// the codes are checked.
func checkForwardHalf(t *testing.T, dev *vk.Device, c poolCase, input []float32, record bool) {
	t.Helper()
	input = toHalf(input)
	f, k, err := newForward(dev, c.kind, c.geom)
	require.NoError(t, err, c)
	c.configure(f, k)
	f.SetRecordArgmax(record)
	src := newHalfImage(t, dev, c.src, input)
	init := toHalf(filled(c.dst.N*c.dst.C*c.dst.H*c.dst.W, poisonValue))
	dst := newHalfImage(t, dev, c.dst, init)
	var st *ops.PoolingGradientState
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if !record {
			return f.Encode(cb, src, dst)
		}
		var err error
		st, err = f.EncodeWithState(cb, src, dst)
		return err
	}), c)
	got, err := dst.Read(context.Background())
	require.NoError(t, err)
	in, err := ref.TensorOf(c.src.N, c.src.C, c.src.H, c.src.W, input)
	require.NoError(t, err)
	want, err := ref.TensorOf(c.dst.N, c.dst.C, c.dst.H, c.dst.W, init)
	require.NoError(t, err)
	require.NoError(t, ref.Pool(c.refGeometry(), in, &want), c)
	require.NoError(t, compareHalf(refKind(c.kind), got, want.Data, nil), c)
	if st != nil {
		defer st.Close()
		if st.HasArgmax() {
			codes, err := st.ReadArgmax(context.Background())
			require.NoError(t, err)
			wantCodes, err := ref.Argmax(c.refGeometry(), in, c.dst)
			require.NoError(t, err)
			require.Equal(t, wantCodes, codes, c)
		}
	}
}

// gradResultHalf is gradResult on float16 images; it also returns the
// forward's destination values.
func gradResultHalf(t *testing.T, dev *vk.Device, c poolCase, input, dy []float32, record bool) (dx, out []float32, st *ops.PoolingGradientState) {
	t.Helper()
	f, k, err := newForward(dev, c.kind, c.geom)
	require.NoError(t, err, c)
	c.configure(f, k)
	f.SetRecordArgmax(record)
	g, err := ops.NewPoolingGradient(dev, c.kind, c.geom)
	require.NoError(t, err, c)
	src := newHalfImage(t, dev, c.src, input)
	dst := newHalfImage(t, dev, c.dst, filled(c.dst.N*c.dst.C*c.dst.H*c.dst.W, 0))
	dyIm := newHalfImage(t, dev, c.dst, dy)
	var dxIm *ops.Image
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		if st, err = f.EncodeWithState(cb, src, dst); err != nil {
			return err
		}
		t.Cleanup(func() { st.Close() })
		dxIm, err = g.EncodeNew(cb, dyIm, src, st)
		return err
	}), c)
	defer dxIm.Close()
	require.Equal(t, ops.Float16, dxIm.Format(), c)
	dx, err = dxIm.Read(context.Background())
	require.NoError(t, err)
	out, err = dst.Read(context.Background())
	require.NoError(t, err)
	return dx, out, st
}

// checkGradientHalf runs c forward and backward on float16 images and
// compares dx, and for the max kinds the recorded argmax, with the
// reference on the same half inputs.
func checkGradientHalf(t *testing.T, dev *vk.Device, c poolCase, input, dy []float32, record bool) {
	t.Helper()
	input, dy = toHalf(input), toHalf(dy)
	got, _, st := gradResultHalf(t, dev, c, input, dy, record)
	require.NoError(t, compareHalf(refKind(c.kind), got, refGradient(t, c, input, dy), nil), "%v argmax=%v", c, record)
	if st.HasArgmax() {
		codes, err := st.ReadArgmax(context.Background())
		require.NoError(t, err)
		src, _ := ref.TensorOf(c.src.N, c.src.C, c.src.H, c.src.W, input)
		want, err := ref.Argmax(c.refGeometry(), src, c.dst)
		require.NoError(t, err)
		require.Equal(t, want, codes, c)
	}
}

func TestFloat16PoolingMatchesReference(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	requireHalf(t, dev)
	r := rand.New(rand.NewSource(160))
	for _, kind := range kinds {
		t.Run(kind.String(), func(t *testing.T) {
			for i := 0; i < 10; i++ {
				c := randomCase(r, kind)
				if i < 2 { // a window over 64 taps: the tiled shaders
					c.geom.KernelWidth, c.geom.KernelHeight = 9, 8
					c.dst.W, c.dst.H = c.dst.W+8, c.dst.H+7
				}
				in := gradInput(r, kind, c.src.N*c.src.C*c.src.H*c.src.W) // ties and NaNs for max
				checkForwardHalf(t, dev, c, in, i%2 == 1)
			}
		})
	}
}

// Stride 2 over even widths takes the pairwise (f16vec2) loads; odd
// widths and views at odd offsets take the single loads.
func TestFloat16PairLoads(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	requireHalf(t, dev)
	r := rand.New(rand.NewSource(161))
	for _, kind := range kinds {
		for _, w := range []int{16, 17} {
			for _, off := range []int{0, 1} {
				c := poolCase{kind: kind, geom: ops.Geometry{KernelWidth: 3, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1},
					edge: ops.EdgeMode(off), src: padding.Descriptor{N: 2, C: 3, H: 9, W: w},
					dst: padding.Descriptor{N: 2, C: 3, H: 5, W: w/2 + 1}, off: ops.Offset{X: off, Y: 1}}
				checkForwardHalf(t, dev, c, gradInput(r, kind, 2*3*9*w), off == 0)
				checkGradientHalf(t, dev, c, gradInput(r, kind, 2*3*9*w), randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W), off == 1)
			}
		}
	}
}

func TestFloat16GradientMatchesReference(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	requireHalf(t, dev)
	r := rand.New(rand.NewSource(162))
	for _, kind := range kinds {
		t.Run(kind.String(), func(t *testing.T) {
			for i := 0; i < 8; i++ {
				c := randomCase(r, kind)
				if i == 0 { // 270 taps: tiled first passes, 16-bit argmax codes
					c.geom.KernelWidth, c.geom.KernelHeight, c.geom.DilationX, c.geom.DilationY = 15, 18, 1, 1
					c.dst.W, c.dst.H = c.dst.W+14, c.dst.H+17
				}
				in := gradInput(r, kind, c.src.N*c.src.C*c.src.H*c.src.W)
				dy := randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)
				checkGradientHalf(t, dev, c, in, dy, kind.IsMax() && i%2 == 1)
			}
		})
	}
}

// Channel views of float16 images: a forward into two views of one image
// (concatenation), and a gradient between channel ranges.
func TestFloat16ChannelViews(t *testing.T) {
	dev := vktest.Open(t)
	requireHalf(t, dev)
	ctx := context.Background()
	r := rand.New(rand.NewSource(163))
	sd := padding.Descriptor{N: 2, C: 7, H: 5, W: 5} // odd planes: views at odd half offsets
	input := toHalf(randomData(r, sd.N*sd.C*sd.H*sd.W))
	im := newHalfImage(t, dev, sd, input)
	cat := newHalfImage(t, dev, padding.Descriptor{N: 2, C: 9, H: 3, W: 3}, filled(2*9*9, 0))
	left, err := cat.ChannelView(0, 4)
	require.NoError(t, err)
	right, err := cat.ChannelView(4, 5)
	require.NoError(t, err)
	assert.Equal(t, ops.Float16, right.Format())
	for _, kind := range kinds {
		g := ops.Geometry{KernelWidth: 2, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
		f, k, err := newForward(dev, kind, g)
		require.NoError(t, err)
		k.Offset = ops.Offset{X: 1, Y: 1}
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			k.SourceFeatureChannelOffset, k.SourceFeatureChannelMaxCount = 3, 4
			if err := f.Encode(cb, im, left); err != nil {
				return err
			}
			k.SourceFeatureChannelOffset, k.SourceFeatureChannelMaxCount = 0, 5
			return f.Encode(cb, im, right)
		}))
		got, err := cat.Read(ctx)
		require.NoError(t, err)
		in, _ := ref.TensorOf(sd.N, sd.C, sd.H, sd.W, input)
		full := ref.NewTensor[float32](2, 7, 3, 3)
		rg := poolCase{kind: kind, geom: g, off: k.Offset}.refGeometry()
		require.NoError(t, ref.Pool(rg, in, &full))
		want := make([]float32, len(got))
		for n := 0; n < 2; n++ {
			for c := 0; c < 9; c++ {
				from := c + 3
				if c >= 4 {
					from = c - 4
				}
				copy(want[(n*9+c)*9:][:9], full.Data[(n*7+from)*9:][:9])
			}
		}
		require.NoError(t, compareHalf(refKind(kind), got, want, nil), kind)
	}

	// A gradient from dy channels [1, 4) of a view into dx channels [2, 5).
	for _, kind := range kinds {
		g := ops.Geometry{KernelWidth: 2, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
		f, k, err := newForward(dev, kind, g)
		require.NoError(t, err)
		f.SetRecordArgmax(true)
		k.SourceFeatureChannelOffset, k.SourceFeatureChannelMaxCount, k.DestinationFeatureChannelOffset = 2, 3, 1
		k.Offset = ops.Offset{X: 1, Y: 1}
		dd := padding.Descriptor{N: 2, C: 5, H: 3, W: 3}
		dy := toHalf(randomData(r, dd.N*dd.C*dd.H*dd.W))
		dst := newHalfImage(t, dev, dd, nil)
		dyIm := newHalfImage(t, dev, dd, dy)
		gk, err := ops.NewPoolingGradient(dev, kind, g)
		require.NoError(t, err)
		var dx *ops.Image
		var st *ops.PoolingGradientState
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			if st, err = f.EncodeWithState(cb, im, dst); err != nil {
				return err
			}
			dx, err = gk.EncodeNew(cb, dyIm, im, st)
			return err
		}))
		got, err := dx.Read(ctx)
		require.NoError(t, err)
		dx.Close()
		st.Close()
		slice := func(d []float32, desc padding.Descriptor, c0 int) []float32 {
			var out []float32
			hw := desc.H * desc.W
			for n := 0; n < desc.N; n++ {
				out = append(out, d[(n*desc.C+c0)*hw:(n*desc.C+c0+3)*hw]...)
			}
			return out
		}
		c := poolCase{kind: kind, geom: g, off: k.Offset, src: padding.Descriptor{N: 2, C: 3, H: 5, W: 5}, dst: padding.Descriptor{N: 2, C: 3, H: 3, W: 3}}
		part := refGradient(t, c, slice(input, sd, 2), slice(dy, dd, 1))
		want := make([]float32, len(got)) // 0 outside channels [2, 5)
		for n := 0; n < 2; n++ {
			copy(want[(n*7+2)*25:][:75], part[n*75:][:75])
		}
		require.NoError(t, compareHalf(refKind(kind), got, want, nil), kind)
	}
}

// Float16 tensors over the storage-buffer range split like float32 ones;
// with odd planes the parts start mid-word.
func TestFloat16LargeTensorsAreSplit(t *testing.T) {
	dev := vktest.Open(t, vk.Options{MaxStorageBufferRange: 32 << 10})
	requireHalf(t, dev)
	r := rand.New(rand.NewSource(164))
	for _, sd := range []padding.Descriptor{{N: 9, C: 3, H: 31, W: 37}, {N: 2, C: 13, H: 61, W: 57}} {
		for _, kind := range kinds {
			g := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
			c := poolCase{kind: kind, geom: g, src: sd, edge: ops.EdgeClamp, off: ops.Offset{X: 1, Y: 1},
				dst: padding.Descriptor{N: sd.N, C: sd.C, H: (sd.H + 1) / 2, W: (sd.W + 1) / 2}}
			in := randomData(r, sd.N*sd.C*sd.H*sd.W)
			checkForwardHalf(t, dev, c, in, false)
			checkGradientHalf(t, dev, c, in, randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W), kind.IsMax())
		}
	}
}

// PyTorch's cases (float32 on its GPU) through float16 images: the inputs
// rounded to half, the results compared with PyTorch's rounded to half.
// Rounding an input moves it by at most 2^-11 of its magnitude, so on top
// of compareHalf's tolerance a value may move by 2^-11 times the same
// kernel run on the inputs' magnitudes (average and max gradients: sums
// of |terms|; L2 norm: the norm itself), three times that for the L2
// gradient, whose terms are products of dy, x and 1/out. Forward max is
// exact, rounding being monotone. A max gradient whose argmax changes
// because rounding made two values of a window equal is not comparable;
// such cases are counted and skipped. Every third case runs (all ops, both
// argmax paths), to keep the test short on lavapipe.
func TestFloat16MatchesPyTorch(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	requireHalf(t, dev)
	ctx := context.Background()
	abs := func(d []float32) []float32 {
		out := make([]float32, len(d))
		for i, v := range d {
			out[i] = float32(math.Abs(float64(v)))
		}
		return out
	}
	skipped := 0
	for i, c := range loadTorch(t) {
		if i%3 != 0 {
			continue
		}
		f, _ := torchKernel(t, dev, c)
		f.SetRecordArgmax(i%2 == 0)
		gk, err := ops.NewPoolingGradient(dev, f.Kind(), f.Geometry())
		require.NoError(t, err, c.Name)
		in, out, dy, wantDx := c.Tensors()
		src := newHalfImage(t, dev, in.Shape(), in.Data)
		dyIm := newHalfImage(t, dev, out.Shape(), dy.Data)
		dst, dx, st := forwardBackward(t, dev, f, gk, src, dyIm, c.Name)
		gotOut, err := dst.Read(ctx)
		require.NoError(t, err)
		gotDx, err := dx.Read(ctx)
		require.NoError(t, err)
		geom := stateGeometry(st)
		dst.Close()
		dx.Close()
		st.Close()
		kind := map[string]ref.Kind{"max": ref.Max, "avg": ref.Average, "l2": ref.L2Norm}[c.Op]

		// The kernels on the magnitudes bound what input rounding moves.
		absIn, _ := ref.TensorOf(in.N, in.C, in.H, in.W, abs(in.Data))
		absDy, _ := ref.TensorOf(out.N, out.C, out.H, out.W, abs(dy.Data))
		outScale := ref.NewTensor[float32](out.N, out.C, out.H, out.W)
		require.NoError(t, ref.Pool(geom, absIn, &outScale), c.Name)
		dxScale := ref.NewTensor[float32](in.N, in.C, in.H, in.W)
		winners := absIn // max: the winners of the real input, with |dy|
		if kind == ref.Max {
			winners = in
		}
		require.NoError(t, ref.PoolGradient(geom, winners, absDy, &dxScale), c.Name)
		factor := 0x1p-11
		if kind == ref.L2Norm {
			factor = 3 * 0x1p-11
		}
		require.NoError(t, compareHalf(kind, gotOut, out.Data, func(i int) float64 { return 0x1p-11 * float64(outScale.Data[i]) }), c.Name)

		if kind == ref.Max {
			// Compare only where rounding kept every window's winner.
			halfIn, _ := ref.TensorOf(in.N, in.C, in.H, in.W, toHalf(in.Data))
			a32, err := ref.Argmax(geom, in, out.Shape())
			require.NoError(t, err)
			a16, err := ref.Argmax(geom, halfIn, out.Shape())
			require.NoError(t, err)
			if fmt.Sprint(a32) != fmt.Sprint(a16) {
				skipped++
				continue
			}
			// The same winners: dx sums the same dy, each rounded.
			kind = ref.Average // compare with the sums' tolerance
		}
		require.NoError(t, compareHalf(kind, gotDx, wantDx.Data, func(i int) float64 { return factor * float64(dxScale.Data[i]) }), c.Name)
	}
	t.Logf("%d max cases skipped: rounding to half changed a window's winner", skipped)
	assert.Less(t, skipped, 10)
}

// Bad input: formats mixed in one encode (named), float16 where the device
// lacks 16-bit storage, and kernels that take float32 only.
func TestFloat16BadInput(t *testing.T) {
	dev := vktest.Open(t)
	requireHalf(t, dev)
	ctx := context.Background()
	sd := padding.Descriptor{N: 1, C: 2, H: 4, W: 4}
	dd := padding.Descriptor{N: 1, C: 2, H: 2, W: 2}
	h16 := newHalfImage(t, dev, sd, filled(32, 1))
	h32 := newImage(t, dev, sd, filled(32, 1))
	d16 := newHalfImage(t, dev, dd, nil)
	d32 := newImage(t, dev, dd, nil)
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()

	k, err := ops.NewPoolingMax(dev, 2, 2, 2, 2)
	require.NoError(t, err)
	err = k.Encode(cb, h16, d32)
	require.ErrorIs(t, err, ops.ErrFormat)
	assert.Contains(t, err.Error(), "PoolingMax")
	assert.Contains(t, err.Error(), "source image "+h16.String()+" is float16")
	assert.Contains(t, err.Error(), "destination image "+d32.String()+" is float32")
	_, err = k.EncodeWithState(cb, h32, d16)
	require.ErrorIs(t, err, ops.ErrFormat)

	// Gradient: dy, the source image and dx share a format.
	var st *ops.PoolingGradientState
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		st, err = k.EncodeWithState(cb, h16, d16)
		return err
	}))
	defer st.Close()
	gk, err := ops.NewPoolingMaxGradient(dev, 2, 2, 2, 2)
	require.NoError(t, err)
	err = gk.Encode(cb, d16, h32, st, newHalfImage(t, dev, sd, nil))
	require.ErrorIs(t, err, ops.ErrFormat)
	assert.Contains(t, err.Error(), "source gradient")
	assert.Contains(t, err.Error(), "source image")
	err = gk.Encode(cb, d16, h16, st, newImage(t, dev, sd, nil))
	require.ErrorIs(t, err, ops.ErrFormat)
	assert.Contains(t, err.Error(), "destination gradient")
	_, err = gk.EncodeNew(cb, d32, h16, st)
	require.ErrorIs(t, err, ops.ErrFormat)
	// A state from float16 images serves float32 ones of the same shape.
	require.NoError(t, gk.Encode(cb, d32, h32, st, newImage(t, dev, sd, nil)))
	require.NoError(t, cb.Reset())

	// Float32-only kernels.
	add, err := ops.NewAdd(dev)
	require.NoError(t, err)
	err = add.Encode(cb, d16, d16, newHalfImage(t, dev, dd, nil))
	require.ErrorIs(t, err, ops.ErrFormat)
	assert.Contains(t, err.Error(), "float32 images only")
	loss, err := ops.NewLoss(dev, ops.LossDescriptor{Reduction: ops.ReductionSum})
	require.NoError(t, err)
	defer loss.Close()
	one := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 1}, nil)
	require.ErrorIs(t, loss.Encode(cb, d16, d16, one), ops.ErrFormat)
	assert.Equal(t, 0, cb.Commands(), "nothing recorded")

	// The bit forms need float16 images; formats must be known.
	assert.ErrorIs(t, h32.WriteFloat16(ctx, make([]uint16, 32)), ops.ErrFormat)
	_, err = h32.ReadFloat16(ctx)
	assert.ErrorIs(t, err, ops.ErrFormat)
	assert.ErrorIs(t, h16.WriteFloat16(ctx, make([]uint16, 31)), ops.ErrShape)
	_, err = ops.NewImage(dev, ops.ImageDescriptor{N: 1, C: 1, H: 1, W: 1, Format: 7})
	assert.ErrorIs(t, err, ops.ErrInvalidImage)
	buf, err := dev.NewBuffer(64, "arena")
	require.NoError(t, err)
	defer buf.Close()
	_, err = ops.NewImageOn(buf, 1, ops.ImageDescriptor{N: 1, C: 1, H: 2, W: 2, Format: ops.Float16})
	assert.ErrorIs(t, err, ops.ErrInvalidImage, "odd byte offset")
	on, err := ops.NewImageOn(buf, 2, ops.ImageDescriptor{N: 1, C: 1, H: 2, W: 2, Format: ops.Float16})
	require.NoError(t, err)
	require.NoError(t, on.Write(ctx, []float32{1, 2, 3, 4}))
	v, err := on.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4}, v)

	// A device without 16-bit storage: no float16 images at all.
	no := vktest.Open(t, vk.Options{NoFloat16Storage: true})
	assert.False(t, no.Limits().Float16Storage)
	_, err = ops.NewImage(no, ops.ImageDescriptor{N: 1, C: 1, H: 2, W: 2, Format: ops.Float16, Label: "half"})
	require.ErrorIs(t, err, ops.ErrDeviceLimit)
	assert.Contains(t, err.Error(), `"half"`)
	assert.Contains(t, err.Error(), "storageBuffer16BitAccess")
	nbuf, err := no.NewBuffer(64, "arena")
	require.NoError(t, err)
	defer nbuf.Close()
	_, err = ops.NewImageOn(nbuf, 0, ops.ImageDescriptor{N: 1, C: 1, H: 2, W: 2, Format: ops.Float16})
	require.ErrorIs(t, err, ops.ErrDeviceLimit)
	f32, err := ops.NewImage(no, ops.ImageDescriptor{N: 1, C: 1, H: 2, W: 2})
	require.NoError(t, err)
	f32.Close()
}

// The direct passes load a strip's source columns as aligned pairs, quads
// or (float16) octets starting PAR columns before the strip's first tap:
// every phase of the first tap against the load width, at strides 1, 2
// and 3, with a width that allows the widest loads and one that allows
// none, in float32 and float16, forward and gradient.
func TestVectorLoadsEveryPhase(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	half := dev.Limits().Float16Storage
	r := rand.New(rand.NewSource(170))
	for _, kind := range kinds {
		for _, s := range []int{1, 2, 3} {
			for _, w := range []int{32, 27} {
				for offX := -3; offX <= 4; offX++ {
					g := ops.Geometry{KernelWidth: 3, KernelHeight: 2, StrideX: s, StrideY: 1, DilationX: 1, DilationY: 1}
					if kind == ops.KindDilatedMax {
						g.DilationX = 2
					}
					c := poolCase{kind: kind, geom: g, edge: ops.EdgeMode(offX & 1),
						src: padding.Descriptor{N: 1, C: 2, H: 4, W: w},
						dst: padding.Descriptor{N: 1, C: 2, H: 3, W: (w + s - 1) / s}, off: ops.Offset{X: offX, Y: 1}}
					in := gradInput(r, kind, 2*4*w)
					dy := randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)
					checkForward(t, dev, c, in)
					checkGradient(t, dev, c, in, dy, offX%2 == 0)
					if half {
						checkForwardHalf(t, dev, c, in, offX%2 != 0)
						checkGradientHalf(t, dev, c, in, dy, offX%2 == 0)
					}
				}
			}
		}
	}
}
