package ref

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
)

// ElementwiseTorchCase is one PyTorch reference case of
// ops/testdata/torch/elementwise_cases.json, made by
// gen_elementwise_cases.py beside it: a neuron, softmax, log-softmax or
// arithmetic call on the CPU in float32, its result and its autograd
// gradients. Data are NCHW.
type ElementwiseTorchCase struct {
	Name string
	Kind string // "neuron", "softmax", "log_softmax" or "arithmetic"
	// Neuron is the neuron of a "neuron" case (type, a, b, c and PReLU's
	// slopes as the file gives them).
	Neuron Neuron
	// NeuronName is the neuron's graph JSON name ("relu", "prelu", ...).
	NeuronName string
	// Arithmetic is the configuration of an "arithmetic" case (infinite
	// bounds where the file has none) and ArithmeticOpName its op's name.
	Arithmetic       Arithmetic
	ArithmeticOpName string
	// Inputs are the sources (one, or primary and secondary), Output the
	// result; GradOutput is dy (the result's shape), GradInputs the
	// gradient of each source, GradPReLU the gradient of PReLU's slopes.
	Inputs     []Tensor[float32]
	Output     Tensor[float32]
	GradOutput []float32
	GradInputs [][]float32
	GradPReLU  []float32
}

var neuronTypeNames = [NumNeuronTypes]string{"none", "relu", "linear", "sigmoid", "hard_sigmoid", "tanh", "absolute",
	"softplus", "softsign", "elu", "prelu", "relun", "power", "exponential", "logarithm", "gelu"}

var arithmeticOpNames = []string{"add", "subtract", "multiply", "divide"}

type neuronCaseTensor struct {
	Shape [4]int    `json:"shape"`
	Data  []float64 `json:"data"`
}

type neuronCaseFile struct {
	Meta struct {
		Format int `json:"format"`
	} `json:"meta"`
	Cases []struct {
		Name   string `json:"name"`
		Kind   string `json:"kind"`
		Neuron *struct {
			Type  string    `json:"type"`
			A     float64   `json:"a"`
			B     float64   `json:"b"`
			C     float64   `json:"c"`
			PReLU []float64 `json:"prelu"`
		} `json:"neuron"`
		Arithmetic *struct {
			Op             string   `json:"op"`
			PrimaryScale   float64  `json:"primary_scale"`
			SecondaryScale float64  `json:"secondary_scale"`
			Bias           float64  `json:"bias"`
			Minimum        *float64 `json:"minimum"`
			Maximum        *float64 `json:"maximum"`
		} `json:"arithmetic"`
		Inputs     []neuronCaseTensor `json:"inputs"`
		Output     neuronCaseTensor   `json:"output"`
		GradOutput []float64          `json:"grad_output"`
		GradInputs [][]float64        `json:"grad_inputs"`
		GradPReLU  []float64          `json:"grad_prelu"`
	} `json:"cases"`
}

func neuronFloat32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func (e neuronCaseTensor) tensor(name string) (Tensor[float32], error) {
	t, err := TensorOf(e.Shape[0], e.Shape[1], e.Shape[2], e.Shape[3], neuronFloat32s(e.Data))
	if err != nil {
		return t, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// LoadElementwiseTorchCases reads the cases of an elementwise_cases.json
// file and checks each one's kind, parameters and data lengths.
func LoadElementwiseTorchCases(path string) ([]ElementwiseTorchCase, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f neuronCaseFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Meta.Format != 1 {
		return nil, fmt.Errorf("%s: format %d, want 1", path, f.Meta.Format)
	}
	cases := make([]ElementwiseTorchCase, 0, len(f.Cases))
	for _, fc := range f.Cases {
		c := ElementwiseTorchCase{Name: fc.Name, Kind: fc.Kind, GradOutput: neuronFloat32s(fc.GradOutput), GradPReLU: neuronFloat32s(fc.GradPReLU)}
		where := fmt.Sprintf("%s: case %q", path, fc.Name)
		want := 1
		switch fc.Kind {
		case "neuron":
			if fc.Neuron == nil {
				return nil, fmt.Errorf("%s: no neuron", where)
			}
			c.NeuronName = fc.Neuron.Type
			typ := -1
			for i, n := range neuronTypeNames {
				if n == fc.Neuron.Type {
					typ = i
				}
			}
			if typ < 0 {
				return nil, fmt.Errorf("%s: unknown neuron type %q", where, fc.Neuron.Type)
			}
			c.Neuron = Neuron{Type: NeuronType(typ), A: fc.Neuron.A, B: fc.Neuron.B, C: fc.Neuron.C}
			for _, s := range fc.Neuron.PReLU {
				c.Neuron.PReLU = append(c.Neuron.PReLU, float64(float32(s)))
			}
		case "softmax", "log_softmax":
		case "arithmetic":
			a := fc.Arithmetic
			if a == nil {
				return nil, fmt.Errorf("%s: no arithmetic", where)
			}
			op := -1
			for i, n := range arithmeticOpNames {
				if n == strings.ToLower(a.Op) {
					op = i
				}
			}
			if op < 0 {
				return nil, fmt.Errorf("%s: unknown arithmetic op %q", where, a.Op)
			}
			c.ArithmeticOpName = a.Op
			c.Arithmetic = NewArithmetic(ArithmeticOp(op))
			c.Arithmetic.PrimaryScale, c.Arithmetic.SecondaryScale, c.Arithmetic.Bias = a.PrimaryScale, a.SecondaryScale, a.Bias
			if a.Minimum != nil {
				c.Arithmetic.Minimum = *a.Minimum
			}
			if a.Maximum != nil {
				c.Arithmetic.Maximum = *a.Maximum
			}
			want = 2
		default:
			return nil, fmt.Errorf("%s: unknown kind %q", where, fc.Kind)
		}
		if len(fc.Inputs) != want || len(fc.GradInputs) != want {
			return nil, fmt.Errorf("%s: %d inputs and %d input gradients, want %d", where, len(fc.Inputs), len(fc.GradInputs), want)
		}
		for i, in := range fc.Inputs {
			t, err := in.tensor(fmt.Sprintf("%s: input %d", where, i))
			if err != nil {
				return nil, err
			}
			if len(fc.GradInputs[i]) != len(t.Data) {
				return nil, fmt.Errorf("%s: input %d has %d values but its gradient %d", where, i, len(t.Data), len(fc.GradInputs[i]))
			}
			c.Inputs = append(c.Inputs, t)
			c.GradInputs = append(c.GradInputs, neuronFloat32s(fc.GradInputs[i]))
		}
		if c.Output, err = fc.Output.tensor(where + ": output"); err != nil {
			return nil, err
		}
		if len(c.GradOutput) != len(c.Output.Data) {
			return nil, fmt.Errorf("%s: output has %d values but its gradient %d", where, len(c.Output.Data), len(c.GradOutput))
		}
		if c.Neuron.Type == NeuronPReLU && (len(c.Neuron.PReLU) != c.Inputs[0].C || len(c.GradPReLU) != c.Inputs[0].C) {
			return nil, fmt.Errorf("%s: prelu with %d slopes and %d slope gradients for %d channels", where, len(c.Neuron.PReLU), len(c.GradPReLU), c.Inputs[0].C)
		}
		for _, v := range c.Output.Data {
			if math.IsNaN(float64(v)) {
				return nil, fmt.Errorf("%s: NaN in the output", where)
			}
		}
		cases = append(cases, c)
	}
	return cases, nil
}
