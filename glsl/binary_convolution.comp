#version 450
// vkmps:variant f16 -DVKMPS_F16
// binary_convolution (MPSCNNBinaryConvolution, types XNOR and AND): the
// convolution of the packed source bits (binary_convolution_pack.comp)
// with the packed weight signs, by popcount:
//   XNOR: S = taps*I - 2 * sum popcount(x ^ w)   (= sum sgn(x~) sgn(w))
//   AND:  S = sum popcount(x & w)                (= sum [x~>=0][w>=0])
// (bits beyond I are 0 in both, so they never count), then
//   y = neuron(scale[o] * beta * S + bias[o]),
// beta = 1, or (BETA) the mean over the taps of A (padA outside).
//
// A workgroup computes 64 destination pixels (flattened over the
// dispatch's batch images, rows and columns of the clip) x 64 output
// channels, each invocation 4 x 4 of them. Per tap, WORDS words are staged
// in shared memory 8 at a time for the 64 pixels (the tap's source pixel,
// or the pad words outside the source) and the 64 channels, and every
// invocation combines its 4 pixel words with its 4 channel words: a full
// chunk of 8 words through a carry-save tree and 4 population counts per
// output (count8), a partial one word by word.
#include "binary_convolution_common.glsl"
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Packed { uint packed[]; };
layout(std430, binding = 1) readonly buffer Weights { uint weights[]; };
layout(std430, binding = 2) readonly buffer Params { float params[]; };
layout(std430, binding = 3) writeonly buffer Dst { ELEM dst[]; };

#include "neuron.glsl"

// Rows of 17 quads (68 words): the loaders' stores, 8 words of one pixel
// by 8 adjacent invocations, fall in distinct banks.
shared uvec4 sIn[8][17];
shared uvec4 sW[8][17];
shared float sBeta[64];

// combine adds the products of 4 pixel words a with 4 channel words b.
void combine(inout uvec4 acc[4], uvec4 a, uvec4 b) {
	for (int i = 0; i < 4; i++) {
		if (TYPE == 1) acc[i] += uvec4(bitCount(a[i] ^ b));
		else acc[i] += uvec4(bitCount(a[i] & b));
	}
}

// csa is a carry-save adder of three bit vectors: per bit, a + b + c =
// sum + 2*carry (3-input logic, one instruction each on most GPUs).
void csa(uvec4 a, uvec4 b, uvec4 c, out uvec4 sum, out uvec4 carry) {
	uvec4 u = a ^ b;
	sum = u ^ c;
	carry = (a & b) | (u & c);
}

// count8 returns the number of set bits in x[0..7] (per component) with 4
// population counts instead of 8 (Harley and Seal): a carry-save tree
// reduces the 8 words to ones + 2*twos + 4*fours + 8*eights. Population
// counts run at a quarter of the rate of logic on NVIDIA GPUs.
uvec4 count8(uvec4 x[8]) {
	uvec4 s1, c1, s2, c2, s3, c3, t1, d1;
	csa(x[0], x[1], x[2], s1, c1);
	csa(x[3], x[4], x[5], s2, c2);
	csa(s1, s2, x[6], s3, c3);
	uvec4 ones = s3 ^ x[7], c4 = s3 & x[7];
	csa(c1, c2, c3, t1, d1);
	uvec4 twos = t1 ^ c4, d2 = t1 & c4;
	uvec4 fours = d1 ^ d2, eights = d1 & d2;
	return uvec4(bitCount(ones)) + (uvec4(bitCount(twos)) << 1u) + (uvec4(bitCount(fours)) << 2u) + (uvec4(bitCount(eights)) << 3u);
}

// combine8 adds the products of a full chunk: 8 words of 4 pixels and of
// 4 channels.
void combine8(inout uvec4 acc[4]) {
	uvec4 a[8], b[8], x[8];
	for (int k = 0; k < 8; k++) {
		a[k] = sIn[k][gl_LocalInvocationIndex & 15u];
		b[k] = sW[k][gl_LocalInvocationIndex >> 4u];
	}
	for (int i = 0; i < 4; i++) {
		for (int k = 0; k < 8; k++) x[k] = TYPE == 1 ? (uvec4(a[k][i]) ^ b[k]) : (uvec4(a[k][i]) & b[k]);
		acc[i] += count8(x);
	}
}

// pixelOf returns the batch image, row and column (in the clip) of
// flattened destination pixel q.
ivec3 pixelOf(uint q) {
	uint per = uint(pc.clipW * pc.clipH);
	uint z = q / per, r = q - z * per;
	uint oy = r / uint(pc.clipW);
	return ivec3(z, oy, r - oy * uint(pc.clipW));
}

void main() {
	uint tid = gl_LocalInvocationIndex;
	uint tp = tid & 15u, to = tid >> 4u; // this invocation's pixel and channel quads
	uint lw = tid & 7u, lr = tid >> 3u;   // loader: word lw of pixel (channel) lr and lr+32
	uint o0 = gl_WorkGroupID.y * 64u;
	uint tiles = (pc.pixels + 63u) / 64u;
	for (uint tile = gl_WorkGroupID.x; tile < tiles; tile += gl_NumWorkGroups.x) {
		uint q0 = tile * 64u;
		// The loader's two pixels: window origin and source pixel base.
		ivec2 org[2];
		int pbase[2];
		bool valid[2];
		for (int h = 0; h < 2; h++) {
			uint q = q0 + lr + 32u * uint(h);
			valid[h] = q < pc.pixels;
			ivec3 p = pixelOf(min(q, pc.pixels - 1u));
			org[h] = ivec2(pc.firstX + p.z * SX, pc.firstY + p.y * SY);
			pbase[h] = p.x * pc.srcH * pc.srcW;
		}
		uvec4 acc[4] = uvec4[4](uvec4(0u), uvec4(0u), uvec4(0u), uvec4(0u));
		for (int ky = 0; ky < KH; ky++) {
			for (int kx = 0; kx < KW; kx++) {
				uint tap = uint(ky * KW + kx);
				for (uint wc = 0u; wc < WORDS; wc += 8u) {
					uint w = wc + lw;
					for (int h = 0; h < 2; h++) {
						uint r = lr + 32u * uint(h);
						ivec2 s = org[h] + ivec2(kx * DX, ky * DY);
						bool inside = s.x >= 0 && s.x < pc.srcW && s.y >= 0 && s.y < pc.srcH;
						uint word = 0u;
						if (w < WORDS && valid[h]) {
							word = inside ? packed[uint(pbase[h] + s.y * pc.srcW + s.x) * WORDS + w]
							              : weights[PADWORDS + w];
						}
						sIn[lw][r >> 2u][r & 3u] = word;
						uint o = o0 + r;
						sW[lw][r >> 2u][r & 3u] = (w < WORDS && o < OUT) ? weights[(o * uint(KH * KW) + tap) * WORDS + w] : 0u;
					}
					barrier();
					if (WORDS - wc >= 8u) {
						combine8(acc);
					} else {
						for (uint k = 0u; k < WORDS - wc; k++) combine(acc, sIn[k][tp], sW[k][to]);
					}
					barrier();
				}
			}
		}
		if (BETA != 0) {
			// beta of the tile's pixels, once each: the mean of A over the taps.
			if (tid < 64u) {
				uint q = min(q0 + tid, pc.pixels - 1u);
				ivec3 p = pixelOf(q);
				ivec2 org2 = ivec2(pc.firstX + p.z * SX, pc.firstY + p.y * SY);
				int pb = p.x * pc.srcH * pc.srcW;
				float sum = 0.0;
				for (int ky = 0; ky < KH; ky++) {
					for (int kx = 0; kx < KW; kx++) {
						ivec2 s = org2 + ivec2(kx * DX, ky * DY);
						bool inside = s.x >= 0 && s.x < pc.srcW && s.y >= 0 && s.y < pc.srcH;
						sum += inside ? uintBitsToFloat(packed[pc.aBase + uint(pb + s.y * pc.srcW + s.x)]) : params[PADA];
					}
				}
				sBeta[tid] = sum / float(KH * KW);
			}
			barrier();
		}
		for (int i = 0; i < 4; i++) {
			uint q = q0 + tp * 4u + uint(i);
			if (q >= pc.pixels) break;
			ivec3 p = pixelOf(q);
			float beta = BETA != 0 ? sBeta[tp * 4u + uint(i)] : 1.0;
			uint dpix = pc.dstBase + uint(p.x) * pc.dstBatch + uint(pc.dstY0 + p.y) * pc.dstW + uint(pc.dstX0 + p.z);
			for (int j = 0; j < 4; j++) {
				uint o = o0 + to * 4u + uint(j);
				if (o >= OUT) break;
				float s = TYPE == 1 ? float(int(uint(KH * KW) * CHANNELS) - 2 * int(acc[i][j])) : float(acc[i][j]);
				float y = params[SCALE + o] * beta * s + params[OUT + o];
				dst[dpix + o * pc.dstPlane] = STORE(neuronForward(y, o));
			}
		}
		if (BETA != 0) barrier(); // sBeta is rewritten by the next tile
	}
}
