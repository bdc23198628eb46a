#version 450
// ArithmeticGradient of a source broadcast over whole planes (H and W
// reduced, every source spatially whole or 1x1: a per-channel or
// per-image bias or scale), first pass: for output o (O of them, over the
// unreduced N and C) and slice j < slices, the sum of dy * dz/dsource
// (arithmetic_common.glsl) over units [j*chunk, min((j+1)*chunk, R)) of
// o's broadcast set, R units in all: the planes of the reduced batch
// images and channels one after another, VEC values a unit (4: one vector
// load per image, every plane a multiple of 4 values and every base
// aligned), into partials[o*slices + j]; arithmetic_grad_sum.comp adds
// the slices in order.
//
// One workgroup per (o, j), striding over the pairs: many workgroups per
// output, so the reduction reads at the bandwidth of a copy. Invocations
// take neighbouring units (coalesced), U units per step with every load
// issued before the arithmetic; a unit's plane and position come from
// multiply-high divisions (fdiv). Each invocation adds its units in order
// into a vector, then its lanes, then the workgroup adds the invocations
// in a fixed tree: the same bits on every run.
// vkmps:variant f16 -DVKMPS_F16
#include "arithmetic_common.glsl"

layout(constant_id = 4) const uint VEC = 1;       // values per unit: 1 or 4
layout(constant_id = 5) const bool RX = false;    // dz/dsource reads x
layout(constant_id = 6) const bool RY = false;    // ... reads y
layout(constant_id = 7) const bool XWHOLE = true; // x is whole per plane (else 1x1)
layout(constant_id = 8) const bool YWHOLE = true;

layout(std430, binding = 3) writeonly buffer Partials { float partials[]; };

layout(push_constant) uniform Push {
	uint xsN, xsC;  // x's batch and channel strides in elements (0: broadcast)
	uint ysN, ysC;
	uint gsN;       // dy's batch stride
	uint plane;     // H*W
	uint outputs;   // O
	uint oc;        // unreduced channels: an output o is (o / oc, o % oc)
	uint units;     // R
	uint chunk;     // units per slice
	uint slices;
	uint planeU;    // units per plane
	uint planeM, planeS; // fdiv magic of planeU
	uint qc;        // reduced channels: a reduced plane q is (q / qc, q % qc)
	uint qcM, qcS;
	uint xBase, yBase, gBase;
	uint rn, rc;    // 1 where N, C are reduced
	float ps, ss, bias, lo, hi;
} pc;

const uint U = 4u;

shared float part[gl_WorkGroupSize.x];

// fdiv returns n / d for n < 2^31 given d's magic number m and shift s
// (the host's upMagic).
uint fdiv(uint n, uint m, uint s) {
	uint hi, lo;
	umulExtended(n, m, hi, lo);
	return (hi + n) >> s;
}

// unitAt gives unit u's element index in dy (its first value), and the
// element of x and y it reads (the first value where whole), for the
// output whose first batch image and channel are (n0, c0).
void unitAt(uint u, uint n0, uint c0, out uint g, out uint x, out uint y) {
	uint q = fdiv(u, pc.planeM, pc.planeS);
	uint p = (u - q * pc.planeU) * VEC;
	uint qn = fdiv(q, pc.qcM, pc.qcS);
	uint n = n0 + qn, c = c0 + (q - qn * pc.qc);
	g = pc.gBase + n * pc.gsN + c * pc.plane + p;
	x = pc.xBase + n * pc.xsN + c * pc.xsC + (XWHOLE ? p : 0u);
	y = pc.yBase + n * pc.ysN + c * pc.ysC + (YWHOLE ? p : 0u);
}

vec4 loadG(uint i) {
	if (VEC == 4u) return LOAD4(gv4[i / 4u]);
	return vec4(LOAD(gv[i]), 0.0, 0.0, 0.0);
}

vec4 loadSrc(bool whole, uint i, bool isX) {
	if (VEC == 4u && whole) return isX ? LOAD4(xv4[i / 4u]) : LOAD4(yv4[i / 4u]);
	return vec4(isX ? LOAD(xv[i]) : LOAD(yv[i]));
}

// terms returns the unit's terms dy * dz/dsource (lanes past VEC are 0).
vec4 terms(vec4 g, vec4 x, vec4 y) {
	vec4 t = vec4(0.0);
	[[unroll]] for (uint l = 0u; l < VEC; l++) t[l] = arithGrad(g[l], x[l], y[l], pc.ps, pc.ss, pc.bias, pc.lo, pc.hi);
	return t;
}

void main() {
	uint lid = gl_LocalInvocationID.x;
	uint wg = gl_WorkGroupSize.x;
	uint work = pc.outputs * pc.slices;
	for (uint item = gl_WorkGroupID.x; item < work; item += gl_NumWorkGroups.x) {
		uint o = item / pc.slices, j = item - o * pc.slices;
		uint on = o / pc.oc;
		uint n0 = pc.rn != 0u ? 0u : on, c0 = pc.rc != 0u ? 0u : o - on * pc.oc;
		uint end = min((j + 1u) * pc.chunk, pc.units);
		vec4 acc = vec4(0.0);
		uint u = j * pc.chunk + lid;
		for (; u + (U - 1u) * wg < end; u += U * wg) {
			vec4 g[U], x[U], y[U];
			[[unroll]] for (uint k = 0u; k < U; k++) {
				uint gi, xi, yi;
				unitAt(u + k * wg, n0, c0, gi, xi, yi);
				g[k] = loadG(gi);
				x[k] = RX ? loadSrc(XWHOLE, xi, true) : vec4(0.0);
				y[k] = RY ? loadSrc(YWHOLE, yi, false) : vec4(0.0);
			}
			[[unroll]] for (uint k = 0u; k < U; k++) acc += terms(g[k], x[k], y[k]);
		}
		for (; u < end; u += wg) {
			uint gi, xi, yi;
			unitAt(u, n0, c0, gi, xi, yi);
			vec4 x = RX ? loadSrc(XWHOLE, xi, true) : vec4(0.0);
			vec4 y = RY ? loadSrc(YWHOLE, yi, false) : vec4(0.0);
			acc += terms(loadG(gi), x, y);
		}
		part[lid] = (acc.x + acc.y) + (acc.z + acc.w);
		barrier();
		for (uint h = wg / 2u; h > 0u; h >>= 1) {
			if (lid < h) part[lid] += part[lid + h];
			barrier();
		}
		if (lid == 0u) partials[o * pc.slices + j] = part[0];
		barrier();
	}
}
