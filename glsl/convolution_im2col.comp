#version 450
// im2col (vkmps): the first pass of a convolution run as an explicit
// im2col and a GEMM over its columns (ops' useIm2col: few input channels
// under wide windows, the ResNet stem's 3 channels under 7x7, where the
// implicit GEMM's gathers decide its time). It writes, for each column n
// of the part (batch image b = n / P, output pixel (x, y), P = outSize's
// pixels) and each k < ld of the window (k = ci*KHW + tap, as
// convolution_gemm.comp's MODE_B 0),
//   cols[n*ld + k] = Im(b, ci, first + (x*SX, y*SY) + tap)
// (0 outside the input region, and for k from K up to ld, the padding
// that makes ld a multiple of 4). convolution_gemm.comp's MODE_B 2
// (B[k][n] = cols[n*ld + k], as a fully connected layer's rows) then
// loads the columns as quads along k.
//
// One invocation per quad of a column: neighbouring invocations write
// neighbouring quads (a column's ld values are contiguous). Its index
// runs over y * rowQuads + x of the dispatch. Reads use a clamped index
// and a select (no branch per value).
// vkmps:variant f16 -DVKMPS_F16
#include "convolution_common.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Im { ELEM im[]; };
layout(std430, binding = 1) writeonly buffer Cols { ELEM4 cols4[]; };

layout(push_constant) uniform Push {
	ivec2 inSize;   // the input region, W x H
	ivec2 inOrigin; // its first pixel in the image
	ivec2 first;    // input position of output pixel (0, 0)'s first tap
	ivec2 outSize;  // output pixels per batch image, W x H
	uint inStride;  // input row length
	uint imBase, imBatch, imPlane;
	uint K;         // the window's values: channels x taps
	uint ld;        // values per column (a multiple of 4, K or more)
	uint N;         // columns: batch images of the part x output pixels
	uint rowQuads;  // invocations per dispatch row (y)
} pc;

void main() {
	uint q = gl_GlobalInvocationID.y * pc.rowQuads + gl_GlobalInvocationID.x;
	uint perCol = pc.ld / 4u;
	uint n = q / perCol, k0 = (q - n * perCol) * 4u;
	if (n >= pc.N) return;
	uint pixels = uint(pc.outSize.x * pc.outSize.y);
	uint b = n / pixels, p = n - b * pixels;
	ivec2 s = pc.first + ivec2(p % uint(pc.outSize.x), p / uint(pc.outSize.x)) * ivec2(SX, SY);
	uint base = pc.imBase + b * pc.imBatch;
	vec4 v;
	[[unroll]] for (uint j = 0u; j < 4u; j++) {
		uint k = k0 + j;
		uint c = k / KHW;
		ivec2 t = s + convTap(k - c * KHW);
		bool in_ = k < pc.K && uint(t.x) < uint(pc.inSize.x) && uint(t.y) < uint(pc.inSize.y);
		ivec2 tc = clamp(t, ivec2(0), pc.inSize - 1);
		uint i = base + min(c, pc.K / KHW - 1u) * pc.imPlane + uint(pc.inOrigin.y + tc.y) * pc.inStride + uint(pc.inOrigin.x + tc.x);
		float x = LOAD(im[i]);
		v[j] = in_ ? x : 0.0;
	}
	cols4[(n * pc.ld + k0) / 4u] = STORE4(v);
}
