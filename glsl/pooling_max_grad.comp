#version 450
// PoolingMaxGradient and DilatedPoolingMaxGradient
// (MPSCNNPoolingMaxGradient, MPSCNNDilatedPoolingMaxGradient):
// dx[p] = sum of dy[w] over the windows w whose argmax is p.
//
// AMBITS = 0: aux is the forward source, and the argmax is recomputed with
// the forward's rule (first maximum in row-major tap order, the first NaN
// beats everything; under EdgeZero outside taps read 0 and may win, under
// EdgeClamp they are skipped): p wins window w iff every tap before it is
// smaller (and not NaN) and every tap after it is not larger (and not NaN),
// or p is NaN and no tap before it is. AMBITS = 8, 16 or 32: aux holds the
// argmax indices the forward recorded (pooling_max_argmax.comp's layout),
// which give the same windows' winners without reading the source.
#define GRAD_DX_BINDING 2
#include "pooling_grad_common.glsl"

layout(constant_id = 8) const int AMBITS = 0;

layout(std430, binding = 1) readonly buffer Aux { uint aux[]; };

float source(uint off, ivec2 q) { return uintBitsToFloat(aux[off + uint(q.y * pc.size.x + q.x)]); }

// Whether tap tp, of value v, is the argmax of the window starting at s.
bool wins(uint off, ivec2 s, int tp, float v) {
	bool vnan = isnan(v);
	for (int ky = 0; ky < KH; ky++) {
		int y = s.y + ky * DY;
		bool yin = y >= 0 && y < pc.size.y;
		for (int kx = 0; kx < KW; kx++) {
			int t = ky * KW + kx;
			if (t == tp) {
				if (vnan) return true; // no NaN before it
				continue;
			}
			int x = s.x + kx * DX;
			float u = 0.0;
			if (yin && x >= 0 && x < pc.size.x) {
				u = source(off, ivec2(x, y));
			} else if (CLAMP) {
				continue;
			}
			if (isnan(u)) return false;
			if (t < tp ? u >= v : u > v) return false;
		}
	}
	return true;
}

// Recorded argmax of window (wx, wy), relative to the forward clip.
int recorded(uint off, int wx, int wy) {
	const int PER = 32 / max(AMBITS, 1);
	const uint MASK = 0xffffffffu >> (32 - max(AMBITS, 1));
	uint e = uint(wy * (pc.winHi.x - pc.winLo.x) + wx);
	uint code = (aux[off + e / uint(PER)] >> ((e % uint(PER)) * uint(AMBITS))) & MASK;
	return code == MASK ? -1 : int(code);
}

void main() {
	ivec2 p;
	uint dyo, auxo, di;
	if (!gradPixel(p, dyo, auxo, di)) return;
	int x0, x1, y0, y1;
	windowRange(p.x, pc.winBase.x, SX, KW, DX, pc.winLo.x, pc.winHi.x, x0, x1);
	windowRange(p.y, pc.winBase.y, SY, KH, DY, pc.winLo.y, pc.winHi.y, y0, y1);
	float v = AMBITS == 0 ? source(auxo, p) : 0.0;
	float acc = 0.0;
	for (int wy = y0; wy <= y1; wy++) {
		int sy = pc.winBase.y + SY * wy;
		int ty = tapOf(p.y, sy, DY);
		if (ty < 0) continue;
		for (int wx = x0; wx <= x1; wx++) {
			int sx = pc.winBase.x + SX * wx;
			int tx = tapOf(p.x, sx, DX);
			if (tx < 0) continue;
			int tp = ty * KW + tx;
			bool win = AMBITS == 0 ? wins(auxo, ivec2(sx, sy), tp, v)
			                       : recorded(auxo, wx - pc.winLo.x, wy - pc.winLo.y) == tp;
			if (win) acc += dy[dyo + uint(wy) * pc.dyWidth + uint(wx)];
		}
	}
	dx[di] = acc;
}
