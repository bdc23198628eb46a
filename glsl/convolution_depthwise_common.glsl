// Shared by the depthwise kernels (convolution_depthwise.comp and
// convolution_depthwise_weights.comp): one input row's SEG columns, the
// span of an item's windows, loaded once.
//
// The includer defines DW_SRC (the input's binding) and, before
// including, the constants SEG (columns), VW (values per load: 1, 2, 4,
// or 8 in the f16 builds) and PHASE (the first column mod VW). VW > 1
// loads the aligned vectors that hold the SEG columns, NQ of them (each
// wholly inside the row or wholly outside, the row's width a multiple of
// VW): the same values with a fraction of the load instructions. VW = 8
// loads eight halves in one 16-byte load (a uvec4, unpacked exactly).

const int NQ = (PHASE + SEG + VW - 1) / VW; // VW > 1: vectors a row's SEG columns span

layout(std430, binding = DW_SRC) readonly buffer DwSrc { ELEM dwSrc[]; };
layout(std430, binding = DW_SRC) readonly buffer DwSrc2 { ELEM2 dwSrc2[]; };
layout(std430, binding = DW_SRC) readonly buffer DwSrc4 { ELEM4 dwSrc4[]; };
#ifdef VKMPS_F16
layout(std430, binding = DW_SRC) readonly buffer DwSrc8 { uvec4 dwSrc8[]; };

// dwUnpack8 returns the eight halves of u, lowest first.
void dwUnpack8(uvec4 u, out float r[8]) {
	[[unroll]] for (int i = 0; i < 4; i++) {
		vec2 h = unpackHalf2x16(u[i]);
		r[2 * i] = h.x;
		r[2 * i + 1] = h.y;
	}
}
#endif

// dwSrcVec returns the VW values of the input's vector at (r[VW..7] 0).
void dwSrcVec(uint at, out float r[8]) {
	[[unroll]] for (int j = 0; j < 8; j++) r[j] = 0.0;
#ifdef VKMPS_F16
	if (VW == 8) {
		dwUnpack8(dwSrc8[at], r);
		return;
	}
#endif
	if (VW == 4) {
		vec4 q = LOAD4(dwSrc4[at]);
		[[unroll]] for (int j = 0; j < 4; j++) r[j] = q[j];
	} else {
		vec2 q = LOAD2(dwSrc2[at]);
		r[0] = q.x;
		r[1] = q.y;
	}
}

// dwRow returns the SEG columns from sx of the input row whose column 0
// is at index row, 0 outside [0, width); with VW > 1 row and width are
// multiples of VW.
void dwRow(uint row, int sx, int width, out float v[SEG]) {
	if (VW > 1) {
		int q0 = sx - PHASE; // a multiple of VW
		[[unroll]] for (int i = 0; i < NQ; i++) {
			int qx = q0 + VW * i;
			bool in_ = uint(qx) < uint(width);
			float qv[8];
			dwSrcVec((row + uint(clamp(qx, 0, width - VW))) / uint(VW), qv);
			[[unroll]] for (int j = 0; j < VW; j++) {
				int e = VW * i + j - PHASE;
				if (e >= 0 && e < SEG) v[e] = in_ ? qv[j] : 0.0;
			}
		}
		return;
	}
	[[unroll]] for (int e = 0; e < SEG; e++) {
		int q = sx + e;
		v[e] = uint(q) < uint(width) ? LOAD(dwSrc[row + uint(clamp(q, 0, width - 1))]) : 0.0;
	}
}
