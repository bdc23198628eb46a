#version 450
// optimizer (MPSNNOptimizerStochasticGradientDescent, MPSNNOptimizerRMSProp,
// MPSNNOptimizerAdam): updates count float32 parameters w and their state
// in place from their gradients g. Per value, MPS's order:
//
//   g = clamp(g, CLIP_MIN, CLIP_MAX)   if CLIP (a NaN gradient stays NaN)
//   g = RESCALE * g
//   g += regScale * sign(w)            REG 1 (L1)
//   g += regScale * w                  REG 2 (L2, PyTorch's weight_decay)
//
// then the rule, with lr = coef[0] and mu = coef[2] (optimizer_step.comp):
//   SGD, no MOMENTUM:          w -= lr*g
//   SGD MOMENTUM, FORM 0:      m = mu*m + lr*g;  w -= m          (MPS)
//   SGD MOMENTUM, FORM 1:      m = mu*m + g;     w -= lr*m       (PyTorch)
//   SGD NESTEROV:              m = mu*m + g;     w -= lr*(g + mu*m)
//   RMSProp:                   s = d*s + (1-d)*g^2;  w -= lr*(g/(sqrt(s)+eps))
//   Adam:                      m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g^2
//                              AMSGRAD: vmax = max(vmax, v) replaces v
//                              FORM 0: w -= lr*(m/(sqrt(v)+eps))
//                              FORM 1: w -= lr*(m/(sqrt(v)/coef[1]+eps))
// Each value is read and written by one invocation: no ordering issue.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int TYPE = 0; // 0 SGD, 1 RMSProp, 2 Adam
layout(constant_id = 2) const int MOMENTUM = 0;
layout(constant_id = 3) const int NESTEROV = 0;
layout(constant_id = 4) const int AMSGRAD = 0;
layout(constant_id = 5) const int FORM = 0; // 0 MPS, 1 PyTorch
layout(constant_id = 6) const int CLIP = 0;
layout(constant_id = 7) const int REG = 0; // 0 none, 1 L1, 2 L2
layout(constant_id = 8) const float CLIP_MIN = 0.0;
layout(constant_id = 9) const float CLIP_MAX = 0.0;
layout(constant_id = 10) const float RESCALE = 1.0;
layout(constant_id = 11) const float DECAY = 0.9;
layout(constant_id = 12) const float ONE_MINUS_DECAY = 0.1;
layout(constant_id = 13) const float BETA1 = 0.9;
layout(constant_id = 14) const float ONE_MINUS_BETA1 = 0.1;
layout(constant_id = 15) const float BETA2 = 0.999;
layout(constant_id = 16) const float ONE_MINUS_BETA2 = 0.001;
layout(constant_id = 17) const float EPSILON = 1e-8;

layout(std430, binding = 0) readonly buffer Coef { float coef[4]; };
layout(std430, binding = 1) readonly buffer Grad { float grad[]; };
layout(std430, binding = 2) buffer Param { float param[]; };
layout(std430, binding = 3) buffer Momentum { float mom[]; };
layout(std430, binding = 4) buffer Velocity { float vel[]; };
layout(std430, binding = 5) buffer MaxVelocity { float vmax[]; };

layout(push_constant) uniform Push {
	uint count;
	uint gradBase;
	uint paramBase;
	uint momBase;
	uint velBase;
	uint vmaxBase;
} pc;

void main() {
	float lr = coef[0], c1 = coef[1], mu = coef[2], reg = coef[3];
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
		float g = grad[pc.gradBase + i];
		float w = param[pc.paramBase + i];
		// isnan, not the comparisons alone: drivers may turn a select of
		// comparisons into min/max, which drop NaN (NVIDIA does).
		if (CLIP != 0 && !isnan(g)) g = clamp(g, CLIP_MIN, CLIP_MAX);
		g *= RESCALE;
		if (REG == 1) g += reg * sign(w);
		if (REG == 2) g += reg * w;
		if (TYPE == 0) {
			if (MOMENTUM == 0) {
				w -= lr * g;
			} else {
				uint j = pc.momBase + i;
				if (NESTEROV != 0) {
					float m = mu * mom[j] + g;
					mom[j] = m;
					w -= lr * (g + mu * m);
				} else if (FORM == 1) {
					float m = mu * mom[j] + g;
					mom[j] = m;
					w -= lr * m;
				} else {
					float m = mu * mom[j] + lr * g;
					mom[j] = m;
					w -= m;
				}
			}
		} else if (TYPE == 1) {
			uint j = pc.velBase + i;
			float s = DECAY * vel[j] + ONE_MINUS_DECAY * (g * g);
			vel[j] = s;
			w -= lr * (g / (sqrt(s) + EPSILON));
		} else {
			uint jm = pc.momBase + i, jv = pc.velBase + i;
			float m = BETA1 * mom[jm] + ONE_MINUS_BETA1 * g;
			float v = BETA2 * vel[jv] + ONE_MINUS_BETA2 * (g * g);
			mom[jm] = m;
			vel[jv] = v;
			if (AMSGRAD != 0) {
				uint jx = pc.vmaxBase + i;
				float old = vmax[jx];
				v = isnan(old) || isnan(v) ? old + v : max(old, v); // NaN propagates
				vmax[jx] = v;
			}
			float d = FORM == 1 ? sqrt(v) / c1 + EPSILON : sqrt(v) + EPSILON;
			w -= lr * (m / d);
		}
		param[pc.paramBase + i] = w;
	}
}
