#version 450
// convert: dst[dstBase + i] = src[srcBase + i] in the other format, for
// i < count: float16 -> float32 (exact), or with TO_HALF float32 -> float16
// (the device's conversion: round to nearest even on the devices vkmps is
// tested on). A grid-stride loop covers any count. ops.Convert.
// vkmps:variant tohalf -DTO_HALF
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x_id = 0) in;

#ifdef TO_HALF
layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) writeonly buffer Dst { float16_t dst[]; };
#else
layout(std430, binding = 0) readonly buffer Src { float16_t src[]; };
layout(std430, binding = 1) writeonly buffer Dst { float dst[]; };
#endif

layout(push_constant) uniform Push {
	uint count;
	uint srcBase;
	uint dstBase;
} pc;

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
#ifdef TO_HALF
		dst[pc.dstBase + i] = float16_t(src[pc.srcBase + i]);
#else
		dst[pc.dstBase + i] = float(src[pc.srcBase + i]);
#endif
	}
}
