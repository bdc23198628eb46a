#version 450
// vkmps:variant f16 -DVKMPS_F16
// instance_normalization (MPSCNNInstanceNormalization): for each (n, c)
// plane of H*W values with its mean and biased variance,
//   y = gamma[c] * (x - mean) / sqrt(var + epsilon) + beta[c].
// See instance_normalization_common.glsl for the two shapes of work.
// Statistics are sums of d = x - shift, shift the plane's first value.
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"

layout(push_constant) uniform Push {
	uint planes;   // planes in this dispatch: batches * channels
	uint channels; // channels in this dispatch
	uint plane;    // H*W
	uint segs, seg; // segments per plane and values per segment (chunked)
	uint tasks;    // T_* bits (0: one workgroup per plane)
	uint xBase, xBatch, yBase, yBatch; // element of (n0, c0, 0) and values per batch image
	uint gBase, bBase; // element of channel c0 in gamma and beta
	float epsilon;
} pc;

layout(std430, binding = 0) restrict readonly buffer X { ELEM x[]; };
layout(std430, binding = 0) restrict readonly buffer X4 { ELEM4 x4[]; };
layout(std430, binding = 1) restrict writeonly buffer Y { ELEM y[]; };
layout(std430, binding = 1) restrict writeonly buffer Y4 { ELEM4 y4[]; };
layout(std430, binding = 2) readonly buffer Gamma { float gammaV[]; };
layout(std430, binding = 3) readonly buffer Beta { float betaV[]; };
// Chunked: the partial sums of segment s of plane q at q*segs + s, then
// plane q's coefficients (y = x*a + b) at planes*segs + q.
layout(std430, binding = 4) buffer Parts { vec2 part[]; };

#include "instance_normalization_common.glsl"

uint yPlane(uint q) {
	uint n, c;
	planeOf(q, n, c);
	return pc.yBase + n * pc.yBatch + c * pc.plane;
}

void storeY(uint o, vec4 v) {
	if (VEC == 4) {
		y4[o / 4u] = STORE4(v);
	} else {
		y[o] = STORE(v.x);
	}
}

// coefficients returns a and b of plane q (y = x*a + b) for its mean and
// variance mv.
vec2 coefficients(uint q, vec2 mv) {
	uint c = q % pc.channels;
	float a = gammaV[pc.gBase + c] / sqrt(mv.y + pc.epsilon);
	return vec2(a, betaV[pc.bBase + c] - mv.x * a);
}

// applyUnits writes y = x*a + b over units [0, units) of stride VEC from
// elements xb of X and yb of Y.
void applyUnits(uint xb, uint yb, uint units, vec2 ab) {
	for (uint u = gl_LocalInvocationID.x; u < units; u += LOCAL) {
		uint e = u * uint(VEC);
		storeY(yb + e, loadX(xb + e) * ab.x + ab.y);
	}
}

void main() {
	uint w = workgroup();
	if (pc.tasks == 0u) {
		if (w >= pc.planes) return;
		uint xb = xPlane(w);
		applyUnits(xb, yPlane(w), pc.plane / uint(VEC), coefficients(w, planeMoments(xb)));
		return;
	}
	if ((pc.tasks & T_MERGE) != 0u) {
		if (w >= pc.planes) return;
		vec2 acc = vec2(0.0);
		for (uint s = gl_LocalInvocationID.x; s < pc.segs; s += LOCAL) acc += part[w * pc.segs + s];
		vec2 sums = reduce4(vec4(acc, 0.0, 0.0)).xy;
		if (gl_LocalInvocationID.x == 0u) {
			vec2 mv = meanVar(sums, LOAD(x[xPlane(w)]), float(pc.plane));
			part[pc.planes * pc.segs + w] = coefficients(w, mv);
		}
		return;
	}
	if (w >= pc.planes * pc.segs) return;
	// Apply workgroups run the segments backwards: the first to run read
	// what the statistics pass read last, likely still in the cache.
	if ((pc.tasks & T_APPLY) != 0u) w = pc.planes * pc.segs - 1u - w;
	uint q = w / pc.segs, s = w % pc.segs;
	uint p0, units;
	segment(s, p0, units);
	uint xb = xPlane(q) + p0;
	if ((pc.tasks & T_STATS) != 0u) {
		float shift = LOAD(x[xPlane(q)]);
		vec2 acc = vec2(0.0);
		for (uint u = gl_LocalInvocationID.x; u < units; u += LOCAL) acc += moments(loadX(xb + u * uint(VEC)), shift);
		vec2 sums = reduce4(vec4(acc, 0.0, 0.0)).xy;
		if (gl_LocalInvocationID.x == 0u) part[w] = sums;
		return;
	}
	applyUnits(xb, yPlane(q) + p0, units, part[pc.planes * pc.segs + q]);
}
