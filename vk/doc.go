// Package vk is vkmps's Vulkan runtime: the only package that uses cgo or
// the vulkan-go binding, and none of whose exported names mention them.
//
// # Loading and devices
//
// The loader is opened at run time (libvulkan.so.1, then libvulkan.so on
// Linux; libvulkan.1.dylib, libvulkan.dylib, libMoltenVK.dylib on macOS;
// vulkan-1.dll on Windows; $VKMPS_VULKAN_LIBRARY overrides the search), so a
// machine without Vulkan gets ErrNoLoader or ErrNoDevice with a message
// saying what to install, never a crash. Devices lists every device with a
// compute queue and its Limits; Open picks one by Options.Device (an index
// or part of the name; ErrNoSuchDevice when none matches), else discrete >
// integrated > virtual > CPU. Instances enable portability enumeration
// where the loader offers it (MoltenVK) and devices the portability subset
// where listed. Options.Validation turns on the Khronos validation layer,
// with synchronization validation (ValidationSync) or without
// (ValidationCore); its messages are collected (Device.ValidationMessages).
//
// Open reads no environment variable: what it does comes from Options
// alone. Package vkenv maps $VKMPS_DEVICE and $VKMPS_VALIDATION to Options
// for the commands and the tests. (The loader library's path,
// $VKMPS_VULKAN_LIBRARY, is read when the loader is first opened, since
// that happens once per process.)
//
// # Memory
//
// Buffers are device-local storage buffers sub-allocated from 64 MiB blocks
// (larger requests get a block of their own). Where device memory is
// host-visible (lavapipe, integrated GPUs) Write and Read copy through a
// mapping; elsewhere through a double-buffered staging ring. Write and Read
// first wait for submitted work that uses the buffer. An allocation larger
// than its heap or the device's largest allocation is ErrOutOfDeviceMemory.
//
// # Work
//
// A CommandBuffer records dispatches (Dispatch: a Pipeline, one buffer
// range per shader binding, push constants, workgroup counts), copies and
// fills, then Commit submits it and Wait waits for it (honouring the
// context). A barrier is recorded only where a command touches a range an
// earlier command of the same command buffer wrote (or writes one it read);
// each command buffer starts with a barrier against earlier submissions and
// ends with one making its writes visible to the host. A finished command
// buffer can be committed again, replaying the recording. Pipelines are made
// from a Shader (SPIR-V and its reflected interface; package spirv's
// shaders implement it, and vk does not import that package) with
// specialization constants and cached per device; descriptor sets come from pools recycled when the
// work finishes. The per-dispatch path is one cgo call with no Go
// allocation.
//
// # Lifetimes and concurrency
//
// Every object has Close, safe to call twice and safe while the GPU still
// uses the object: its memory is released when the work that uses it (and
// every command buffer that recorded it) is done. Device.Close waits for the
// device to go idle (returning that wait's error, such as ErrDeviceLost)
// and releases everything; LiveObjects reports what is
// still open, which the tests (package vktest) require to be nothing. A
// Device is safe for concurrent use; a CommandBuffer is used by one
// goroutine at a time. Errors are *Error values (the call and its VkResult)
// unwrapping to sentinels such as ErrDeviceLost and ErrOutOfDeviceMemory; a
// lost device makes every later call return ErrDeviceLost.
package vk
