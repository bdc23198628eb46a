package ops

import (
	"fmt"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// build returns sh, or its "f16" variant for float16 images.
func build(sh *spirv.Shader, f16 bool) (*spirv.Shader, error) {
	if !f16 {
		return sh, nil
	}
	if v := sh.Variant("f16"); v != nil {
		return v, nil
	}
	return nil, fmt.Errorf("%w: shader %s has no float16 build", ErrFormat, sh.Name)
}

// pipeline returns dev's pipeline of sh with specialization constants set
// by name. Names the shader does not declare are skipped (the compiler
// drops constants a shader does not use); undeclared ones keep their
// defaults.
func pipeline(dev *vk.Device, sh *spirv.Shader, named map[string]uint32) (*vk.Pipeline, error) {
	values := make([]uint32, len(sh.Spec))
	for i, c := range sh.Spec {
		values[i] = c.Default
		if v, ok := named[c.Name]; ok {
			values[i] = v
		}
	}
	return dev.Pipeline(sh, values...)
}
