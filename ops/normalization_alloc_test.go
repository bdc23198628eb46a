//go:build !race

package ops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// TestNormalizationEncodeDoesNotAllocate: after the first encode (which
// makes pipelines and scratch buffers), every normalization encode,
// forward and gradient, float32 and float16, allocates nothing on the Go
// heap. The race detector's instrumentation allocates, hence the build
// tag.
func TestNormalizationEncodeDoesNotAllocate(t *testing.T) {
	dev := vktest.Open(t)
	formats := []ops.Format{ops.Float32}
	if dev.Limits().Float16Storage {
		formats = append(formats, ops.Float16)
	}
	d := padding.Descriptor{N: 2, C: 6, H: 8, W: 8}
	zeros := make([]float32, d.N*d.C*d.H*d.W)
	for _, f := range formats {
		x, dy := bnImage(t, dev, f, d, zeros), bnImage(t, dev, f, d, zeros)
		y, dx := bnImage(t, dev, f, d, nil), bnImage(t, dev, f, d, nil)
		p := func() *ops.Image { return bnParam(t, dev, make([]float32, d.C)) }
		bn := must(ops.NewBatchNormalization(dev, ops.NewBatchNormalizationDescriptor(d.C), p(), p(), p(), p()))
		defer bn.Close()
		st := must(bn.NewState())
		defer st.Close()
		bng := must(ops.NewBatchNormalizationGradient(bn))
		defer bng.Close()
		stats := must(ops.NewBatchNormalizationStatistics(bn))
		sg := must(ops.NewBatchNormalizationStatisticsGradient(bn))
		defer sg.Close()
		dg, db := p(), p()
		in := must(ops.NewInstanceNormalization(dev, ops.NewInstanceNormalizationDescriptor(d.C), p(), p()))
		defer in.Close()
		ing := must(ops.NewInstanceNormalizationGradient(in))
		defer ing.Close()
		lrn := must(ops.NewCrossChannelNormalization(dev, ops.NewCrossChannelNormalizationDescriptor(5)))
		defer lrn.Close()
		lrng := must(ops.NewCrossChannelNormalizationGradient(dev, ops.NewCrossChannelNormalizationDescriptor(5)))
		defer lrng.Close()
		sp := must(ops.NewSpatialNormalization(dev, ops.NewSpatialNormalizationDescriptor(3, 3)))
		defer sp.Close()
		spg := must(ops.NewSpatialNormalizationGradient(dev, ops.NewSpatialNormalizationDescriptor(3, 3)))
		defer spg.Close()
		lcn := must(ops.NewLocalContrastNormalization(dev, ops.NewLocalContrastNormalizationDescriptor(3, 3)))
		defer lcn.Close()
		lcng := must(ops.NewLocalContrastNormalizationGradient(dev, ops.NewLocalContrastNormalizationDescriptor(3, 3)))
		defer lcng.Close()
		encodes := []struct {
			name string
			fn   func(cb *vk.CommandBuffer) error
		}{
			{"BatchNormalization.EncodeTraining", func(cb *vk.CommandBuffer) error { return bn.EncodeTraining(cb, x, st, y) }},
			{"BatchNormalizationGradient.EncodeAll", func(cb *vk.CommandBuffer) error { return bng.EncodeAll(cb, dy, x, st, dx, dg, db) }},
			{"BatchNormalization.EncodeInference", func(cb *vk.CommandBuffer) error { return bn.EncodeInference(cb, x, y, st) }},
			{"BatchNormalization.EncodeInference without state", func(cb *vk.CommandBuffer) error { return bn.EncodeInference(cb, x, y, nil) }},
			{"BatchNormalizationStatistics.Encode", func(cb *vk.CommandBuffer) error { st.Reset(); return stats.Encode(cb, x, st) }},
			{"BatchNormalization.Encode", func(cb *vk.CommandBuffer) error { return bn.Encode(cb, x, st, y) }},
			{"BatchNormalization.EncodeRunningStatisticsUpdate", func(cb *vk.CommandBuffer) error { return bn.EncodeRunningStatisticsUpdate(cb, st) }},
			{"BatchNormalizationStatisticsGradient.Encode", func(cb *vk.CommandBuffer) error { return sg.Encode(cb, dy, x, st) }},
			{"BatchNormalizationGradient.Encode", func(cb *vk.CommandBuffer) error { return bng.Encode(cb, dy, x, st, dx) }},
			{"BatchNormalizationGradient.EncodeParameterGradients", func(cb *vk.CommandBuffer) error { return bng.EncodeParameterGradients(cb, st, dg, db) }},
			{"InstanceNormalization.Encode", func(cb *vk.CommandBuffer) error { return in.Encode(cb, x, y) }},
			{"InstanceNormalizationGradient.Encode", func(cb *vk.CommandBuffer) error { return ing.Encode(cb, dy, x, dx, dg, db) }},
			{"CrossChannelNormalization.Encode", func(cb *vk.CommandBuffer) error { return lrn.Encode(cb, x, y) }},
			{"CrossChannelNormalizationGradient.Encode", func(cb *vk.CommandBuffer) error { return lrng.Encode(cb, dy, x, dx) }},
			{"SpatialNormalization.Encode", func(cb *vk.CommandBuffer) error { return sp.Encode(cb, x, y) }},
			{"SpatialNormalizationGradient.Encode", func(cb *vk.CommandBuffer) error { return spg.Encode(cb, dy, x, dx) }},
			{"LocalContrastNormalization.Encode", func(cb *vk.CommandBuffer) error { return lcn.Encode(cb, x, y) }},
			{"LocalContrastNormalizationGradient.Encode", func(cb *vk.CommandBuffer) error { return lcng.Encode(cb, dy, x, dx) }},
		}
		cb := must(dev.NewCommandBuffer())
		for _, e := range encodes {
			require.NoError(t, e.fn(cb), e.name) // pipelines and scratch
		}
		require.NoError(t, cb.Reset())
		for _, e := range encodes {
			var err error
			allocs := testing.AllocsPerRun(10, func() {
				if e := e.fn(cb); e != nil {
					err = e
				}
			})
			require.NoError(t, err, e.name)
			require.Zero(t, allocs, "%s (%v) allocates", e.name, f)
		}
		require.NoError(t, cb.Close())
	}
}
