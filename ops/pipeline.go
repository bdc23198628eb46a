package ops

import (
	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

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
