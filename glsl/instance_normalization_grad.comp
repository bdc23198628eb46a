#version 450
// vkmps:variant f16 -DVKMPS_F16
// instance_normalization_grad (MPSCNNInstanceNormalizationGradient): for
// each (n, c) plane of M = H*W values, with invstd = 1/sqrt(var + epsilon)
// and xhat = (x - mean)*invstd,
//   dx = gamma[c]*invstd * (dy - sum(dy)/M - xhat*sum(dy*xhat)/M).
// See instance_normalization_common.glsl for the two shapes of work. Each
// plane's sum(dy) and sum(dy*xhat) go to Sums (2 floats per plane, plane
// index n*sumsStride + c from sumsBase); T_REDUCE, one invocation per
// channel, adds them over the batch in order: dbeta[c] = sum of sum(dy),
// dgamma[c] = sum of sum(dy*xhat).
//
// Chunked planes take their four sums in one pass over x and dy, about
// shift = the plane's first value (d = x - shift): sum d, sum d*d,
// sum dy, sum dy*d; then mean = shift + sum(d)/M and
// sum(dy*(x - mean)) = sum(dy*d) - (mean - shift)*sum(dy).
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"

layout(push_constant) uniform Push {
	uint planes, channels, plane;
	uint segs, seg, tasks;
	uint xBase, xBatch, dyBase, dyBatch, dxBase, dxBatch;
	uint gBase;
	uint sumsBase, sumsStride; // plane (n0, c0)'s index in Sums, planes per batch image
	uint batches;              // T_REDUCE: batch images to add
	uint dgBase, dbBase;
	uint outputs; // T_REDUCE: 1 dgamma, 2 dbeta (bits)
	float epsilon;
} pc;

layout(std430, binding = 0) restrict readonly buffer X { ELEM x[]; };
layout(std430, binding = 0) restrict readonly buffer X4 { ELEM4 x4[]; };
layout(std430, binding = 1) restrict readonly buffer DY { ELEM dy[]; };
layout(std430, binding = 1) restrict readonly buffer DY4 { ELEM4 dy4[]; };
layout(std430, binding = 2) restrict writeonly buffer DX { ELEM dx[]; };
layout(std430, binding = 2) restrict writeonly buffer DX4 { ELEM4 dx4[]; };
layout(std430, binding = 3) readonly buffer Gamma { float gammaV[]; };
layout(std430, binding = 4) buffer Sums { float sums[]; };
layout(std430, binding = 5) writeonly buffer DGamma { float dgamma[]; };
layout(std430, binding = 6) writeonly buffer DBeta { float dbeta[]; };
// Chunked: the partial sums of segment s of plane q at q*segs + s, then
// plane q's coefficients (dx = a*dy + k1*x + k0) at planes*segs + q.
layout(std430, binding = 7) buffer Parts { vec4 part[]; };

#include "instance_normalization_common.glsl"

uint dyPlane(uint q) {
	uint n, c;
	planeOf(q, n, c);
	return pc.dyBase + n * pc.dyBatch + c * pc.plane;
}

uint dxPlane(uint q) {
	uint n, c;
	planeOf(q, n, c);
	return pc.dxBase + n * pc.dxBatch + c * pc.plane;
}

vec4 loadDy(uint e) {
	if (VEC == 4) return LOAD4(dy4[e / 4u]);
	return vec4(LOAD(dy[e]), 0.0, 0.0, 0.0);
}

void storeDx(uint o, vec4 v) {
	if (VEC == 4) {
		dx4[o / 4u] = STORE4(v);
	} else {
		dx[o] = STORE(v.x);
	}
}

// finish records plane q's sums sg = sum(dy) and sgx = sum(dy*xhat) and
// returns its coefficients (a, k1, k0): dx = a*dy + k1*x + k0.
vec3 finish(uint q, float mean, float invstd, float sg, float sgx) {
	uint n, c;
	planeOf(q, n, c);
	float m = float(pc.plane);
	float a = gammaV[pc.gBase + c] * invstd;
	float k1 = -a * invstd * sgx / m;
	float k0 = -a * sg / m - k1 * mean;
	if (gl_LocalInvocationID.x == 0u) {
		uint j = 2u * (pc.sumsBase + n * pc.sumsStride + c);
		sums[j] = sg;
		sums[j + 1u] = sgx;
	}
	return vec3(a, k1, k0);
}

// applyUnits writes dx over units [0, units) from elements xb, yb, ob.
void applyUnits(uint xb, uint yb, uint ob, uint units, vec3 k) {
	for (uint u = gl_LocalInvocationID.x; u < units; u += LOCAL) {
		uint e = u * uint(VEC);
		storeDx(ob + e, k.x * loadDy(yb + e) + (k.y * loadX(xb + e) + k.z));
	}
}

// plane does all of plane q in one workgroup.
void plane(uint q) {
	uint xb = xPlane(q), yb = dyPlane(q);
	vec2 mv = planeMoments(xb);
	float invstd = 1.0 / sqrt(mv.y + pc.epsilon);
	vec2 acc = vec2(0.0);
	uint units = pc.plane / uint(VEC);
	for (uint u = gl_LocalInvocationID.x; u < units; u += LOCAL) {
		uint e = u * uint(VEC);
		vec4 g = loadDy(yb + e);
		acc += vec2(hsum(g), hsum(g * (loadX(xb + e) - mv.x)));
	}
	vec2 s = reduce4(vec4(acc, 0.0, 0.0)).xy;
	applyUnits(xb, yb, dxPlane(q), units, finish(q, mv.x, invstd, s.x, s.y * invstd));
}

void main() {
	if ((pc.tasks & T_REDUCE) != 0u) {
		uint c = gl_GlobalInvocationID.x;
		if (c >= pc.channels) return;
		float sg = 0.0, sgx = 0.0;
		for (uint n = 0u; n < pc.batches; n++) {
			uint j = 2u * (pc.sumsBase + n * pc.sumsStride + c);
			sg += sums[j];
			sgx += sums[j + 1u];
		}
		if ((pc.outputs & 1u) != 0u) dgamma[pc.dgBase + c] = sgx;
		if ((pc.outputs & 2u) != 0u) dbeta[pc.dbBase + c] = sg;
		return;
	}
	uint w = workgroup();
	if (pc.tasks == 0u) {
		if (w < pc.planes) plane(w);
		return;
	}
	if ((pc.tasks & T_MERGE) != 0u) {
		if (w >= pc.planes) return;
		vec4 acc = vec4(0.0);
		for (uint s = gl_LocalInvocationID.x; s < pc.segs; s += LOCAL) acc += part[w * pc.segs + s];
		vec4 t = reduce4(acc);
		float shift = LOAD(x[xPlane(w)]);
		vec2 mv = meanVar(t.xy, shift, float(pc.plane));
		float invstd = 1.0 / sqrt(mv.y + pc.epsilon);
		float sgx = (t.w - (mv.x - shift) * t.z) * invstd;
		vec3 k = finish(w, mv.x, invstd, t.z, sgx);
		if (gl_LocalInvocationID.x == 0u) part[pc.planes * pc.segs + w] = vec4(k, 0.0);
		return;
	}
	if (w >= pc.planes * pc.segs) return;
	// Apply workgroups run the segments backwards: the first to run read
	// what the statistics pass read last, likely still in the cache.
	if ((pc.tasks & T_APPLY) != 0u) w = pc.planes * pc.segs - 1u - w;
	uint q = w / pc.segs, s = w % pc.segs;
	uint p0, units;
	segment(s, p0, units);
	uint xb = xPlane(q) + p0, yb = dyPlane(q) + p0;
	if ((pc.tasks & T_STATS) != 0u) {
		float shift = LOAD(x[xPlane(q)]);
		vec4 acc = vec4(0.0);
		for (uint u = gl_LocalInvocationID.x; u < units; u += LOCAL) {
			uint e = u * uint(VEC);
			vec4 g = loadDy(yb + e);
			vec4 d = loadX(xb + e) - shift;
			acc += vec4(hsum(d), hsum(d * d), hsum(g), hsum(g * d));
		}
		vec4 t = reduce4(acc);
		if (gl_LocalInvocationID.x == 0u) part[w] = t;
		return;
	}
	applyUnits(xb, yb, dxPlane(q) + p0, units, part[pc.planes * pc.segs + q].xyz);
}
