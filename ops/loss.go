package ops

import (
	"fmt"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// LossType is the loss function (MPSCNNLossType).
type LossType int

const (
	// LossMeanSquaredError: (pred - label)^2 per value.
	LossMeanSquaredError LossType = iota
	// LossSoftmaxCrossEntropy: per pixel, over the channels,
	// sum_c label_c * (logsumexp(pred) - pred_c); labels are
	// probabilities (one-hot or soft).
	LossSoftmaxCrossEntropy
)

func (t LossType) String() string {
	switch t {
	case LossMeanSquaredError:
		return "mse"
	case LossSoftmaxCrossEntropy:
		return "softmax-cross-entropy"
	}
	return fmt.Sprintf("LossType(%d)", int(t))
}

// Reduction says how per-item losses combine (MPSCNNReductionType).
type Reduction int

const (
	// ReductionNone keeps one loss per item: per value for MSE (the
	// prediction's shape), per pixel for cross-entropy (N×1×H×W).
	ReductionNone Reduction = iota
	// ReductionSum adds them into a 1×1×1×1 image.
	ReductionSum
	// ReductionMean divides the sum by the number of items (PyTorch's
	// convention: values for MSE, pixels N*H*W for cross-entropy).
	ReductionMean
)

func (r Reduction) String() string {
	switch r {
	case ReductionNone:
		return "none"
	case ReductionSum:
		return "sum"
	case ReductionMean:
		return "mean"
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

// LossDescriptor configures a Loss (MPSCNNLossDescriptor).
type LossDescriptor struct {
	Type      LossType
	Reduction Reduction
	// Weight scales the loss and its gradient; 0 means 1.
	Weight float32
}

// Loss computes a loss between a prediction and labels of the same shape,
// and its gradient with respect to the prediction (MPSCNNLoss). Sums are
// reduced in a fixed order, so a run repeats bit for bit on one device.
type Loss struct {
	elementwise
	desc     LossDescriptor
	pipes    [3]*vk.Pipeline // by mode: per item, partial sums, gradient
	reduce   *vk.Pipeline
	partials *vk.Buffer
}

// NewLoss makes a loss kernel.
func NewLoss(dev *vk.Device, d LossDescriptor) (*Loss, error) {
	if d.Type != LossMeanSquaredError && d.Type != LossSoftmaxCrossEntropy {
		return nil, fmt.Errorf("%w: Loss: unknown loss type %d", ErrGeometry, int(d.Type))
	}
	if d.Reduction < ReductionNone || d.Reduction > ReductionMean {
		return nil, fmt.Errorf("%w: Loss: unknown reduction %d", ErrGeometry, int(d.Reduction))
	}
	if err := finite("Loss", "weight", d.Weight); err != nil {
		return nil, err
	}
	e, err := newElementwise(dev, "Loss("+d.Type.String()+", "+d.Reduction.String()+")")
	if err != nil {
		return nil, err
	}
	return &Loss{elementwise: e, desc: d}, nil
}

// Descriptor returns the loss's configuration.
func (l *Loss) Descriptor() LossDescriptor { return l.desc }

// ResultDescriptor returns the shape of the loss for a prediction of shape
// pred: 1×1×1×1 when reduced, else pred's shape (MSE) or N×1×H×W
// (cross-entropy).
func (l *Loss) ResultDescriptor(pred ImageDescriptor) ImageDescriptor {
	switch {
	case l.desc.Reduction != ReductionNone:
		return ImageDescriptor{N: 1, C: 1, H: 1, W: 1}
	case l.desc.Type == LossSoftmaxCrossEntropy:
		return ImageDescriptor{N: pred.N, C: 1, H: pred.H, W: pred.W}
	}
	return ImageDescriptor{N: pred.N, C: pred.C, H: pred.H, W: pred.W}
}

// Close releases the kernel's scratch memory; safe twice.
func (l *Loss) Close() error {
	if l.partials != nil {
		err := l.partials.Close()
		l.partials = nil
		return err
	}
	return nil
}

type lossPush struct {
	Items, Channels, Plane       uint32
	PredBase, LabelBase, OutBase uint32
	Scale                        float32
}

type reducePush struct {
	Count, InBase, OutBase uint32
	Scale                  float32
}

func (l *Loss) pipeline(mode int) (*vk.Pipeline, error) {
	if l.pipes[mode] == nil {
		p, err := pipeline(l.dev, spirv.Loss, map[string]uint32{"local_size_x": uint32(l.local), "TYPE": uint32(l.desc.Type), "MODE": uint32(mode)})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.label, err)
		}
		l.pipes[mode] = p
	}
	return l.pipes[mode], nil
}

func (l *Loss) items(im *Image, batches int) int {
	if l.desc.Type == LossSoftmaxCrossEntropy {
		return batches * im.h * im.w
	}
	return batches * im.c * im.h * im.w
}

// checkInputs validates prediction and labels (contiguous, one shape).
func (l *Loss) checkInputs(pred, labels *Image, out *Image, role string) error {
	if err := checkImages(l.dev, l.label, []string{"prediction", "labels", role}, pred, labels, out); err != nil {
		return err
	}
	if err := onlyFloat32(l.label, []string{"prediction", "labels", role}, pred, labels, out); err != nil {
		return err
	}
	if err := sameShape(l.label, pred, labels); err != nil {
		return err
	}
	for _, im := range []*Image{pred, labels, out} {
		if !im.contiguous() {
			return fmt.Errorf("%w: %s: %s is a channel view; the loss needs whole images", ErrShape, l.label, im)
		}
	}
	if overlaps(pred, out) || overlaps(labels, out) {
		return fmt.Errorf("%w: %s: %s shares storage with an input", ErrAlias, l.label, out)
	}
	return nil
}

// batchGroups calls fn for groups of whole batch images whose values fit
// the storage-buffer range in every image.
func (l *Loss) batchGroups(pred *Image, perBatch []uint64, fn func(n0, nb int) error) error {
	lim := l.dev.Limits()
	room := lim.MaxStorageBufferRange - max(lim.MinStorageBufferOffsetAlignment, 4)
	largestPer := uint64(0)
	for _, b := range perBatch {
		largestPer = max(largestPer, b)
	}
	if largestPer > room {
		return fmt.Errorf("%w: %s: one batch image of %s (%d bytes) exceeds the device's max storage buffer range (%d bytes)",
			ErrDeviceLimit, l.label, pred, largestPer, lim.MaxStorageBufferRange)
	}
	nb := int(room / largestPer)
	for n := 0; n < pred.n; n += nb {
		if err := fn(n, min(nb, pred.n-n)); err != nil {
			return err
		}
	}
	return nil
}

// Encode records the loss of pred against labels into loss, which has the
// shape ResultDescriptor(pred) gives.
func (l *Loss) Encode(cb *vk.CommandBuffer, pred, labels, loss *Image) error {
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, l.label)
	}
	if err := l.checkInputs(pred, labels, loss, "loss"); err != nil {
		return err
	}
	want := l.ResultDescriptor(pred.Descriptor())
	if loss.n != want.N || loss.c != want.C || loss.h != want.H || loss.w != want.W {
		return fmt.Errorf("%w: %s: loss image %s, want %dx%dx%dx%d", ErrShape, l.label, loss, want.N, want.C, want.H, want.W)
	}
	weight := orOne(l.desc.Weight)
	mode := 1
	if l.desc.Reduction == ReductionNone {
		mode = 0
	}
	pl, err := l.pipeline(mode)
	if err != nil {
		return err
	}
	lim := l.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	plane := pred.h * pred.w
	perBatch := uint64(pred.c*plane) * 4
	outPer := uint64(l.items(pred, 1)) * 4
	totalGroups := 0
	if mode == 1 {
		totalGroups = (l.items(pred, pred.n) + l.local - 1) / l.local
		if err := l.ensurePartials(uint64(totalGroups+l.local) * 4); err != nil {
			return err
		}
	}
	pc := lossPush{Channels: uint32(pred.c), Plane: uint32(plane), Scale: weight}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [3]vk.BufferRange
	groupBase := 0
	err = l.batchGroups(pred, []uint64{perBatch, outPer}, func(n0, nb int) error {
		count := uint32(nb * pred.c * plane)
		binds[0], pc.PredBase = bindRun(pred.buf, align, (pred.base+uint64(n0*pred.c*plane))*4, int(count))
		binds[1], pc.LabelBase = bindRun(labels.buf, align, (labels.base+uint64(n0*pred.c*plane))*4, int(count))
		items := l.items(pred, nb)
		pc.Items = uint32(items)
		g := (items + l.local - 1) / l.local
		if mode == 0 {
			binds[2], pc.OutBase = bindRun(loss.buf, align, (loss.base+uint64(n0)*outPer/4)*4, items)
		} else {
			binds[2], pc.OutBase = bindRun(l.partials, align, uint64(groupBase)*4, g)
		}
		groupBase += g
		return l.dispatch(cb, pl, binds[:], push, g)
	})
	if err != nil || mode == 0 {
		return err
	}
	scale := weight
	if l.desc.Reduction == ReductionMean {
		scale /= float32(l.items(pred, pred.n))
	}
	return l.sum(cb, l.partials.Range(0, uint64(totalGroups)*4), totalGroups, loss, scale)
}

// EncodeGradient records grad = Weight × dLoss/dpred (for ReductionNone,
// the gradient of the sum of the items); grad has pred's shape.
func (l *Loss) EncodeGradient(cb *vk.CommandBuffer, pred, labels, grad *Image) error {
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, l.label)
	}
	if err := l.checkInputs(pred, labels, grad, "gradient"); err != nil {
		return err
	}
	if err := sameShape(l.label, pred, grad); err != nil {
		return err
	}
	pl, err := l.pipeline(2)
	if err != nil {
		return err
	}
	scale := orOne(l.desc.Weight)
	if l.desc.Reduction == ReductionMean {
		scale /= float32(l.items(pred, pred.n))
	}
	lim := l.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	plane := pred.h * pred.w
	per := uint64(pred.c*plane) * 4
	pc := lossPush{Channels: uint32(pred.c), Plane: uint32(plane), Scale: scale}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [3]vk.BufferRange
	return l.batchGroups(pred, []uint64{per}, func(n0, nb int) error {
		count := nb * pred.c * plane
		off := uint64(n0*pred.c*plane) * 4
		binds[0], pc.PredBase = bindRun(pred.buf, align, pred.base*4+off, count)
		binds[1], pc.LabelBase = bindRun(labels.buf, align, labels.base*4+off, count)
		binds[2], pc.OutBase = bindRun(grad.buf, align, grad.base*4+off, count)
		items := l.items(pred, nb)
		pc.Items = uint32(items)
		return l.dispatch(cb, pl, binds[:], push, (items+l.local-1)/l.local)
	})
}

func (l *Loss) dispatch(cb *vk.CommandBuffer, pl *vk.Pipeline, binds []vk.BufferRange, push []byte, groups int) error {
	lim := l.dev.Limits()
	if groups > int(lim.MaxComputeWorkGroupCount[0]) {
		return fmt.Errorf("%w: %s: %d workgroups exceed the device's %d", ErrDeviceLimit, l.label, groups, lim.MaxComputeWorkGroupCount[0])
	}
	if err := cb.Dispatch(pl, binds, push, [3]uint32{uint32(groups), 1, 1}); err != nil {
		return fmt.Errorf("%s: %w", l.label, err)
	}
	return nil
}

func (l *Loss) ensurePartials(size uint64) error {
	if l.partials != nil && l.partials.Size() >= size {
		return nil
	}
	l.Close()
	b, err := l.dev.NewBuffer(size, l.label+" partial sums")
	if err != nil {
		return err
	}
	l.partials = b
	return nil
}

// sum records out = scale * sum of the count values of in, by one
// workgroup in a fixed order.
func (l *Loss) sum(cb *vk.CommandBuffer, in vk.BufferRange, count int, out *Image, scale float32) error {
	if l.reduce == nil {
		p, err := pipeline(l.dev, spirv.ReduceSum, map[string]uint32{"local_size_x": uint32(l.local)})
		if err != nil {
			return fmt.Errorf("%s: %w", l.label, err)
		}
		l.reduce = p
	}
	lim := l.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	pc := reducePush{Count: uint32(count), Scale: scale}
	binds := [2]vk.BufferRange{in, {}}
	binds[1], pc.OutBase = bindRun(out.buf, align, out.base*4, 1)
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	if err := cb.Dispatch(l.reduce, binds[:], push, [3]uint32{1, 1, 1}); err != nil {
		return fmt.Errorf("%s: %w", l.label, err)
	}
	return nil
}
