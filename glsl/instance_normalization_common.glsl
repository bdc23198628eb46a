// Shared by instance_normalization.comp and instance_normalization_grad.comp.
// A dispatch covers pc.planes (n, c) planes of pc.plane values each, plane
// q being batch image q / pc.channels, channel q % pc.channels. Two
// shapes of work:
//   - small planes: one workgroup per plane does all of it (its second
//     read of the plane comes from the cache);
//   - planes larger than a chunk (T_STATS, T_MERGE, T_APPLY): a plane is
//     cut into pc.segs segments of pc.seg values; one workgroup per
//     segment writes the segment's partial sums, one workgroup per plane
//     adds them in segment order into the plane's coefficients, one
//     workgroup per segment applies them.
// Every sum is taken in a fixed order (per invocation in a fixed stride,
// then a fixed tree; no atomics): results repeat bit for bit.
//
// The includer declares the push constants `pc` (planes, channels, plane,
// segs, seg, tasks, xBase, xBatch) and the X and X4 buffers before
// including this file.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;
// VEC: values per load, 1 or 4 (planes, segments and bases multiples of 4).
layout(constant_id = 1) const int VEC = 1;
#define LOCAL gl_WorkGroupSize.x

// Task bits of pc.tasks (0: one workgroup per plane).
#define T_STATS 1u  // one workgroup per segment: partial sums
#define T_MERGE 2u  // one workgroup per plane: the partials into coefficients
#define T_APPLY 4u  // one workgroup per segment: the result
#define T_REDUCE 8u // gradient: one invocation per channel adds the planes' sums into dgamma, dbeta

shared vec4 red[gl_WorkGroupSize.x];

// reduce4 returns the workgroup's sum of v, in a fixed order, to every
// invocation. Called in uniform control flow.
vec4 reduce4(vec4 v) {
	uint lid = gl_LocalInvocationID.x;
	red[lid] = v;
	barrier();
	for (uint s = LOCAL / 2u; s > 0u; s >>= 1) {
		if (lid < s) red[lid] += red[lid + s];
		barrier();
	}
	vec4 r = red[0];
	barrier();
	return r;
}

// workgroup is the flat index of this workgroup (dispatches wider than
// the device's x count are 2-D).
uint workgroup() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// planeOf returns the batch image and channel of plane q.
void planeOf(uint q, out uint n, out uint c) {
	n = q / pc.channels;
	c = q % pc.channels;
}

// xPlane is the element of plane q's first value in X.
uint xPlane(uint q) {
	uint n, c;
	planeOf(q, n, c);
	return pc.xBase + n * pc.xBatch + c * pc.plane;
}

// loadX returns the load unit at element e of X (VEC == 1: in .x).
vec4 loadX(uint e) {
	if (VEC == 4) return LOAD4(x4[e / 4u]);
	return vec4(LOAD(x[e]), 0.0, 0.0, 0.0);
}

// moments returns sum(d) and sum(d*d) over a unit's values, d = v - shift.
vec2 moments(vec4 v, float shift) {
	if (VEC == 4) {
		vec4 d = v - shift;
		return vec2((d.x + d.y) + (d.z + d.w), (d.x * d.x + d.y * d.y) + (d.z * d.z + d.w * d.w));
	}
	float d = v.x - shift;
	return vec2(d, d * d);
}

// hsum returns the sum of a unit's values.
float hsum(vec4 v) {
	if (VEC == 4) return (v.x + v.y) + (v.z + v.w);
	return v.x;
}

// segment returns the first value and the units of segment s of a plane.
void segment(uint s, out uint p0, out uint units) {
	p0 = s * pc.seg;
	units = (min(pc.plane, p0 + pc.seg) - p0) / uint(VEC);
}

// meanVar returns the mean and biased variance of m values from their
// sums s (sum of d, sum of d*d) about shift (large means do not cancel).
vec2 meanVar(vec2 s, float shift, float m) {
	float d = s.x / m;
	return vec2(shift + d, max(s.y / m - d * d, 0.0));
}

// planeMoments returns the mean and biased variance of the plane at
// element base of X, one workgroup summing it.
vec2 planeMoments(uint base) {
	float shift = LOAD(x[base]);
	vec2 acc = vec2(0.0);
	uint units = pc.plane / uint(VEC);
	for (uint u = gl_LocalInvocationID.x; u < units; u += LOCAL) acc += moments(loadX(base + u * uint(VEC)), shift);
	return meanVar(reduce4(vec4(acc, 0.0, 0.0)).xy, shift, float(pc.plane));
}
