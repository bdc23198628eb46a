#version 450
// loss (MPSCNNLoss): mean squared error or softmax cross-entropy over
// channels, for the batch images [0, batches) of one dispatch.
//
// Items: MSE has one per value (batches*C*H*W), softmax cross-entropy one per
// pixel (batches*H*W), its C values pc.plane apart. MODE 0 writes each item's
// loss to out[outBase + item] (reduction none); MODE 1 writes each
// workgroup's sum of item losses to out[outBase + workgroup] (summed in a
// fixed order, so runs repeat bit for bit); MODE 2 writes the gradient
// scale * dLoss/dpred to out[outBase + value].
//   MSE:  loss = (p - l)^2,                      grad = 2 (p - l)
//   CE:   loss = sum_c l_c (lse - p_c),          grad_c = softmax_c * sum_c l_c - l_c
//         with lse = log sum_c exp(p_c), computed stably.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int TYPE = 0; // 0 MSE, 1 softmax cross-entropy
layout(constant_id = 2) const int MODE = 0; // 0 per item, 1 partial sums, 2 gradient

layout(std430, binding = 0) readonly buffer Pred { float pred[]; };
layout(std430, binding = 1) readonly buffer Labels { float labels[]; };
layout(std430, binding = 2) writeonly buffer Out { float outv[]; };

layout(push_constant) uniform Push {
	uint items;    // items in this dispatch
	uint channels; // C
	uint plane;    // H*W
	uint predBase;
	uint labelBase;
	uint outBase;
	float scale;   // gradient scale (MODE 2); loss scale otherwise
} pc;

shared float partial[gl_WorkGroupSize.x];

// index of channel c of pixel item (CE) in the dispatch's values
uint valueIndex(uint item, uint c) {
	uint n = item / pc.plane, px = item % pc.plane;
	return (n * pc.channels + c) * pc.plane + px;
}

float itemLoss(uint item) {
	if (TYPE == 0) {
		float d = pred[pc.predBase + item] - labels[pc.labelBase + item];
		return d * d;
	}
	float m = pred[pc.predBase + valueIndex(item, 0)];
	for (uint c = 1; c < pc.channels; c++) m = max(m, pred[pc.predBase + valueIndex(item, c)]);
	float s = 0.0;
	for (uint c = 0; c < pc.channels; c++) s += exp(pred[pc.predBase + valueIndex(item, c)] - m);
	float lse = m + log(s);
	float l = 0.0;
	for (uint c = 0; c < pc.channels; c++) {
		uint v = valueIndex(item, c);
		l += labels[pc.labelBase + v] * (lse - pred[pc.predBase + v]);
	}
	return l;
}

void gradient(uint item) {
	if (TYPE == 0) {
		float d = pred[pc.predBase + item] - labels[pc.labelBase + item];
		outv[pc.outBase + item] = pc.scale * 2.0 * d;
		return;
	}
	float m = pred[pc.predBase + valueIndex(item, 0)];
	for (uint c = 1; c < pc.channels; c++) m = max(m, pred[pc.predBase + valueIndex(item, c)]);
	float s = 0.0, ls = 0.0;
	for (uint c = 0; c < pc.channels; c++) {
		uint v = valueIndex(item, c);
		s += exp(pred[pc.predBase + v] - m);
		ls += labels[pc.labelBase + v];
	}
	for (uint c = 0; c < pc.channels; c++) {
		uint v = valueIndex(item, c);
		float p = exp(pred[pc.predBase + v] - m) / s;
		outv[pc.outBase + v] = pc.scale * (p * ls - labels[pc.labelBase + v]);
	}
}

void main() {
	uint item = gl_GlobalInvocationID.x;
	if (MODE == 2) {
		if (item < pc.items) gradient(item);
		return;
	}
	if (MODE == 0) {
		if (item < pc.items) outv[pc.outBase + item] = pc.scale * itemLoss(item);
		return;
	}
	uint lid = gl_LocalInvocationID.x;
	partial[lid] = item < pc.items ? itemLoss(item) : 0.0;
	barrier();
	for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
		if (lid < s) partial[lid] += partial[lid + s];
		barrier();
	}
	if (lid == 0) outv[pc.outBase + gl_WorkGroupID.x] = partial[0];
}
