#version 450
// fill16: dst[base + i] = bits for i < count, in 16-bit elements: Fill of a
// float16 image, whose runs may start or end mid-word, where
// vkCmdFillBuffer (4-byte granular) cannot. The value comes as half bits,
// so nothing is rounded here. A grid-stride loop covers any count.
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) writeonly buffer Dst { uint16_t dst[]; };

layout(push_constant) uniform Push {
	uint count; // elements to set
	uint base;  // element offset of the first in the bound range
	uint bits;  // the value, in the low 16 bits
} pc;

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
		dst[pc.base + i] = uint16_t(pc.bits);
	}
}
