//go:build !view

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestViewWithoutTheTag(t *testing.T) {
	r := runVkmps(t, "view")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "built without the viewer")
	assert.Contains(t, r.stderr, "make view")
	assert.Contains(t, r.stderr, "vkmps demo")
}
