#version 450
// optimizer_step (vkmps; MPS keeps this on the CPU): advances an
// optimizer's time step on the GPU and fixes the coefficients every
// parameter update of the training step reads (optimizer.comp), so that a
// recorded training step replays as successive steps. One invocation.
//
//   t = t + 1                                   (hyper.step, host-visible)
//   bc1 = 1 - beta1^t,  bc2 = 1 - beta2^t       (Adam)
//   coef[0] = lr                                SGD, RMSProp
//             lr * sqrt(bc2) / bc1              Adam, MPS form
//             lr / bc1                          Adam, PyTorch form
//   coef[1] = sqrt(bc2) for Adam's PyTorch form, else 1
//   coef[2] = momentum scale, coef[3] = regularization scale
//
// 1 - beta^t is computed as -expm1(t * log1p(-(1 - beta))) from 1 - beta
// (given in float32 from float64), so it keeps float32's relative accuracy
// where beta^t is close to 1 (GLSL has neither log1p nor expm1).
layout(local_size_x = 1) in;
layout(constant_id = 0) const int TYPE = 0; // 0 SGD, 1 RMSProp, 2 Adam
layout(constant_id = 1) const int FORM = 0; // 0 MPS, 1 PyTorch
layout(constant_id = 2) const float ONE_MINUS_BETA1 = 0.1;
layout(constant_id = 3) const float ONE_MINUS_BETA2 = 0.001;

layout(std430, binding = 0) buffer Hyper {
	float lr;
	float momentum;
	float regScale;
	uint step;
} hyper;
layout(std430, binding = 1) writeonly buffer Coef { float coef[4]; };

// log(1 + u) for u in [-1, 0]: 2*atanh(u/(2+u)) by its series where
// |u| <= 0.5 (|z| <= 1/3, terms to z^15), else directly (1 + u is then
// exact by Sterbenz's lemma).
float stepLog1p(float u) {
	if (u < -0.5) return log(1.0 + u);
	float z = u / (2.0 + u), z2 = z * z;
	float s = 1.0 / 15.0;
	for (int k = 13; k >= 1; k -= 2) s = s * z2 + 1.0 / float(k);
	return 2.0 * z * s;
}

// exp(x) - 1 for x <= 0: Taylor's series to x^10/10! where |x| <= 0.5.
float stepExpm1(float x) {
	if (x < -0.5) return exp(x) - 1.0;
	float s = 1.0;
	for (int k = 10; k >= 2; k--) s = 1.0 + s * x / float(k);
	return x * s;
}

// 1 - beta^t from omb = 1 - beta.
float biasCorrection(float omb, float t) {
	if (omb >= 1.0) return 1.0; // beta = 0
	return -stepExpm1(t * stepLog1p(-omb));
}

void main() {
	uint t = hyper.step + 1u;
	hyper.step = t;
	float lr = hyper.lr, c1 = 1.0;
	if (TYPE == 2) {
		float bc1 = biasCorrection(ONE_MINUS_BETA1, float(t));
		float bc2 = biasCorrection(ONE_MINUS_BETA2, float(t));
		if (FORM == 0) {
			lr = lr * sqrt(bc2) / bc1;
		} else {
			lr = lr / bc1;
			c1 = sqrt(bc2);
		}
	}
	coef[0] = lr;
	coef[1] = c1;
	coef[2] = hyper.momentum;
	coef[3] = hyper.regScale;
}
