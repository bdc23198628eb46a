package vk

import "sync"

// createMu serializes vkCreateInstance and vkCreateDevice. Vulkan lets
// threads call them at once, but under Wine 10 (winevulkan over the Linux
// loader, make windows-test) a vkCreateDevice running while another thread
// created an instance crashed: an access violation inside the host's
// vkCreateDevice, which winevulkan reports as "Assertion failed: !status,
// file dlls/winevulkan/loader.c, line 585" and ends the process. Without
// the lock, cmd/vkmps's TestPoolAgreesWithPyTorch (parallel subtests, each
// opening its own device) died in 10 of 11 runs; with it, in none of 8.
// Instances and devices are created rarely, so the lock costs nothing
// measurable and is taken on every system.
//
// It also serializes their destruction with their creation. One CI run
// (2026-11-28, a loaded machine) had 2 of TestPoolAgreesWithPyTorch's
// 360 runs fail with validation on (Khronos layer, Debian bookworm's).
// The layer reported a live device's calls as "Invalid VkDevice" (from
// vkGetBufferMemoryRequirements) and "Couldn't find VkDevice Object"
// (UNASSIGNED-Threading-Info). The likely cause is a device created on
// one thread at the address of one another thread was destroying, whose
// destruction then removed the layer's entry for that address. With the
// lock that cannot happen. It did not reproduce in 4 runs under load
// without the lock.
var createMu sync.Mutex
