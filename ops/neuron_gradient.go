package ops

import (
	"fmt"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// NeuronGradient is the backward pass of Neuron (MPSCNNNeuronGradient):
// given dy, the gradient of the loss with respect to the neuron's result,
// and the forward's source x, Encode writes dx = dy * f'(x), f' the
// derivative of the descriptor's neuron (NeuronType states the choices at
// kinks: MPS's, so ReLU has slope 1 at 0 where PyTorch has 0). For PReLU,
// EncodeSlopeGradient writes the gradient of the slopes,
//
//	dSlopes[c] = sum over n, h, w of dy * (x < 0 ? x : 0),
//
// summed in a fixed order (two passes, no atomics), so a run repeats bit
// for bit on one device. Images are NCHW, float32 or float16 (dy, x and
// dx of one format); the slopes and their gradient are float32.
type NeuronGradient struct {
	neuronKernel
	// Slopes holds PReLU's slopes as Neuron's field does (the forward's);
	// when nil, the descriptor's list is used. EncodeSlopeGradient does
	// not read them.
	Slopes     *Image
	pipes      [2][2]*vk.Pipeline // dx, by summed dy (EncodeSum) and format
	slopePipes [2]*vk.Pipeline    // the slope gradient's first pass, by format
	sum        *vk.Pipeline
	partials   *vk.Buffer
}

// NewNeuronGradient makes the gradient kernel of the neuron d (which
// must match the forward's). Close releases its buffers.
func NewNeuronGradient(dev *vk.Device, d NeuronDescriptor) (*NeuronGradient, error) {
	k, err := newNeuronKernel(dev, d, "NeuronGradient")
	if err != nil {
		return nil, err
	}
	return &NeuronGradient{neuronKernel: k}, nil
}

// Close releases the kernel's buffers (not Slopes); safe twice.
func (k *NeuronGradient) Close() error {
	err := k.neuronKernel.Close()
	if k.partials != nil {
		if e := k.partials.Close(); err == nil {
			err = e
		}
		k.partials = nil
	}
	return err
}

type neuronGradPush struct {
	Count, DyBase, SrcBase, DxBase, SlopeBase uint32
	Plane, Channels, Chan0, Vec4s             uint32
	Dy2Base                                   uint32
}

// Encode records dx = dy * f'(src), src the forward's source; dy, src and
// dx have one shape and format, and dx shares no storage with the others.
func (k *NeuronGradient) Encode(cb *vk.CommandBuffer, dy, src, dx *Image) error {
	roles := [3]string{"source gradient", "source", "destination gradient"}
	ims := [3]*Image{dy, src, dx}
	if err := checkElementwise(cb, k.dev, k.label, roles[:], ims[:], 1); err != nil {
		return err
	}
	if err := sameShape(k.label, dy, src, dx); err != nil {
		return err
	}
	return k.encode(cb, ims[:], false)
}

// EncodeSum records dx = (dy + dy2) * f'(src): Encode of the sum of two
// gradients of the neuron's result (two consumers' contributions, which a
// graph would otherwise add in a pass of their own), added in float32
// and not stored. dy, dy2, src and dx have one shape and format; dx
// shares no storage with the others.
func (k *NeuronGradient) EncodeSum(cb *vk.CommandBuffer, dy, dy2, src, dx *Image) error {
	roles := [4]string{"source gradient", "second source gradient", "source", "destination gradient"}
	ims := [4]*Image{dy, dy2, src, dx}
	if err := checkElementwise(cb, k.dev, k.label, roles[:], ims[:], 1); err != nil {
		return err
	}
	if err := sameShape(k.label, dy, dy2, src, dx); err != nil {
		return err
	}
	// neuronRuns' order: dy, src, dx, then dy2.
	return k.encode(cb, []*Image{dy, src, dx, dy2}, true)
}

// encode records the gradient over ims: dy, src, dx, and dy2 when sum.
func (k *NeuronGradient) encode(cb *vk.CommandBuffer, ims []*Image, sum bool) error {
	src, dx := ims[1], ims[2]
	sr, sbase, err := k.slopes(k.Slopes, src, dx)
	if err != nil {
		return err
	}
	slot := &k.pipes[b2u(sum)][src.format]
	pl := *slot
	if pl == nil { // made on first use: no map built per encode after that
		var err error
		if pl, err = k.pipelineSpec(slot, spirv.NeuronGrad, src.format, map[string]uint32{"SUM_DY": b2u(sum)}); err != nil {
			return err
		}
	}
	lim := k.dev.Limits()
	pc := neuronGradPush{SlopeBase: sbase, Plane: uint32(src.h * src.w), Channels: uint32(src.c)}
	push := pushBytes(&pc)
	var binds [5]vk.BufferRange
	binds[3] = sr
	return neuronRuns(lim, ims, func(r neuronRun) error {
		binds[0], binds[1], binds[2] = r.ranges[0], r.ranges[1], r.ranges[2]
		binds[4] = r.ranges[0] // unread without SUM_DY
		if sum {
			binds[4], pc.Dy2Base = r.ranges[3], r.bases[3]
		}
		pc.Count, pc.DyBase, pc.SrcBase, pc.DxBase = uint32(r.count), r.bases[0], r.bases[1], r.bases[2]
		pc.Chan0 = uint32(r.chan0)
		items := r.count
		pc.Vec4s = 0
		if r.aligned {
			pc.Vec4s, items = 1, max(r.count/4, 1)
		}
		if err := cb.Dispatch(pl, binds[:], push, [3]uint32{neuronGroups(lim, k.local, items), 1, 1}); err != nil {
			return fmt.Errorf("%s: %w", k.label, err)
		}
		return nil
	})
}

type neuronSlopePush struct {
	Total, Chunk, Plane uint32
	DyBase, SrcBase     uint32
	DyBatch, SrcBatch   uint32
	OutBase, OutChannel uint32
}

type gradSumPush struct {
	Count, Terms, PBase, StrideO, StrideJ uint32
	OutBase, PerBatch, BatchStride        uint32
}

// neuronSlices returns how many slices (workgroups) a channel's total
// values of one part are summed in: about 8 values per invocation, at
// most 64 slices.
func neuronSlices(total, local int) int {
	return min(max((total+8*local-1)/(8*local), 1), 64)
}

// EncodeSlopeGradient records the gradient of PReLU's slopes into
// dSlopes, a 1×C×1×1 float32 image (the shape of Slopes): dSlopes[c] is
// the sum over every batch image and pixel of channel c of
// dy * (src < 0 ? src : 0), src the forward's source. The sum runs in two
// passes of fixed shape (slices of each channel, then the slices in
// order), without atomics. It is an error for a neuron other than PReLU.
func (k *NeuronGradient) EncodeSlopeGradient(cb *vk.CommandBuffer, dy, src, dSlopes *Image) error {
	roles := [3]string{"source gradient", "source", "slope gradient"}
	ims := [3]*Image{dy, src, dSlopes}
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.label)
	}
	if k.dev == nil {
		return fmt.Errorf("%w: %s: kernel not made by its constructor (no device)", ErrDevice, k.label)
	}
	if err := checkImages(k.dev, k.label, roles[:], ims[:]...); err != nil {
		return err
	}
	if k.desc.Type != NeuronPReLU {
		return fmt.Errorf("%w: %s: a slope gradient needs a prelu neuron", ErrGeometry, k.label)
	}
	if err := checkElementwise(cb, k.dev, k.label, roles[:2], ims[:2], 0); err != nil {
		return err
	}
	if err := sameShape(k.label, dy, src); err != nil {
		return err
	}
	if dSlopes.format != Float32 {
		return fmt.Errorf("%w: %s: slope gradient %s is %v; parameters are float32", ErrFormat, k.label, dSlopes, dSlopes.format)
	}
	if dSlopes.n != 1 || dSlopes.c != src.c || dSlopes.h != 1 || dSlopes.w != 1 {
		return fmt.Errorf("%w: %s: slope gradient %s for %s: want 1x%dx1x1", ErrShape, k.label, dSlopes, src, src.c)
	}
	if overlaps(dy, dSlopes) || overlaps(src, dSlopes) {
		return fmt.Errorf("%w: %s: slope gradient %s shares storage with an input", ErrAlias, k.label, dSlopes)
	}
	lim := k.dev.Limits()
	spans := [2]span{imageSpan(dy, 0, 0), imageSpan(src, 0, 0)}
	plane := src.h * src.w
	// Slots: each batch group of the split has its slices, the same for
	// every channel; partials are [channel][slot].
	slots := 0
	count := func(p part) error {
		if p.c == 0 {
			slots += neuronSlices(p.batches*plane, k.local)
		}
		return nil
	}
	if err := forEachPart(&lim, spans[:], src.n, src.c, count); err != nil {
		return fmt.Errorf("%s: %w", k.label, err)
	}
	if err := k.ensurePartials(uint64(src.c*slots) * 4); err != nil {
		return err
	}
	pl, err := k.pipeline(&k.slopePipes[src.format], spirv.NeuronSlopeGrad, src.format)
	if err != nil {
		return err
	}
	if k.sum == nil {
		p, err := pipeline(k.dev, spirv.ArithmeticGradSum, map[string]uint32{"local_size_x": uint32(k.local)})
		if err != nil {
			return fmt.Errorf("%s: %w", k.label, err)
		}
		k.sum = p
	}
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	pc := neuronSlopePush{Plane: uint32(plane), OutChannel: uint32(slots),
		DyBatch: uint32(dy.cTotal * plane), SrcBatch: uint32(src.cTotal * plane)}
	push := pushBytes(&pc)
	var binds [3]vk.BufferRange
	binds[2] = k.partials.Range(0, uint64(src.c*slots)*4)
	slot, prev := 0, 0
	err = forEachPart(&lim, spans[:], src.n, src.c, func(p part) error {
		total := p.batches * plane
		g := neuronSlices(total, k.local)
		if p.c == 0 { // a new batch group: after the previous group's slices
			slot += prev
			prev = g
		}
		binds[0], binds[1] = p.ranges[0], p.ranges[1]
		pc.DyBase, pc.SrcBase = p.bases[0], p.bases[1]
		pc.Total, pc.Chunk = uint32(total), uint32((total+g-1)/g)
		pc.OutBase = uint32(p.c*slots + slot)
		if err := cb.Dispatch(pl, binds[:], push, [3]uint32{uint32(g), uint32(p.channels), 1}); err != nil {
			return fmt.Errorf("%s: %w", k.label, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sp := gradSumPush{Count: uint32(src.c), Terms: uint32(slots), StrideO: uint32(slots), StrideJ: 1, PerBatch: uint32(src.c)}
	var sbinds [2]vk.BufferRange
	sbinds[0] = binds[2]
	sbinds[1], sp.OutBase = bindRun(dSlopes.buf, align, dSlopes.base*4, dSlopes.c)
	if err := cb.Dispatch(k.sum, sbinds[:], pushBytes(&sp), [3]uint32{neuronGroups(lim, k.local, src.c), 1, 1}); err != nil {
		return fmt.Errorf("%s: %w", k.label, err)
	}
	return nil
}

// ensurePartials makes the scratch buffer at least size bytes.
func (k *NeuronGradient) ensurePartials(size uint64) error {
	if k.partials != nil && k.partials.Size() >= size {
		return nil
	}
	if k.partials != nil {
		k.partials.Close()
		k.partials = nil
	}
	b, err := k.dev.NewBuffer(size, k.label+" slope partial sums")
	if err != nil {
		return err
	}
	k.partials = b
	return nil
}
