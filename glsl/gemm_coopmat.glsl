// The cooperative-matrix GEMM engine (VK_NV_cooperative_matrix, or
// VK_KHR_cooperative_matrix in the KHR builds, VKMPS_COOP_KHR; tensor
// cores and other matrix units): the same contract as gemm.glsl (the includer's gemmFetchA and
// gemmFetchB fill the registers of gemm_layout.glsl's slice layouts), but
// a workgroup of WM x WN subgroups of SUBGROUP invocations computes the
// BM x BN tile, each subgroup a (BM/WM) x (BN/WN) block of FM x FN float32
// accumulators of CM x CN (fcoopmatNV), multiplying CM x CK float16 slices
// of A by CK x CN float16 slices of B. The loaded values are rounded to
// half when staged: the path for float16 images, whose values are halves
// already (the float32 weights are rounded too). CM, CN, CK must be a
// shape the device lists (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV
// or ...KHR: float16 A and B, float32 C), never assumed, and SUBGROUP its
// subgroup size (ops' convCoopForSubgroup: lavapipe's 8, NVIDIA's 32). Slices are double-buffered
// in shared memory as in gemm.glsl (one barrier per slice).
//
// Shared layouts: each slice is staged with the dimension its registers
// run along fastest, so that neighbouring invocations write neighbouring
// halves (no bank conflicts): A (BM x BK) row-major, (m, k) at m*SAK + k,
// when A_KFAST (the weights), else column-major, at k*SA + m; B (BK x BN)
// column-major, (k, n) at n*SBK + k, when B_KFAST (rows of a fully
// connected layer), else row-major, at k*SB + n; the matrices load with
// the matching layout. Rows are padded by 8 halves: strides are multiples
// of 16 bytes (coopMatLoadNV's alignment) and odd multiples of them, so
// that the 8 rows of 16 bytes a tensor-core load reads fall in distinct
// banks.
//
// The epilogue (gemmEpilogue) needs no BM x BN staging: each subgroup
// stores one CM x CN accumulator at a time into its own slice of gemmC
// (CM*CN floats), synchronizes its lanes, and they pass its values to the
// includer's gemmStoreC, then synchronize again before the next; shared
// memory is the slices and WM*WN*CM*CN floats, so tiles up to 128 x 128 x
// 32 of 8 subgroups fit 48 KiB (ops' convCoopConfig.shared).
//
// The includer declares BM, BN, BK (a multiple of CK and of 8), WM, WN,
// CM, CN, CK, SUBGROUP and the bools A_KFAST, B_KFAST, VEC_A (quads along
// k: needs A_KFAST), VEC_B (quads along n, or along k where B_KFAST:
// gemm_layout.glsl's gemmPosB4) first, and
// defines gemmFetchA, gemmFetchB and gemmStoreC(m, n, v), which gets the
// value v of row m, column n of the tile (0 <= m < BM, 0 <= n < BN; every
// position once, rows and columns past the matrix included). It calls
// gemmRun(kTiles) and then gemmEpilogue(), both in uniform control flow.
//
// COOP_PACKED (the "pk" builds, for tiles whose A and B both load as
// quads: VEC_A and VEC_B) keeps the slices as uvec2, four halves each, so
// that a quad is staged with one 8-byte store instead of four 2-byte
// ones; the matrices load from them with offsets and strides in quads
// (every offset and stride above is a multiple of 4 halves). Its scalar
// staging is not built: ops chooses it only where both operands are
// quads (convCoopPacked). On an H100 it took the float16 Winograd weight
// gradients' products 8-16% faster (bench/results/h100-2026-11-27-packed,
// run 1, against packed=0); the forward products did not move.
//
// VKMPS_COOP_EMULATE builds the same engine without cooperative matrices,
// for testing it where the device has none (lavapipe): the invocations
// t*SUBGROUP.. of logical subgroup t compute its matrices with plain
// arithmetic, lane l holding elements l, l + SUBGROUP, ... of each
// accumulator (row-major), and a loaded A or B matrix is a view of the
// shared slice (its element offset, stride and layout, as
// coopMatLoadNV takes them), so every offset the real build passes is
// exercised; its subgroup synchronization is the workgroup's barrier (the
// device's subgroups are not the logical ones). Shared values are float32
// rounded to half (packHalf2x16): the same values, no float16 arithmetic
// needed.
#ifdef VKMPS_COOP_EMULATE
#define HALF float
#define TO_HALF(v) unpackHalf2x16(packHalf2x16(vec2((v), 0.0))).x
#else
#ifdef VKMPS_COOP_KHR
#extension GL_KHR_cooperative_matrix : require
#else
#extension GL_NV_cooperative_matrix : require
#endif
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#define HALF float16_t
#define TO_HALF(v) float16_t(v)
#endif

// GEMM_A_VALUE(r) and GEMM_B_VALUE(r): the value of register r of ra and
// rb, for includers that keep loads raw (gemm.glsl's raw registers); the
// registers themselves unless defined.
#ifndef GEMM_A_VALUE
#define GEMM_A_VALUE(r) ra[r]
#define GEMM_B_VALUE(r) rb[r]
#endif

const uint GEMM_T = WM * WN * SUBGROUP; // invocations per workgroup
#include "gemm_layout.glsl"
const uint SAK = BK + 8; // halves per shared row of A, row-major (A_KFAST)
const uint SA = BM + 8;  // and per column, column-major
const uint SBK = BK + 8; // halves per shared column of B, column-major (B_KFAST)
const uint SB = BN + 8;  // and per row, row-major
const uint SLICE_A = A_KFAST ? BM * SAK : BK * SA; // halves per buffer
const uint SLICE_B = B_KFAST ? BN * SBK : BK * SB;
const uint FM = BM / WM / CM; // accumulators per subgroup along m
const uint FN = BN / WN / CN; // and along n

#ifdef COOP_PACKED
// Quads of halves; sharedHalf reads one half (the emulated build's views).
shared uvec2 gemmA[2 * SLICE_A / 4];
shared uvec2 gemmB[2 * SLICE_B / 4];
#ifdef VKMPS_COOP_EMULATE
#define SH_A(i) sharedHalf(gemmA[(i) >> 2], (i))
#define SH_B(i) sharedHalf(gemmB[(i) >> 2], (i))
float sharedHalf(uvec2 q, uint i) { return unpackHalf2x16(q[(i >> 1) & 1u])[i & 1u]; }
#endif
#else
shared HALF gemmA[2 * SLICE_A];
shared HALF gemmB[2 * SLICE_B];
#define SH_A(i) gemmA[i]
#define SH_B(i) gemmB[i]
#endif
shared float gemmC[WM * WN * CM * CN]; // the epilogue's: CM x CN per subgroup

// GEMM_STAGE_TILE (gemmEpilogueTile): the includer declares STAGE_TILE,
// a specialization constant, and defines gemmStoreTile; the tile's
// halves are staged in gemmTile (rows of STH halves) where STAGE_TILE,
// else gemmTile is one quad.
#ifdef GEMM_STAGE_TILE
const uint STH = BN + 8u; // halves per staged row: 16-byte multiples, 16 bytes of padding
shared uvec4 gemmTile[STAGE_TILE ? BM * STH / 8u : 1u];
#endif

// packQuad is a quad of values as the uvec2 of its halves (COOP_PACKED),
// each rounded as TO_HALF rounds it.
#ifdef VKMPS_COOP_EMULATE
uvec2 packQuad(vec4 v) {
	return uvec2(packHalf2x16(vec2(TO_HALF(v.x), TO_HALF(v.y))), packHalf2x16(vec2(TO_HALF(v.z), TO_HALF(v.w))));
}
#else
uvec2 packQuad(f16vec4 v) { return uvec2(packFloat2x16(v.xy), packFloat2x16(v.zw)); }
uvec2 packQuad(vec4 v) { return packQuad(f16vec4(v)); }
#endif

// aAt and bAt are the shared offsets of A's (m, k) and B's (k, n) in
// buffer buf.
uint aAt(uint buf, uint m, uint k) { return buf * SLICE_A + (A_KFAST ? m * SAK + k : k * SA + m); }
uint bAt(uint buf, uint k, uint n) { return buf * SLICE_B + (B_KFAST ? n * SBK + k : k * SB + n); }

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
uint coopLane() { return gl_LocalInvocationID.x % SUBGROUP; }
void coopZero(uint q) {
	for (uint e = 0; e < CE; e++) acc[q * CE + e] = 0.0;
}
uint coopAt(CoopView v, uint r, uint c) { return v.off + (v.colMajor ? c * v.stride + r : r * v.stride + c); }
// coopMulAdd adds a (A's CM x CK view) times b (B's CK x CN view) to
// accumulator q.
void coopMulAdd(uint q, CoopView a, CoopView b) {
	uint lane = coopLane();
	for (uint e = 0; e < CE; e++) {
		uint i = lane + e * SUBGROUP, r = i / CN, c = i % CN;
		float s = acc[q * CE + e];
		for (uint k = 0; k < CK; k++) s = fma(SH_A(coopAt(a, r, k)), SH_B(coopAt(b, k, c)), s);
		acc[q * CE + e] = s;
	}
}
void coopStore(uint q, uint off, uint stride) {
	uint lane = coopLane();
	for (uint e = 0; e < CE; e++) {
		uint i = lane + e * SUBGROUP;
		gemmC[off + (i / CN) * stride + i % CN] = acc[q * CE + e];
	}
}
#ifdef GEMM_STAGE_TILE
// coopStoreTile: accumulator q times scale, as halves, to gemmTile from
// half off, rows stride halves apart (off, stride and CN multiples of
// 2): through the subgroup's gemmC slice, so that each lane packs two
// neighbouring halves into one word (the real build's coopMatStoreNV
// writes the halves themselves).
void coopStoreTile(uint q, uint off, uint stride, float scale) {
	uint base = coopSubgroup() * CM * CN;
	coopStore(q, base, CN);
	barrier();
	for (uint p = coopLane(); p < CM * CN / 2u; p += SUBGROUP) {
		uint r = 2u * p / CN, c = 2u * p % CN, at = off + r * stride + c;
		gemmTile[at / 8u][at % 8u / 2u] = packHalf2x16(vec2(gemmC[base + 2u * p], gemmC[base + 2u * p + 1u]) * scale);
	}
	barrier();
}
#define COOP_STORE_TILE(q, off, stride, scale) coopStoreTile(q, off, stride, scale)
#endif
#define COOP_LOAD_A(m, off, stride, colMajor) m = CoopView(off, stride, colMajor)
#define COOP_LOAD_B(m, off, stride, colMajor) m = CoopView(off, stride, colMajor)
#define COOP_MULADD(q, a, b) coopMulAdd(q, a, b)
#define COOP_ZERO(q) coopZero(q)
#define COOP_STORE(q, off, stride) coopStore(q, off, stride)
#define COOP_SYNC() barrier()
// COOP_STORE_F32 and COOP_STORE_F16 (gemmEpilogueDirect's): accumulator
// q to buf, row-major from element off, rows stride elements apart;
// F16 multiplies by scale and rounds to halves. Statements: the
// includer calls them inside braces.
#define COOP_STORE_F32(q, buf, off, stride) \
	[[unroll]] for (uint e_ = 0; e_ < CE; e_++) { \
		uint i_ = coopLane() + e_ * SUBGROUP; \
		buf[(off) + (i_ / CN) * (stride) + i_ % CN] = acc[(q) * CE + e_]; \
	}
#define COOP_STORE_F16(q, buf, off, stride, scale) \
	[[unroll]] for (uint e_ = 0; e_ < CE; e_++) { \
		uint i_ = coopLane() + e_ * SUBGROUP; \
		buf[(off) + (i_ / CN) * (stride) + i_ % CN] = float16_t(acc[(q) * CE + e_] * (scale)); \
	}
#elif defined(VKMPS_COOP_KHR)
// The KHR build ("khr" variants, +khr: glslang 13 or newer): the same
// engine through GL_KHR_cooperative_matrix, for devices that list
// VK_KHR_cooperative_matrix (Limits.CooperativeMatrixKHR): AMD, Intel,
// NVIDIA, Mesa 26's lavapipe. The layouts are constant expressions (each
// macro use passes a literal colMajor), as SPIR-V wants them.
#define COOP_A coopmat<float16_t, gl_ScopeSubgroup, CM, CK, gl_MatrixUseA>
#define COOP_B coopmat<float16_t, gl_ScopeSubgroup, CK, CN, gl_MatrixUseB>
#define COOP_ACC coopmat<float, gl_ScopeSubgroup, CM, CN, gl_MatrixUseAccumulator>
#define COOP_ACC16 coopmat<float16_t, gl_ScopeSubgroup, CM, CN, gl_MatrixUseAccumulator>
#define COOP_LAYOUT(colMajor) ((colMajor) ? gl_CooperativeMatrixLayoutColumnMajor : gl_CooperativeMatrixLayoutRowMajor)
COOP_ACC acc[FM * FN];
uint coopSubgroup() { return gl_SubgroupID; }
uint coopLane() { return gl_SubgroupInvocationID; }
#ifdef COOP_PACKED
#define COOP_LOAD_A(m, off, stride, colMajor) coopMatLoad(m, gemmA, (off) >> 2, (stride) >> 2, COOP_LAYOUT(colMajor))
#define COOP_LOAD_B(m, off, stride, colMajor) coopMatLoad(m, gemmB, (off) >> 2, (stride) >> 2, COOP_LAYOUT(colMajor))
#else
#define COOP_LOAD_A(m, off, stride, colMajor) coopMatLoad(m, gemmA, off, stride, COOP_LAYOUT(colMajor))
#define COOP_LOAD_B(m, off, stride, colMajor) coopMatLoad(m, gemmB, off, stride, COOP_LAYOUT(colMajor))
#endif
#define COOP_MULADD(q, a, b) acc[q] = coopMatMulAdd(a, b, acc[q])
#define COOP_ZERO(q) acc[q] = COOP_ACC(0.0)
#define COOP_STORE(q, off, stride) coopMatStore(acc[q], gemmC, off, stride, gl_CooperativeMatrixLayoutRowMajor)
#define COOP_SYNC() \
	subgroupMemoryBarrierShared(); \
	subgroupBarrier()
#define COOP_STORE_F32(q, buf, off, stride) coopMatStore(acc[q], buf, off, stride, gl_CooperativeMatrixLayoutRowMajor)
#define COOP_STORE_F16(q, buf, off, stride, scale) \
	coopMatStore(COOP_ACC16(acc[q] * float(scale)), buf, off, stride, gl_CooperativeMatrixLayoutRowMajor)
#define COOP_STORE_TILE(q, off, stride, scale) \
	coopMatStore(COOP_ACC16(acc[q] * float(scale)), gemmTile, (off) / 8u, (stride) / 8u, gl_CooperativeMatrixLayoutRowMajor)
#else
#define COOP_A fcoopmatNV<16, gl_ScopeSubgroup, CM, CK>
#define COOP_B fcoopmatNV<16, gl_ScopeSubgroup, CK, CN>
fcoopmatNV<32, gl_ScopeSubgroup, CM, CN> acc[FM * FN];
uint coopSubgroup() { return gl_SubgroupID; }
uint coopLane() { return gl_SubgroupInvocationID; }
#ifdef COOP_PACKED
#define COOP_LOAD_A(m, off, stride, colMajor) coopMatLoadNV(m, gemmA, (off) >> 2, (stride) >> 2, colMajor)
#define COOP_LOAD_B(m, off, stride, colMajor) coopMatLoadNV(m, gemmB, (off) >> 2, (stride) >> 2, colMajor)
#else
#define COOP_LOAD_A(m, off, stride, colMajor) coopMatLoadNV(m, gemmA, off, stride, colMajor)
#define COOP_LOAD_B(m, off, stride, colMajor) coopMatLoadNV(m, gemmB, off, stride, colMajor)
#endif
#define COOP_MULADD(q, a, b) acc[q] = coopMatMulAddNV(a, b, acc[q])
#define COOP_ZERO(q) acc[q] = fcoopmatNV<32, gl_ScopeSubgroup, CM, CN>(0.0)
#define COOP_STORE(q, off, stride) coopMatStoreNV(acc[q], gemmC, off, stride, false)
#define COOP_SYNC() \
	subgroupMemoryBarrierShared(); \
	subgroupBarrier()
#define COOP_STORE_F32(q, buf, off, stride) coopMatStoreNV(acc[q], buf, off, stride, false)
#define COOP_STORE_F16(q, buf, off, stride, scale) \
	coopMatStoreNV(fcoopmatNV<16, gl_ScopeSubgroup, CM, CN>(acc[q] * float(scale)), buf, off, stride, false)
// COOP_STORE_TILE: accumulator q times scale, as halves, to gemmTile from
// half off, rows stride halves apart (off, stride and CN multiples of 8:
// whole quads of the uvec4 array).
#define COOP_STORE_TILE(q, off, stride, scale) \
	coopMatStoreNV(fcoopmatNV<16, gl_ScopeSubgroup, CM, CN>(acc[q] * float(scale)), gemmTile, (off) / 8u, (stride) / 8u, false)
#endif

void gemmStage(uint buf) {
	uint t = gl_LocalInvocationID.x;
#ifdef COOP_PACKED
	// Quads only (VEC_A and VEC_B): 4 consecutive halves, at a multiple of 4.
	[[unroll]] for (uint r = 0; r < RA4; r++) {
		if (r * GEMM_T + t >= QA) break;
		uvec2 p = gemmPosA4(t, r);
		gemmA[aAt(buf, p.x, p.y) >> 2] = packQuad(ra4[r]);
	}
	[[unroll]] for (uint r = 0; r < RB4; r++) {
		if (r * GEMM_T + t >= QB) break;
		uvec2 p = gemmPosB4(t, r);
		gemmB[bAt(buf, p.x, p.y) >> 2] = packQuad(rb4[r]);
	}
#else
	if (VEC_A) {
		[[unroll]] for (uint r = 0; r < RA4; r++) {
			if (r * GEMM_T + t >= QA) break;
			uvec2 p = gemmPosA4(t, r);
			uint o = aAt(buf, p.x, p.y); // 4 consecutive halves (A_KFAST)
			[[unroll]] for (uint j = 0; j < 4; j++) gemmA[o + j] = TO_HALF(ra4[r][j]);
		}
	} else {
		[[unroll]] for (uint r = 0; r < RA; r++) {
			uvec2 p = gemmPosA(t, r);
			gemmA[aAt(buf, p.x, p.y)] = TO_HALF(GEMM_A_VALUE(r));
		}
	}
	if (VEC_B) {
		[[unroll]] for (uint r = 0; r < RB4; r++) {
			if (r * GEMM_T + t >= QB) break;
			uvec2 p = gemmPosB4(t, r);
			uint o = bAt(buf, p.x, p.y); // 4 consecutive halves (along n, or k where B_KFAST)
			[[unroll]] for (uint j = 0; j < 4; j++) gemmB[o + j] = TO_HALF(rb4[r][j]);
		}
	} else {
		[[unroll]] for (uint r = 0; r < RB; r++) {
			uvec2 p = gemmPosB(t, r);
			gemmB[bAt(buf, p.x, p.y)] = TO_HALF(GEMM_B_VALUE(r));
		}
	}
#endif
}

// gemmMultiply multiplies the slices of buffer buf into the accumulators:
// per CK step, B's FN matrices, then A's one at a time, each into its row
// of accumulators (one A matrix live, not FM: on an H100 the FM = 4 tiles
// kept all four, the registers that decide how many workgroups a
// multiprocessor holds).
void gemmMultiply(uint buf) {
	uint sg = coopSubgroup();
	uint m0 = (sg / WN) * (BM / WM), n0 = (sg % WN) * (BN / WN);
	[[unroll]] for (uint kk = 0; kk < BK; kk += CK) {
		COOP_B b[FN];
		// The layouts are specialization constants: each branch passes a
		// literal layout.
		[[unroll]] for (uint j = 0; j < FN; j++) {
			uint o = bAt(buf, kk, n0 + j * CN);
			if (B_KFAST) COOP_LOAD_B(b[j], o, SBK, true);
			else COOP_LOAD_B(b[j], o, SB, false);
		}
		[[unroll]] for (uint i = 0; i < FM; i++) {
			COOP_A a;
			uint o = aAt(buf, m0 + i * CM, kk);
			if (A_KFAST) COOP_LOAD_A(a, o, SAK, false);
			else COOP_LOAD_A(a, o, SA, true);
			[[unroll]] for (uint j = 0; j < FN; j++) COOP_MULADD(i * FN + j, a, b[j]);
		}
	}
}

void gemmFetchA(uint kt);
void gemmFetchB(uint kt);
void gemmStoreC(uint m, uint n, float v);
#ifdef GEMM_STORE_QUADS
void gemmStoreC4(uint m, uint n, vec4 v);
#endif

// gemmRun accumulates kTiles slices (kTiles >= 1) into acc. The last
// slice needs no barrier after it: the epilogue's staging is not the
// slices'.
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
		if (more) {
			gemmStage((kt + 1) & 1);
			barrier();
		}
	}
}

// gemmEpilogue passes every value of the tile to gemmStoreC, one
// accumulator of each subgroup at a time through its slice of gemmC
// (row-major CM x CN; lane l passes elements l, l + SUBGROUP, ...: rows
// of CN consecutive columns). An includer that defines GEMM_STORE_QUADS,
// GEMM_QUADS (a constant or specialization constant: whether its
// destination takes quads) and gemmStoreC4(m, n, v) (the values of
// columns n..n+3 of row m, n a multiple of 4; columns past the matrix
// included) gets quads instead where GEMM_QUADS and the matrix shape
// allow (STORE_QUADS: GEMM_QUADS, CN a multiple of 4, CM x CN of 4 x
// SUBGROUP): lane
// l elements 4l..4l+3, 4(l + SUBGROUP)... (A condition evaluated at run
// time here, a uniform one included, took every cooperative-matrix GEMM
// on an H200 to about twice its time: bench/results/h200-2026-11-28-xhalf,
// runs 6 and 7.)
#ifdef GEMM_STORE_QUADS
const bool STORE_QUADS = GEMM_QUADS && CN % 4u == 0u && (CM * CN) % (4u * SUBGROUP) == 0u;
#endif
void gemmEpilogue() {
	uint sg = coopSubgroup(), lane = coopLane();
	uint m0 = (sg / WN) * (BM / WM), n0 = (sg % WN) * (BN / WN);
	uint base = sg * CM * CN;
	[[unroll]] for (uint i = 0; i < FM; i++) {
		[[unroll]] for (uint j = 0; j < FN; j++) {
			COOP_STORE(i * FN + j, base, CN);
			COOP_SYNC();
#ifdef GEMM_STORE_QUADS
			if (STORE_QUADS) {
				[[unroll]] for (uint e = 0; e < CM * CN / (4u * SUBGROUP); e++) {
					uint x = 4u * (lane + e * SUBGROUP);
					gemmStoreC4(m0 + i * CM + x / CN, n0 + j * CN + x % CN,
					            vec4(gemmC[base + x], gemmC[base + x + 1u], gemmC[base + x + 2u], gemmC[base + x + 3u]));
				}
			} else
#endif
			[[unroll]] for (uint e = 0; e < CM * CN / SUBGROUP; e++) {
				uint x = lane + e * SUBGROUP;
				gemmStoreC(m0 + i * CM + x / CN, n0 + j * CN + x % CN, gemmC[base + x]);
			}
			COOP_SYNC(); // read before the next store
		}
	}
}

// gemmEpilogueDirect (GEMM_DIRECT) is gemmEpilogue without shared memory:
// it hands each accumulator of the subgroup to the includer's
// gemmDirectStore(q, m, n) (accumulator q holds rows m..m+CM-1, columns
// n..n+CN-1 of the tile), which stores it straight from the registers
// with COOP_STORE_F32 or COOP_STORE_F16 (coopMatStoreNV): no staging in
// gemmC and no synchronization between accumulators. For tiles wholly
// inside the matrix only, each matrix's first element and its rows on
// 16 bytes (coopMatStoreNV's alignment); ops decides that when it
// chooses the pipeline (a specialization constant, never a run-time
// branch: see gemmEpilogue's note on uniform conditions).
#ifdef GEMM_DIRECT
void gemmDirectStore(uint q, uint m, uint n);
void gemmEpilogueDirect() {
	uint sg = coopSubgroup();
	uint m0 = (sg / WN) * (BM / WM), n0 = (sg % WN) * (BN / WN);
	[[unroll]] for (uint i = 0; i < FM; i++) {
		[[unroll]] for (uint j = 0; j < FN; j++) gemmDirectStore(i * FN + j, m0 + i * CM, n0 + j * CN);
	}
}
#endif

// gemmEpilogueTile (GEMM_STAGE_TILE, where STAGE_TILE) stages the whole
// tile in shared memory as halves (each accumulator times scale, rounded
// by the conversion of its matrix to float16) and then passes it to the
// includer's gemmStoreTile(m, n, v) eight halves at a time (row m of the
// tile, columns n..n+7, n a multiple of 8; rows and columns past the
// matrix included), consecutive invocations along a row: one 16-byte
// store each where the destination's rows allow it, whole 128-byte lines
// per 8 invocations, where gemmEpilogue stores 8 bytes per invocation
// spread over the rows of a 16 x 8 matrix. Shared memory: BM x (BN + 8)
// halves more (ops counts them before choosing it). Slower on an H100
// (ops' ConvolutionTuning.CoopStage): a tuning, not a default.
#ifdef GEMM_STAGE_TILE
void gemmStoreTile(uint m, uint n, uvec4 v);
void gemmEpilogueTile(float scale) {
	uint sg = coopSubgroup();
	uint m0 = (sg / WN) * (BM / WM), n0 = (sg % WN) * (BN / WN);
	[[unroll]] for (uint i = 0; i < FM; i++) {
		[[unroll]] for (uint j = 0; j < FN; j++) COOP_STORE_TILE(i * FN + j, (m0 + i * CM) * STH + n0 + j * CN, STH, scale);
	}
	barrier();
	for (uint c = gl_LocalInvocationID.x; c < BM * BN / 8u; c += GEMM_T) {
		uint m = c / (BN / 8u), n = c % (BN / 8u) * 8u;
		gemmStoreTile(m, n, gemmTile[(m * STH + n) / 8u]);
	}
}
#endif
