// The tiled loads of the convolution GEMM shaders (gemmFetchA,
// gemmFetchB) and the per-workgroup setup they use; included after the
// engine, which defines the slice layouts.
// Tiled loads: what each invocation fixes once per workgroup.
uint aOff[RA]; // MODE_A 0, 1: weight offset of the row (~0u: outside); 2: unused
uint bOff[RB]; // MODE_B 2: image offset of the column (~0u: outside)
uint tileM0, tileN0, grp;
uint bBase;    // MODE_B 0, 1: image offset of the invocation's column's batch image and group
ivec2 bPos;    // MODE_B 0: input position of its first tap; 1: its pixel - first
bool bIn;      // its column is inside the matrix
uint aCol;     // MODE_A 2: its row m (~0u: outside)
uint aOff4[RA4]; // VEC_A: weight offset of quad r's row (MODE_A 2: of its first m in row 0) (~0u: outside)
uint bOff4[RB4]; // VEC_B: image offset of quad r's 4 columns in channel 0 (MODE_B 2: of its column) (~0u: outside)

// The raw loads (see convolution_gemm.comp's header): an includer that
// keeps loads raw (CONV_GEMM_RAW) defines wtRaw, imRaw and imRaw4 itself;
// else they return the floats, 0 unless ok.
#ifndef CONV_GEMM_RAW
float wtRaw(uint i, bool ok) { return ok ? wt[i] : 0.0; }
float imRaw(uint i, bool ok, uint r) { return ok ? LOAD(im[i]) : 0.0; }
GEMM_REG_B4 imRaw4(uint q, bool ok) { return ok ? GEMM_REG_B4(im4[q]) : GEMM_REG_B4(0.0); }
#endif

// gemmFetchA and gemmFetchB compute each value's index and whether it
// lies inside the operand, then load it under that one predicate.
void gemmFetchA(uint kt) {
	uint t = gl_LocalInvocationID.x;
	if (VEC_A) {
		// MODE_A 0: quads along k of a weights row; 2: along m of the
		// row k of Wt (M and ld multiples of 4: a quad is wholly in or out).
		[[unroll]] for (uint r = 0; r < RA4; r++) {
			uint k = kOff + kt * BK + gemmPosA4(t, r).y;
			ra4[r] = aOff4[r] != ~0u && k < kLim ? wt4[(aOff4[r] + (MODE_A == 2 ? k * pc.ld : k)) / 4] : vec4(0.0);
		}
		return;
	}
	[[unroll]] for (uint r = 0; r < RA; r++) {
		uvec2 p = gemmPosA(t, r);
		uint k = kOff + kt * BK + p.y;
		bool ok = k < kLim;
		uint i;
		if (MODE_A == 2) {
			ok = ok && aCol != ~0u;
			i = pc.wBase + k * pc.ld + aCol;
		} else {
			ok = ok && aOff[r] != ~0u;
			if (MODE_A == 0) i = aOff[r] + k;
			else if (MODE_B == 3) {
				uvec3 ct = phaseTapSlice(kt, p.y);
				ok = ok && phaseTapIn(ct);
				i = pc.wBase + (grp * pc.cinG + ct.x) * pc.M * KHW + aOff[r] + ct.z * uint(KW) + ct.y;
			} else i = pc.wBase + (grp * pc.cinG + k / KHW) * pc.M * KHW + aOff[r] + k % KHW;
		}
		ra[r] = wtRaw(i, ok);
	}
}

void gemmFetchB(uint kt) {
	uint t = gl_LocalInvocationID.x;
	if (VEC_B) {
		[[unroll]] for (uint r = 0; r < RB4; r++) {
			uint k = kOff + kt * BK + gemmPosB4(t, r).x;
			rb4[r] = imRaw4((bOff4[r] + (MODE_B == 2 ? k : k * pc.imPlane)) / 4, bOff4[r] != ~0u && k < kLim);
		}
		return;
	}
#ifdef CONV_GEMM_RAW
	rbHi = 0u;
#endif
	[[unroll]] for (uint r = 0; r < RB; r++) {
		uvec2 p = gemmPosB(t, r);
		uint k = kOff + kt * BK + p.x;
		bool ok = k < kLim;
		uint i;
		if (MODE_B == 2) {
			ok = ok && bOff[r] != ~0u;
			i = bOff[r] + k;
		} else {
			uint c = k / KHW;
			ivec2 q;
			ok = ok && bIn;
			if (MODE_B == 0) q = bPos + convTap(k % KHW);
			else if (MODE_B == 3) {
				uvec3 ct = phaseTapSlice(kt, p.x);
				c = ct.x;
				q = (bPos - ivec2(ct.yz)) / ivec2(SX, SY); // exact where the tap is the phase's
				ok = ok && phaseTapIn(ct);
			} else {
				ivec2 d = bPos - convTap(k % KHW);
				q = d / ivec2(SX, SY);
				ok = ok && d.x >= 0 && d.y >= 0 && uint(d.x) % uint(SX) == 0u && uint(d.y) % uint(SY) == 0u;
			}
			ok = ok && uint(q.x) < uint(pc.inSize.x) && uint(q.y) < uint(pc.inSize.y);
			i = bBase + c * pc.imPlane + uint(pc.inOrigin.y + q.y) * pc.inStride + uint(pc.inOrigin.x + q.x);
		}
		rb[r] = imRaw(i, ok, r);
	}
}


// gemmSetup fixes what invocation t loads for group g's tile at
// (tileM0, tileN0); false when the tile lies past the phase's outputs.
bool gemmSetup(uint g, uint t) {
	grp = g;
	tileM0 = gl_WorkGroupID.y * BM;
	tileN0 = pc.n0 + gl_WorkGroupID.x * BN;
	if (tileN0 >= nAll) return false;
	[[unroll]] for (uint r = 0; r < RA; r++) {
		uint m = tileM0 + gemmPosA(t, r).x;
		aOff[r] = m < pc.M ? (MODE_A == 0 ? pc.wBase + (g * pc.M + m) * pc.K : m * KHW) : ~0u;
	}
	[[unroll]] for (uint r = 0; r < RA4; r++) {
		uint m = tileM0 + gemmPosA4(t, r).x;
		aOff4[r] = m < pc.M && r * GEMM_T + t < QA ? pc.wBase + (MODE_A == 2 ? m : (g * pc.M + m) * pc.K) : ~0u;
	}
	[[unroll]] for (uint r = 0; r < RB4; r++) {
		uint n = tileN0 + gemmPosB4(t, r).y;
		uint pixels = uint(pc.outSize.x * pc.outSize.y);
		uint at = MODE_B == 2 ? pc.imBase + n * pc.imBatch : pc.imBase + (n / pixels) * pc.imBatch + g * pc.cinG * pc.imPlane + n % pixels;
		bOff4[r] = n < nAll && r * GEMM_T + t < QB ? at : ~0u;
	}
	uint am = tileM0 + gemmPosA(t, 0).x;
	aCol = am < pc.M ? am : ~0u;
	[[unroll]] for (uint r = 0; r < RB; r++) {
		uint n = tileN0 + gemmPosB(t, r).y;
		bOff[r] = n < nAll ? pc.imBase + n * pc.imBatch : ~0u;
	}
	uint bn = tileN0 + gemmPosB(t, 0).y;
	bIn = bn < nAll;
	bBase = 0u; // indices computed outside the matrix, never loaded
	bPos = ivec2(0);
	if (MODE_B != 2 && bIn) {
		uvec3 px = pixelOf(bn);
		bBase = pc.imBase + px.z * pc.imBatch + g * pc.cinG * pc.imPlane;
		bPos = MODE_B == 0 ? pc.first + ivec2(px.xy) * ivec2(SX, SY) : ivec2(px.xy) - pc.first;
	}
	return true;
}
