package ref

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/vkmps/vkmps/padding"
)

// UpsamplingTorchCase is one F.interpolate case of
// ops/testdata/torch/upsampling_cases.json (gen_upsampling_cases.py): the
// upsampling, its input and output, a random gradient of the output and
// PyTorch autograd's gradient of the input. Shapes are [N, C, H, W], data
// NCHW float32.
type UpsamplingTorchCase struct {
	Name                    string
	Upsampling              Upsampling
	InputShape, OutputShape [4]int
	Input, Output           []float32
	GradOutput, GradInput   []float32
}

// DropoutTorchCase is one dropout case of the same file: PyTorch's
// F.dropout formula applied with a given mask (vkmps's Philox mask cannot
// match PyTorch's generator). Dropout has KeepProbability and the strides
// set (Seed and Draw are unused); Mask has MaskShape, true where kept;
// Scale is the float32 factor PyTorch multiplied kept values by.
type DropoutTorchCase struct {
	Name                  string
	Dropout               Dropout
	Scale                 float32
	InputShape, MaskShape [4]int
	Mask                  []bool
	Input, Output         []float32
	GradOutput, GradInput []float32
}

type upsamplingTorchFile struct {
	Meta struct {
		Format int `json:"format"`
	} `json:"meta"`
	Upsampling []struct {
		Name         string    `json:"name"`
		Mode         string    `json:"mode"`
		AlignCorners bool      `json:"align_corners"`
		Scale        [2]int    `json:"scale"`
		InputShape   [4]int    `json:"input_shape"`
		Input        []float64 `json:"input"`
		OutputShape  [4]int    `json:"output_shape"`
		Output       []float64 `json:"output"`
		GradOutput   []float64 `json:"grad_output"`
		GradInput    []float64 `json:"grad_input"`
	} `json:"upsampling"`
	Dropout []struct {
		Name       string    `json:"name"`
		Keep       float64   `json:"keep"`
		Scale      float64   `json:"scale"`
		MaskStride [3]int    `json:"mask_stride"`
		InputShape [4]int    `json:"input_shape"`
		MaskShape  [4]int    `json:"mask_shape"`
		Mask       []int     `json:"mask"`
		Input      []float64 `json:"input"`
		Output     []float64 `json:"output"`
		GradOutput []float64 `json:"grad_output"`
		GradInput  []float64 `json:"grad_input"`
	} `json:"dropout"`
}

func float32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func numel4(s [4]int) int { return s[0] * s[1] * s[2] * s[3] }

// LoadUpsamplingCases reads upsampling_cases.json and checks every case's
// parameters and data lengths.
func LoadUpsamplingCases(path string) ([]UpsamplingTorchCase, []DropoutTorchCase, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var f upsamplingTorchFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Meta.Format != 1 {
		return nil, nil, fmt.Errorf("%s: format %d, want 1", path, f.Meta.Format)
	}
	var ups []UpsamplingTorchCase
	for _, c := range f.Upsampling {
		u := Upsampling{ScaleY: c.Scale[0], ScaleX: c.Scale[1], Bilinear: c.Mode == "bilinear", AlignCorners: c.AlignCorners}
		if c.Mode != "nearest" && c.Mode != "bilinear" {
			return nil, nil, fmt.Errorf("%s: case %s: unknown mode %q", path, c.Name, c.Mode)
		}
		if err := u.Validate(); err != nil {
			return nil, nil, fmt.Errorf("%s: case %s: %w", path, c.Name, err)
		}
		i, o := c.InputShape, c.OutputShape
		if o != [4]int{i[0], i[1], i[2] * u.ScaleY, i[3] * u.ScaleX} || len(c.Input) != numel4(i) || len(c.GradInput) != numel4(i) ||
			len(c.Output) != numel4(o) || len(c.GradOutput) != numel4(o) {
			return nil, nil, fmt.Errorf("%w: %s: case %s: shapes or data lengths do not fit", ErrShape, path, c.Name)
		}
		ups = append(ups, UpsamplingTorchCase{Name: c.Name, Upsampling: u, InputShape: i, OutputShape: o,
			Input: float32s(c.Input), Output: float32s(c.Output), GradOutput: float32s(c.GradOutput), GradInput: float32s(c.GradInput)})
	}
	var drops []DropoutTorchCase
	for _, c := range f.Dropout {
		d := Dropout{KeepProbability: float32(c.Keep), StrideX: c.MaskStride[0], StrideY: c.MaskStride[1], StrideC: c.MaskStride[2]}
		if err := d.Validate(); err != nil {
			return nil, nil, fmt.Errorf("%s: case %s: %w", path, c.Name, err)
		}
		i := c.InputShape
		m := d.MaskShape(padding.Descriptor{N: i[0], C: i[1], H: i[2], W: i[3]})
		if c.MaskShape != [4]int{m.N, m.C, m.H, m.W} || len(c.Mask) != numel4(c.MaskShape) || len(c.Input) != numel4(i) ||
			len(c.Output) != numel4(i) || len(c.GradOutput) != numel4(i) || len(c.GradInput) != numel4(i) {
			return nil, nil, fmt.Errorf("%w: %s: case %s: shapes or data lengths do not fit", ErrShape, path, c.Name)
		}
		mask := make([]bool, len(c.Mask))
		for k, v := range c.Mask {
			mask[k] = v != 0
		}
		drops = append(drops, DropoutTorchCase{Name: c.Name, Dropout: d, Scale: float32(c.Scale), InputShape: i, MaskShape: c.MaskShape,
			Mask: mask, Input: float32s(c.Input), Output: float32s(c.Output), GradOutput: float32s(c.GradOutput), GradInput: float32s(c.GradInput)})
	}
	return ups, drops, nil
}
