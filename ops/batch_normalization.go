package ops

import (
	"context"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// BatchNormalizationDescriptor configures a batch normalization
// (MPSCNNBatchNormalization with its data source): per feature channel c,
// over the N*H*W values of c,
//
//	y = f(gamma[c] * (x - mean[c]) / sqrt(var[c] + Epsilon) + beta[c])
//
// with f the fused Neuron (NeuronNone: none; PReLU cannot be fused).
// Training uses the batch's mean and biased variance (over N, H and W) and
// updates the running statistics with Momentum, as PyTorch does:
// running = (1-Momentum)*running + Momentum*batch, with the unbiased
// variance var*M/(M-1) (M = N*H*W) for the running variance. Inference
// uses the running mean and variance.
//
// NewBatchNormalizationDescriptor gives PyTorch's defaults: Epsilon 1e-5
// and Momentum 0.1. (MPS's own default epsilon is FLT_MIN, 1.18e-38.)
type BatchNormalizationDescriptor struct {
	// Channels is C, the number of feature channels (the length of gamma,
	// beta and the running statistics).
	Channels int
	// Epsilon is added to the variance; >= 0 and finite.
	Epsilon float32
	// Momentum weighs a training batch in the running statistics; in [0, 1].
	Momentum float32
	// Neuron is applied to the result; the zero value is none.
	Neuron NeuronDescriptor
}

// NewBatchNormalizationDescriptor returns the descriptor of a batch
// normalization of channels channels with PyTorch's defaults (epsilon
// 1e-5, momentum 0.1) and no neuron.
func NewBatchNormalizationDescriptor(channels int) BatchNormalizationDescriptor {
	return BatchNormalizationDescriptor{Channels: channels, Epsilon: 1e-5, Momentum: 0.1}
}

// Validate checks the descriptor: channels >= 1, epsilon >= 0 and finite,
// momentum in [0, 1], a valid neuron other than PReLU.
func (d BatchNormalizationDescriptor) Validate() error {
	const label = "BatchNormalization"
	if d.Channels < 1 {
		return fmt.Errorf("%w: %s: channels %d < 1", ErrShape, label, d.Channels)
	}
	if err := finite(label, "epsilon", d.Epsilon); err != nil {
		return err
	}
	if d.Epsilon < 0 {
		return fmt.Errorf("%w: %s: epsilon %g < 0", ErrGeometry, label, d.Epsilon)
	}
	if err := finite(label, "momentum", d.Momentum); err != nil {
		return err
	}
	if d.Momentum < 0 || d.Momentum > 1 {
		return fmt.Errorf("%w: %s: momentum %g outside [0, 1]", ErrGeometry, label, d.Momentum)
	}
	if d.Neuron.Type == NeuronPReLU {
		return fmt.Errorf("%w: %s: a prelu neuron cannot be fused into batch normalization (use a Neuron kernel after it)", ErrGeometry, label)
	}
	return d.Neuron.Validate(label, d.Channels)
}

// ResultDescriptor returns the shape of the result for a source of shape
// src: src's, which must have d.Channels channels.
func (d BatchNormalizationDescriptor) ResultDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	if src.C != d.Channels {
		return ImageDescriptor{}, fmt.Errorf("%w: BatchNormalization: source %dx%dx%dx%d has %d channels, the kernel %d",
			ErrShape, src.N, src.C, src.H, src.W, src.C, d.Channels)
	}
	if src.N < 1 || src.H < 1 || src.W < 1 {
		return ImageDescriptor{}, fmt.Errorf("%w: BatchNormalization: source %dx%dx%dx%d", ErrInvalidImage, src.N, src.C, src.H, src.W)
	}
	src.Label = ""
	return src, nil
}

// Task bits of glsl/batch_normalization_common.glsl.
const (
	bnTaskStats   = 1
	bnTaskApply   = 2
	bnTaskMerge   = 4
	bnTaskRunning = 8
	bnFromState   = 16
	bnFromRunning = 32
	bnWriteState  = 64
	bnUpdate      = 128
	bnTraining    = 256
	bnDGamma      = 512
	bnDBeta       = 1024
)

// How the batch normalization kernels cut a channel's values into chunks,
// one workgroup each. A statistics chunk reads between bnMinChunkBytes
// and bnMaxChunkBytes of input (x in the forward, x and dy together in
// the gradient): the dispatch's input over bnChunkDivisor, so that large
// tensors give thousands of workgroups (the whole GPU busy, a short tail)
// and each workgroup's fixed cost (its tree reduction) stays small
// against its loads; small tensors get smaller chunks and still several
// hundred workgroups where they have the values.
const (
	bnMinChunkBytes = 8 << 10
	bnMaxChunkBytes = 32 << 10
	bnChunkDivisor  = 2048
	// bnMaxChunks bounds the chunks of one channel (the scratch buffer
	// holds two floats per chunk).
	bnMaxChunks = 1 << 16
)

// bnFusedValues is the most values per channel (N*H*W) a training-mode
// batch normalization, forward or gradient, runs as one fused dispatch
// (one workgroup per channel: sums, merge and apply; see
// glsl/batch_normalization_common.glsl's T_FUSED) instead of three, when
// the batch is one dispatch: ResNet-18's 28x28, 14x14 and 7x7 layers at
// batch 32 (25088, 6272 and 1568 values). The fused pass computes the
// same values in the same order as the three passes over one chunk per
// channel. On an H200 (bench/results/h200-2026-11-29-s6, run 6) taking
// the 28x28 layers too (the bound 8192 before) took ResNet-18's float32
// training step from 8.542 to 8.453 ms and float16 from 5.861 to 5.804
// (its batch normalizations' profiled time 1012 -> 941 µs and 807 ->
// 748); fusing the 56x56 layers as well (100352 values, 64 workgroups,
// with workgroups of 512) gained 8 µs more in float32 and lost 15 in
// float16.
const bnFusedValues = 32768

// fused reports whether a batch of values values per channel, one
// dispatch, runs fused: not while a test sets the chunk size.
func (b *bnCore) fused(single bool, values int) bool {
	b.lastFused = single && b.chunkBytes == 0 && values <= bnFusedValues
	return b.lastFused
}

// fusedChunks is the fused pass's plan: one chunk per channel.
func fusedChunks(p part, plane int, vec4 bool) bnChunks {
	vec := 1
	if vec4 {
		vec = 4
	}
	return bnPlan(p.batches, plane, vec, p.batches*plane)
}

// bnChunks is how a dispatch cuts each channel's values: segs segments of
// seg values per plane, or group whole planes per chunk; chunks per
// channel.
type bnChunks struct{ segs, seg, group, chunks int }

// bnPlan cuts the batches × plane values of a channel into chunks of
// about target values (segments a multiple of vec values).
func bnPlan(batches, plane, vec, target int) bnChunks {
	for {
		var c bnChunks
		if plane >= target {
			c.segs = (plane + target - 1) / target
			c.seg = ((plane+c.segs-1)/c.segs + vec - 1) / vec * vec
			c.segs = (plane + c.seg - 1) / c.seg
			c.group = 1
		} else {
			c.segs, c.seg = 1, plane
			c.group = max(1, target/plane)
		}
		c.chunks = (batches + c.group - 1) / c.group * c.segs
		if c.chunks <= bnMaxChunks {
			return c
		}
		target *= 2
	}
}

// bnCore is what the batch normalization kernels share: device, label,
// workgroup size, pipelines and the scratch buffer of partial sums.
type bnCore struct {
	dev     *vk.Device
	label   string
	local   int
	shader  *spirv.Shader
	neuron  NeuronDescriptor
	pipes   [2][2]*vk.Pipeline // [float16][vec4]
	scratch *vk.Buffer
	dummy   *vk.Buffer
	// chunkBytes, when > 0, replaces the chunk size rule (tests: many
	// chunks per channel on small tensors) and turns the fused pass off.
	chunkBytes int
	lastFused  bool // whether the last training encode ran fused (tests)
}

func newBNCore(dev *vk.Device, label string, sh *spirv.Shader, neuron NeuronDescriptor) (bnCore, error) {
	if dev == nil {
		return bnCore{}, fmt.Errorf("%w: %s: nil device", ErrDevice, label)
	}
	local := 1
	for local*2 <= workgroup(dev.Limits()) {
		local *= 2
	}
	return bnCore{dev: dev, label: label, local: local, shader: sh, neuron: neuron}, nil
}

// chunkValues returns the values per chunk aimed at for a dispatch whose
// statistics pass reads inputs images of values values each, format f.
func (b *bnCore) chunkValues(f Format, inputs, values int) int {
	bytes := b.chunkBytes
	if bytes <= 0 {
		bytes = min(bnMaxChunkBytes, max(bnMinChunkBytes, inputs*values*f.Size()/bnChunkDivisor))
	}
	return max(16, bytes/(f.Size()*inputs))
}

func (b *bnCore) pipeline(f16, vec4 bool) (*vk.Pipeline, error) {
	return normVecPipeline(b.dev, &b.pipes, b.shader, b.label, b.local, &b.neuron, f16, vec4)
}

// ensureScratch makes the scratch buffer at least words 32-bit words; a
// smaller one is closed (it lives on while submitted work uses it).
func (b *bnCore) ensureScratch(words int) error {
	return ensureWords(b.dev, &b.scratch, words, b.label, "partial sums")
}

// dummyRange is a small buffer bound where a pass reads or writes nothing.
func (b *bnCore) dummyRange() (vk.BufferRange, error) {
	return dummyBufferRange(b.dev, &b.dummy, b.label)
}

func (b *bnCore) close() error {
	return closeBuffers(&b.scratch, &b.dummy)
}

// dispatch records groups workgroups of pl, as a 2-D grid when they
// exceed the device's x count.
func (b *bnCore) dispatch(cb *vk.CommandBuffer, pl *vk.Pipeline, binds []vk.BufferRange, push []byte, groups int) error {
	lim := b.dev.Limits()
	gx := min(groups, int(lim.MaxComputeWorkGroupCount[0]))
	gy := (groups + gx - 1) / gx
	if gy > int(lim.MaxComputeWorkGroupCount[1]) {
		return fmt.Errorf("%w: %s: %d workgroups exceed the device's %d x %d", ErrDeviceLimit, b.label, groups,
			lim.MaxComputeWorkGroupCount[0], lim.MaxComputeWorkGroupCount[1])
	}
	if err := cb.Dispatch(pl, binds, push, [3]uint32{uint32(gx), uint32(gy), 1}); err != nil {
		return fmt.Errorf("%s: %w", b.label, err)
	}
	return nil
}

// bnVec4 reports whether the part's images allow quad loads: planes of a
// multiple of 4 values and bases on multiples of 4.
func bnVec4(plane int, bases ...uint32) bool {
	if plane%4 != 0 {
		return false
	}
	for _, b := range bases {
		if b%4 != 0 {
			return false
		}
	}
	return true
}

// paramRange binds channels [c0, c0+n) of a 1×C×1×1 float32 image.
func paramRange(im *Image, align uint64, c0, n int) (vk.BufferRange, uint32) {
	return bindRun(im.buf, align, (im.base+uint64(c0))*4, n)
}

// checkParam validates a per-channel parameter image: open, on dev,
// float32, 1×channels×1×1.
func checkParam(dev *vk.Device, label, role string, im *Image, channels int) error {
	if im == nil {
		return fmt.Errorf("%w: %s: nil %s image", ErrInvalidImage, label, role)
	}
	if err := im.usable(); err != nil {
		return fmt.Errorf("%s: %s: %w", label, role, err)
	}
	if im.dev != dev {
		return fmt.Errorf("%w: %s: %s image %s is on another device", ErrDevice, label, role, im)
	}
	if im.format != Float32 {
		return fmt.Errorf("%w: %s: %s image %s is %v; per-channel parameters are float32", ErrFormat, label, role, im, im.format)
	}
	if im.n != 1 || im.c != channels || im.h != 1 || im.w != 1 {
		return fmt.Errorf("%w: %s: %s image %s, want 1x%dx1x1 (one value per channel)", ErrShape, label, role, im, channels)
	}
	return nil
}

// BatchNormalization normalizes each feature channel by a mean and
// variance, then scales by gamma and shifts by beta (MPSCNNBatchNormalization):
// see BatchNormalizationDescriptor for the formula and defaults. Gamma,
// beta and the running mean and variance are 1×C×1×1 float32 images that
// the kernel reads at each encode (an optimizer may update gamma and beta
// on the GPU between encodes; training encodes update the running values
// in place). Sources and destinations are N×C×H×W images of one format
// (float32 or float16; statistics are float32).
//
// Encode forms, all on explicit images of one shape:
//   - EncodeTraining: the batch statistics (one pass over the source),
//     normalization and the running-statistics update, recording the
//     statistics in a BatchNormalizationState for the gradient.
//   - EncodeInference: normalization by the running statistics (and, with
//     a state, records them for an inference-mode gradient).
//   - Encode (MPS's form): normalization by the statistics that
//     BatchNormalizationStatistics accumulated in the state, possibly over
//     several sub-batches; EncodeRunningStatisticsUpdate then folds them
//     into the running values.
//
// A training encode is three dispatches: the statistics (one workgroup
// per chunk of a channel's values reads them once and writes the chunk's
// partial sums), the merge (one workgroup per channel adds its partials in
// chunk order into the state, and updates the running statistics), and
// the normalization (one workgroup per chunk reads x again and writes y):
// two reads and one write of the tensor. No float atomics: results repeat
// bit for bit. A tensor larger than one storage-buffer binding is split
// into parts whose statistics are merged (Chan's formula) before any is
// normalized.
type BatchNormalization struct {
	bnCore
	desc                 BatchNormalizationDescriptor
	gamma, beta          *Image
	runMean, runVariance *Image
	closed               atomic.Bool
}

// NewBatchNormalization makes a batch normalization kernel of descriptor d
// over the parameter images gamma, beta, runningMean and runningVariance
// (each 1×C×1×1 float32, C = d.Channels; the running images are updated
// in place by training encodes, so they may not overlap one another or
// gamma and beta).
func NewBatchNormalization(dev *vk.Device, d BatchNormalizationDescriptor, gamma, beta, runningMean, runningVariance *Image) (*BatchNormalization, error) {
	const label = "BatchNormalization"
	if err := d.Validate(); err != nil {
		return nil, err
	}
	core, err := newBNCore(dev, label, spirv.BatchNormalization, d.Neuron)
	if err != nil {
		return nil, err
	}
	params := []*Image{gamma, beta, runningMean, runningVariance}
	roles := []string{"gamma", "beta", "running mean", "running variance"}
	for i, im := range params {
		if err := checkParam(dev, label, roles[i], im, d.Channels); err != nil {
			return nil, err
		}
	}
	for i := 2; i < 4; i++ {
		for j := 0; j < 4; j++ {
			if j != i && overlaps(params[i], params[j]) {
				return nil, fmt.Errorf("%w: %s: the %s image %s shares storage with the %s image %s", ErrAlias, label, roles[i], params[i], roles[j], params[j])
			}
		}
	}
	return &BatchNormalization{bnCore: core, desc: d, gamma: gamma, beta: beta, runMean: runningMean, runVariance: runningVariance}, nil
}

// Descriptor returns the kernel's configuration.
func (k *BatchNormalization) Descriptor() BatchNormalizationDescriptor { return k.desc }

// Gamma, Beta, RunningMean and RunningVariance return the parameter images.
func (k *BatchNormalization) Gamma() *Image           { return k.gamma }
func (k *BatchNormalization) Beta() *Image            { return k.beta }
func (k *BatchNormalization) RunningMean() *Image     { return k.runMean }
func (k *BatchNormalization) RunningVariance() *Image { return k.runVariance }

// Close releases the kernel's scratch memory (not the parameter images);
// safe twice.
func (k *BatchNormalization) Close() error {
	if k == nil || k.closed.Swap(true) {
		return nil
	}
	return k.close()
}

// BatchNormalizationState holds what a forward batch normalization used,
// for its gradient (MPSCNNBatchNormalizationState): per channel the mean
// and biased variance (the batch's in training, the running values in
// inference), gamma and beta, and the gradient's sums (dbeta = sum g,
// dgamma = sum g*xhat). It lives in one GPU buffer of 6*C float32 values.
// Close releases it (safe twice); close it after the command buffers that
// use it are committed.
type BatchNormalizationState struct {
	bn        *BatchNormalization
	buf       *vk.Buffer
	channels  int
	count     int // values per channel in the statistics; 0: none
	training  bool
	epsilon   float32
	gradCount int // values per channel summed by the gradient
	closed    atomic.Bool
}

// NewState makes a state for k's encodes.
func (k *BatchNormalization) NewState() (*BatchNormalizationState, error) {
	if k.closed.Load() {
		return nil, fmt.Errorf("%w: %s", ErrClosed, k.label)
	}
	buf, err := k.dev.NewBuffer(uint64(6*k.desc.Channels)*4, k.label+" state")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.label, err)
	}
	return &BatchNormalizationState{bn: k, buf: buf, channels: k.desc.Channels}, nil
}

// Close releases the state's buffer; safe twice.
func (s *BatchNormalizationState) Close() error {
	if s == nil || s.closed.Swap(true) {
		return nil
	}
	return s.buf.Close()
}

// Reset forgets accumulated statistics and gradient sums: the next
// BatchNormalizationStatistics or StatisticsGradient encode starts afresh
// (MPS's reset).
func (s *BatchNormalizationState) Reset() { s.count, s.gradCount = 0, 0 }

// Count returns the values per channel the statistics cover (0: none yet).
func (s *BatchNormalizationState) Count() int { return s.count }

// Training reports whether the statistics are a batch's (training) rather
// than the running values (inference).
func (s *BatchNormalizationState) Training() bool { return s.training }

// readArray downloads state array a (0 mean, 1 variance, 2 gamma, 3 beta,
// 4 dbeta, 5 dgamma), after the work that writes it has finished.
func (s *BatchNormalizationState) readArray(ctx context.Context, a int) ([]float32, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	out := make([]float32, s.channels)
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), 4*len(out))
	if err := s.buf.Read(ctx, uint64(a*s.channels)*4, b); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadMean and ReadVariance download the per-channel mean and biased
// variance the forward used; ReadGammaGradient and ReadBetaGradient the
// gradient's dgamma and dbeta.
func (s *BatchNormalizationState) ReadMean(ctx context.Context) ([]float32, error) {
	return s.readArray(ctx, 0)
}
func (s *BatchNormalizationState) ReadVariance(ctx context.Context) ([]float32, error) {
	return s.readArray(ctx, 1)
}
func (s *BatchNormalizationState) ReadGammaGradient(ctx context.Context) ([]float32, error) {
	return s.readArray(ctx, 5)
}
func (s *BatchNormalizationState) ReadBetaGradient(ctx context.Context) ([]float32, error) {
	return s.readArray(ctx, 4)
}

func (s *BatchNormalizationState) usable() error {
	if s == nil {
		return fmt.Errorf("%w: nil batch normalization state", ErrState)
	}
	if s.closed.Load() {
		return fmt.Errorf("%w: batch normalization state", ErrClosed)
	}
	return nil
}

// bnPush is glsl/batch_normalization.comp's push constants.
type bnPush struct {
	Channels, Batches, Plane, Segs, Seg, Group, Chunks, Tasks uint32
	XBase, XBatch, YBase, YBatch                              uint32
	GBase, BBase, RMBase, RVBase                              uint32
	StBase, StStride                                          uint32
	Epsilon, Momentum, CountBefore, Count                     float32
}

// checkForward validates an encode's images (dst nil: none) and state.
func (k *BatchNormalization) checkForward(cb *vk.CommandBuffer, src, dst *Image, st *BatchNormalizationState, needState bool) error {
	if k.closed.Load() {
		return fmt.Errorf("%w: %s", ErrClosed, k.label)
	}
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.label)
	}
	if err := checkImages(k.dev, k.label, []string{"source"}, src); err != nil {
		return err
	}
	if src.c != k.desc.Channels {
		return fmt.Errorf("%w: %s: source %s has %d channels, the kernel %d", ErrShape, k.label, src, src.c, k.desc.Channels)
	}
	if dst != nil {
		if err := checkImages(k.dev, k.label, []string{"destination"}, dst); err != nil {
			return err
		}
		if err := sameShape(k.label, src, dst); err != nil {
			return err
		}
		if src.format != dst.format {
			return fmt.Errorf("%w: %s: source %s is %v but destination %s is %v", ErrFormat, k.label, src, src.format, dst, dst.format)
		}
		if overlaps(src, dst) {
			return fmt.Errorf("%w: %s: source %s and destination %s share storage", ErrAlias, k.label, src, dst)
		}
	}
	for i, im := range []*Image{k.gamma, k.beta, k.runMean, k.runVariance} {
		if err := im.usable(); err != nil {
			return fmt.Errorf("%s: parameter %d: %w", k.label, i, err)
		}
	}
	if st == nil {
		if needState {
			return fmt.Errorf("%w: %s: nil state", ErrState, k.label)
		}
		return nil
	}
	if err := st.usable(); err != nil {
		return fmt.Errorf("%s: %w", k.label, err)
	}
	if st.bn != k {
		return fmt.Errorf("%w: %s: the state belongs to another batch normalization", ErrState, k.label)
	}
	return nil
}

// forwardBinds fills the parameter, state and scratch bindings (2..7) for
// channels [c0, c0+n).
func (k *BatchNormalization) forwardBinds(binds []vk.BufferRange, pc *bnPush, st *BatchNormalizationState, c0, n int) error {
	lim := k.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	binds[2], pc.GBase = paramRange(k.gamma, align, c0, n)
	binds[3], pc.BBase = paramRange(k.beta, align, c0, n)
	binds[4], pc.RMBase = paramRange(k.runMean, align, c0, n)
	binds[5], pc.RVBase = paramRange(k.runVariance, align, c0, n)
	if st != nil {
		binds[6] = st.buf.Whole()
		pc.StBase, pc.StStride = uint32(c0), uint32(st.channels)
	} else {
		d, err := k.dummyRange()
		if err != nil {
			return err
		}
		binds[6] = d
	}
	if k.scratch == nil {
		if err := k.ensureScratch(4); err != nil {
			return err
		}
	}
	binds[7] = k.scratch.Whole()
	return nil
}

// bnSinglePart reports whether every span fits one dispatch whole.
func bnSinglePart(lim *vk.Limits, spans []span, batches, channels int) bool {
	parts := 0
	forEachPart(lim, spans, batches, channels, func(part) error { parts++; return nil })
	return parts == 1
}

// partChunks returns the chunks of part p (plane values a plane, bases
// its images' first elements) and whether it loads quads.
func (b *bnCore) partChunks(f Format, inputs int, p part, plane int, bases ...uint32) (bnChunks, bool) {
	vec4 := bnVec4(plane, bases...)
	vec := 1
	if vec4 {
		vec = 4
	}
	return bnPlan(p.batches, plane, vec, b.chunkValues(f, inputs, p.batches*p.channels*plane)), vec4
}

// encodeStatistics records, for each part of src, the statistics
// dispatch (partial sums of each chunk) and the merge dispatch that folds
// them into st, which holds countBefore values per channel already (0:
// it is replaced). With update (a batch that is one part, countBefore 0)
// the merge also updates the running statistics.
func (k *BatchNormalization) encodeStatistics(cb *vk.CommandBuffer, src *Image, st *BatchNormalizationState, countBefore int, update bool) error {
	lim := k.dev.Limits()
	var spanArr [maxSpans]span
	spanArr[0] = imageSpan(src, 0, 0)
	plane := src.h * src.w
	d, err := k.dummyRange()
	if err != nil {
		return err
	}
	var pc bnPush
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [8]vk.BufferRange
	return forEachPart(&lim, spanArr[:1], src.n, src.c, func(p part) error {
		pc = bnPush{
			Channels: uint32(p.channels), Batches: uint32(p.batches), Plane: uint32(plane),
			Tasks: bnTaskStats, XBatch: uint32(src.cTotal * plane),
			Epsilon: k.desc.Epsilon, Momentum: k.desc.Momentum,
			CountBefore: float32(countBefore + p.n*plane), Count: float32(p.batches * plane),
		}
		binds[0], pc.XBase = p.ranges[0], p.bases[0]
		binds[1] = d
		ch, vec4 := k.partChunks(src.format, 1, p, plane, pc.XBase)
		pc.Segs, pc.Seg, pc.Group, pc.Chunks = uint32(ch.segs), uint32(ch.seg), uint32(ch.group), uint32(ch.chunks)
		if err := k.ensureScratch(2 * p.channels * ch.chunks); err != nil {
			return err
		}
		if err := k.forwardBinds(binds[:], &pc, st, p.c, p.channels); err != nil {
			return err
		}
		pl, err := k.pipeline(src.format == Float16, vec4)
		if err != nil {
			return err
		}
		if err := k.dispatch(cb, pl, binds[:], push, p.channels*ch.chunks); err != nil {
			return err
		}
		pc.Tasks = bnTaskMerge
		if update {
			pc.Tasks |= bnUpdate
		}
		return k.dispatch(cb, pl, binds[:], push, p.channels)
	})
}

// encodeApply records the normalization of src into dst, part by part,
// with the statistics tasks names (bnFromState or bnFromRunning, and
// bnWriteState to record them in st). With fused (a batch that is one
// part), it is the fused training pass: statistics into st, the running
// update and the normalization in one dispatch.
func (k *BatchNormalization) encodeApply(cb *vk.CommandBuffer, src, dst *Image, st *BatchNormalizationState, tasks uint32, fused bool) error {
	lim := k.dev.Limits()
	var spanArr [maxSpans]span
	spanArr[0], spanArr[1] = imageSpan(src, 0, 0), imageSpan(dst, 0, 0)
	plane := src.h * src.w
	var pc bnPush
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [8]vk.BufferRange
	return forEachPart(&lim, spanArr[:2], src.n, src.c, func(p part) error {
		pc = bnPush{
			Channels: uint32(p.channels), Batches: uint32(p.batches), Plane: uint32(plane),
			Tasks: bnTaskApply | tasks, XBatch: uint32(src.cTotal * plane), YBatch: uint32(dst.cTotal * plane),
			Epsilon: k.desc.Epsilon, Momentum: k.desc.Momentum,
		}
		binds[0], pc.XBase = p.ranges[0], p.bases[0]
		binds[1], pc.YBase = p.ranges[1], p.bases[1]
		ch, vec4 := k.partChunks(src.format, 1, p, plane, pc.XBase, pc.YBase)
		if fused {
			ch = fusedChunks(p, plane, vec4)
			pc.Tasks |= bnTaskStats | bnUpdate
			pc.Count = float32(p.batches * plane)
		}
		pc.Segs, pc.Seg, pc.Group, pc.Chunks = uint32(ch.segs), uint32(ch.seg), uint32(ch.group), uint32(ch.chunks)
		if err := k.forwardBinds(binds[:], &pc, st, p.c, p.channels); err != nil {
			return err
		}
		pl, err := k.pipeline(src.format == Float16, vec4)
		if err != nil {
			return err
		}
		return k.dispatch(cb, pl, binds[:], push, p.channels*ch.chunks)
	})
}

// encodeRunning records the running-statistics update from the state's
// statistics of count values per channel.
func (k *BatchNormalization) encodeRunning(cb *vk.CommandBuffer, st *BatchNormalizationState, count int) error {
	var pc bnPush
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [8]vk.BufferRange
	d, err := k.dummyRange()
	if err != nil {
		return err
	}
	binds[0], binds[1] = d, d
	pc = bnPush{Channels: uint32(k.desc.Channels), Tasks: bnTaskRunning, Momentum: k.desc.Momentum, Count: float32(count)}
	if err := k.forwardBinds(binds[:], &pc, st, 0, k.desc.Channels); err != nil {
		return err
	}
	pl, err := k.pipeline(false, false)
	if err != nil {
		return err
	}
	return k.dispatch(cb, pl, binds[:], push, (k.desc.Channels+k.local-1)/k.local)
}

// bnCheckTrainingCount refuses a batch with one value per channel, whose
// variance is undefined.
func bnCheckTrainingCount(label string, src *Image) error {
	if src.n*src.h*src.w < 2 {
		return fmt.Errorf("%w: %s: training on %s: N*H*W = %d value per channel, the batch variance needs at least 2",
			ErrShape, label, src, src.n*src.h*src.w)
	}
	return nil
}

// EncodeTraining records a training-mode batch normalization of src into
// dst: the batch's per-channel mean and biased variance over N, H and W,
// the normalization with them, and the running-statistics update (see
// BatchNormalizationDescriptor). st receives the statistics, gamma and
// beta for the gradient (any earlier content is replaced). A batch with
// N*H*W = 1 is an ErrShape (its variance is undefined).
func (k *BatchNormalization) EncodeTraining(cb *vk.CommandBuffer, src *Image, st *BatchNormalizationState, dst *Image) error {
	if err := k.checkForward(cb, src, dst, st, true); err != nil {
		return err
	}
	if err := bnCheckTrainingCount(k.label, src); err != nil {
		return err
	}
	lim := k.dev.Limits()
	var spanArr [maxSpans]span
	spanArr[0] = imageSpan(src, 0, 0)
	m := src.n * src.h * src.w
	st.count, st.gradCount, st.training, st.epsilon = 0, 0, true, k.desc.Epsilon
	single := bnSinglePart(&lim, spanArr[:1], src.n, src.c)
	spanArr[1] = imageSpan(dst, 0, 0)
	if k.fused(single && bnSinglePart(&lim, spanArr[:2], src.n, src.c), m) {
		st.count = m
		return k.encodeApply(cb, src, dst, st, bnFromState|bnWriteState, true)
	}
	if err := k.encodeStatistics(cb, src, st, 0, single); err != nil {
		return err
	}
	st.count = m
	if !single {
		if err := k.encodeRunning(cb, st, m); err != nil {
			return err
		}
	}
	return k.encodeApply(cb, src, dst, st, bnFromState|bnWriteState, false)
}

// EncodeInference records an inference-mode batch normalization of src
// into dst with the running mean and variance. With a state (may be nil)
// it records them, with gamma and beta, for an inference-mode gradient.
func (k *BatchNormalization) EncodeInference(cb *vk.CommandBuffer, src, dst *Image, st *BatchNormalizationState) error {
	if err := k.checkForward(cb, src, dst, st, false); err != nil {
		return err
	}
	tasks := uint32(bnFromRunning)
	if st != nil {
		tasks |= bnWriteState
		st.count, st.gradCount, st.training, st.epsilon = src.n*src.h*src.w, 0, false, k.desc.Epsilon
	}
	return k.encodeApply(cb, src, dst, st, tasks, false)
}

// Encode records the normalization of src into dst with the batch
// statistics that BatchNormalizationStatistics accumulated in st (MPS's
// encode with a batch normalization state); it records gamma and beta in
// st for the gradient. The running statistics are not touched: see
// EncodeRunningStatisticsUpdate.
func (k *BatchNormalization) Encode(cb *vk.CommandBuffer, src *Image, st *BatchNormalizationState, dst *Image) error {
	if err := k.checkForward(cb, src, dst, st, true); err != nil {
		return err
	}
	if st.count == 0 {
		return fmt.Errorf("%w: %s: the state holds no statistics (encode BatchNormalizationStatistics first)", ErrState, k.label)
	}
	st.training, st.epsilon = true, k.desc.Epsilon
	return k.encodeApply(cb, src, dst, st, bnFromState|bnWriteState, false)
}

// EncodeRunningStatisticsUpdate folds the statistics accumulated in st
// (by BatchNormalizationStatistics) into the running mean and variance
// with the descriptor's momentum, PyTorch's rule (the unbiased variance).
// EncodeTraining does this itself.
func (k *BatchNormalization) EncodeRunningStatisticsUpdate(cb *vk.CommandBuffer, st *BatchNormalizationState) error {
	if k.closed.Load() {
		return fmt.Errorf("%w: %s", ErrClosed, k.label)
	}
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.label)
	}
	if err := st.usable(); err != nil {
		return fmt.Errorf("%s: %w", k.label, err)
	}
	if st.bn != k {
		return fmt.Errorf("%w: %s: the state belongs to another batch normalization", ErrState, k.label)
	}
	if st.count < 2 || !st.training {
		return fmt.Errorf("%w: %s: the state holds no batch statistics of at least 2 values per channel (it has %d)", ErrState, k.label, st.count)
	}
	return k.encodeRunning(cb, st, st.count)
}

// BatchNormalizationStatistics accumulates a batch's per-channel mean and
// biased variance in a BatchNormalizationState
// (MPSCNNBatchNormalizationStatistics). Several encodes (sub-batches of
// one batch) accumulate, merged by Chan's parallel formula, until the
// state is Reset or a forward training or inference encode replaces its
// content. BatchNormalization.Encode then normalizes with them.
type BatchNormalizationStatistics struct {
	bn *BatchNormalization
}

// NewBatchNormalizationStatistics makes the statistics kernel of bn.
func NewBatchNormalizationStatistics(bn *BatchNormalization) (*BatchNormalizationStatistics, error) {
	if bn == nil {
		return nil, fmt.Errorf("%w: BatchNormalizationStatistics: nil batch normalization", ErrState)
	}
	return &BatchNormalizationStatistics{bn: bn}, nil
}

// Close does nothing (the kernel uses its batch normalization's scratch
// memory); it is there so that every kernel has one.
func (s *BatchNormalizationStatistics) Close() error { return nil }

// Encode adds the statistics of src to st.
func (s *BatchNormalizationStatistics) Encode(cb *vk.CommandBuffer, src *Image, st *BatchNormalizationState) error {
	k := s.bn
	if err := k.checkForward(cb, src, nil, st, true); err != nil {
		return err
	}
	if st.count == 0 && src.n*src.h*src.w < 2 {
		return bnCheckTrainingCount("BatchNormalizationStatistics", src)
	}
	if err := k.encodeStatistics(cb, src, st, st.count, false); err != nil {
		return err
	}
	st.count += src.n * src.h * src.w
	st.gradCount, st.training, st.epsilon = 0, true, k.desc.Epsilon
	return nil
}
