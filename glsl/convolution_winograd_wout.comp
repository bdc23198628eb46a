#version 450
// The Winograd output transform of weight gradients (see
// convolution_winograd_common.glsl): one invocation per (m, c), x along
// c, y along m: the slots partial sums P[s][xi][m][c] added in order s =
// 0, 1, ..., then dW(m, c) = G^T P G, stored as the weights (O, I, 3, 3)
// from wBase. The "half" build undoes the half builds' scaling of D and
// V (each divided by WINO_HALF_SCALE): the sums times its square.
// vkmps:variant half -DWINO_HALF
#include "convolution_winograd_common.glsl"

layout(std430, binding = 0) readonly buffer Scr { float scr[]; };
layout(std430, binding = 1) writeonly buffer DW { float dw[]; };

layout(local_size_x = 64) in;

// gt returns G^T x for a column x0..x5 (G^T: 3 x 6).
void gt(float x0, float x1, float x2, float x3, float x4, float x5, out float r[3]) {
	r[0] = 0.25 * x0 - (x1 + x2) / 6.0 + (x3 + x4) / 24.0;
	r[1] = (x2 - x1) / 6.0 + (x3 - x4) / 12.0;
	r[2] = -(x1 + x2) / 6.0 + (x3 + x4) / 6.0 + x5;
}

// The workgroup's 64 x 9 weights in the order they lie in dW:
// (c - c0) * 9 + ky * 3 + kx.
shared float wsh[64 * 9];

void main() {
	uint c = gl_GlobalInvocationID.x, m = gl_GlobalInvocationID.y, l = gl_LocalInvocationID.x;
	uint c0 = gl_WorkGroupID.x * 64u;
	if (m >= pc.M) return; // the whole workgroup
	// Invocations past the last channel load the last channel's sums and
	// store nothing.
	uint at0 = pc.xBase + m * pc.C + min(c, pc.C - 1u), step = pc.M * pc.C;
	// The slots outermost: each slot's 36 loads are in flight together
	// (the sums per position innermost waited on one load at a time: on an
	// H100 this pass took 35 us for 64 channels, 66 for 512). The sums
	// add the slots in the same order.
	float x[6][6];
	[[unroll]] for (int i = 0; i < 6; i++) {
		[[unroll]] for (int j = 0; j < 6; j++) x[i][j] = 0.0;
	}
	for (uint q = 0; q < pc.slots; q++) {
		uint at = at0 + q * 36u * step;
		[[unroll]] for (int i = 0; i < 6; i++) {
			[[unroll]] for (int j = 0; j < 6; j++) x[i][j] += scr[at + uint(i * 6 + j) * step];
		}
	}
	[[unroll]] for (int i = 0; i < 6; i++) {
		[[unroll]] for (int j = 0; j < 6; j++) x[i][j] *= WINO_HALF_SCALE * WINO_HALF_SCALE;
	}
	float h[3][6];
	[[unroll]] for (int j = 0; j < 6; j++) {
		float col[3];
		gt(x[0][j], x[1][j], x[2][j], x[3][j], x[4][j], x[5][j], col);
		[[unroll]] for (int i = 0; i < 3; i++) h[i][j] = col[i];
	}
	// Each invocation's 9 weights lie 36 bytes from its neighbours': staged
	// in shared memory, the workgroup's 64 x 9 (fewer at the last
	// channels) go out as consecutive words (on an H100 the 7x7 weight
	// gradient of 512 channels took 32 us storing its own).
	[[unroll]] for (int ky = 0; ky < 3; ky++) {
		float w[3];
		gt(h[ky][0], h[ky][1], h[ky][2], h[ky][3], h[ky][4], h[ky][5], w);
		[[unroll]] for (int kx = 0; kx < 3; kx++) wsh[l * 9u + uint(ky * 3 + kx)] = w[kx];
	}
	barrier();
	uint n = min(64u, pc.C - c0) * 9u, base = pc.wBase + (m * pc.C + c0) * 9u;
	[[unroll]] for (uint r = 0; r < 9u; r++) {
		uint i = r * 64u + l;
		if (i < n) dw[base + i] = wsh[i];
	}
}
