package ops

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// MaskStride is MPS's maskStrideInPixels (an MTLSize: width, height,
// depth): per axis 1, each position has its own mask value, or 0, the mask
// is broadcast along the axis (MPS allows only these two values). X and Y
// are the image's columns and rows, FeatureChannel its channels: {1, 1, 0}
// drops the same pixels in every channel, {0, 0, 1} whole channels
// (spatial dropout). Batch images always have masks of their own.
type MaskStride struct{ X, Y, FeatureChannel int }

// DefaultMaskStride gives every element its own mask value.
var DefaultMaskStride = MaskStride{1, 1, 1}

// DropoutDescriptor configures Dropout and DropoutGradient (MPS's
// initWithDevice:keepProbability:seed:maskStrideInPixels:).
type DropoutDescriptor struct {
	// KeepProbability is the probability that an element is kept, in
	// (0, 1); kept elements are scaled by 1/KeepProbability.
	KeepProbability float32
	// Seed keys the mask generator (see Dropout).
	Seed uint64
	// MaskStride is 0 or 1 per axis (MaskStride); the zero value
	// broadcasts on every axis: use DefaultMaskStride for MPS's usual
	// {1, 1, 1}.
	MaskStride MaskStride
}

// Validate checks the keep probability (in (0, 1): 0, 1, values outside
// and NaN are refused) and the mask strides (0 or 1); errors wrap
// ErrGeometry.
func (d DropoutDescriptor) Validate() error {
	k := d.KeepProbability
	if !(k > 0 && k < 1) {
		return fmt.Errorf("%w: Dropout: keep probability %v outside (0, 1) (NaN, 0 and 1 are refused: inference skips dropout)", ErrGeometry, k)
	}
	for _, s := range []struct {
		axis string
		v    int
	}{{"x", d.MaskStride.X}, {"y", d.MaskStride.Y}, {"feature channel", d.MaskStride.FeatureChannel}} {
		if s.v != 0 && s.v != 1 {
			return fmt.Errorf("%w: Dropout: mask stride %s = %d: MPS allows 1, or 0 to broadcast the mask along the axis", ErrGeometry, s.axis, s.v)
		}
	}
	return nil
}

// ResultDescriptor returns the shape and format of the result of dropout
// on a source of shape src: the same. It needs no device.
func (d DropoutDescriptor) ResultDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	if err := d.Validate(); err != nil {
		return ImageDescriptor{}, err
	}
	if err := src.validate(); err != nil {
		return ImageDescriptor{}, fmt.Errorf("Dropout: source: %w", err)
	}
	return ImageDescriptor{N: src.N, C: src.C, H: src.H, W: src.W, Format: src.Format}, nil
}

// MaskDescriptor returns the shape of the mask of a source of shape src:
// N × (C or 1) × (H or 1) × (W or 1), 1 on the broadcast axes.
func (d DropoutDescriptor) MaskDescriptor(src padding.Descriptor) padding.Descriptor {
	m := padding.Descriptor{N: src.N, C: 1, H: 1, W: 1}
	if d.MaskStride.FeatureChannel != 0 {
		m.C = src.C
	}
	if d.MaskStride.Y != 0 {
		m.H = src.H
	}
	if d.MaskStride.X != 0 {
		m.W = src.W
	}
	return m
}

// Threshold is floor(KeepProbability × 2^32): an element is kept when its
// 32-bit random word is below it (probability exactly KeepProbability for
// every float32 probability from 2^-9 up).
func (d DropoutDescriptor) Threshold() uint32 {
	return uint32(math.Floor(float64(d.KeepProbability) * (1 << 32)))
}

// Scale is the factor kept values are multiplied by: 1/KeepProbability
// rounded to float32.
func (d DropoutDescriptor) Scale() float32 { return float32(1 / float64(d.KeepProbability)) }

// Dropout is dropout for training (MPSCNNDropout): each element is kept
// with probability KeepProbability and scaled by 1/KeepProbability,
// otherwise it becomes 0:
//
//	y = mask ? x * scale : 0,   scale = float32(1/KeepProbability)
//
// one float32 product per kept element (a float16 image's value is
// converted to float32 and the product rounded to half once); a dropped
// element is +0 whatever x holds, NaN and Inf included (MPS's "outputs 0";
// PyTorch's x*0 would give NaN there). Inference is the identity: graphs
// compiled for inference skip the kernel.
//
// # The mask
//
// The mask has MaskDescriptor's shape (one value per element, or shared
// along the axes whose MaskStride is 0). Mask element (n, c, y, x) is kept
// when
//
//	Philox4x32-10(counter (x>>2, y, n*Cm + c, draw), key (Seed & 0xffffffff, Seed >> 32))[x&3] < Threshold()
//
// with Cm the mask's channel count: Philox4x32 with 10 rounds (Salmon et
// al. 2011, as in Random123, cuRAND and PyTorch), integer arithmetic only,
// so the same seed and draw give the same mask on every device, every run
// and every split of the work (ref.Dropout computes it on the CPU).
//
// # Draws
//
// draw is read, when the forward executes, from a 32-bit counter the
// kernel keeps in device memory: 0 when the kernel is made, then advanced
// by one by every forward execution (a one-invocation dispatch recorded
// after the forward's). So every encode draws a new mask, and a command
// buffer committed again (a graph's recorded training step replayed) draws
// a new mask on every replay, with no host work; the gradient reads the
// mask the forward stored in the gradient state, never regenerates it.
// DrawCounter and SetDrawCounter read and set the counter (to repeat or
// skip masks; it wraps after 2^32 draws); a state's Draw says which draw
// it holds. Two kernels with the same seed draw the same sequence of
// masks: give each layer a seed of its own. Masks are numbered by plane
// n*Cm + c in 32 bits: N × Cm over 2^32 is an ErrDeviceLimit.
//
// The forward's gradient state (DropoutGradientState, made by
// NewGradientState and filled by EncodeToState, or made by
// EncodeWithState) holds the mask as bits, 32 to a word. A Dropout is
// encoded by one goroutine at a time; Close releases its counter.
type Dropout struct {
	// Allocator makes the destinations of EncodeNew; nil means NewImage.
	Allocator ImageAllocator
	// Label names the kernel in errors ("Dropout").
	Label string

	dev     *vk.Device
	desc    DropoutDescriptor
	local   int
	align   uint64
	buf     *vk.Buffer            // the draw counter at 0; at align, a scratch binding for encodes without a state
	pipes   [2][2][2]*vk.Pipeline // by float16, vector, mask output
	advance *vk.Pipeline
	closed  atomic.Bool
}

// dropoutLocal returns the workgroup size of the dropout shaders: a power
// of two (so a multiple of the 8 lanes of a 32-column group).
func dropoutLocal(lim vk.Limits) int {
	local := 8
	for local*2 <= workgroup(lim) {
		local *= 2
	}
	return local
}

// NewDropout makes a dropout kernel (MPS initWithDevice:keepProbability:
// seed:maskStrideInPixels:). Its draw counter starts at 0.
func NewDropout(dev *vk.Device, d DropoutDescriptor) (*Dropout, error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: Dropout: nil device", ErrDevice)
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	lim := dev.Limits()
	k := &Dropout{Label: "Dropout", dev: dev, desc: d, local: dropoutLocal(lim), align: max(lim.MinStorageBufferOffsetAlignment, 16)}
	buf, err := dev.NewBuffer(k.align+16, "Dropout draw counter")
	if err != nil {
		return nil, err
	}
	k.buf = buf
	if err := buf.Write(context.Background(), 0, make([]byte, k.align+16)); err != nil {
		buf.Close()
		return nil, err
	}
	return k, nil
}

// Descriptor returns the kernel's keep probability, seed and mask strides.
func (k *Dropout) Descriptor() DropoutDescriptor { return k.desc }

// Device returns the kernel's device.
func (k *Dropout) Device() *vk.Device { return k.dev }

// Close releases the kernel's draw counter; safe twice. Command buffers
// already recorded keep the memory alive until they are closed.
func (k *Dropout) Close() error {
	if k == nil || k.buf == nil || k.closed.Swap(true) {
		return nil
	}
	return k.buf.Close()
}

func (k *Dropout) usable() error {
	if k.dev == nil || k.buf == nil {
		return fmt.Errorf("%w: %s: kernel not made by NewDropout (no device)", ErrDevice, k.label())
	}
	if k.closed.Load() {
		return fmt.Errorf("%w: %s (the kernel)", ErrClosed, k.label())
	}
	return nil
}

func (k *Dropout) label() string {
	if k.Label != "" {
		return k.Label
	}
	return "Dropout"
}

// DrawCounter returns the draw the next forward execution will use, after
// the submitted work that uses the counter has finished.
func (k *Dropout) DrawCounter(ctx context.Context) (uint32, error) {
	if err := k.usable(); err != nil {
		return 0, err
	}
	var b [4]byte
	if err := k.buf.Read(ctx, 0, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// SetDrawCounter sets the draw the next forward execution will use, after
// the submitted work that uses the counter has finished (executions
// recorded earlier but committed later see the new value).
func (k *Dropout) SetDrawCounter(ctx context.Context, draw uint32) error {
	if err := k.usable(); err != nil {
		return err
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], draw)
	return k.buf.Write(ctx, 0, b[:])
}

// DropoutGradientState is the state a Dropout forward encode leaves for
// its gradient (MPSCNNDropoutGradientState): the mask, as bits, of the
// last forward execution that wrote it, with the descriptor and source
// shape it was made for. Close releases it (safe twice); close it after
// the command buffers that use it are committed.
type DropoutGradientState struct {
	// Descriptor is the forward kernel's.
	Descriptor DropoutDescriptor
	// Source is the forward source's shape (the gradient's destination);
	// Mask the mask's (DropoutDescriptor.MaskDescriptor).
	Source, Mask padding.Descriptor

	dev      *vk.Device
	buf      *vk.Buffer // mask words from 0, then the info words at infoOff
	rowWords int        // words per mask row
	words    int        // mask words
	infoOff  uint64
	closed   atomic.Bool
}

// NewGradientState makes a state for forward encodes of sources of shape
// src (MPS's resultStateForSourceImage): a device buffer of
// ceil(W/32) words per mask row (one per row when the mask is broadcast
// along x), about 1/32 of a float32 image. EncodeToState fills it without
// allocating, so a graph makes it once and replays its recording.
func (k *Dropout) NewGradientState(src ImageDescriptor) (*DropoutGradientState, error) {
	if err := k.usable(); err != nil {
		return nil, err
	}
	if err := src.validate(); err != nil {
		return nil, fmt.Errorf("%s: state: %w", k.label(), err)
	}
	sd := src.Descriptor()
	m := k.desc.MaskDescriptor(sd)
	if uint64(m.N)*uint64(m.C) > math.MaxUint32 {
		return nil, fmt.Errorf("%w: %s: %d batch images × %d mask channels: the mask's planes are numbered in 32 bits", ErrDeviceLimit, k.label(), m.N, m.C)
	}
	rowWords := (m.W + 31) / 32
	words := uint64(m.N) * uint64(m.C) * uint64(m.H) * uint64(rowWords)
	lim := k.dev.Limits()
	if words*4 > lim.MaxStorageBufferRange {
		return nil, fmt.Errorf("%w: %s: the mask of %v takes %d bytes, over the device's max storage buffer range (%d bytes)",
			ErrDeviceLimit, k.label(), sd, words*4, lim.MaxStorageBufferRange)
	}
	infoOff := (words*4 + k.align - 1) / k.align * k.align
	buf, err := k.dev.NewBuffer(infoOff+16, k.label()+" mask")
	if err != nil {
		return nil, err
	}
	return &DropoutGradientState{Descriptor: k.desc, Source: sd, Mask: m, dev: k.dev, buf: buf,
		rowWords: rowWords, words: int(words), infoOff: infoOff}, nil
}

// SourceDescriptor returns the forward source's shape, the size of the
// gradient's destination (padding.SizeState).
func (s *DropoutGradientState) SourceDescriptor() padding.Descriptor { return s.Source }

// Device returns the state's device.
func (s *DropoutGradientState) Device() *vk.Device { return s.dev }

// Close releases the state's mask; safe twice.
func (s *DropoutGradientState) Close() error {
	if s == nil || s.buf == nil || s.closed.Swap(true) {
		return nil
	}
	return s.buf.Close()
}

func (s *DropoutGradientState) usable() error {
	if s == nil || s.buf == nil {
		return fmt.Errorf("%w: a dropout gradient state not made by Dropout.NewGradientState", ErrState)
	}
	if s.closed.Load() {
		return fmt.Errorf("%w: %v", ErrClosed, s)
	}
	return nil
}

func (s *DropoutGradientState) String() string {
	d := s.Descriptor
	return fmt.Sprintf("dropout state (keep %v, mask stride %v, source %v)", d.KeepProbability, d.MaskStride, s.Source)
}

// ReadMask returns the mask, after the submitted work that uses the state
// has finished: Mask's shape, NCHW, true where kept (MPS's maskData, for
// checks and debugging).
func (s *DropoutGradientState) ReadMask(ctx context.Context) ([]bool, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	raw := make([]byte, s.words*4)
	if err := s.buf.Read(ctx, 0, raw); err != nil {
		return nil, err
	}
	m := s.Mask
	out := make([]bool, m.N*m.C*m.H*m.W)
	for row := 0; row < m.N*m.C*m.H; row++ {
		for x := 0; x < m.W; x++ {
			w := binary.LittleEndian.Uint32(raw[4*(row*s.rowWords+x/32):])
			out[row*m.W+x] = w>>(x%32)&1 != 0
		}
	}
	return out, nil
}

// WriteMask replaces the mask (Mask's shape, NCHW, true where kept), after
// the submitted work that uses the state has finished: the gradient of a
// mask made elsewhere (a test's, PyTorch's).
func (s *DropoutGradientState) WriteMask(ctx context.Context, mask []bool) error {
	if err := s.usable(); err != nil {
		return err
	}
	m := s.Mask
	if len(mask) != m.N*m.C*m.H*m.W {
		return fmt.Errorf("%w: %v: a mask of %d values, want %d (%v)", ErrShape, s, len(mask), m.N*m.C*m.H*m.W, m)
	}
	raw := make([]byte, s.words*4)
	for row := 0; row < m.N*m.C*m.H; row++ {
		for x := 0; x < m.W; x++ {
			if mask[row*m.W+x] {
				i := 4 * (row*s.rowWords + x/32)
				binary.LittleEndian.PutUint32(raw[i:], binary.LittleEndian.Uint32(raw[i:])|1<<(x%32))
			}
		}
	}
	return s.buf.Write(ctx, 0, raw)
}

// Draw returns the draw number of the mask the state holds (the draw
// counter's value when the forward that wrote it executed), after the
// submitted work that uses the state has finished. It is undefined before
// a forward has executed.
func (s *DropoutGradientState) Draw(ctx context.Context) (uint32, error) {
	if err := s.usable(); err != nil {
		return 0, err
	}
	var b [4]byte
	if err := s.buf.Read(ctx, s.infoOff, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// dropoutPush is dropout_common.glsl's push-constant block.
type dropoutPush struct {
	W, H, Channels, Items, Groups        uint32
	SrcBase, DstBase, SrcBatch, DstBatch uint32
	N0, C0, MaskC, MaskH, MaskRowWords   uint32
	SeedLo, SeedHi, Threshold            uint32
	Scale                                float32
	GroupsM, GroupsS, HM, HS, ChM, ChS   uint32 // upMagic of Groups, H and Channels
}

func dropoutSpec(local int, s MaskStride, vec, maskOut bool) map[string]uint32 {
	return map[string]uint32{"local_size_x": uint32(local), "SX": uint32(s.X), "SY": uint32(s.Y), "SC": uint32(s.FeatureChannel),
		"VEC": upBool(vec), "MASK_OUT": upBool(maskOut)}
}

func (k *Dropout) pipeline(f16, vec, maskOut bool) (*vk.Pipeline, error) {
	p := &k.pipes[upBool(f16)][upBool(vec)][upBool(maskOut)]
	if *p != nil {
		return *p, nil
	}
	sh, err := build(spirv.Dropout, f16)
	if err != nil {
		return nil, err
	}
	pl, err := pipeline(k.dev, sh, dropoutSpec(k.local, k.desc.MaskStride, vec, maskOut))
	if err != nil {
		return nil, err
	}
	*p = pl
	return pl, nil
}

// dropoutCheck validates the images of a dropout encode (forward or
// gradient): open, on dev, one format and shape (shape, when not nil, the
// state's), no shared storage.
func dropoutCheck(dev *vk.Device, label string, roles [2]string, in, out *Image, shape *padding.Descriptor) error {
	if err := checkImages(dev, label, roles[:], in, out); err != nil {
		return err
	}
	if in.format != out.format {
		return fmt.Errorf("%w: %s: %s image %s is %v but %s image %s is %v; the images of one encode share a format",
			ErrFormat, label, roles[0], in, in.format, roles[1], out, out.format)
	}
	if shape != nil {
		for i, im := range []*Image{in, out} {
			if d := im.Descriptor().Descriptor(); d != *shape {
				return fmt.Errorf("%w: %s: %s image %s is not the shape of the state's source, %v", ErrShape, label, roles[i], im, *shape)
			}
		}
	} else if err := sameShape(label, in, out); err != nil {
		return err
	}
	if overlaps(in, out) {
		return fmt.Errorf("%w: %s: %s %s and %s %s share storage", ErrAlias, label, roles[0], in, roles[1], out)
	}
	return nil
}

// dropoutDispatch records a dropout shader (get returns its pipeline for
// vector or scalar access) over the images in and out, split into parts
// that fit the device: the forward writes its mask into maskRange (when
// its pipeline has MASK_OUT) and reads the draw from counter; the
// gradient (counter nil) reads the mask from maskRange.
func dropoutDispatch(cb *vk.CommandBuffer, lim *vk.Limits, local int, desc DropoutDescriptor, in, out *Image, m padding.Descriptor,
	rowWords int, get func(vec bool) (*vk.Pipeline, error), maskRange vk.BufferRange, counter *vk.BufferRange) error {
	pc := dropoutPush{W: uint32(in.w), H: uint32(in.h), Groups: uint32((in.w + 31) / 32),
		SrcBatch: uint32(in.cTotal * in.h * in.w), DstBatch: uint32(out.cTotal * out.h * out.w),
		MaskC: uint32(m.C), MaskH: uint32(m.H), MaskRowWords: uint32(rowWords),
		SeedLo: uint32(desc.Seed), SeedHi: uint32(desc.Seed >> 32), Threshold: desc.Threshold(), Scale: desc.Scale()}
	pc.GroupsM, pc.GroupsS = upMagic(pc.Groups)
	pc.HM, pc.HS = upMagic(pc.H)
	var spanArr [maxSpans]span // an array, so encoding does not allocate
	spanArr[0], spanArr[1] = imageSpan(in, 0, 0), imageSpan(out, 0, 0)
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [4]vk.BufferRange
	return forEachPart(lim, spanArr[:2], in.n, in.c, func(pt part) error {
		pc.SrcBase, pc.DstBase = pt.bases[0], pt.bases[1]
		pc.N0, pc.C0, pc.Channels = uint32(pt.n), uint32(pt.c), uint32(pt.channels)
		pc.ChM, pc.ChS = upMagic(pc.Channels)
		items := uint64(pc.Groups) * uint64(in.h) * uint64(pt.batches*pt.channels)
		if items*8 > math.MaxInt32 { // the shaders' fast division takes numerators below 2^31
			return fmt.Errorf("%w: %d invocations in one dispatch", ErrDeviceLimit, items*8)
		}
		pc.Items = uint32(items)
		vec := in.w%4 == 0 && pc.SrcBase%4 == 0 && pc.DstBase%4 == 0
		pl, err := get(vec)
		if err != nil {
			return err
		}
		groups, err := upGroups(lim, items*8, local)
		if err != nil {
			return err
		}
		binds[0], binds[1], binds[2] = pt.ranges[0], pt.ranges[1], maskRange
		n := 3
		if counter != nil {
			binds[3], n = *counter, 4
		}
		return cb.Dispatch(pl, binds[:n], push, groups)
	})
}

// encode records the forward from src into dst, its mask into st (nil:
// not kept), then the counter's advance.
func (k *Dropout) encode(cb *vk.CommandBuffer, src, dst *Image, st *DropoutGradientState) error {
	if err := k.usable(); err != nil {
		return err
	}
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.label())
	}
	var shape *padding.Descriptor
	if st != nil {
		if err := st.usable(); err != nil {
			return fmt.Errorf("%s: %w", k.label(), err)
		}
		if st.dev != k.dev {
			return fmt.Errorf("%w: %s: %v is from another device", ErrDevice, k.label(), st)
		}
		if st.Descriptor != k.desc {
			return fmt.Errorf("%w: %s: %v was made by a kernel of another descriptor (%+v, this one %+v)", ErrState, k.label(), st, st.Descriptor, k.desc)
		}
		shape = &st.Source
	}
	if err := dropoutCheck(k.dev, k.label(), [2]string{"source", "destination"}, src, dst, shape); err != nil {
		return err
	}
	m := k.desc.MaskDescriptor(src.Descriptor().Descriptor())
	if uint64(m.N)*uint64(m.C) > math.MaxUint32 {
		return fmt.Errorf("%w: %s: %d batch images × %d mask channels: the mask's planes are numbered in 32 bits", ErrDeviceLimit, k.label(), m.N, m.C)
	}
	maskRange, info := k.buf.Range(k.align, 16), k.buf.Range(k.align, 16)
	rowWords := (m.W + 31) / 32
	if st != nil {
		maskRange, info = st.buf.Range(0, uint64(st.words)*4), st.buf.Range(st.infoOff, 16)
	}
	counter := k.buf.Range(0, 4)
	lim := k.dev.Limits()
	f16 := src.format == Float16
	err := dropoutDispatch(cb, &lim, k.local, k.desc, src, dst, m, rowWords, func(vec bool) (*vk.Pipeline, error) {
		return k.pipeline(f16, vec, st != nil)
	}, maskRange, &counter)
	if err == nil {
		err = k.recordAdvance(cb, counter, info)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", k.label(), err)
	}
	return nil
}

type dropoutAdvancePush struct{ SeedLo, SeedHi, Threshold uint32 }

// recordAdvance records the draw counter's advance (and the draw's record
// in info).
func (k *Dropout) recordAdvance(cb *vk.CommandBuffer, counter, info vk.BufferRange) error {
	if k.advance == nil {
		p, err := pipeline(k.dev, spirv.DropoutAdvance, nil)
		if err != nil {
			return err
		}
		k.advance = p
	}
	pc := dropoutAdvancePush{uint32(k.desc.Seed), uint32(k.desc.Seed >> 32), k.desc.Threshold()}
	binds := [2]vk.BufferRange{counter, info}
	return cb.Dispatch(k.advance, binds[:], unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc)), [3]uint32{1, 1, 1})
}

// Encode records dropout of src into dst (one shape and format; either
// may be a channel view), drawing a mask it does not keep (training
// without a gradient). It advances the draw counter like every forward.
func (k *Dropout) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	return k.encode(cb, src, dst, nil)
}

// EncodeToState records dropout of src into dst and stores the mask in
// state, made by this kernel's NewGradientState for src's shape (MPS's
// encodeToCommandBuffer:sourceImage:destinationState:destinationImage:).
// It allocates nothing: the form a graph records once and replays.
func (k *Dropout) EncodeToState(cb *vk.CommandBuffer, src *Image, state *DropoutGradientState, dst *Image) error {
	if state == nil {
		return fmt.Errorf("%w: %s: nil gradient state", ErrState, k.label())
	}
	return k.encode(cb, src, dst, state)
}

// EncodeWithState makes a gradient state for src (NewGradientState) and
// records EncodeToState into it. The caller closes the state.
func (k *Dropout) EncodeWithState(cb *vk.CommandBuffer, src, dst *Image) (*DropoutGradientState, error) {
	if err := k.usable(); err != nil {
		return nil, err
	}
	if src == nil {
		return nil, fmt.Errorf("%w: %s: nil source image", ErrInvalidImage, k.label())
	}
	if err := src.usable(); err != nil {
		return nil, fmt.Errorf("%s: source: %w", k.label(), err)
	}
	st, err := k.NewGradientState(src.Descriptor())
	if err != nil {
		return nil, err
	}
	if err := k.encode(cb, src, dst, st); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// EncodeNew records dropout of src into a new image of its shape and
// format; the caller closes it.
func (k *Dropout) EncodeNew(cb *vk.CommandBuffer, src *Image) (*Image, error) {
	dst, _, err := k.encodeNew(cb, src, false)
	return dst, err
}

// EncodeNewWithState is EncodeNew that also returns the gradient state;
// the caller closes both.
func (k *Dropout) EncodeNewWithState(cb *vk.CommandBuffer, src *Image) (*Image, *DropoutGradientState, error) {
	return k.encodeNew(cb, src, true)
}

func (k *Dropout) encodeNew(cb *vk.CommandBuffer, src *Image, state bool) (*Image, *DropoutGradientState, error) {
	if err := k.usable(); err != nil {
		return nil, nil, err
	}
	if src == nil {
		return nil, nil, fmt.Errorf("%w: %s: nil source image", ErrInvalidImage, k.label())
	}
	if err := src.usable(); err != nil {
		return nil, nil, fmt.Errorf("%s: source: %w", k.label(), err)
	}
	d := src.Descriptor()
	d.Label = k.label() + " destination"
	var dst *Image
	var err error
	if k.Allocator != nil {
		dst, err = k.Allocator.AllocateImage(k.dev, d)
	} else {
		dst, err = NewImage(k.dev, d)
	}
	if err != nil {
		return nil, nil, err
	}
	var st *DropoutGradientState
	if state {
		st, err = k.EncodeWithState(cb, src, dst)
	} else {
		err = k.Encode(cb, src, dst)
	}
	if err != nil {
		dst.Close()
		return nil, nil, err
	}
	return dst, st, nil
}

// DropoutGradient is the gradient of Dropout (MPSCNNDropoutGradient):
//
//	dx = mask ? dy * scale : 0,   scale = float32(1/KeepProbability)
//
// with the mask the forward stored in its DropoutGradientState (one
// product per kept element, as the forward; +0 where dropped). The
// forward's source image is not needed. It holds no device memory.
type DropoutGradient struct {
	// Allocator makes the destinations of EncodeNew; nil means NewImage.
	Allocator ImageAllocator
	// Label names the kernel in errors ("DropoutGradient").
	Label string

	dev   *vk.Device
	desc  DropoutDescriptor
	local int
	pipes [2][2]*vk.Pipeline // by float16, vector
}

// NewDropoutGradient makes the gradient of a Dropout of descriptor d (MPS
// initWithDevice:keepProbability:seed:maskStrideInPixels:); its states
// must come from a forward of the same keep probability and mask strides.
func NewDropoutGradient(dev *vk.Device, d DropoutDescriptor) (*DropoutGradient, error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: DropoutGradient: nil device", ErrDevice)
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return &DropoutGradient{Label: "DropoutGradient", dev: dev, desc: d, local: dropoutLocal(dev.Limits())}, nil
}

// Descriptor returns the kernel's descriptor.
func (k *DropoutGradient) Descriptor() DropoutDescriptor { return k.desc }

func (k *DropoutGradient) label() string {
	if k.Label != "" {
		return k.Label
	}
	return "DropoutGradient"
}

// Encode records dx = mask ? dy*scale : 0 with the mask of state: dy (the
// gradient of the forward's destination) and dx (of its source) have the
// state's source shape and one format; either may be a channel view.
func (k *DropoutGradient) Encode(cb *vk.CommandBuffer, sourceGradient *Image, state *DropoutGradientState, destinationGradient *Image) error {
	if k.dev == nil {
		return fmt.Errorf("%w: %s: kernel not made by NewDropoutGradient (no device)", ErrDevice, k.label())
	}
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, k.label())
	}
	if state == nil {
		return fmt.Errorf("%w: %s: nil gradient state", ErrState, k.label())
	}
	if err := state.usable(); err != nil {
		return fmt.Errorf("%s: %w", k.label(), err)
	}
	if state.dev != k.dev {
		return fmt.Errorf("%w: %s: %v is from another device", ErrDevice, k.label(), state)
	}
	sd, kd := state.Descriptor, k.desc
	if sd.KeepProbability != kd.KeepProbability || sd.MaskStride != kd.MaskStride {
		return fmt.Errorf("%w: %s: %v, but this kernel has keep %v and mask stride %v", ErrState, k.label(), state, kd.KeepProbability, kd.MaskStride)
	}
	in, out := sourceGradient, destinationGradient
	if err := dropoutCheck(k.dev, k.label(), [2]string{"source gradient", "destination gradient"}, in, out, &state.Source); err != nil {
		return err
	}
	lim := k.dev.Limits()
	f16 := in.format == Float16
	err := dropoutDispatch(cb, &lim, k.local, k.desc, in, out, state.Mask, state.rowWords, func(vec bool) (*vk.Pipeline, error) {
		p := &k.pipes[upBool(f16)][upBool(vec)]
		if *p == nil {
			sh, err := build(spirv.DropoutGrad, f16)
			if err != nil {
				return nil, err
			}
			if *p, err = pipeline(k.dev, sh, dropoutSpec(k.local, k.desc.MaskStride, vec, false)); err != nil {
				return nil, err
			}
		}
		return *p, nil
	}, state.buf.Range(0, uint64(state.words)*4), nil)
	if err != nil {
		return fmt.Errorf("%s: %w", k.label(), err)
	}
	return nil
}

// EncodeNew records the gradient into a new image of the state's source
// shape (dy's format); the caller closes it.
func (k *DropoutGradient) EncodeNew(cb *vk.CommandBuffer, sourceGradient *Image, state *DropoutGradientState) (*Image, error) {
	if k.dev == nil {
		return nil, fmt.Errorf("%w: %s: kernel not made by NewDropoutGradient (no device)", ErrDevice, k.label())
	}
	if err := state.usable(); err != nil {
		return nil, fmt.Errorf("%s: %w", k.label(), err)
	}
	if sourceGradient == nil {
		return nil, fmt.Errorf("%w: %s: nil source gradient", ErrInvalidImage, k.label())
	}
	s := state.Source
	d := ImageDescriptor{N: s.N, C: s.C, H: s.H, W: s.W, Format: sourceGradient.format, Label: k.label() + " destination gradient"}
	var dx *Image
	var err error
	if k.Allocator != nil {
		dx, err = k.Allocator.AllocateImage(k.dev, d)
	} else {
		dx, err = NewImage(k.dev, d)
	}
	if err != nil {
		return nil, err
	}
	if err := k.Encode(cb, sourceGradient, state, dx); err != nil {
		dx.Close()
		return nil, err
	}
	return dx, nil
}
