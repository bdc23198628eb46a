package ops

import (
	"fmt"
	"math/bits"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// SoftMaxResultDescriptor returns the shape of a softmax's or
// log-softmax's result, and of their gradients, for a source of shape
// src: src's (the channels of each pixel are normalised in place). It
// needs no device.
func SoftMaxResultDescriptor(src ImageDescriptor) (ImageDescriptor, error) {
	if err := src.validate(); err != nil {
		return ImageDescriptor{}, err
	}
	return ImageDescriptor{N: src.N, C: src.C, H: src.H, W: src.W, Format: src.Format}, nil
}

// softmaxKernel is what the four softmax kernels share.
type softmaxKernel struct {
	dev    *vk.Device
	label  string
	log    bool
	shader *spirv.Shader
	// pipes by format, channel-fast layout and log2 of the invocations
	// per pixel.
	pipes [2][2][11]*vk.Pipeline
}

// Close releases nothing (the kernel holds no memory); it lets a graph
// close every kernel alike.
func (k *softmaxKernel) Close() error { return nil }

func newSoftmaxKernel(dev *vk.Device, label string, log bool, sh *spirv.Shader) (softmaxKernel, error) {
	k := softmaxKernel{label: label, log: log, shader: sh}
	if dev == nil {
		return k, fmt.Errorf("%w: %s: nil device", ErrDevice, label)
	}
	k.dev = dev
	return k, nil
}

// softmaxShape returns how a dispatch over pixels pixels (planes of plane
// values) of channels channels is laid out: slices invocations share a
// pixel's channels, a workgroup has local invocations (local/slices
// pixels at a time), and cfast says whether neighbouring invocations take
// neighbouring channels (planes of 1 or 2 values: neighbouring pixels lie
// C apart) rather than neighbouring pixels.
//
// Pixel-fast: slices grow, as powers of two up to 32 and the channel
// count, until the dispatch has about 2^17 invocations, enough to fill a
// large GPU; a workgroup then takes 32 neighbouring pixels (or the
// subgroup size, when larger) so that each channel's loads stay
// coalesced. Channel-fast: slices grow likewise up to 256, in workgroups
// of the usual size.
func softmaxShape(lim vk.Limits, pixels, plane, channels int) (slices, local int, cfast bool) {
	maxLocal := int(min(1024, lim.MaxComputeWorkGroupInvocations, lim.MaxComputeWorkGroupSize[0]))
	wg := 1
	for wg*2 <= workgroup(lim) {
		wg *= 2
	}
	cfast = plane <= 2
	px, most := min(max(32, int(lim.SubgroupSize)), maxLocal), 32
	if cfast {
		px, most = 1, wg
	}
	slices = 1
	for slices < most && slices*2 <= channels && pixels*slices < 1<<17 && px*slices*2 <= maxLocal {
		slices *= 2
	}
	if t := ewTune.smSlices; t > 0 {
		slices = min(t, maxLocal/px)
	}
	switch {
	case cfast:
		return slices, max(wg, slices), true
	case slices == 1:
		return 1, wg, false
	}
	return slices, px * slices, false
}

// pipeline returns the pipeline for images of format f and the given
// layout.
func (k *softmaxKernel) pipeline(f Format, slices, local int, cfast bool) (*vk.Pipeline, error) {
	c := 0
	if cfast {
		c = 1
	}
	slot := &k.pipes[f][c][bits.TrailingZeros(uint(slices))]
	if *slot != nil {
		return *slot, nil
	}
	sh, err := build(k.shader, f == Float16)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.label, err)
	}
	logv := uint32(0)
	if k.log {
		logv = 1
	}
	p, err := pipeline(k.dev, sh, map[string]uint32{"local_size_x": uint32(local), "SLICES": uint32(slices), "LOG": logv, "CFAST": uint32(c)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.label, err)
	}
	*slot = p
	return p, nil
}

// encode records the kernel over same-shape images ims (inputs first,
// the output last), with push the shader's constants: its first three
// words are set here (pixels, plane, channels), then per image its base,
// then per image its batch stride.
func (k *softmaxKernel) encode(cb *vk.CommandBuffer, roles []string, ims []*Image) error {
	if err := checkElementwise(cb, k.dev, k.label, roles, ims, 1); err != nil {
		return err
	}
	if err := sameShape(k.label, ims...); err != nil {
		return err
	}
	ref := ims[0]
	lim := k.dev.Limits()
	plane := ref.h * ref.w
	var spans [3]span
	for i, im := range ims {
		spans[i] = imageSpan(im, 0, 0)
	}
	// pixels, plane, channels, bases..., batch strides...
	var pc [9]uint32
	pc[1], pc[2] = uint32(plane), uint32(ref.c)
	for i, im := range ims {
		pc[3+len(ims)+i] = uint32(im.cTotal * plane)
	}
	push := pushBytes(&pc)[:4*(3+2*len(ims))]
	var binds [3]vk.BufferRange
	return forEachPart(&lim, spans[:len(ims)], ref.n, ref.c, func(p part) error {
		if p.channels != ref.c {
			return fmt.Errorf("%w: %s: one batch image of %s (%d bytes) exceeds the device's max storage buffer range (%d bytes); a softmax needs all the channels of a pixel in one dispatch",
				ErrDeviceLimit, k.label, ref, uint64(ref.c*plane)*ref.esize(), lim.MaxStorageBufferRange)
		}
		pixels := p.batches * plane
		slices, local, cfast := softmaxShape(lim, pixels, plane, ref.c)
		pl, err := k.pipeline(ref.format, slices, local, cfast)
		if err != nil {
			return err
		}
		pc[0] = uint32(pixels)
		for i := range ims {
			binds[i], pc[3+i] = p.ranges[i], p.bases[i]
		}
		px := local / slices
		groups := min((pixels+px-1)/px, 65535, int(lim.MaxComputeWorkGroupCount[0]))
		if ewTune.groups > 0 {
			groups = min(groups, ewTune.groups)
		}
		if err := cb.Dispatch(pl, binds[:len(ims)], push, [3]uint32{uint32(groups), 1, 1}); err != nil {
			return fmt.Errorf("%s: %w", k.label, err)
		}
		return nil
	})
}

// SoftMax normalises the feature channels of every pixel (MPSCNNSoftMax):
//
//	dst_c = exp(src_c - m) / sum_k exp(src_k - m),  m = max_k src_k
//
// over the C channels of each (n, y, x), NCHW, float32 or float16
// (computed in float32, rounded once when stored). Subtracting the
// maximum keeps it finite for any finite input; a NaN in a pixel makes
// that pixel NaN, as do two +Inf. Sums run in a fixed order, so a run
// repeats bit for bit on one device. A batch image must fit the device's
// MaxStorageBufferRange (ErrDeviceLimit otherwise).
type SoftMax struct{ softmaxKernel }

// NewSoftMax makes a softmax kernel.
func NewSoftMax(dev *vk.Device) (*SoftMax, error) {
	k, err := newSoftmaxKernel(dev, "SoftMax", false, spirv.Softmax)
	if err != nil {
		return nil, err
	}
	return &SoftMax{k}, nil
}

// Encode records dst = softmax(src) over channels; src and dst have one
// shape and format and share no storage.
func (k *SoftMax) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	roles := [2]string{"source", "destination"}
	ims := [2]*Image{src, dst}
	return k.encode(cb, roles[:], ims[:])
}

// LogSoftMax is the logarithm of SoftMax over the feature channels of
// every pixel (MPSCNNLogSoftMax):
//
//	dst_c = src_c - m - log(sum_k exp(src_k - m)),  m = max_k src_k
//
// with SoftMax's layout, formats and guarantees.
type LogSoftMax struct{ softmaxKernel }

// NewLogSoftMax makes a log-softmax kernel.
func NewLogSoftMax(dev *vk.Device) (*LogSoftMax, error) {
	k, err := newSoftmaxKernel(dev, "LogSoftMax", true, spirv.Softmax)
	if err != nil {
		return nil, err
	}
	return &LogSoftMax{k}, nil
}

// Encode records dst = log(softmax(src)) over channels; src and dst have
// one shape and format and share no storage.
func (k *LogSoftMax) Encode(cb *vk.CommandBuffer, src, dst *Image) error {
	roles := [2]string{"source", "destination"}
	ims := [2]*Image{src, dst}
	return k.encode(cb, roles[:], ims[:])
}

// SoftMaxGradient is SoftMax's backward pass (MPSCNNSoftMaxGradient): from
// dy, the gradient of the loss with respect to the softmax's result, and
// that result y (not the softmax's source: MPS's convention), per pixel
//
//	dx_c = y_c * (dy_c - sum_k dy_k * y_k).
type SoftMaxGradient struct{ softmaxKernel }

// NewSoftMaxGradient makes a softmax gradient kernel.
func NewSoftMaxGradient(dev *vk.Device) (*SoftMaxGradient, error) {
	k, err := newSoftmaxKernel(dev, "SoftMaxGradient", false, spirv.SoftmaxGrad)
	if err != nil {
		return nil, err
	}
	return &SoftMaxGradient{k}, nil
}

// Encode records dx from dy and the forward's result y; the three images
// have one shape and format, and dx shares no storage with the others.
func (k *SoftMaxGradient) Encode(cb *vk.CommandBuffer, dy, y, dx *Image) error {
	roles := [3]string{"source gradient", "forward result", "destination gradient"}
	ims := [3]*Image{dy, y, dx}
	return k.encode(cb, roles[:], ims[:])
}

// LogSoftMaxGradient is LogSoftMax's backward pass
// (MPSCNNLogSoftMaxGradient): from dy and the log-softmax's result y, per
// pixel
//
//	dx_c = dy_c - exp(y_c) * sum_k dy_k.
type LogSoftMaxGradient struct{ softmaxKernel }

// NewLogSoftMaxGradient makes a log-softmax gradient kernel.
func NewLogSoftMaxGradient(dev *vk.Device) (*LogSoftMaxGradient, error) {
	k, err := newSoftmaxKernel(dev, "LogSoftMaxGradient", true, spirv.SoftmaxGrad)
	if err != nil {
		return nil, err
	}
	return &LogSoftMaxGradient{k}, nil
}

// Encode records dx from dy and the forward's result y; the three images
// have one shape and format, and dx shares no storage with the others.
func (k *LogSoftMaxGradient) Encode(cb *vk.CommandBuffer, dy, y, dx *Image) error {
	roles := [3]string{"source gradient", "forward result", "destination gradient"}
	ims := [3]*Image{dy, y, dx}
	return k.encode(cb, roles[:], ims[:])
}
