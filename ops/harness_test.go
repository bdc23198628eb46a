package ops_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// poisonValue fills destinations before a kernel runs, so pixels a kernel
// must not touch (outside the clip) and pixels it forgot both show.
const poisonValue = 12345.5

// poolCase is one forward pooling configuration.
type poolCase struct {
	kind     ops.PoolingKind
	geom     ops.Geometry
	edge     ops.EdgeMode
	zeroPad  padding.Pads
	exclude  bool
	edgePads padding.Pads
	off      ops.Offset
	clip     ops.Region
	src, dst padding.Descriptor
}

func (c poolCase) String() string {
	g := c.geom
	return fmt.Sprintf("%v k%dx%d s%dx%d d%dx%d %v zp%v ex%v/%v off%v clip%v src%v dst%v", c.kind,
		g.KernelWidth, g.KernelHeight, g.StrideX, g.StrideY, g.DilationX, g.DilationY, c.edge,
		c.zeroPad, c.exclude, c.edgePads, c.off, c.clip, c.src, c.dst)
}

// refKind maps a kernel family to the reference's.
func refKind(k ops.PoolingKind) ref.Kind {
	return map[ops.PoolingKind]ref.Kind{ops.KindMax: ref.Max, ops.KindAverage: ref.Average,
		ops.KindL2Norm: ref.L2Norm, ops.KindDilatedMax: ref.DilatedMax}[k]
}

func (c poolCase) refGeometry() ref.Geometry {
	g := c.geom
	return ref.Geometry{
		Kind: refKind(c.kind), KernelW: g.KernelWidth, KernelH: g.KernelHeight,
		StrideX: g.StrideX, StrideY: g.StrideY, DilationX: g.DilationX, DilationY: g.DilationY,
		OffsetX: c.off.X, OffsetY: c.off.Y, OffsetZ: c.off.Z, EdgeMode: c.edge,
		ZeroPad: c.zeroPad, ExcludeEdges: c.exclude, Pads: c.edgePads,
		Clip: ref.Clip{X: c.clip.X, Y: c.clip.Y, Z: c.clip.Z, W: c.clip.Width, H: c.clip.Height, D: c.clip.Depth},
	}
}

// newForward makes the kernel of c's kind and returns it with its
// properties.
func newForward(dev *vk.Device, kind ops.PoolingKind, g ops.Geometry) (ops.Pooling, *ops.Kernel, error) {
	k, err := ops.NewPooling(dev, kind, g)
	if err != nil {
		return nil, nil, err
	}
	return k, k.Properties(), nil
}

// configure sets c's properties on a kernel made by newForward.
func (c poolCase) configure(f ops.Pooling, k *ops.Kernel) {
	k.Offset, k.ClipRect, k.EdgeMode = c.off, c.clip, c.edge
	if a, ok := f.(*ops.PoolingAverage); ok {
		a.ZeroPad, a.ExcludeEdges, a.EdgePads = c.zeroPad, c.exclude, c.edgePads
	}
}

func randomData(r *rand.Rand, n int) []float32 { return ref.Normal(r, n) }

func filled(n int, v float32) []float32 {
	d := make([]float32, n)
	for i := range d {
		d[i] = v
	}
	return d
}

func newImage(t testing.TB, dev *vk.Device, d padding.Descriptor, data []float32) *ops.Image {
	t.Helper()
	im, err := ops.NewImage(dev, ops.ImageDescriptor{N: d.N, C: d.C, H: d.H, W: d.W})
	require.NoError(t, err)
	t.Cleanup(func() { im.Close() })
	if data != nil {
		require.NoError(t, im.Write(context.Background(), data))
	}
	return im
}

// run encodes fn on a fresh command buffer and waits for it.
func run(t testing.TB, dev *vk.Device, fn func(cb *vk.CommandBuffer) error) error {
	t.Helper()
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	if err := fn(cb); err != nil {
		return err
	}
	require.NoError(t, cb.Commit())
	require.NoError(t, cb.Wait(context.Background()))
	return nil
}

// checkForward runs c on the GPU and on the CPU reference with the same
// input and compares (exact for max, ref.SumTolerance for sums).
func checkForward(t *testing.T, dev *vk.Device, c poolCase, input []float32) {
	t.Helper()
	f, k, err := newForward(dev, c.kind, c.geom)
	require.NoError(t, err, c)
	c.configure(f, k)
	src := newImage(t, dev, c.src, input)
	init := filled(c.dst.N*c.dst.C*c.dst.H*c.dst.W, poisonValue)
	dst := newImage(t, dev, c.dst, init)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return f.Encode(cb, src, dst) }), c)
	got, err := dst.Read(context.Background())
	require.NoError(t, err)

	in, err := ref.TensorOf(c.src.N, c.src.C, c.src.H, c.src.W, input)
	require.NoError(t, err)
	want, err := ref.TensorOf(c.dst.N, c.dst.C, c.dst.H, c.dst.W, append([]float32(nil), init...))
	require.NoError(t, err)
	require.NoError(t, ref.Pool(c.refGeometry(), in, &want), c)
	require.NoError(t, ref.Compare(refKind(c.kind), got, want.Data), c)
}

// sameBits reports whether two float32 slices are equal value for value
// (NaN equal to NaN).
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(float64(a[i])) && math.IsNaN(float64(b[i]))) {
			return false
		}
	}
	return true
}

// heavy marks a test that compiles many pipelines and runs it in parallel
// with the package's other heavy tests, after every serial one (so none of
// them sees a serial test's temporary settings, such as
// SetWinogradScratchMax). Lavapipe compiles a pipeline on one thread, most
// of these tests' time with a cold shader cache, so on CI's 2 cores two at
// a time take about the time of one. Each opens its own device. A test
// that sets a package setting (the Set* hooks of the export files) or
// counts allocations (testing.AllocsPerRun) stays serial.
func heavy(t *testing.T) {
	t.Helper()
	t.Parallel()
}
