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

func TestAddAndCopy(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(1))
	d := padding.Descriptor{N: 3, C: 5, H: 7, W: 9}
	n := d.N * d.C * d.H * d.W
	av, bv := randomData(r, n), randomData(r, n)
	a, b := newImage(t, dev, d, av), newImage(t, dev, d, bv)
	out := newImage(t, dev, d, nil)
	add, err := ops.NewAdd(dev)
	require.NoError(t, err)
	add.Alpha, add.Beta = 2, -0.5
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return add.Encode(cb, a, b, out) }))
	got, err := out.Read(ctx)
	require.NoError(t, err)
	for i := range got {
		require.Equal(t, 2*av[i]-0.5*bv[i], got[i])
	}
	// Concatenate a and b along channels with copies into views, then slice
	// b back out; also add into a view.
	cat := newImage(t, dev, padding.Descriptor{N: 3, C: 10, H: 7, W: 9}, nil)
	left, err := cat.ChannelView(0, 5)
	require.NoError(t, err)
	right, err := cat.ChannelView(5, 5)
	require.NoError(t, err)
	back := newImage(t, dev, d, nil)
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		if err := ops.Copy(cb, a, left); err != nil {
			return err
		}
		if err := ops.Copy(cb, b, right); err != nil {
			return err
		}
		return ops.Copy(cb, right, back)
	}))
	got, err = back.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, bv, got)
	all, err := cat.Read(ctx)
	require.NoError(t, err)
	plane := d.C * d.H * d.W
	for nn := 0; nn < d.N; nn++ {
		assert.Equal(t, av[nn*plane:(nn+1)*plane], all[2*nn*plane:(2*nn+1)*plane])
	}
	add.Alpha, add.Beta = 0, 0
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return add.Encode(cb, left, right, out) }))
	got, err = out.Read(ctx)
	require.NoError(t, err)
	for i := range got {
		require.Equal(t, av[i]+bv[i], got[i])
	}
	// Bad input.
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	small := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 2, W: 2}, nil)
	assert.ErrorIs(t, add.Encode(cb, a, small, out), ops.ErrShape)
	assert.ErrorIs(t, add.Encode(cb, a, b, a), ops.ErrAlias)
	assert.ErrorIs(t, ops.Copy(cb, a, small), ops.ErrShape)
	assert.ErrorIs(t, ops.Copy(cb, left, cat), ops.ErrShape)
	assert.ErrorIs(t, ops.Copy(cb, left, right), nil)
	assert.ErrorIs(t, add.Encode(cb, nil, b, out), ops.ErrInvalidImage)
}

func TestLossMatchesReference(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(2))
	for _, typ := range []ops.LossType{ops.LossMeanSquaredError, ops.LossSoftmaxCrossEntropy} {
		for _, red := range []ops.Reduction{ops.ReductionNone, ops.ReductionSum, ops.ReductionMean} {
			for _, d := range []padding.Descriptor{{N: 1, C: 1, H: 1, W: 1}, {N: 2, C: 5, H: 7, W: 3}, {N: 3, C: 4, H: 33, W: 31}} {
				name := fmt.Sprintf("%v/%v/%v", typ, red, d)
				n := d.N * d.C * d.H * d.W
				pv := randomData(r, n)
				lv := make([]float32, n)
				if typ == ops.LossSoftmaxCrossEntropy {
					// Soft labels: per pixel, probabilities over channels.
					plane := d.H * d.W
					for b := 0; b < d.N; b++ {
						for px := 0; px < plane; px++ {
							s := float32(0)
							for c := 0; c < d.C; c++ {
								v := r.Float32()
								lv[(b*d.C+c)*plane+px] = v
								s += v
							}
							for c := 0; c < d.C; c++ {
								lv[(b*d.C+c)*plane+px] /= s
							}
						}
					}
				} else {
					lv = randomData(r, n)
				}
				loss, err := ops.NewLoss(dev, ops.LossDescriptor{Type: typ, Reduction: red, Weight: 1.5})
				require.NoError(t, err)
				defer loss.Close()
				pred, labels := newImage(t, dev, d, pv), newImage(t, dev, d, lv)
				rd := loss.ResultDescriptor(pred.Descriptor())
				lossIm := newImage(t, dev, rd.Descriptor(), nil)
				grad := newImage(t, dev, d, nil)
				require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
					if err := loss.Encode(cb, pred, labels, lossIm); err != nil {
						return err
					}
					return loss.EncodeGradient(cb, pred, labels, grad)
				}), name)
				gotLoss, err := lossIm.Read(ctx)
				require.NoError(t, err)
				gotGrad, err := grad.Read(ctx)
				require.NoError(t, err)
				pt, _ := ref.TensorOf(d.N, d.C, d.H, d.W, pv)
				lt, _ := ref.TensorOf(d.N, d.C, d.H, d.W, lv)
				wantLoss, err := ref.Loss(ref.LossType(typ), ref.Reduction(red), pt, lt)
				require.NoError(t, err)
				wantGrad, err := ref.LossGradient(ref.LossType(typ), ref.Reduction(red), pt, lt)
				require.NoError(t, err)
				require.Len(t, gotLoss, len(wantLoss), name)
				for i := range wantLoss {
					w := 1.5 * wantLoss[i]
					assert.InDelta(t, w, float64(gotLoss[i]), 1e-4*math.Max(1, math.Abs(w)), "%s loss[%d]", name, i)
				}
				for i := range wantGrad {
					w := 1.5 * wantGrad[i]
					require.InDelta(t, w, float64(gotGrad[i]), 1e-5*math.Max(1, math.Abs(w)), "%s grad[%d]", name, i)
				}
				// Bit-identical when repeated.
				require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return loss.Encode(cb, pred, labels, lossIm) }))
				again, err := lossIm.Read(ctx)
				require.NoError(t, err)
				require.Equal(t, gotLoss, again, name)
			}
		}
	}
}

func TestLossBadInput(t *testing.T) {
	dev := vktest.Open(t)
	_, err := ops.NewLoss(dev, ops.LossDescriptor{Type: 9})
	assert.ErrorIs(t, err, ops.ErrGeometry)
	_, err = ops.NewLoss(dev, ops.LossDescriptor{Reduction: 9})
	assert.ErrorIs(t, err, ops.ErrGeometry)
	loss, err := ops.NewLoss(dev, ops.LossDescriptor{Reduction: ops.ReductionSum})
	require.NoError(t, err)
	defer loss.Close()
	d := padding.Descriptor{N: 1, C: 2, H: 3, W: 3}
	p, l := newImage(t, dev, d, nil), newImage(t, dev, d, nil)
	wrong := newImage(t, dev, padding.Descriptor{N: 1, C: 2, H: 3, W: 4}, nil)
	out := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 1}, nil)
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	assert.ErrorIs(t, loss.Encode(cb, p, wrong, out), ops.ErrShape)
	assert.ErrorIs(t, loss.Encode(cb, p, l, wrong), ops.ErrShape)
	assert.ErrorIs(t, loss.EncodeGradient(cb, p, l, out), ops.ErrShape)
	assert.ErrorIs(t, loss.Encode(cb, p, l, p), ops.ErrAlias)
}
