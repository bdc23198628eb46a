package ops_test

import (
	"context"
	"math/rand"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// TestSoakEncodes encodes forward passes with a new gradient state each
// time (recording argmax half the time), their gradients, and EncodeNew
// destinations, in new command buffers, 300 times ($VKMPS_SOAK for
// more): after a warm-up the live Vulkan objects and the device memory
// stay where they were and the results do not change.
func TestSoakEncodes(t *testing.T) {
	iters := 300
	if s := os.Getenv("VKMPS_SOAK"); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(t, err, "VKMPS_SOAK")
		iters = v
	} else if testing.Short() {
		iters = 40
	}
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(31))
	sd := padding.Descriptor{N: 2, C: 3, H: 17, W: 13}
	src := newImage(t, dev, sd, randomData(r, sd.N*sd.C*sd.H*sd.W))
	var fwd []ops.Pooling
	var grad []ops.PoolingGradient
	for _, kind := range kinds {
		g := ops.Geometry{KernelWidth: 3, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
		if kind == ops.KindDilatedMax {
			g.DilationX = 2
		}
		f, err := ops.NewPooling(dev, kind, g)
		require.NoError(t, err)
		gk, err := ops.NewPoolingGradient(dev, kind, g)
		require.NoError(t, err)
		fwd, grad = append(fwd, f), append(grad, gk)
	}
	var want [][]float32
	var live0 map[string]int
	var mem0 vk.MemoryStats
	const warm = 2 * 4
	for i := 0; i < iters; i++ {
		k := i % len(kinds)
		fwd[k].SetRecordArgmax(i/len(kinds)%2 == 1)
		got := func() []float32 {
			cb, err := dev.NewCommandBuffer()
			require.NoError(t, err)
			defer cb.Close()
			dst, st, err := fwd[k].EncodeNewWithState(cb, src)
			require.NoError(t, err)
			defer dst.Close()
			defer st.Close()
			dy, err := ops.NewImage(dev, dst.Descriptor())
			require.NoError(t, err)
			defer dy.Close()
			require.NoError(t, ops.Copy(cb, dst, dy)) // dy = y
			dx, err := grad[k].EncodeNew(cb, dy, src, st)
			require.NoError(t, err)
			defer dx.Close()
			require.NoError(t, cb.Commit())
			out, err := dx.Read(ctx)
			require.NoError(t, err)
			return out
		}()
		if i < len(kinds) {
			want = append(want, got)
		} else {
			require.True(t, sameBits(want[k], got), "iteration %d (%v) changed", i, kinds[k])
		}
		require.NoError(t, dev.WaitIdle(ctx))
		switch {
		case i == warm-1:
			live0, mem0 = dev.LiveObjects(), dev.MemoryStats()
		case i >= warm:
			require.Equal(t, live0, dev.LiveObjects(), "iteration %d", i)
			require.Equal(t, mem0, dev.MemoryStats(), "iteration %d", i)
		}
	}
	assert.Equal(t, map[string]int{"buffer": 1}, live0, "only the source is open between iterations")
	t.Logf("%d encodes with new states: live objects %v, device memory %d blocks, %d bytes", iters, live0, mem0.Blocks, mem0.Bytes)
}
