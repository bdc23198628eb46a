// Package testhook lets vk/vktest reach behaviour of package vk that
// exists for tests only (simulating a lost device, injecting a validation
// message), without adding it to vk's public API. Package vk fills the
// variables in its init; they take a *vk.Device as any, since this package
// cannot import vk.
package testhook

// MarkLost marks a *vk.Device lost, as if the driver had returned
// VK_ERROR_DEVICE_LOST: every later call on it returns vk.ErrDeviceLost.
var MarkLost func(dev any)

// AddMessage records a validation message on a *vk.Device as if the
// validation layer had sent it (error when isError, else a warning).
var AddMessage func(dev any, isError bool, id, text string)
