package vk

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/spirv"
)

// TestSyncValidationSeesAMissingBarrier proves both that the validation
// layer runs with synchronization validation and that the barriers the
// command buffer inserts are needed: with the hazard tracking defeated, a
// read-after-write between two dispatches must be reported.
func TestSyncValidationSeesAMissingBarrier(t *testing.T) {
	d := openInternal(t, Options{Validation: ValidationSync})
	defer d.Close()
	require.True(t, d.ValidationEnabled())
	a, err := d.NewBuffer(4096, "a")
	require.NoError(t, err)
	defer a.Close()
	b, err := d.NewBuffer(4096, "b")
	require.NoError(t, err)
	defer b.Close()
	c, err := d.NewBuffer(4096, "c")
	require.NoError(t, err)
	defer c.Close()
	p, err := d.Pipeline(spirv.Copy, 64)
	require.NoError(t, err)
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	push := make([]byte, 12)
	binary.LittleEndian.PutUint32(push, 4096/16)
	require.NoError(t, cb.Dispatch(p, []BufferRange{a.Whole(), b.Whole()}, push, [3]uint32{4, 1, 1}))
	cb.hazards = cb.hazards[:0] // forget that b was written
	require.NoError(t, cb.Dispatch(p, []BufferRange{b.Whole(), c.Whole()}, push, [3]uint32{4, 1, 1}))
	require.Equal(t, 0, cb.Barriers())
	require.NoError(t, cb.Commit())
	require.NoError(t, cb.Wait(context.Background()))
	msgs := d.ValidationMessages()
	found := false
	for _, m := range msgs {
		if strings.Contains(m.ID, "SYNC-HAZARD-READ") || strings.Contains(m.ID, "SYNC-HAZARD") {
			found = true
		}
	}
	require.True(t, found, "expected a synchronization hazard, got %v", msgs)
}
