package vk_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Pipeline statistics come from the driver's compiler where the device
// offers VK_KHR_pipeline_executable_properties and the device was opened
// asking for them; otherwise Statistics says it is unsupported.
func TestPipelineStatistics(t *testing.T) {
	plain := vktest.Open(t)
	p, err := plain.Pipeline(spirv.Copy, 64)
	require.NoError(t, err)
	_, err = p.Statistics()
	assert.ErrorIs(t, err, vk.ErrUnsupported, "not asked for")
	assert.False(t, plain.PipelineStatistics())
	assert.Contains(t, p.String(), spirv.Copy.Name)
	assert.Equal(t, []*vk.Pipeline{p}, plain.Pipelines())

	dev := vktest.Open(t, vk.Options{PipelineStatistics: true})
	p, err = dev.Pipeline(spirv.Copy, 64)
	require.NoError(t, err)
	st, err := p.Statistics()
	assert.Equal(t, err == nil, dev.PipelineStatistics())
	if errors.Is(err, vk.ErrUnsupported) {
		t.Logf("%s: %v", dev.Info().Name, err)
		return
	}
	require.NoError(t, err)
	t.Logf("%s, %s:\n%s", dev.Info().Name, p, st)
	assert.Contains(t, st, " = ")
}
