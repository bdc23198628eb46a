package ops

import (
	"fmt"
	"unsafe"

	"github.com/vkmps/vkmps/vk"
)

// Element-wise work (Neuron, NeuronGradient, Arithmetic on images of one
// shape) is cut into runs: values that lie one after another in every
// image. A run is the whole tensor when every image is contiguous and
// fits the storage-buffer range; otherwise forEachPart splits it into
// groups of batch images (or channels of one), and a part whose images are
// channel views becomes one run per batch image. A shader walks a run with
// a grid-stride loop, in quads (vec4 loads and stores) where every image's
// first value sits on a 4-value boundary of its bound range.

// neuronRun is one dispatch's share of an element-wise encode.
type neuronRun struct {
	ranges  [maxSpans]vk.BufferRange
	bases   [maxSpans]uint32 // element index of the run's first value in each range
	count   int              // values in the run
	chan0   int              // channel of the run's first value, relative to the images
	aligned bool             // every base is a multiple of 4: the run can move in quads
}

// neuronRuns calls fn for the runs of same-shape images ims.
func neuronRuns(lim vk.Limits, ims []*Image, fn func(r neuronRun) error) error {
	var spans [maxSpans]span
	for i, im := range ims {
		spans[i] = imageSpan(im, 0, 0)
	}
	ref := ims[0]
	plane := ref.h * ref.w
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	var r neuronRun
	emit := func() error {
		r.aligned = true
		for i := range ims {
			r.aligned = r.aligned && r.bases[i]%4 == 0
		}
		return fn(r)
	}
	return forEachPart(&lim, spans[:len(ims)], ref.n, ref.c, func(p part) error {
		contiguous := true
		for _, s := range spans[:len(ims)] {
			contiguous = contiguous && (p.batches == 1 || s.cTotal == p.channels)
		}
		r.chan0 = p.c
		if contiguous {
			r.ranges, r.bases = p.ranges, p.bases
			r.count = p.batches * p.channels * plane
			return emit()
		}
		r.count = p.channels * plane
		for b := 0; b < p.batches; b++ {
			for i, s := range spans[:len(ims)] {
				r.ranges[i], r.bases[i] = s.bind(align, p.n+b, p.c, 1, p.channels)
			}
			if err := emit(); err != nil {
				return err
			}
		}
		return nil
	})
}

// neuronGroups returns the workgroups of a grid-stride dispatch over
// items: one item per invocation, at most the device's (and 65535, the
// limit every device offers) workgroups, fewer with VKMPS_TUNE ewgroups.
func neuronGroups(lim vk.Limits, local, items int) uint32 {
	g := (items + local - 1) / local
	g = min(g, 65535, int(lim.MaxComputeWorkGroupCount[0]))
	if ewTune.groups > 0 {
		g = min(g, ewTune.groups)
	}
	return uint32(max(g, 1))
}

// pushBytes returns the bytes of a push-constant struct, without copying
// (the dispatch copies them).
func pushBytes[T any](pc *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(pc)), unsafe.Sizeof(*pc))
}

// ewTuning overrides the work shapes of the neuron, softmax and arithmetic
// kernels, for measuring alternatives (the library reads no environment:
// benchmarks set it through the test-only SetElementwiseTuning). Results
// stay exact under any setting; the zero value is the default.
//
//	groups    at most this many workgroups per element-wise dispatch (grid-stride loops)
//	smSlices  softmax: invocations sharing one pixel's channels (1..64, a power of two)
type ewTuning struct {
	groups, smSlices int
}

var ewTune ewTuning

// checkElementwise validates the images of an element-wise encode:
// a command buffer, a kernel made by its constructor, open images on its
// device, one format, and outputs sharing no storage with the inputs.
func checkElementwise(cb *vk.CommandBuffer, dev *vk.Device, label string, roles []string, ims []*Image, outputs int) error {
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, label)
	}
	if dev == nil {
		return fmt.Errorf("%w: %s: kernel not made by its constructor (no device)", ErrDevice, label)
	}
	if err := checkImages(dev, label, roles, ims...); err != nil {
		return err
	}
	for i, im := range ims[1:] {
		if im.format != ims[0].format {
			return fmt.Errorf("%w: %s: %s image %s is %v but %s image %s is %v; the images of one encode share a format",
				ErrFormat, label, roles[0], ims[0], ims[0].format, roles[i+1], im, im.format)
		}
	}
	for o := len(ims) - outputs; o < len(ims); o++ {
		for i := 0; i < o; i++ {
			if overlaps(ims[i], ims[o]) {
				return fmt.Errorf("%w: %s: %s %s shares storage with %s %s", ErrAlias, label, roles[o], ims[o], roles[i], ims[i])
			}
		}
	}
	return nil
}
