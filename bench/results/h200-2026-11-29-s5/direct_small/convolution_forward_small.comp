#version 450
// The forward of a convolution with few input channels per group (an RGB
// stem's: the GEMM's K, CIN*KW*KH, is short and its im2col gather costs
// more than its sums) as a direct convolution out of shared memory
// (MPSCNNConvolution): for output channel m < M of group g and output
// pixel p of the destination region,
//   dst(b, g*M + m, p) = neuron(bias[g*M + m] + sum over ci < CIN and the
//       taps (kx, ky) of Wt[wBase + (g*M + m)*K + ci*KHW + ky*KW + kx]
//       * Im(b, g*CIN + ci, first + p*(SX, SY) + (kx*DX, ky*DY)))
// with K = CIN*KHW: convolution_gemm.comp's MODE_A 0 weights and MODE_B 0
// source, and its push constants (N: the planes b*groups + g of the
// dispatch, cinG = CIN). Reads outside the source region are 0.
//
// A workgroup of TX x TY invocations computes a tile of TX x (TY*PY)
// destination pixels of one plane for OCB of its group's output channels
// (gl_WorkGroupID: x the tile column, y the tile row, z = plane*blocks +
// block, blocks = ceil(M / OCB)). It stages the block's weights in shared
// memory as quads of channels per tap (wsh: every invocation reads the
// same quad at once, a broadcast), then, one input channel at a time, the
// tile's source window of that channel, WROWS x ((TX-1)*SX + (KW-1)*DX +
// 1) values (win; each row's columns grouped by their phase of the
// stride, column c at (c % SX)*WPH + c / SX, rows WROW words apart, so
// that neighbouring invocations read neighbouring words). Invocation
// (tx, ty) sums the pixels (tx, ty + i*TY), i < PY, for the OCB channels:
// per tap PY source values and OCB/4 weight quads for PY*OCB products, a
// register block that keeps shared memory's reads under the multiplies.
// vkmps:variant f16 -DVKMPS_F16
#include "convolution_common.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 12) const int CIN = 3;
layout(constant_id = 13) const int OCB = 16;   // output channels per workgroup, a multiple of 4
layout(constant_id = 14) const bool BIAS = false;
layout(constant_id = 15) const int PY = 2;     // pixels per invocation, TY rows apart
layout(constant_id = 16) const int WROWS = 1;  // the window's rows: (TY*PY - 1)*SY + (KH - 1)*DY + 1
layout(constant_id = 17) const int WPH = 1;    // a window row's columns of one phase: ceil(WCOLS / SX)
layout(constant_id = 18) const int WROW = 1;   // a window row's words in win, WPH*SX or more

const int TX = int(gl_WorkGroupSize.x);
const int TY = int(gl_WorkGroupSize.y);
const int WCOLS = (TX - 1) * SX + (KW - 1) * DX + 1;
const int OCB4 = OCB / 4;
const int TAPS = CIN * KW * KH;
const int WIN_N = WROWS * WCOLS;                        // an input channel's window
const int WIN_LOADS = (WIN_N + TX * TY - 1) / (TX * TY); // per invocation
const int W_LOADS = (TAPS * OCB + TX * TY - 1) / (TX * TY);

layout(std430, binding = 0) readonly buffer Im { ELEM im[]; };
layout(std430, binding = 1) readonly buffer Wt { float wt[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) readonly buffer Prelu { float prelu[]; };
layout(std430, binding = 4) writeonly buffer Dst { ELEM dst[]; };

layout(push_constant) uniform Push {
	ivec2 inSize;    // the source region, W x H
	ivec2 inOrigin;  // its first pixel in the image
	ivec2 first;     // the source position of tap (0, 0) of pixel (0, 0)
	ivec2 outSize;   // the destination region, W x H
	ivec2 outOrigin; // its first pixel in the image
	uint inStride;   // source row length
	uint dstStride;  // destination row length
	uint imBase, imBatch, imPlane;
	uint dstBase, dstBatch, dstPlane;
	uint wBase, ld;
	uint biasBase, preluBase;
	uint M, N, K;
	uint cinG;       // source channels per group (CIN)
	uint n0;
	uint groups;
	uint kChunk, partBase, splits; // unused here
} pc;

#define NEURON_PRELU(c) prelu[pc.preluBase + (c)]
#include "neuron.glsl"

shared float win[WROWS * WROW];
shared vec4 wsh[TAPS * OCB4];

void main() {
	uint blocks = (pc.M + uint(OCB) - 1) / uint(OCB);
	uint plane = gl_WorkGroupID.z / blocks, m0 = (gl_WorkGroupID.z % blocks) * uint(OCB);
	uint b = plane / pc.groups, g = plane % pc.groups;
	uint lid = gl_LocalInvocationIndex, threads = uint(TX * TY);
	ivec2 tile = ivec2(gl_WorkGroupID.xy) * ivec2(TX, TY * PY); // its first destination pixel
	ivec2 origin = pc.first + tile * ivec2(SX, SY);              // the window's first source pixel

	// The block's weights: wsh[t*OCB4 + j][e] is channel m0 + 4j + e's at
	// tap t = ci*KHW + ky*KW + kx (0 past M). Each invocation issues all
	// of its loads before it stores any (unrolled: the loads are in flight
	// together, not one latency after another); the same for the windows.
	uint wG = pc.wBase + (g * pc.M + m0) * pc.K;
	float ww[W_LOADS];
	[[unroll]] for (int l = 0; l < W_LOADS; l++) {
		uint i = min(lid + uint(l) * threads, uint(TAPS * OCB - 1));
		uint m = i / uint(TAPS), t = i % uint(TAPS);
		float w = wt[wG + min(m, pc.M - 1u - m0) * pc.K + t];
		ww[l] = m0 + m < pc.M ? w : 0.0;
	}
	[[unroll]] for (int l = 0; l < W_LOADS; l++) {
		uint i = lid + uint(l) * threads;
		if (i >= uint(TAPS * OCB)) break;
		uint m = i / uint(TAPS), t = i % uint(TAPS);
		wsh[t * uint(OCB4) + m / 4u][m % 4u] = ww[l];
	}

	int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);
	vec4 acc[PY * OCB4];
	[[unroll]] for (int i = 0; i < PY * OCB4; i++) acc[i] = vec4(0.0);
	uint imG = pc.imBase + b * pc.imBatch + g * uint(CIN) * pc.imPlane;
	for (int ci = 0; ci < CIN; ci++) {
		// Channel ci's window, 0 outside the source region.
		uint imC = imG + uint(ci) * pc.imPlane;
		float wv[WIN_LOADS];
		[[unroll]] for (int l = 0; l < WIN_LOADS; l++) {
			uint i = min(lid + uint(l) * threads, uint(WIN_N - 1));
			ivec2 q = origin + ivec2(i % uint(WCOLS), i / uint(WCOLS));
			bool in_ = uint(q.x) < uint(pc.inSize.x) && uint(q.y) < uint(pc.inSize.y);
			uint at = imC + uint(pc.inOrigin.y + clamp(q.y, 0, pc.inSize.y - 1)) * pc.inStride +
				uint(pc.inOrigin.x + clamp(q.x, 0, pc.inSize.x - 1));
			float v = LOAD(im[at]);
			wv[l] = in_ ? v : 0.0;
		}
		barrier(); // the window before is read (and, first, the weights are stored)
		[[unroll]] for (int l = 0; l < WIN_LOADS; l++) {
			uint i = lid + uint(l) * threads;
			if (i >= uint(WIN_N)) break;
			uint r = i / uint(WCOLS), c = i % uint(WCOLS);
			win[r * uint(WROW) + (c % uint(SX)) * uint(WPH) + c / uint(SX)] = wv[l];
		}
		barrier();
		for (int ky = 0; ky < KH; ky++) {
			int rowBase = (ty * SY + ky * DY) * WROW;
			[[unroll]] for (int kx = 0; kx < KW; kx++) {
				int c = tx * SX + kx * DX;
				int at = rowBase + (c % SX) * WPH + c / SX;
				float v[PY];
				[[unroll]] for (int i = 0; i < PY; i++) v[i] = win[at + i * TY * SY * WROW];
				int t = (ci * KH + ky) * KW + kx;
				[[unroll]] for (int j = 0; j < OCB4; j++) {
					vec4 w = wsh[t * OCB4 + j];
					[[unroll]] for (int i = 0; i < PY; i++) acc[i * OCB4 + j] = fma(w, vec4(v[i]), acc[i * OCB4 + j]);
				}
			}
		}
	}

	uint dstB = pc.dstBase + b * pc.dstBatch;
	[[unroll]] for (int i = 0; i < PY; i++) {
		ivec2 p = tile + ivec2(tx, ty + i * TY);
		if (p.x >= pc.outSize.x || p.y >= pc.outSize.y) continue;
		uint at = dstB + uint(pc.outOrigin.y + p.y) * pc.dstStride + uint(pc.outOrigin.x + p.x);
		[[unroll]] for (int j = 0; j < OCB4; j++) {
			[[unroll]] for (int e = 0; e < 4; e++) {
				uint m = m0 + uint(4 * j + e);
				if (m >= pc.M) continue;
				uint c = g * pc.M + m;
				float bv = BIAS ? bias[pc.biasBase + c] : 0.0;
				dst[at + c * pc.dstPlane] = STORE(neuronForward(acc[i * OCB4 + j][e] + bv, c));
			}
		}
	}
}
