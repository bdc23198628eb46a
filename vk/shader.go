package vk

// Shader is a compute shader as Device.Pipeline needs it: its SPIR-V and
// the interface reflected from it. vkmps's shaders (package spirv's
// *Shader) implement it; package vk holds no shader registry of its own
// and does not import package spirv.
//
// Implementations are compared by identity: the device caches one shader
// module and one pipeline layout per Shader value, so a shader should be
// one long-lived value (a pointer), and its methods must return the same
// results on every call. Slices returned are not modified by vk.
type Shader interface {
	// ShaderName names the shader in pipeline names (Pipeline.String)
	// and errors.
	ShaderName() string
	// Code returns the SPIR-V words of the module; its entry point is
	// "main".
	Code() ([]uint32, error)
	// BindingWrites returns, per storage buffer of descriptor set 0
	// (bindings 0..n-1, dense), whether the shader may write it (false:
	// GLSL readonly).
	BindingWrites() []bool
	// PushConstantBytes returns the size of the push-constant block.
	PushConstantBytes() uint32
	// SpecConstants returns the specialization constants' IDs and
	// declared default values, sorted by ID.
	SpecConstants() (ids, defaults []uint32)
	// WorkgroupSize returns the declared workgroup size and, per axis, the
	// ID of the specialization constant that sets it (local_size_x_id),
	// or -1 where it is fixed.
	WorkgroupSize() (size [3]uint32, specIDs [3]int)
}
