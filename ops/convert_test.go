package ops_test

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Convert turns float32 into float16 as Float16Bits does (round to
// nearest even, overflow to Inf, NaN kept) and back exactly, whole
// images, channel views and runs split under a capped storage range.
func TestConvert(t *testing.T) {
	for _, capped := range []bool{false, true} {
		opts := vk.Options{}
		if capped {
			opts.MaxStorageBufferRange = 4 << 10
		}
		dev := vktest.Open(t, opts)
		if !dev.Limits().Float16Storage {
			t.Skip("no 16-bit storage")
		}
		ctx := context.Background()
		r := rand.New(rand.NewSource(4))
		d := padding.Descriptor{N: 3, C: 5, H: 7, W: 9}
		n := d.N * d.C * d.H * d.W
		v := randomData(r, n)
		v[0], v[1], v[2], v[3] = 70000, -1e-8, float32(math.NaN()), 1+1.0/2048 // overflow, underflow, NaN, a tie
		f32 := newImage(t, dev, d, v)
		f16 := newHalfImage(t, dev, d, nil)
		back := newImage(t, dev, d, nil)
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			if err := ops.Convert(cb, f32, f16); err != nil {
				return err
			}
			return ops.Convert(cb, f16, back)
		}))
		bits := must(f16.ReadFloat16(ctx))
		got := must(back.Read(ctx))
		for i := range v {
			if math.IsNaN(float64(v[i])) { // any NaN: its payload is the device's
				require.True(t, bits[i]&0x7c00 == 0x7c00 && bits[i]&0x3ff != 0, "value %d = NaN became %#04x", i, bits[i])
			} else {
				require.Equal(t, ops.Float16Bits(v[i]), bits[i], "value %d = %v", i, v[i])
			}
			want := ops.Float16FromBits(bits[i])
			if math.IsNaN(float64(want)) {
				require.True(t, math.IsNaN(float64(got[i])))
				continue
			}
			require.Equal(t, want, got[i], "back %d", i)
		}
		// Channel views, both ways.
		vf := must(f32.ChannelView(1, 3))
		vh := must(newHalfImage(t, dev, padding.Descriptor{N: 3, C: 3, H: 7, W: 9}, nil), error(nil))
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return ops.Convert(cb, vf, vh) }))
		vb := must(vh.ReadFloat16(ctx))
		for b := 0; b < 3; b++ {
			for i := 0; i < 3*63; i++ {
				require.Equal(t, ops.Float16Bits(v[(b*5+1)*63+i]), vb[b*3*63+i])
			}
		}
		// Bad input.
		wrong := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 2, W: 2}, nil)
		cb := must(dev.NewCommandBuffer())
		require.ErrorIs(t, ops.Convert(cb, f32, wrong), ops.ErrShape)
		require.ErrorIs(t, ops.Convert(cb, nil, wrong), ops.ErrInvalidImage)
		require.ErrorIs(t, ops.Convert(nil, f32, f16), ops.ErrInvalidImage)
		require.NoError(t, cb.Close())
	}
}
