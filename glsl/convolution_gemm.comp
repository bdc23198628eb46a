#version 450
// Convolution, its data gradient, the transpose convolution and fully
// connected layers as one implicit GEMM whose result is an image
// (MPSCNNConvolution, MPSCNNConvolutionGradient's data part,
// MPSCNNConvolutionTranspose, MPSCNNFullyConnected): per group g (the
// workgroup's z), C[m][n] = sum_k A[m][k] * B[k][n], then
// dst(channel g*M + m, pixel n) = neuron(C + bias[g*M + m]).
//
// A (MODE_A) comes from the weights Wt (float32):
//   0 rows:        A[m][k] = Wt[wBase + (g*M + m)*K + k]            (convolution, fully connected)
//   1 transposed:  k = co*KHW + tap, A[m][k] = Wt[wBase + ((g*cinG + co)*M + m)*KHW + tap]
//                  (data gradient, transpose convolution: the weights of the convolution it reverses)
//   2 columns:     A[m][k] = Wt[wBase + k*ld + m]                   (fully connected data gradient)
// B (MODE_B) from the image Im, n = (batch b, output pixel (x, y)):
//   0 im2col:      k = ci*KHW + tap, B[k][n] = Im(b, g*cinG + ci, first + (x*SX, y*SY) + tap)
//   1 gather:      k = co*KHW + tap, B[k][n] = Im(b, g*cinG + co, q) where
//                  (x, y) = first + q*(SX, SY) + tap, 0 when no such q
//   2 rows:        B[k][n] = Im[imBase + n*imBatch + k]              (fully connected)
//   3 phases:      mode 1 split by the stride (no dilation): z = phase*groups + g;
//                  phase (px, py) covers the outputs (px + SX*i, py + SY*j), and only
//                  the taps (kx0 + SX*a, ky0 + SY*b) with kx0 = (px - first.x) mod SX
//                  reach them: k = co*(nkx*nky) + b*nkx + a, the divisions exact.
//                  A is then the mode 1 weights of those taps.
// Im is read over a region of inSize pixels at inOrigin, rows inStride
// apart; outside it reads 0. dst pixel n is written at outOrigin + (x, y).
//
// DIRECT: one invocation per output, a plain loop over k (the fallback
// for devices or shapes the tiles do not suit); else gemm.glsl's tiles.
// SPLITK 1: the tiles of z = (s*P + phase)*groups + g (P phases in MODE_B
// 3, else 1) sum only k in [s*kChunk, (s+1)*kChunk) and write those
// partial sums, raw, to part[partBase + ((s*groups + g)*M + m)*N + n'],
// n' the column among all N output pixels (fullColumn); a phase's split
// past its K writes nothing. SPLITK 2 then adds the splits of each output
// in order (a phase's own: phaseSplits), one invocation per FINISH_ROWS
// outputs of a column, and finishes them (bias, neuron, store): a GEMM of
// few tiles fills the device, and the phases of a strided data gradient,
// whose taps differ (3x3 stride 2: 4, 2, 2 and 1), take equal shares; the
// results repeat bit for bit. convolution_col2im.comp instead adds the
// partial sums of a columns GEMM into a strided data gradient.
// VEC_A (MODE_A 0; K and the weights' first value multiples of 4) loads
// the weights as quads along k; VEC_B (MODE_B 0 of a pointwise
// convolution: 1x1 kernel, stride 1, first = 0, the region the image's
// whole plane of a multiple of 4 pixels, the image's first value a multiple
// of 4) loads the source as quads along n; of MODE_B 2 (imBatch and
// imBase multiples of 4: ops' im2col columns) as quads along k.
//
// Loads (gemmFetchA, gemmFetchB in convolution_gemm_fetch.glsl): every
// value's index and whether it lies inside the operand are computed
// first, and the value is then one load under that predicate, not a load
// inside branches. The float16 build keeps the image's values in rb and
// rb4 as loaded (gemm.glsl's raw registers) and makes them floats only
// when staged, after the multiply of the slice before, so that a slice's
// loads are in flight during that multiply: with WORDS (ops/gemm.go's
// convWords: the image binding covers whole 32-bit words) a value is
// loaded as the word holding it (imw; float16 storage has no 16-bit
// registers to hold a half in) and its half is taken when staged, the
// high one where bit r of rbHi is set; VEC_B quads are loaded as the two
// words holding them (imq, always possible: quads are whole); without
// WORDS each value is loaded as a half and converted at once. The
// weights are float32: ra holds their bits. The sums are the same, in
// the same order: results repeat bit for bit. On an H100 (float16 before
// -> after, gpu-us): 1x1 512->2048 data gradient 291 -> 213 (float32 224
// -> 211), stem 7x7/2 forward 347 -> 309 (float32 324 -> 300), 3x3 64@56
// on this path 323 -> 278 (float32 316 -> 284); the 1x1 512->2048 forward
// lost 4% (138 -> 143, float32 unchanged): bench/results/h100-2026-11-27-fetch.
// vkmps:variant f16 -DVKMPS_F16
#include "convolution_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 32;
layout(constant_id = 2) const uint BN = 32;
layout(constant_id = 3) const uint BK = 16;
layout(constant_id = 4) const uint TM = 4;
layout(constant_id = 5) const uint TN = 4;
layout(constant_id = 28) const uint SPLITK = 0;
const uint FINISH_ROWS = 8; // SPLITK 2: output rows per invocation (ops' convFinishRows)
layout(constant_id = 29) const bool WORDS = false; // float16: load 32-bit words (see above)
#include "convolution_gemm_head.glsl"

#ifdef VKMPS_F16
layout(std430, binding = 0) readonly buffer ImWords { uint imw[]; };
layout(std430, binding = 0) readonly buffer ImQuads { uvec2 imq[]; };

uint rbHi; // WORDS: bit r set when value r of rb is its word's high half

// Raw registers: ra holds the weights' bits; rb the word holding the
// value (WORDS), else the float's bits; rb4 a quad's two words.
#define GEMM_REG uint
#define GEMM_REG_B4 uvec2
#define CONV_GEMM_RAW

float rawValue(uint v, uint r) {
	if (!WORDS) return uintBitsToFloat(v);
	vec2 h = unpackHalf2x16(v);
	return ((rbHi >> r) & 1u) != 0u ? h.y : h.x;
}
#define GEMM_A_VALUE(r) uintBitsToFloat(ra[r])
#define GEMM_B_VALUE(r) rawValue(rb[r], r)
#define GEMM_B4_VALUE(r) vec4(unpackHalf2x16(rb4[r].x), unpackHalf2x16(rb4[r].y))

// wtRaw, imRaw and imRaw4 return the raw registers of wt[i], of im[i]
// (value r of rb; setting bit r of rbHi when it is its word's high half)
// and of quad q of im4, each 0 unless ok.
uint wtRaw(uint i, bool ok) { return ok ? floatBitsToUint(wt[i]) : 0u; }

uint imRaw(uint i, bool ok, uint r) {
	if (!WORDS) return ok ? floatBitsToUint(LOAD(im[i])) : 0u;
	rbHi |= (i & 1u) << r;
	return ok ? imw[i >> 1] : 0u;
}

uvec2 imRaw4(uint q, bool ok) { return ok ? imq[q] : uvec2(0u); }
#endif
#include "gemm.glsl"
#include "convolution_gemm_fetch.glsl"

layout(std430, binding = 5) buffer Part { float part[]; };
// SPLITK 2 reads the partial sums through a readonly view of the same
// binding: through the read-write one the H200 finished 2048 x 1568
// outputs of 2 splits in 51 us (bench/results/h200-2026-11-28-s2 run 1).
layout(std430, binding = 5) readonly buffer PartSums { float sums[]; };

void main() {
	if (SPLITK == 2) {
		// FINISH_ROWS rows per invocation, their loads in flight together:
		// with one output each, the H100 took 70 us to finish 2048 x 1568
		// outputs of 2 splits (12800 workgroups a microsecond at most).
		// n goes over every output pixel (MODE_B 3: of every phase).
		setPhase(0);
		uint g = gl_WorkGroupID.z;
		uint n = pc.n0 + gl_GlobalInvocationID.x, m0 = gl_GlobalInvocationID.y * FINISH_ROWS;
		if (n >= pc.N || m0 >= pc.M) return;
		uint splits = pc.splits, o;
		if (MODE_B == 3) {
			uint pixels = uint(pc.outSize.x * pc.outSize.y), p = n % pixels;
			uvec3 px = uvec3(p % uint(pc.outSize.x), p / uint(pc.outSize.x), n / pixels);
			splits = phaseSplits(px.xy);
			o = outIndexAt(px);
		} else o = outIndex(n);
		uint at = pc.partBase + (g * pc.M + m0) * pc.N + n, stride = pc.groups * pc.M * pc.N;
		float s[FINISH_ROWS];
		[[unroll]] for (uint r = 0; r < FINISH_ROWS; r++) s[r] = 0.0;
		for (uint i = 0; i < splits; i++) {
			[[unroll]] for (uint r = 0; r < FINISH_ROWS; r++) {
				if (m0 + r < pc.M) s[r] += sums[at + r * pc.N + i * stride];
			}
		}
		[[unroll]] for (uint r = 0; r < FINISH_ROWS; r++) {
			if (m0 + r < pc.M) storeOut(g, m0 + r, o, s[r]);
		}
		return;
	}
	uvec2 gs = setWorkgroup();
	uint g = gs.x, split = gs.y;
	if (DIRECT) {
		uint n = pc.n0 + gl_GlobalInvocationID.x, m = gl_GlobalInvocationID.y;
		if (n >= nAll || m >= pc.M) return;
		float s = 0.0;
		uvec3 px = pixelOf(n);
		for (uint k = 0; k < kAll; k++) s = fma(loadA(g, m, k), loadB(g, k, n, px), s);
		storeOut(g, m, outIndex(n), s);
		return;
	}
	uint t = gl_LocalInvocationID.x;
	if (SPLITK == 1 && !splitRange(split)) return;
	if (!gemmSetup(g, t)) return; // a phase with fewer outputs than the largest
	gemmRun(kLim > kOff ? (kLim - kOff + BK - 1) / BK : 1u); // an empty split writes 0
	if (SPLITK == 1) {
		// Columns outermost, as below: with rows outermost and a continue
		// the H100's driver spilled the accumulators (ten times slower).
		uint base = pc.partBase + (split * pc.groups + g) * pc.M * pc.N;
		[[unroll]] for (uint j = 0; j < TN; j++) {
			uint n = tileN0 + gemmCol(t, j);
			uint at = base + (n < nAll ? fullColumn(n) : 0u);
			[[unroll]] for (uint i = 0; i < TM; i++) {
				uint m = tileM0 + gemmRow(t, i);
				if (m < pc.M && n < nAll) part[at + m * pc.N] = acc[i * (TN / 4) + j / 4][j % 4];
			}
		}
		return;
	}
	[[unroll]] for (uint j = 0; j < TN; j++) {
		uint n = tileN0 + gemmCol(t, j);
		if (n >= nAll) continue;
		uint at = outIndex(n);
		[[unroll]] for (uint i = 0; i < TM; i++) {
			uint m = tileM0 + gemmRow(t, i);
			if (m < pc.M) storeOut(g, m, at, acc[i * (TN / 4) + j / 4][j % 4]);
		}
	}
}
