package ops

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// ImageDescriptor describes an image to create (MPSImageDescriptor): N batch
// images of C feature channels, H rows by W columns, float32 NCHW.
type ImageDescriptor struct {
	N, C, H, W int
	// Label names the image in errors; optional.
	Label string
}

// Descriptor returns the padding package's descriptor of the same shape.
func (d ImageDescriptor) Descriptor() padding.Descriptor {
	return padding.Descriptor{N: d.N, C: d.C, H: d.H, W: d.W}
}

func (d ImageDescriptor) validate() error {
	for _, v := range []struct {
		name string
		n    int
	}{{"batch size N", d.N}, {"channel count C", d.C}, {"height H", d.H}, {"width W", d.W}} {
		if v.n < 1 {
			return fmt.Errorf("%w: image %q: %s = %d < 1", ErrInvalidImage, d.Label, v.name, v.n)
		}
	}
	n := uint64(d.N)
	for _, f := range []int{d.C, d.H, d.W} {
		if n > math.MaxInt64/4/uint64(f) {
			return fmt.Errorf("%w: image %q: %dx%dx%dx%d is too large", ErrInvalidImage, d.Label, d.N, d.C, d.H, d.W)
		}
		n *= uint64(f)
	}
	if d.H > math.MaxInt32 || d.W > math.MaxInt32 {
		return fmt.Errorf("%w: image %q: side over 2^31", ErrInvalidImage, d.Label)
	}
	return nil
}

// Image is N batch images × C feature channels × H × W float32 values,
// stored NCHW and densely packed on a device (MPSImage / MPSImageBatch;
// there is no multiple-of-4 channel rule).
//
// An image may be a channel view of another (ChannelView): it then shares
// the storage and sees channels [offset, offset+count) of each batch image,
// so concatenation needs no copy. Close releases the storage of an image
// that owns it; closing a view only retires the view. Close is safe twice.
type Image struct {
	dev    *vk.Device
	buf    *vk.Buffer
	base   uint64 // element index of (n=0, c=0, 0, 0) of this view in buf
	n, c   int
	h, w   int
	cTotal int    // channels per batch image in the storage
	root   *Image // the image owning the storage; nil when this one does
	label  string
	owns   bool
	closed atomic.Bool
}

// NewImage creates an image on dev. Its contents start undefined.
func NewImage(dev *vk.Device, d ImageDescriptor) (*Image, error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: nil device", ErrInvalidImage)
	}
	if err := d.validate(); err != nil {
		return nil, err
	}
	label := d.Label
	if label == "" {
		label = fmt.Sprintf("image %dx%dx%dx%d", d.N, d.C, d.H, d.W)
	}
	buf, err := dev.NewBuffer(uint64(d.N*d.C*d.H*d.W)*4, label)
	if err != nil {
		return nil, err
	}
	return &Image{dev: dev, buf: buf, n: d.N, c: d.C, h: d.H, w: d.W, cTotal: d.C, label: label, owns: true}, nil
}

// NewImageOn makes an image that lives in buf starting at byte offset off
// (a multiple of 4). The buffer stays the caller's: closing the image does
// not close it. Graph executors use it to place temporaries in an arena.
func NewImageOn(buf *vk.Buffer, off uint64, d ImageDescriptor) (*Image, error) {
	if buf == nil {
		return nil, fmt.Errorf("%w: nil buffer", ErrInvalidImage)
	}
	if err := d.validate(); err != nil {
		return nil, err
	}
	size := uint64(d.N*d.C*d.H*d.W) * 4
	if off%4 != 0 || off > buf.Size() || size > buf.Size()-off {
		return nil, fmt.Errorf("%w: image %q of %d bytes at offset %d does not fit buffer %q of %d bytes", ErrInvalidImage, d.Label, size, off, buf.Label(), buf.Size())
	}
	label := d.Label
	if label == "" {
		label = buf.Label()
	}
	return &Image{dev: buf.Device(), buf: buf, base: off / 4, n: d.N, c: d.C, h: d.H, w: d.W, cTotal: d.C, label: label}, nil
}

// Descriptor returns the image's shape (of the view, for a channel view).
func (im *Image) Descriptor() ImageDescriptor {
	return ImageDescriptor{N: im.n, C: im.c, H: im.h, W: im.w, Label: im.label}
}

// N, C, H and W return the image's dimensions.
func (im *Image) N() int { return im.n }
func (im *Image) C() int { return im.c }
func (im *Image) H() int { return im.h }
func (im *Image) W() int { return im.w }

// Len returns N*C*H*W, the number of values Write takes and Read returns.
func (im *Image) Len() int { return im.n * im.c * im.h * im.w }

// Mapped reports whether Write and Read reach the image's memory directly
// (host-visible memory, as on lavapipe and integrated GPUs) rather than
// through the device's staging ring.
func (im *Image) Mapped() bool { return im.buf.Mapped() }

// Device returns the image's device.
func (im *Image) Device() *vk.Device { return im.dev }

// Label returns the image's label.
func (im *Image) Label() string { return im.label }

// String describes the image for messages.
func (im *Image) String() string {
	return fmt.Sprintf("%q (%dx%dx%dx%d)", im.label, im.n, im.c, im.h, im.w)
}

// ChannelView returns a view of channels [offset, offset+count) of every
// batch image. It shares storage with im and is valid while im is open.
func (im *Image) ChannelView(offset, count int) (*Image, error) {
	if err := im.usable(); err != nil {
		return nil, err
	}
	if offset < 0 || count < 1 || offset+count > im.c {
		return nil, fmt.Errorf("%w: channel view [%d, %d) of %s with %d channels", ErrChannelRange, offset, offset+count, im, im.c)
	}
	root := im.root
	if root == nil {
		root = im
	}
	v := &Image{dev: im.dev, buf: im.buf, base: im.base + uint64(offset*im.h*im.w), n: im.n, c: count,
		h: im.h, w: im.w, cTotal: im.cTotal, root: root,
		label: fmt.Sprintf("%s[c %d:%d]", im.label, offset, offset+count)}
	return v, nil
}

// Close releases the image. Storage still used by submitted work is freed
// once that work finishes.
func (im *Image) Close() error {
	if im == nil || im.closed.Swap(true) {
		return nil
	}
	if im.owns {
		return im.buf.Close()
	}
	return nil
}

// usable returns an error naming the image when it (or the image owning
// its storage) is closed, or it is nil.
func (im *Image) usable() error {
	if im == nil {
		return fmt.Errorf("%w: nil image", ErrInvalidImage)
	}
	if im.closed.Load() || (im.root != nil && im.root.closed.Load()) {
		return fmt.Errorf("%w: image %s", ErrClosed, im)
	}
	return nil
}

// contiguous reports whether the view's values are one run of storage.
func (im *Image) contiguous() bool { return im.cTotal == im.c || im.n == 1 }

// batchBytes returns the byte offset of batch image n's first value and
// the length of its run.
func (im *Image) batchRun(n int) (off, size uint64) {
	plane := uint64(im.h * im.w)
	return (im.base + uint64(n*im.cTotal)*plane) * 4, uint64(im.c) * plane * 4
}

// Write uploads data, N*C*H*W values in NCHW order, into the image (only
// the view's channels, for a view). It waits for submitted work that uses
// the image's storage first.
func (im *Image) Write(ctx context.Context, data []float32) error {
	if err := im.usable(); err != nil {
		return err
	}
	if len(data) != im.Len() {
		return fmt.Errorf("%w: writing %d values into %s, which holds %d", ErrShape, len(data), im, im.Len())
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(data))), 4*len(data))
	if im.contiguous() {
		return im.buf.Write(ctx, im.base*4, b)
	}
	for n := 0; n < im.n; n++ {
		off, size := im.batchRun(n)
		if err := im.buf.Write(ctx, off, b[uint64(n)*size:uint64(n+1)*size]); err != nil {
			return err
		}
	}
	return nil
}

// Read downloads the image's values in NCHW order, after the submitted work
// that uses its storage has finished (or ctx is done).
func (im *Image) Read(ctx context.Context) ([]float32, error) {
	out := make([]float32, im.Len())
	if err := im.ReadInto(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadInto is Read into dst, which must hold N*C*H*W values.
func (im *Image) ReadInto(ctx context.Context, dst []float32) error {
	if err := im.usable(); err != nil {
		return err
	}
	if len(dst) != im.Len() {
		return fmt.Errorf("%w: reading %s (%d values) into %d values", ErrShape, im, im.Len(), len(dst))
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 4*len(dst))
	if im.contiguous() {
		return im.buf.Read(ctx, im.base*4, b)
	}
	for n := 0; n < im.n; n++ {
		off, size := im.batchRun(n)
		if err := im.buf.Read(ctx, off, b[uint64(n)*size:uint64(n+1)*size]); err != nil {
			return err
		}
	}
	return nil
}

// overlaps reports whether a and b share any value of storage.
func overlaps(a, b *Image) bool {
	if a.buf != b.buf {
		return false
	}
	hw := uint64(a.h * a.w)
	if a.h == b.h && a.w == b.w && a.cTotal == b.cTotal && a.base%hw == b.base%hw {
		// Same layout: compare batch and channel ranges.
		pa, pb := a.base/hw, b.base/hw
		ct := uint64(a.cTotal)
		na, ca := pa/ct, pa%ct
		nb, cb := pb/ct, pb%ct
		batches := na < nb+uint64(b.n) && nb < na+uint64(a.n)
		chans := ca < cb+uint64(b.c) && cb < ca+uint64(a.c)
		return batches && chans
	}
	endA := a.base + uint64(((a.n-1)*a.cTotal+a.c)*a.h*a.w)
	endB := b.base + uint64(((b.n-1)*b.cTotal+b.c)*b.h*b.w)
	return a.base < endB && b.base < endA
}
