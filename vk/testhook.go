package vk

import "github.com/vkmps/vkmps/vk/internal/testhook"

// Test-only behaviour, reached through vk/internal/testhook by package
// vktest (vktest.MarkLost, vktest.AddMessage) and used directly by this
// package's internal tests.
func init() {
	testhook.MarkLost = func(d any) { d.(*Device).markLost() }
	testhook.AddMessage = func(d any, isError bool, id, text string) {
		d.(*Device).addMessage(isError, id, text)
	}
}

// markLost makes the device behave as after VK_ERROR_DEVICE_LOST: the
// same flag noteResult sets, so every path that checks for loss is taken.
func (d *Device) markLost() { d.lost.Store(true) }

// addMessage records a message as the debug callback would.
func (d *Device) addMessage(isError bool, id, text string) {
	m := Message{Severity: SeverityWarning, Type: "validation", ID: id, Text: text}
	if isError {
		m.Severity = SeverityError
	}
	in := d.inst
	in.mu.Lock()
	in.messages = append(in.messages, m)
	in.mu.Unlock()
}
