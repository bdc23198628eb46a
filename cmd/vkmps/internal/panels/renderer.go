package panels

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// Renderer pools a picture on a device, forward and backward, and draws
// the canvas into a buffer of pixels. It is used by one goroutine at a
// time; Close releases its GPU objects (safe twice).
type Renderer struct {
	dev      *vk.Device
	x        *ops.Image
	xShape   Shape
	xData    []float32
	settings Settings
	valid    bool // y, dx, state and ranges hold the settings' results

	y, dx  *ops.Image
	state  *ops.PoolingGradientState
	ranges *vk.Buffer // view_range's slots: 4 min keys, then 4 max keys
	pix    *vk.Buffer

	rangePipe, panelPipe *vk.Pipeline
	bufs                 map[*ops.Image]*vk.Buffer // images this renderer allocated, with their storage
}

// NewRenderer uploads the picture (float32 NCHW of shape s) to dev.
func NewRenderer(ctx context.Context, dev *vk.Device, s Shape, data []float32) (r *Renderer, err error) {
	if s.N < 1 || s.C < 1 || s.H < 1 || s.W < 1 || len(data) != s.N*s.C*s.H*s.W {
		return nil, fmt.Errorf("panels: picture of shape %v with %d values", s, len(data))
	}
	r = &Renderer{dev: dev, xShape: s, xData: data, bufs: map[*ops.Image]*vk.Buffer{}}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if r.rangePipe, err = dev.Pipeline(spirv.ViewRange); err != nil {
		return nil, err
	}
	if r.panelPipe, err = dev.Pipeline(spirv.ViewPanels); err != nil {
		return nil, err
	}
	if r.ranges, err = dev.NewBuffer(32, "view ranges"); err != nil {
		return nil, err
	}
	if r.x, err = r.AllocateImage(dev, ops.ImageDescriptor{N: s.N, C: s.C, H: s.H, W: s.W, Label: "view input"}); err != nil {
		return nil, err
	}
	if err := r.x.Write(ctx, data); err != nil {
		return nil, err
	}
	return r, nil
}

// AllocateImage is the kernels' ops.ImageAllocator: images on buffers of
// the renderer's own, so that the panel shader can bind them.
func (r *Renderer) AllocateImage(dev *vk.Device, d ops.ImageDescriptor) (*ops.Image, error) {
	buf, err := dev.NewBuffer(uint64(d.N*d.C*d.H*d.W)*4, d.Label)
	if err != nil {
		return nil, err
	}
	im, err := ops.NewImageOn(buf, 0, d)
	if err != nil {
		buf.Close()
		return nil, err
	}
	r.bufs[im] = buf
	return im, nil
}

func (r *Renderer) closeImage(im *ops.Image) {
	if im == nil {
		return
	}
	im.Close()
	r.bufs[im].Close()
	delete(r.bufs, im)
}

// whole returns the bytes of im as a binding.
func (r *Renderer) whole(im *ops.Image) vk.BufferRange {
	return r.bufs[im].Range(0, uint64(im.Len())*4)
}

// Settings returns the settings of the last successful Update.
func (r *Renderer) Settings() Settings { return r.settings }

// Shapes returns the input's shape and the result's (the zero Shape
// before the first Update).
func (r *Renderer) Shapes() (x, y Shape) {
	if r.y != nil {
		d := r.y.Descriptor()
		y = Shape{N: d.N, C: d.C, H: d.H, W: d.W}
	}
	return r.xShape, y
}

// Update pools the picture with s: forward, then backward with dy = y (the
// gradient of L = sum(y^2)/2), then the value ranges the panels are
// normalised with; it waits for the GPU. On error (settings the picture
// cannot take, such as a window larger than it with "valid" padding) the
// previous results stay.
func (r *Renderer) Update(ctx context.Context, s Settings) (err error) {
	k, err := ops.NewPooling(r.dev, s.Kind(), s.Geometry())
	if err != nil {
		return err
	}
	policy, edge := s.Policy()
	props := k.Properties()
	props.Padding, props.EdgeMode, props.Allocator = policy, edge, r
	gk, err := ops.NewPoolingGradient(r.dev, s.Kind(), s.Geometry())
	if err != nil {
		return err
	}
	gk.Properties().Allocator = r

	cb, err := r.dev.NewCommandBuffer(vk.WithLabel("view update"))
	if err != nil {
		return err
	}
	defer cb.Close()
	var y, dx *ops.Image
	var st *ops.PoolingGradientState
	defer func() {
		if err != nil {
			r.closeImage(y)
			r.closeImage(dx)
			if st != nil {
				st.Close()
			}
		}
	}()
	if y, st, err = k.EncodeNewWithState(cb, r.x); err != nil {
		return err
	}
	if dx, err = gk.EncodeNew(cb, y, r.x, st); err != nil {
		return err
	}
	if err = r.encodeRanges(cb, r.x, y, dx); err != nil {
		return err
	}
	if err = cb.Commit(); err != nil {
		return err
	}
	if err = cb.Wait(ctx); err != nil {
		return err
	}
	r.release()
	r.y, r.dx, r.state, r.settings, r.valid = y, dx, st, s, true
	return nil
}

// encodeRanges records view_range over each image into its slot.
func (r *Renderer) encodeRanges(cb *vk.CommandBuffer, ims ...*ops.Image) error {
	if err := cb.Fill(r.ranges.Range(0, 16), 0xFFFFFFFF); err != nil {
		return err
	}
	if err := cb.Fill(r.ranges.Range(16, 16), 0); err != nil {
		return err
	}
	for slot, im := range ims {
		n := im.Len()
		push := binary.LittleEndian.AppendUint32(nil, uint32(n))
		push = binary.LittleEndian.AppendUint32(push, uint32(slot))
		groups := uint32(min((n+1023)/1024, 1024))
		if err := cb.Dispatch(r.rangePipe, []vk.BufferRange{r.whole(im), r.ranges.Whole()}, push, [3]uint32{groups, 1, 1}); err != nil {
			return err
		}
	}
	return nil
}

// Draw records the drawing of a w x h canvas with pixels in order into the
// renderer's pixel buffer and returns that buffer's range and the layout
// drawn. Update must have succeeded once. The buffer stays valid until the
// next Draw or Close; commit cb before presenting it.
func (r *Renderer) Draw(cb *vk.CommandBuffer, w, h int, order vk.PixelOrder) (vk.BufferRange, Layout, error) {
	if !r.valid {
		return vk.BufferRange{}, Layout{}, errors.New("panels: Draw before a successful Update")
	}
	if w < 1 || h < 1 {
		return vk.BufferRange{}, Layout{}, fmt.Errorf("panels: canvas of %dx%d pixels", w, h)
	}
	xs, ys := r.Shapes()
	l := NewLayout(w, h, xs, ys)
	size := uint64(w) * uint64(h) * 4
	if r.pix == nil || r.pix.Size() < size {
		// Closing is safe while earlier work still reads it.
		r.pix.Close()
		var err error
		if r.pix, err = r.dev.NewBuffer(size, "view canvas"); err != nil {
			return vk.BufferRange{}, Layout{}, err
		}
	}
	var push [28]uint32
	push[0], push[1] = uint32(w), uint32(h)
	if order == vk.PixelRGBA {
		push[2] = 1
	}
	for i, p := range l.Pictures {
		push[3+i] = uint32(p.Cols)
		rc := l.Rects[i]
		copy(push[8+4*i:], []uint32{uint32(rc.X), uint32(rc.Y), uint32(rc.W), uint32(rc.H)})
	}
	copy(push[20:], []uint32{uint32(xs.N), uint32(xs.C), uint32(xs.H), uint32(xs.W), uint32(ys.N), uint32(ys.C), uint32(ys.H), uint32(ys.W)})
	var pb []byte
	for _, v := range push {
		pb = binary.LittleEndian.AppendUint32(pb, v)
	}
	out := r.pix.Range(0, size)
	binds := []vk.BufferRange{r.whole(r.x), r.whole(r.y), r.whole(r.dx), r.ranges.Whole(), out}
	groups := [3]uint32{uint32((w + 15) / 16), uint32((h + 15) / 16), 1}
	if err := cb.Dispatch(r.panelPipe, binds, pb, groups); err != nil {
		return vk.BufferRange{}, Layout{}, err
	}
	return out, l, nil
}

// Results reads the forward result and the gradient back from the GPU.
func (r *Renderer) Results(ctx context.Context) (y, dx []float32, err error) {
	if !r.valid {
		return nil, nil, errors.New("panels: Results before a successful Update")
	}
	if y, err = r.y.Read(ctx); err != nil {
		return nil, nil, err
	}
	dx, err = r.dx.Read(ctx)
	return y, dx, err
}

// State returns the gradient state of the last Update: what the forward
// encode used (padding resolved), for the CPU reference.
func (r *Renderer) State() *ops.PoolingGradientState { return r.state }

// Input returns the picture's shape and values.
func (r *Renderer) Input() (Shape, []float32) { return r.xShape, r.xData }

func (r *Renderer) release() {
	r.closeImage(r.y)
	r.closeImage(r.dx)
	if r.state != nil {
		r.state.Close()
	}
	r.y, r.dx, r.state, r.valid = nil, nil, nil, false
}

// Close releases the renderer's GPU objects. It is safe to call twice.
func (r *Renderer) Close() error {
	if r == nil {
		return nil
	}
	r.release()
	r.closeImage(r.x)
	r.x = nil
	r.ranges.Close()
	r.pix.Close()
	r.ranges, r.pix = nil, nil
	return nil
}
