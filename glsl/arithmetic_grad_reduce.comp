#version 450
// ArithmeticGradient of a broadcast source, first pass: for output o (an
// element of the source's shape; O of them) and slice j < slices, the sum
// of dy * dz/dsource (arithmetic_common.glsl) over the result's values
// r in [j*chunk, min((j+1)*chunk, R)) of o's broadcast set, R the product
// of the reduced axes' sizes, into partials[pBase + o*strideO + j*strideJ].
// arithmetic_grad_sum.comp adds the slices in order.
//   MODE 0: one invocation per (o, j), o fastest (neighbours read
//           neighbouring values when only N or C are reduced).
//   MODE 1: one workgroup per (o, j): strided, then a tree in shared
//           memory (H or W reduced).
// Each sum runs in a fixed order: the same bits on every run.
// vkmps:variant f16 -DVKMPS_F16
#include "arithmetic_common.glsl"

layout(std430, binding = 3) writeonly buffer Partials { float partials[]; };

layout(push_constant) uniform Push {
	uvec4 xs;      // x's strides along n, c, h, w in elements (0: broadcast)
	uvec4 ys;
	uint outputs;  // O
	uint reduce;   // R
	uint chunk;    // values of the broadcast set per slice
	uint slices;
	uint C, H, W;  // the result's extents
	uint xBase, yBase, gBase;
	uint gSN;      // dy's batch stride
	uint pBase, strideO, strideJ;
	uint flags;    // bits 0..3: n, c, h, w reduced; bit 4 / 5: read x / y;
	               // bit 6: every source is spatially whole or 1x1; bit 7 / 8: x / y whole
	float ps, ss, bias, lo, hi;
} pc;

shared float part[gl_WorkGroupSize.x];

// coords splits i over extents (c, h, w) (n the rest).
uvec4 coords(uint i, uint c, uint h, uint w) {
	uint t = i / w, t2 = t / h;
	return uvec4(t2 / c, t2 - (t2 / c) * c, t - t2 * h, i - t * w);
}

// term is dy * dz/dsource at result position q.
float term(uvec4 q) {
	float x = (pc.flags & 16u) != 0u ? LOAD(xv[pc.xBase + q.x * pc.xs.x + q.y * pc.xs.y + q.z * pc.xs.z + q.w * pc.xs.w]) : 0.0;
	float y = (pc.flags & 32u) != 0u ? LOAD(yv[pc.yBase + q.x * pc.ys.x + q.y * pc.ys.y + q.z * pc.ys.z + q.w * pc.ys.w]) : 0.0;
	float g = LOAD(gv[pc.gBase + q.x * pc.gSN + (q.y * pc.H + q.z) * pc.W + q.w]);
	return arithGrad(g, x, y, pc.ps, pc.ss, pc.bias, pc.lo, pc.hi);
}

void main() {
	bool rc = (pc.flags & 2u) != 0u, rh = (pc.flags & 4u) != 0u, rw = (pc.flags & 8u) != 0u;
	// o runs over the unreduced extents, r over the reduced ones.
	uint oc = rc ? 1u : pc.C, oh = rh ? 1u : pc.H, ow = rw ? 1u : pc.W;
	uint qc = rc ? pc.C : 1u, qh = rh ? pc.H : 1u, qw = rw ? pc.W : 1u;
	uint work = pc.outputs * pc.slices;
	if (MODE == 0) {
		uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
		for (uint t = gl_GlobalInvocationID.x; t < work; t += stride) {
			uint j = t / pc.outputs, o = t - j * pc.outputs;
			uvec4 base = coords(o, oc, oh, ow);
			uint end = min((j + 1u) * pc.chunk, pc.reduce);
			float s = 0.0;
			for (uint r = j * pc.chunk; r < end; r++) s += term(base + coords(r, qc, qh, qw));
			partials[pc.pBase + o * pc.strideO + j * pc.strideJ] = s;
		}
		return;
	}
	uint lid = gl_LocalInvocationID.x;
	// Planes reduced whole, every source whole or 1x1 per plane (a
	// per-channel bias or scale): r = q*plane + p with p the offset in
	// every image's plane, walked without dividing.
	bool planes = rh && rw && (pc.flags & 64u) != 0u;
	bool xWhole = (pc.flags & 128u) != 0u, yWhole = (pc.flags & 256u) != 0u;
	bool rx = (pc.flags & 16u) != 0u, ry = (pc.flags & 32u) != 0u;
	uint plane = pc.H * pc.W;
	for (uint u = gl_WorkGroupID.x; u < work; u += gl_NumWorkGroups.x) {
		uint o = u / pc.slices, j = u - o * pc.slices;
		uvec4 base = coords(o, oc, oh, ow);
		uint end = min((j + 1u) * pc.chunk, pc.reduce);
		float s = 0.0;
		if (planes) {
			uint r = j * pc.chunk + lid;
			uint q = r / plane, p = r - q * plane;
			uint qn = q / qc, qi = q - qn * qc; // the reduced batch image and channel
			for (; r < end; r += gl_WorkGroupSize.x) {
				uint n = base.x + qn, c = base.y + qi;
				float x = rx ? LOAD(xv[pc.xBase + n * pc.xs.x + c * pc.xs.y + (xWhole ? p : 0u)]) : 0.0;
				float y = ry ? LOAD(yv[pc.yBase + n * pc.ys.x + c * pc.ys.y + (yWhole ? p : 0u)]) : 0.0;
				float g = LOAD(gv[pc.gBase + n * pc.gSN + c * plane + p]);
				s += arithGrad(g, x, y, pc.ps, pc.ss, pc.bias, pc.lo, pc.hi);
				p += gl_WorkGroupSize.x;
				while (p >= plane) {
					p -= plane;
					if (++qi == qc) {
						qi = 0u;
						qn++;
					}
				}
			}
		} else {
			for (uint r = j * pc.chunk + lid; r < end; r += gl_WorkGroupSize.x) s += term(base + coords(r, qc, qh, qw));
		}
		part[lid] = s;
		barrier();
		for (uint k = gl_WorkGroupSize.x / 2u; k > 0u; k >>= 1) {
			if (lid < k) part[lid] += part[lid + k];
			barrier();
		}
		if (lid == 0u) partials[pc.pBase + o * pc.strideO + j * pc.strideJ] = part[0];
		barrier();
	}
}
