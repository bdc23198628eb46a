#version 450
// Dropout's draw counter: after a forward encode's dispatches, record the
// draw they used (and the seed and threshold) in the gradient state's info
// words, and advance the kernel's counter, so that every execution of a
// recorded forward, replays included, draws a fresh mask.
layout(local_size_x = 1) in;

layout(std430, binding = 0) buffer Counter { uint counter[]; };
layout(std430, binding = 1) writeonly buffer Info { uint info[]; };

layout(push_constant) uniform Push {
	uint seedLo, seedHi, threshold;
} pc;

void main() {
	uint d = counter[0];
	info[0] = d;
	info[1] = pc.seedLo;
	info[2] = pc.seedHi;
	info[3] = pc.threshold;
	counter[0] = d + 1u;
}
