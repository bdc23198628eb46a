#version 450
// copy: dst[dstOffset + i] = src[srcOffset + i] for i < count, in 16-byte
// units (vec4). A grid-stride loop, so any dispatch size covers any count.
// It is the measure of a device's copy bandwidth for the benchmarks.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { vec4 dst[]; };

layout(push_constant) uniform Push {
	uint count;     // vec4 elements to copy
	uint srcOffset; // in vec4 elements
	uint dstOffset; // in vec4 elements
} pc;

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
		dst[pc.dstOffset + i] = src[pc.srcOffset + i];
	}
}
