package ops_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// TestNormalizationBadInput is the normalization family's table of bad
// input: every class with its sentinel and a message naming the kernel and
// the value at fault; nothing refused is recorded and nothing panics.
func TestNormalizationBadInput(t *testing.T) {
	dev := vktest.Open(t)
	other := vktest.Open(t)
	capped := vktest.Open(t, vk.Options{MaxStorageBufferRange: 4 << 10})
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	d := padding.Descriptor{N: 2, C: 3, H: 4, W: 4}
	src, dst := newImage(t, dev, d, make([]float32, 96)), newImage(t, dev, d, nil)
	dy, dx := newImage(t, dev, d, make([]float32, 96)), newImage(t, dev, d, nil)
	wrong := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 4, W: 5}, nil)
	fewer := newImage(t, dev, padding.Descriptor{N: 2, C: 2, H: 4, W: 4}, nil)
	single := newImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, make([]float32, 3))
	singleOut := newImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, nil)
	foreign := newImage(t, other, d, nil)
	closed := newImage(t, dev, d, nil)
	require.NoError(t, closed.Close())
	p := func(c int) *ops.Image { return bnParam(t, dev, make([]float32, c)) }
	shared := p(3)
	halfParam := newImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, nil)
	if dev.Limits().Float16Storage {
		halfParam = newHalfImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, nil)
	}
	desc := ops.NewBatchNormalizationDescriptor(3)
	bn := must(ops.NewBatchNormalization(dev, desc, p(3), p(3), p(3), p(3)))
	t.Cleanup(func() { bn.Close() })
	bn2 := must(ops.NewBatchNormalization(dev, desc, p(3), p(3), p(3), p(3)))
	t.Cleanup(func() { bn2.Close() })
	st := must(bn.NewState())
	t.Cleanup(func() { st.Close() })
	stOther := must(bn2.NewState())
	t.Cleanup(func() { stOther.Close() })
	stClosed := must(bn.NewState())
	require.NoError(t, stClosed.Close())
	grad := must(ops.NewBatchNormalizationGradient(bn))
	t.Cleanup(func() { grad.Close() })
	stats := must(ops.NewBatchNormalizationStatistics(bn))
	in := must(ops.NewInstanceNormalization(dev, ops.NewInstanceNormalizationDescriptor(3), p(3), p(3)))
	t.Cleanup(func() { in.Close() })
	ing := must(ops.NewInstanceNormalizationGradient(in))
	t.Cleanup(func() { ing.Close() })
	lrn := must(ops.NewCrossChannelNormalization(dev, ops.NewCrossChannelNormalizationDescriptor(5)))
	t.Cleanup(func() { lrn.Close() })
	sp := must(ops.NewSpatialNormalization(dev, ops.NewSpatialNormalizationDescriptor(3, 3)))
	t.Cleanup(func() { sp.Close() })
	lcng := must(ops.NewLocalContrastNormalizationGradient(dev, ops.NewLocalContrastNormalizationDescriptor(3, 3)))
	t.Cleanup(func() { lcng.Close() })
	cappedBig := padding.Descriptor{N: 1, C: 1, H: 40, W: 40} // 6400 bytes, over 4 KiB
	cBig, cBigOut := newImage(t, capped, cappedBig, nil), newImage(t, capped, cappedBig, nil)
	cp := func() *ops.Image { return bnParam(t, capped, make([]float32, 1)) }
	bnCapped := must(ops.NewBatchNormalization(capped, ops.NewBatchNormalizationDescriptor(1), cp(), cp(), cp(), cp()))
	t.Cleanup(func() { bnCapped.Close() })
	stCapped := must(bnCapped.NewState())
	t.Cleanup(func() { stCapped.Close() })
	spCapped := must(ops.NewSpatialNormalization(capped, ops.NewSpatialNormalizationDescriptor(3, 3)))
	t.Cleanup(func() { spCapped.Close() })

	cb := must(dev.NewCommandBuffer())
	defer cb.Close()
	cbCapped := must(capped.NewCommandBuffer())
	defer cbCapped.Close()
	bnDesc := func(f func(d *ops.BatchNormalizationDescriptor)) error {
		d := ops.NewBatchNormalizationDescriptor(3)
		f(&d)
		_, err := ops.NewBatchNormalization(dev, d, p(3), p(3), p(3), p(3))
		return err
	}

	tests := []struct {
		class, name string
		call        func() error
		want        error
		msg         string
	}{
		{"parameter", "epsilon < 0", func() error { return bnDesc(func(d *ops.BatchNormalizationDescriptor) { d.Epsilon = -1 }) }, ops.ErrGeometry, "epsilon -1 < 0"},
		{"parameter", "epsilon NaN", func() error { return bnDesc(func(d *ops.BatchNormalizationDescriptor) { d.Epsilon = nan }) }, ops.ErrGeometry, "epsilon NaN is not finite"},
		{"parameter", "momentum 1.5", func() error { return bnDesc(func(d *ops.BatchNormalizationDescriptor) { d.Momentum = 1.5 }) }, ops.ErrGeometry, "momentum 1.5 outside [0, 1]"},
		{"parameter", "momentum -0.1", func() error { return bnDesc(func(d *ops.BatchNormalizationDescriptor) { d.Momentum = -0.1 }) }, ops.ErrGeometry, "momentum -0.1"},
		{"parameter", "momentum Inf", func() error { return bnDesc(func(d *ops.BatchNormalizationDescriptor) { d.Momentum = inf }) }, ops.ErrGeometry, "momentum +Inf"},
		{"parameter", "fused prelu", func() error {
			return bnDesc(func(d *ops.BatchNormalizationDescriptor) {
				d.Neuron = ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: []float32{1, 1, 1}}
			})
		}, ops.ErrGeometry, "prelu"},
		{"parameter", "neuron NaN", func() error {
			return bnDesc(func(d *ops.BatchNormalizationDescriptor) {
				d.Neuron = ops.NeuronDescriptor{Type: ops.NeuronReLU, A: nan}
			})
		}, ops.ErrGeometry, "neuron a"},
		{"parameter", "instance epsilon Inf", func() error {
			_, err := ops.NewInstanceNormalization(dev, ops.InstanceNormalizationDescriptor{Channels: 3, Epsilon: inf}, p(3), p(3))
			return err
		}, ops.ErrGeometry, "InstanceNormalization: epsilon +Inf"},
		{"parameter", "LRN size 0", func() error {
			_, err := ops.NewCrossChannelNormalization(dev, ops.NewCrossChannelNormalizationDescriptor(0))
			return err
		}, ops.ErrGeometry, "kernel size 0 < 1"},
		{"parameter", "LRN beta NaN", func() error {
			_, err := ops.NewCrossChannelNormalizationGradient(dev, ops.CrossChannelNormalizationDescriptor{KernelSize: 3, Alpha: 1, Beta: nan, Delta: 1})
			return err
		}, ops.ErrGeometry, "beta NaN"},
		{"parameter", "LRN alpha < 0", func() error {
			_, err := ops.NewCrossChannelNormalization(dev, ops.CrossChannelNormalizationDescriptor{KernelSize: 3, Alpha: -1, Beta: 1, Delta: 1})
			return err
		}, ops.ErrGeometry, "alpha -1 < 0"},
		{"parameter", "spatial kernel 0", func() error {
			_, err := ops.NewSpatialNormalization(dev, ops.NewSpatialNormalizationDescriptor(3, 0))
			return err
		}, ops.ErrGeometry, "kernel height 0 < 1"},
		{"parameter", "spatial kernel over 32768", func() error {
			_, err := ops.NewSpatialNormalizationGradient(dev, ops.NewSpatialNormalizationDescriptor(1<<16, 1))
			return err
		}, ops.ErrGeometry, "65536 > 32768"},
		{"parameter", "LCN delta Inf", func() error {
			d := ops.NewLocalContrastNormalizationDescriptor(3, 3)
			d.Delta = inf
			_, err := ops.NewLocalContrastNormalization(dev, d)
			return err
		}, ops.ErrGeometry, "delta +Inf"},
		{"parameter", "LCN ps NaN", func() error {
			d := ops.NewLocalContrastNormalizationDescriptor(3, 3)
			d.PS = nan
			_, err := ops.NewLocalContrastNormalizationGradient(dev, d)
			return err
		}, ops.ErrGeometry, "ps NaN"},
		{"shape", "channels 0", func() error { return bnDesc(func(d *ops.BatchNormalizationDescriptor) { d.Channels = 0 }) }, ops.ErrShape, "channels 0 < 1"},
		{"shape", "gamma of the wrong length", func() error {
			_, err := ops.NewBatchNormalization(dev, desc, p(4), p(3), p(3), p(3))
			return err
		}, ops.ErrShape, "gamma image"},
		{"shape", "running variance of the wrong length", func() error {
			_, err := ops.NewBatchNormalization(dev, desc, p(3), p(3), p(3), p(2))
			return err
		}, ops.ErrShape, "running variance image"},
		{"shape", "instance beta of the wrong length", func() error {
			_, err := ops.NewInstanceNormalization(dev, ops.NewInstanceNormalizationDescriptor(3), p(3), p(5))
			return err
		}, ops.ErrShape, "beta image"},
		{"shape", "training on N*H*W == 1", func() error { return bn.EncodeTraining(cb, single, st, singleOut) }, ops.ErrShape, "N*H*W = 1"},
		{"shape", "statistics on N*H*W == 1", func() error { st.Reset(); return stats.Encode(cb, single, st) }, ops.ErrShape, "N*H*W = 1"},
		{"shape", "source of other channel count", func() error { return bn.EncodeTraining(cb, fewer, st, fewer) }, ops.ErrShape, "has 2 channels, the kernel 3"},
		{"shape", "destination of another shape", func() error { return bn.EncodeInference(cb, src, wrong, nil) }, ops.ErrShape, "differ in shape"},
		{"shape", "gradient dy of another shape", func() error { return grad.EncodeAll(cb, wrong, src, st, dx, nil, nil) }, ops.ErrShape, "differ in shape"},
		{"shape", "dgamma of the wrong length", func() error { return grad.EncodeAll(cb, dy, src, st, dx, p(4), nil) }, ops.ErrShape, "gamma gradient image"},
		{"shape", "instance gradient dx of another shape", func() error { return ing.Encode(cb, dy, src, wrong, nil, nil) }, ops.ErrShape, "differ in shape"},
		{"shape", "LRN destination of another shape", func() error { return lrn.Encode(cb, src, wrong) }, ops.ErrShape, "differ in shape"},
		{"shape", "ResultDescriptor channels", func() error {
			_, err := desc.ResultDescriptor(ops.ImageDescriptor{N: 1, C: 4, H: 2, W: 2})
			return err
		}, ops.ErrShape, "has 4 channels, the kernel 3"},
		{"format", "float16 gamma", func() error {
			if !dev.Limits().Float16Storage {
				return ops.ErrFormat
			}
			_, err := ops.NewBatchNormalization(dev, desc, halfParam, p(3), p(3), p(3))
			return err
		}, ops.ErrFormat, ""},
		{"alias", "running mean is the running variance", func() error {
			_, err := ops.NewBatchNormalization(dev, desc, p(3), p(3), shared, shared)
			return err
		}, ops.ErrAlias, "running mean image"},
		{"alias", "in-place batch normalization", func() error { return bn.EncodeInference(cb, src, src, nil) }, ops.ErrAlias, "share storage"},
		{"alias", "dx is dy", func() error { return grad.EncodeAll(cb, dy, src, st, dy, nil, nil) }, ops.ErrAlias, "destination gradient"},
		{"alias", "spatial in place", func() error { return sp.Encode(cb, src, src) }, ops.ErrAlias, "share storage"},
		{"alias", "LCN gradient dx is src", func() error { return lcng.Encode(cb, dy, src, src) }, ops.ErrAlias, "share storage"},
		{"state", "nil state", func() error { return bn.EncodeTraining(cb, src, nil, dst) }, ops.ErrState, "nil state"},
		{"state", "state of another kernel", func() error { return bn.EncodeTraining(cb, src, stOther, dst) }, ops.ErrState, "another batch normalization"},
		{"state", "gradient before any forward", func() error { return grad.EncodeAll(cb, dy, src, stOther, dx, nil, nil) }, ops.ErrState, "another batch normalization"},
		{"state", "normalize without statistics", func() error { st.Reset(); return bn.Encode(cb, src, st, dst) }, ops.ErrState, "no statistics"},
		{"state", "dx without gradient sums", func() error { st.Reset(); return grad.Encode(cb, dy, src, st, dx) }, ops.ErrState, "no forward statistics"},
		{"state", "running update without batch statistics", func() error { st.Reset(); return bn.EncodeRunningStatisticsUpdate(cb, st) }, ops.ErrState, "no batch statistics"},
		{"closed", "closed state", func() error { return bn.EncodeTraining(cb, src, stClosed, dst) }, ops.ErrClosed, "state"},
		{"closed", "closed source", func() error { return sp.Encode(cb, closed, dst) }, ops.ErrClosed, "source"},
		{"device", "foreign destination", func() error { return in.Encode(cb, src, foreign) }, ops.ErrDevice, "another device"},
		{"device", "foreign gamma", func() error {
			_, err := ops.NewInstanceNormalization(other, ops.NewInstanceNormalizationDescriptor(3), p(3), p(3))
			return err
		}, ops.ErrDevice, "gamma image"},
		{"nil", "nil device", func() error {
			_, err := ops.NewCrossChannelNormalization(nil, ops.NewCrossChannelNormalizationDescriptor(5))
			return err
		}, ops.ErrDevice, "nil device"},
		{"nil", "nil command buffer", func() error { return lrn.Encode(nil, src, dst) }, ops.ErrInvalidImage, "nil command buffer"},
		{"nil", "nil source", func() error { return bn.EncodeInference(cb, nil, dst, nil) }, ops.ErrInvalidImage, "nil source"},
		{"nil", "nil batch normalization", func() error { _, err := ops.NewBatchNormalizationGradient(nil); return err }, ops.ErrState, "nil batch normalization"},
		{"device limit", "batch norm plane over the storage range", func() error { return bnCapped.EncodeTraining(cbCapped, cBig, stCapped, cBigOut) }, ops.ErrDeviceLimit, "40x40"},
		{"device limit", "spatial plane over the storage range", func() error { return spCapped.Encode(cbCapped, cBig, cBigOut) }, ops.ErrDeviceLimit, "40x40"},
	}
	classes := map[string]bool{}
	for _, tc := range tests {
		classes[tc.class] = true
		t.Run(tc.class+"/"+tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			require.ErrorIs(t, err, tc.want)
			if tc.msg != "" {
				assert.Contains(t, err.Error(), tc.msg)
			}
		})
	}
	assert.Equal(t, 0, cb.Commands(), "nothing refused was recorded")
	assert.Equal(t, 0, cbCapped.Commands())
}
