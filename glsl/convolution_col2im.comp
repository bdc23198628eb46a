#version 450
// col2im (vkmps): the second pass of a strided data gradient run as a
// columns GEMM (ops' convColumnsGemm): convolution_gemm.comp's SPLITK 1
// pass (MODE_A 2, a 1x1 im2col of dy) left the raw sums
// cols[s][c*KHW + tap][b*P + oy*W + ox] of each split s, P = W x H =
// inSize the dy pixels: the products of tap (kx, ky) of channel c with dy
// pixel (ox, oy). One invocation per dx pixel (x, y) (x of the grid, from
// n0), channel c (y) and batch image b (z) adds, split by split and tap
// by tap, those whose window reaches it, x = first.x + ox*SX + kx*DX,
// then takes the bias and the neuron and stores as convolution_gemm.comp
// does. The push constants are convolution_gemm.comp's, outSize and
// outOrigin the dx region, M its channels, N the GEMM's columns. Its own
// shader so that the sums are read through a readonly binding.
// vkmps:variant f16 -DVKMPS_F16
#include "convolution_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 3) const uint BK = 8; // unused here (convolution_gemm_head.glsl's phases)
#include "convolution_gemm_head.glsl"

layout(std430, binding = 5) readonly buffer Part { float part[]; };

void main() {
	uint pixels = uint(pc.outSize.x * pc.outSize.y);
	uint p = pc.n0 + gl_GlobalInvocationID.x, c = gl_GlobalInvocationID.y, b = gl_WorkGroupID.z;
	if (p >= pixels || c >= pc.M) return;
	ivec2 xy = ivec2(p % uint(pc.outSize.x), p / uint(pc.outSize.x));
	uint cols = uint(pc.inSize.x * pc.inSize.y);
	float s = 0.0;
	for (uint i = 0; i < pc.splits; i++) {
		[[unroll]] for (int ky = 0; ky < KH; ky++) {
			[[unroll]] for (int kx = 0; kx < KW; kx++) {
				ivec2 t = xy - pc.first - ivec2(kx * DX, ky * DY);
				ivec2 o = t / ivec2(SX, SY);
				if (t.x < 0 || t.y < 0 || o * ivec2(SX, SY) != t || o.x >= pc.inSize.x || o.y >= pc.inSize.y) continue;
				s += part[pc.partBase + ((i * pc.M + c) * KHW + uint(ky * KW + kx)) * pc.N + b * cols + uint(o.y * pc.inSize.x + o.x)];
			}
		}
	}
	// Bindings 0 and 1 (the GEMM's source and weights, bound here too)
	// stay in the layout: K, the GEMM's depth, is never 0.
	if (pc.K == 0u) s += LOAD(im[pc.imBase]) * wt[pc.wBase];
	storeOut(0u, c, outIndexAt(uvec3(xy, b)), s);
}
