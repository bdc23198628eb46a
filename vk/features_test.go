package vk_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Float16Storage reports the device's storageBuffer16BitAccess, Open
// enables it (a shader using it builds without validation messages), and
// NoFloat16Storage turns it off.
func TestFloat16StorageFeature(t *testing.T) {
	dev := vktest.Open(t)
	infos, err := vk.Devices()
	require.NoError(t, err)
	var info vk.Info
	for _, in := range infos {
		if in.Index == dev.Info().Index {
			info = in
		}
	}
	assert.Equal(t, info.Limits.Float16Storage, dev.Limits().Float16Storage)
	if !info.Limits.Float16Storage {
		t.Skipf("%s has no 16-bit storage buffer access", info.Name)
	}
	_, err = dev.Pipeline(spirv.Fill16, 64)
	require.NoError(t, err)

	assert.Equal(t, info.Limits.Float16Arithmetic, dev.Limits().Float16Arithmetic)
	off := vktest.Open(t, vk.Options{NoFloat16Storage: true})
	assert.False(t, off.Limits().Float16Storage)
	assert.False(t, off.Limits().Float16Arithmetic)
	assert.Equal(t, dev.Limits().MaxStorageBufferRange, off.Limits().MaxStorageBufferRange)
}
