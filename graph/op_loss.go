package graph

import (
	"strings"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// LossOp is a loss node (MPSCNNLoss, JSON op "loss"); sources: the
// prediction, the labels and, optionally, per-item weights
// (MPSCNNLossLabels' weights: the prediction's shape for element-wise
// losses, N×1×H×W for the per-pixel ones).
type LossOp struct{ Desc ops.LossDescriptor }

func (LossOp) Name() string { return "loss" }
func (LossOp) arity() int   { return -1 }

func (o LossOp) checkSources(c *inferCtx, src []ops.ImageDescriptor) error {
	if len(src) < 2 || len(src) > 3 {
		return c.errorf(ErrGraph, "a loss takes a prediction, labels and optional weights: %d sources", len(src))
	}
	if !sameDesc(src[0], src[1]) {
		return c.errorf(ErrShape, "prediction %s and labels %s differ", descString(src[0]), descString(src[1]))
	}
	if len(src) == 3 {
		if w := o.Desc.WeightsDescriptor(src[0]); !sameDesc(w, src[2]) {
			return c.errorf(ErrShape, "weights %s, want %s for a %v loss of %s", descString(src[2]), descString(w), o.Desc.Type, descString(src[0]))
		}
	}
	return nil
}

func (o LossOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	if err := o.checkSources(c, src); err != nil {
		return nil, err
	}
	d, err := o.Desc.ResultDescriptor(c.like(src[0]))
	if err != nil {
		return nil, c.errorf(ErrShape, "%v", err)
	}
	return one(c.like(d), nil)
}

// The loss is where the gradient starts (dLoss/dLoss = 1 is implied): it
// gives the gradient of its prediction; labels and weights take none.
func (o LossOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	out := make([]*Image, len(n.sources))
	if wanted[0] {
		gi, err := b.add(0, LossGradientOp{Desc: o.Desc}, n.sources...)
		if err != nil {
			return nil, err
		}
		out[0] = gi
	}
	return out, nil
}

func (o LossOp) build(b *buildCtx) error {
	k, err := ops.NewLoss(b.dev, o.Desc)
	if err != nil {
		return err
	}
	b.closer(k)
	pred, labels, dst := b.src[0], b.src[1], b.dst[0]
	var weights *ops.Image
	if len(b.src) > 2 {
		weights = b.src[2]
	}
	b.encode(func(cb *vk.CommandBuffer) error { return k.EncodeWeighted(cb, pred, labels, weights, dst) })
	return nil
}

// LossGradientOp is the gradient of a loss with respect to its prediction;
// sources: prediction, labels (and weights).
type LossGradientOp struct{ Desc ops.LossDescriptor }

func (LossGradientOp) Name() string { return "loss-gradient" }
func (LossGradientOp) arity() int   { return -1 }

func (o LossGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	if err := (LossOp{o.Desc}).checkSources(c, src); err != nil {
		return nil, err
	}
	return one(c.like(src[0]), nil)
}

func (o LossGradientOp) build(b *buildCtx) error {
	k, err := ops.NewLoss(b.dev, o.Desc)
	if err != nil {
		return err
	}
	b.closer(k)
	pred, labels, dst := b.src[0], b.src[1], b.dst[0]
	var weights *ops.Image
	if len(b.src) > 2 {
		weights = b.src[2]
	}
	b.encode(func(cb *vk.CommandBuffer) error { return k.EncodeGradientWeighted(cb, pred, labels, weights, dst) })
	return nil
}

// Loss adds a loss node of pred against labels (MPSCNNLoss). With
// ReductionNone its result has one value per item; otherwise it is
// 1×1×1×1. Training derives the gradients of a graph ending in a loss.
func (g *Graph) Loss(name string, d ops.LossDescriptor, pred, labels *Image) (*Node, error) {
	return g.WeightedLoss(name, d, pred, labels, nil)
}

// WeightedLoss is Loss with per-item weights (nil: none).
func (g *Graph) WeightedLoss(name string, d ops.LossDescriptor, pred, labels, weights *Image) (*Node, error) {
	if err := d.Validate(); err != nil {
		return nil, errorfNode(ErrGraph, name, "%v", err)
	}
	src := []*Image{pred, labels}
	if weights != nil {
		src = append(src, weights)
	}
	return g.add(name, LossOp{Desc: d}, src, nil)
}

// constSource: a loss's labels and weights are constants.
func (LossOp) constSource(i int) bool { return i >= 1 }

type lossSpec struct {
	specBase
	Loss            string   `json:"loss"`
	Reduction       string   `json:"reduction,omitempty"`
	Weight          float32  `json:"weight,omitempty"`
	LabelSmoothing  float32  `json:"label_smoothing,omitempty"`
	NumberOfClasses int      `json:"number_of_classes,omitempty"`
	Delta           *float32 `json:"delta,omitempty"`
	Epsilon         *float32 `json:"epsilon,omitempty"`
}

func init() {
	registerOp("loss", opSpec{sources: -1, doc: "loss, reduction, weight, label_smoothing, delta, epsilon; sources prediction, labels[, weights]", parse: parseLoss})
}

func parseLoss(p *parseCtx) error {
	var s lossSpec
	if err := p.decode(&s); err != nil {
		return err
	}
	if len(p.src) < 2 || len(p.src) > 3 {
		return p.bad("loss takes 2 sources (prediction, labels) or 3 (and weights), got %d", len(p.src))
	}
	t, err := ops.ParseLossType(s.Loss)
	if err != nil {
		return p.bad("loss %q: %v", s.Loss, err)
	}
	d := ops.LossDescriptor{Type: t, Weight: s.Weight, Reduction: ops.ReductionMean, LabelSmoothing: s.LabelSmoothing, NumberOfClasses: s.NumberOfClasses}
	if strings.TrimSpace(s.Reduction) != "" {
		if d.Reduction, err = ops.ParseReduction(s.Reduction); err != nil {
			return p.bad("reduction %q: %v", s.Reduction, err)
		}
	}
	if s.Delta != nil {
		if *s.Delta <= 0 {
			return p.bad("delta %g: must be > 0", *s.Delta)
		}
		d.Delta = *s.Delta
	}
	if s.Epsilon != nil {
		if *s.Epsilon <= 0 {
			return p.bad("epsilon %g: must be > 0", *s.Epsilon)
		}
		d.Epsilon = *s.Epsilon
	}
	var w *Image
	if len(p.src) == 3 {
		w = p.src[2]
	}
	_, err = p.g.WeightedLoss(p.name, d, p.src[0], p.src[1], w)
	return err
}
