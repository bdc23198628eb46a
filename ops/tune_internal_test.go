package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseTuning(t *testing.T) {
	assert.Equal(t, tuning{}, parseTuning(""))
	assert.Equal(t, tuning{ox: 2, gatherCX: 3, wg: 128, vw: 8, noVStore: true, argmax: 1},
		parseTuning("ox=2, gathercx=3,wg=128,vw=8,vstore=0,argmax=1"))
	// Unknown keys, values out of range and malformed pairs are ignored.
	assert.Equal(t, tuning{ox: 4}, parseTuning("ox=4,ox=3x,gathercx=9,wg=100,vw=3,argmax=5,bogus=1,novalue,=2"))
}
