#version 450
// col2im (vkmps): the second pass of a strided data gradient run as a
// columns GEMM (ops' convColumnsGemm): convolution_gemm.comp's SPLITK 1
// pass (MODE_A 2, a 1x1 im2col of dy) left the raw sums
// cols[s][c*KHW + tap][b*P + oy*W + ox] of each split s, P = W x H =
// inSize the dy pixels: the products of tap (kx, ky) of channel c with dy
// pixel (ox, oy). dx pixel (x, y) of the region adds, split by split and
// tap by tap, those whose window reaches it, x = first.x + ox*SX + kx*DX,
// then takes the bias and the neuron and stores as convolution_gemm.comp
// does.
//
// One invocation per cell (x of the grid, from n0), channel c (y) and
// batch image b (z): cell (cx, cy) is the SX x SY dx pixels first +
// (cx*SX + fx, cy*SY + fy), 0 <= fx < SX, 0 <= fy < SY, the cells
// covering the region row by row. Which taps reach pixel (fx, fy) of a
// cell, and from which dy pixel, is known when the shader is specialised:
// tap kx where fx - kx*DX is a multiple of SX, from ox = cx + (fx -
// kx*DX)/SX. So neighbouring invocations read neighbouring sums, tap by
// tap (an invocation per dx pixel instead read a quarter of them per
// load at stride 2: on an H200, 2026-11-29, bench/results/
// h200-2026-11-29-s8 run 14, the pass of the float16 128 -> 256 3x3
// stride-2 data gradient at 28x28 went from 43.7 to 24.5 us, 256 -> 512
// at 14x14 from 27.3 to 14.3; float32 alike). The
// sums and their order are a pixel's as before: the same results, bit
// for bit. The push constants are convolution_gemm.comp's, outSize and
// outOrigin the dx region, M its channels, N the GEMM's columns. Its own
// shader so that the sums are read through a readonly binding.
// vkmps:variant f16 -DVKMPS_F16
#include "convolution_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 3) const uint BK = 8; // unused here (convolution_gemm_head.glsl's phases)
#include "convolution_gemm_head.glsl"

layout(std430, binding = 5) readonly buffer Part { float part[]; };

// floorDiv is a / b rounded down, b > 0.
int floorDiv(int a, int b) { return a >= 0 ? a / b : -((b - 1 - a) / b); }

// Offsets that keep the tap arithmetic on non-negative numbers:
// fx - kx*DX + BX >= 0 and a multiple of SX exactly when fx - kx*DX is.
const int BX = SX * KW * DX, BY = SY * KH * DY;

void main() {
	ivec2 c0 = ivec2(floorDiv(-pc.first.x, SX), floorDiv(-pc.first.y, SY));
	ivec2 c1 = ivec2(floorDiv(pc.outSize.x - 1 - pc.first.x, SX), floorDiv(pc.outSize.y - 1 - pc.first.y, SY));
	uint ncx = uint(c1.x - c0.x + 1), cells = ncx * uint(c1.y - c0.y + 1);
	uint q = pc.n0 + gl_GlobalInvocationID.x, c = gl_GlobalInvocationID.y, b = gl_WorkGroupID.z;
	if (q >= cells || c >= pc.M) return;
	ivec2 cell = c0 + ivec2(q % ncx, q / ncx);
	uint cols = uint(pc.inSize.x * pc.inSize.y);
	[[unroll]] for (int fy = 0; fy < SY; fy++) {
		int y = pc.first.y + cell.y * SY + fy;
		[[unroll]] for (int fx = 0; fx < SX; fx++) {
			int x = pc.first.x + cell.x * SX + fx;
			if (x < 0 || y < 0 || x >= pc.outSize.x || y >= pc.outSize.y) continue;
			float s = 0.0;
			for (uint i = 0; i < pc.splits; i++) {
				[[unroll]] for (int ky = 0; ky < KH; ky++) {
					[[unroll]] for (int kx = 0; kx < KW; kx++) {
						int ry = fy - ky * DY + BY, rx = fx - kx * DX + BX;
						if (ry % SY != 0 || rx % SX != 0) continue; // fixed when specialised
						ivec2 o = cell + ivec2(rx / SX - KW * DX, ry / SY - KH * DY);
						if (o.x < 0 || o.y < 0 || o.x >= pc.inSize.x || o.y >= pc.inSize.y) continue;
						s += part[pc.partBase + ((i * pc.M + c) * KHW + uint(ky * KW + kx)) * pc.N + b * cols + uint(o.y * pc.inSize.x + o.x)];
					}
				}
			}
			// Bindings 0 and 1 (the GEMM's source and weights, bound here
			// too) stay in the layout: K, the GEMM's depth, is never 0.
			if (pc.K == 0u) s += LOAD(im[pc.imBase]) * wt[pc.wBase];
			storeOut(0u, c, outIndexAt(uvec3(x, y, b)), s);
		}
	}
}
