package spirv

import (
	"strings"
	"testing"
)

// Every pooling shader has an "f16" build with the same interface; the
// variants are listed by All and found by Lookup.
func TestFloat16Variants(t *testing.T) {
	n := 0
	for _, s := range All() {
		if !strings.HasPrefix(s.Name, "pooling_") || strings.HasSuffix(s.Name, "_f16") {
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
