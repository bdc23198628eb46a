package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The viewer's window is tested in cmd/vkmps/internal/view (build tag
// view, under Xvfb: make view-test); these cover the command without it.

func TestViewFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"view", "--keys", "k,zz"}, `unknown key "zz"`},
		{[]string{"view", "--keys", "size=0x10"}, `unknown key "size=0x10"`},
		{[]string{"view", "--frames", "-1"}, "--frames: -1 < 0"},
		{[]string{"view", "--in", "/nonexistent.png"}, "--in:"},
	} {
		r := runVkmps(t, c.args...)
		assert.Equal(t, 2, r.code, "%v", c.args)
		assert.Contains(t, r.stderr, c.want, "%v", c.args)
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
	}
	r := runVkmps(t, "view", "--help")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "k/K (up/down)")
}
