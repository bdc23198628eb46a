// The slice layouts shared by the GEMM engines (gemm.glsl, and
// gemm_coopmat.glsl): which values of an A or B slice each of the GEMM_T
// invocations loads, in the registers ra/rb (or quads ra4/rb4). See
// gemm.glsl's header. The engine defines BM, BN, BK, GEMM_T, A_KFAST,
// B_KFAST first.

const uint RA = BM * BK / GEMM_T;         // A values an invocation loads per slice
const uint RB = BK * BN / GEMM_T;         // B values an invocation loads per slice
const uint QA = BM * BK / 4;              // quads of an A slice
const uint QB = BK * BN / 4;              // quads of a B slice
const uint RA4 = (QA + GEMM_T - 1) / GEMM_T;
const uint RB4 = (QB + GEMM_T - 1) / GEMM_T;

// GEMM_REG is the type of ra and rb, GEMM_REG_A4 and GEMM_REG_B4 those of
// ra4 and rb4: float and vec4 unless the includer defines them (with gemm.glsl's GEMM_A_VALUE,
// GEMM_B_VALUE, GEMM_B4_VALUE) to hold loads raw.
#ifndef GEMM_REG
#define GEMM_REG float
#endif
#ifndef GEMM_REG_B4
#define GEMM_REG_B4 vec4
#endif
GEMM_REG ra[RA];
GEMM_REG rb[RB];
#ifndef GEMM_REG_A4
#define GEMM_REG_A4 vec4
#endif
GEMM_REG_A4 ra4[RA4];
GEMM_REG_B4 rb4[RB4];

// gemmPosA returns the slice position (m, k) of value r of invocation t.
uvec2 gemmPosA(uint t, uint r) {
	if (A_KFAST) return uvec2(t / BK + r * (GEMM_T / BK), t % BK);
	return uvec2(t % BM, t / BM + r * (GEMM_T / BM));
}

// gemmPosB returns the slice position (k, n) of value r of invocation t.
uvec2 gemmPosB(uint t, uint r) {
	if (B_KFAST) return uvec2(t % BK, t / BK + r * (GEMM_T / BK));
	return uvec2(t / BN + r * (GEMM_T / BN), t % BN);
}

// gemmPosA4 returns the slice position (m, k) of the first value of quad r
// of invocation t (VEC_A): quads along k, or along m where A is staged
// column-major (!A_KFAST; gemm_coopmat.glsl only).
uvec2 gemmPosA4(uint t, uint r) {
	uint q = r * GEMM_T + t;
	if (!A_KFAST) return uvec2((q % (BM / 4)) * 4, q / (BM / 4));
	return uvec2(q / (BK / 4), (q % (BK / 4)) * 4);
}

// gemmPosB4 returns the slice position (k, n) of the first value of quad r
// of invocation t (VEC_B): quads along n, or along k where B_KFAST
// (gemm_coopmat.glsl only: gemm.glsl stages quads along n).
uvec2 gemmPosB4(uint t, uint r) {
	uint q = r * GEMM_T + t;
	if (B_KFAST) return uvec2((q % (BK / 4)) * 4, q / (BK / 4));
	return uvec2(q / (BN / 4), (q % (BN / 4)) * 4);
}
