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

// Tolerances of the loss tests (float32 images): a value (a per-item loss
// or a gradient) within lossTol*max(1, |want|) of the float64 reference
// (the GPU's exp and log are within a few ulp; no value sums more than C
// terms); a reduced loss also within lossSumTol times the sum of the
// magnitudes of its terms (float32 sums over up to 10^4 items). Float16
// images add the spacing of halves at the value (one rounding when stored;
// the inputs are rounded to half before the reference sees them).
const (
	lossTol    = 2e-5
	lossSumTol = 2e-6
)

// lossRefDesc is d for package ref.
func lossRefDesc(d ops.LossDescriptor) ref.LossDescriptor {
	return ref.LossDescriptor{Type: ref.LossType(d.Type), Reduction: ref.Reduction(d.Reduction), Weight: float64(d.Weight),
		LabelSmoothing: float64(d.LabelSmoothing), NumberOfClasses: d.NumberOfClasses, Delta: float64(d.Delta), Epsilon: float64(d.Epsilon)}
}

// lossVariants are the descriptors the tables run for t and r: the
// defaults, then the type's own parameters, then those with a weight.
func lossVariants(t ops.LossType, r ops.Reduction) []ops.LossDescriptor {
	p := ops.LossDescriptor{Type: t, Reduction: r}
	switch t {
	case ops.LossSoftmaxCrossEntropy:
		p.LabelSmoothing = 0.2
	case ops.LossSigmoidCrossEntropy:
		p.LabelSmoothing = 0.3
	case ops.LossHuber:
		p.Delta = 0.6
	case ops.LossLog:
		p.Epsilon = 0.01
	}
	w := p
	w.Weight = 1.5
	if t == ops.LossSoftmaxCrossEntropy {
		w.NumberOfClasses = 10
	}
	return []ops.LossDescriptor{{Type: t, Reduction: r}, p, w}
}

// newLossImage makes an image of format f holding data (rounded to half
// for Float16).
func newLossImage(t testing.TB, dev *vk.Device, d padding.Descriptor, f ops.Format, data []float32) *ops.Image {
	if f == ops.Float16 {
		return newHalfImage(t, dev, d, data)
	}
	return newImage(t, dev, d, data)
}

// lossInputs draws a prediction, labels and (when weighted) per-item
// weights for d over shape sh, rounded to half for Float16.
func lossInputs(r *rand.Rand, d ops.LossDescriptor, sh padding.Descriptor, f ops.Format, weighted bool) (pv, lv, wv []float32) {
	pv, lv = ref.LossInputs(r, ref.LossType(d.Type), sh.N, sh.C, sh.H, sh.W)
	if weighted {
		wv = ref.LossWeights(r, ref.LossType(d.Type), sh.N, sh.C, sh.H, sh.W)
	}
	if f == ops.Float16 {
		pv, lv = toHalf(pv), toHalf(lv)
		if wv != nil {
			wv = toHalf(wv)
		}
	}
	return pv, lv, wv
}

// lossGPU runs the loss and its gradient of d on the GPU in one command
// buffer and returns both.
func lossGPU(t *testing.T, dev *vk.Device, d ops.LossDescriptor, sh padding.Descriptor, f ops.Format, pv, lv, wv []float32) (loss, grad []float32) {
	t.Helper()
	k, err := ops.NewLoss(dev, d)
	require.NoError(t, err)
	defer k.Close()
	pred, labels := newLossImage(t, dev, sh, f, pv), newLossImage(t, dev, sh, f, lv)
	var weights *ops.Image
	if wv != nil {
		weights = newLossImage(t, dev, d.WeightsDescriptor(pred.Descriptor()).Descriptor(), f, wv)
	}
	rd, err := d.ResultDescriptor(pred.Descriptor())
	require.NoError(t, err)
	lossIm := newLossImage(t, dev, rd.Descriptor(), f, nil)
	gradIm := newLossImage(t, dev, sh, f, nil)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if err := k.EncodeWeighted(cb, pred, labels, weights, lossIm); err != nil {
			return err
		}
		return k.EncodeGradientWeighted(cb, pred, labels, weights, gradIm)
	}))
	loss, err = lossIm.Read(context.Background())
	require.NoError(t, err)
	grad, err = gradIm.Read(context.Background())
	require.NoError(t, err)
	return loss, grad
}

// lossWant returns the reference's loss and gradient of d, and for each
// reduced loss the sum of the magnitudes of its weighted items.
func lossWant(t *testing.T, d ops.LossDescriptor, sh padding.Descriptor, pv, lv, wv []float32) (loss, grad []float64, sumAbs float64) {
	t.Helper()
	pt, err := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, pv)
	require.NoError(t, err)
	lt, err := ref.TensorOf(sh.N, sh.C, sh.H, sh.W, lv)
	require.NoError(t, err)
	rd := lossRefDesc(d)
	loss, err = ref.LossWith(rd, pt, lt, wv)
	require.NoError(t, err)
	grad, err = ref.LossGradientWith(rd, pt, lt, wv)
	require.NoError(t, err)
	rd.Reduction = ref.ReduceNone
	items, err := ref.LossWith(rd, pt, lt, wv)
	require.NoError(t, err)
	for _, v := range items {
		sumAbs += math.Abs(v)
	}
	return loss, grad, sumAbs
}

// lossCompare checks got against want with the tolerances above; extra is
// added to each value's tolerance.
func lossCompare(t *testing.T, name string, f ops.Format, got []float32, want []float64, extra float64) {
	t.Helper()
	require.Len(t, got, len(want), name)
	for i := range want {
		w, g := want[i], float64(got[i])
		if math.IsNaN(w) && math.IsNaN(g) {
			continue
		}
		tol := lossTol*max(1, math.Abs(w)) + extra
		if f == ops.Float16 {
			tol += ulp16(w)
		}
		require.InDelta(t, w, g, tol, "%s [%d]", name, i)
	}
}

// TestLossMatchesReference runs every loss type and reduction, with and
// without per-item weights, with each type's parameters and a weight,
// over odd shapes, on the GPU and on the float64 reference; a repeated
// run is bit-identical.
func TestLossMatchesReference(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(2))
	shapes := []padding.Descriptor{{N: 1, C: 1, H: 1, W: 1}, {N: 2, C: 5, H: 7, W: 3}, {N: 3, C: 4, H: 33, W: 31}}
	for typ := ops.LossType(0); typ.Valid(); typ++ {
		for red := ops.Reduction(0); red.Valid(); red++ {
			for _, weighted := range []bool{false, true} {
				for i, sh := range shapes {
					d := lossVariants(typ, red)[i]
					name := fmt.Sprintf("%+v weighted=%v %v", d, weighted, sh)
					pv, lv, wv := lossInputs(r, d, sh, ops.Float32, weighted)
					loss, grad := lossGPU(t, dev, d, sh, ops.Float32, pv, lv, wv)
					wantLoss, wantGrad, sumAbs := lossWant(t, d, sh, pv, lv, wv)
					lossCompare(t, name+" loss", ops.Float32, loss, wantLoss, lossSumTol*sumAbs)
					lossCompare(t, name+" gradient", ops.Float32, grad, wantGrad, 0)
					again, againGrad := lossGPU(t, dev, d, sh, ops.Float32, pv, lv, wv)
					require.True(t, sameBits(loss, again) && sameBits(grad, againGrad), "%s: a repeated run differs", name)
				}
			}
		}
	}
}

// TestLossFloat16 runs every type and reduction on float16 images (the
// inputs rounded to half for the reference too).
func TestLossFloat16(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	requireHalf(t, dev)
	r := rand.New(rand.NewSource(16))
	sh := padding.Descriptor{N: 2, C: 5, H: 7, W: 3}
	for typ := ops.LossType(0); typ.Valid(); typ++ {
		for red := ops.Reduction(0); red.Valid(); red++ {
			weighted := red == ops.ReductionSumByNonZeroWeights || typ%2 == 0
			d := lossVariants(typ, red)[2]
			name := fmt.Sprintf("float16 %+v weighted=%v", d, weighted)
			pv, lv, wv := lossInputs(r, d, sh, ops.Float16, weighted)
			loss, grad := lossGPU(t, dev, d, sh, ops.Float16, pv, lv, wv)
			wantLoss, wantGrad, sumAbs := lossWant(t, d, sh, pv, lv, wv)
			lossCompare(t, name+" loss", ops.Float16, loss, wantLoss, lossSumTol*sumAbs)
			lossCompare(t, name+" gradient", ops.Float16, grad, wantGrad, 0)
		}
	}
}

// TestLossSplits: tensors over the storage-buffer range are split into
// dispatches of whole batch images, whose bases then fall off multiples of
// 4 (the scalar path, beside the vector one); images placed at odd offsets
// of a buffer; and more units than workgroups (the grid stride).
func TestLossSplits(t *testing.T) {
	dev := vktest.Open(t, vk.Options{MaxStorageBufferRange: 16 << 10})
	r := rand.New(rand.NewSource(3))
	sh := padding.Descriptor{N: 7, C: 3, H: 19, W: 23} // 5.1 KiB a batch image: 3 per dispatch
	for _, typ := range []ops.LossType{ops.LossMeanSquaredError, ops.LossHuber, ops.LossSoftmaxCrossEntropy, ops.LossCosineDistance} {
		for _, red := range []ops.Reduction{ops.ReductionNone, ops.ReductionMean, ops.ReductionSumByNonZeroWeights} {
			d := lossVariants(typ, red)[2]
			name := fmt.Sprintf("split %+v", d)
			pv, lv, wv := lossInputs(r, d, sh, ops.Float32, true)
			loss, grad := lossGPU(t, dev, d, sh, ops.Float32, pv, lv, wv)
			wantLoss, wantGrad, sumAbs := lossWant(t, d, sh, pv, lv, wv)
			lossCompare(t, name+" loss", ops.Float32, loss, wantLoss, lossSumTol*sumAbs)
			lossCompare(t, name+" gradient", ops.Float32, grad, wantGrad, 0)
		}
	}
	// A batch image over the range is refused.
	big := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 64, W: 65}, nil)
	one := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 1}, nil)
	k := must(ops.NewLoss(dev, ops.LossDescriptor{Reduction: ops.ReductionSum}))
	defer k.Close()
	err := run(t, dev, func(cb *vk.CommandBuffer) error {
		return k.Encode(cb, big, newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 64, W: 65}, nil), one)
	})
	require.ErrorIs(t, err, ops.ErrDeviceLimit)
	assert.Contains(t, err.Error(), "max storage buffer range")

	// Images at element offsets 1, 2 and 3 of one buffer: no vector loads.
	dev2 := vktest.Open(t)
	sh = padding.Descriptor{N: 2, C: 3, H: 5, W: 7}
	n := sh.N * sh.C * sh.H * sh.W
	buf, err := dev2.NewBuffer(uint64(4*(3*n+8)), "loss arena")
	require.NoError(t, err)
	defer buf.Close()
	at := func(off int) *ops.Image {
		return must(ops.NewImageOn(buf, uint64(4*off), ops.ImageDescriptor{N: sh.N, C: sh.C, H: sh.H, W: sh.W}))
	}
	pred, labels, grad := at(1), at(n+2), at(2*n+3)
	d := ops.LossDescriptor{Type: ops.LossSigmoidCrossEntropy, Reduction: ops.ReductionMean, LabelSmoothing: 0.1}
	pv, lv, _ := lossInputs(r, d, sh, ops.Float32, false)
	require.NoError(t, pred.Write(context.Background(), pv))
	require.NoError(t, labels.Write(context.Background(), lv))
	lossIm := newImage(t, dev2, padding.Descriptor{N: 1, C: 1, H: 1, W: 1}, nil)
	k2 := must(ops.NewLoss(dev2, d))
	defer k2.Close()
	require.NoError(t, run(t, dev2, func(cb *vk.CommandBuffer) error {
		if err := k2.Encode(cb, pred, labels, lossIm); err != nil {
			return err
		}
		return k2.EncodeGradient(cb, pred, labels, grad)
	}))
	wantLoss, wantGrad, sumAbs := lossWant(t, d, sh, pv, lv, nil)
	got, err := lossIm.Read(context.Background())
	require.NoError(t, err)
	lossCompare(t, "offsets loss", ops.Float32, got, wantLoss, lossSumTol*sumAbs)
	got, err = grad.Read(context.Background())
	require.NoError(t, err)
	lossCompare(t, "offsets gradient", ops.Float32, got, wantGrad, 0)

	// Two workgroups for every pass: each strides over the rest.
	defer ops.SetLossGroupCap(2)()
	sh = padding.Descriptor{N: 2, C: 6, H: 29, W: 31}
	for _, typ := range []ops.LossType{ops.LossKullbackLeiblerDivergence, ops.LossCategoricalCrossEntropy} {
		for _, red := range []ops.Reduction{ops.ReductionNone, ops.ReductionSum, ops.ReductionSumByNonZeroWeights} {
			d := lossVariants(typ, red)[2]
			name := fmt.Sprintf("strided %+v", d)
			pv, lv, wv := lossInputs(r, d, sh, ops.Float32, true)
			loss, grad := lossGPU(t, dev2, d, sh, ops.Float32, pv, lv, wv)
			wantLoss, wantGrad, sumAbs := lossWant(t, d, sh, pv, lv, wv)
			lossCompare(t, name+" loss", ops.Float32, loss, wantLoss, lossSumTol*sumAbs)
			lossCompare(t, name+" gradient", ops.Float32, grad, wantGrad, 0)
		}
	}
}

// TestLossSpecialValues: all-zero weights give 0 under sum by nonzero
// weights (loss and gradient); NaN in the data propagates; zero labels of
// categorical cross-entropy and KL divergence contribute 0 where the
// prediction would give NaN.
func TestLossSpecialValues(t *testing.T) {
	dev := vktest.Open(t)
	sh := padding.Descriptor{N: 1, C: 2, H: 1, W: 3}
	nan := float32(math.NaN())
	d := ops.LossDescriptor{Type: ops.LossHuber, Reduction: ops.ReductionSumByNonZeroWeights, Weight: 2}
	loss, grad := lossGPU(t, dev, d, sh, ops.Float32, []float32{1, 2, 3, 4, 5, 6}, make([]float32, 6), make([]float32, 6))
	assert.Equal(t, []float32{0}, loss)
	assert.Equal(t, make([]float32, 6), grad)

	for _, typ := range []ops.LossType{ops.LossMeanSquaredError, ops.LossMeanAbsoluteError, ops.LossHinge, ops.LossHuber,
		ops.LossSigmoidCrossEntropy, ops.LossSoftmaxCrossEntropy, ops.LossCosineDistance} {
		d := ops.LossDescriptor{Type: typ}
		loss, grad := lossGPU(t, dev, d, sh, ops.Float32, []float32{nan, 0.5, 0.25, 1, 0, 1}, []float32{1, 0, 1, 0, 1, 0}, nil)
		assert.True(t, math.IsNaN(float64(loss[0])), "%v: loss of a NaN prediction %v", typ, loss)
		if typ != ops.LossCosineDistance { // its gradient -t does not depend on the prediction
			assert.True(t, math.IsNaN(float64(grad[0])), "%v: gradient of a NaN prediction %v", typ, grad)
		}
		assert.False(t, math.IsNaN(float64(loss[1])), "%v: %v", typ, loss)
	}

	d = ops.LossDescriptor{Type: ops.LossCategoricalCrossEntropy}
	loss, grad = lossGPU(t, dev, d, sh, ops.Float32, []float32{0, 0.5, 1, 1, 0.5, 0}, []float32{0, 0.5, 1, 1, 0.5, 0}, nil)
	assert.InDeltaSlice(t, []float32{0, float32(-math.Log(0.5)), 0}, loss, 1e-6)
	assert.InDeltaSlice(t, []float32{0, -1, -1, -1, -1, 0}, grad, 1e-6)
	d = ops.LossDescriptor{Type: ops.LossKullbackLeiblerDivergence, Reduction: ops.ReductionSum}
	loss, _ = lossGPU(t, dev, d, sh, ops.Float32, []float32{float32(math.Inf(-1)), -1, -2, -1, -1, -1}, []float32{0, 0.5, 0, 0.5, 0, 0}, nil)
	assert.InDelta(t, float32(0.5*(math.Log(0.5)+1)+0.5*(math.Log(0.5)+1)), loss[0], 1e-6)
}

// TestLossNames: String and the parsers agree, and take the graph's
// spellings.
func TestLossNames(t *testing.T) {
	names := []string{"mse", "softmax-cross-entropy", "mae", "sigmoid-cross-entropy", "categorical-cross-entropy",
		"hinge", "huber", "cosine-distance", "log", "kl-divergence"}
	for i, n := range names {
		typ, err := ops.ParseLossType(n)
		require.NoError(t, err)
		assert.Equal(t, ops.LossType(i), typ)
		assert.Equal(t, n, typ.String())
	}
	assert.Equal(t, ops.LossType(0), ops.LossMeanSquaredError, "values the graph stores")
	assert.Equal(t, ops.LossType(1), ops.LossSoftmaxCrossEntropy)
	for _, alias := range []string{"CE", "cross-entropy", "Softmax_Cross_Entropy"} {
		typ, err := ops.ParseLossType(alias)
		require.NoError(t, err)
		assert.Equal(t, ops.LossSoftmaxCrossEntropy, typ)
	}
	_, err := ops.ParseLossType("l3")
	require.ErrorIs(t, err, ops.ErrGeometry)
	assert.Contains(t, err.Error(), `unknown loss type "l3"`)
	assert.Equal(t, "LossType(42)", ops.LossType(42).String())
	for i, n := range []string{"none", "sum", "mean", "sum-by-nonzero-weights"} {
		red, err := ops.ParseReduction(n)
		require.NoError(t, err)
		assert.Equal(t, ops.Reduction(i), red)
		assert.Equal(t, n, red.String())
	}
	red, err := ops.ParseReduction("SUM_BY_NONZERO_WEIGHTS")
	require.NoError(t, err)
	assert.Equal(t, ops.ReductionSumByNonZeroWeights, red)
	for _, bad := range []string{"", "avg"} {
		_, err = ops.ParseReduction(bad)
		require.ErrorIs(t, err, ops.ErrGeometry)
		assert.Contains(t, err.Error(), "unknown reduction")
	}
	assert.Equal(t, "Reduction(-1)", ops.Reduction(-1).String())
}

// TestLossBadInput is the loss's table of bad input: each class with its
// sentinel and message; nothing refused is recorded.
func TestLossBadInput(t *testing.T) {
	dev := vktest.Open(t)
	other := vktest.Open(t)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	d := padding.Descriptor{N: 1, C: 2, H: 3, W: 3}
	p, l := newImage(t, dev, d, nil), newImage(t, dev, d, nil)
	wrong := newImage(t, dev, padding.Descriptor{N: 1, C: 2, H: 3, W: 4}, nil)
	out := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 1}, nil)
	grad := newImage(t, dev, d, nil)
	pixelW := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 3, W: 3}, nil)
	view := must(newImage(t, dev, padding.Descriptor{N: 2, C: 4, H: 3, W: 3}, nil).ChannelView(1, 2))
	l2 := newImage(t, dev, padding.Descriptor{N: 2, C: 2, H: 3, W: 3}, nil)
	foreign := newImage(t, other, d, nil)
	sum := must(ops.NewLoss(dev, ops.LossDescriptor{Reduction: ops.ReductionSum}))
	t.Cleanup(func() { sum.Close() })
	closed := must(ops.NewLoss(dev, ops.LossDescriptor{Reduction: ops.ReductionSum}))
	require.NoError(t, closed.Close())
	require.NoError(t, closed.Close(), "Close is safe twice")
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	newLoss := func(d ops.LossDescriptor) error { _, err := ops.NewLoss(dev, d); return err }

	tests := []struct {
		name string
		call func() error
		want error
		msg  string
	}{
		{"unknown loss type", func() error { return newLoss(ops.LossDescriptor{Type: 17}) }, ops.ErrGeometry, "unknown loss type 17"},
		{"negative loss type", func() error { return newLoss(ops.LossDescriptor{Type: -1}) }, ops.ErrGeometry, "unknown loss type -1"},
		{"unknown reduction", func() error { return newLoss(ops.LossDescriptor{Reduction: 4}) }, ops.ErrGeometry, "unknown reduction 4"},
		{"unknown loss name", func() error { _, err := ops.ParseLossType("focal"); return err }, ops.ErrGeometry, `unknown loss type "focal"`},
		{"unknown reduction name", func() error { _, err := ops.ParseReduction("max"); return err }, ops.ErrGeometry, `unknown reduction "max"`},
		{"NaN weight", func() error { return newLoss(ops.LossDescriptor{Weight: nan}) }, ops.ErrGeometry, "weight NaN is not finite"},
		{"infinite weight", func() error { return newLoss(ops.LossDescriptor{Weight: -inf}) }, ops.ErrGeometry, "weight -Inf is not finite"},
		{"NaN delta", func() error { return newLoss(ops.LossDescriptor{Type: ops.LossHuber, Delta: nan}) }, ops.ErrGeometry, "delta NaN is not finite"},
		{"infinite delta", func() error { return newLoss(ops.LossDescriptor{Type: ops.LossHuber, Delta: inf}) }, ops.ErrGeometry, "delta +Inf is not finite"},
		{"negative delta", func() error { return newLoss(ops.LossDescriptor{Type: ops.LossHuber, Delta: -1}) }, ops.ErrGeometry, "delta -1 must be > 0"},
		{"NaN epsilon", func() error { return newLoss(ops.LossDescriptor{Type: ops.LossLog, Epsilon: nan}) }, ops.ErrGeometry, "epsilon NaN is not finite"},
		{"negative epsilon", func() error { return newLoss(ops.LossDescriptor{Type: ops.LossLog, Epsilon: -1e-3}) }, ops.ErrGeometry, "epsilon -0.001 must be >= 0"},
		{"NaN label smoothing", func() error { return newLoss(ops.LossDescriptor{LabelSmoothing: nan}) }, ops.ErrGeometry, "label smoothing NaN is not finite"},
		{"label smoothing over 1", func() error { return newLoss(ops.LossDescriptor{LabelSmoothing: 1.5}) }, ops.ErrGeometry, "label smoothing 1.5 is outside [0, 1]"},
		{"negative label smoothing", func() error { return newLoss(ops.LossDescriptor{LabelSmoothing: -0.1}) }, ops.ErrGeometry, "outside [0, 1]"},
		{"negative number of classes", func() error { return newLoss(ops.LossDescriptor{NumberOfClasses: -2}) }, ops.ErrGeometry, "number of classes -2"},
		{"nil device", func() error { _, err := ops.NewLoss(nil, ops.LossDescriptor{}); return err }, ops.ErrDevice, "nil device"},
		{"result of a bad descriptor", func() error {
			_, err := ops.LossDescriptor{Delta: -2}.ResultDescriptor(p.Descriptor())
			return err
		}, ops.ErrGeometry, "delta"},
		{"result of an empty prediction", func() error {
			_, err := ops.LossDescriptor{}.ResultDescriptor(ops.ImageDescriptor{N: 1, C: 0, H: 1, W: 1})
			return err
		}, ops.ErrInvalidImage, "size < 1"},
		{"labels of another shape", func() error { return sum.Encode(cb, p, wrong, out) }, ops.ErrShape, "differ in shape"},
		{"loss image of the wrong shape", func() error { return sum.Encode(cb, p, l, grad) }, ops.ErrShape, "want 1x1x1x1"},
		{"gradient of the wrong shape", func() error { return sum.EncodeGradient(cb, p, l, out) }, ops.ErrShape, "differ in shape"},
		{"weights of the wrong shape", func() error { return sum.EncodeWeighted(cb, p, l, pixelW, out) }, ops.ErrShape, "want one per item: 1x2x3x3"},
		{"per-pixel weights of the wrong shape", func() error {
			return must(ops.NewLoss(dev, ops.LossDescriptor{Type: ops.LossCosineDistance, Reduction: ops.ReductionSum})).EncodeWeighted(cb, p, l, grad, out)
		}, ops.ErrShape, "want one per item: 1x1x3x3"},
		{"channel view", func() error { return sum.Encode(cb, view, l2, out) }, ops.ErrShape, "channel view"},
		{"mixed formats", func() error {
			requireHalf(t, dev)
			return sum.Encode(cb, p, newHalfImage(t, dev, d, nil), out)
		}, ops.ErrFormat, "one format"},
		{"loss into the prediction", func() error { return sum.Encode(cb, p, l, p) }, ops.ErrAlias, "shares storage"},
		{"gradient into the labels", func() error { return sum.EncodeGradient(cb, p, l, l) }, ops.ErrAlias, "shares storage"},
		{"gradient into the weights", func() error { return sum.EncodeGradientWeighted(cb, p, l, grad, grad) }, ops.ErrAlias, "shares storage"},
		{"image of another device", func() error { return sum.Encode(cb, p, foreign, out) }, ops.ErrDevice, "another device"},
		{"closed image", func() error {
			c := newImage(t, dev, d, nil)
			require.NoError(t, c.Close())
			return sum.Encode(cb, p, c, out)
		}, ops.ErrClosed, "labels"},
		{"closed kernel", func() error { return closed.Encode(cb, p, l, out) }, ops.ErrClosed, "after Close"},
		{"nil command buffer", func() error { return sum.Encode(nil, p, l, out) }, ops.ErrInvalidImage, "nil command buffer"},
		{"nil labels", func() error { return sum.EncodeGradient(cb, p, nil, grad) }, ops.ErrInvalidImage, "nil labels"},
		{"zero Loss", func() error { return (&ops.Loss{}).Encode(cb, p, l, out) }, ops.ErrDevice, "NewLoss"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	assert.Equal(t, 0, cb.Commands(), "nothing refused was recorded")
}

// TestLossMatchesPyTorch runs every PyTorch case (gen_loss_cases.py: every
// type and reduction, weighted and not, with smoothing, delta, epsilon and
// weights) on the GPU in float32 against PyTorch's values, with the
// tolerances above, and every third case through float16 images against
// the reference on the inputs rounded to half.
func TestLossMatchesPyTorch(t *testing.T) {
	heavy(t)
	cases, err := ref.LoadTorchLossCases("testdata/torch/loss_cases.json")
	require.NoError(t, err)
	dev := vktest.Open(t)
	for i, c := range cases {
		rd := c.Descriptor
		d := ops.LossDescriptor{Type: ops.LossType(rd.Type), Reduction: ops.Reduction(rd.Reduction), Weight: float32(rd.Weight),
			LabelSmoothing: float32(rd.LabelSmoothing), Delta: float32(rd.Delta), Epsilon: float32(rd.Epsilon)}
		sh := padding.Descriptor{N: c.Shape[0], C: c.Shape[1], H: c.Shape[2], W: c.Shape[3]}
		name := c.Name + " (" + c.Torch + ")"
		loss, grad := lossGPU(t, dev, d, sh, ops.Float32, c.Pred, c.Labels, c.Weights)
		_, _, sumAbs := lossWant(t, d, sh, c.Pred, c.Labels, c.Weights)
		lossCompare(t, name+" loss", ops.Float32, loss, lossF64s(c.Result), lossSumTol*sumAbs)
		lossCompare(t, name+" gradient", ops.Float32, grad, lossF64s(c.Grad), 0)
		if i%3 != 0 || !dev.Limits().Float16Storage {
			continue
		}
		pv, lv := toHalf(c.Pred), toHalf(c.Labels)
		var wv []float32
		if c.Weights != nil {
			wv = toHalf(c.Weights)
		}
		loss, grad = lossGPU(t, dev, d, sh, ops.Float16, pv, lv, wv)
		wantLoss, wantGrad, sumAbs := lossWant(t, d, sh, pv, lv, wv)
		lossCompare(t, name+" float16 loss", ops.Float16, loss, wantLoss, lossSumTol*sumAbs)
		lossCompare(t, name+" float16 gradient", ops.Float16, grad, wantGrad, 0)
	}
}

func lossF64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// TestLossChannelLayouts runs the per-pixel losses over the layouts their
// shader picks by channel count and plane size: channels held in
// registers or walked in chunks (and read twice by the softmax gradient),
// neighbouring invocations on neighbouring pixels or (planes of 1 and 2
// values) on neighbouring channels; weighted, each pass of the shader
// (items, partial sums with counts, the gradient with the GPU's scale).
func TestLossChannelLayouts(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(5))
	shapes := []padding.Descriptor{
		{N: 2, C: 600, H: 2, W: 3},  // pixel-fast, 32 slices of 19 channels: chunks
		{N: 3, C: 37, H: 5, W: 9},   // pixel-fast, channels in registers, slices that do not divide C
		{N: 5, C: 300, H: 1, W: 1},  // channel-fast, in registers
		{N: 2, C: 4500, H: 1, W: 2}, // channel-fast, chunks
	}
	for _, typ := range []ops.LossType{ops.LossSoftmaxCrossEntropy, ops.LossCategoricalCrossEntropy, ops.LossCosineDistance} {
		for _, sh := range shapes {
			for _, red := range []ops.Reduction{ops.ReductionNone, ops.ReductionSumByNonZeroWeights} {
				d := lossVariants(typ, red)[2]
				name := fmt.Sprintf("%+v %v", d, sh)
				pv, lv, wv := lossInputs(r, d, sh, ops.Float32, true)
				loss, grad := lossGPU(t, dev, d, sh, ops.Float32, pv, lv, wv)
				wantLoss, wantGrad, sumAbs := lossWant(t, d, sh, pv, lv, wv)
				lossCompare(t, name+" loss", ops.Float32, loss, wantLoss, lossSumTol*sumAbs)
				lossCompare(t, name+" gradient", ops.Float32, grad, wantGrad, 0)
			}
		}
	}
}
