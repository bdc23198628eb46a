package ops

import (
	"fmt"

	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// EdgeMode says what a kernel reads outside its source (MPSImageEdgeMode).
type EdgeMode = padding.EdgeMode

// Edge modes. EdgeZero is the kernels' default, as in MPS.
const (
	EdgeZero  = padding.EdgeZero
	EdgeClamp = padding.EdgeClamp
)

// Offset is a position in a source image (MPSOffset); Z is a batch index.
type Offset struct{ X, Y, Z int }

// Region is a destination region (MTLRegion): origin X, Y, Z (Z the first
// batch image) and size Width, Height, Depth (batch images). A zero size
// on an axis means "to the end of the destination" (MPSRectNoClip).
type Region struct{ X, Y, Z, Width, Height, Depth int }

// ImageAllocator makes the destination images of the encode forms that
// create them (MPSImageAllocator). NewImage is used when none is set.
type ImageAllocator interface {
	AllocateImage(dev *vk.Device, d ImageDescriptor) (*Image, error)
}

// Kernel holds the properties every vkmps kernel has (MPSCNNKernel). The
// zero value of each is MPS's default.
//
// For destination pixel (x, y) inside ClipRect, the window centre is
// Offset + stride*((x, y) - ClipRect origin) in the source: Offset is the
// source position of the clip origin's window centre. Destination batch
// image z in [ClipRect.Z, ClipRect.Z+Depth) reads source image
// Offset.Z + (z - ClipRect.Z). Pixels outside ClipRect are left untouched.
//
// Channels: the kernel reads source channels starting at
// SourceFeatureChannelOffset (all the rest, or at most
// SourceFeatureChannelMaxCount when that is > 0) and writes as many
// destination channels starting at DestinationFeatureChannelOffset.
//
// A kernel is configured and encoded by one goroutine at a time.
type Kernel struct {
	Offset   Offset
	ClipRect Region
	EdgeMode EdgeMode
	// Padding sizes the destination and sets Offset (and, for some
	// policies, EdgeMode and zero pads) in the encode forms that create
	// the destination. nil means padding.WithMethod(padding.Same).
	Padding padding.Policy

	SourceFeatureChannelOffset      int
	SourceFeatureChannelMaxCount    int
	DestinationFeatureChannelOffset int

	// Allocator makes destinations for EncodeNew; nil means NewImage.
	Allocator ImageAllocator
	// Label names the kernel in errors; the constructor sets its MPS name.
	Label string

	dev *vk.Device
}

// Device returns the kernel's device.
func (k *Kernel) Device() *vk.Device { return k.dev }

// policy returns the padding policy in force.
func (k *Kernel) policy() padding.Policy {
	if k.Padding != nil {
		return k.Padding
	}
	return padding.WithMethod(padding.Same)
}

func (k *Kernel) allocate(d ImageDescriptor) (*Image, error) {
	if k.Allocator != nil {
		return k.Allocator.AllocateImage(k.dev, d)
	}
	return NewImage(k.dev, d)
}

// job is an encode resolved against its images: what to compute.
type job struct {
	src, dst     *Image
	srcC0, dstC0 int // first channel read / written
	channels     int
	srcN0, dstN0 int // first batch image read / written
	batches      int
	clipX, clipY int // first destination pixel written
	clipW, clipH int
	offX, offY   int // window centre of the clip origin
}

// checkImage validates an image argument of kernel k.
func (k *Kernel) checkImage(role string, im *Image) error {
	if k.dev == nil {
		return fmt.Errorf("%w: %s: kernel not made by its constructor (no device)", ErrDevice, k.Label)
	}
	if im == nil {
		return fmt.Errorf("%w: %s: nil %s image", ErrInvalidImage, k.Label, role)
	}
	if err := im.usable(); err != nil {
		return fmt.Errorf("%s: %s: %w", k.Label, role, err)
	}
	if im.dev != k.dev {
		return fmt.Errorf("%w: %s: %s image %s is on %s, the kernel on %s", ErrDevice, k.Label, role, im, im.dev.Info().Name, k.dev.Info().Name)
	}
	return nil
}

// sameFormat reports ErrFormat, naming both images, when a and b differ in
// format: every image of one encode has the same.
func (k *Kernel) sameFormat(roleA string, a *Image, roleB string, b *Image) error {
	if a.format != b.format {
		return fmt.Errorf("%w: %s: %s image %s is %v but %s image %s is %v; the images of one encode share a format",
			ErrFormat, k.Label, roleA, a, a.format, roleB, b, b.format)
	}
	return nil
}

// resolve checks src and dst against the kernel's properties and returns
// what the encode must compute. Checks run in a fixed order: images, device,
// format, aliasing, channels, batch, clip.
func (k *Kernel) resolve(src, dst *Image) (job, error) {
	return k.resolveRoles(src, dst, "source", "destination")
}

// resolveRoles is resolve with the images named srcRole and dstRole in
// errors (a gradient kernel's source is the source gradient).
func (k *Kernel) resolveRoles(src, dst *Image, srcRole, dstRole string) (job, error) {
	var j job
	if err := k.checkImage(srcRole, src); err != nil {
		return j, err
	}
	if err := k.checkImage(dstRole, dst); err != nil {
		return j, err
	}
	if err := k.sameFormat(srcRole, src, dstRole, dst); err != nil {
		return j, err
	}
	if overlaps(src, dst) {
		return j, fmt.Errorf("%w: %s: %s %s and %s %s share storage", ErrAlias, k.Label, srcRole, src, dstRole, dst)
	}
	// Channels.
	so, do := k.SourceFeatureChannelOffset, k.DestinationFeatureChannelOffset
	if so < 0 || so >= src.c {
		return j, fmt.Errorf("%w: %s: %s channel offset %d outside the %d channels of %s", ErrChannelRange, k.Label, srcRole, so, src.c, src)
	}
	if do < 0 || do >= dst.c {
		return j, fmt.Errorf("%w: %s: %s channel offset %d outside the %d channels of %s", ErrChannelRange, k.Label, dstRole, do, dst.c, dst)
	}
	if k.SourceFeatureChannelMaxCount < 0 {
		return j, fmt.Errorf("%w: %s: %s channel max count %d < 0", ErrChannelRange, k.Label, srcRole, k.SourceFeatureChannelMaxCount)
	}
	j.channels = src.c - so
	if m := k.SourceFeatureChannelMaxCount; m > 0 && m < j.channels {
		j.channels = m
	}
	if do+j.channels > dst.c {
		return j, fmt.Errorf("%w: %s: %d channels from %s channel %d do not fit %s %s from channel %d", ErrChannelRange, k.Label, j.channels, srcRole, so, dstRole, dst, do)
	}
	j.srcC0, j.dstC0 = so, do
	// Batch.
	cr := k.ClipRect
	if cr.X < 0 || cr.Y < 0 || cr.Z < 0 || cr.Width < 0 || cr.Height < 0 || cr.Depth < 0 {
		return j, fmt.Errorf("%w: %s: clip rectangle %+v has a negative field", ErrGeometry, k.Label, cr)
	}
	if cr.Z >= dst.n {
		return j, fmt.Errorf("%w: %s: clip rectangle starts at batch image %d of a %s with %d", ErrShape, k.Label, cr.Z, dstRole, dst.n)
	}
	j.batches = dst.n - cr.Z
	if cr.Depth > 0 && cr.Depth < j.batches {
		j.batches = cr.Depth
	}
	if k.Offset.Z < 0 || k.Offset.Z > src.n-j.batches { // no overflow
		return j, fmt.Errorf("%w: %s: %d batch images from %s image %d, but %s %s has %d", ErrShape, k.Label, j.batches, srcRole, k.Offset.Z, srcRole, src, src.n)
	}
	j.srcN0, j.dstN0 = k.Offset.Z, cr.Z
	// Clip: intersect with the destination (MPS); an empty one is an error.
	if cr.X >= dst.w || cr.Y >= dst.h {
		return j, fmt.Errorf("%w: %s: clip rectangle origin (%d, %d) lies outside %s %s", ErrGeometry, k.Label, cr.X, cr.Y, dstRole, dst)
	}
	j.clipX, j.clipY = cr.X, cr.Y
	j.clipW, j.clipH = dst.w-cr.X, dst.h-cr.Y
	if cr.Width > 0 && cr.Width < j.clipW {
		j.clipW = cr.Width
	}
	if cr.Height > 0 && cr.Height < j.clipH {
		j.clipH = cr.Height
	}
	// The shaders place windows in 32-bit arithmetic.
	if lim := 1 << 30; k.Offset.X < -lim || k.Offset.X > lim || k.Offset.Y < -lim || k.Offset.Y > lim {
		return j, fmt.Errorf("%w: %s: offset (%d, %d) outside ±2^30", ErrGeometry, k.Label, k.Offset.X, k.Offset.Y)
	}
	j.offX, j.offY = k.Offset.X, k.Offset.Y
	j.src, j.dst = src, dst
	return j, nil
}

// sourceDescriptor is the source as a padding policy sees it: the channels
// the kernel reads and the batch images from Offset.Z on.
func (k *Kernel) sourceDescriptor(src *Image) (padding.Descriptor, error) {
	if err := k.checkImage("source", src); err != nil {
		return padding.Descriptor{}, err
	}
	so := k.SourceFeatureChannelOffset
	if so < 0 || so >= src.c {
		return padding.Descriptor{}, fmt.Errorf("%w: %s: source channel offset %d outside the %d channels of %s", ErrChannelRange, k.Label, so, src.c, src)
	}
	c := src.c - so
	if m := k.SourceFeatureChannelMaxCount; m > 0 && m < c {
		c = m
	}
	if k.Offset.Z < 0 || k.Offset.Z >= src.n {
		return padding.Descriptor{}, fmt.Errorf("%w: %s: offset.z %d outside the %d batch images of %s", ErrShape, k.Label, k.Offset.Z, src.n, src)
	}
	return padding.Descriptor{N: src.n - k.Offset.Z, C: c, H: src.h, W: src.w}, nil
}
