// Package panels is the window-system-free half of `vkmps view`: the
// viewer's settings and the keys that change them, the GPU work that pools
// a picture forward and backward and draws the three panels (input,
// forward result, gradient heatmap) into a buffer of pixels ready for a
// swapchain, and the same canvas drawn on the CPU from the reference
// kernels (ops/ref), which tests compare with what the GPU drew.
//
// The canvas is three panels side by side on a dark grey background
// (Background), Margin pixels apart and from the edges. Each panel shows a
// picture drawn as `vkmps demo` writes its PNGs (the input and the result
// as images, the gradient dL/dx of L = sum(y^2)/2 as a heatmap), scaled
// by nearest neighbour to the largest size that fits, centred.
package panels
