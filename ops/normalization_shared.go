package ops

import (
	"errors"
	"fmt"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// normVecPipeline returns the pipeline of a normalization kernel's shader
// sh for f16 and vec4 (cached in pipes, [float16][vec4]), built with
// workgroup size local; neuron (nil: none) sets its neuron's constants.
func normVecPipeline(dev *vk.Device, pipes *[2][2]*vk.Pipeline, sh *spirv.Shader, label string, local int,
	neuron *NeuronDescriptor, f16, vec4 bool) (*vk.Pipeline, error) {
	i, j := 0, 0
	if f16 {
		i = 1
	}
	if vec4 {
		j = 1
	}
	if pipes[i][j] != nil {
		return pipes[i][j], nil
	}
	s, err := build(sh, f16)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	named := map[string]uint32{"local_size_x": uint32(local), "VEC": 1}
	if vec4 {
		named["VEC"] = 4
	}
	if neuron != nil {
		neuron.specConstants(named)
	}
	p, err := pipeline(dev, s, named)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	pipes[i][j] = p
	return p, nil
}

// ensureWords makes *buf (named label+" "+what) at least words 32-bit
// words; a smaller one is closed (it lives on while submitted work uses
// it).
func ensureWords(dev *vk.Device, buf **vk.Buffer, words int, label, what string) error {
	size := uint64(max(words, 4)) * 4
	if *buf != nil && (*buf).Size() >= size {
		return nil
	}
	if *buf != nil {
		(*buf).Close()
		*buf = nil
	}
	b, err := dev.NewBuffer(size, label+" "+what)
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	*buf = b
	return nil
}

// dummyBufferRange returns *dummy, a small buffer bound where a pass reads
// or writes nothing, making it on first use.
func dummyBufferRange(dev *vk.Device, dummy **vk.Buffer, label string) (vk.BufferRange, error) {
	if *dummy == nil {
		d, err := dev.NewBuffer(256, label+" unused binding")
		if err != nil {
			return vk.BufferRange{}, fmt.Errorf("%s: %w", label, err)
		}
		*dummy = d
	}
	return (*dummy).Whole(), nil
}

// closeBuffers closes and clears the buffers that are set.
func closeBuffers(bufs ...**vk.Buffer) error {
	var err error
	for _, b := range bufs {
		if *b != nil {
			err = errors.Join(err, (*b).Close())
			*b = nil
		}
	}
	return err
}
