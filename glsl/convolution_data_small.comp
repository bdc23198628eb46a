#version 450
// The data gradient of a convolution with few input channels per group
// (an RGB stem's: the GEMM's M, those channels, would fill a sliver of its
// tile), and the transpose convolution with few output channels per
// group, as a gather (MPSCNNConvolutionGradient's data part): for each
// pixel p of the destination region and each of the CIN channels ci of
// its group g,
//   dst(b, g*CIN + ci, p) = neuron(bias[g*CIN + ci] + sum over co < cinG
//       and the taps (kx, ky) with p = first + q*(SX, SY) + (kx*DX, ky*DY)
//       for a pixel q of the source region, of
//       Wt[wBase + ((g*cinG + co)*CIN + ci)*KHW + ky*KW + kx] * Im(b, g*cinG + co, q))
// the weights of the convolution it reverses, read as
// convolution_gemm.comp's MODE_A 1, and its push constants (M = CIN,
// N = the planes b*groups + g of the dispatch). Along each axis the
// stride or the dilation is 1.
//
// One invocation computes OX destination pixels of one row and one phase
// of the stride, x0 + j*SX, for all CIN channels (gl_GlobalInvocationID.x
// = strip*SX + phase, .y the row, .z the plane). Only the taps
// kx = kx0 + a*SX (kx0 = (x0 - first.x) mod SX) reach those pixels, from
// source columns qx0 - a*STEPX + j: a row of SEG source values serves
// every tap and pixel, loaded once per output channel and tap row; the
// same for rows (ky0, one source row per tap row). Reads outside the
// source region are 0 (a clamped index and a select).
// vkmps:variant f16 -DVKMPS_F16
#include "convolution_common.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 12) const int OX = 8;
layout(constant_id = 13) const int CIN = 3;
layout(constant_id = 14) const bool BIAS = false;

const int STEPX = SX == 1 ? DX : 1; // source columns between neighbouring taps of a phase
const int STEPY = SY == 1 ? DY : 1;
const int PH_TX = (KW + SX - 1) / SX; // taps per phase, at most
const int PH_TY = (KH + SY - 1) / SY;
const int SEG = OX + (PH_TX - 1) * STEPX;

layout(std430, binding = 0) readonly buffer Im { ELEM im[]; };
layout(std430, binding = 1) readonly buffer Wt { float wt[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) readonly buffer Prelu { float prelu[]; };
layout(std430, binding = 4) writeonly buffer Dst { ELEM dst[]; };

layout(push_constant) uniform Push {
	ivec2 inSize;    // the source region, W x H
	ivec2 inOrigin;  // its first pixel in the image
	ivec2 first;     // see above
	ivec2 outSize;   // the destination region, W x H
	ivec2 outOrigin; // its first pixel in the image
	uint inStride;   // source row length
	uint dstStride;  // destination row length
	uint imBase, imBatch, imPlane;
	uint dstBase, dstBatch, dstPlane;
	uint wBase, ld;
	uint biasBase, preluBase;
	uint M, N, K;
	uint cinG;       // source channels per group
	uint n0;
	uint groups;
	uint kChunk, partBase, splits; // unused here
} pc;

#define NEURON_PRELU(c) prelu[pc.preluBase + (c)]
#include "neuron.glsl"

// floorMod returns a mod s in [0, s).
int floorMod(int a, int s) { return a >= 0 ? a % s : (s - 1) - ((-a - 1) % s); }

void main() {
	uint plane = gl_GlobalInvocationID.z;
	int y = int(gl_GlobalInvocationID.y);
	int x0 = int(gl_GlobalInvocationID.x % uint(SX)) + int(gl_GlobalInvocationID.x / uint(SX)) * OX * SX;
	if (plane >= pc.N || y >= pc.outSize.y || x0 >= pc.outSize.x) return;
	uint b = plane / pc.groups, g = plane % pc.groups;
	ivec2 a = ivec2(x0, y) - pc.first;
	int kx0 = floorMod(a.x, SX), ky0 = floorMod(a.y, SY); // 0 at stride 1
	int qx0 = (a.x - kx0) / SX, qy0 = (a.y - ky0) / SY;   // exact
	// Clamped source columns and their validity, shared by every row.
	int col[SEG];
	bool colIn[SEG];
	[[unroll]] for (int e = 0; e < SEG; e++) {
		int q = qx0 - (PH_TX - 1) * STEPX + e;
		colIn[e] = uint(q) < uint(pc.inSize.x);
		col[e] = pc.inOrigin.x + clamp(q, 0, pc.inSize.x - 1);
	}
	float acc[CIN * OX];
	[[unroll]] for (int i = 0; i < CIN * OX; i++) acc[i] = 0.0;
	uint imG = pc.imBase + b * pc.imBatch + g * pc.cinG * pc.imPlane;
	uint wG = pc.wBase + g * pc.cinG * uint(CIN) * KHW;
	for (uint co = 0; co < pc.cinG; co++) {
		uint imC = imG + co * pc.imPlane;
		uint wC = wG + co * uint(CIN) * KHW;
		[[unroll]] for (int tb = 0; tb < PH_TY; tb++) {
			int ky = ky0 + tb * SY, qy = qy0 - tb * STEPY;
			if (ky >= KH || uint(qy) >= uint(pc.inSize.y)) continue;
			uint row = imC + uint(pc.inOrigin.y + qy) * pc.inStride;
			float v[SEG];
			[[unroll]] for (int e = 0; e < SEG; e++) v[e] = colIn[e] ? LOAD(im[row + uint(col[e])]) : 0.0;
			[[unroll]] for (int ta = 0; ta < PH_TX; ta++) {
				int kx = kx0 + ta * SX;
				if (kx >= KW) continue;
				uint w0 = wC + uint(ky * KW + kx);
				[[unroll]] for (int ci = 0; ci < CIN; ci++) {
					float w = wt[w0 + uint(ci) * KHW];
					[[unroll]] for (int j = 0; j < OX; j++) acc[ci * OX + j] = fma(w, v[j + (PH_TX - 1 - ta) * STEPX], acc[ci * OX + j]);
				}
			}
		}
	}
	uint out0 = pc.dstBase + b * pc.dstBatch + uint(pc.outOrigin.y + y) * pc.dstStride;
	[[unroll]] for (int ci = 0; ci < CIN; ci++) {
		uint c = g * uint(CIN) + uint(ci);
		float bv = BIAS ? bias[pc.biasBase + c] : 0.0;
		uint at = out0 + c * pc.dstPlane;
		[[unroll]] for (int j = 0; j < OX; j++) {
			int x = x0 + j * SX;
			if (x >= pc.outSize.x) break;
			dst[at + uint(pc.outOrigin.x + x)] = STORE(neuronForward(acc[ci * OX + j] + bv, c));
		}
	}
}
