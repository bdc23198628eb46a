package ops

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// PoolingGradientState records what a forward pooling encode used, for the
// gradient kernel that runs its backward pass (MPS's MPSNNGradientState of
// a pooling kernel, returned by the EncodeWithState forms). The gradient
// kernel configures itself from it: edge mode, zero pads and ExcludeEdges
// always come from the state, and a state whose kind or geometry differs
// from the gradient kernel's is an ErrState.
//
// The exported fields describe the forward encode; they are read, never
// changed, by the gradient kernels. Clip is resolved: its sizes are the
// pixels and batch images actually written, never 0.
//
// A state of PoolingMax or DilatedPoolingMax encoded with RecordArgmax holds
// a GPU buffer of the window winners (HasArgmax): the gradient reads it
// instead of the source image. Close releases it; close the state after the
// command buffers that use it are committed (memory still used by submitted
// work is freed once that work finishes). Close is safe twice; a closed
// state is an ErrClosed for the gradient kernels.
type PoolingGradientState struct {
	// Kind and Geometry are the forward kernel's family, kernel size,
	// stride and dilation.
	Kind     PoolingKind
	Geometry Geometry
	// Offset is the forward kernel's: the source position of the window
	// centre of the clip origin, and (Z) the first source batch image read.
	Offset Offset
	// Clip is the destination region the forward wrote: origin X, Y, first
	// batch image Z, and the number of columns, rows and batch images.
	Clip Region
	// EdgeMode, ZeroPad, ExcludeEdges and EdgePads are the forward kernel's
	// settings (ZeroPad, ExcludeEdges and EdgePads: average pooling only).
	EdgeMode     EdgeMode
	ZeroPad      padding.Pads
	ExcludeEdges bool
	EdgePads     padding.Pads
	// Padding is the policy EncodeNewWithState sized the destination with
	// (its Method() is MPS's paddingMethod); nil after EncodeWithState,
	// which does not consult it.
	Padding padding.Policy
	// Source and Destination are the shapes of the forward source and
	// destination images (of the views, for channel views).
	Source, Destination padding.Descriptor
	// The forward read FeatureChannels channels from source channel
	// SourceFeatureChannelOffset and wrote them from destination channel
	// DestinationFeatureChannelOffset.
	SourceFeatureChannelOffset      int
	DestinationFeatureChannelOffset int
	FeatureChannels                 int

	dev        *vk.Device
	argmax     *vk.Buffer
	argmaxBits int // 8, 16 or 32 bits per index; 0 without argmax
	planeWords int // argmax words per plane (batch image, channel)
	// scratch holds a gradient's first pass (argmax codes computed from the
	// source, or L2-norm ratios); made by the first gradient encode that
	// needs it and kept for later ones, so replays allocate nothing.
	scratch *vk.Buffer
	closed  atomic.Bool
}

// SourceDescriptor returns the forward source's shape: the size of the
// gradient's destination (padding.SizeState, so padding.Inverse sizes a
// gradient from it).
func (s *PoolingGradientState) SourceDescriptor() padding.Descriptor { return s.Source }

// Device returns the device of the forward encode.
func (s *PoolingGradientState) Device() *vk.Device { return s.dev }

// HasArgmax reports whether the state holds the forward's argmax indices.
func (s *PoolingGradientState) HasArgmax() bool { return s.argmax != nil }

// ArgmaxBits returns the bits per recorded argmax index: 8 when the kernel
// has at most 255 taps, 16 up to 65535, else 32; 0 without argmax. The
// all-ones value of that width means "no tap of the image won".
func (s *PoolingGradientState) ArgmaxBits() int { return s.argmaxBits }

// String describes the state for messages.
func (s *PoolingGradientState) String() string {
	g := s.Geometry
	return fmt.Sprintf("%v state (kernel %dx%d, stride %dx%d, dilation %dx%d, %v -> %v)", s.Kind,
		g.KernelWidth, g.KernelHeight, g.StrideX, g.StrideY, g.DilationX, g.DilationY, s.Source, s.Destination)
}

// Close releases the state's GPU resources. It is safe twice.
func (s *PoolingGradientState) Close() error {
	if s == nil || s.closed.Swap(true) {
		return nil
	}
	var err error
	if s.argmax != nil {
		err = s.argmax.Close()
	}
	if s.scratch != nil {
		err = errors.Join(err, s.scratch.Close())
	}
	return err
}

// scratchBuffer returns the state's scratch buffer, at least size bytes;
// a smaller one is closed (it lives on while command buffers use it).
func (s *PoolingGradientState) scratchBuffer(size uint64) (*vk.Buffer, error) {
	if s.scratch != nil && s.scratch.Size() >= size {
		return s.scratch, nil
	}
	if s.scratch != nil {
		s.scratch.Close()
		s.scratch = nil
	}
	b, err := s.dev.NewBuffer(size, "gradient scratch of "+s.String())
	if err != nil {
		return nil, err
	}
	s.scratch = b
	return b, nil
}

// ReadArgmax downloads the recorded argmax indices, after the forward's
// command buffer has finished: one per forward destination pixel in NCHW
// order (Destination's shape), the winning tap ky*KernelWidth + kx, or -1
// where an outside tap won, the window had no tap in the image, or the
// pixel is outside Clip or the channels written (ref.Argmax's format).
func (s *PoolingGradientState) ReadArgmax(ctx context.Context) ([]int32, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil gradient state", ErrState)
	}
	if s.closed.Load() {
		return nil, fmt.Errorf("%w: %v", ErrClosed, s)
	}
	if s.argmax == nil {
		return nil, fmt.Errorf("%w: %v records no argmax (set RecordArgmax on the forward kernel)", ErrState, s)
	}
	raw := make([]byte, s.argmax.Size())
	if err := s.argmax.Read(ctx, 0, raw); err != nil {
		return nil, err
	}
	d, cl := s.Destination, s.Clip
	out := make([]int32, d.N*d.C*d.H*d.W)
	for i := range out {
		out[i] = -1
	}
	per := 32 / s.argmaxBits
	rowWords := (cl.Width + per - 1) / per
	mask := uint32(1<<s.argmaxBits - 1)
	if s.argmaxBits == 32 {
		mask = ^uint32(0)
	}
	for b := 0; b < cl.Depth; b++ {
		for c := 0; c < s.FeatureChannels; c++ {
			plane := (b*s.FeatureChannels + c) * s.planeWords
			for e := 0; e < cl.Width*cl.Height; e++ {
				cx, cy := e%cl.Width, e/cl.Width
				w := binary.LittleEndian.Uint32(raw[4*(plane+cy*rowWords+cx/per):])
				code := w >> (uint(cx%per) * uint(s.argmaxBits)) & mask
				if code == mask {
					continue
				}
				y, x := cl.Y+e/cl.Width, cl.X+e%cl.Width
				out[(((cl.Z+b)*d.C+s.DestinationFeatureChannelOffset+c)*d.H+y)*d.W+x] = int32(code)
			}
		}
	}
	return out, nil
}

// argmaxPlaneWords is the size in words of one plane of argmax codes for a
// w×h clip: each row holds ceil(w/per) words of per = 32/bits codes
// (pooling_max_argmax.comp's layout: one word per invocation).
func argmaxPlaneWords(w, h, bits int) int {
	per := 32 / bits
	return (w + per - 1) / per * h
}

// argmaxBitsFor returns the index width for a window of taps taps.
func argmaxBitsFor(taps int) int {
	switch {
	case taps <= 255:
		return 8
	case taps <= 65535:
		return 16
	}
	return 32
}

// newState records the forward job j of kernel p.
func (p *pooling) newState(j job) *PoolingGradientState {
	return &PoolingGradientState{
		Kind: p.kind, Geometry: p.geom,
		Offset:   Offset{X: j.offX, Y: j.offY, Z: j.srcN0},
		Clip:     Region{X: j.clipX, Y: j.clipY, Z: j.dstN0, Width: j.clipW, Height: j.clipH, Depth: j.batches},
		EdgeMode: p.EdgeMode,
		Source:   j.src.Descriptor().Descriptor(), Destination: j.dst.Descriptor().Descriptor(),
		SourceFeatureChannelOffset: j.srcC0, DestinationFeatureChannelOffset: j.dstC0, FeatureChannels: j.channels,
		dev: p.dev,
	}
}

// argmaxSpan is the span of the state's argmax buffer.
func (s *PoolingGradientState) argmaxSpan(n0, c0 int) span {
	return span{buf: s.argmax, esize: 4, plane: uint64(s.planeWords), cTotal: s.FeatureChannels, n0: n0, c0: c0,
		what: argmaxName{s}, h: s.Clip.Height, w: s.Clip.Width, row: uint64(s.planeWords / s.Clip.Height)}
}

// argmaxName names a state's argmax indices in errors.
type argmaxName struct{ s *PoolingGradientState }

func (a argmaxName) String() string { return fmt.Sprintf("the argmax indices of %v", a.s) }
