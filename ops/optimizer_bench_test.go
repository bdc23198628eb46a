package ops_test

import (
	"context"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// optResNet18 returns the shapes of ResNet-18's 62 trainable tensors
// (torchvision's resnet18: 11,689,512 values), in the parameter layouts
// vkmps uses (weights O x I x KH x KW, vectors 1 x C x 1 x 1).
func optResNet18() []padding.Descriptor {
	conv := func(o, i, k int) padding.Descriptor { return padding.Descriptor{N: o, C: i, H: k, W: k} }
	vec := func(c int) padding.Descriptor { return padding.Descriptor{N: 1, C: c, H: 1, W: 1} }
	bn := func(c int) []padding.Descriptor { return []padding.Descriptor{vec(c), vec(c)} }
	out := append([]padding.Descriptor{conv(64, 3, 7)}, bn(64)...)
	in := 64
	for stage, c := range []int{64, 128, 256, 512} {
		for block := 0; block < 2; block++ {
			out = append(out, conv(c, in, 3))
			out = append(out, bn(c)...)
			out = append(out, conv(c, c, 3))
			out = append(out, bn(c)...)
			if block == 0 && stage > 0 {
				out = append(out, conv(c, in, 1))
				out = append(out, bn(c)...)
			}
			in = c
		}
	}
	return append(out, padding.Descriptor{N: 1000, C: 512, H: 1, W: 1}, vec(1000))
}

// GPU time of one training step's parameter updates for ResNet-18 (62
// tensors, 11.7M values, one EncodeStep and 62 Encodes in one command
// buffer, replayed), and the bandwidth of their minimum traffic: Adam
// reads g, w, m, v and writes w, m, v (28 bytes a value), SGD with
// momentum reads g, w, m and writes w, m (20 bytes).
//
//	go test ./ops -run XXX -bench BenchmarkOptimizerResNet18 -benchtime 20x
func BenchmarkOptimizerResNet18(b *testing.B) {
	dev := vktest.Open(b)
	if !dev.Limits().TimestampsSupported {
		b.Skip("no timestamps")
	}
	ctx := context.Background()
	shapes := optResNet18()
	r := rand.New(rand.NewSource(1))
	var params, grads []*ops.Image
	total := 0
	for _, sh := range shapes {
		n := sh.N * sh.C * sh.H * sh.W
		total += n
		params = append(params, newImage(b, dev, sh, randomData(r, n)))
		grads = append(grads, newImage(b, dev, sh, randomData(r, n)))
	}
	b.Logf("%d tensors, %d values", len(shapes), total)
	for _, c := range []struct {
		name  string
		bytes int
		desc  ops.OptimizerDescriptor
	}{
		{"adam", 28, must(ops.ParseOptimizer("adam", 1e-3, 0, 0))},
		{"sgd-momentum", 20, must(ops.ParseOptimizer("momentum", 0.01, 0.9, 0))},
	} {
		b.Run(c.name, func(b *testing.B) {
			opt, err := ops.NewOptimizer(dev, c.desc)
			require.NoError(b, err)
			defer opt.Close()
			var states []*ops.OptimizerState
			for _, p := range params {
				s, err := opt.NewState(ctx, p)
				require.NoError(b, err)
				defer s.Close()
				states = append(states, s)
			}
			cb, err := dev.NewCommandBuffer(vk.WithTimestamps())
			require.NoError(b, err)
			defer cb.Close()
			require.NoError(b, opt.EncodeStep(cb))
			for i := range params {
				require.NoError(b, opt.Encode(cb, params[i], grads[i], states[i]))
			}
			require.NoError(b, cb.Commit()) // warm-up
			require.NoError(b, cb.Wait(ctx))
			var ts []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				require.NoError(b, cb.Commit())
				require.NoError(b, cb.Wait(ctx))
				d, err := cb.GPUTime()
				require.NoError(b, err)
				ts = append(ts, d)
			}
			sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
			d := ts[len(ts)/2]
			b.ReportMetric(float64(d.Nanoseconds())/1e3, "gpu-us")
			b.ReportMetric(float64(c.bytes*total)/d.Seconds()/1e9, "GB/s")
		})
	}
}
