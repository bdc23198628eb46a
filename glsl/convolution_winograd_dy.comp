#version 450
// The Winograd dy transform of weight gradients (see
// convolution_winograd_common.glsl): one invocation per (tile t, channel
// m), x along t, y along m: D[xi][m][t] = (A dy A^T)[i][j], dy the 4x4
// block of tile t in the dy region (inSize pixels at inOrigin), 0
// outside it. With CHANNELS_FAST (the products on the tiles) it stores
// D[xi][t][m] instead, workgroups of 8 channels by 8 tiles (x along m,
// y along t). The "f16half" build (WINO_HALF, the products on
// cooperative matrices) stores D divided by WINO_HALF_SCALE as halves.
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant f16half -DVKMPS_F16 -DWINO_HALF
#include "convolution_winograd_common.glsl"

layout(std430, binding = 0) readonly buffer Im { ELEM im[]; };
layout(std430, binding = 1) writeonly buffer Scr { SCR_ELEM scr[]; };

layout(local_size_x = 64) in;
layout(constant_id = 22) const bool CHANNELS_FAST = false;

// a returns A y for a column y0..y3 (A = (A^T)^T, 6 x 4).
void a(float y0, float y1, float y2, float y3, out float r[6]) {
	r[0] = y0;
	r[1] = y0 + y1 + y2 + y3;
	r[2] = y0 - y1 + y2 - y3;
	r[3] = y0 + 2.0 * y1 + 4.0 * y2 + 8.0 * y3;
	r[4] = y0 - 2.0 * y1 + 4.0 * y2 - 8.0 * y3;
	r[5] = y3;
}

void main() {
	uint t = gl_GlobalInvocationID.x, m = gl_GlobalInvocationID.y;
	if (CHANNELS_FAST) {
		// Each workgroup a block of 8 channels by 8 tiles, channels
		// fastest: a warp's stores fill 32-byte sectors, and its loads
		// read 4 neighbouring tiles of each of 8 planes.
		uint l = gl_LocalInvocationID.x;
		m = gl_WorkGroupID.x * 8u + l % 8u;
		t = gl_WorkGroupID.y * 8u + l / 8u;
	}
	if (t >= pc.T || m >= pc.M) return;
	uint per = pc.tilesX * pc.tilesY;
	uint b = t / per, r = t % per;
	ivec2 p0 = 4 * ivec2(int(r % pc.tilesX), int(r / pc.tilesX));
	uint plane = pc.imBase + b * pc.imBatch + m * pc.imPlane;
	float d[4][4];
	[[unroll]] for (int y = 0; y < 4; y++) {
		int qy = p0.y + y;
		bool yin = qy < pc.inSize.y;
		uint row = plane + uint(pc.inOrigin.y + min(qy, pc.inSize.y - 1)) * pc.inStride;
		[[unroll]] for (int x = 0; x < 4; x++) {
			int qx = p0.x + x;
			d[y][x] = yin && qx < pc.inSize.x ? LOAD(im[row + uint(pc.inOrigin.x + qx)]) : 0.0;
		}
	}
	// A dy, column by column, then (A dy) A^T row by row.
	float h[6][4];
	[[unroll]] for (int x = 0; x < 4; x++) {
		float col[6];
		a(d[0][x], d[1][x], d[2][x], d[3][x], col);
		[[unroll]] for (int i = 0; i < 6; i++) h[i][x] = col[i];
	}
	uint at = SCR_PER_SLOT * pc.uBase + (CHANNELS_FAST ? t * pc.M + m : m * pc.T + t), step = pc.M * pc.T;
	[[unroll]] for (int i = 0; i < 6; i++) {
		float v[6];
		a(h[i][0], h[i][1], h[i][2], h[i][3], v);
		[[unroll]] for (int j = 0; j < 6; j++) scr[at + uint(i * 6 + j) * step] = SCR_STORE(v[j] / WINO_HALF_SCALE);
	}
}
