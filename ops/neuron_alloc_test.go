//go:build !race

package ops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// The neuron, softmax and arithmetic encodes allocate nothing on the Go
// heap once their pipelines exist (issue 9), float32 and float16, in
// every work layout: runs in quads, broadcast planes and values,
// reductions, the slope gradient.
func TestNeuronSoftMaxArithmeticEncodeDoesNotAllocate(t *testing.T) {
	dev := vktest.Open(t)
	for _, f := range neuronFormats(dev) {
		sd := padding.Descriptor{N: 2, C: 3, H: 8, W: 8}
		a, b, c := neuronImage(t, dev, sd, nil, f), neuronImage(t, dev, sd, nil, f), neuronImage(t, dev, sd, nil, f)
		odd := padding.Descriptor{N: 2, C: 3, H: 5, W: 7}
		oa, ob := neuronImage(t, dev, odd, nil, f), neuronImage(t, dev, odd, nil, f)
		e := neuronImage(t, dev, sd, nil, f)
		pc := neuronImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, nil, f)
		pc2 := neuronImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, nil, f)
		slopes := newImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, []float32{0.1, 0.2, 0.3})
		ds := newImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 1, W: 1}, nil)

		relu := must(ops.NewNeuron(dev, ops.NewNeuronDescriptor(ops.NeuronReLU)))
		prelu := must(ops.NewNeuron(dev, ops.NeuronDescriptor{Type: ops.NeuronPReLU}))
		prelu.Slopes = slopes
		pgrad := must(ops.NewNeuronGradient(dev, ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: []float32{1, 2, 3}}))
		t.Cleanup(func() { pgrad.Close() })
		sm, lsm := must(ops.NewSoftMax(dev)), must(ops.NewLogSoftMax(dev))
		smg, lsmg := must(ops.NewSoftMaxGradient(dev)), must(ops.NewLogSoftMaxGradient(dev))
		d := ops.NewArithmeticDescriptor(ops.ArithmeticMultiply)
		d.Maximum = 2
		mul := must(ops.NewArithmetic(dev, d))
		gx := must(ops.NewArithmeticGradient(dev, d, false))
		t.Cleanup(func() { gx.Close() })
		gy := must(ops.NewArithmeticGradient(dev, d, true))
		t.Cleanup(func() { gy.Close() })

		encodes := map[string]func(cb *vk.CommandBuffer) error{
			"neuron":                      func(cb *vk.CommandBuffer) error { return relu.Encode(cb, a, b) },
			"neuron odd":                  func(cb *vk.CommandBuffer) error { return relu.Encode(cb, oa, ob) },
			"prelu":                       func(cb *vk.CommandBuffer) error { return prelu.Encode(cb, a, b) },
			"prelu gradient":              func(cb *vk.CommandBuffer) error { return pgrad.Encode(cb, a, b, c) },
			"prelu slope gradient":        func(cb *vk.CommandBuffer) error { return pgrad.EncodeSlopeGradient(cb, a, b, ds) },
			"softmax":                     func(cb *vk.CommandBuffer) error { return sm.Encode(cb, a, b) },
			"log softmax":                 func(cb *vk.CommandBuffer) error { return lsm.Encode(cb, a, b) },
			"softmax gradient":            func(cb *vk.CommandBuffer) error { return smg.Encode(cb, a, b, c) },
			"log softmax gradient":        func(cb *vk.CommandBuffer) error { return lsmg.Encode(cb, a, b, c) },
			"multiply":                    func(cb *vk.CommandBuffer) error { return mul.Encode(cb, a, b, c) },
			"multiply broadcast":          func(cb *vk.CommandBuffer) error { return mul.Encode(cb, a, pc, c) },
			"multiply broadcast odd":      func(cb *vk.CommandBuffer) error { return mul.Encode(cb, oa, pc, ob) },
			"multiply gradient":           func(cb *vk.CommandBuffer) error { return gx.Encode(cb, a, b, c, e) },
			"multiply gradient per value": func(cb *vk.CommandBuffer) error { return gx.Encode(cb, a, b, pc, e) },
			"multiply gradient reduced":   func(cb *vk.CommandBuffer) error { return gy.Encode(cb, a, b, pc, pc2) },
		}
		for name, enc := range encodes {
			t.Run(f.String()+"/"+name, func(t *testing.T) {
				cb, err := dev.NewCommandBuffer()
				require.NoError(t, err)
				defer cb.Close()
				require.NoError(t, enc(cb)) // pipelines, scratch
				var encErr error
				n := testing.AllocsPerRun(50, func() {
					if err := enc(cb); err != nil {
						encErr = err
					}
				})
				require.NoError(t, encErr)
				require.Zero(t, n, "allocations per Encode")
			})
		}
	}
}
