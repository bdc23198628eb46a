package ref

import (
	"encoding/json"
	"fmt"
	"os"
)

// TorchLossCase is one PyTorch reference case of
// ops/testdata/torch/loss_cases.json, made by gen_loss_cases.py beside it:
// a loss of Pred against Labels (NCHW float32, Shape [N, C, H, W]) with
// optional per-item Weights, PyTorch's Result (one value per item for
// ReduceNone, else one) and its autograd gradient Grad with respect to
// Pred (of the sum of the items for ReduceNone), computed in float64.
type TorchLossCase struct {
	Name       string
	Descriptor LossDescriptor
	Torch      string // the PyTorch call it was made with
	Shape      [4]int
	Pred       []float32
	Labels     []float32
	Weights    []float32 // nil: none
	Result     []float32
	Grad       []float32
}

// Tensors returns the prediction and labels as tensors sharing the case's
// slices.
func (c TorchLossCase) Tensors() (pred, labels Tensor[float32]) {
	s := c.Shape
	return Tensor[float32]{N: s[0], C: s[1], H: s[2], W: s[3], Data: c.Pred},
		Tensor[float32]{N: s[0], C: s[1], H: s[2], W: s[3], Data: c.Labels}
}

var (
	lossTypeNames      = []string{"mse", "softmax-cross-entropy", "mae", "sigmoid-cross-entropy", "categorical-cross-entropy", "hinge", "huber", "cosine-distance", "log", "kl-divergence"}
	lossReductionNames = []string{"none", "sum", "mean", "sum-by-nonzero-weights"}
)

func lossIndexOf(names []string, s string) int {
	for i, n := range names {
		if n == s {
			return i
		}
	}
	return -1
}

// LoadTorchLossCases reads the cases of a loss_cases.json file and checks
// each one's names and data lengths.
func LoadTorchLossCases(path string) ([]TorchLossCase, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Meta struct {
			Format int `json:"format"`
		} `json:"meta"`
		Cases []struct {
			Name           string    `json:"name"`
			Loss           string    `json:"loss"`
			Reduction      string    `json:"reduction"`
			Weight         float64   `json:"weight"`
			LabelSmoothing float64   `json:"label_smoothing"`
			Delta          float64   `json:"delta"`
			Epsilon        float64   `json:"epsilon"`
			Shape          [4]int    `json:"shape"`
			Torch          string    `json:"torch"`
			Pred           []float64 `json:"pred"`
			Labels         []float64 `json:"labels"`
			Weights        []float64 `json:"weights"`
			Result         []float64 `json:"result"`
			Grad           []float64 `json:"grad"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Meta.Format != 1 {
		return nil, fmt.Errorf("%s: format %d, want 1", path, f.Meta.Format)
	}
	cases := make([]TorchLossCase, 0, len(f.Cases))
	for i, fc := range f.Cases {
		typ, red := lossIndexOf(lossTypeNames, fc.Loss), lossIndexOf(lossReductionNames, fc.Reduction)
		if typ < 0 || red < 0 {
			return nil, fmt.Errorf("%s: case %d (%s): unknown loss %q or reduction %q", path, i, fc.Name, fc.Loss, fc.Reduction)
		}
		c := TorchLossCase{
			Name: fc.Name, Torch: fc.Torch, Shape: fc.Shape,
			Descriptor: LossDescriptor{Type: LossType(typ), Reduction: Reduction(red), Weight: fc.Weight,
				LabelSmoothing: fc.LabelSmoothing, Delta: fc.Delta, Epsilon: fc.Epsilon},
			Pred: f32(fc.Pred), Labels: f32(fc.Labels), Result: f32(fc.Result), Grad: f32(fc.Grad),
		}
		if len(fc.Weights) > 0 {
			c.Weights = f32(fc.Weights)
		}
		s := c.Shape
		n := s[0] * s[1] * s[2] * s[3]
		items := c.Descriptor.Type.Items(s[0], s[1], s[2], s[3])
		results := 1
		if c.Descriptor.Reduction == ReduceNone {
			results = items
		}
		if s[0] < 1 || s[1] < 1 || s[2] < 1 || s[3] < 1 || len(c.Pred) != n || len(c.Labels) != n || len(c.Grad) != n ||
			len(c.Result) != results || (c.Weights != nil && len(c.Weights) != items) {
			return nil, fmt.Errorf("%s: case %d (%s): data lengths do not fit shape %v", path, i, c.Name, s)
		}
		cases = append(cases, c)
	}
	return cases, nil
}
