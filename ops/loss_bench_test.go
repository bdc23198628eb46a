package ops_test

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// BenchmarkLossGPU: GPU time of the loss forward (ReductionMean: the
// partial sums and the final reduction) and gradient on 4x32x56x56, or
// with VKMPS_BENCH_LARGE=1 on 64x256x56x56 (the shape), for every
// loss type (-bench 'BenchmarkLossGPU/huber' picks one); float32 images, or
// float16 with VKMPS_BENCH_DTYPE=float16. Metrics: gpu-us, GB/s of minimum traffic
// (forward: prediction and labels read; gradient: both read and the
// gradient written) and copy%, that bandwidth over a device-to-device copy
// of the prediction's size measured alongside (the target is >= 85).
// bench/torch_loss_baseline.py times PyTorch's eager losses on the same
// shapes.
func BenchmarkLossGPU(b *testing.B) {
	dev := vktest.Open(b)
	if !dev.Limits().TimestampsSupported {
		b.Skip("no timestamps")
	}
	format := benchFormat(b, dev)
	sh := padding.Descriptor{N: 4, C: 32, H: 56, W: 56}
	if os.Getenv("VKMPS_BENCH_LARGE") == "1" {
		sh = padding.Descriptor{N: 64, C: 256, H: 56, W: 56}
	}
	n := sh.N * sh.C * sh.H * sh.W
	bytes := float64(n) * float64(format.Size())
	copyBW := lossCopyBandwidth(b, dev, uint64(bytes))
	r := rand.New(rand.NewSource(1))
	for typ := ops.LossType(0); typ.Valid(); typ++ {
		pv, lv := ref.LossInputs(r, ref.LossType(typ), sh.N, sh.C, sh.H, sh.W)
		pred, labels := newLossImage(b, dev, sh, format, pv), newLossImage(b, dev, sh, format, lv)
		grad := newLossImage(b, dev, sh, format, nil)
		loss := newLossImage(b, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 1}, format, nil)
		k, err := ops.NewLoss(dev, ops.LossDescriptor{Type: typ, Reduction: ops.ReductionMean})
		require.NoError(b, err)
		name := fmt.Sprintf("%v/%dx%dx%dx%d", typ, sh.N, sh.C, sh.H, sh.W)
		if format != ops.Float32 {
			name += "-" + format.String()
		}
		report := func(b *testing.B, encode func(cb *vk.CommandBuffer) error, traffic float64) {
			for i := 0; i < b.N; i++ {
				d := gpuTime(b, dev, 10, 7, encode)
				bw := traffic / d.Seconds() / 1e9
				b.ReportMetric(float64(d.Nanoseconds())/1e3, "gpu-us")
				b.ReportMetric(bw, "GB/s")
				b.ReportMetric(100*bw/copyBW, "copy%")
			}
		}
		b.Run(name+"/fwd", func(b *testing.B) {
			report(b, func(cb *vk.CommandBuffer) error { return k.Encode(cb, pred, labels, loss) }, 2*bytes)
		})
		b.Run(name+"/bwd", func(b *testing.B) {
			report(b, func(cb *vk.CommandBuffer) error { return k.EncodeGradient(cb, pred, labels, grad) }, 3*bytes)
		})
		k.Close()
		for _, im := range []*ops.Image{pred, labels, grad, loss} {
			im.Close()
		}
	}
}

// lossCopyBandwidth returns the GB/s (read + written) of a vec4 copy of
// size bytes (capped at the storage-buffer range) on dev.
func lossCopyBandwidth(b *testing.B, dev *vk.Device, size uint64) float64 {
	size = min(size, dev.Limits().MaxStorageBufferRange) &^ 15
	a, err := dev.NewBuffer(size, "loss copy a")
	require.NoError(b, err)
	defer a.Close()
	c, err := dev.NewBuffer(size, "loss copy b")
	require.NoError(b, err)
	defer c.Close()
	p, err := dev.Pipeline(spirv.Copy, 256)
	require.NoError(b, err)
	push := make([]byte, 12)
	binary.LittleEndian.PutUint32(push, uint32(size/16))
	groups := uint32(min((size/16+255)/256, uint64(dev.Limits().MaxComputeWorkGroupCount[0])))
	d := gpuTime(b, dev, 10, 5, func(cb *vk.CommandBuffer) error {
		return cb.Dispatch(p, []vk.BufferRange{a.Whole(), c.Whole()}, push, [3]uint32{groups, 1, 1})
	})
	bw := float64(2*size) / d.Seconds() / 1e9
	b.Logf("copy of %d MiB: %.0f GB/s", size>>20, bw)
	return bw
}
