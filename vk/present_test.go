package vk_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Presentation needs a window; cmd/vkmps/internal/view tests it under
// Xvfb. These tests cover what needs none.

func TestPresentOptions(t *testing.T) {
	d := vktest.Open(t, vk.Options{Present: true})
	assert.NotNil(t, d.InstanceHandle())
	_, err := d.NewSwapchain(0, vk.SwapchainOptions{})
	assert.ErrorIs(t, err, vk.ErrInvalid)

	// Compute works as without presentation.
	b, err := d.NewBuffer(16, "b")
	require.NoError(t, err)
	require.NoError(t, b.Write(context.Background(), 0, make([]byte, 16)))
	require.NoError(t, b.Close())
}

func TestSwapchainNeedsPresentOption(t *testing.T) {
	d := vktest.Open(t)
	_, err := d.NewSwapchain(1, vk.SwapchainOptions{})
	assert.ErrorIs(t, err, vk.ErrInvalid)
	assert.Contains(t, err.Error(), "Options.Present")
}

func TestMissingInstanceExtension(t *testing.T) {
	vktest.Open(t) // skips without a device
	_, err := vk.Open(vk.Options{InstanceExtensions: []string{"VK_KHR_no_such_extension"}})
	require.Error(t, err)
	assert.True(t, errors.Is(err, vk.ErrUnsupported), "%v", err)
	assert.Contains(t, err.Error(), "VK_KHR_no_such_extension")
}

func TestSwapchainCloseTwice(t *testing.T) {
	var s *vk.Swapchain
	assert.NoError(t, s.Close())
}
