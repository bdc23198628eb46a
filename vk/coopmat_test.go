package vk_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// HasCooperativeMatrix finds exactly the float16 x float16 + float32
// shapes listed.
func TestHasCooperativeMatrix(t *testing.T) {
	l := vk.Limits{CooperativeMatrixNV: []vk.CooperativeMatrixShape{
		{M: 16, N: 8, K: 16, A: vk.ComponentFloat16, B: vk.ComponentFloat16, C: vk.ComponentFloat32, D: vk.ComponentFloat32},
		{M: 16, N: 16, K: 16, A: vk.ComponentFloat16, B: vk.ComponentFloat16, C: vk.ComponentFloat16, D: vk.ComponentFloat16},
	}}
	assert.True(t, l.HasCooperativeMatrix(16, 8, 16))
	assert.False(t, l.HasCooperativeMatrix(16, 16, 16), "float16 accumulators only")
	assert.False(t, l.HasCooperativeMatrix(8, 16, 16))
	assert.False(t, vk.Limits{}.HasCooperativeMatrix(16, 8, 16))
	assert.False(t, l.HasCooperativeMatrixKHR(16, 8, 16), "the NV list only")
	k := vk.Limits{CooperativeMatrixKHR: l.CooperativeMatrixNV}
	assert.True(t, k.HasCooperativeMatrixKHR(16, 8, 16))
	assert.False(t, k.HasCooperativeMatrixKHR(16, 16, 16))
	assert.False(t, k.HasCooperativeMatrix(16, 8, 16), "the KHR list only")
	assert.Equal(t, "16x8x16 float16*float16+float32=float32", l.CooperativeMatrixNV[0].String())
	assert.Equal(t, "ComponentType(99)", vk.ComponentType(99).String())
}

// A device that reports cooperative matrices opens with them (the
// extensions and features enabled; validation would flag a shader using
// them otherwise) and lists only well-formed shapes.
func TestCooperativeMatrixLimits(t *testing.T) {
	dev := vktest.Open(t)
	l := dev.Limits()
	t.Logf("%s: compute units %d, cooperative matrices NV %v, KHR %v", dev.Info().Name, l.ComputeUnits, l.CooperativeMatrixNV, l.CooperativeMatrixKHR)
	for _, s := range append(append([]vk.CooperativeMatrixShape{}, l.CooperativeMatrixNV...), l.CooperativeMatrixKHR...) {
		assert.True(t, s.M > 0 && s.N > 0 && s.K > 0, "%v", s)
	}
	if len(l.CooperativeMatrixNV) > 0 || len(l.CooperativeMatrixKHR) > 0 {
		assert.True(t, l.Float16Storage)
	}
}
