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
	vs, err := variants(write("#version 450\n// vkmps:variant f16 -DVKMPS_F16\n  // vkmps:variant wide -DW=4 -DX\n// vkmps:variant khr +khr -DK\nvoid main() {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 3 || vs[0].name != "f16" || vs[0].args[0] != "-DVKMPS_F16" || vs[1].name != "wide" || len(vs[1].args) != 2 ||
		vs[0].khr || vs[1].khr || !vs[2].khr || len(vs[2].args) != 1 || vs[2].args[0] != "-DK" {
		t.Fatalf("variants = %+v", vs)
	}
	// A +khr variant needs the KHR tools, named in the error.
	if _, err := (tools{glslc: "glslc", spirvVal: "spirv-val", khr: &tools{}}).forVariant("x.comp", vs[2]); err == nil {
		t.Error("+khr variant without -glslc-khr: no error")
	}
	if vt, err := (tools{glslc: "a", spirvVal: "b", khr: &tools{glslc: "c", spirvVal: "d"}}).forVariant("x.comp", vs[2]); err != nil || vt.glslc != "c" {
		t.Errorf("+khr variant: %+v %v", vt, err)
	}
	if vt, _ := (tools{glslc: "a", spirvVal: "b", khr: &tools{glslc: "c", spirvVal: "d"}}).forVariant("x.comp", vs[0]); vt.glslc != "a" {
		t.Errorf("plain variant got the KHR tools: %+v", vt)
	}
	for _, bad := range []string{
		"// vkmps:variant f16\n",                               // no macro
		"// vkmps:variant F16 -DX\n",                           // upper case
		"// vkmps:variant f16 -O\n",                            // not -D
		"// vkmps:variant f16 -DX\n// vkmps:variant f16 -DY\n", // twice
		"// vkmps:variant khr +khr\n",                          // no macro after +khr
		"// vkmps:variant khr -DX +khr\n",                      // +khr not first
	} {
		if _, err := variants(write(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if goName("pooling_max_f16") != "PoolingMaxF16" {
		t.Error(goName("pooling_max_f16"))
	}
}
