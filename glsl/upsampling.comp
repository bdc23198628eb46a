#version 450
// UpsamplingNearest and UpsamplingBilinear (MPSCNNUpsamplingNearest,
// MPSCNNUpsamplingBilinear; PyTorch F.interpolate, integer scales): see
// upsampling_common.glsl for the positions.
//   nearest:  dst[yo][xo] = src[yo / SY][xo / SX]; an item is one source
//             row's quad, stored into its SY destination rows (each source
//             value is loaded once).
//   bilinear: dst[yo][xo] = (1-ly)*((1-lx)*src[y0][x0] + lx*src[y0][x1])
//                         + ly*((1-lx)*src[y1][x0] + lx*src[y1][x1]),
//             the same expression as PyTorch's; an item is a destination
//             row's quad, which loads the WIN source columns its taps lie
//             in once per source row and picks each lane's pair with
//             selects.
// vkmps:variant f16 -DVKMPS_F16
#include "upsampling_common.glsl"

// The source columns a bilinear quad reads: 4 outputs span 3/s source
// pixels, so their taps i0 lie within 3 of the first lane's (s = 1) or 2
// (s >= 2), and i1 one further.
const int WIN = SX == 1 ? 5 : 4;

layout(std430, binding = 0) readonly buffer Src { ELEM src[]; };
layout(std430, binding = 1) writeonly buffer Dst { ELEM dst[]; };
layout(std430, binding = 1) writeonly buffer Dst4 { ELEM4 dst4[]; };

void storeQuad(uint rowStart, int x0, vec4 v) {
	if (VOUT) {
		dst4[(rowStart + uint(x0)) / 4u] = STORE4(v);
		return;
	}
	[[unroll]] for (int l = 0; l < 4; l++) {
		if (x0 + l < pc.wo) dst[rowStart + uint(x0 + l)] = STORE(v[l]);
	}
}

void main() {
	int q, row;
	uint ip, op;
	if (!workItem(q, row, ip, op)) return;
	int x0 = 4 * q;
	vec4 v;
	if (MODE == 0) {
		uint srow = ip + uint(row * pc.w);
		[[unroll]] for (int l = 0; l < 4; l++) {
			v[l] = LOAD(src[srow + uint(min(x0 + l, pc.wo - 1) / SX)]);
		}
		for (int k = 0; k < SY; k++) {
			storeQuad(op + uint((row * SY + k) * pc.wo), x0, v);
		}
		return;
	}
	int y0, y1;
	float ly;
	taps(row, pc.h, SY, pc.invY, pc.denYM, pc.denYS, y0, y1, ly);
	uint r0 = ip + uint(y0 * pc.w), r1 = ip + uint(y1 * pc.w);
	// The lanes' left taps and weights. MODE 2: the first lane's position
	// divided, the others stepped on (the step n-1 is below the divisor
	// out-1: at most one carry).
	ivec4 ax;
	vec4 lx;
	uint den = uint(pc.wo - 1), step = uint(pc.w - 1);
	uint at = 0u, rem = 0u;
	if (MODE == 2 && den > 0u) {
		uint num = uint(x0) * step;
		at = udiv(num, den, pc.denXM, pc.denXS);
		rem = num - at * den;
	}
	[[unroll]] for (int l = 0; l < 4; l++) {
		if (MODE == 2) {
			if (l > 0 && den > 0u) {
				rem += step;
				if (rem >= den) {
					rem -= den;
					at++;
				}
			}
			ax[l] = min(int(at), pc.w - 1); // lanes past the row's end are not stored
			lx[l] = float(rem) * pc.invX;
		} else {
			int b;
			taps(min(x0 + l, pc.wo - 1), pc.w, SX, pc.invX, 0u, 0u, ax[l], b, lx[l]);
		}
	}
	// The quad's taps lie within WIN source columns from the first lane's
	// (4 outputs span 3/s source pixels): one load of each per row, the
	// columns past the row's end clamped to its last (which is then i1).
	int a0 = ax.x;
	float top[5], bot[5]; // WIN <= 5 used
	[[unroll]] for (int k = 0; k < WIN; k++) {
		uint col = uint(min(a0 + k, pc.w - 1));
		top[k] = LOAD(src[r0 + col]);
		bot[k] = LOAD(src[r1 + col]);
	}
	[[unroll]] for (int l = 0; l < 4; l++) {
		int i = ax[l] - a0;
		float t0 = top[0], t1 = top[1], b0 = bot[0], b1 = bot[1];
		[[unroll]] for (int k = 1; k + 1 < WIN; k++) {
			if (i == k) {
				t0 = top[k];
				t1 = top[k + 1];
				b0 = bot[k];
				b1 = bot[k + 1];
			}
		}
		float tv = (1.0 - lx[l]) * t0 + lx[l] * t1;
		float bv = (1.0 - lx[l]) * b0 + lx[l] * b1;
		v[l] = (1.0 - ly) * tv + ly * bv;
	}
	storeQuad(op + uint(row * pc.wo), x0, v);
}
