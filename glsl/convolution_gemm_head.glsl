// Shared by the convolution GEMM shaders (convolution_gemm.comp with
// gemm.glsl's tiles, convolution_gemm_coopmat.comp with cooperative
// matrices): the operand modes, bindings, push constants, and the element
// loaders and store of glsl/convolution_gemm.comp (see its header).
layout(constant_id = 12) const int MODE_A = 0;
layout(constant_id = 13) const int MODE_B = 0;
layout(constant_id = 14) const bool BIAS = false;
layout(constant_id = 15) const bool A_KFAST = true;
layout(constant_id = 16) const bool B_KFAST = false;
layout(constant_id = 17) const bool DIRECT = false;
layout(constant_id = 18) const bool VEC_A = false;
layout(constant_id = 19) const bool VEC_B = false;
// MODE_B 3: k = tap*cinG + channel over the phase's own taps (ops sets it
// where cinG is a multiple of BK, so that a slice lies within one tap;
// a split of K then starts on a slice), instead of channel*PH_T + tap
// over every phase's PH_T taps.
layout(constant_id = 30) const bool TAP_MAJOR = false;

layout(std430, binding = 0) readonly buffer Im { ELEM im[]; };
layout(std430, binding = 0) readonly buffer Im4 { ELEM4 im4[]; };
layout(std430, binding = 1) readonly buffer Wt { float wt[]; };
layout(std430, binding = 1) readonly buffer Wt4 { vec4 wt4[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) readonly buffer Prelu { float prelu[]; };
layout(std430, binding = 4) writeonly buffer Dst { ELEM dst[]; };

layout(push_constant) uniform Push {
	ivec2 inSize;    // the B image region, W x H
	ivec2 inOrigin;  // its first pixel in the image
	ivec2 first;     // see MODE_B
	ivec2 outSize;   // output pixels per batch image, W x H
	ivec2 outOrigin; // the destination pixel of output (0, 0)
	uint inStride;   // B image row length
	uint dstStride;  // destination row length
	uint imBase, imBatch, imPlane;
	uint dstBase, dstBatch, dstPlane;
	uint wBase, ld;
	uint biasBase, preluBase;
	uint M, N, K;
	uint cinG;       // B image channels per group
	uint n0;         // first output column of the dispatch
	uint groups;     // groups (z = (split*phases + phase)*groups + g)
	uint kChunk;     // split-K: k per split
	uint partBase;   // split-K: the first partial sum
	uint splits;     // split-K: the splits to add
} pc;

#define NEURON_PRELU(c) prelu[pc.preluBase + (c)]
#include "neuron.glsl"

// The matrix of this workgroup: K x N, the phase's in MODE_B 3; its k
// from kOff below kLim (a split of K, or all of it).
uint kAll, nAll;
uint kOff, kLim;
ivec2 phOff, phSize; // MODE_B 3: the phase's first output pixel and its outputs per axis
ivec2 phTap0;        // its first tap (kx0, ky0)
uint phNtx;          // TAP_MAJOR: its taps along x

// Every phase walks a PH_TX x PH_TY grid of taps (constants, so that the
// decomposition of k costs no division); taps past the kernel, where a
// phase has fewer, read 0.
const uint PH_TX = uint((KW + SX - 1) / SX);
const uint PH_T = PH_TX * uint((KH + SY - 1) / SY);

void setPhase(uint phase) {
	kAll = pc.K;
	nAll = pc.N;
	kOff = 0u;
	kLim = kAll;
	if (MODE_B != 3) return;
	phOff = ivec2(int(phase % uint(SX)), int(phase / uint(SX)));
	ivec2 a = phOff - pc.first, S = ivec2(SX, SY);
	phTap0 = a - mix(a, a - (S - 1), lessThan(a, ivec2(0))) / S * S; // a mod S in [0, S)
	phSize = max(pc.outSize - phOff + ivec2(SX - 1, SY - 1), ivec2(0)) / ivec2(SX, SY);
	// A phase none of whose taps lies in the kernel (a window narrower
	// than the stride: 1x1 stride 2) sums nothing: its outputs are 0 (with
	// the bias and neuron), written after one slice of nothing, not after
	// cinG*PH_T values of zeros. With TAP_MAJOR a phase sums only its own
	// taps (3x3 stride 2: 4, 2, 2 and 1 of the grid's 4).
	ivec2 nt = (ivec2(KW, KH) - phTap0 + S - 1) / S; // the phase's taps per axis, 0 or more
	phNtx = uint(nt.x);
	kAll = nt.x <= 0 || nt.y <= 0 ? 0u : pc.cinG * (TAP_MAJOR ? uint(nt.x * nt.y) : PH_T);
	kLim = kAll;
	nAll = pc.N / uint(pc.outSize.x * pc.outSize.y) * uint(phSize.x * phSize.y);
}

// The pixel (x, y) and batch image of output column n.
uvec3 pixelOf(uint n) {
	if (MODE_B == 3) {
		uint pixels = uint(phSize.x * phSize.y);
		uint b = n / pixels, p = n % pixels;
		return uvec3(ivec2(p % uint(phSize.x), p / uint(phSize.x)) * ivec2(SX, SY) + phOff, b);
	}
	uint pixels = uint(pc.outSize.x * pc.outSize.y);
	uint b = n / pixels, p = n % pixels;
	return uvec3(p % uint(pc.outSize.x), p / uint(pc.outSize.x), b);
}

// phaseTap returns the channel co, and the tap (kx, ky), of k (MODE_B 3);
// phaseTapIn whether the tap lies in the kernel.
// tapMajor is TAP_MAJOR's channel and tap of k = kb + kk, the tap found
// from kb alone (kk keeps to kb's tap: phaseTapSlice).
uvec3 tapMajor(uint kb, uint kk) {
	uint r = kb / pc.cinG;
	return uvec3(kb - r * pc.cinG + kk, uvec2(ivec2(r % phNtx, r / phNtx) * ivec2(SX, SY) + phTap0));
}

uvec3 phaseTap(uint k) {
	if (TAP_MAJOR) return tapMajor(k, 0u);
	uint co = k / PH_T, r = k % PH_T;
	return uvec3(co, uvec2(ivec2(r % PH_TX, r / PH_TX) * ivec2(SX, SY) + phTap0));
}

// phaseTapSlice is phaseTap of value kk of the tiles' slice kt: with
// TAP_MAJOR the slice's tap, one division per slice (the same for every
// value: cinG is a multiple of BK, and so is a split's first k).
uvec3 phaseTapSlice(uint kt, uint kk) {
	uint kb = kOff + kt * BK;
	return TAP_MAJOR ? tapMajor(kb, kk) : phaseTap(kb + kk);
}

bool phaseTapIn(uvec3 ct) { return ct.y < uint(KW) && ct.z < uint(KH); }

float loadA(uint g, uint m, uint k) {
	if (m >= pc.M || k >= kAll) return 0.0;
	if (MODE_A == 0) return wt[pc.wBase + (g * pc.M + m) * pc.K + k];
	if (MODE_B == 3) {
		uvec3 ct = phaseTap(k);
		if (!phaseTapIn(ct)) return 0.0;
		return wt[pc.wBase + ((g * pc.cinG + ct.x) * pc.M + m) * KHW + ct.z * uint(KW) + ct.y];
	}
	if (MODE_A == 1) return wt[pc.wBase + ((g * pc.cinG + k / KHW) * pc.M + m) * KHW + k % KHW];
	return wt[pc.wBase + k * pc.ld + m];
}

// imAt reads the B image at region position q of channel plane c of
// batch image b, 0 outside the region.
float imAt(uint b, uint c, ivec2 q) {
	if (uint(q.x) >= uint(pc.inSize.x) || uint(q.y) >= uint(pc.inSize.y)) return 0.0;
	return LOAD(im[pc.imBase + b * pc.imBatch + c * pc.imPlane + uint(pc.inOrigin.y + q.y) * pc.inStride + uint(pc.inOrigin.x + q.x)]);
}

// loadB returns B[k][n]; px is pixelOf(n) (unused in MODE_B 2).
float loadB(uint g, uint k, uint n, uvec3 px) {
	if (k >= kAll || n >= nAll) return 0.0;
	if (MODE_B == 2) return LOAD(im[pc.imBase + n * pc.imBatch + k]);
	if (MODE_B == 3) {
		uvec3 ct = phaseTap(k);
		if (!phaseTapIn(ct)) return 0.0;
		return imAt(px.z, g * pc.cinG + ct.x, (ivec2(px.xy) - pc.first - ivec2(ct.yz)) / ivec2(SX, SY));
	}
	uint c = g * pc.cinG + k / KHW;
	ivec2 tap = convTap(k % KHW);
	if (MODE_B == 0) return imAt(px.z, c, pc.first + ivec2(px.xy) * ivec2(SX, SY) + tap);
	ivec2 t = ivec2(px.xy) - pc.first - tap;
	if (t.x < 0 || t.y < 0 || t.x % SX != 0 || t.y % SY != 0) return 0.0;
	return imAt(px.z, c, t / ivec2(SX, SY));
}

// outIndexAt returns the destination index of output pixel px (x, y,
// batch image) in channel plane 0 (add c*dstPlane for channel c);
// outIndex that of output column n.
uint outIndexAt(uvec3 px) {
	return pc.dstBase + px.z * pc.dstBatch + uint(pc.outOrigin.y + int(px.y)) * pc.dstStride + uint(pc.outOrigin.x + int(px.x));
}

uint outIndex(uint n) { return outIndexAt(pixelOf(n)); }

// The phases of MODE_B 3. A workgroup's z is (split*P + phase)*groups + g,
// P the phases (1 but in MODE_B 3), split the split of K (SPLITK 1).
const uint PHASES = uint(SX * SY);

// setWorkgroup sets the workgroup's group g and phase (setPhase) from its
// z, and returns g and its split of K.
uvec2 setWorkgroup() {
	uint g = gl_WorkGroupID.z % pc.groups, pz = gl_WorkGroupID.z / pc.groups;
	uint p = MODE_B == 3 ? PHASES : 1u;
	setPhase(pz % p);
	return uvec2(g, pz / p);
}

// fullColumn returns the column among every output pixel (n of MODE_B 0
// over the whole output) of the phase's column n: a split GEMM's partial
// sums lie there, so that the finishing pass goes over the whole output.
uint fullColumn(uint n) {
	if (MODE_B != 3) return n;
	uvec3 px = pixelOf(n);
	return (px.z * uint(pc.outSize.y) + px.y) * uint(pc.outSize.x) + px.x;
}

// splitRange sets the range of k that split s sums (SPLITK 1), and
// returns false where a phase's split has none: it writes no partial
// sums (phaseSplits does not count it). Other modes' empty splits
// write 0.
bool splitRange(uint s) {
	kOff = s * pc.kChunk;
	kLim = min(kAll, kOff + pc.kChunk);
	return MODE_B != 3 || kOff < kAll;
}

// phaseSplits returns the splits of K that the phase of output pixel
// (x, y) sums (MODE_B 3, SPLITK 2: those splitRange gave a range), after
// setting that phase.
uint phaseSplits(uvec2 xy) {
	setPhase(xy.x % uint(SX) + uint(SX) * (xy.y % uint(SY)));
	return kAll == 0u ? 0u : min(pc.splits, (kAll + pc.kChunk - 1u) / pc.kChunk);
}

void storeOut(uint g, uint m, uint at, float v) {
	uint c = g * pc.M + m;
	if (BIAS) v += bias[pc.biasBase + c];
	dst[at + c * pc.dstPlane] = STORE(neuronForward(v, c));
}

