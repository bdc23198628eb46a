#version 450
// The Winograd output transform (see convolution_winograd_common.glsl):
// one invocation per (tile t, output channel m), x along t, y along m:
// the tile's 4x4 outputs A^T X A, plus bias[m] (BIAS), through the
// kernel's neuron, stored where they lie inside the output region. With
// SPLITK, X is the sum of pc.slots partial products (split K) 36*M*T
// values apart.
// The "f16half" build reads X as halves (the products' X_HALF, from half
// 2*xBase) and multiplies them by WINO_X_SCALE.
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant f16half -DVKMPS_F16 -DWINO_HALF
#include "convolution_winograd_common.glsl"

#ifdef WINO_HALF
layout(std430, binding = 0) readonly buffer Scr { float16_t scrh[]; };
#define X_AT(i) (float(scrh[i]) * WINO_X_SCALE)
#else
layout(std430, binding = 0) readonly buffer Scr { float scr[]; };
#define X_AT(i) scr[i]
#endif
layout(std430, binding = 1) readonly buffer Bias { float bias[]; };
layout(std430, binding = 2) readonly buffer Prelu { float prelu[]; };
layout(std430, binding = 3) writeonly buffer Dst { ELEM dst[]; };
layout(std430, binding = 3) writeonly buffer Dst4 { ELEM4 dst4[]; };

layout(local_size_x = 64) in;
layout(constant_id = 14) const bool BIAS = false;
// SPLITK 1: X is the sum of pc.slots partial products (split K); 0: one.
layout(constant_id = 24) const uint SPLITK = 0u;

#define NEURON_PRELU(c) prelu[pc.preluBase + (c)]
#include "neuron.glsl"

// at returns A^T x for a column x0..x5.
void at(float x0, float x1, float x2, float x3, float x4, float x5, out float r[4]) {
	float s12 = x1 + x2, d12 = x1 - x2, s34 = x3 + x4, d34 = x3 - x4;
	r[0] = x0 + s12 + s34;
	r[1] = d12 + 2.0 * d34;
	r[2] = s12 + 4.0 * s34;
	r[3] = d12 + 8.0 * d34 + x5;
}

void main() {
	uint t = gl_GlobalInvocationID.x, m = gl_GlobalInvocationID.y;
	if (t >= pc.T || m >= pc.M) return;
	uint at0 = SCR_PER_SLOT * pc.xBase + m * pc.T + t, step = pc.M * pc.T;
	float x[6][6];
	[[unroll]] for (int i = 0; i < 6; i++) {
		[[unroll]] for (int j = 0; j < 6; j++) x[i][j] = X_AT(at0 + uint(i * 6 + j) * step);
	}
	// The products' splits of K, added in order.
	for (uint s = 1u; SPLITK != 0u && s < pc.slots; s++) {
		[[unroll]] for (int i = 0; i < 6; i++) {
			[[unroll]] for (int j = 0; j < 6; j++) x[i][j] += X_AT(at0 + (s * 36u + uint(i * 6 + j)) * step);
		}
	}
	// A^T X, column by column, then (A^T X) A row by row.
	float h[4][6];
	[[unroll]] for (int j = 0; j < 6; j++) {
		float col[4];
		at(x[0][j], x[1][j], x[2][j], x[3][j], x[4][j], x[5][j], col);
		[[unroll]] for (int i = 0; i < 4; i++) h[i][j] = col[i];
	}
	uint per = pc.tilesX * pc.tilesY;
	uint b = t / per, r = t % per;
	ivec2 o0 = 4 * ivec2(int(r % pc.tilesX), int(r / pc.tilesX));
	float bm = BIAS ? bias[pc.biasBase + m] : 0.0;
	uint plane = pc.dstBase + b * pc.dstBatch + m * pc.dstPlane;
	// A tile's rows go out as quads where all four pixels lie inside the
	// output region and start on a quad: on an H200 (2026-11-27) this
	// pass took 33 -> 23 us at 64 channels of 56x56 in float16 and 44 ->
	// 24 in float32, VGG's 128 of 112x112 in float32 155 -> 84 (scalar
	// stores, 4 or 8 bytes apart across a subgroup, before).
	bool quads = o0.x + 3 < pc.outSize.x && pc.dstStride % 4u == 0u && (plane + uint(pc.outOrigin.x + o0.x)) % 4u == 0u;
	[[unroll]] for (int i = 0; i < 4; i++) {
		float y[4];
		at(h[i][0], h[i][1], h[i][2], h[i][3], h[i][4], h[i][5], y);
		int oy = o0.y + i;
		if (oy >= pc.outSize.y) break;
		uint row = plane + uint(pc.outOrigin.y + oy) * pc.dstStride + uint(pc.outOrigin.x + o0.x);
		if (quads) {
			dst4[row / 4u] = STORE4(vec4(neuronForward(y[0] + bm, m), neuronForward(y[1] + bm, m),
			                             neuronForward(y[2] + bm, m), neuronForward(y[3] + bm, m)));
			continue;
		}
		[[unroll]] for (int j = 0; j < 4; j++) {
			if (o0.x + j < pc.outSize.x) dst[row + uint(j)] = STORE(neuronForward(y[j] + bm, m));
		}
	}
}
