package vk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	vkg "github.com/vulkan-go/vulkan"
)

// Device.Close reports vkDeviceWaitIdle's failure (issue 20): work
// submitted before may not have finished, and the caller must hear of it.
// The device is still destroyed, and a second Close is a no-op.
func TestCloseReportsWaitIdleError(t *testing.T) {
	d := openInternal(t, Options{})
	real := d.waitIdle
	d.waitIdle = func(h vkg.Device) vkg.Result {
		real(h)
		return vkg.Result(ErrorDeviceLost)
	}
	err := d.Close()
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrDeviceLost)
	assert.Contains(t, err.Error(), "vkDeviceWaitIdle")
	assert.Nil(t, d.handle, "destroyed all the same")
	assert.NoError(t, d.Close(), "the second Close does nothing")
	assert.Empty(t, d.ValidationMessages())
}
