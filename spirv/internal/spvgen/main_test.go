package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestVariantDirectives(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "x.comp")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	vs, err := variants(write("#version 450\n// vkmps:variant f16 -DVKMPS_F16\n  // vkmps:variant wide -DW=4 -DX\nvoid main() {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].name != "f16" || vs[0].args[0] != "-DVKMPS_F16" || vs[1].name != "wide" || len(vs[1].args) != 2 {
		t.Fatalf("variants = %+v", vs)
	}
	for _, bad := range []string{
		"// vkmps:variant f16\n",                               // no macro
		"// vkmps:variant F16 -DX\n",                           // upper case
		"// vkmps:variant f16 -O\n",                            // not -D
		"// vkmps:variant f16 -DX\n// vkmps:variant f16 -DY\n", // twice
	} {
		if _, err := variants(write(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if goName("pooling_max_f16") != "PoolingMaxF16" {
		t.Error(goName("pooling_max_f16"))
	}
}
