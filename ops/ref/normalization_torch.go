package ref

import (
	"encoding/json"
	"fmt"
	"os"
)

// NormTorchCase is one PyTorch reference case of
// ops/testdata/torch/normalization_cases.json, made by
// gen_normalization_cases.py beside it: a batch_norm (training or eval),
// instance_norm or local_response_norm call on NCHW float32 data, its
// output and autograd gradients. Fields an op does not use are zero.
type NormTorchCase struct {
	Name     string
	Op       string // "batch_norm", "instance_norm" or "local_response_norm"
	Training bool   // batch_norm: batch statistics (else running)
	Shape    [4]int // N, C, H, W
	Input    []float32
	// PriorInputs (batch_norm training) were run through training-mode
	// forwards before Input, each updating the running statistics.
	PriorInputs [][]float32
	Weight      []float32 // gamma
	Bias        []float32 // beta
	// RunningMean and RunningVar are the running statistics before the
	// prior inputs; ...After after Input.
	RunningMean, RunningVar           []float32
	RunningMeanAfter, RunningVarAfter []float32
	Momentum, Eps                     float64
	Size                              int // local_response_norm
	Alpha, Beta, K                    float64
	Output                            []float32
	GradOutput                        []float32 // dy
	GradInput                         []float32 // dx
	GradWeight, GradBias              []float32 // dgamma, dbeta
}

// Len returns N*C*H*W.
func (c NormTorchCase) Len() int { return c.Shape[0] * c.Shape[1] * c.Shape[2] * c.Shape[3] }

type normTorchFile struct {
	Meta struct {
		Format int `json:"format"`
	} `json:"meta"`
	Cases []struct {
		Name             string      `json:"name"`
		Op               string      `json:"op"`
		Training         bool        `json:"training"`
		InputShape       [4]int      `json:"input_shape"`
		Input            []float64   `json:"input"`
		PriorInputs      [][]float64 `json:"prior_inputs"`
		Weight           []float64   `json:"weight"`
		Bias             []float64   `json:"bias"`
		RunningMean      []float64   `json:"running_mean"`
		RunningVar       []float64   `json:"running_var"`
		RunningMeanAfter []float64   `json:"running_mean_after"`
		RunningVarAfter  []float64   `json:"running_var_after"`
		Momentum         float64     `json:"momentum"`
		Eps              float64     `json:"eps"`
		Size             int         `json:"size"`
		Alpha            float64     `json:"alpha"`
		Beta             float64     `json:"beta"`
		K                float64     `json:"k"`
		Output           []float64   `json:"output"`
		GradOutput       []float64   `json:"grad_output"`
		GradInput        []float64   `json:"grad_input"`
		GradWeight       []float64   `json:"grad_weight"`
		GradBias         []float64   `json:"grad_bias"`
	} `json:"cases"`
}

// LoadNormTorchCases reads normalization_cases.json and checks each case's
// op and data lengths.
func LoadNormTorchCases(path string) ([]NormTorchCase, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f normTorchFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Meta.Format != 1 {
		return nil, fmt.Errorf("%s: format %d, want 1", path, f.Meta.Format)
	}
	out := make([]NormTorchCase, 0, len(f.Cases))
	for i, fc := range f.Cases {
		c := NormTorchCase{
			Name: fc.Name, Op: fc.Op, Training: fc.Training, Shape: fc.InputShape,
			Input: f32(fc.Input), Weight: f32(fc.Weight), Bias: f32(fc.Bias),
			RunningMean: f32(fc.RunningMean), RunningVar: f32(fc.RunningVar),
			RunningMeanAfter: f32(fc.RunningMeanAfter), RunningVarAfter: f32(fc.RunningVarAfter),
			Momentum: fc.Momentum, Eps: fc.Eps, Size: fc.Size, Alpha: fc.Alpha, Beta: fc.Beta, K: fc.K,
			Output: f32(fc.Output), GradOutput: f32(fc.GradOutput), GradInput: f32(fc.GradInput),
			GradWeight: f32(fc.GradWeight), GradBias: f32(fc.GradBias),
		}
		for _, p := range fc.PriorInputs {
			c.PriorInputs = append(c.PriorInputs, f32(p))
		}
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("%s: case %d (%s): %w", path, i, c.Name, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func (c NormTorchCase) check() error {
	if err := checkDesc("input", c.Tensor(nil).Shape()); err != nil {
		return err
	}
	n, ch := c.Len(), c.Shape[1]
	lens := []struct {
		name string
		v    []float32
		want int
	}{{"input", c.Input, n}, {"output", c.Output, n}, {"grad_output", c.GradOutput, n}, {"grad_input", c.GradInput, n}}
	switch c.Op {
	case "batch_norm":
		lens = append(lens, []struct {
			name string
			v    []float32
			want int
		}{{"weight", c.Weight, ch}, {"bias", c.Bias, ch}, {"running_mean", c.RunningMean, ch}, {"running_var", c.RunningVar, ch},
			{"running_mean_after", c.RunningMeanAfter, ch}, {"running_var_after", c.RunningVarAfter, ch},
			{"grad_weight", c.GradWeight, ch}, {"grad_bias", c.GradBias, ch}}...)
		for i, p := range c.PriorInputs {
			if len(p) != n {
				return fmt.Errorf("%w: prior input %d has %d values, want %d", ErrShape, i, len(p), n)
			}
		}
	case "instance_norm":
		lens = append(lens, []struct {
			name string
			v    []float32
			want int
		}{{"weight", c.Weight, ch}, {"bias", c.Bias, ch}, {"grad_weight", c.GradWeight, ch}, {"grad_bias", c.GradBias, ch}}...)
	case "local_response_norm":
		if c.Size < 1 {
			return fmt.Errorf("%w: size %d", ErrGeometry, c.Size)
		}
	default:
		return fmt.Errorf("unknown op %q", c.Op)
	}
	for _, l := range lens {
		if len(l.v) != l.want {
			return fmt.Errorf("%w: %s has %d values, want %d", ErrShape, l.name, len(l.v), l.want)
		}
	}
	return nil
}

// Tensor wraps data (nil: the input) as a float64 tensor of the case's
// shape.
func (c NormTorchCase) Tensor(data []float32) Tensor[float64] {
	if data == nil {
		data = c.Input
	}
	t := Tensor[float64]{N: c.Shape[0], C: c.Shape[1], H: c.Shape[2], W: c.Shape[3], Data: make([]float64, len(data))}
	for i, v := range data {
		t.Data[i] = float64(v)
	}
	return t
}
