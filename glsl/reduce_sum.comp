#version 450
// reduce_sum: out[outBase] = scale * sum of in[inBase + i] for i < count, by
// one workgroup in a fixed order (each invocation sums a strided run, then a
// tree), so the result repeats bit for bit.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer In { float inv[]; };
layout(std430, binding = 1) writeonly buffer Out { float outv[]; };

layout(push_constant) uniform Push {
	uint count;
	uint inBase;
	uint outBase;
	float scale;
} pc;

shared float partial[gl_WorkGroupSize.x];

void main() {
	uint lid = gl_LocalInvocationID.x;
	float s = 0.0;
	for (uint i = lid; i < pc.count; i += gl_WorkGroupSize.x) s += inv[pc.inBase + i];
	partial[lid] = s;
	barrier();
	for (uint k = gl_WorkGroupSize.x / 2; k > 0; k >>= 1) {
		if (lid < k) partial[lid] += partial[lid + k];
		barrier();
	}
	if (lid == 0) outv[pc.outBase] = pc.scale * partial[0];
}
