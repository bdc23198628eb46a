#version 450
// The Winograd source transform (see convolution_winograd_common.glsl):
// one invocation per (tile t, channel c), x along t, y along c:
// V[xi][c][t] = (B^T d B)[i][j], d the 6x6 source block of tile t, 0
// outside the source region. With CHANNELS_FAST (weight gradients'
// products on the tiles) it stores V[xi][t][c] instead, workgroups of 8
// channels by 8 tiles (x along c, y along t). The "f16half" build (WINO_HALF, the
// products on cooperative matrices) stores V divided by WINO_HALF_SCALE as
// halves (see convolution_winograd_common.glsl).
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant f16half -DVKMPS_F16 -DWINO_HALF
#include "convolution_winograd_common.glsl"

layout(std430, binding = 0) readonly buffer Im { ELEM im[]; };
layout(std430, binding = 1) writeonly buffer Scr { SCR_ELEM scr[]; };

layout(local_size_x = 64) in;
layout(constant_id = 22) const bool CHANNELS_FAST = false;

// bt returns B^T d for a column d0..d5.
void bt(float d0, float d1, float d2, float d3, float d4, float d5, out float r[6]) {
	r[0] = 4.0 * d0 - 5.0 * d2 + d4;
	r[1] = -4.0 * (d1 + d2) + d3 + d4;
	r[2] = 4.0 * (d1 - d2) - d3 + d4;
	r[3] = 2.0 * (d3 - d1) - d2 + d4;
	r[4] = 2.0 * (d1 - d3) - d2 + d4;
	r[5] = 4.0 * d1 - 5.0 * d3 + d5;
}

void main() {
	uint t = gl_GlobalInvocationID.x, c = gl_GlobalInvocationID.y;
	if (CHANNELS_FAST) {
		// Each workgroup a block of 8 channels by 8 tiles, channels
		// fastest: a warp's stores fill 32-byte sectors, and its loads
		// read 4 neighbouring tiles of each of 8 planes.
		uint l = gl_LocalInvocationID.x;
		c = gl_WorkGroupID.x * 8u + l % 8u;
		t = gl_WorkGroupID.y * 8u + l / 8u;
	}
	if (t >= pc.T || c >= pc.C) return;
	uint per = pc.tilesX * pc.tilesY;
	uint b = t / per, r = t % per;
	ivec2 p0 = pc.first + 4 * ivec2(int(r % pc.tilesX), int(r / pc.tilesX));
	uint plane = pc.imBase + b * pc.imBatch + c * pc.imPlane;
	float d[6][6];
	[[unroll]] for (int y = 0; y < 6; y++) {
		int qy = p0.y + y;
		bool yin = uint(qy) < uint(pc.inSize.y);
		uint row = plane + uint(pc.inOrigin.y + clamp(qy, 0, pc.inSize.y - 1)) * pc.inStride;
		[[unroll]] for (int x = 0; x < 6; x++) {
			int qx = p0.x + x;
			bool in_ = yin && uint(qx) < uint(pc.inSize.x);
			d[y][x] = in_ ? LOAD(im[row + uint(pc.inOrigin.x + qx)]) : 0.0;
		}
	}
	// B^T d, column by column, then (B^T d) B row by row.
	float h[6][6];
	[[unroll]] for (int x = 0; x < 6; x++) {
		float col[6];
		bt(d[0][x], d[1][x], d[2][x], d[3][x], d[4][x], d[5][x], col);
		[[unroll]] for (int i = 0; i < 6; i++) h[i][x] = col[i];
	}
	uint at = SCR_PER_SLOT * pc.vBase + (CHANNELS_FAST ? t * pc.C + c : c * pc.T + t), step = pc.C * pc.T;
	[[unroll]] for (int i = 0; i < 6; i++) {
		float v[6];
		bt(h[i][0], h[i][1], h[i][2], h[i][3], h[i][4], h[i][5], v);
		[[unroll]] for (int j = 0; j < 6; j++) scr[at + uint(i * 6 + j) * step] = SCR_STORE(v[j] / WINO_HALF_SCALE);
	}
}
