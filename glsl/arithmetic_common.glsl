// Arithmetic (MPSCNNAdd, MPSCNNSubtract, MPSCNNMultiply, MPSCNNDivide)
// and its gradients: what arithmetic.comp and arithmetic_grad_reduce.comp
// share. For primary x and secondary y (each broadcast to the result's
// shape: a stride of 0 on an axis where the source has size 1),
//   z = clamp((ps*x) op (ss*y) + bias, lo, hi)
// and the gradient of x (GRAD 1) or y (GRAD 2) given dy is dy * dz/dx
// (dz/dy), 0 where the clamp holds z at a bound (the bounds themselves
// pass the gradient, PyTorch's rule; an infinite bound is no bound).
#extension GL_EXT_control_flow_attributes : require
#include "elem.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int OP = 0;   // 0 add, 1 subtract, 2 multiply, 3 divide
layout(constant_id = 2) const int MODE = 0; // the shader's work layout
layout(constant_id = 3) const int GRAD = 0; // 0 forward, 1 primary's gradient, 2 secondary's

layout(std430, binding = 0) readonly buffer X { ELEM xv[]; };
layout(std430, binding = 0) readonly buffer X4 { ELEM4 xv4[]; };
layout(std430, binding = 1) readonly buffer Y { ELEM yv[]; };
layout(std430, binding = 1) readonly buffer Y4 { ELEM4 yv4[]; };
layout(std430, binding = 2) readonly buffer G { ELEM gv[]; };
layout(std430, binding = 2) readonly buffer G4 { ELEM4 gv4[]; };

const float ARITH_INF = 1.0 / 0.0;

float arithPre(float x, float y, float ps, float ss, float bias) {
	float u = ps * x, v = ss * y, r;
	switch (OP) {
	case 0: r = u + v; break;
	case 1: r = u - v; break;
	case 2: r = u * v; break;
	default: r = u / v; break;
	}
	return r + bias;
}

// arithClamp lets NaN through (both comparisons are false).
float arithClamp(float p, float lo, float hi) { return p < lo ? lo : (p > hi ? hi : p); }

// arithGrad is dy * dz/dx (GRAD 1) or dy * dz/dy (GRAD 2), masked by the
// clamp.
float arithGrad(float g, float x, float y, float ps, float ss, float bias, float lo, float hi) {
	float u = ps * x, v = ss * y, d;
	if (GRAD == 1) {
		d = OP <= 1 ? ps : (OP == 2 ? ps * v : ps / v);
	} else {
		d = OP == 0 ? ss : (OP == 1 ? -ss : (OP == 2 ? u * ss : -u * ss / (v * v)));
	}
	if (lo != -ARITH_INF || hi != ARITH_INF) {
		float p = arithPre(x, y, ps, ss, bias);
		bool pass = (lo == -ARITH_INF || p >= lo) && (hi == ARITH_INF || p <= hi);
		if (!pass) return 0.0;
	}
	return g * d;
}
