package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/progress"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// benchRunner takes the measurements of one bench run.
type benchRunner struct {
	ctx     context.Context
	dev     *vk.Device
	tuning  ops.Tuning // given to every kernel ($VKMPS_TUNE)
	iters   int
	minTime time.Duration
	maxReps int
	bar     *progress.Bar
	rng     *rand.Rand
	// warmup is the GPU time each measurement runs its command buffer
	// before timing it: GPUs lower their clocks while the host prepares
	// the next case, and take a while to raise them again.
	warmup time.Duration
	// copySrc and copyDst are the copy's buffers, kept to measure it again.
	copySrc, copyDst *vk.Buffer
}

// benchTiming is the GPU time of one encode: the median and minimum over
// the timed runs, each of Reps back-to-back encodes.
type benchTiming struct {
	Median, Min time.Duration
	Reps        int
}

// time measures encode, which records one kernel into a command buffer.
// A first command buffer with one encode, committed twice, calibrates the
// count K = ceil(minTime / its time) (1..maxReps); the measured command
// buffer holds K encodes, is committed once to warm up, then iters times.
func (b *benchRunner) time(encode func(cb *vk.CommandBuffer) error) (benchTiming, error) {
	one, err := b.gpuTimes(encode, 1, 1)
	if err != nil {
		return benchTiming{}, err
	}
	reps := 1
	if one[0] > 0 && one[0] < b.minTime {
		reps = int((b.minTime + one[0] - 1) / one[0])
	} else if one[0] <= 0 {
		reps = b.maxReps
	}
	reps = min(max(reps, 1), b.maxReps)
	ts, err := b.gpuTimes(encode, reps, b.iters)
	if err != nil {
		return benchTiming{}, err
	}
	slices.Sort(ts)
	med := ts[len(ts)/2]
	if len(ts)%2 == 0 {
		med = (ts[len(ts)/2-1] + ts[len(ts)/2]) / 2
	}
	return benchTiming{Median: med / time.Duration(reps), Min: ts[0] / time.Duration(reps), Reps: reps}, nil
}

// gpuTimes records reps encodes into one timestamped command buffer,
// commits it to warm up (once, or until b.warmup of GPU time has run) and
// then runs times, returning each run's GPU time.
func (b *benchRunner) gpuTimes(encode func(cb *vk.CommandBuffer) error, reps, runs int) ([]time.Duration, error) {
	cb, err := b.dev.NewCommandBuffer(vk.WithTimestamps(), vk.WithLabel("bench"))
	if err != nil {
		return nil, err
	}
	defer cb.Close()
	for range reps {
		if err := encode(cb); err != nil {
			return nil, err
		}
	}
	run := func() (time.Duration, error) {
		if err := cb.Commit(); err != nil {
			return 0, err
		}
		if err := cb.Wait(b.ctx); err != nil {
			return 0, err
		}
		return cb.GPUTime()
	}
	for warm, n := time.Duration(0), 0; n == 0 || (warm < b.warmup && n < 100000); n++ {
		t, err := run()
		if err != nil {
			return nil, err
		}
		warm += max(t, time.Microsecond)
	}
	out := make([]time.Duration, 0, runs)
	for range runs {
		t, err := run()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// benchCopy is the copy bandwidth: Bytes copied (read once, written once)
// per run of the copy shader, and vkCmdCopyBuffer's for comparison.
type benchCopy struct {
	Bytes    uint64
	Shader   benchTiming
	CmdCopy  benchTiming
	GBps     float64 // 2*Bytes / Shader.Median
	CmdGBps  float64
	Local    int
	MaxGroup uint32
}

// copyBandwidth measures copying size bytes between two new device
// buffers with vkmps's copy shader (dispatched in ranges of at most the
// device's storage-buffer range), and with vkCmdCopyBuffer. With keep, the
// buffers stay for copyAgain (closed by closeCopy).
func (b *benchRunner) copyBandwidth(size uint64, keep bool) (benchCopy, error) {
	cp := benchCopy{Bytes: size}
	src, err := b.dev.NewBuffer(size, "bench copy source")
	if err != nil {
		return cp, err
	}
	dst, err := b.dev.NewBuffer(size, "bench copy destination")
	if err != nil {
		src.Close()
		return cp, err
	}
	if keep {
		b.copySrc, b.copyDst = src, dst
	} else {
		defer src.Close()
		defer dst.Close()
	}
	// Defined contents, so that the copies read initialised memory.
	cb, err := b.dev.NewCommandBuffer(vk.WithLabel("bench copy fill"))
	if err != nil {
		return cp, err
	}
	err = cb.Fill(src.Whole(), 0x3f800000)
	if err == nil {
		err = cb.Commit()
	}
	if err == nil {
		err = cb.Wait(b.ctx)
	}
	cb.Close()
	if err != nil {
		return cp, err
	}
	return b.measureCopy(src, dst, size)
}

// copyAgain measures the copy again on the buffers copyBandwidth kept.
func (b *benchRunner) copyAgain() (benchCopy, error) {
	if b.copySrc == nil {
		return benchCopy{}, fmt.Errorf("internal error: no copy buffers kept")
	}
	return b.measureCopy(b.copySrc, b.copyDst, b.copySrc.Size())
}

// closeCopy closes the buffers copyBandwidth kept.
func (b *benchRunner) closeCopy() {
	b.copySrc.Close()
	b.copyDst.Close()
	b.copySrc, b.copyDst = nil, nil
}

func (b *benchRunner) measureCopy(src, dst *vk.Buffer, size uint64) (benchCopy, error) {
	lim := b.dev.Limits()
	cp := benchCopy{Bytes: size}
	cp.Local = int(min(256, lim.MaxComputeWorkGroupSize[0], lim.MaxComputeWorkGroupInvocations))
	p, err := b.dev.Pipeline(spirv.Copy, uint32(cp.Local))
	if err != nil {
		return cp, err
	}
	// Chunks within the storage-buffer range, whole vec4s, aligned.
	chunk := min(size, lim.MaxStorageBufferRange) &^ 255
	cp.MaxGroup = lim.MaxComputeWorkGroupCount[0]
	var push [12]byte
	cp.Shader, err = b.time(func(cb *vk.CommandBuffer) error {
		for off := uint64(0); off < size; off += chunk {
			n := min(chunk, size-off)
			vec4s := n / 16
			binary.LittleEndian.PutUint32(push[0:], uint32(vec4s))
			groups := uint32(min((vec4s+uint64(cp.Local)-1)/uint64(cp.Local), uint64(cp.MaxGroup)))
			if err := cb.Dispatch(p, []vk.BufferRange{src.Range(off, n), dst.Range(off, n)}, push[:], [3]uint32{groups, 1, 1}); err != nil {
				return err
			}
		}
		return nil
	})
	b.bar.Add(1)
	if err != nil {
		return cp, err
	}
	cp.CmdCopy, err = b.time(func(cb *vk.CommandBuffer) error { return cb.Copy(dst.Whole(), src.Whole()) })
	b.bar.Add(1)
	if err != nil {
		return cp, err
	}
	cp.GBps = gbps(2*size, cp.Shader.Median)
	cp.CmdGBps = gbps(2*size, cp.CmdCopy.Median)
	return cp, nil
}

// gbps is bytes / t in GB/s (10^9 bytes per second).
func gbps(bytes uint64, t time.Duration) float64 {
	if t <= 0 {
		return 0
	}
	return float64(bytes) / float64(t.Nanoseconds())
}

// benchRow is the result of one case.
type benchRow struct {
	benchCase
	Pads     [4]int // what ran: top, left, bottom, right
	Dilation int
	Out      ops.ImageDescriptor
	Fwd, Bwd benchTiming
	// FwdBytes and BwdBytes are the traffic model's bytes.
	FwdBytes, BwdBytes uint64
	FwdGBps, BwdGBps   float64
	// Skipped says why the case did not run (e.g. beyond the device's
	// limits); the timings are then zero.
	Skipped string
}

// shape runs the cases of one shape and format, which share the input
// image.
func (b *benchRunner) shape(cases []benchCase, cp benchCopy) ([]benchRow, error) {
	s := cases[0].shape
	src, err := ops.NewImage(b.dev, ops.ImageDescriptor{N: s.N, C: s.C, H: s.H, W: s.W, Format: cases[0].dtype, Label: "bench input " + s.String()})
	if err != nil {
		return nil, fmt.Errorf("shape %s: %w", s, err)
	}
	defer src.Close()
	if err := src.Write(b.ctx, b.random(src.Len())); err != nil {
		return nil, fmt.Errorf("shape %s: %w", s, err)
	}
	rows := make([]benchRow, 0, len(cases))
	for _, c := range cases {
		b.bar.Describe(fmt.Sprintf("%s %s", c.label(), s))
		row, err := b.kernel(c, src)
		if err != nil {
			return nil, fmt.Errorf("%s on %s k%d s%d p%d: %w", c.label(), s, s.K, s.S, s.P, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// random returns n values uniform in [-1, 1): ties in a max window are
// then rare, as in real data.
func (b *benchRunner) random(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 2*b.rng.Float32() - 1
	}
	return v
}

// kernel measures one case: its forward kernel, then its gradient.
func (b *benchRunner) kernel(c benchCase, src *ops.Image) (row benchRow, err error) {
	kind, geom, pads, policy := c.setup()
	row = benchRow{benchCase: c, Pads: [4]int{pads.Top, pads.Left, pads.Bottom, pads.Right}, Dilation: geom.DilationX}
	k, err := ops.NewPooling(b.dev, kind, geom)
	if err != nil {
		return row, err
	}
	k.Properties().Padding = policy
	k.SetRecordArgmax(c.argmax)
	gk, err := ops.NewPoolingGradient(b.dev, kind, geom)
	if err != nil {
		return row, err
	}
	if err := k.SetTuning(b.tuning); err != nil {
		return row, err
	}
	if err := gk.SetTuning(b.tuning); err != nil {
		return row, err
	}

	// A forward and a gradient with the encode forms that size and
	// configure: the timed encodes reuse their images and properties.
	var dst, dy, dx *ops.Image
	var state *ops.PoolingGradientState
	var states []*ops.PoolingGradientState
	defer func() {
		for _, im := range []*ops.Image{dst, dy, dx} {
			if im != nil {
				im.Close()
			}
		}
		if state != nil {
			state.Close()
		}
		for _, s := range states {
			s.Close()
		}
	}()
	cb, err := b.dev.NewCommandBuffer(vk.WithLabel("bench setup"))
	if err != nil {
		return row, err
	}
	defer cb.Close()
	if dst, state, err = k.EncodeNewWithState(cb, src); err != nil {
		return benchSkip(row, b, err)
	}
	row.Out = dst.Descriptor()
	if dy, err = ops.NewImage(b.dev, ops.ImageDescriptor{N: row.Out.N, C: row.Out.C, H: row.Out.H, W: row.Out.W, Format: c.dtype, Label: "bench output gradient"}); err != nil {
		return row, err
	}
	if err := dy.Write(b.ctx, b.random(dy.Len())); err != nil {
		return row, err
	}
	if dx, err = gk.EncodeNew(cb, dy, src, state); err != nil {
		return benchSkip(row, b, err)
	}
	if err := cb.Commit(); err != nil {
		return row, err
	}
	if err := cb.Wait(b.ctx); err != nil {
		return row, err
	}

	row.Fwd, err = b.time(func(cb *vk.CommandBuffer) error {
		if !c.argmax {
			return k.Encode(cb, src, dst)
		}
		// Recording the argmax needs a state per encode.
		s, err := k.EncodeWithState(cb, src, dst)
		if s != nil {
			states = append(states, s)
		}
		return err
	})
	b.bar.Add(1)
	if err != nil {
		return row, err
	}
	row.Bwd, err = b.time(func(cb *vk.CommandBuffer) error { return gk.Encode(cb, dy, src, state, dx) })
	b.bar.Add(1)
	if err != nil {
		return row, err
	}

	es := uint64(c.dtype.Size())
	in, out := uint64(src.Len())*es, uint64(dy.Len())*es
	row.FwdBytes, row.BwdBytes = in+out, 2*in+out
	if c.argmax {
		idx := uint64(dy.Len()) * uint64(state.ArgmaxBits()) / 8
		row.FwdBytes, row.BwdBytes = in+out+idx, idx+out+in
	}
	row.FwdGBps, row.BwdGBps = gbps(row.FwdBytes, row.Fwd.Median), gbps(row.BwdBytes, row.Bwd.Median)
	return row, nil
}

// benchSkip records a case the kernels refuse (a geometry beyond the
// device's limits, an empty output) as skipped, as the PyTorch script does;
// other errors end the run.
func benchSkip(row benchRow, b *benchRunner, err error) (benchRow, error) {
	if !errors.Is(err, ops.ErrDeviceLimit) && !errors.Is(err, ops.ErrGeometry) &&
		!errors.Is(err, padding.ErrEmptyDestination) && !errors.Is(err, padding.ErrInvalidGeometry) {
		return row, err
	}
	b.bar.Add(2)
	row.Skipped = oneLine(err)
	return row, nil
}
