#version 450
// The weight (and bias) gradient of a depthwise convolution: for output
// channel c (the workgroup's x) and split s (its y), over the batch images
// [s*bChunk, min(batches, (s+1)*bChunk)) and the pixels (x, y) of the dy
// region:
//   outW[wBase + (s*channels + c)*KHW + tap] = sum dy(b, c, x, y) *
//       in(b, c/MULT, first + (x*SX, y*SY) + tap)         (0 outside the input)
//   outB[bBase + s*channels + c] = sum dy(b, c, x, y)     (BIASGRAD)
// An item is a block of OX x OY dy pixels (OX consecutive columns of OY
// consecutive rows): its invocation loads the block's dy values once and
// each input row the windows touch once, the SEG columns they span (as
// convolution_depthwise.comp does), so that a dy value costs one load and
// an input value about ROWS / OY * SEG / OX instead of KHW loads and
// their index arithmetic. All of an item's loads are independent, so they
// are in flight together. Each invocation adds its items (t, t + T, ...)
// in order, then a tree adds the invocations per tap: a fixed order, no
// atomics. With one split these are the gradients, else
// convolution_reduce.comp adds the splits.
//
// VW (ops' convVectorOf over dy and the input: 8 in float16 where OX is
// 8, else 4 or 2 where OX is a multiple of it; both regions' widths,
// first columns and rows' first values multiples of VW; else 1) loads
// dy's OX values of a row as aligned vectors, and an input row's SEG
// columns as the aligned vectors that hold them (PHASE = first.x mod VW
// is where the first column lies in the first one; each vector lies
// wholly inside the region or wholly outside;
// convolution_depthwise_common.glsl): the same values and sums in the
// same order, with a fraction of the load instructions. On an H200
// (bench/results/h200-2026-11-28-s3, runs 1 and 2), 32x256x56x56 3x3:
// float32 95.0 us on strips of 4 of one row, single values, 68.8 on quads
// over 4 rows (79% of the copy bandwidth); float16 106.8 -> 60.9 on quads,
// 54.0 on 8 halves a load over strips of 8.
// vkmps:variant f16 -DVKMPS_F16
#include "convolution_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 14) const bool BIASGRAD = false;
layout(constant_id = 16) const int MULT = 1;
layout(constant_id = 12) const int OX = 4;    // dy columns per item
layout(constant_id = 13) const int OY = 1;    // dy rows per item
layout(constant_id = 17) const int VW = 1;    // values per load: 1, 2, 4 or 8 (float16)
layout(constant_id = 18) const int PHASE = 0; // first.x mod VW

const int KEX = (KW - 1) * DX + 1;
const int KEY = (KH - 1) * DY + 1;
const int SEG = (OX - 1) * SX + KEX;  // input columns an item spans
const int ROWS = (OY - 1) * SY + KEY; // input rows an item spans

layout(std430, binding = 0) readonly buffer Dy { ELEM dy[]; };
layout(std430, binding = 0) readonly buffer Dy2 { ELEM2 dy2[]; };
layout(std430, binding = 0) readonly buffer Dy4 { ELEM4 dy4[]; };
#ifdef VKMPS_F16
layout(std430, binding = 0) readonly buffer Dy8 { uvec4 dy8[]; };
#endif
#define DW_SRC 1
#include "convolution_depthwise_common.glsl"
layout(std430, binding = 2) writeonly buffer OutW { float outW[]; };
layout(std430, binding = 3) writeonly buffer OutB { float outB[]; };

layout(push_constant) uniform Push {
	ivec2 xSize, first, dyOrigin, dySize;
	uint dyStride, xStride;
	uint dyBase, dyBatch, dyPlane;
	uint xBase, xBatch, xPlane;
	uint channels, batches, bChunk;
	uint wBase, bBase;
	uint c0; // channel of c = 0 in dy's and the input's channel numbering
} pc;

// One row of partial sums per tap (and one for the bias), reduced
// together: log2(T) barriers in all.
const uint RED = KHW + 1;
shared float red[RED * gl_WorkGroupSize.x];

// rowUsed reports whether some dy row of an item reads input row ir of
// its span (a stride above the window's height skips rows).
bool rowUsed(int ir) {
	bool u = false;
	[[unroll]] for (int oy = 0; oy < OY; oy++) {
		int d = ir - oy * SY;
		u = u || (d >= 0 && d < KEY && d % DY == 0);
	}
	return u;
}

// loadDy returns the OX dy values of the row starting at index at (a
// multiple of VW where VW > 1) from column x0 of the region, 0 past it.
void loadDy(uint at, int x0, out float d[OX]) {
	if (VW > 1) {
		[[unroll]] for (int i = 0; i < OX; i += VW) {
			// The region's width is a multiple of VW: a vector is wholly in or out.
			bool in_ = x0 + i < pc.dySize.x;
			uint q = (at + uint(min(i, max(pc.dySize.x - x0 - VW, 0)))) / uint(VW);
			float v[8];
#ifdef VKMPS_F16
			if (VW == 8) dwUnpack8(dy8[q], v);
#endif
			if (VW == 4) {
				vec4 u = LOAD4(dy4[q]);
				[[unroll]] for (int j = 0; j < 4; j++) v[j] = u[j];
			} else if (VW == 2) {
				vec2 u = LOAD2(dy2[q]);
				v[0] = u.x;
				v[1] = u.y;
			}
			[[unroll]] for (int j = 0; j < VW; j++) d[i + j] = in_ ? v[j] : 0.0;
		}
		return;
	}
	[[unroll]] for (int i = 0; i < OX; i++) d[i] = x0 + i < pc.dySize.x ? LOAD(dy[at + uint(i)]) : 0.0;
}

void main() {
	uint t = gl_LocalInvocationID.x, c = gl_WorkGroupID.x, s = gl_WorkGroupID.y;
	uint strips = (uint(pc.dySize.x) + uint(OX) - 1u) / uint(OX);
	uint rowGroups = (uint(pc.dySize.y) + uint(OY) - 1u) / uint(OY);
	uint b0 = s * pc.bChunk;
	uint b1 = min(pc.batches, b0 + pc.bChunk);
	uint items = b1 > b0 ? (b1 - b0) * rowGroups * strips : 0u; // an empty split writes 0
	float acc[KHW];
	[[unroll]] for (uint r = 0; r < KHW; r++) acc[r] = 0.0;
	float accB = 0.0;
	uint cc = pc.c0 + c;
	for (uint i = t; i < items; i += gl_WorkGroupSize.x) {
		uint g = i / strips, bi = g / rowGroups;
		uint b = b0 + bi;
		int y0 = int(g - bi * rowGroups) * OY;
		int x0 = int(i - g * strips) * OX;
		uint dyAt = pc.dyBase + b * pc.dyBatch + cc * pc.dyPlane + uint(pc.dyOrigin.x + x0);
		float d[OY * OX];
		[[unroll]] for (int oy = 0; oy < OY; oy++) {
			float r[OX];
			int y = y0 + oy;
			if (y < pc.dySize.y) loadDy(dyAt + uint(pc.dyOrigin.y + y) * pc.dyStride, x0, r);
			else [[unroll]] for (int ox = 0; ox < OX; ox++) r[ox] = 0.0;
			[[unroll]] for (int ox = 0; ox < OX; ox++) {
				d[oy * OX + ox] = r[ox];
				accB += r[ox];
			}
		}
		ivec2 s0 = pc.first + ivec2(x0 * SX, y0 * SY); // input position of the first tap
		uint base = pc.xBase + b * pc.xBatch + (cc / uint(MULT)) * pc.xPlane;
		[[unroll]] for (int ir = 0; ir < ROWS; ir++) {
			int q = s0.y + ir;
			if (!rowUsed(ir) || uint(q) >= uint(pc.xSize.y)) continue;
			float v[SEG];
			dwRow(base + uint(q) * pc.xStride, s0.x, pc.xSize.x, v);
			[[unroll]] for (int oy = 0; oy < OY; oy++) {
				int dr = ir - oy * SY; // row offset in the window
				if (dr < 0 || dr >= KEY || dr % DY != 0) continue;
				int ky = dr / DY;
				[[unroll]] for (int kx = 0; kx < KW; kx++) {
					[[unroll]] for (int ox = 0; ox < OX; ox++)
						acc[ky * KW + kx] = fma(d[oy * OX + ox], v[ox * SX + kx * DX], acc[ky * KW + kx]);
				}
			}
		}
	}
	const uint T = gl_WorkGroupSize.x;
	[[unroll]] for (uint r = 0; r < KHW; r++) red[r * T + t] = acc[r];
	red[KHW * T + t] = accB;
	barrier();
	for (uint k = T / 2; k > 0; k >>= 1) {
		if (t < k) {
			[[unroll]] for (uint r = 0; r < RED; r++) red[r * T + t] += red[r * T + t + k];
		}
		barrier();
	}
	if (t == 0) {
		[[unroll]] for (uint r = 0; r < KHW; r++) outW[pc.wBase + (s * pc.channels + c) * KHW + r] = red[r * T];
		if (BIASGRAD) outB[pc.bBase + s * pc.channels + c] = red[KHW * T];
	}
}
