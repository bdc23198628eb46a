// The cooperative-matrix GEMM engine (VK_NV_cooperative_matrix, tensor
// cores): the same contract as gemm.glsl (the includer's gemmFetchA and
// gemmFetchB fill the slice layouts of gemm_layout.glsl), but a workgroup
// of WM x WN subgroups of SUBGROUP invocations computes the BM x BN tile,
// each subgroup a (BM/WM) x (BN/WN) block of FM x FN float32 accumulators
// of CM x CN (fcoopmatNV), multiplying CM x CK float16 slices of A by
// CK x CN float16 slices of B. The loaded values are rounded to half when
// staged: the path for float16 images, whose values are halves already
// (the float32 weights are rounded too). CM, CN, CK must be a shape the
// device lists (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV: float16
// A and B, float32 C), never assumed. Slices are double-buffered in shared
// memory as in gemm.glsl (one barrier per slice); gemmToShared then leaves
// C in gemmC, row m and column n at m*BN + n, for the includer's epilogue.
//
// The includer declares BM, BN, BK (a multiple of CK), WM, WN, CM, CN, CK,
// SUBGROUP and the bools A_KFAST, B_KFAST, VEC_A, VEC_B first.
//
// VKMPS_COOP_EMULATE builds the same engine without cooperative matrices,
// for testing it where the device has none (lavapipe): the invocations
// t*SUBGROUP.. of logical subgroup t compute its matrices with plain
// arithmetic, lane l holding elements l, l + SUBGROUP, ... of each
// accumulator (row-major), and a loaded A or B matrix is a view of the
// shared slice (its element offset, stride and layout, as
// coopMatLoadNV takes them), so every offset the real build passes is
// exercised. Shared values are float32 rounded to half
// (packHalf2x16): the same values, no float16 arithmetic needed.
#ifdef VKMPS_COOP_EMULATE
#define HALF float
#define TO_HALF(v) unpackHalf2x16(packHalf2x16(vec2((v), 0.0))).x
#else
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#define HALF float16_t
#define TO_HALF(v) float16_t(v)
#endif

const uint GEMM_T = WM * WN * SUBGROUP; // invocations per workgroup
#include "gemm_layout.glsl"
const uint SA = BM + 8; // halves per shared row of A (one k): 16-byte rows
const uint SB = BN + 8;
const uint FM = BM / WM / CM; // accumulators per subgroup along m
const uint FN = BN / WN / CN; // and along n

shared HALF gemmA[2 * BK * SA];
shared HALF gemmB[2 * BK * SB];
shared float gemmC[BM * BN];

#ifdef VKMPS_COOP_EMULATE
// A matrix: a view of a shared slice.
struct CoopView {
	uint off, stride;
	bool colMajor;
};
#define COOP_A CoopView
#define COOP_B CoopView
const uint CE = CM * CN / SUBGROUP; // accumulator elements per lane
float acc[FM * FN * CE];
uint coopSubgroup() { return gl_LocalInvocationID.x / SUBGROUP; }
void coopZero(uint q) {
	for (uint e = 0; e < CE; e++) acc[q * CE + e] = 0.0;
}
uint coopAt(CoopView v, uint r, uint c) { return v.off + (v.colMajor ? c * v.stride + r : r * v.stride + c); }
// coopMulAdd adds a (A's CM x CK view) times b (B's CK x CN view) to
// accumulator q.
void coopMulAdd(uint q, CoopView a, CoopView b) {
	uint lane = gl_LocalInvocationID.x % SUBGROUP;
	for (uint e = 0; e < CE; e++) {
		uint i = lane + e * SUBGROUP, r = i / CN, c = i % CN;
		float s = acc[q * CE + e];
		for (uint k = 0; k < CK; k++) s = fma(gemmA[coopAt(a, r, k)], gemmB[coopAt(b, k, c)], s);
		acc[q * CE + e] = s;
	}
}
void coopStore(uint q, uint off, uint stride) {
	uint lane = gl_LocalInvocationID.x % SUBGROUP;
	for (uint e = 0; e < CE; e++) {
		uint i = lane + e * SUBGROUP;
		gemmC[off + (i / CN) * stride + i % CN] = acc[q * CE + e];
	}
}
#define COOP_LOAD_A(m, off, stride, colMajor) m = CoopView(off, stride, colMajor)
#define COOP_LOAD_B(m, off, stride, colMajor) m = CoopView(off, stride, colMajor)
#define COOP_MULADD(q, a, b) coopMulAdd(q, a, b)
#define COOP_ZERO(q) coopZero(q)
#define COOP_STORE(q, off, stride) coopStore(q, off, stride)
#else
#define COOP_A fcoopmatNV<16, gl_ScopeSubgroup, CM, CK>
#define COOP_B fcoopmatNV<16, gl_ScopeSubgroup, CK, CN>
fcoopmatNV<32, gl_ScopeSubgroup, CM, CN> acc[FM * FN];
uint coopSubgroup() { return gl_SubgroupID; }
#define COOP_LOAD_A(m, off, stride, colMajor) coopMatLoadNV(m, gemmA, off, stride, colMajor)
#define COOP_LOAD_B(m, off, stride, colMajor) coopMatLoadNV(m, gemmB, off, stride, colMajor)
#define COOP_MULADD(q, a, b) acc[q] = coopMatMulAddNV(a, b, acc[q])
#define COOP_ZERO(q) acc[q] = fcoopmatNV<32, gl_ScopeSubgroup, CM, CN>(0.0)
#define COOP_STORE(q, off, stride) coopMatStoreNV(acc[q], gemmC, off, stride, false)
#endif

void gemmStage(uint buf) {
	uint t = gl_LocalInvocationID.x;
	if (VEC_A) {
		[[unroll]] for (uint r = 0; r < RA4; r++) {
			if (r * GEMM_T + t >= QA) break;
			uvec2 p = gemmPosA4(t, r);
			[[unroll]] for (uint j = 0; j < 4; j++) gemmA[(buf * BK + p.y + j) * SA + p.x] = TO_HALF(ra4[r][j]);
		}
	} else {
		[[unroll]] for (uint r = 0; r < RA; r++) {
			uvec2 p = gemmPosA(t, r);
			gemmA[(buf * BK + p.y) * SA + p.x] = TO_HALF(ra[r]);
		}
	}
	if (VEC_B) {
		[[unroll]] for (uint r = 0; r < RB4; r++) {
			if (r * GEMM_T + t >= QB) break;
			uvec2 p = gemmPosB4(t, r);
			[[unroll]] for (uint j = 0; j < 4; j++) gemmB[(buf * BK + p.x) * SB + p.y + j] = TO_HALF(rb4[r][j]);
		}
	} else {
		[[unroll]] for (uint r = 0; r < RB; r++) {
			uvec2 p = gemmPosB(t, r);
			gemmB[(buf * BK + p.x) * SB + p.y] = TO_HALF(rb[r]);
		}
	}
}

void gemmMultiply(uint buf) {
	uint sg = coopSubgroup();
	uint m0 = (sg / WN) * (BM / WM), n0 = (sg % WN) * (BN / WN);
	[[unroll]] for (uint kk = 0; kk < BK; kk += CK) {
		COOP_A a[FM];
		COOP_B b[FN];
		// A is staged k-major: (m, k) at k*SA + m, a column-major M x K.
		[[unroll]] for (uint i = 0; i < FM; i++) COOP_LOAD_A(a[i], (buf * BK + kk) * SA + m0 + i * CM, SA, true);
		[[unroll]] for (uint j = 0; j < FN; j++) COOP_LOAD_B(b[j], (buf * BK + kk) * SB + n0 + j * CN, SB, false);
		[[unroll]] for (uint i = 0; i < FM; i++) {
			[[unroll]] for (uint j = 0; j < FN; j++) COOP_MULADD(i * FN + j, a[i], b[j]);
		}
	}
}

void gemmFetchA(uint kt);
void gemmFetchB(uint kt);

// gemmRun accumulates kTiles slices (kTiles >= 1) into acc.
void gemmRun(uint kTiles) {
	[[unroll]] for (uint i = 0; i < FM * FN; i++) COOP_ZERO(i);
	gemmFetchA(0);
	gemmFetchB(0);
	gemmStage(0);
	barrier();
	for (uint kt = 0; kt < kTiles; kt++) {
		bool more = kt + 1 < kTiles;
		if (more) {
			gemmFetchA(kt + 1);
			gemmFetchB(kt + 1);
		}
		gemmMultiply(kt & 1);
		if (more) gemmStage((kt + 1) & 1);
		barrier();
	}
}

// gemmToShared stores the accumulators into gemmC (row-major BM x BN).
void gemmToShared() {
	uint sg = coopSubgroup();
	uint m0 = (sg / WN) * (BM / WM), n0 = (sg % WN) * (BN / WN);
	[[unroll]] for (uint i = 0; i < FM; i++) {
		[[unroll]] for (uint j = 0; j < FN; j++) COOP_STORE(i * FN + j, (m0 + i * CM) * BN + n0 + j * CN, BN);
	}
	barrier();
}
