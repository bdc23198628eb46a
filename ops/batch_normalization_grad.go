package ops

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// BatchNormalizationGradient computes the gradients of a batch
// normalization (MPSCNNBatchNormalizationGradient): given dy (the loss
// gradient w.r.t. the forward destination), the forward source x and the
// forward's BatchNormalizationState (its mean, variance, gamma and beta),
// per channel c with invstd = 1/sqrt(var + epsilon), xhat = (x -
// mean)*invstd and g = dy * f'(gamma*xhat + beta) (f the fused neuron):
//
//	dbeta[c]  = sum of g            over N, H and W
//	dgamma[c] = sum of g*xhat
//	dx = gamma*invstd * (g - dbeta/M - xhat*dgamma/M)   after EncodeTraining
//	dx = gamma*invstd * g                                after EncodeInference
//
// (M = N*H*W). EncodeAll computes all three in three dispatches: the sums
// (one workgroup per chunk of a channel's values reads x and dy once and
// writes the chunk's partial sums), the merge (one workgroup per channel
// adds them in chunk order into the state, dgamma and dbeta), and dx (x
// and dy read again): four reads and one write of the tensor. Encode is
// MPS's form, dx from the sums BatchNormalizationStatisticsGradient
// accumulated in the state. Sums are added in a fixed order, without
// float atomics: results repeat bit for bit.
type BatchNormalizationGradient struct {
	bnCore
	bn     *BatchNormalization
	closed atomic.Bool
}

// NewBatchNormalizationGradient makes the gradient kernel of bn (its
// fused neuron, epsilon and states).
func NewBatchNormalizationGradient(bn *BatchNormalization) (*BatchNormalizationGradient, error) {
	const label = "BatchNormalizationGradient"
	if bn == nil {
		return nil, fmt.Errorf("%w: %s: nil batch normalization", ErrState, label)
	}
	core, err := newBNCore(bn.dev, label, spirv.BatchNormalizationGrad, bn.desc.Neuron)
	if err != nil {
		return nil, err
	}
	return &BatchNormalizationGradient{bnCore: core, bn: bn}, nil
}

// Close releases the kernel's scratch memory; safe twice.
func (k *BatchNormalizationGradient) Close() error {
	if k == nil || k.closed.Swap(true) {
		return nil
	}
	return k.close()
}

// bnGradPush is glsl/batch_normalization_grad.comp's push constants.
type bnGradPush struct {
	Channels, Batches, Plane, Segs, Seg, Group, Chunks, Tasks uint32
	XBase, XBatch, DyBase, DyBatch, DxBase, DxBatch           uint32
	StBase, StStride, DgBase, DbBase                          uint32
	Epsilon, Count, CountBefore                               float32
}

// check validates a gradient encode's images (dx nil: none), state and
// parameter gradients (nil: none).
func (k *BatchNormalizationGradient) check(cb *vk.CommandBuffer, dy, src, dx *Image, st *BatchNormalizationState, dgamma, dbeta *Image) error {
	if k.closed.Load() {
		return fmt.Errorf("%w: %s", ErrClosed, k.label)
	}
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.label)
	}
	if err := checkImages(k.dev, k.label, []string{"source gradient", "source"}, dy, src); err != nil {
		return err
	}
	if src.c != k.bn.desc.Channels {
		return fmt.Errorf("%w: %s: source %s has %d channels, the kernel %d", ErrShape, k.label, src, src.c, k.bn.desc.Channels)
	}
	if err := sameShape(k.label, src, dy); err != nil {
		return err
	}
	if src.format != dy.format {
		return fmt.Errorf("%w: %s: source %s is %v but source gradient %s is %v", ErrFormat, k.label, src, src.format, dy, dy.format)
	}
	if dx != nil {
		if err := checkImages(k.dev, k.label, []string{"destination gradient"}, dx); err != nil {
			return err
		}
		if err := sameShape(k.label, src, dx); err != nil {
			return err
		}
		if dx.format != src.format {
			return fmt.Errorf("%w: %s: source %s is %v but destination gradient %s is %v", ErrFormat, k.label, src, src.format, dx, dx.format)
		}
		if overlaps(dx, src) || overlaps(dx, dy) {
			return fmt.Errorf("%w: %s: destination gradient %s shares storage with an input", ErrAlias, k.label, dx)
		}
	}
	for _, p := range []struct {
		role string
		im   *Image
	}{{"gamma gradient", dgamma}, {"beta gradient", dbeta}} {
		if p.im == nil {
			continue
		}
		if err := checkParam(k.dev, k.label, p.role, p.im, k.bn.desc.Channels); err != nil {
			return err
		}
	}
	if dgamma != nil && dbeta != nil && overlaps(dgamma, dbeta) {
		return fmt.Errorf("%w: %s: gamma gradient %s and beta gradient %s share storage", ErrAlias, k.label, dgamma, dbeta)
	}
	if err := st.usable(); err != nil {
		return fmt.Errorf("%s: %w", k.label, err)
	}
	if st.bn != k.bn {
		return fmt.Errorf("%w: %s: the state belongs to another batch normalization", ErrState, k.label)
	}
	if st.count == 0 {
		return fmt.Errorf("%w: %s: the state holds no forward statistics (encode the forward with it first)", ErrState, k.label)
	}
	return nil
}

// encodeSums records, for each part of src and dy, the statistics
// dispatch (each chunk's sums of g and g*(x - mean)) and the merge
// dispatch that adds them into st's dbeta and dgamma, which hold
// countBefore values per channel already (0: they are replaced). dgamma
// and dbeta (nil: not) receive the merged sums: give them only for a
// batch that is one part.
func (k *BatchNormalizationGradient) encodeSums(cb *vk.CommandBuffer, dy, src *Image, st *BatchNormalizationState,
	dgamma, dbeta *Image, countBefore int) error {
	lim := k.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	var spanArr [maxSpans]span
	spanArr[0], spanArr[1] = imageSpan(src, 0, 0), imageSpan(dy, 0, 0)
	plane := src.h * src.w
	dummy, err := k.dummyRange()
	if err != nil {
		return err
	}
	var pc bnGradPush
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [7]vk.BufferRange
	return forEachPart(&lim, spanArr[:2], src.n, src.c, func(p part) error {
		pc = bnGradPush{
			Channels: uint32(p.channels), Batches: uint32(p.batches), Plane: uint32(plane), Tasks: bnTaskStats,
			XBatch: uint32(src.cTotal * plane), DyBatch: uint32(dy.cTotal * plane),
			StBase: uint32(p.c), StStride: uint32(st.channels),
			Epsilon: st.epsilon, Count: float32(st.count), CountBefore: float32(countBefore + p.n*plane),
		}
		binds[0], pc.XBase = p.ranges[0], p.bases[0]
		binds[1], pc.DyBase = p.ranges[1], p.bases[1]
		binds[2] = dummy
		ch, vec4 := k.partChunks(src.format, 2, p, plane, pc.XBase, pc.DyBase)
		pc.Segs, pc.Seg, pc.Group, pc.Chunks = uint32(ch.segs), uint32(ch.seg), uint32(ch.group), uint32(ch.chunks)
		if err := k.ensureScratch(2 * p.channels * ch.chunks); err != nil {
			return err
		}
		binds[3], binds[4] = st.buf.Whole(), k.scratch.Whole()
		binds[5], binds[6] = dummy, dummy
		merge := uint32(bnTaskMerge)
		if dgamma != nil {
			binds[5], pc.DgBase = paramRange(dgamma, align, p.c, p.channels)
			merge |= bnDGamma
		}
		if dbeta != nil {
			binds[6], pc.DbBase = paramRange(dbeta, align, p.c, p.channels)
			merge |= bnDBeta
		}
		pl, err := k.pipeline(src.format == Float16, vec4)
		if err != nil {
			return err
		}
		if err := k.dispatch(cb, pl, binds[:], push, p.channels*ch.chunks); err != nil {
			return err
		}
		pc.Tasks = merge
		return k.dispatch(cb, pl, binds[:], push, p.channels)
	})
}

// encodeDx records dx from dy, src and the state's statistics and sums,
// part by part. With fused (a batch that is one part, no sums before),
// it is the fused pass: the sums into st (and dgamma and dbeta, either
// may be nil) and dx in one dispatch.
func (k *BatchNormalizationGradient) encodeDx(cb *vk.CommandBuffer, dy, src, dx *Image, st *BatchNormalizationState, fused bool, dgamma, dbeta *Image) error {
	lim := k.dev.Limits()
	var spanArr [maxSpans]span
	spanArr[0], spanArr[1], spanArr[2] = imageSpan(src, 0, 0), imageSpan(dy, 0, 0), imageSpan(dx, 0, 0)
	plane := src.h * src.w
	tasks := uint32(bnTaskApply)
	if st.training {
		tasks |= bnTraining
	}
	dummy, err := k.dummyRange()
	if err != nil {
		return err
	}
	if err := k.ensureScratch(4); err != nil {
		return err
	}
	var pc bnGradPush
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [7]vk.BufferRange
	return forEachPart(&lim, spanArr[:3], src.n, src.c, func(p part) error {
		pc = bnGradPush{
			Channels: uint32(p.channels), Batches: uint32(p.batches), Plane: uint32(plane), Tasks: tasks,
			XBatch: uint32(src.cTotal * plane), DyBatch: uint32(dy.cTotal * plane), DxBatch: uint32(dx.cTotal * plane),
			StBase: uint32(p.c), StStride: uint32(st.channels),
			Epsilon: st.epsilon, Count: float32(st.count),
		}
		binds[0], pc.XBase = p.ranges[0], p.bases[0]
		binds[1], pc.DyBase = p.ranges[1], p.bases[1]
		binds[2], pc.DxBase = p.ranges[2], p.bases[2]
		binds[3], binds[4], binds[5], binds[6] = st.buf.Whole(), k.scratch.Whole(), dummy, dummy
		ch, vec4 := k.partChunks(src.format, 2, p, plane, pc.XBase, pc.DyBase, pc.DxBase)
		if fused {
			ch = fusedChunks(p, plane, vec4)
			pc.Tasks |= bnTaskStats
			align := max(lim.MinStorageBufferOffsetAlignment, 4)
			if dgamma != nil {
				binds[5], pc.DgBase = paramRange(dgamma, align, p.c, p.channels)
				pc.Tasks |= bnDGamma
			}
			if dbeta != nil {
				binds[6], pc.DbBase = paramRange(dbeta, align, p.c, p.channels)
				pc.Tasks |= bnDBeta
			}
		}
		pc.Segs, pc.Seg, pc.Group, pc.Chunks = uint32(ch.segs), uint32(ch.seg), uint32(ch.group), uint32(ch.chunks)
		pl, err := k.pipeline(src.format == Float16, vec4)
		if err != nil {
			return err
		}
		return k.dispatch(cb, pl, binds[:], push, p.channels*ch.chunks)
	})
}

// EncodeAll records the three gradients of a batch normalization: dx
// (src's shape), and dgamma and dbeta (1×C×1×1 float32 images; either may
// be nil, the state receives them in any case). dy is the gradient
// w.r.t. the forward destination, src the forward source and st the state
// of the forward encode (EncodeTraining, or EncodeInference for the
// inference-mode gradient).
func (k *BatchNormalizationGradient) EncodeAll(cb *vk.CommandBuffer, dy, src *Image, st *BatchNormalizationState, dx, dgamma, dbeta *Image) error {
	if err := k.check(cb, dy, src, dx, st, dgamma, dbeta); err != nil {
		return err
	}
	if dx == nil {
		return fmt.Errorf("%w: %s: nil destination gradient", ErrInvalidImage, k.label)
	}
	lim := k.dev.Limits()
	var spanArr [maxSpans]span
	spanArr[0], spanArr[1] = imageSpan(src, 0, 0), imageSpan(dy, 0, 0)
	single := bnSinglePart(&lim, spanArr[:2], src.n, src.c)
	st.gradCount = 0
	spanArr[2] = imageSpan(dx, 0, 0)
	if m := src.n * src.h * src.w; k.fused(single && bnSinglePart(&lim, spanArr[:3], src.n, src.c), m) {
		st.gradCount = m
		return k.encodeDx(cb, dy, src, dx, st, true, dgamma, dbeta)
	}
	g, b := dgamma, dbeta
	if !single {
		g, b = nil, nil
	}
	if err := k.encodeSums(cb, dy, src, st, g, b, 0); err != nil {
		return err
	}
	st.gradCount = src.n * src.h * src.w
	if err := k.encodeDx(cb, dy, src, dx, st, false, nil, nil); err != nil {
		return err
	}
	if single {
		return nil
	}
	return k.copyParameterGradients(cb, st, dgamma, dbeta)
}

// Encode records dx from the gradient sums that
// BatchNormalizationStatisticsGradient accumulated in st (MPS's
// two-kernel form, for a batch encoded in several sub-batches).
func (k *BatchNormalizationGradient) Encode(cb *vk.CommandBuffer, dy, src *Image, st *BatchNormalizationState, dx *Image) error {
	if err := k.check(cb, dy, src, dx, st, nil, nil); err != nil {
		return err
	}
	if dx == nil {
		return fmt.Errorf("%w: %s: nil destination gradient", ErrInvalidImage, k.label)
	}
	if st.gradCount == 0 {
		return fmt.Errorf("%w: %s: the state holds no gradient sums (encode BatchNormalizationStatisticsGradient first)", ErrState, k.label)
	}
	return k.encodeDx(cb, dy, src, dx, st, false, nil, nil)
}

// EncodeParameterGradients records copies of the state's dgamma and dbeta
// (as the last EncodeAll or the StatisticsGradient encodes left them)
// into 1×C×1×1 float32 images; either may be nil.
func (k *BatchNormalizationGradient) EncodeParameterGradients(cb *vk.CommandBuffer, st *BatchNormalizationState, dgamma, dbeta *Image) error {
	if k.closed.Load() {
		return fmt.Errorf("%w: %s", ErrClosed, k.label)
	}
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.label)
	}
	if err := st.usable(); err != nil {
		return fmt.Errorf("%s: %w", k.label, err)
	}
	if st.bn != k.bn {
		return fmt.Errorf("%w: %s: the state belongs to another batch normalization", ErrState, k.label)
	}
	if st.gradCount == 0 {
		return fmt.Errorf("%w: %s: the state holds no gradient sums", ErrState, k.label)
	}
	for _, p := range []struct {
		role string
		im   *Image
	}{{"gamma gradient", dgamma}, {"beta gradient", dbeta}} {
		if p.im != nil {
			if err := checkParam(k.dev, k.label, p.role, p.im, st.channels); err != nil {
				return err
			}
		}
	}
	return k.copyParameterGradients(cb, st, dgamma, dbeta)
}

func (k *BatchNormalizationGradient) copyParameterGradients(cb *vk.CommandBuffer, st *BatchNormalizationState, dgamma, dbeta *Image) error {
	size := uint64(st.channels) * 4
	if dgamma != nil {
		if err := cb.Copy(dgamma.buf.Range(dgamma.base*4, size), st.buf.Range(5*size, size)); err != nil {
			return fmt.Errorf("%s: %w", k.label, err)
		}
	}
	if dbeta != nil {
		if err := cb.Copy(dbeta.buf.Range(dbeta.base*4, size), st.buf.Range(4*size, size)); err != nil {
			return fmt.Errorf("%s: %w", k.label, err)
		}
	}
	return nil
}

// BatchNormalizationStatisticsGradient accumulates a batch
// normalization's gradient sums, dbeta = sum g and dgamma = sum g*xhat, in
// the state (MPSCNNBatchNormalizationStatisticsGradient): several encodes
// (sub-batches) add up, starting afresh after each forward encode or
// Reset. BatchNormalizationGradient.Encode then computes dx from them, and
// EncodeParameterGradients copies them out.
type BatchNormalizationStatisticsGradient struct {
	g *BatchNormalizationGradient
}

// NewBatchNormalizationStatisticsGradient makes the statistics-gradient
// kernel of bn.
func NewBatchNormalizationStatisticsGradient(bn *BatchNormalization) (*BatchNormalizationStatisticsGradient, error) {
	g, err := NewBatchNormalizationGradient(bn)
	if err != nil {
		return nil, err
	}
	g.label = "BatchNormalizationStatisticsGradient"
	return &BatchNormalizationStatisticsGradient{g: g}, nil
}

// Close releases the kernel's scratch memory; safe twice.
func (s *BatchNormalizationStatisticsGradient) Close() error { return s.g.Close() }

// Encode adds the sums of dy (w.r.t. the forward destination) and src
// (the forward source) to st.
func (s *BatchNormalizationStatisticsGradient) Encode(cb *vk.CommandBuffer, dy, src *Image, st *BatchNormalizationState) error {
	k := s.g
	if err := k.check(cb, dy, src, nil, st, nil, nil); err != nil {
		return err
	}
	if err := k.encodeSums(cb, dy, src, st, nil, nil, st.gradCount); err != nil {
		return err
	}
	st.gradCount += src.n * src.h * src.w
	return nil
}
