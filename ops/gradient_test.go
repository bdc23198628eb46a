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

// setArgmax sets RecordArgmax on a max kernel; other kinds ignore it.
func setArgmax(f ops.Pooling, on bool) { f.SetRecordArgmax(on) }

// gradInput draws a forward source with ref.PoolingInput: ties and NaNs
// for the max kinds.
func gradInput(r *rand.Rand, kind ops.PoolingKind, n int) []float32 {
	return ref.PoolingInput(r, kind.IsMax(), n)
}

// gradResult runs c's forward with state (recording argmax when record)
// and the gradient's EncodeNew of dy in one command buffer, and returns
// dx and the state (closed by the test's cleanup).
func gradResult(t *testing.T, dev *vk.Device, c poolCase, input, dy []float32, record bool) ([]float32, *ops.PoolingGradientState) {
	t.Helper()
	f, k, err := newForward(dev, c.kind, c.geom)
	require.NoError(t, err, c)
	c.configure(f, k)
	setArgmax(f, record)
	g, err := ops.NewPoolingGradient(dev, c.kind, c.geom)
	require.NoError(t, err, c)
	src := newImage(t, dev, c.src, input)
	dst := newImage(t, dev, c.dst, filled(c.dst.N*c.dst.C*c.dst.H*c.dst.W, poisonValue))
	dyIm := newImage(t, dev, c.dst, dy)
	var st *ops.PoolingGradientState
	var dx *ops.Image
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		if st, err = f.EncodeWithState(cb, src, dst); err != nil {
			return err
		}
		t.Cleanup(func() { st.Close() })
		dx, err = g.EncodeNew(cb, dyIm, src, st)
		return err
	}), c)
	defer dx.Close()
	require.Equal(t, c.src, dx.Descriptor().Descriptor(), c)
	assert.Equal(t, record && c.kind.IsMax(), st.HasArgmax(), c)
	got, err := dx.Read(context.Background())
	require.NoError(t, err)
	return got, st
}

// refGradient is ref.PoolGradient for c.
func refGradient(t *testing.T, c poolCase, input, dy []float32) []float32 {
	t.Helper()
	in, err := ref.TensorOf(c.src.N, c.src.C, c.src.H, c.src.W, input)
	require.NoError(t, err)
	dyT, err := ref.TensorOf(c.dst.N, c.dst.C, c.dst.H, c.dst.W, dy)
	require.NoError(t, err)
	dx := ref.NewTensor[float32](c.src.N, c.src.C, c.src.H, c.src.W)
	require.NoError(t, ref.PoolGradient(c.refGeometry(), in, dyT, &dx), c)
	return dx.Data
}

// checkGradient runs c forward and backward on the GPU and compares dx with
// the reference (exact for max, ref.SumTolerance for sums).
func checkGradient(t *testing.T, dev *vk.Device, c poolCase, input, dy []float32, record bool) {
	t.Helper()
	got, _ := gradResult(t, dev, c, input, dy, record)
	require.NoError(t, ref.Compare(refKind(c.kind), got, refGradient(t, c, input, dy)), "%v argmax=%v", c, record)
}

func TestGradientMatchesReference(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(43))
	for _, kind := range kinds {
		t.Run(kind.String(), func(t *testing.T) {
			for i := 0; i < 60; i++ {
				c := randomCase(r, kind)
				in := gradInput(r, kind, c.src.N*c.src.C*c.src.H*c.src.W)
				dy := randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)
				checkGradient(t, dev, c, in, dy, kind.IsMax() && i%2 == 1)
			}
		})
	}
}

// Every kernel size 1-7 and 15 against every stride 1-4 (dilation 1-3 for
// dilated max), as the forward sweep, in one edge mode each by turns (so
// each kernel size and each stride meets both modes; both modes for every
// geometry cost CI's cold lavapipe a minute more).
func TestGradientGeometrySweep(t *testing.T) {
	heavy(t)
	if testing.Short() {
		t.Skip("sweep")
	}
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(8))
	src := padding.Descriptor{N: 2, C: 3, H: 23, W: 19}
	for _, kind := range kinds {
		input := gradInput(r, kind, src.N*src.C*src.H*src.W)
		dils := []int{1}
		if kind == ops.KindDilatedMax {
			dils = []int{1, 2, 3}
		}
		for ki, k := range []int{1, 2, 3, 4, 5, 6, 7, 15} {
			for s := 1; s <= 4; s++ {
				for _, d := range dils {
					for _, edge := range []ops.EdgeMode{ops.EdgeZero, ops.EdgeClamp} {
						if (ki+s+d+int(edge))%2 == 1 {
							continue
						}
						g := ops.Geometry{KernelWidth: k, KernelHeight: (k+1)%8 + 1, StrideX: s, StrideY: 5 - s, DilationX: d, DilationY: d}
						keX, keY := (g.KernelWidth-1)*d+1, (g.KernelHeight-1)*d+1
						c := poolCase{kind: kind, geom: g, edge: edge, src: src,
							dst: padding.Descriptor{N: 2, C: 3, H: (src.H+keY)/g.StrideY + 1, W: (src.W+keX)/g.StrideX + 1},
							off: ops.Offset{X: keX/2 - 1, Y: keY / 2}}
						dy := randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)
						checkGradient(t, dev, c, input, dy, s%2 == 0)
					}
				}
			}
		}
	}
}

// Hand-worked max gradients: ties go to the first maximum in row-major tap
// order, NaN beats numbers, an outside tap (0 under EdgeZero) can win and
// then passes its gradient nowhere, and overlapping windows add up.
func TestMaxGradientTiesAndNaN(t *testing.T) {
	dev := vktest.Open(t)
	nan := float32(math.NaN())
	g2 := ops.Geometry{KernelWidth: 2, KernelHeight: 1, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}
	for _, tc := range []struct {
		name   string
		edge   ops.EdgeMode
		off    int
		in, dy []float32
		want   []float32
	}{
		// Windows (x-1, x) for x = 0..3; the first, under EdgeZero, reads 0 and 5.
		{"ties go left", ops.EdgeClamp, 0, []float32{5, 5, 5, 5}, []float32{1, 2, 4, 8}, []float32{1 + 2, 4, 8, 0}},
		{"NaN wins", ops.EdgeClamp, 0, []float32{1, nan, 3, nan}, []float32{1, 2, 4, 8}, []float32{1, 2 + 4, 0, 8}},
		{"outside zero wins", ops.EdgeZero, 0, []float32{-1, -2, 0, 3}, []float32{1, 2, 4, 8}, []float32{2, 0, 4, 8}},
		{"inside zero after outside", ops.EdgeZero, 0, []float32{0, -2, -3, -4}, []float32{1, 2, 4, 8}, []float32{2, 4, 8, 0}},
	} {
		c := poolCase{kind: ops.KindMax, geom: g2, edge: tc.edge, off: ops.Offset{X: tc.off},
			src: padding.Descriptor{N: 1, C: 1, H: 1, W: 4}, dst: padding.Descriptor{N: 1, C: 1, H: 1, W: 4}}
		require.Equal(t, tc.want, refGradient(t, c, tc.in, tc.dy), "reference: %s", tc.name)
		for _, record := range []bool{false, true} {
			got, _ := gradResult(t, dev, c, tc.in, tc.dy, record)
			assert.Equal(t, tc.want, got, "%s argmax=%v", tc.name, record)
		}
	}
}

// A window whose L2 norm is 0 contributes 0, not NaN.
func TestL2GradientZeroWindow(t *testing.T) {
	dev := vktest.Open(t)
	c := poolCase{kind: ops.KindL2Norm, geom: ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1},
		src: padding.Descriptor{N: 1, C: 1, H: 4, W: 4}, dst: padding.Descriptor{N: 1, C: 1, H: 2, W: 2}, off: ops.Offset{X: 1, Y: 1}}
	in := []float32{0, 0, 3, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0}
	got, _ := gradResult(t, dev, c, in, []float32{1, 1, 1, 1}, false)
	want := []float32{0, 0, 0.6, 0, 0, 0, 0, 0.8, 1, 0, 0, 0, 0, 0, 0, 0}
	require.NoError(t, ref.Compare(ref.L2Norm, got, want))
}

// The argmax recorded in the state is ref.Argmax's, in 8 and 16 bits, and
// gradients from it are bit-identical to gradients that recompute it.
func TestArgmaxStateMatchesRecompute(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(44))
	for i := 0; i < 40; i++ {
		kind := []ops.PoolingKind{ops.KindMax, ops.KindDilatedMax}[i%2]
		c := randomCase(r, kind)
		if i%10 == 0 { // 270 taps: 16-bit indices
			c.geom.KernelWidth, c.geom.KernelHeight = 15, 18
			c.dst.W, c.dst.H = c.dst.W+14, c.dst.H+17
		}
		in := gradInput(r, kind, c.src.N*c.src.C*c.src.H*c.src.W)
		dy := randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)
		a, st := gradResult(t, dev, c, in, dy, true)
		b, _ := gradResult(t, dev, c, in, dy, false)
		require.True(t, sameBits(a, b), "argmax and recompute differ: %v", c)
		wantBits := 8
		if c.geom.KernelWidth*c.geom.KernelHeight > 255 {
			wantBits = 16
		}
		assert.Equal(t, wantBits, st.ArgmaxBits(), c)
		got, err := st.ReadArgmax(context.Background())
		require.NoError(t, err)
		src, _ := ref.TensorOf(c.src.N, c.src.C, c.src.H, c.src.W, in)
		want, err := ref.Argmax(c.refGeometry(), src, c.dst)
		require.NoError(t, err)
		require.Equal(t, want, got, c)
	}
}

// The same inputs give the same bits on every run.
func TestGradientDeterministic(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(45))
	for _, kind := range kinds {
		c := poolCase{kind: kind, geom: ops.Geometry{KernelWidth: 5, KernelHeight: 4, StrideX: 1, StrideY: 2, DilationX: 1, DilationY: 1},
			edge: ops.EdgeZero, src: padding.Descriptor{N: 2, C: 5, H: 31, W: 29}, off: ops.Offset{X: 1, Y: 1}}
		if kind == ops.KindDilatedMax {
			c.geom.DilationX, c.geom.DilationY = 2, 3
		}
		c.dst = padding.Descriptor{N: 2, C: 5, H: 17, W: 30}
		in := randomData(r, c.src.N*c.src.C*c.src.H*c.src.W)
		dy := randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)
		for _, record := range []bool{false, true} {
			first, _ := gradResult(t, dev, c, in, dy, record)
			for i := 0; i < 4; i++ {
				again, _ := gradResult(t, dev, c, in, dy, record)
				require.True(t, sameBits(first, again), "%v run %d", kind, i)
			}
		}
	}
}

// stateGeometry is the reference geometry a gradient state describes.
func stateGeometry(st *ops.PoolingGradientState) ref.Geometry {
	g := st.Geometry
	return ref.Geometry{Kind: refKind(st.Kind), KernelW: g.KernelWidth, KernelH: g.KernelHeight,
		StrideX: g.StrideX, StrideY: g.StrideY, DilationX: g.DilationX, DilationY: g.DilationY,
		OffsetX: st.Offset.X, OffsetY: st.Offset.Y, OffsetZ: st.Offset.Z, EdgeMode: st.EdgeMode,
		ZeroPad: st.ZeroPad, ExcludeEdges: st.ExcludeEdges, Pads: st.EdgePads,
		Clip: ref.Clip{X: st.Clip.X, Y: st.Clip.Y, Z: st.Clip.Z, W: st.Clip.Width, H: st.Clip.Height, D: st.Clip.Depth}}
}

// Forward then backward through EncodeNewWithState and the gradient's
// EncodeNew for every kernel, padding method and preset; the inverse
// policy sizes the gradient from the state.
func TestGradientEveryPaddingPolicy(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(46))
	src := padding.Descriptor{N: 2, C: 3, H: 13, W: 11}
	for _, kind := range kinds {
		input := gradInput(r, kind, src.N*src.C*src.H*src.W)
		for pi, pol := range policies() {
			g := ops.Geometry{KernelWidth: 3, KernelHeight: 2, StrideX: 2, StrideY: 3, DilationX: 1, DilationY: 1}
			if kind == ops.KindDilatedMax {
				g.DilationX, g.DilationY = 2, 1
			}
			name := fmt.Sprintf("%v/%s", kind, pol.Label())
			f, k, err := newForward(dev, kind, g)
			require.NoError(t, err)
			k.Padding = pol
			setArgmax(f, pi%2 == 0)
			gk, err := ops.NewPoolingGradient(dev, kind, g)
			require.NoError(t, err)
			im := newImage(t, dev, src, input)
			var dst, dx *ops.Image
			var st *ops.PoolingGradientState
			var dy []float32
			require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
				var err error
				if dst, st, err = f.EncodeNewWithState(cb, im); err != nil {
					return err
				}
				d := dst.Descriptor()
				dy = randomData(r, d.N*d.C*d.H*d.W)
				dyIm := newImage(t, dev, d.Descriptor(), dy)
				dx, err = gk.EncodeNew(cb, dyIm, im, st)
				return err
			}), name)
			defer dst.Close()
			defer dx.Close()
			defer st.Close()
			assert.Equal(t, pol, st.Padding, name)
			assert.Equal(t, src, st.SourceDescriptor(), name)
			assert.Equal(t, ops.Offset{X: k.Offset.X, Y: k.Offset.Y}, st.Offset, name)
			assert.Equal(t, ops.Offset{X: 0, Y: 0}, gk.Properties().Offset, name)
			assert.Equal(t, [2]int{-k.Offset.X, -k.Offset.Y}, [2]int{gk.Properties().KernelOffsetX, gk.Properties().KernelOffsetY}, name)

			// The inverse policy gives back the source size and the offset.
			inv, err := padding.Resolve(padding.Inverse(st.Padding), []padding.Descriptor{st.Destination}, []padding.State{st},
				padding.Kernel{KernelW: g.KernelWidth, KernelH: g.KernelHeight, StrideX: g.StrideX, StrideY: g.StrideY,
					DilationX: g.DilationX, DilationY: g.DilationY})
			require.NoError(t, err, name)
			assert.Equal(t, src, inv.Dest, name)
			assert.Equal(t, [2]int{st.Offset.X, st.Offset.Y}, [2]int{inv.OffsetX, inv.OffsetY}, name)

			got, err := dx.Read(context.Background())
			require.NoError(t, err)
			in, _ := ref.TensorOf(src.N, src.C, src.H, src.W, input)
			d := st.Destination
			dyT, _ := ref.TensorOf(d.N, d.C, d.H, d.W, dy)
			want := ref.NewTensor[float32](src.N, src.C, src.H, src.W)
			require.NoError(t, ref.PoolGradient(stateGeometry(st), in, dyT, &want), name)
			require.NoError(t, ref.Compare(refKind(kind), got, want.Data), name)
		}
	}
}

// PyTorch autograd: every case of testdata/torch/pool_cases.json through
// the explicit-pads policy, EncodeNewWithState and the gradient's EncodeNew.
func TestGradientMatchesPyTorch(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	for i, c := range loadTorch(t) {
		f, _ := torchKernel(t, dev, c)
		setArgmax(f, i%2 == 0)
		gk, err := ops.NewPoolingGradient(dev, f.Kind(), f.Geometry())
		require.NoError(t, err, c.Name)
		in, out, dy, wantDx := c.Tensors()
		src := newImage(t, dev, in.Shape(), in.Data)
		dyIm := newImage(t, dev, out.Shape(), dy.Data)
		dst, dx, st := forwardBackward(t, dev, f, gk, src, dyIm, c.Name)
		require.Equal(t, in.Shape(), dx.Descriptor().Descriptor(), c.Name)
		got, err := dx.Read(context.Background())
		require.NoError(t, err)
		dst.Close()
		dx.Close()
		st.Close()
		require.NoError(t, ref.Compare(c.Geometry().Kind, got, wantDx.Data), c.Name)
	}
}

// The explicit form with the properties EncodeNew would set gives the same
// gradient; a destination clip with the kernel offset moved by the clip
// origin writes the same values there and nothing outside.
func TestGradientExplicitForm(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(47))
	for _, kind := range kinds {
		g := ops.Geometry{KernelWidth: 3, KernelHeight: 4, StrideX: 2, StrideY: 1, DilationX: 1, DilationY: 1}
		if kind == ops.KindDilatedMax {
			g.DilationX = 2
		}
		c := poolCase{kind: kind, geom: g, edge: ops.EdgeClamp, off: ops.Offset{X: 2, Y: 1, Z: 1},
			clip: ops.Region{X: 1, Y: 2, Width: 5, Height: 6, Depth: 1},
			src:  padding.Descriptor{N: 3, C: 4, H: 12, W: 14}, dst: padding.Descriptor{N: 2, C: 4, H: 10, W: 9}}
		in := gradInput(r, kind, c.src.N*c.src.C*c.src.H*c.src.W)
		dy := randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)
		full, st := gradResult(t, dev, c, in, dy, false)
		require.NoError(t, ref.Compare(refKind(kind), full, refGradient(t, c, in, dy)), c)

		gk, err := ops.NewPoolingGradient(dev, kind, g)
		require.NoError(t, err)
		p := gk.Properties()
		src := newImage(t, dev, c.src, in)
		dyIm := newImage(t, dev, c.dst, dy)
		n := c.src.N * c.src.C * c.src.H * c.src.W
		dx := newImage(t, dev, c.src, filled(n, poisonValue))
		// Batch image 1 of dx from dy batch image 0, all channels.
		p.Offset = ops.Offset{X: st.Clip.X, Y: st.Clip.Y, Z: 0}
		p.KernelOffsetX, p.KernelOffsetY = -st.Offset.X, -st.Offset.Y
		p.ClipRect = ops.Region{Z: 1, Depth: 1}
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return gk.Encode(cb, dyIm, src, st, dx) }))
		got, err := dx.Read(context.Background())
		require.NoError(t, err)
		plane := c.src.C * c.src.H * c.src.W
		require.True(t, sameBits(full[plane:2*plane], got[plane:2*plane]), kind)
		assert.Equal(t, filled(plane, poisonValue), got[:plane], kind)

		// A clip at (3, 2), 4x5: the kernel offset moves with the clip origin.
		require.NoError(t, dx.Write(context.Background(), filled(n, poisonValue)))
		p.ClipRect = ops.Region{X: 3, Y: 2, Z: 1, Width: 4, Height: 5, Depth: 1}
		p.KernelOffsetX, p.KernelOffsetY = -st.Offset.X+3, -st.Offset.Y+2
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return gk.Encode(cb, dyIm, src, st, dx) }))
		got, err = dx.Read(context.Background())
		require.NoError(t, err)
		for i := range got {
			nn, rest := i/plane, i%plane
			y, x := rest/c.src.W%c.src.H, rest%c.src.W
			inside := nn == 1 && x >= 3 && x < 7 && y >= 2 && y < 7
			if inside {
				require.True(t, sameBits(full[i:i+1], got[i:i+1]), "%v at %d", kind, i)
			} else {
				require.Equal(t, float32(poisonValue), got[i], "%v at %d", kind, i)
			}
		}
	}
}

// Channel offsets: the forward reads source channels [2, 5) into
// destination channels [1, 4); EncodeNew's gradient has the source's shape,
// the reference's values in those channels and 0 in the others.
func TestGradientChannelOffsets(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(48))
	ctx := context.Background()
	for _, kind := range kinds {
		g := ops.Geometry{KernelWidth: 2, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
		f, k, err := newForward(dev, kind, g)
		require.NoError(t, err)
		setArgmax(f, true)
		k.SourceFeatureChannelOffset, k.SourceFeatureChannelMaxCount, k.DestinationFeatureChannelOffset = 2, 3, 1
		k.Offset = ops.Offset{X: 1, Y: 1}
		sd := padding.Descriptor{N: 2, C: 6, H: 9, W: 8}
		dd := padding.Descriptor{N: 2, C: 5, H: 5, W: 4}
		input := randomData(r, sd.N*sd.C*sd.H*sd.W)
		dy := randomData(r, dd.N*dd.C*dd.H*dd.W)
		src := newImage(t, dev, sd, input)
		dst := newImage(t, dev, dd, nil)
		dyIm := newImage(t, dev, dd, dy)
		gk, err := ops.NewPoolingGradient(dev, kind, g)
		require.NoError(t, err)
		var dx *ops.Image
		var st *ops.PoolingGradientState
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			if st, err = f.EncodeWithState(cb, src, dst); err != nil {
				return err
			}
			dx, err = gk.EncodeNew(cb, dyIm, src, st)
			return err
		}))
		defer st.Close()
		defer dx.Close()
		got, err := dx.Read(ctx)
		require.NoError(t, err)
		// The reference on the channel slices.
		slice := func(d []float32, desc padding.Descriptor, c0 int) []float32 {
			var out []float32
			hw := desc.H * desc.W
			for n := 0; n < desc.N; n++ {
				out = append(out, d[(n*desc.C+c0)*hw:(n*desc.C+c0+3)*hw]...)
			}
			return out
		}
		c := poolCase{kind: kind, geom: g, off: k.Offset, src: padding.Descriptor{N: 2, C: 3, H: 9, W: 8}, dst: padding.Descriptor{N: 2, C: 3, H: 5, W: 4}}
		want := refGradient(t, c, slice(input, sd, 2), slice(dy, dd, 1))
		hw := sd.H * sd.W
		for n := 0; n < sd.N; n++ {
			for ch := 0; ch < sd.C; ch++ {
				plane := got[(n*sd.C+ch)*hw:][:hw]
				if ch < 2 || ch >= 5 {
					assert.Equal(t, make([]float32, hw), plane, "%v n%d c%d", kind, n, ch)
					continue
				}
				require.NoError(t, ref.Compare(refKind(kind), plane, want[(n*3+ch-2)*hw:][:hw]), "%v n%d c%d", kind, n, ch)
			}
		}
	}
}

// Gradients of tensors larger than the storage-buffer range are split like
// the forward's (the range is capped to 64 KiB).
func TestGradientLargeTensorsAreSplit(t *testing.T) {
	r := rand.New(rand.NewSource(49))
	for _, tc := range []struct {
		name string
		src  padding.Descriptor
	}{
		{"batch groups", padding.Descriptor{N: 9, C: 3, H: 40, W: 37}},
		{"channel groups", padding.Descriptor{N: 2, C: 13, H: 61, W: 57}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := vktest.Open(t, vk.Options{MaxStorageBufferRange: 64 << 10})
			for _, kind := range kinds {
				g := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
				c := poolCase{kind: kind, geom: g, src: tc.src, edge: ops.EdgeClamp,
					dst: padding.Descriptor{N: tc.src.N, C: tc.src.C, H: (tc.src.H + 1) / 2, W: (tc.src.W + 1) / 2}}
				in := randomData(r, tc.src.N*tc.src.C*tc.src.H*tc.src.W)
				dy := randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)
				checkGradient(t, dev, c, in, dy, kind.IsMax())
			}
		})
	}
}

func TestGradientBadInput(t *testing.T) {
	dev := vktest.Open(t)
	other := vktest.Open(t)
	g := ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	sd := padding.Descriptor{N: 2, C: 3, H: 8, W: 8}
	dd := padding.Descriptor{N: 2, C: 3, H: 4, W: 4}
	src := newImage(t, dev, sd, randomData(rand.New(rand.NewSource(1)), 2*3*64))
	dst := newImage(t, dev, dd, nil)
	dy := newImage(t, dev, dd, nil)
	dx := newImage(t, dev, sd, nil)
	// States of max, of average, of a max with another stride, and of
	// another device.
	fwd := func(d *vk.Device, kind ops.PoolingKind, g ops.Geometry, src, dst *ops.Image) *ops.PoolingGradientState {
		f, k, err := newForward(d, kind, g)
		require.NoError(t, err)
		k.Offset = ops.Offset{X: 1, Y: 1}
		var st *ops.PoolingGradientState
		require.NoError(t, run(t, d, func(cb *vk.CommandBuffer) error {
			var err error
			st, err = f.EncodeWithState(cb, src, dst)
			return err
		}))
		t.Cleanup(func() { st.Close() })
		return st
	}
	stMax := fwd(dev, ops.KindMax, g, src, dst)
	stAvg := fwd(dev, ops.KindAverage, g, src, dst)
	g3 := g
	g3.StrideX = 3
	stStride := fwd(dev, ops.KindMax, g3, src, newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 4, W: 3}, nil))
	stDil := fwd(dev, ops.KindDilatedMax, ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 2, DilationY: 1}, src, dst)
	stOther := fwd(other, ops.KindMax, g, newImage(t, other, sd, nil), newImage(t, other, dd, nil))
	stClosed := fwd(dev, ops.KindMax, g, src, dst)
	require.NoError(t, stClosed.Close())
	require.NoError(t, stClosed.Close())
	// A forward that wrote channels [0, 2) of batch image 1 only.
	fk, err := ops.NewPoolingMax(dev, 2, 2, 2, 2)
	require.NoError(t, err)
	fk.SourceFeatureChannelMaxCount = 2
	fk.ClipRect = ops.Region{Z: 1}
	fk.Offset.Z = 1
	var stPart *ops.PoolingGradientState
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		stPart, err = fk.EncodeWithState(cb, src, dst)
		return err
	}))
	defer stPart.Close()

	closedIm := newImage(t, dev, dd, nil)
	require.NoError(t, closedIm.Close())
	wrongDy := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 4, W: 5}, nil)
	wrongSrc := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 8, W: 9}, nil)
	wrongDx := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 7, W: 8}, nil)

	k, err := ops.NewPoolingMaxGradient(dev, 2, 2, 2, 2)
	require.NoError(t, err)
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	for _, tc := range []struct {
		name        string
		setup       func(p *ops.GradientKernel)
		dy, src, dx *ops.Image
		st          *ops.PoolingGradientState
		want        error
		msg         string
	}{
		{"nil state", nil, dy, src, dx, nil, ops.ErrState, "nil gradient state"},
		{"closed state", nil, dy, src, dx, stClosed, ops.ErrClosed, "gradient state"},
		{"state of another kind", nil, dy, src, dx, stAvg, ops.ErrState, "PoolingAverage forward kernel"},
		{"state of another stride", nil, dy, src, dx, stStride, ops.ErrState, "stride 3x2"},
		{"state of a dilated kernel", nil, dy, src, dx, stDil, ops.ErrState, "DilatedPoolingMax"},
		{"state of another device", nil, dy, src, dx, stOther, ops.ErrDevice, "another device"},
		{"source gradient of the wrong size", nil, wrongDy, src, dx, stMax, ops.ErrShape, "forward destination"},
		{"source image of the wrong size", nil, dy, wrongSrc, dx, stMax, ops.ErrShape, "forward source"},
		{"destination gradient of the wrong size", nil, dy, src, wrongDx, stMax, ops.ErrShape, "destination gradient"},
		{"closed source gradient", nil, closedIm, src, dx, stMax, ops.ErrClosed, "source gradient"},
		{"nil source image", nil, dy, nil, dx, stMax, ops.ErrInvalidImage, "source image"},
		{"destination is the source image", nil, dy, src, src, stMax, ops.ErrAlias, "share storage"},
		{"channels the forward did not write", nil, dy, src, dx, stPart, ops.ErrState, "channels [0, 3)"},
		{"batch images the forward did not write", func(p *ops.GradientKernel) { p.SourceFeatureChannelMaxCount = 2 }, dy, src, dx, stPart, ops.ErrState, "batch images [0, 2)"},
		{"clip outside", func(p *ops.GradientKernel) { p.ClipRect = ops.Region{X: 8} }, dy, src, dx, stMax, ops.ErrGeometry, "clip rectangle"},
	} {
		*k = *mustMaxGrad(t, dev)
		if tc.setup != nil {
			tc.setup(k.Properties())
		}
		err := k.Encode(cb, tc.dy, tc.src, tc.st, tc.dx)
		require.ErrorIs(t, err, tc.want, tc.name)
		assert.Contains(t, err.Error(), tc.msg, tc.name)
		assert.Contains(t, err.Error(), "PoolingMaxGradient", tc.name)
		if tc.dx == dx && tc.setup == nil && tc.st != stPart { // EncodeNew sets the properties from the state
			_, err = k.EncodeNew(cb, tc.dy, tc.src, tc.st)
			require.ErrorIs(t, err, tc.want, "EncodeNew: "+tc.name)
		}
	}
	assert.Equal(t, 0, cb.Commands(), "nothing recorded")
	_, err = stAvg.ReadArgmax(context.Background())
	assert.ErrorIs(t, err, ops.ErrState)
	_, err = stClosed.ReadArgmax(context.Background())
	assert.ErrorIs(t, err, ops.ErrClosed)

	// Construction.
	_, err = ops.NewPoolingMaxGradient(dev, 0, 2, 1, 1)
	assert.ErrorIs(t, err, ops.ErrGeometry)
	_, err = ops.NewPoolingGradient(dev, ops.KindAverage, ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 1, StrideY: 1, DilationX: 2, DilationY: 1})
	assert.ErrorIs(t, err, ops.ErrGeometry)
	_, err = ops.NewPoolingL2NormGradient(nil, 2, 2, 1, 1)
	assert.ErrorIs(t, err, ops.ErrDevice)
	gd, err := ops.NewPoolingGradient(dev, ops.KindMax, ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 1, StrideY: 1, DilationX: 2, DilationY: 1})
	require.NoError(t, err)
	assert.Equal(t, ops.KindDilatedMax, gd.Kind())
}

func mustMaxGrad(t *testing.T, dev *vk.Device) *ops.PoolingMaxGradient {
	k, err := ops.NewPoolingMaxGradient(dev, 2, 2, 2, 2)
	require.NoError(t, err)
	return k
}

// forwardBackward runs f's EncodeNewWithState on src and gk's EncodeNew
// from its state with dyIm, in one command buffer, and returns the
// forward output, dx and the state.
func forwardBackward(t *testing.T, dev *vk.Device, f ops.Pooling, gk ops.PoolingGradient, src, dyIm *ops.Image, name string) (dst, dx *ops.Image, st *ops.PoolingGradientState) {
	t.Helper()
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		if dst, st, err = f.EncodeNewWithState(cb, src); err != nil {
			return err
		}
		dx, err = gk.EncodeNew(cb, dyIm, src, st)
		return err
	}), name)
	return dst, dx, st
}
