package ref

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/vkmps/vkmps/padding"
)

// TorchCase is one PyTorch reference case of ops/testdata/torch/pool_cases.json,
// made by gen_pool_cases.py beside it: a max_pool2d, avg_pool2d or
// lp_pool2d(norm_type=2) call with explicit symmetric padding, its output
// and its autograd gradient. Pairs are [h, w] as PyTorch orders them; shapes
// are [N, C, H, W]; data are NCHW float32.
type TorchCase struct {
	Name            string
	Op              string // "max", "avg" or "l2"
	Kernel          [2]int
	Stride          [2]int
	Padding         [2]int
	Dilation        [2]int
	CeilMode        bool
	CountIncludePad bool
	InputShape      [4]int
	OutputShape     [4]int
	Input           []float32
	Output          []float32
	GradOutput      []float32 // dy, the random loss gradient w.r.t. Output
	GradInput       []float32 // dx, PyTorch autograd's gradient w.r.t. Input
}

// Geometry maps the case to a vkmps geometry as the explicit-pads policy does
// (SPEC.md): OffsetX = floor(keX/2) - padW (likewise y), EdgeClamp, and for
// average pooling ZeroPad = the pads when count_include_pad, else 0. Kind is
// Max (DilatedMax when a dilation is > 1), Average or L2Norm. The destination
// shape is OutputShape.
func (c TorchCase) Geometry() Geometry {
	g := Geometry{
		KernelH: c.Kernel[0], KernelW: c.Kernel[1],
		StrideY: c.Stride[0], StrideX: c.Stride[1],
		DilationY: c.Dilation[0], DilationX: c.Dilation[1],
		EdgeMode: padding.EdgeClamp,
	}
	keY := (g.KernelH-1)*g.DilationY + 1
	keX := (g.KernelW-1)*g.DilationX + 1
	g.OffsetY = keY/2 - c.Padding[0]
	g.OffsetX = keX/2 - c.Padding[1]
	switch c.Op {
	case "max":
		g.Kind = Max
		if g.DilationX > 1 || g.DilationY > 1 {
			g.Kind = DilatedMax
		}
	case "avg":
		g.Kind = Average
		if c.CountIncludePad {
			p := c.Padding
			g.ZeroPad = padding.Pads{Top: p[0], Left: p[1], Bottom: p[0], Right: p[1]}
		}
	case "l2":
		g.Kind = L2Norm
	}
	return g
}

// Tensors returns the case's data as tensors sharing its slices: the forward
// source and destination, dy (shaped as the destination) and dx (as the
// source).
func (c TorchCase) Tensors() (in, out, gradOut, gradIn Tensor[float32]) {
	i, o := c.InputShape, c.OutputShape
	in = Tensor[float32]{N: i[0], C: i[1], H: i[2], W: i[3], Data: c.Input}
	out = Tensor[float32]{N: o[0], C: o[1], H: o[2], W: o[3], Data: c.Output}
	gradOut = Tensor[float32]{N: o[0], C: o[1], H: o[2], W: o[3], Data: c.GradOutput}
	gradIn = Tensor[float32]{N: i[0], C: i[1], H: i[2], W: i[3], Data: c.GradInput}
	return in, out, gradOut, gradIn
}

// torchFile is the JSON layout written by gen_pool_cases.py (format 1).
type torchFile struct {
	Meta struct {
		Format int `json:"format"`
	} `json:"meta"`
	Cases []struct {
		Name            string    `json:"name"`
		Op              string    `json:"op"`
		Kernel          [2]int    `json:"kernel"`
		Stride          [2]int    `json:"stride"`
		Padding         [2]int    `json:"padding"`
		Dilation        [2]int    `json:"dilation"`
		CeilMode        bool      `json:"ceil_mode"`
		CountIncludePad bool      `json:"count_include_pad"`
		InputShape      [4]int    `json:"input_shape"`
		Input           []float64 `json:"input"`
		OutputShape     [4]int    `json:"output_shape"`
		Output          []float64 `json:"output"`
		GradOutput      []float64 `json:"grad_output"`
		GradInput       []float64 `json:"grad_input"`
	} `json:"cases"`
}

// LoadTorchCases reads the cases of a pool_cases.json file and checks each
// one's op, geometry and data lengths. Numbers are read as float64 and then
// rounded to float32, which is how the generator checked that every printed
// value round-trips.
func LoadTorchCases(path string) ([]TorchCase, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f torchFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Meta.Format != 1 {
		return nil, fmt.Errorf("%s: format %d, want 1", path, f.Meta.Format)
	}
	cases := make([]TorchCase, 0, len(f.Cases))
	for i, fc := range f.Cases {
		c := TorchCase{
			Name: fc.Name, Op: fc.Op,
			Kernel: fc.Kernel, Stride: fc.Stride, Padding: fc.Padding, Dilation: fc.Dilation,
			CeilMode: fc.CeilMode, CountIncludePad: fc.CountIncludePad,
			InputShape: fc.InputShape, OutputShape: fc.OutputShape,
			Input: f32(fc.Input), Output: f32(fc.Output),
			GradOutput: f32(fc.GradOutput), GradInput: f32(fc.GradInput),
		}
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("%s: case %d (%s): %w", path, i, c.Name, err)
		}
		cases = append(cases, c)
	}
	return cases, nil
}

func f32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// check validates a loaded case.
func (c TorchCase) check() error {
	switch c.Op {
	case "max", "avg", "l2":
	default:
		return fmt.Errorf("unknown op %q", c.Op)
	}
	if c.InputShape[0] != c.OutputShape[0] || c.InputShape[1] != c.OutputShape[1] {
		return fmt.Errorf("input %v and output %v differ in N or C", c.InputShape, c.OutputShape)
	}
	for j := range 2 {
		if c.Padding[j] < 0 {
			return fmt.Errorf("negative padding %v", c.Padding)
		}
	}
	if err := c.Geometry().Validate(); err != nil {
		return err
	}
	in, out, gradOut, gradIn := c.Tensors()
	for _, t := range []struct {
		name string
		t    Tensor[float32]
	}{{"input", in}, {"output", out}, {"grad_output", gradOut}, {"grad_input", gradIn}} {
		if err := t.t.check(t.name); err != nil {
			return err
		}
	}
	return nil
}
