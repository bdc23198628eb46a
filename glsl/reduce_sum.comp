#version 450
// reduce_sum: the loss family's last reduction, by one workgroup in a fixed
// order (each invocation sums a strided run, then a tree), so the result
// repeats bit for bit. Over n = pc.count partials of loss.comp:
//   S = sum of sums[sumBase + i] (float), K = sum of counts[countBase + i]
//   (uint, exact).
// Without COUNT: out[outBase] = scale * S (the image's element type).
// With COUNT:    out[outBase] = K == 0 ? 0 : scale * S / K.
// With FACTOR:   factor[outBase] = K == 0 ? 0 : scale / K (float32; the
//                loss gradient's scale for the sum by nonzero weights).
// vkmps:variant f16 -DVKMPS_F16
#include "elem.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool COUNT = false;
layout(constant_id = 2) const bool FACTOR = false;
const bool SUMS = !FACTOR;
const bool COUNTS = COUNT || FACTOR;

layout(std430, binding = 0) readonly buffer Sums { float sums[]; };
layout(std430, binding = 0) readonly buffer Counts { uint counts[]; };
layout(std430, binding = 1) writeonly buffer Out { ELEM outv[]; };
layout(std430, binding = 1) writeonly buffer Factor { float factor[]; };

layout(push_constant) uniform Push {
	uint count;
	uint sumBase;
	uint countBase;
	uint outBase;
	float scale;
} pc;

shared float partS[gl_WorkGroupSize.x];
shared uint partK[gl_WorkGroupSize.x];

void main() {
	uint lid = gl_LocalInvocationID.x;
	float s = 0.0;
	uint k = 0;
	for (uint i = lid; i < pc.count; i += gl_WorkGroupSize.x) {
		if (SUMS) s += sums[pc.sumBase + i];
		if (COUNTS) k += counts[pc.countBase + i];
	}
	if (SUMS) partS[lid] = s;
	if (COUNTS) partK[lid] = k;
	barrier();
	for (uint h = gl_WorkGroupSize.x / 2; h > 0; h >>= 1) {
		if (lid < h) {
			if (SUMS) partS[lid] += partS[lid + h];
			if (COUNTS) partK[lid] += partK[lid + h];
		}
		barrier();
	}
	if (lid != 0) return;
	if (FACTOR) {
		factor[pc.outBase] = partK[0] == 0 ? 0.0 : pc.scale / float(partK[0]);
	} else if (COUNT) {
		outv[pc.outBase] = STORE(partK[0] == 0 ? 0.0 : pc.scale * partS[0] / float(partK[0]));
	} else {
		outv[pc.outBase] = STORE(pc.scale * partS[0]);
	}
}
