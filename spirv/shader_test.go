package spirv

import (
	"strings"
	"testing"
)

// Every pooling shader has an "f16" build with the same interface; the
// variants are listed by All and found by Lookup.
func TestFloat16Variants(t *testing.T) {
	// Variants (f16, and the pooling shaders' "global" and "loop" builds
	// with their f16 twins "globalf16", "loopf16") are checked through
	// their base shader.
	variant := map[*Shader]bool{}
	for _, s := range All() {
		for name, v := range s.variants {
			variant[v] = true
			if strings.HasPrefix(s.Name, "pooling_") && name != "f16" && !strings.HasSuffix(name, "f16") && s.Variant(name+"f16") == nil {
				t.Errorf("%s: variant %q has no float16 twin %q", s.Name, name, name+"f16")
			}
		}
	}
	n := 0
	for _, s := range All() {
		if !strings.HasPrefix(s.Name, "pooling_") || variant[s] {
			continue
		}
		n++
		v := s.Variant("f16")
		if v == nil {
			t.Errorf("%s has no f16 variant", s.Name)
			continue
		}
		if v.Name != s.Name+"_f16" || Lookup(v.Name) != v {
			t.Errorf("%s: variant %q not listed as such", s.Name, v.Name)
		}
		if len(v.Bindings) != len(s.Bindings) || v.PushConstantSize != s.PushConstantSize || v.LocalSizeSpec != s.LocalSizeSpec {
			t.Errorf("%s: f16 variant's interface differs", s.Name)
		}
		if _, err := v.Code(); err != nil {
			t.Error(err)
		}
		if v.Variant("f16") != nil || s.Variant("nope") != nil {
			t.Errorf("%s: unexpected variant", s.Name)
		}
	}
	if n < 13 {
		t.Errorf("%d pooling shaders, want at least 13", n)
	}
}
