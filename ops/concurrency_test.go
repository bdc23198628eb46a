package ops_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// TestConcurrentKernels: goroutines share one device, each with its own
// kernels, images, states and command buffers; they encode a forward pass
// with state and its gradient, commit, read back and compare with the CPU
// reference, all at once. `make check` runs it under -race.
func TestConcurrentKernels(t *testing.T) {
	dev := vktest.Open(t)
	workers, iters := 4, 6
	if testing.Short() {
		iters = 2
	}
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func() { errs <- concurrentWorker(dev, int64(100+w), iters) }()
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// concurrentWorker runs iters random forward+gradient cases on dev and
// returns the first error or mismatch. It uses no testing.T: it runs off
// the test goroutine.
func concurrentWorker(dev *vk.Device, seed int64, iters int) (err error) {
	r := rand.New(rand.NewSource(seed))
	ctx := context.Background()
	var closers []interface{ Close() error }
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i].Close()
		}
	}()
	image := func(d padding.Descriptor, data []float32) (*ops.Image, error) {
		im, err := ops.NewImage(dev, ops.ImageDescriptor{N: d.N, C: d.C, H: d.H, W: d.W})
		if err != nil {
			return nil, err
		}
		closers = append(closers, im)
		if data != nil {
			err = im.Write(ctx, data)
		}
		return im, err
	}
	for i := 0; i < iters; i++ {
		kind := kinds[(int(seed)+i)%len(kinds)]
		c := randomCase(r, kind)
		c.clip, c.off.Z = ops.Region{}, 0 // the gradient covers the whole forward
		in := gradInput(r, kind, c.src.N*c.src.C*c.src.H*c.src.W)
		dy := randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)

		f, k, err := newForward(dev, kind, c.geom)
		if err != nil {
			return err
		}
		c.configure(f, k)
		f.SetRecordArgmax(i%2 == 1)
		g, err := ops.NewPoolingGradient(dev, kind, c.geom)
		if err != nil {
			return err
		}
		src, err := image(c.src, in)
		if err != nil {
			return err
		}
		dst, err := image(c.dst, nil)
		if err != nil {
			return err
		}
		dyIm, err := image(c.dst, dy)
		if err != nil {
			return err
		}
		cb, err := dev.NewCommandBuffer()
		if err != nil {
			return err
		}
		closers = append(closers, cb)
		st, err := f.EncodeWithState(cb, src, dst)
		if err != nil {
			return fmt.Errorf("%v: %w", c, err)
		}
		closers = append(closers, st)
		dx, err := g.EncodeNew(cb, dyIm, src, st)
		if err != nil {
			return fmt.Errorf("%v: %w", c, err)
		}
		closers = append(closers, dx)
		if err := cb.Commit(); err != nil {
			return err
		}
		// Read waits for the command buffer through the image.
		got, err := dst.Read(ctx)
		if err != nil {
			return err
		}
		gotDx, err := dx.Read(ctx)
		if err != nil {
			return err
		}

		inT, _ := ref.TensorOf(c.src.N, c.src.C, c.src.H, c.src.W, in)
		want := ref.NewTensor[float32](c.dst.N, c.dst.C, c.dst.H, c.dst.W)
		if err := ref.Pool(c.refGeometry(), inT, &want); err != nil {
			return err
		}
		if err := ref.Compare(refKind(kind), got, want.Data); err != nil {
			return fmt.Errorf("worker %d forward %v: %w", seed, c, err)
		}
		dyT, _ := ref.TensorOf(c.dst.N, c.dst.C, c.dst.H, c.dst.W, dy)
		wantDx := ref.NewTensor[float32](c.src.N, c.src.C, c.src.H, c.src.W)
		if err := ref.PoolGradient(c.refGeometry(), inT, dyT, &wantDx); err != nil {
			return err
		}
		if err := ref.Compare(refKind(kind), gotDx, wantDx.Data); err != nil {
			return fmt.Errorf("worker %d gradient %v: %w", seed, c, err)
		}
	}
	return nil
}
