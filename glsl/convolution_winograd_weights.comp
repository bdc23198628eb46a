#version 450
// The Winograd weight transform (see convolution_winograd_common.glsl):
// one invocation per (m, c), x along m, y along c:
// U[xi][c][m] = (G g G^T)[i][j].
// The "half" build (WINO_HALF, the products on cooperative matrices)
// stores U times WINO_HALF_SCALE as halves (see
// convolution_winograd_common.glsl).
// vkmps:variant half -DWINO_HALF
#include "convolution_winograd_common.glsl"

layout(std430, binding = 0) readonly buffer Wt { float wt[]; };
layout(std430, binding = 1) writeonly buffer Scr { SCR_ELEM scr[]; };

layout(local_size_x = 64) in;
layout(constant_id = 0) const bool FLIP = false;

void main() {
	uint m = gl_GlobalInvocationID.x, c = gl_GlobalInvocationID.y;
	if (m >= pc.M || c >= pc.C) return;
	float g[3][3];
	[[unroll]] for (int ky = 0; ky < 3; ky++) {
		[[unroll]] for (int kx = 0; kx < 3; kx++) {
			g[ky][kx] = FLIP ? wt[pc.wBase + ((c * pc.M + m) * 3u + uint(2 - ky)) * 3u + uint(2 - kx)]
			                 : wt[pc.wBase + ((m * pc.C + c) * 3u + uint(ky)) * 3u + uint(kx)];
		}
	}
	// G g: 6 x 3, column by column.
	float h[6][3];
	[[unroll]] for (int k = 0; k < 3; k++) {
		float g0 = g[0][k], g1 = g[1][k], g2 = g[2][k];
		h[0][k] = g0 * 0.25;
		h[1][k] = -(g0 + g1 + g2) / 6.0;
		h[2][k] = -(g0 - g1 + g2) / 6.0;
		h[3][k] = g0 / 24.0 + g1 / 12.0 + g2 / 6.0;
		h[4][k] = g0 / 24.0 - g1 / 12.0 + g2 / 6.0;
		h[5][k] = g2;
	}
	// (G g) G^T: row by row.
	uint at = SCR_PER_SLOT * pc.uBase + c * pc.M + m, step = pc.C * pc.M;
	[[unroll]] for (int i = 0; i < 6; i++) {
		float g0 = h[i][0], g1 = h[i][1], g2 = h[i][2];
		float u[6];
		u[0] = g0 * 0.25;
		u[1] = -(g0 + g1 + g2) / 6.0;
		u[2] = -(g0 - g1 + g2) / 6.0;
		u[3] = g0 / 24.0 + g1 / 12.0 + g2 / 6.0;
		u[4] = g0 / 24.0 - g1 / 12.0 + g2 / 6.0;
		u[5] = g2;
		[[unroll]] for (int j = 0; j < 6; j++) scr[at + uint(i * 6 + j) * step] = SCR_STORE(u[j] * WINO_HALF_SCALE);
	}
}
