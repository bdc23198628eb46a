// Package view is the window of `vkmps view`: a glfw window presenting,
// through a Vulkan swapchain on the device that runs the kernels, the
// canvas that package panels draws (input, forward result, gradient
// heatmap), with keys that change the kernel.
//
// Everything but this file needs the build tag "view" (`make view`): glfw
// compiles against the X11 development headers and needs a display, which
// the library and the headless commands never do.
package view
