package ops

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// LossType is the loss function (MPSCNNLossType). MPS's formulas (its
// MPSCNNLoss.h), with y the prediction, t the label, d = y - t, and C the
// number of feature channels:
//
//	LossMeanSquaredError           (y - t)^2                                  grad 2d
//	LossSoftmaxCrossEntropy        sum_c t_c (logsumexp(y) - y_c)             grad softmax(y)_c * sum(t) - t_c
//	LossMeanAbsoluteError          |d|                                        grad sign(d), 0 at d = 0
//	LossSigmoidCrossEntropy        max(y,0) - y t + log(1 + exp(-|y|))        grad sigmoid(y) - t
//	LossCategoricalCrossEntropy    -sum_c t_c log(y_c)                        grad -t_c / y_c
//	LossHinge                      max(1 - (2t - 1) y, 0)                     grad -(2t - 1) where positive, else 0
//	LossHuber                      |d| <= delta ? d^2/2 : delta(|d| - delta/2)  grad d, or delta*sign(d)
//	LossCosineDistance             1 - sum_c y_c t_c                          grad -t_c
//	LossLog                        -t log(y + eps) - (1 - t) log(1 - y + eps) grad (y + eps - t - 2 eps t) / ((y + eps)(1 - y + eps))
//	LossKullbackLeiblerDivergence  t (log t - y), 0 where t = 0               grad -t
//
// Softmax cross-entropy, categorical cross-entropy and cosine distance
// reduce over the channels of a pixel: their items are the N*H*W pixels.
// The others are element-wise: their items are the N*C*H*W values. Label
// smoothing (LossDescriptor.LabelSmoothing) replaces t first, for the two
// losses MPS applies it to.
//
// Where MPS's header is inconsistent or PyTorch differs, vkmps follows the
// forward formula above and its exact derivative (central finite
// differences check every one in package ref):
//   - Hinge: labels are 0 or 1, mapped to -1 and +1 (TensorFlow's
//     hinge_loss, which MPS's gradient formula implies; its forward formula
//     omits the mapping). Labels in {-1, 1} need (t + 1)/2 first.
//     PyTorch has no such loss (HingeEmbeddingLoss differs).
//   - Huber: MPS writes 0.5*y^2 for 0.5*d^2 and gives the gradient as
//     delta without its sign; vkmps is PyTorch's HuberLoss(delta), both ways.
//   - MAE: MPS's gradient (y - t)/|y - t| is NaN at y = t; vkmps gives 0
//     there, as PyTorch's L1Loss.
//   - Softmax cross-entropy: MPS's gradient softmax - t assumes the labels
//     sum to 1; vkmps's is exact for any labels (equal when they do). With
//     probability labels it is PyTorch's CrossEntropyLoss, smoothing included.
//   - Categorical cross-entropy: y holds probabilities (no softmax, no
//     clipping, unlike Keras); a label of 0 contributes 0 to the loss and
//     the gradient even where y is 0 (PyTorch's xlogy convention).
//   - Cosine distance: 1 - sum(y t) with no normalisation (MPS, and
//     TensorFlow's cosine_distance): it equals PyTorch's 1 -
//     cosine_similarity only for unit vectors, and its gradient is -t, not
//     the projected gradient of cosine_similarity. MPS accepts the sum
//     reduction only; vkmps takes all four.
//   - KL divergence: y holds log-probabilities and t probabilities (MPS's
//     forward and PyTorch's KLDivLoss); MPS's gradient -t/y belongs to
//     probability predictions, vkmps's -t is the derivative of its forward.
//     t log t is 0 at t = 0 and NaN below (PyTorch's xlogy).
//
// The numeric values are vkmps's own (LossMeanSquaredError = 0 and
// LossSoftmaxCrossEntropy = 1 came first), not MPS's; String gives the graph
// JSON names.
type LossType int

const (
	LossMeanSquaredError LossType = iota
	LossSoftmaxCrossEntropy
	LossMeanAbsoluteError
	LossSigmoidCrossEntropy
	LossCategoricalCrossEntropy
	LossHinge
	LossHuber
	LossCosineDistance
	LossLog
	LossKullbackLeiblerDivergence
	numLossTypes
)

// lossNames are the graph JSON names (TRAINING.md).
var lossNames = [numLossTypes]string{"mse", "softmax-cross-entropy", "mae", "sigmoid-cross-entropy",
	"categorical-cross-entropy", "hinge", "huber", "cosine-distance", "log", "kl-divergence"}

// String returns the loss's graph JSON name ("mse", "huber", ...).
func (t LossType) String() string {
	if t.Valid() {
		return lossNames[t]
	}
	return fmt.Sprintf("LossType(%d)", int(t))
}

// Valid reports whether t is a known loss type.
func (t LossType) Valid() bool { return t >= 0 && t < numLossTypes }

// PerPixel reports whether the loss reduces over the feature channels of
// each pixel (softmax and categorical cross-entropy, cosine distance), so
// that its items are pixels rather than values.
func (t LossType) PerPixel() bool {
	return t == LossSoftmaxCrossEntropy || t == LossCategoricalCrossEntropy || t == LossCosineDistance
}

// ParseLossType returns the loss type of a graph JSON name, case
// insensitive, "_" taken for "-"; "cross-entropy" and "ce" are also taken
// for "softmax-cross-entropy".
func ParseLossType(name string) (LossType, error) {
	n := strings.ReplaceAll(strings.ToLower(name), "_", "-")
	if n == "cross-entropy" || n == "ce" {
		return LossSoftmaxCrossEntropy, nil
	}
	for t, s := range lossNames {
		if s == n {
			return LossType(t), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown loss type %q (want one of %s)", ErrGeometry, name, strings.Join(lossNames[:], ", "))
}

// Reduction says how per-item losses combine (MPSCNNReductionType, same
// values). The reduced loss is summed over the whole batch into a 1×1×1×1
// image (MPS's reduceAcrossBatch; vkmps has no per-batch-image reduction).
type Reduction int

const (
	// ReductionNone keeps one weighted loss per item: the prediction's
	// shape for the element-wise types, N×1×H×W for the per-pixel ones.
	ReductionNone Reduction = iota
	// ReductionSum adds them.
	ReductionSum
	// ReductionMean divides the sum by the number of items: values
	// (N*C*H*W) for the element-wise types, pixels (N*H*W) for softmax
	// and categorical cross-entropy and cosine distance (PyTorch's
	// convention; TRAINING.md). MPS divides softmax cross-entropy by
	// pixels too.
	ReductionMean
	// ReductionSumByNonZeroWeights divides the sum by the number of items
	// whose per-item weight is not 0 (TensorFlow's SUM_BY_NONZERO_WEIGHTS),
	// and gives 0 when every weight is 0. Without per-item weights it is
	// ReductionMean.
	ReductionSumByNonZeroWeights
	numLossReductions
)

var lossReductionNames = [numLossReductions]string{"none", "sum", "mean", "sum-by-nonzero-weights"}

// String returns the reduction's graph JSON name.
func (r Reduction) String() string {
	if r.Valid() {
		return lossReductionNames[r]
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

// Valid reports whether r is a known reduction.
func (r Reduction) Valid() bool { return r >= 0 && r < numLossReductions }

// ParseReduction returns the reduction of a graph JSON name, case
// insensitive, "_" taken for "-". The empty name is an error: the graph's
// default ("mean") is the graph's to apply.
func ParseReduction(name string) (Reduction, error) {
	n := strings.ReplaceAll(strings.ToLower(name), "_", "-")
	for r, s := range lossReductionNames {
		if s == n {
			return Reduction(r), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown reduction %q (want one of %s)", ErrGeometry, name, strings.Join(lossReductionNames[:], ", "))
}

// Loss parameter defaults (MPSCNNLossDescriptor's).
const (
	// DefaultLossDelta is Huber's delta when LossDescriptor.Delta is 0.
	DefaultLossDelta = 1
	// DefaultLossEpsilon is the log loss's epsilon when
	// LossDescriptor.Epsilon is 0.
	DefaultLossEpsilon = 1e-7
)

// LossDescriptor configures a Loss (MPSCNNLossDescriptor). Zero values
// mean the defaults, so the zero descriptor is an unweighted mean squared
// error without reduction.
type LossDescriptor struct {
	Type      LossType
	Reduction Reduction
	// Weight scales every item's loss and the gradient (MPS's weight);
	// 0 means 1.
	Weight float32
	// LabelSmoothing ls in [0, 1], for softmax cross-entropy
	// (t' = t(1 - ls) + ls/K) and sigmoid cross-entropy
	// (t' = t(1 - ls) + ls/2); the other types ignore it, as MPS does.
	LabelSmoothing float32
	// NumberOfClasses is softmax smoothing's K; 0 means the prediction's
	// channel count (MPS's default is 1, which makes ls/K rarely what is
	// meant).
	NumberOfClasses int
	// Delta is Huber's threshold, > 0; 0 means DefaultLossDelta (1).
	Delta float32
	// Epsilon is added inside the log loss's logarithms, >= 0; 0 means
	// DefaultLossEpsilon (1e-7, MPS's default). A tiny positive value such
	// as 1e-30 acts as no epsilon.
	Epsilon float32
}

// Validate checks the descriptor: a known type and reduction, finite
// parameters, label smoothing in [0, 1] and no negative delta, epsilon or
// number of classes. Errors wrap ErrGeometry and name the kernel "Loss".
func (d LossDescriptor) Validate() error {
	const label = "Loss"
	if !d.Type.Valid() {
		return fmt.Errorf("%w: %s: unknown loss type %d", ErrGeometry, label, int(d.Type))
	}
	if !d.Reduction.Valid() {
		return fmt.Errorf("%w: %s: unknown reduction %d", ErrGeometry, label, int(d.Reduction))
	}
	for _, p := range []struct {
		name string
		v    float32
	}{{"weight", d.Weight}, {"label smoothing", d.LabelSmoothing}, {"delta", d.Delta}, {"epsilon", d.Epsilon}} {
		if err := finite(label, p.name, p.v); err != nil {
			return err
		}
	}
	switch {
	case d.LabelSmoothing < 0 || d.LabelSmoothing > 1:
		return fmt.Errorf("%w: %s: label smoothing %g is outside [0, 1]", ErrGeometry, label, d.LabelSmoothing)
	case d.Delta < 0:
		return fmt.Errorf("%w: %s: delta %g must be > 0 (0 means the default %d)", ErrGeometry, label, d.Delta, DefaultLossDelta)
	case d.Epsilon < 0:
		return fmt.Errorf("%w: %s: epsilon %g must be >= 0 (0 means the default %g)", ErrGeometry, label, d.Epsilon, DefaultLossEpsilon)
	case d.NumberOfClasses < 0:
		return fmt.Errorf("%w: %s: number of classes %d is negative (0 means the channel count)", ErrGeometry, label, d.NumberOfClasses)
	}
	return nil
}

// ResultDescriptor returns the shape of the loss of a prediction of shape
// pred, in pred's format: 1×1×1×1 when reduced, else one value per item
// (WeightsDescriptor). It needs no device (the graph infers shapes with
// it).
func (d LossDescriptor) ResultDescriptor(pred ImageDescriptor) (ImageDescriptor, error) {
	if err := d.Validate(); err != nil {
		return ImageDescriptor{}, err
	}
	if pred.N < 1 || pred.C < 1 || pred.H < 1 || pred.W < 1 {
		return ImageDescriptor{}, fmt.Errorf("%w: Loss: prediction %dx%dx%dx%d has a size < 1", ErrInvalidImage, pred.N, pred.C, pred.H, pred.W)
	}
	if d.Reduction != ReductionNone {
		return ImageDescriptor{N: 1, C: 1, H: 1, W: 1, Format: pred.Format}, nil
	}
	return d.WeightsDescriptor(pred), nil
}

// WeightsDescriptor returns the shape of the per-item losses and weights
// of a prediction of shape pred (MPSCNNLossLabels' weights): pred's shape
// for the element-wise types, N×1×H×W for the per-pixel ones; pred's
// format.
func (d LossDescriptor) WeightsDescriptor(pred ImageDescriptor) ImageDescriptor {
	w := ImageDescriptor{N: pred.N, C: pred.C, H: pred.H, W: pred.W, Format: pred.Format}
	if d.Type.PerPixel() {
		w.C = 1
	}
	return w
}

// smoothing returns (a, b) with the smoothed label t*a + b for c channels.
func (d LossDescriptor) smoothing(c int) (float32, float32) {
	ls := d.LabelSmoothing
	if ls <= 0 {
		return 1, 0
	}
	switch d.Type {
	case LossSoftmaxCrossEntropy:
		k := d.NumberOfClasses
		if k == 0 {
			k = c
		}
		return 1 - ls, float32(float64(ls) / float64(k))
	case LossSigmoidCrossEntropy:
		return 1 - ls, ls / 2
	}
	return 1, 0
}

// Loss computes a loss between a prediction and labels of the same shape,
// and its gradient with respect to the prediction (MPSCNNLoss; with
// per-item weights, MPSCNNLossLabels' weights). Images are NCHW, float32 or
// float16 (all of one encode in one format; arithmetic and sums in
// float32). Sums are reduced in a fixed order, so a run repeats bit for bit
// on one device. Encoding allocates nothing once the pipelines and scratch
// exist. The weighted loss of item i is Weight * w_i * l_i (w_i = 1 without
// per-item weights), and the reductions and gradient follow from it.
type Loss struct {
	elementwise
	desc     LossDescriptor
	pipes    map[lossPipeKey]*vk.Pipeline
	partials *vk.Buffer // loss.comp's partial sums, then its partial counts
	factor   *vk.Buffer // the gradient's scale, for sum by nonzero weights
	retired  []*vk.Buffer
	closed   bool
}

// lossPipeKey names one pipeline of a Loss: loss.comp (mode 0..3),
// loss_pixel.comp (pixel, modes 0..2, laid out as shape says) or
// reduce_sum.comp (reduce).
type lossPipeKey struct {
	reduce, pixel                       bool
	mode                                int8
	f16, vec4, weights, count, factorIn bool
	shape                               lossPixelShape
}

// lossPixelShape is the work layout of loss_pixel.comp: slices
// invocations per pixel, cpt channels loaded at once by each, cached when
// cpt*slices covers every channel (they stay in registers), cfast for
// channel-fast invocations (planes of 1 or 2 values), local invocations a
// workgroup (local/slices pixels at a time).
type lossPixelShape struct {
	slices, cpt, local int
	cached, cfast      bool
}

// lossCacheChannels bounds the channels an invocation of loss_pixel.comp
// keeps in registers (two floats each: prediction and label).
const lossCacheChannels = 16

// pixelShape returns loss_pixel.comp's layout for pixels pixels of
// channels channels in planes of plane values. Workgroups have the usual
// size (l.local).
//
// At most lossCacheChannels channels: an invocation per pixel, every
// channel loaded at once (cpt the next power of two: fewer pipelines for
// the shapes a graph meets). Otherwise slices grow as powers of two, up to
// the channel count and:
//   - pixel-fast (planes of 3 values or more): up to 32 (a workgroup then
//     takes 8 neighbouring pixels, a 32-byte sector of each channel), until
//     an invocation's channels fit the register cache, and further while
//     the dispatch has under 2^17 invocations (enough to fill a large GPU);
//   - channel-fast: up to the workgroup size.
func (l *Loss) pixelShape(pixels, plane, channels int) lossPixelShape {
	wg := l.local
	sh := lossPixelShape{slices: 1, local: wg, cfast: plane <= 2}
	if channels <= lossCacheChannels {
		sh.cpt, sh.cached, sh.cfast = 1, true, false
		for sh.cpt < channels {
			sh.cpt *= 2
		}
		return sh
	}
	if sh.cfast {
		for sh.slices*2 <= min(wg, channels) {
			sh.slices *= 2
		}
	} else {
		most := min(32, max(wg/8, 1), channels)
		for sh.slices*2 <= most && (channels+sh.slices-1)/sh.slices > lossCacheChannels {
			sh.slices *= 2
		}
		for sh.slices*2 <= most && pixels*sh.slices < 1<<17 {
			sh.slices *= 2
		}
	}
	sh.cpt = (channels + sh.slices - 1) / sh.slices
	sh.cached = sh.cpt <= lossCacheChannels
	if !sh.cached {
		sh.cpt = 4
	}
	return sh
}

// Modes of glsl/loss.comp.
const (
	lossModeItems    = 0 // per-item losses
	lossModePartials = 1 // partial sums (and counts)
	lossModeGradient = 2
	lossModeCounts   = 3 // partial counts of nonzero weights only
)

// NewLoss makes a loss kernel; the descriptor must pass Validate.
func NewLoss(dev *vk.Device, d LossDescriptor) (*Loss, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	e, err := newElementwise(dev, "Loss("+d.Type.String()+", "+d.Reduction.String()+")")
	if err != nil {
		return nil, err
	}
	return &Loss{elementwise: e, desc: d, pipes: map[lossPipeKey]*vk.Pipeline{}}, nil
}

// Descriptor returns the loss's configuration.
func (l *Loss) Descriptor() LossDescriptor { return l.desc }

// ResultDescriptor returns the shape of the loss for a prediction of shape
// pred: 1×1×1×1 when reduced, else one value per item (pred's shape, or
// N×1×H×W for the per-pixel types). LossDescriptor.ResultDescriptor also
// checks its arguments.
func (l *Loss) ResultDescriptor(pred ImageDescriptor) ImageDescriptor {
	if l.desc.Reduction != ReductionNone {
		return ImageDescriptor{N: 1, C: 1, H: 1, W: 1, Format: pred.Format}
	}
	return l.desc.WeightsDescriptor(pred)
}

// Close releases the kernel's scratch memory; safe twice. A closed Loss
// refuses to encode (ErrClosed).
func (l *Loss) Close() error {
	l.closed = true
	var first error
	for _, b := range append(l.retired, l.partials, l.factor) {
		if b != nil {
			if err := b.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	l.partials, l.factor, l.retired = nil, nil, nil
	return first
}

type lossPush struct {
	Count, Channels, Plane              uint32
	PredBase, LabelBase, WeightBase     uint32
	OutBase, CountBase                  uint32
	Scale, SmoothA, SmoothB, Delta, Eps float32
}

type lossReducePush struct {
	Count, SumBase, CountBase, OutBase uint32
	Scale                              float32
}

func (l *Loss) pipeline(k lossPipeKey) (*vk.Pipeline, error) {
	if p := l.pipes[k]; p != nil {
		return p, nil
	}
	sh := spirv.Loss
	named := map[string]uint32{"local_size_x": uint32(l.local), "COUNT": lossB32(k.count), "FACTOR": lossB32(k.factorIn)}
	switch {
	case k.reduce:
		sh = spirv.ReduceSum
	case k.pixel:
		sh = spirv.LossPixel
		named["local_size_x"] = uint32(k.shape.local)
		named["SLICES"] = uint32(k.shape.slices)
		named["CPT"] = uint32(k.shape.cpt)
		named["CACHED"] = lossB32(k.shape.cached)
		named["CFAST"] = lossB32(k.shape.cfast)
	}
	if !k.reduce {
		named["TYPE"] = uint32(l.desc.Type)
		if k.mode == lossModeCounts {
			named["TYPE"] = uint32(LossMeanSquaredError) // counts read the weights as values
		}
		named["MODE"] = uint32(k.mode)
		named["VEC4"] = lossB32(k.vec4)
		named["WEIGHTS"] = lossB32(k.weights)
	}
	sh, err := build(sh, k.f16)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.label, err)
	}
	p, err := pipeline(l.dev, sh, named)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.label, err)
	}
	l.pipes[k] = p
	return p, nil
}

func lossB32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// lossQuads is the quads of values each loss.comp invocation takes per
// grid step (its constant Q). The partial sums' dispatches have half the
// workgroups that would cover their quads in one step: every invocation
// takes two, halving the workgroups' trees and partial sums.
const lossQuads = 2

// check validates an encode's arguments; role names out ("loss" or
// "gradient"). weights may be nil.
func (l *Loss) check(cb *vk.CommandBuffer, pred, labels, weights, out *Image, role string) error {
	if cb == nil {
		return fmt.Errorf("%w: %s: nil command buffer", ErrInvalidImage, l.label)
	}
	if l.dev == nil || l.pipes == nil {
		return fmt.Errorf("%w: Loss: a zero Loss; make one with NewLoss", ErrDevice)
	}
	if l.closed {
		return fmt.Errorf("%w: %s: used after Close", ErrClosed, l.label)
	}
	ims := [4]*Image{pred, labels, out, weights}
	roles := [4]string{"prediction", "labels", role, "weights"}
	n := 3
	if weights != nil {
		n = 4
	}
	if err := checkImages(l.dev, l.label, roles[:n], ims[:n]...); err != nil {
		return err
	}
	for i := 1; i < n; i++ {
		if ims[i].format != pred.format {
			return fmt.Errorf("%w: %s: prediction %s is %v but %s %s is %v; all images of a loss have one format",
				ErrFormat, l.label, pred, pred.format, roles[i], ims[i], ims[i].format)
		}
	}
	if err := sameShape(l.label, pred, labels); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if !ims[i].contiguous() {
			return fmt.Errorf("%w: %s: %s %s is a channel view; the loss needs whole images", ErrShape, l.label, roles[i], ims[i])
		}
	}
	if weights != nil {
		want := l.desc.WeightsDescriptor(pred.Descriptor())
		if weights.n != want.N || weights.c != want.C || weights.h != want.H || weights.w != want.W {
			return fmt.Errorf("%w: %s: weights %s, want one per item: %dx%dx%dx%d", ErrShape, l.label, weights, want.N, want.C, want.H, want.W)
		}
	}
	if overlaps(pred, out) || overlaps(labels, out) || (weights != nil && overlaps(weights, out)) {
		return fmt.Errorf("%w: %s: %s %s shares storage with an input", ErrAlias, l.label, role, out)
	}
	return nil
}

// Encode records the loss of pred against labels into loss, which has the
// shape ResultDescriptor(pred) gives. It is EncodeWeighted without
// per-item weights.
func (l *Loss) Encode(cb *vk.CommandBuffer, pred, labels, loss *Image) error {
	return l.EncodeWeighted(cb, pred, labels, nil, loss)
}

// EncodeGradient records grad = dLoss/dpred (for ReductionNone, the
// gradient of the sum of the items), pred's shape. It is
// EncodeGradientWeighted without per-item weights.
func (l *Loss) EncodeGradient(cb *vk.CommandBuffer, pred, labels, grad *Image) error {
	return l.EncodeGradientWeighted(cb, pred, labels, nil, grad)
}

// EncodeWeighted records the loss of pred against labels with one weight
// per item (weights of the shape LossDescriptor.WeightsDescriptor gives;
// nil means all 1) into loss, of the shape ResultDescriptor(pred) gives:
// Weight * w_i * l_i per item, or their sum, mean or sum by nonzero
// weights.
func (l *Loss) EncodeWeighted(cb *vk.CommandBuffer, pred, labels, weights, loss *Image) error {
	if err := l.check(cb, pred, labels, weights, loss, "loss"); err != nil {
		return err
	}
	want := l.ResultDescriptor(pred.Descriptor())
	if loss.n != want.N || loss.c != want.C || loss.h != want.H || loss.w != want.W {
		return fmt.Errorf("%w: %s: loss image %s, want %dx%dx%dx%d", ErrShape, l.label, loss, want.N, want.C, want.H, want.W)
	}
	w := orOne(l.desc.Weight)
	if l.desc.Reduction == ReductionNone {
		return l.pass(cb, lossModeItems, pred, labels, weights, loss, w, false, 0)
	}
	counting := l.desc.Reduction == ReductionSumByNonZeroWeights && weights != nil
	groups, err := l.partialGroups(pred, lossModePartials)
	if err != nil {
		return err
	}
	if err := l.ensureScratch(groups, false); err != nil {
		return err
	}
	if err := l.pass(cb, lossModePartials, pred, labels, weights, nil, 0, counting, groups); err != nil {
		return err
	}
	scale := w
	if l.desc.Reduction == ReductionMean || (l.desc.Reduction == ReductionSumByNonZeroWeights && weights == nil) {
		scale = w / float32(l.items(pred))
	}
	return l.reduce(cb, groups, loss, nil, scale, counting)
}

// EncodeGradientWeighted records grad = dLoss/dpred of EncodeWeighted's
// loss (for ReductionNone, of the sum of the items), pred's shape:
// Weight * w_i * dl_i/dpred divided as the reduction says.
func (l *Loss) EncodeGradientWeighted(cb *vk.CommandBuffer, pred, labels, weights, grad *Image) error {
	if err := l.check(cb, pred, labels, weights, grad, "gradient"); err != nil {
		return err
	}
	if err := sameShape(l.label, pred, grad); err != nil {
		return err
	}
	w := orOne(l.desc.Weight)
	switch l.desc.Reduction {
	case ReductionMean:
		w /= float32(l.items(pred))
	case ReductionSumByNonZeroWeights:
		if weights == nil {
			w /= float32(l.items(pred))
			break
		}
		// Count the nonzero weights on the GPU; reduce_sum writes
		// Weight / count (0 for none) where the gradient pass reads it.
		groups, err := l.partialGroups(pred, lossModeCounts)
		if err != nil {
			return err
		}
		if err := l.ensureScratch(groups, true); err != nil {
			return err
		}
		if err := l.pass(cb, lossModeCounts, pred, labels, weights, nil, 0, true, groups); err != nil {
			return err
		}
		if err := l.reduce(cb, groups, nil, l.factor, w, true); err != nil {
			return err
		}
		return l.pass(cb, lossModeGradient, pred, labels, weights, grad, 0, true, 0)
	}
	return l.pass(cb, lossModeGradient, pred, labels, weights, grad, w, false, 0)
}

// items returns the number of loss items of pred.
func (l *Loss) items(pred *Image) int {
	if l.desc.Type.PerPixel() {
		return pred.n * pred.h * pred.w
	}
	return pred.Len()
}

// batchesPerDispatch returns how many whole batch images of pred one
// dispatch takes: as many as fit the storage-buffer range (the prediction
// is the largest image bound).
func (l *Loss) batchesPerDispatch(pred *Image) (int, error) {
	lim := l.dev.Limits()
	room := lim.MaxStorageBufferRange - max(lim.MinStorageBufferOffsetAlignment, 4)
	per := uint64(pred.c*pred.h*pred.w) * pred.esize()
	if per > room {
		return 0, fmt.Errorf("%w: %s: one batch image of %s (%d bytes) exceeds the device's max storage buffer range (%d bytes)",
			ErrDeviceLimit, l.label, pred, per, lim.MaxStorageBufferRange)
	}
	return int(min(room/per, uint64(pred.n))), nil
}

// usesPixel reports whether a pass of mode runs loss_pixel.comp.
func (l *Loss) usesPixel(mode int) bool { return l.desc.Type.PerPixel() && mode != lossModeCounts }

// dispatchGroups returns the workgroups of a dispatch of mode over nb
// batch images of pred: enough for every unit (loss.comp's steps of
// lossQuads quads of values; loss_pixel.comp's blocks of pixels), at most
// the device's count (the shaders' grids stride).
func (l *Loss) dispatchGroups(pred *Image, nb, mode int) int {
	plane := pred.h * pred.w
	var units, span int
	if l.usesPixel(mode) {
		sh := l.pixelShape(pred.n*plane, plane, pred.c)
		units, span = nb*plane, sh.local/sh.slices
	} else {
		count := nb * plane
		if !l.desc.Type.PerPixel() {
			count *= pred.c
		}
		units, span = (count+3)/4, l.local*lossQuads
		if mode == lossModePartials || mode == lossModeCounts {
			span *= 2
		}
	}
	most := int(l.dev.Limits().MaxComputeWorkGroupCount[0])
	if lossGroupCap > 0 {
		most = min(most, lossGroupCap)
	}
	return min((units+span-1)/span, most)
}

// lossGroupCap, when > 0, caps the workgroups of a dispatch below the
// device's limit (tests: the grid stride with small tensors).
var lossGroupCap int

// partialGroups returns the workgroups (partial sums) of a whole pass.
func (l *Loss) partialGroups(pred *Image, mode int) (int, error) {
	nb, err := l.batchesPerDispatch(pred)
	if err != nil {
		return 0, err
	}
	total := 0
	for n0 := 0; n0 < pred.n; n0 += nb {
		total += l.dispatchGroups(pred, min(nb, pred.n-n0), mode)
	}
	return total, nil
}

// ensureScratch makes the partials buffer hold groups sums and groups
// counts, and with factor the gradient's scale buffer. A buffer outgrown is
// kept until Close: a recorded command buffer may still use it.
func (l *Loss) ensureScratch(groups int, factor bool) error {
	if size := uint64(2*groups) * 4; l.partials == nil || l.partials.Size() < size {
		b, err := l.dev.NewBuffer(size, l.label+" partial sums")
		if err != nil {
			return err
		}
		if l.partials != nil {
			l.retired = append(l.retired, l.partials)
		}
		l.partials = b
	}
	if factor && l.factor == nil {
		b, err := l.dev.NewBuffer(16, l.label+" gradient scale")
		if err != nil {
			return err
		}
		l.factor = b
	}
	return nil
}

// lossBind returns the aligned range of buf holding count elements of
// esize bytes at byte offset off, and the index of the first within it.
func lossBind(buf *vk.Buffer, align, esize, off uint64, count int) (vk.BufferRange, uint32) {
	start := off - off%align
	return buf.Range(start, off+uint64(count)*esize-start), uint32((off - start) / esize)
}

// pass records one loss.comp pass over every batch group of pred. out is
// the image written (items, gradient); the partial passes write the
// partials buffer, sums at [0, groups) and counts at [groups, 2*groups).
// scale is the push-constant scale; counting asks the partial passes for
// counts of nonzero weights and the gradient pass for the GPU's scale.
func (l *Loss) pass(cb *vk.CommandBuffer, mode int, pred, labels, weights, out *Image, scale float32, counting bool, groups int) error {
	nb, err := l.batchesPerDispatch(pred)
	if err != nil {
		return err
	}
	lim := l.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	es := pred.esize()
	plane := pred.h * pred.w
	perPixel := l.desc.Type.PerPixel()
	values := pred.c * plane // per batch image
	itemsPer := values       // items, weights and loss values per batch image
	if perPixel {
		itemsPer = plane
	}
	a, b := l.desc.smoothing(pred.c)
	pc := lossPush{Channels: uint32(pred.c), Plane: uint32(plane), Scale: scale, SmoothA: a, SmoothB: b,
		Delta: l.desc.Delta, Eps: l.desc.Epsilon}
	if pc.Delta == 0 {
		pc.Delta = DefaultLossDelta
	}
	if pc.Eps == 0 {
		pc.Eps = DefaultLossEpsilon
	}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	var binds [5]vk.BufferRange
	groupBase := 0
	for n0 := 0; n0 < pred.n; n0 += nb {
		nbat := min(nb, pred.n-n0)
		g := l.dispatchGroups(pred, nbat, mode)
		pc.Count = uint32(nbat * itemsPer) // values, pixels or weights
		binds[0], pc.PredBase = lossBind(pred.buf, align, es, (pred.base+uint64(n0*values))*es, nbat*values)
		binds[1], pc.LabelBase = lossBind(labels.buf, align, es, (labels.base+uint64(n0*values))*es, nbat*values)
		binds[2], binds[4] = binds[0], binds[0] // unused bindings: any range the pass only reads
		if weights != nil {
			binds[2], pc.WeightBase = lossBind(weights.buf, align, es, (weights.base+uint64(n0*itemsPer))*es, nbat*itemsPer)
		}
		switch mode {
		case lossModeItems:
			binds[3], pc.OutBase = lossBind(out.buf, align, es, (out.base+uint64(n0*itemsPer))*es, nbat*itemsPer)
		case lossModeGradient:
			binds[3], pc.OutBase = lossBind(out.buf, align, es, (out.base+uint64(n0*values))*es, nbat*values)
			if counting {
				binds[4] = l.factor.Range(0, 4)
			}
		default:
			binds[3] = l.partials.Range(0, uint64(2*groups)*4)
			pc.OutBase, pc.CountBase = uint32(groupBase), uint32(groups+groupBase)
		}
		var vec4 bool
		switch {
		case mode == lossModeCounts:
			vec4 = pc.WeightBase%4 == 0
		case !perPixel:
			vec4 = pc.PredBase%4 == 0 && pc.LabelBase%4 == 0 && (weights == nil || pc.WeightBase%4 == 0) &&
				(mode == lossModePartials || pc.OutBase%4 == 0)
		}
		key := lossPipeKey{mode: int8(mode), f16: pred.format == Float16, vec4: vec4, weights: weights != nil,
			count: counting && mode != lossModeGradient, factorIn: counting && mode == lossModeGradient}
		if l.usesPixel(mode) {
			key.pixel, key.vec4 = true, false
			key.shape = l.pixelShape(pred.n*plane, plane, pred.c)
		}
		pl, err := l.pipeline(key)
		if err != nil {
			return err
		}
		if err := cb.Dispatch(pl, binds[:], push, [3]uint32{uint32(g), 1, 1}); err != nil {
			return fmt.Errorf("%s: %w", l.label, err)
		}
		groupBase += g
	}
	return nil
}

// reduce records reduce_sum.comp over the groups partials: into the
// 1×1×1×1 image out (scale * sum, divided by the nonzero count when
// counting), or with factor into factor[0] (scale / count).
func (l *Loss) reduce(cb *vk.CommandBuffer, groups int, out *Image, factor *vk.Buffer, scale float32, counting bool) error {
	f16 := out != nil && out.format == Float16
	pl, err := l.pipeline(lossPipeKey{reduce: true, f16: f16, count: counting && factor == nil, factorIn: factor != nil})
	if err != nil {
		return err
	}
	lim := l.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	pc := lossReducePush{Count: uint32(groups), CountBase: uint32(groups), Scale: scale}
	binds := [2]vk.BufferRange{l.partials.Range(0, uint64(2*groups)*4), {}}
	if factor != nil {
		binds[1] = factor.Range(0, 4)
	} else {
		binds[1], pc.OutBase = lossBind(out.buf, align, out.esize(), out.base*out.esize(), 1)
	}
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	if err := cb.Dispatch(pl, binds[:], push, [3]uint32{1, 1, 1}); err != nil {
		return fmt.Errorf("%s: %w", l.label, err)
	}
	return nil
}
