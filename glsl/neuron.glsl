// Neurons (MPSCNNNeuron): the activation functions every kernel that
// fuses a neuron shares (neuron.comp, convolution, fully connected, batch
// normalization), with the derivatives their gradients use. Formulas and
// defaults: ops.NeuronType and ../shared TRAINING.md.
//
// The neuron is fixed per pipeline by specialization constants, whose IDs
// 20..23 are reserved for it in every shader that includes this file:
//   NEURON    the MPSCNNNeuronType value (0 none: the identity)
//   NEURON_A, NEURON_B, NEURON_C   the parameters a, b, c
// PReLU reads its per-channel a from the buffer the includer declares:
// define NEURON_PRELU(c) as the slope of channel c before including this
// file; without it PReLU is not available (the Go side refuses it).
//
// neuronForward(x, c) is f(x) for channel c; neuronDerivative(x, c) is
// df/dx at x (the neuron's input). Arithmetic is float32.

layout(constant_id = 20) const int NEURON = 0;
layout(constant_id = 21) const float NEURON_A = 0.0;
layout(constant_id = 22) const float NEURON_B = 0.0;
layout(constant_id = 23) const float NEURON_C = 0.0;

#define NEURON_NONE 0
#define NEURON_RELU 1
#define NEURON_LINEAR 2
#define NEURON_SIGMOID 3
#define NEURON_HARD_SIGMOID 4
#define NEURON_TANH 5
#define NEURON_ABSOLUTE 6
#define NEURON_SOFTPLUS 7
#define NEURON_SOFTSIGN 8
#define NEURON_ELU 9
#define NEURON_PRELU_TYPE 10
#define NEURON_RELUN 11
#define NEURON_POWER 12
#define NEURON_EXPONENTIAL 13
#define NEURON_LOGARITHM 14
#define NEURON_GELU 15

// erfc with a fractional error below 1.2e-7 everywhere (Numerical Recipes'
// Chebyshev fit): GLSL has no erf.
float neuronErfc(float x) {
	float z = abs(x);
	float t = 1.0 / (1.0 + 0.5 * z);
	float r = t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
		t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
		t * (-0.82215223 + t * 0.17087277)))))))));
	return x >= 0.0 ? r : 2.0 - r;
}

// log(1 + e) for e >= 0, accurate also where e is tiny (GLSL has no log1p).
float neuronLog1p(float e) {
	return e < 1e-3 ? e * (1.0 - e * (0.5 - e * (1.0 / 3.0))) : log(1.0 + e);
}

// v^p for any sign of v: an integer p keeps the sign rule of real powers
// ((-2)^3 = -8), GLSL's pow being undefined for v < 0.
float neuronPow(float v, float p) {
	float m = pow(abs(v), p);
	if (v >= 0.0) return m;
	if (p != floor(p)) return uintBitsToFloat(0x7fc00000u); // NaN, as C's pow
	return mod(p, 2.0) == 1.0 ? -m : m;
}

// ln(c) for the exponential and logarithm neurons: c = -1 means e.
float neuronLnBase() { return NEURON_C == -1.0 ? 1.0 : log(NEURON_C); }

float neuronSigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

#ifndef NEURON_PRELU
#define NEURON_PRELU(c) 0.0
#endif

float neuronForward(float x, uint c) {
	switch (NEURON) {
	case NEURON_RELU: return x >= 0.0 ? x : NEURON_A * x;
	case NEURON_LINEAR: return NEURON_A * x + NEURON_B;
	case NEURON_SIGMOID: return neuronSigmoid(x);
	case NEURON_HARD_SIGMOID: return clamp(NEURON_A * x + NEURON_B, 0.0, 1.0);
	case NEURON_TANH: return NEURON_A * tanh(NEURON_B * x);
	case NEURON_ABSOLUTE: return abs(x);
	case NEURON_SOFTPLUS: {
		float v = NEURON_B * x;
		return NEURON_A * (max(v, 0.0) + neuronLog1p(exp(-abs(v))));
	}
	case NEURON_SOFTSIGN: return x / (1.0 + abs(x));
	case NEURON_ELU: return x >= 0.0 ? x : NEURON_A * (exp(x) - 1.0);
	case NEURON_PRELU_TYPE: return x >= 0.0 ? x : float(NEURON_PRELU(c)) * x;
	case NEURON_RELUN: return min(x >= 0.0 ? x : NEURON_A * x, NEURON_B);
	case NEURON_POWER: return neuronPow(NEURON_A * x + NEURON_B, NEURON_C);
	case NEURON_EXPONENTIAL: return exp((NEURON_A * x + NEURON_B) * neuronLnBase());
	case NEURON_LOGARITHM: return log(NEURON_A * x + NEURON_B) / neuronLnBase();
	case NEURON_GELU: return 0.5 * x * neuronErfc(-x * 0.70710678118654752);
	}
	return x;
}

// neuronDerivative is df/dx at the neuron's input x. Kinks take MPS's
// side: ReLU, ELU and PReLU have slope 1 at x = 0; hard sigmoid and ReLUN
// have slope 0 where they clamp (at the bounds too); absolute has 0 at 0.
float neuronDerivative(float x, uint c) {
	switch (NEURON) {
	case NEURON_RELU: return x >= 0.0 ? 1.0 : NEURON_A;
	case NEURON_LINEAR: return NEURON_A;
	case NEURON_SIGMOID: {
		float s = neuronSigmoid(x);
		return s * (1.0 - s);
	}
	case NEURON_HARD_SIGMOID: {
		float v = NEURON_A * x + NEURON_B;
		return v > 0.0 && v < 1.0 ? NEURON_A : 0.0;
	}
	case NEURON_TANH: {
		float t = tanh(NEURON_B * x);
		return NEURON_A * NEURON_B * (1.0 - t * t);
	}
	case NEURON_ABSOLUTE: return sign(x);
	case NEURON_SOFTPLUS: return NEURON_A * NEURON_B * neuronSigmoid(NEURON_B * x);
	case NEURON_SOFTSIGN: {
		float d = 1.0 + abs(x);
		return 1.0 / (d * d);
	}
	case NEURON_ELU: return x >= 0.0 ? 1.0 : NEURON_A * exp(x);
	case NEURON_PRELU_TYPE: return x >= 0.0 ? 1.0 : float(NEURON_PRELU(c));
	case NEURON_RELUN: {
		float r = x >= 0.0 ? x : NEURON_A * x;
		return r < NEURON_B ? (x >= 0.0 ? 1.0 : NEURON_A) : 0.0;
	}
	case NEURON_POWER: return NEURON_C * NEURON_A * neuronPow(NEURON_A * x + NEURON_B, NEURON_C - 1.0);
	case NEURON_EXPONENTIAL: {
		float l = neuronLnBase();
		return NEURON_A * l * exp((NEURON_A * x + NEURON_B) * l);
	}
	case NEURON_LOGARITHM: return NEURON_A / ((NEURON_A * x + NEURON_B) * neuronLnBase());
	case NEURON_GELU: {
		float cdf = 0.5 * neuronErfc(-x * 0.70710678118654752);
		return cdf + x * 0.39894228040143268 * exp(-0.5 * x * x);
	}
	}
	return 1.0;
}
