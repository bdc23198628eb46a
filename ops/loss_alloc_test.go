//go:build !race

package ops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Encoding a loss, forward or gradient, weighted or not, float32 or
// float16, allocates nothing on the Go heap once its pipelines and scratch
// exist (issue 9). The race detector's instrumentation allocates, hence the
// build tag.
func TestLossEncodeDoesNotAllocate(t *testing.T) {
	dev := vktest.Open(t)
	formats := []ops.Format{ops.Float32}
	if dev.Limits().Float16Storage {
		formats = append(formats, ops.Float16)
	}
	sh := padding.Descriptor{N: 2, C: 5, H: 9, W: 8}
	for _, f := range formats {
		for _, typ := range []ops.LossType{ops.LossMeanSquaredError, ops.LossSoftmaxCrossEntropy, ops.LossHuber} {
			for red := ops.Reduction(0); red.Valid(); red++ {
				d := ops.LossDescriptor{Type: typ, Reduction: red, Weight: 2}
				t.Run(f.String()+"/"+d.Type.String()+"/"+red.String(), func(t *testing.T) {
					pred, labels := newLossImage(t, dev, sh, f, nil), newLossImage(t, dev, sh, f, nil)
					weights := newLossImage(t, dev, d.WeightsDescriptor(pred.Descriptor()).Descriptor(), f, nil)
					rd, err := d.ResultDescriptor(pred.Descriptor())
					require.NoError(t, err)
					out, grad := newLossImage(t, dev, rd.Descriptor(), f, nil), newLossImage(t, dev, sh, f, nil)
					k, err := ops.NewLoss(dev, d)
					require.NoError(t, err)
					defer k.Close()
					cb, err := dev.NewCommandBuffer()
					require.NoError(t, err)
					defer func() { cb.Close() }()
					ws := []*ops.Image{nil, weights}
					encode := func() error {
						for _, w := range ws {
							if err := k.EncodeWeighted(cb, pred, labels, w, out); err != nil {
								return err
							}
							if err := k.EncodeGradientWeighted(cb, pred, labels, w, grad); err != nil {
								return err
							}
						}
						return nil
					}
					require.NoError(t, encode()) // pipelines and scratch
					var encErr error
					allocs := testing.AllocsPerRun(20, func() {
						if cb.Commands() > 2000 {
							encErr = cb.Reset()
						}
						if err := encode(); err != nil {
							encErr = err
						}
					})
					require.NoError(t, encErr)
					require.Zero(t, allocs, "allocations per four encodes")
				})
			}
		}
	}
}
