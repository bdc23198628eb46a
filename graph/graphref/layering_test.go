package graphref_test

import (
	"testing"

	"github.com/vkmps/vkmps/vk/vktest/importrules"
)

// What graph/graphref may import, directly and at all: vk/vktest/importrules.Rules
// (STYLE.md's layering), checked with go list -deps.
func TestImportRules(t *testing.T) { importrules.Check(t, "graph/graphref") }
