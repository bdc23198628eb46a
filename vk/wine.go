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
var createMu sync.Mutex
