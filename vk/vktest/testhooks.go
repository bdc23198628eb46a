package vktest

import (
	"sync"
	"testing"

	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/internal/testhook"
)

// lostOnPurpose holds the devices MarkLost marked: their cleanup checks
// only the validation messages (a lost device neither goes idle nor
// retires what was closed on it).
var lostOnPurpose sync.Map

// MarkLost makes d behave as a lost device (VK_ERROR_DEVICE_LOST) from
// now on: every later call that needs the GPU returns vk.ErrDeviceLost.
// For tests of how callers surface a lost device.
func MarkLost(t testing.TB, d *vk.Device) {
	t.Helper()
	lostOnPurpose.Store(d, true) // kept: Open's cleanup runs after any MarkLost registers
	testhook.MarkLost(d)
}

// AddMessage records a validation message on d as if the validation
// layer had sent it, for tests of the code that must report such
// messages. It is reported by Check like any other.
func AddMessage(d *vk.Device, isError bool, id, text string) {
	testhook.AddMessage(d, isError, id, text)
}

func markedLost(d *vk.Device) bool {
	_, ok := lostOnPurpose.Load(d)
	return ok
}
