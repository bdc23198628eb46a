package ref

import (
	"encoding/json"
	"fmt"
	"os"
)

// ConvTorchCase is one PyTorch case of ops/testdata/torch/conv_cases.json,
// made by gen_conv_cases.py beside it: F.conv2d (after F.pad: asymmetric
// pads), F.conv_transpose2d or F.linear, its output and the autograd
// gradients of sum(GradOutput * output). Pairs are [h, w]; Padding is
// [top, left, bottom, right]; shapes [N, C, H, W] (weights as PyTorch
// holds them; linear weights [O, C*H*W]); data NCHW float32. Bias and
// GradBias are nil without a bias.
type ConvTorchCase struct {
	Name          string
	Op            string // "conv", "transpose" or "linear"
	Kernel        [2]int
	Stride        [2]int
	Dilation      [2]int
	Padding       [4]int
	OutputPadding [2]int
	Groups        int
	InputShape    [4]int
	Input         []float32
	WeightShape   []int
	Weight        []float32
	Bias          []float32
	OutputShape   [4]int
	Output        []float32
	GradOutput    []float32
	GradInput     []float32
	GradWeight    []float32
	GradBias      []float32
}

// Conv returns the case's geometry for the references (no neuron).
func (c ConvTorchCase) Conv() Conv {
	return Conv{KernelH: c.Kernel[0], KernelW: c.Kernel[1], StrideY: c.Stride[0], StrideX: c.Stride[1],
		DilationY: c.Dilation[0], DilationX: c.Dilation[1], Groups: c.Groups, PadTop: c.Padding[0], PadLeft: c.Padding[1]}
}

type convTorchFile struct {
	Meta struct {
		Format int `json:"format"`
	} `json:"meta"`
	Cases []struct {
		Name          string    `json:"name"`
		Op            string    `json:"op"`
		Kernel        [2]int    `json:"kernel"`
		Stride        [2]int    `json:"stride"`
		Dilation      [2]int    `json:"dilation"`
		Padding       [4]int    `json:"padding"`
		OutputPadding [2]int    `json:"output_padding"`
		Groups        int       `json:"groups"`
		InputShape    [4]int    `json:"input_shape"`
		Input         []float64 `json:"input"`
		WeightShape   []int     `json:"weight_shape"`
		Weight        []float64 `json:"weight"`
		Bias          []float64 `json:"bias"`
		OutputShape   [4]int    `json:"output_shape"`
		Output        []float64 `json:"output"`
		GradOutput    []float64 `json:"grad_output"`
		GradInput     []float64 `json:"grad_input"`
		GradWeight    []float64 `json:"grad_weight"`
		GradBias      []float64 `json:"grad_bias"`
	} `json:"cases"`
}

// LoadConvTorchCases reads conv_cases.json and checks every case's op and
// data lengths.
func LoadConvTorchCases(path string) ([]ConvTorchCase, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f convTorchFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Meta.Format != 1 {
		return nil, fmt.Errorf("%s: format %d, want 1", path, f.Meta.Format)
	}
	opt := func(v []float64) []float32 {
		if v == nil {
			return nil
		}
		return f32(v)
	}
	var cases []ConvTorchCase
	for i, fc := range f.Cases {
		c := ConvTorchCase{Name: fc.Name, Op: fc.Op, Kernel: fc.Kernel, Stride: fc.Stride, Dilation: fc.Dilation, Padding: fc.Padding,
			OutputPadding: fc.OutputPadding, Groups: fc.Groups, InputShape: fc.InputShape, Input: f32(fc.Input),
			WeightShape: fc.WeightShape, Weight: f32(fc.Weight), Bias: opt(fc.Bias), OutputShape: fc.OutputShape, Output: f32(fc.Output),
			GradOutput: f32(fc.GradOutput), GradInput: f32(fc.GradInput), GradWeight: f32(fc.GradWeight), GradBias: opt(fc.GradBias)}
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("%s: case %d (%s): %w", path, i, c.Name, err)
		}
		cases = append(cases, c)
	}
	return cases, nil
}

func (c ConvTorchCase) check() error {
	switch c.Op {
	case "conv", "transpose", "linear":
	default:
		return fmt.Errorf("unknown op %q", c.Op)
	}
	prod := func(s []int) int {
		n := 1
		for _, v := range s {
			n *= v
		}
		return n
	}
	in, out := prod(c.InputShape[:]), prod(c.OutputShape[:])
	switch {
	case len(c.Input) != in || len(c.GradInput) != in:
		return fmt.Errorf("input of %d values for shape %v", len(c.Input), c.InputShape)
	case len(c.Output) != out || len(c.GradOutput) != out:
		return fmt.Errorf("output of %d values for shape %v", len(c.Output), c.OutputShape)
	case len(c.Weight) != prod(c.WeightShape) || len(c.GradWeight) != len(c.Weight):
		return fmt.Errorf("weights of %d values for shape %v", len(c.Weight), c.WeightShape)
	case len(c.Bias) != len(c.GradBias):
		return fmt.Errorf("bias of %d values, its gradient %d", len(c.Bias), len(c.GradBias))
	case c.Groups < 1:
		return fmt.Errorf("groups %d", c.Groups)
	}
	return nil
}
