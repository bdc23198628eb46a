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

// Batch normalization on the GPU against ops/ref (float64, on the same
// inputs: float16 images hold their values rounded to half). Tolerances:
//
//   - y and dx: |got - want| <= 1e-4 * max(1, |want|) for float32; float16
//     results add ulp16(want) (the one rounding to half).
//   - mean and variance: 1e-5 * max(1, |want|) (the shifted sums lose no
//     digits to large means; TestBatchNormalizationLargeMean).
//   - dgamma and dbeta (float32 sums over N*H*W values): 1e-5 times the
//     sum of the magnitudes of the terms.
//   - running statistics: 1e-5 * max(1, |want|).

// bnF64 widens v.
func bnF64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// bnParam makes a 1×C×1×1 float32 image holding v.
func bnParam(t testing.TB, dev *vk.Device, v []float32) *ops.Image {
	t.Helper()
	return newImage(t, dev, padding.Descriptor{N: 1, C: len(v), H: 1, W: 1}, v)
}

// bnImage makes an image of format f holding data (nil: undefined).
func bnImage(t testing.TB, dev *vk.Device, f ops.Format, d padding.Descriptor, data []float32) *ops.Image {
	t.Helper()
	if f == ops.Float16 {
		return newHalfImage(t, dev, d, data)
	}
	return newImage(t, dev, d, data)
}

func bnRead(t testing.TB, im *ops.Image) []float32 {
	t.Helper()
	v, err := im.Read(context.Background())
	require.NoError(t, err)
	return v
}

// bnCompare checks got against want within tol(i).
func bnCompare(what string, got []float32, want []float64, tol func(i int) float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad, first := 0, -1
	for i := range got {
		g, w := float64(got[i]), want[i]
		if math.IsNaN(g) && math.IsNaN(w) {
			continue
		}
		if !(math.Abs(g-w) <= tol(i)) {
			if bad == 0 {
				first = i
			}
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	return fmt.Errorf("%s: %d of %d values differ; first at %d: got %v, want %v (tolerance %g)", what, bad, len(got), first, got[first], want[first], tol(first))
}

// bnValueTol is the tolerance of y and dx.
func bnValueTol(f ops.Format, want []float64) func(int) float64 {
	return func(i int) float64 {
		t := 1e-4 * math.Max(1, math.Abs(want[i]))
		if f == ops.Float16 {
			t += ulp16(want[i])
		}
		return t
	}
}

func bnRelTol(want []float64, rel float64) func(int) float64 {
	return func(i int) float64 { return rel * math.Max(1, math.Abs(want[i])) }
}

// bnRefNeuron is the reference of a neuron descriptor.
func bnRefNeuron(d ops.NeuronDescriptor) ref.Neuron {
	return ref.Neuron{Type: ref.NeuronType(d.Type), A: float64(d.A), B: float64(d.B), C: float64(d.C)}
}

// bnCase is one batch normalization configuration.
type bnCase struct {
	n, c, h, w int
	neuron     ops.NeuronDescriptor
	format     ops.Format
	training   bool
	scale      float32 // input scale and shift
	shift      float32
}

func (c bnCase) String() string {
	mode := "inference"
	if c.training {
		mode = "training"
	}
	return fmt.Sprintf("%dx%dx%dx%d-%v-%v-%s", c.n, c.c, c.h, c.w, c.neuron, c.format, mode)
}

// bnSetup holds a case's kernels, images and host data.
type bnSetup struct {
	bn                  *ops.BatchNormalization
	grad                *ops.BatchNormalizationGradient
	st                  *ops.BatchNormalizationState
	gamma, beta, rm, rv *ops.Image
	x, y, dy, dx        *ops.Image
	dgamma, dbeta       *ops.Image
	xv, dyv             []float32 // as the images hold them
	gv, bv, rmv, rvv    []float32
}

func bnNewSetup(t *testing.T, dev *vk.Device, r *rand.Rand, c bnCase, eps float32) *bnSetup {
	t.Helper()
	s := &bnSetup{}
	d := padding.Descriptor{N: c.n, C: c.c, H: c.h, W: c.w}
	cnt := c.n * c.c * c.h * c.w
	s.xv = randomData(r, cnt)
	for i := range s.xv {
		s.xv[i] = s.xv[i]*c.scale + c.shift
	}
	s.dyv = randomData(r, cnt)
	if c.format == ops.Float16 {
		s.xv, s.dyv = toHalf(s.xv), toHalf(s.dyv)
	}
	s.gv, s.bv = randomData(r, c.c), randomData(r, c.c)
	s.rmv, s.rvv = randomData(r, c.c), make([]float32, c.c)
	for i := range s.gv {
		s.gv[i] = 1 + 0.5*s.gv[i]
		s.rvv[i] = 0.5 + float32(r.Float64())
	}
	s.gamma, s.beta = bnParam(t, dev, s.gv), bnParam(t, dev, s.bv)
	s.rm, s.rv = bnParam(t, dev, s.rmv), bnParam(t, dev, s.rvv)
	s.dgamma, s.dbeta = bnParam(t, dev, make([]float32, c.c)), bnParam(t, dev, make([]float32, c.c))
	desc := ops.NewBatchNormalizationDescriptor(c.c)
	desc.Epsilon, desc.Neuron = eps, c.neuron
	var err error
	s.bn, err = ops.NewBatchNormalization(dev, desc, s.gamma, s.beta, s.rm, s.rv)
	require.NoError(t, err)
	t.Cleanup(func() { s.bn.Close() })
	s.grad, err = ops.NewBatchNormalizationGradient(s.bn)
	require.NoError(t, err)
	t.Cleanup(func() { s.grad.Close() })
	s.st, err = s.bn.NewState()
	require.NoError(t, err)
	t.Cleanup(func() { s.st.Close() })
	s.x, s.dy = bnImage(t, dev, c.format, d, s.xv), bnImage(t, dev, c.format, d, s.dyv)
	s.y, s.dx = bnImage(t, dev, c.format, d, nil), bnImage(t, dev, c.format, d, nil)
	return s
}

// bnWant is the reference result of a case.
type bnWant struct {
	y, dx, dgamma, dbeta []float64
	mean, variance       []float64
	rm, rv               []float64
	l1gamma, l1beta      []float64 // sums of |terms| of dgamma and dbeta
}

func bnReference(t *testing.T, c bnCase, s *bnSetup, eps float32) bnWant {
	t.Helper()
	x := must(ref.TensorOf(c.n, c.c, c.h, c.w, bnF64(s.xv)))
	dy := must(ref.TensorOf(c.n, c.c, c.h, c.w, bnF64(s.dyv)))
	b := ref.BatchNorm{Epsilon: float64(eps), Neuron: bnRefNeuron(c.neuron)}
	g, bt := bnF64(s.gv), bnF64(s.bv)
	var w bnWant
	w.rm, w.rv = bnF64(s.rmv), bnF64(s.rvv)
	if c.training {
		w.mean, w.variance = ref.BatchNormStatistics(x)
		ref.UpdateRunning(w.rm, w.rv, w.mean, w.variance, c.n*c.h*c.w, 0.1)
	} else {
		w.mean, w.variance = bnF64(s.rmv), bnF64(s.rvv)
	}
	y := ref.NewTensor[float64](c.n, c.c, c.h, c.w)
	require.NoError(t, b.Forward(x, g, bt, w.mean, w.variance, &y))
	dx := ref.NewTensor[float64](c.n, c.c, c.h, c.w)
	w.dgamma, w.dbeta = make([]float64, c.c), make([]float64, c.c)
	require.NoError(t, b.Gradient(x, dy, g, bt, w.mean, w.variance, c.training, &dx, w.dgamma, w.dbeta))
	w.y, w.dx = y.Data, dx.Data
	w.l1gamma, w.l1beta = make([]float64, c.c), make([]float64, c.c)
	for i := range x.Data {
		ch := (i / (c.h * c.w)) % c.c
		inv := 1 / math.Sqrt(w.variance[ch]+float64(eps))
		xhat := (x.Data[i] - w.mean[ch]) * inv
		gr := dy.Data[i] * b.Neuron.Derivative(g[ch]*xhat+bt[ch], ch)
		w.l1beta[ch] += math.Abs(gr)
		w.l1gamma[ch] += math.Abs(gr * xhat)
	}
	return w
}

// bnRun encodes the forward (training or inference) and EncodeAll.
func bnRun(t *testing.T, dev *vk.Device, c bnCase, s *bnSetup) {
	t.Helper()
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if c.training {
			if err := s.bn.EncodeTraining(cb, s.x, s.st, s.y); err != nil {
				return err
			}
		} else if err := s.bn.EncodeInference(cb, s.x, s.y, s.st); err != nil {
			return err
		}
		return s.grad.EncodeAll(cb, s.dy, s.x, s.st, s.dx, s.dgamma, s.dbeta)
	}), c)
}

// bnCheck compares every result of s with the reference.
func bnCheck(t *testing.T, c bnCase, s *bnSetup, w bnWant) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, bnCompare("y", bnRead(t, s.y), w.y, bnValueTol(c.format, w.y)), c)
	require.NoError(t, bnCompare("dx", bnRead(t, s.dx), w.dx, bnValueTol(c.format, w.dx)), c)
	l1 := func(v []float64) func(int) float64 { return func(i int) float64 { return 1e-5 * math.Max(1, v[i]) } }
	require.NoError(t, bnCompare("dgamma", bnRead(t, s.dgamma), w.dgamma, l1(w.l1gamma)), c)
	require.NoError(t, bnCompare("dbeta", bnRead(t, s.dbeta), w.dbeta, l1(w.l1beta)), c)
	mean, err := s.st.ReadMean(ctx)
	require.NoError(t, err)
	require.NoError(t, bnCompare("state mean", mean, w.mean, bnRelTol(w.mean, 1e-5)), c)
	variance, err := s.st.ReadVariance(ctx)
	require.NoError(t, err)
	require.NoError(t, bnCompare("state variance", variance, w.variance, bnRelTol(w.variance, 1e-5)), c)
	dg, err := s.st.ReadGammaGradient(ctx)
	require.NoError(t, err)
	require.Equal(t, bnRead(t, s.dgamma), dg, "state dgamma equals the image")
	require.NoError(t, bnCompare("running mean", bnRead(t, s.rm), w.rm, bnRelTol(w.rm, 1e-5)), c)
	require.NoError(t, bnCompare("running variance", bnRead(t, s.rv), w.rv, bnRelTol(w.rv, 1e-5)), c)
}

// bnCases is the GPU-vs-reference table: odd shapes, channel counts not
// multiples of 4, batch 1..5, neurons, both modes, both formats (each
// neuron in one format, to keep the pipelines lavapipe compiles few).
func bnCases(dev *vk.Device) []bnCase {
	relu := ops.NewNeuronDescriptor(ops.NeuronReLU)
	tanh := ops.NewNeuronDescriptor(ops.NeuronTanH)
	sig := ops.NewNeuronDescriptor(ops.NeuronSigmoid)
	half := ops.Float16
	if !dev.Limits().Float16Storage {
		half = ops.Float32
	}
	cases := []bnCase{
		{n: 1, c: 1, h: 1, w: 2, training: true},
		{n: 2, c: 3, h: 5, w: 7, training: true},
		{n: 5, c: 16, h: 4, w: 4, training: true},
		{n: 3, c: 5, h: 1, w: 1, training: true},
		{n: 1, c: 7, h: 13, w: 11, training: true},
		{n: 4, c: 9, h: 8, w: 12, training: true, neuron: relu},
		{n: 2, c: 6, h: 16, w: 16, training: true, neuron: tanh, format: half},
		{n: 3, c: 2, h: 33, w: 20, training: true, scale: 3, shift: 5},
		{n: 2, c: 3, h: 5, w: 7},
		{n: 4, c: 11, h: 6, w: 6, neuron: sig},
		{n: 1, c: 4, h: 1, w: 1},
	}
	var out []bnCase
	for _, c := range cases {
		if c.scale == 0 {
			c.scale = 1
		}
		out = append(out, c)
		if c.neuron.Type == ops.NeuronNone && half == ops.Float16 {
			c.format = half
			out = append(out, c)
		}
	}
	return out
}

// bnTunings are the chunk sizes every case runs under (bytes of input a
// statistics chunk aims at): the default rule (here one chunk of whole
// planes per channel), and small chunks, many per channel: segments of a
// plane, or groups of a few planes where planes are small.
var bnTunings = []struct {
	name  string
	chunk int
}{
	{"default", 0},
	{"chunks-256B", 256},
	{"chunks-1KiB", 1024},
}

// bnSetChunk sets the chunk size of every kernel of s.
func bnSetChunk(s *bnSetup, bytes int) {
	ops.SetBNChunkBytes(s.bn, bytes)
	ops.SetBNChunkBytes(s.grad, bytes)
}

func TestBatchNormalizationMatchesReference(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	for _, tu := range bnTunings {
		t.Run(tu.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(1))
			for _, c := range bnCases(dev) {
				s := bnNewSetup(t, dev, r, c, 1e-5)
				bnSetChunk(s, tu.chunk)
				bnRun(t, dev, c, s)
				bnCheck(t, c, s, bnReference(t, c, s, 1e-5))
			}
		})
	}
}

// TestBatchNormalizationDeterministic: the same encodes twice give the
// same bits (the default chunks and many small ones), and so does a second
// kernel of the same configuration.
func TestBatchNormalizationDeterministic(t *testing.T) {
	dev := vktest.Open(t)
	c := bnCase{n: 3, c: 5, h: 9, w: 10, training: true, scale: 2, shift: 1, neuron: ops.NewNeuronDescriptor(ops.NeuronTanH)}
	for _, chunk := range []int{0, 256} {
		s := bnNewSetup(t, dev, rand.New(rand.NewSource(2)), c, 1e-5)
		s2 := bnNewSetup(t, dev, rand.New(rand.NewSource(2)), c, 1e-5)
		bnSetChunk(s, chunk)
		bnSetChunk(s2, chunk)
		results := func(s *bnSetup) [][]float32 {
			require.NoError(t, s.rm.Write(context.Background(), s.rmv))
			require.NoError(t, s.rv.Write(context.Background(), s.rvv))
			bnRun(t, dev, c, s)
			return [][]float32{bnRead(t, s.y), bnRead(t, s.dx), bnRead(t, s.dgamma), bnRead(t, s.dbeta), bnRead(t, s.rm), bnRead(t, s.rv)}
		}
		a, b, other := results(s), results(s), results(s2)
		for i := range a {
			require.True(t, sameBits(a[i], b[i]), "chunk %d: result %d differs between runs", chunk, i)
			require.True(t, sameBits(a[i], other[i]), "chunk %d: result %d differs between kernels", chunk, i)
		}
	}
}

// TestBatchNormalizationLargeMean: values 1000 ± 0.5 keep their variance
// (a plain sum of squares in float32 would lose it).
func TestBatchNormalizationLargeMean(t *testing.T) {
	dev := vktest.Open(t)
	for _, chunk := range []int{0, 1024} {
		r := rand.New(rand.NewSource(3))
		c := bnCase{n: 4, c: 3, h: 16, w: 16, training: true, scale: 0.5, shift: 1000}
		s := bnNewSetup(t, dev, r, c, 1e-5)
		bnSetChunk(s, chunk)
		bnRun(t, dev, c, s)
		w := bnReference(t, c, s, 1e-5)
		variance, err := s.st.ReadVariance(context.Background())
		require.NoError(t, err)
		for i, v := range variance {
			require.InDelta(t, w.variance[i], float64(v), 1e-4*w.variance[i], "channel %d", i)
		}
		y := bnRead(t, s.y)
		// x - mean in float32 at 1000 is exact to 6e-5; y scales it by
		// gamma/0.5.
		require.NoError(t, bnCompare("y", y, w.y, func(int) float64 { return 1e-3 }))
	}
}

// TestBatchNormalizationRunningStatistics: running mean and variance after
// several training encodes, as PyTorch updates them.
func TestBatchNormalizationRunningStatistics(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(4))
	c := bnCase{n: 3, c: 6, h: 5, w: 5, training: true, scale: 2, shift: -1}
	s := bnNewSetup(t, dev, r, c, 1e-5)
	rm, rv := bnF64(s.rmv), bnF64(s.rvv)
	for step := 0; step < 4; step++ {
		xv := randomData(r, len(s.xv))
		for i := range xv {
			xv[i] = xv[i]*float32(step+1) + float32(step)
		}
		require.NoError(t, s.x.Write(context.Background(), xv))
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return s.bn.EncodeTraining(cb, s.x, s.st, s.y) }))
		m, v := ref.BatchNormStatistics(must(ref.TensorOf(c.n, c.c, c.h, c.w, bnF64(xv))))
		ref.UpdateRunning(rm, rv, m, v, c.n*c.h*c.w, 0.1)
	}
	require.NoError(t, bnCompare("running mean", bnRead(t, s.rm), rm, bnRelTol(rm, 1e-5)))
	require.NoError(t, bnCompare("running variance", bnRead(t, s.rv), rv, bnRelTol(rv, 1e-5)))
}

// TestBatchNormalizationSubBatches: MPS's kernels over a batch encoded in
// two sub-batches (statistics accumulated, then normalization, running
// update, statistics gradient accumulated, then dx and the parameter
// gradients) equal the whole-batch reference.
func TestBatchNormalizationSubBatches(t *testing.T) {
	dev := vktest.Open(t)
	for _, tu := range bnTunings {
		t.Run(tu.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(5))
			c := bnCase{n: 5, c: 7, h: 6, w: 9, training: true, scale: 1.5, shift: 2, neuron: ops.NewNeuronDescriptor(ops.NeuronSoftPlus)}
			s := bnNewSetup(t, dev, r, c, 1e-3)
			bnSetChunk(s, tu.chunk)
			w := bnReference(t, c, s, 1e-3)
			plane := c.c * c.h * c.w
			sub := func(v []float32, n0, n int) *ops.Image {
				return newImage(t, dev, padding.Descriptor{N: n, C: c.c, H: c.h, W: c.w}, v[n0*plane:(n0+n)*plane])
			}
			x1, x2 := sub(s.xv, 0, 2), sub(s.xv, 2, 3)
			dy1, dy2 := sub(s.dyv, 0, 2), sub(s.dyv, 2, 3)
			y1, y2 := sub(make([]float32, len(s.xv)), 0, 2), sub(make([]float32, len(s.xv)), 2, 3)
			dx1, dx2 := sub(make([]float32, len(s.xv)), 0, 2), sub(make([]float32, len(s.xv)), 2, 3)
			stats := must(ops.NewBatchNormalizationStatistics(s.bn))
			sg := must(ops.NewBatchNormalizationStatisticsGradient(s.bn))
			defer sg.Close()
			ops.SetBNChunkBytes(sg, tu.chunk)
			require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
				for _, f := range []func() error{
					func() error { return stats.Encode(cb, x1, s.st) },
					func() error { return stats.Encode(cb, x2, s.st) },
					func() error { return s.bn.Encode(cb, x1, s.st, y1) },
					func() error { return s.bn.Encode(cb, x2, s.st, y2) },
					func() error { return s.bn.EncodeRunningStatisticsUpdate(cb, s.st) },
					func() error { return sg.Encode(cb, dy1, x1, s.st) },
					func() error { return sg.Encode(cb, dy2, x2, s.st) },
					func() error { return s.grad.Encode(cb, dy1, x1, s.st, dx1) },
					func() error { return s.grad.Encode(cb, dy2, x2, s.st, dx2) },
					func() error { return s.grad.EncodeParameterGradients(cb, s.st, s.dgamma, s.dbeta) },
				} {
					if err := f(); err != nil {
						return err
					}
				}
				return nil
			}))
			y := append(bnRead(t, y1), bnRead(t, y2)...)
			dx := append(bnRead(t, dx1), bnRead(t, dx2)...)
			require.NoError(t, bnCompare("y", y, w.y, bnValueTol(ops.Float32, w.y)))
			require.NoError(t, bnCompare("dx", dx, w.dx, bnValueTol(ops.Float32, w.dx)))
			l1 := func(v []float64) func(int) float64 { return func(i int) float64 { return 1e-5 * math.Max(1, v[i]) } }
			require.NoError(t, bnCompare("dgamma", bnRead(t, s.dgamma), w.dgamma, l1(w.l1gamma)))
			require.NoError(t, bnCompare("dbeta", bnRead(t, s.dbeta), w.dbeta, l1(w.l1beta)))
			require.NoError(t, bnCompare("running mean", bnRead(t, s.rm), w.rm, bnRelTol(w.rm, 1e-5)))
			require.NoError(t, bnCompare("running variance", bnRead(t, s.rv), w.rv, bnRelTol(w.rv, 1e-5)))
			require.Equal(t, c.n*c.h*c.w, s.st.Count())
		})
	}
}

// TestBatchNormalizationLargeTensorsAreSplit: with a 4 KiB storage-buffer
// range, tensors are cut into parts of batch images and of channels whose
// statistics merge to the reference's.
func TestBatchNormalizationLargeTensorsAreSplit(t *testing.T) {
	dev := vktest.Open(t, vk.Options{MaxStorageBufferRange: 4 << 10})
	r := rand.New(rand.NewSource(6))
	for _, c := range []bnCase{
		{n: 5, c: 3, h: 8, w: 8, training: true, scale: 1, shift: 3},   // 768 bytes a batch image: batch groups
		{n: 3, c: 6, h: 16, w: 16, training: true, scale: 2, shift: 0}, // 6 KiB a batch image: channel groups
		{n: 2, c: 5, h: 12, w: 12, scale: 1},
	} {
		for _, chunk := range []int{0, 256} {
			s := bnNewSetup(t, dev, r, c, 1e-5)
			bnSetChunk(s, chunk)
			bnRun(t, dev, c, s)
			bnCheck(t, c, s, bnReference(t, c, s, 1e-5))
		}
	}
}

// TestBatchNormalizationFusedMatchesPasses: a training batch of few values
// per channel runs forward and gradient as one fused dispatch each, with
// the same bits as the three passes over one chunk per channel (a chunk
// size that holds a whole channel): y, dx, dgamma, dbeta, the running
// statistics and the state's mean and variance, in float32 and float16,
// with and without a fused neuron.
func TestBatchNormalizationFusedMatchesPasses(t *testing.T) {
	dev := vktest.Open(t)
	// Also a channel of 2 x 96 x 90 = 17280 values (one workgroup a
	// channel, as ResNet-18's 28x28 layers at batch 32).
	for i, c := range append(bnCases(dev), bnCase{n: 2, c: 3, h: 96, w: 90, training: true, scale: 1, neuron: ops.NewNeuronDescriptor(ops.NeuronReLU)}) {
		if !c.training {
			continue
		}
		t.Run(fmt.Sprint(i, c), func(t *testing.T) {
			results := func(chunk int) ([][]float32, bool, bool) {
				s := bnNewSetup(t, dev, rand.New(rand.NewSource(int64(40+i))), c, 1e-5)
				bnSetChunk(s, chunk)
				bnRun(t, dev, c, s)
				mean, err := s.st.ReadMean(context.Background())
				require.NoError(t, err)
				variance, err := s.st.ReadVariance(context.Background())
				require.NoError(t, err)
				return [][]float32{bnRead(t, s.y), bnRead(t, s.dx), bnRead(t, s.dgamma), bnRead(t, s.dbeta),
					bnRead(t, s.rm), bnRead(t, s.rv), mean, variance}, ops.BNLastFused(s.bn), ops.BNLastFused(s.grad)
			}
			fused, fwd, grad := results(0)
			require.True(t, fwd && grad, "the default runs fused (forward %v, gradient %v)", fwd, grad)
			passes, fwd, grad := results(1 << 30)
			require.False(t, fwd || grad, "a set chunk size runs the passes")
			for j, what := range []string{"y", "dx", "dgamma", "dbeta", "running mean", "running variance", "mean", "variance"} {
				assert.True(t, sameBits(fused[j], passes[j]), "%s differs:\nfused  %v\npasses %v", what, fused[j], passes[j])
			}
		})
	}
}

// TestBatchNormalizationFusedBound: training batches of up to
// ops.BNFusedValues values per channel run fused by default, larger ones
// as the three passes; both match the reference.
func TestBatchNormalizationFusedBound(t *testing.T) {
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(41))
	for _, c := range []bnCase{
		{n: 2, c: 2, h: 128, w: 128, training: true, scale: 1}, // 32768 values a channel
		{n: 1, c: 2, h: 129, w: 255, training: true, scale: 1}, // 32895
	} {
		s := bnNewSetup(t, dev, r, c, 1e-5)
		bnRun(t, dev, c, s)
		bnCheck(t, c, s, bnReference(t, c, s, 1e-5))
		fused := c.n*c.h*c.w <= ops.BNFusedValues
		assert.Equal(t, fused, ops.BNLastFused(s.bn), "%v: forward fused", c)
		assert.Equal(t, fused, ops.BNLastFused(s.grad), "%v: gradient fused", c)
	}
}
