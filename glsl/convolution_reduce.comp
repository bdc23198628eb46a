#version 450
// The split-K sums of the convolution family's weight and bias gradients:
// out[outBase + i] = sum over s < splits of in[inBase + s*count + i], for
// i < count. With LANES 1, one invocation adds an output's splits in
// ascending order. With LANES > 1 (few outputs of many splits: ops/gemm.go's
// reduceLanes), LANES invocations share an output: lane l adds splits l,
// l + LANES, l + 2*LANES, ... in ascending order, and the lanes' sums are
// then added in lane order; each workgroup takes blocks of
// local_size_x / LANES neighbouring outputs. Either order is fixed, so the
// gradients repeat bit for bit (no atomics).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint LANES = 1;

layout(std430, binding = 0) readonly buffer In { float inv[]; };
layout(std430, binding = 1) writeonly buffer Out { float outv[]; };

layout(push_constant) uniform Push {
	uint count;
	uint splits;
	uint inBase;
	uint outBase;
} pc;

shared float lanesum[gl_WorkGroupSize.x];

void main() {
	if (LANES == 1u) {
		uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
		for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
			float s = 0.0;
			for (uint k = 0; k < pc.splits; k++) s += inv[pc.inBase + k * pc.count + i];
			outv[pc.outBase + i] = s;
		}
		return;
	}
	uint per = gl_WorkGroupSize.x / LANES; // outputs per block
	uint lid = gl_LocalInvocationID.x, o = lid % per, lane = lid / per;
	for (uint base = gl_WorkGroupID.x * per; base < pc.count; base += gl_NumWorkGroups.x * per) {
		uint i = base + o;
		float s = 0.0;
		if (i < pc.count) {
			for (uint k = lane; k < pc.splits; k += LANES) s += inv[pc.inBase + k * pc.count + i];
		}
		lanesum[lid] = s;
		barrier();
		if (lane == 0u && i < pc.count) {
			float t = lanesum[o];
			for (uint l = 1u; l < LANES; l++) t += lanesum[l * per + o];
			outv[pc.outBase + i] = t;
		}
		barrier();
	}
}
