#version 450
// Depthwise convolution (MPSCNNDepthWiseConvolution: groups equal to the
// input channels), a direct memory-bound kernel: output channel c reads
// input channel c / MULT (MULT outputs per input channel) with its own
// KW x KH weights w[c][tap] = wt[wBase + c*KHW + tap]:
//   dst(b, c, x, y) = neuron(bias[c] + sum over taps of w[c][tap] *
//                     in(b, c/MULT, first + (x*SX, y*SY) + tap))
// and, with FLIP, the taps in reverse (w[c][KHW-1-tap]): the data gradient
// of a stride-1 depthwise convolution is this over dy.
//
// One invocation computes OX x OY outputs (gl_GlobalInvocationID.x the
// strip of OX columns, .y the group of OY rows, .z the plane b*channels +
// c of the dispatch). It loads each input row its windows touch once, the
// SEG columns they span, and keeps the weights in registers. Outside the
// input region reads are 0 (a clamped index and a select: no branch per
// tap). (One index over planes and strips, so that no lane idles where a
// plane's strips do not fill the workgroup's 16 x 16, ran 5-13% slower on
// an H100: bench/results/h100-2026-11-27-depthwise, run 2.)
//
// VW (ops' convDepthwiseVector: 8 in float16 where OX is 8, else 4 or 2
// where OX is a multiple of it; the input region's width, its first
// column and every input row's first value multiples of VW, and the same
// of the destination; else 1) loads a row's SEG columns as the aligned
// vectors that hold them (convolution_depthwise_common.glsl) and stores
// each row of OX outputs as quads (pairs): a fraction of the load and
// store instructions, the same values and sums. On an H100 (run 2 there),
// 32x256x56x56 3x3 float32 forward and data gradient went from 132 and
// 126 us to 77.5 and 75 with quads (89% and 92% of the copy bandwidth),
// float16 from 98.6 and 97 to 49 and 48; strips of 8 were slower (88,
// 86). Pairs took a 32x512x14x14 layer from 35.4 and 33.4 us to 19.0 and
// 19.1 (run 5).
// vkmps:variant f16 -DVKMPS_F16
#include "convolution_common.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 12) const int OX = 4;
layout(constant_id = 13) const int OY = 1;
layout(constant_id = 14) const bool BIAS = false;
layout(constant_id = 15) const bool FLIP = false;
layout(constant_id = 16) const int MULT = 1;
layout(constant_id = 17) const int VW = 1;    // values per load: 1, 2, 4 or 8 (float16)
layout(constant_id = 18) const int PHASE = 0; // first.x mod VW

const int KEX = (KW - 1) * DX + 1;
const int KEY = (KH - 1) * DY + 1;
const int SEG = (OX - 1) * SX + KEX; // input columns a strip spans
const int ROWS = (OY - 1) * SY + KEY; // input rows a strip spans
const int SW = VW > 4 ? 4 : VW;       // values per store

#define DW_SRC 0
#include "convolution_depthwise_common.glsl"
layout(std430, binding = 1) readonly buffer Wt { float wt[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) readonly buffer Prelu { float prelu[]; };
layout(std430, binding = 4) writeonly buffer Dst { ELEM dst[]; };
layout(std430, binding = 4) writeonly buffer Dst2 { ELEM2 dst2[]; };
layout(std430, binding = 4) writeonly buffer Dst4 { ELEM4 dst4[]; };

layout(push_constant) uniform Push {
	ivec2 inSize, inOrigin, first, outSize, outOrigin;
	uint inStride, dstStride;
	uint imBase, imBatch, imPlane;
	uint dstBase, dstBatch, dstPlane;
	uint wBase, biasBase, preluBase;
	uint channels; // output channels of the dispatch
	uint planes;   // batch images x channels
	uint c0;       // channel of the dispatch's first plane
} pc;

#define NEURON_PRELU(c) prelu[pc.preluBase + (c)]
#include "neuron.glsl"

void main() {
	ivec2 o = ivec2(gl_GlobalInvocationID.xy) * ivec2(OX, OY);
	uint plane = gl_GlobalInvocationID.z;
	if (o.x >= pc.outSize.x || o.y >= pc.outSize.y || plane >= pc.planes) return;
	uint b = plane / pc.channels, c = pc.c0 + plane % pc.channels;
	float w[KHW];
	[[unroll]] for (uint r = 0; r < KHW; r++) w[r] = wt[pc.wBase + c * KHW + (FLIP ? KHW - 1 - r : r)];
	float acc[OX * OY];
	[[unroll]] for (int i = 0; i < OX * OY; i++) acc[i] = 0.0;
	ivec2 s = pc.first + o * ivec2(SX, SY); // input position of the first tap
	uint base = pc.imBase + b * pc.imBatch + (c / uint(MULT)) * pc.imPlane;
	[[unroll]] for (int ir = 0; ir < ROWS; ir++) {
		int q = s.y + ir;
		if (uint(q) >= uint(pc.inSize.y)) continue;
		float v[SEG];
		dwRow(base + uint(pc.inOrigin.y + q) * pc.inStride + uint(pc.inOrigin.x), s.x, pc.inSize.x, v);
		[[unroll]] for (int oy = 0; oy < OY; oy++) {
			int dy = ir - oy * SY; // row offset in the window
			if (dy < 0 || dy >= KEY || dy % DY != 0) continue;
			int ky = dy / DY;
			[[unroll]] for (int ox = 0; ox < OX; ox++) {
				[[unroll]] for (int kx = 0; kx < KW; kx++) {
					acc[oy * OX + ox] = fma(w[ky * KW + kx], v[ox * SX + kx * DX], acc[oy * OX + ox]);
				}
			}
		}
	}
	float bv = BIAS ? bias[pc.biasBase + c] : 0.0;
	[[unroll]] for (int oy = 0; oy < OY; oy++) {
		if (o.y + oy >= pc.outSize.y) break;
		uint row = pc.dstBase + b * pc.dstBatch + c * pc.dstPlane + uint(pc.outOrigin.y + o.y + oy) * pc.dstStride;
		if (VW > 1) {
			// The region's width is a multiple of VW, and so of OX.
			uint at = (row + uint(pc.outOrigin.x + o.x)) / uint(SW);
			[[unroll]] for (int ox = 0; ox < OX; ox += SW) {
				vec4 r;
				[[unroll]] for (int j = 0; j < SW; j++) r[j] = neuronForward(acc[oy * OX + ox + j] + bv, c);
				if (o.x + ox >= pc.outSize.x) break;
				if (SW == 4) dst4[at + uint(ox / 4)] = STORE4(r);
				else dst2[at + uint(ox / 2)] = STORE2(r.xy);
			}
			continue;
		}
		[[unroll]] for (int ox = 0; ox < OX; ox++) {
			if (o.x + ox >= pc.outSize.x) break;
			dst[row + uint(pc.outOrigin.x + o.x + ox)] = STORE(neuronForward(acc[oy * OX + ox] + bv, c));
		}
	}
}
