#version 450
// Arithmetic forward (GRAD 0: out = z) and the gradient of a source that
// has the result's shape (GRAD 1 or 2: out = dy * dz/dsource, no
// reduction), over count values of the result (one dispatch's part: its
// batch images n < count/(C*H*W) and C channels). See
// arithmetic_common.glsl for the formulas.
//   MODE 0: every image has the result's shape and the part is one
//           contiguous run in each (value i at base + i).
//   MODE 1: H*W % 4 == 0 and every source is either spatially whole
//           (HxW) or one value per plane (1x1); every base is a multiple
//           of 4 where read in quads: quads of one plane.
//   MODE 2: any broadcast: each value's (n, c, h, w) from its index.
// flags: bit 0 quads (MODE 0: every base a multiple of 4), bit 1 / bit 2
// x / y spatially whole (MODE 1), bit 3 / bit 4 read x / y (the gradient
// of an unclamped sum needs neither).
// vkmps:variant f16 -DVKMPS_F16
#include "arithmetic_common.glsl"

layout(std430, binding = 3) writeonly buffer O { ELEM ov[]; };
layout(std430, binding = 3) writeonly buffer O4 { ELEM4 ov4[]; };

layout(push_constant) uniform Push {
	uint count;
	uint xBase, yBase, gBase, oBase;
	uint C, H, W;           // the result's channels (in this part), rows, columns
	uvec4 xs;               // x's strides along n, c, h, w in elements (0: broadcast)
	uvec4 ys;
	uint gSN;               // dy's batch stride (its channel stride is H*W)
	uint oSN;               // the output's batch stride
	uint flags;
	float ps, ss, bias, lo, hi;
} pc;

float value(float x, float y, float g) {
	if (GRAD == 0) return arithClamp(arithPre(x, y, pc.ps, pc.ss, pc.bias), pc.lo, pc.hi);
	return arithGrad(g, x, y, pc.ps, pc.ss, pc.bias, pc.lo, pc.hi);
}

vec4 value4(vec4 x, vec4 y, vec4 g) {
	vec4 r;
	[[unroll]] for (uint k = 0u; k < 4u; k++) r[k] = value(x[k], y[k], g[k]);
	return r;
}

bool readX() { return GRAD == 0 || (pc.flags & 8u) != 0u; }
bool readY() { return GRAD == 0 || (pc.flags & 16u) != 0u; }

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	uint gid = gl_GlobalInvocationID.x;
	bool rx = readX(), ry = readY();
	if (MODE == 0) {
		uint done = 0u;
		if ((pc.flags & 1u) != 0u) {
			uint quads = pc.count / 4u;
			for (uint q = gid; q < quads; q += stride) {
				vec4 x = rx ? LOAD4(xv4[pc.xBase / 4u + q]) : vec4(0.0);
				vec4 y = ry ? LOAD4(yv4[pc.yBase / 4u + q]) : vec4(0.0);
				vec4 g = GRAD != 0 ? LOAD4(gv4[pc.gBase / 4u + q]) : vec4(0.0);
				ov4[pc.oBase / 4u + q] = STORE4(value4(x, y, g));
			}
			done = quads * 4u;
		}
		for (uint i = done + gid; i < pc.count; i += stride) {
			float x = rx ? LOAD(xv[pc.xBase + i]) : 0.0;
			float y = ry ? LOAD(yv[pc.yBase + i]) : 0.0;
			float g = GRAD != 0 ? LOAD(gv[pc.gBase + i]) : 0.0;
			ov[pc.oBase + i] = STORE(value(x, y, g));
		}
		return;
	}
	uint plane = pc.H * pc.W;
	if (MODE == 1) {
		bool xFull = (pc.flags & 2u) != 0u, yFull = (pc.flags & 4u) != 0u;
		uint quads = pc.count / 4u;
		for (uint q = gid; q < quads; q += stride) {
			uint e = 4u * q, pl = e / plane, n = pl / pc.C, c = pl - n * pc.C, p = e - pl * plane;
			uint xo = pc.xBase + n * pc.xs.x + c * pc.xs.y, yo = pc.yBase + n * pc.ys.x + c * pc.ys.y;
			vec4 x = vec4(0.0), y = vec4(0.0), g = vec4(0.0);
			if (rx) x = xFull ? LOAD4(xv4[(xo + p) / 4u]) : vec4(LOAD(xv[xo]));
			if (ry) y = yFull ? LOAD4(yv4[(yo + p) / 4u]) : vec4(LOAD(yv[yo]));
			if (GRAD != 0) g = LOAD4(gv4[(pc.gBase + n * pc.gSN + c * plane + p) / 4u]);
			ov4[(pc.oBase + n * pc.oSN + c * plane + p) / 4u] = STORE4(value4(x, y, g));
		}
		return;
	}
	for (uint e = gid; e < pc.count; e += stride) {
		uint t = e / pc.W, w = e - t * pc.W;
		uint t2 = t / pc.H, h = t - t2 * pc.H;
		uint n = t2 / pc.C, c = t2 - n * pc.C;
		uint at = c * plane + h * pc.W + w;
		float x = rx ? LOAD(xv[pc.xBase + n * pc.xs.x + c * pc.xs.y + h * pc.xs.z + w * pc.xs.w]) : 0.0;
		float y = ry ? LOAD(yv[pc.yBase + n * pc.ys.x + c * pc.ys.y + h * pc.ys.z + w * pc.ys.w]) : 0.0;
		float g = GRAD != 0 ? LOAD(gv[pc.gBase + n * pc.gSN + at]) : 0.0;
		ov[pc.oBase + n * pc.oSN + at] = STORE(value(x, y, g));
	}
}
