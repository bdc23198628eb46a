#version 450
// The split-K sums of the convolution family's weight and bias gradients:
// out[outBase + i] = sum over s < splits, in ascending order, of
// in[inBase + s*count + i], for i < count. The order is fixed, so the
// gradients repeat bit for bit (no atomics).
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer In { float inv[]; };
layout(std430, binding = 1) writeonly buffer Out { float outv[]; };

layout(push_constant) uniform Push {
	uint count;
	uint splits;
	uint inBase;
	uint outBase;
} pc;

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
		float s = 0.0;
		for (uint k = 0; k < pc.splits; k++) s += inv[pc.inBase + k * pc.count + i];
		outv[pc.outBase + i] = s;
	}
}
