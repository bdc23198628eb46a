// Shared by spatial_normalization.comp (KIND 0, MPSCNNSpatialNormalization)
// and local_contrast_normalization.comp (KIND 1,
// MPSCNNLocalContrastNormalization), forward and gradient. Per channel,
// the window of pixel (i, j) is kw x kh, rows [i - kh/2, i + (kh-1)/2] and
// columns [j - kw/2, j + (kw-1)/2]; values outside the image count as 0
// and N = kw*kh always.
//   KIND 0: T = delta + alpha/N * sum x^2,  y = x T^-beta
//   KIND 1: M = sum x / N, VAR = sum x^2 / N - M^2, T = delta + alpha*VAR,
//           y = pm + ps (x - p0 M) T^-beta
// (LCN's sums are taken about the pixel's own value, so that large means
// do not cancel.) MODE 0 writes y to Out. Gradients take two passes:
// MODE 1 writes per pixel p into S (float32)
//   KIND 0: s_p = dy_p x_p T_p^(-beta-1)
//   KIND 1: b_p = dy_p 2 alpha beta u_p T_p^(-beta-1), u_p = x_p - p0 M_p,
//           a_p = dy_p p0 T_p^-beta; S holds (a_p - b_p M_p, b_p)
// and MODE 2 gathers them over the pixels p whose window holds q:
//   KIND 0: dx_q = dy_q T_q^-beta - 2 alpha beta/N x_q sum s_p
//   KIND 1: dx_q = ps dy_q T_q^-beta - ps/N (sum (a_p - b_p M_p) + x_q sum b_p)
// Invocation (x, y, z) is column x, row y of plane z (batch image
// z / channels, channel z % channels) of the dispatch; S is dense in that
// order.
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int MODE = 0;

layout(push_constant) uniform Push {
	int width, height;
	uint channels; // channels in this dispatch
	uint xBase, xBatch, dyBase, dyBatch, oBase, oBatch;
	int kw, kh;
	float alpha, beta, delta;
	float p0, pm, ps;
} pc;

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) readonly buffer DY { ELEM dy[]; };
layout(std430, binding = 2) buffer S { float s[]; };
layout(std430, binding = 3) writeonly buffer Out { ELEM outv[]; };

// Stats is a pixel's window: T and (LCN) M.
struct Stats {
	float t, m;
};

Stats statsAt(uint base, int i, int j) {
	int r0 = max(i - pc.kh / 2, 0), r1 = min(i + (pc.kh - 1) / 2, pc.height - 1);
	int c0 = max(j - pc.kw / 2, 0), c1 = min(j + (pc.kw - 1) / 2, pc.width - 1);
	float nk = float(pc.kw * pc.kh);
	Stats st;
	if (KIND == 0) {
		float s2 = 0.0;
		for (int r = r0; r <= r1; r++) {
			for (int c = c0; c <= c1; c++) {
				float v = LOAD(x[base + uint(r * pc.width + c)]);
				s2 += v * v;
			}
		}
		st.t = pc.delta + pc.alpha / nk * s2;
		st.m = 0.0;
		return st;
	}
	float sh = LOAD(x[base + uint(i * pc.width + j)]);
	float a = 0.0, b = 0.0;
	for (int r = r0; r <= r1; r++) {
		for (int c = c0; c <= c1; c++) {
			float d = LOAD(x[base + uint(r * pc.width + c)]) - sh;
			a += d;
			b += d * d;
		}
	}
	float outside = nk - float((r1 - r0 + 1) * (c1 - c0 + 1)); // taps outside: value 0, d = -sh
	a -= outside * sh;
	b += outside * sh * sh;
	float md = a / nk;
	st.m = sh + md;
	st.t = pc.delta + pc.alpha * max(b / nk - md * md, 0.0);
	return st;
}

void main() {
	int j = int(gl_GlobalInvocationID.x), i = int(gl_GlobalInvocationID.y);
	uint z = gl_GlobalInvocationID.z;
	if (j >= pc.width || i >= pc.height) return;
	uint n = z / pc.channels, c = z % pc.channels;
	uint plane = uint(pc.width * pc.height);
	uint pix = uint(i * pc.width + j);
	uint xb = pc.xBase + n * pc.xBatch + c * plane;
	uint yb = pc.dyBase + n * pc.dyBatch + c * plane;
	uint e = z * plane + pix; // index in S
	float xv = LOAD(x[xb + pix]);
	Stats st = statsAt(xb, i, j);
	if (MODE == 0) {
		float y = KIND == 0 ? xv * pow(st.t, -pc.beta) : pc.pm + pc.ps * (xv - pc.p0 * st.m) * pow(st.t, -pc.beta);
		outv[pc.oBase + n * pc.oBatch + c * plane + pix] = STORE(y);
		return;
	}
	float g = LOAD(dy[yb + pix]);
	if (MODE == 1) {
		if (KIND == 0) {
			s[e] = g * xv * pow(st.t, -pc.beta - 1.0);
		} else {
			float u = xv - pc.p0 * st.m;
			float b = g * 2.0 * pc.alpha * pc.beta * u * pow(st.t, -pc.beta - 1.0);
			float a = g * pc.p0 * pow(st.t, -pc.beta);
			s[2u * e] = a - b * st.m;
			s[2u * e + 1u] = b;
		}
		return;
	}
	int r0 = max(i - (pc.kh - 1) / 2, 0), r1 = min(i + pc.kh / 2, pc.height - 1);
	int c0 = max(j - (pc.kw - 1) / 2, 0), c1 = min(j + pc.kw / 2, pc.width - 1);
	float nk = float(pc.kw * pc.kh);
	float sa = 0.0, sb = 0.0;
	uint sbase = z * plane;
	for (int r = r0; r <= r1; r++) {
		for (int cc = c0; cc <= c1; cc++) {
			uint q = sbase + uint(r * pc.width + cc);
			if (KIND == 0) {
				sa += s[q];
			} else {
				sa += s[2u * q];
				sb += s[2u * q + 1u];
			}
		}
	}
	float dxv = KIND == 0 ? g * pow(st.t, -pc.beta) - 2.0 * pc.alpha * pc.beta / nk * xv * sa
	                      : pc.ps * g * pow(st.t, -pc.beta) - pc.ps / nk * (sa + xv * sb);
	outv[pc.oBase + n * pc.oBatch + c * plane + pix] = STORE(dxv);
}
