#version 450
// UpsamplingNearestGradient (MPSCNNUpsamplingNearestGradient): dx[p] = the
// sum of its SY x SX block of dy, row by row, left to right (float32), the
// transpose of upsampling.comp's nearest mode, gathered per dx quad (no
// atomics: the same bits on every run and every split of the work). An
// item is a quad of one dx row. The bilinear gradients are
// upsampling_bilinear_grad.comp.
// vkmps:variant f16 -DVKMPS_F16
#include "upsampling_common.glsl"

layout(std430, binding = 0) readonly buffer Dy { ELEM dy[]; };
layout(std430, binding = 0) readonly buffer Dy4 { ELEM4 dy4[]; };
layout(std430, binding = 1) writeonly buffer Dx { ELEM dx[]; };
layout(std430, binding = 1) writeonly buffer Dx4 { ELEM4 dx4[]; };

void storeQuad(uint rowStart, int x0, vec4 v) {
	if (VOUT) {
		dx4[(rowStart + uint(x0)) / 4u] = STORE4(v);
		return;
	}
	[[unroll]] for (int l = 0; l < 4; l++) {
		if (x0 + l < pc.w) dx[rowStart + uint(x0 + l)] = STORE(v[l]);
	}
}

vec4 nearest(int py, int px0, uint ip) {
	vec4 acc = vec4(0.0);
	for (int k = 0; k < SY; k++) {
		uint r = ip + uint((py * SY + k) * pc.wo);
		if (VIN) {
			uint b4 = (r + uint(px0 * SX)) / 4u;
			for (int j = 0; j < SX; j++) {
				vec4 g = LOAD4(dy4[b4 + uint(j)]);
				[[unroll]] for (int t = 0; t < 4; t++) acc[(4 * j + t) / SX] += g[t];
			}
		} else {
			[[unroll]] for (int l = 0; l < 4; l++) {
				uint c = r + uint(min(px0 + l, pc.w - 1) * SX);
				for (int j = 0; j < SX; j++) acc[l] += LOAD(dy[c + uint(j)]);
			}
		}
	}
	return acc;
}

void main() {
	int q, py;
	uint ip, op;
	if (!workItem(q, py, ip, op)) return;
	int px0 = 4 * q;
	storeQuad(op + uint(py * pc.w), px0, nearest(py, px0, ip));
}
