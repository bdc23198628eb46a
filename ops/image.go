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

// Format is the type of an image's values (MPSImageFeatureChannelFormat).
type Format uint8

const (
	// Float32: IEEE single precision, 4 bytes a value. The default.
	Float32 Format = iota
	// Float16: IEEE half precision (binary16), 2 bytes a value. Storage
	// only: kernels convert each value to float32 when they load it,
	// compute in float32, and round each result to half once, when they
	// store it. Write and Read convert (Float16Bits, Float16FromBits);
	// WriteFloat16 and ReadFloat16 move the bits. Needs a device with
	// Limits.Float16Storage.
	Float16
)

// Size returns the bytes of one value.
func (f Format) Size() int {
	if f == Float16 {
		return 2
	}
	return 4
}

func (f Format) String() string {
	switch f {
	case Float32:
		return "float32"
	case Float16:
		return "float16"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ImageDescriptor describes an image to create (MPSImageDescriptor): N batch
// images of C feature channels, H rows by W columns, NCHW, of Format
// (float32 unless set).
type ImageDescriptor struct {
	N, C, H, W int
	// Format is the type of the values; the zero value is Float32.
	Format Format
	// Label names the image in errors; optional.
	Label string
}

// Descriptor returns the padding package's descriptor of the same shape.
func (d ImageDescriptor) Descriptor() padding.Descriptor {
	return padding.Descriptor{N: d.N, C: d.C, H: d.H, W: d.W}
}

func (d ImageDescriptor) validate() error {
	if d.Format != Float32 && d.Format != Float16 {
		return fmt.Errorf("%w: image %q: unknown format %v", ErrInvalidImage, d.Label, d.Format)
	}
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

// Image is N batch images × C feature channels × H × W values (float32, or
// float16: see Format), stored NCHW and densely packed on a device
// (MPSImage / MPSImageBatch; there is no multiple-of-4 channel rule).
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
	cTotal int // channels per batch image in the storage
	format Format
	root   *Image // the image owning the storage; nil when this one does
	label  string
	owns   bool
	closed atomic.Bool
}

// checkFormat reports ErrDeviceLimit for a float16 image on a device
// without 16-bit storage.
func checkFormat(dev *vk.Device, d ImageDescriptor) error {
	if d.Format == Float16 && !dev.Limits().Float16Storage {
		return fmt.Errorf("%w: image %q: float16 images need 16-bit storage buffer access (storageBuffer16BitAccess, VK_KHR_16bit_storage), which %s lacks",
			ErrDeviceLimit, d.Label, dev.Info().Name)
	}
	return nil
}

// NewImage creates an image on dev. Its contents start undefined. A
// float16 image on a device without Limits.Float16Storage is an
// ErrDeviceLimit.
func NewImage(dev *vk.Device, d ImageDescriptor) (*Image, error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: nil device", ErrInvalidImage)
	}
	if err := d.validate(); err != nil {
		return nil, err
	}
	if err := checkFormat(dev, d); err != nil {
		return nil, err
	}
	label := d.Label
	if label == "" {
		label = fmt.Sprintf("image %dx%dx%dx%d", d.N, d.C, d.H, d.W)
		if d.Format != Float32 {
			label += " " + d.Format.String()
		}
	}
	// Whole words, so that float16 images of odd length fill and bind
	// like any other buffer.
	size := (uint64(d.N*d.C*d.H*d.W)*uint64(d.Format.Size()) + 3) &^ 3
	buf, err := dev.NewBuffer(size, label)
	if err != nil {
		return nil, err
	}
	return &Image{dev: dev, buf: buf, n: d.N, c: d.C, h: d.H, w: d.W, cTotal: d.C, format: d.Format, label: label, owns: true}, nil
}

// NewImageOn makes an image that lives in buf starting at byte offset off
// (a multiple of the value size: 4 for float32, 2 for float16). The buffer
// stays the caller's: closing the image does not close it. Graph executors
// use it to place temporaries in an arena.
func NewImageOn(buf *vk.Buffer, off uint64, d ImageDescriptor) (*Image, error) {
	if buf == nil {
		return nil, fmt.Errorf("%w: nil buffer", ErrInvalidImage)
	}
	if err := d.validate(); err != nil {
		return nil, err
	}
	es := uint64(d.Format.Size())
	size := uint64(d.N*d.C*d.H*d.W) * es
	if off%es != 0 || off > buf.Size() || size > buf.Size()-off {
		return nil, fmt.Errorf("%w: image %q of %d bytes at offset %d does not fit buffer %q of %d bytes", ErrInvalidImage, d.Label, size, off, buf.Label(), buf.Size())
	}
	if err := checkFormat(buf.Device(), d); err != nil {
		return nil, err
	}
	label := d.Label
	if label == "" {
		label = buf.Label()
	}
	return &Image{dev: buf.Device(), buf: buf, base: off / es, n: d.N, c: d.C, h: d.H, w: d.W, cTotal: d.C, format: d.Format, label: label}, nil
}

// Descriptor returns the image's shape and format (of the view, for a
// channel view).
func (im *Image) Descriptor() ImageDescriptor {
	return ImageDescriptor{N: im.n, C: im.c, H: im.h, W: im.w, Format: im.format, Label: im.label}
}

// Format returns the type of the image's values.
func (im *Image) Format() Format { return im.format }

// esize returns the bytes of one value.
func (im *Image) esize() uint64 { return uint64(im.format.Size()) }

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

// String describes the image for messages (its format when not float32).
func (im *Image) String() string {
	if im.format != Float32 {
		return fmt.Sprintf("%q (%dx%dx%dx%d %v)", im.label, im.n, im.c, im.h, im.w, im.format)
	}
	return fmt.Sprintf("%q (%dx%dx%dx%d)", im.label, im.n, im.c, im.h, im.w)
}

// ChannelView returns a view of channels [offset, offset+count) of every
// batch image. It shares storage with im and is valid while im is open.
func (im *Image) ChannelView(offset, count int) (*Image, error) {
	if err := im.usable(); err != nil {
		return nil, err
	}
	if offset < 0 || count < 1 || count > im.c || offset > im.c-count { // no overflow
		return nil, fmt.Errorf("%w: channel view [%d, %d) of %s with %d channels", ErrChannelRange, offset, offset+count, im, im.c)
	}
	root := im.root
	if root == nil {
		root = im
	}
	v := &Image{dev: im.dev, buf: im.buf, base: im.base + uint64(offset*im.h*im.w), n: im.n, c: count,
		h: im.h, w: im.w, cTotal: im.cTotal, format: im.format, root: root,
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
	if im.buf == nil {
		return fmt.Errorf("%w: image %s was not made by NewImage or NewImageOn", ErrInvalidImage, im)
	}
	if im.closed.Load() || (im.root != nil && im.root.closed.Load()) {
		return fmt.Errorf("%w: image %s", ErrClosed, im)
	}
	return nil
}

// contiguous reports whether the view's values are one run of storage.
func (im *Image) contiguous() bool { return im.cTotal == im.c || im.n == 1 }

// batchRun returns the byte offset of batch image n's first value and
// the byte length of its run.
func (im *Image) batchRun(n int) (off, size uint64) {
	plane := uint64(im.h * im.w)
	return (im.base + uint64(n*im.cTotal)*plane) * im.esize(), uint64(im.c) * plane * im.esize()
}

// Write uploads data, N*C*H*W values in NCHW order, into the image (only
// the view's channels, for a view); a float16 image gets them rounded to
// half (Float16Bits). It waits for submitted work that uses the image's
// storage first.
func (im *Image) Write(ctx context.Context, data []float32) error {
	if err := im.usable(); err != nil {
		return err
	}
	if len(data) != im.Len() {
		return fmt.Errorf("%w: writing %d values into %s, which holds %d", ErrShape, len(data), im, im.Len())
	}
	if im.format == Float16 {
		h := make([]uint16, len(data))
		for i, v := range data {
			h[i] = Float16Bits(v)
		}
		return im.writeBytes(ctx, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(h))), 2*len(h)))
	}
	return im.writeBytes(ctx, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(data))), 4*len(data)))
}

// WriteFloat16 uploads the bits of N*C*H*W half values in NCHW order into a
// float16 image, as Write does values.
func (im *Image) WriteFloat16(ctx context.Context, data []uint16) error {
	if err := im.usable(); err != nil {
		return err
	}
	if im.format != Float16 {
		return fmt.Errorf("%w: WriteFloat16 into %s, a %v image", ErrFormat, im, im.format)
	}
	if len(data) != im.Len() {
		return fmt.Errorf("%w: writing %d values into %s, which holds %d", ErrShape, len(data), im, im.Len())
	}
	return im.writeBytes(ctx, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(data))), 2*len(data)))
}

// writeBytes uploads b, the image's values in its format, NCHW.
func (im *Image) writeBytes(ctx context.Context, b []byte) error {
	if im.contiguous() {
		return im.buf.Write(ctx, im.base*im.esize(), b)
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

// ReadInto is Read into dst, which must hold N*C*H*W values. A float16
// image's values are converted exactly (Float16FromBits).
func (im *Image) ReadInto(ctx context.Context, dst []float32) error {
	if err := im.usable(); err != nil {
		return err
	}
	if len(dst) != im.Len() {
		return fmt.Errorf("%w: reading %s (%d values) into %d values", ErrShape, im, im.Len(), len(dst))
	}
	if im.format == Float16 {
		h := make([]uint16, len(dst))
		if err := im.readBytes(ctx, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(h))), 2*len(h))); err != nil {
			return err
		}
		for i, v := range h {
			dst[i] = Float16FromBits(v)
		}
		return nil
	}
	return im.readBytes(ctx, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 4*len(dst)))
}

// ReadFloat16 downloads a float16 image's values as half bits, NCHW, as
// Read does values.
func (im *Image) ReadFloat16(ctx context.Context) ([]uint16, error) {
	out := make([]uint16, im.Len())
	if err := im.ReadFloat16Into(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadFloat16Into is ReadFloat16 into dst, which must hold N*C*H*W values.
func (im *Image) ReadFloat16Into(ctx context.Context, dst []uint16) error {
	if err := im.usable(); err != nil {
		return err
	}
	if im.format != Float16 {
		return fmt.Errorf("%w: ReadFloat16 from %s, a %v image", ErrFormat, im, im.format)
	}
	if len(dst) != im.Len() {
		return fmt.Errorf("%w: reading %s (%d values) into %d values", ErrShape, im, im.Len(), len(dst))
	}
	return im.readBytes(ctx, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 2*len(dst)))
}

// readBytes downloads the image's values in its format into b, NCHW.
func (im *Image) readBytes(ctx context.Context, b []byte) error {
	if im.contiguous() {
		return im.buf.Read(ctx, im.base*im.esize(), b)
	}
	for n := 0; n < im.n; n++ {
		off, size := im.batchRun(n)
		if err := im.buf.Read(ctx, off, b[uint64(n)*size:uint64(n+1)*size]); err != nil {
			return err
		}
	}
	return nil
}

// overlaps reports whether a and b share any byte of storage.
func overlaps(a, b *Image) bool {
	if a.buf != b.buf {
		return false
	}
	hw := uint64(a.h * a.w)
	if a.format == b.format && a.h == b.h && a.w == b.w && a.cTotal == b.cTotal && a.base%hw == b.base%hw {
		// Same layout: compare batch and channel ranges.
		pa, pb := a.base/hw, b.base/hw
		ct := uint64(a.cTotal)
		na, ca := pa/ct, pa%ct
		nb, cb := pb/ct, pb%ct
		batches := na < nb+uint64(b.n) && nb < na+uint64(a.n)
		chans := ca < cb+uint64(b.c) && cb < ca+uint64(a.c)
		return batches && chans
	}
	// Byte extents (images of two formats share no element index).
	startA, startB := a.base*a.esize(), b.base*b.esize()
	endA := startA + uint64(((a.n-1)*a.cTotal+a.c)*a.h*a.w)*a.esize()
	endB := startB + uint64(((b.n-1)*b.cTotal+b.c)*b.h*b.w)*b.esize()
	return startA < endB && startB < endA
}
