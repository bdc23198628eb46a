package ops_test

import (
	"context"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
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
