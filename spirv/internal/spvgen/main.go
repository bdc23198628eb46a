// Command spvgen builds vkmps's shaders: it compiles every glsl/*.comp with
// glslc (--target-env=vulkan1.1 -O), validates the result with spirv-val,
// writes spirv/NAME.spv, and writes spirv/shaders_gen.go holding each
// module's interface reflected from the SPIR-V (names come from a second,
// unoptimised compile, since -O strips them). With -check it builds into a
// temporary folder and fails when any committed file differs.
//
// A source may ask for variants compiled with extra macros, one directive
// comment per variant:
//
//	// vkmps:variant f16 -DVKMPS_F16
//
// builds NAME_f16.spv from NAME.comp with -DVKMPS_F16 as Go variable
// NameF16, reachable from the base shader as Name.Variant("f16"). Only -D
// arguments are allowed. A variant marked +khr after its name
//
//	// vkmps:variant khr +khr -DVKMPS_F16 -DVKMPS_COOP_KHR
//
// is compiled and validated with the tools of -glslc-khr and
// -spirv-val-khr: GL_KHR_cooperative_matrix needs glslang 13 or newer and
// a spirv-val that knows SPV_KHR_cooperative_matrix, which Debian
// bookworm's do not (the Makefile passes Debian trixie's, from `make
// trixie-root`).
//
//	go run ./spirv/internal/spvgen            # make shaders
//	go run ./spirv/internal/spvgen -check     # make shaders-check
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
)

const genFile = "shaders_gen.go"

func main() {
	src := flag.String("glsl", "glsl", "folder of the GLSL sources (*.comp; includes beside them)")
	dst := flag.String("spirv", "spirv", "folder of the .spv files and the generated Go file")
	checkOnly := flag.Bool("check", false, "build into a temporary folder and compare with -spirv")
	glslc := flag.String("glslc", "glslc", "glslc command")
	spirvVal := flag.String("spirv-val", "spirv-val", "spirv-val command")
	glslcKHR := flag.String("glslc-khr", "", "glslc command for the +khr variants (glslang 13 or newer)")
	spirvValKHR := flag.String("spirv-val-khr", "", "spirv-val command for the +khr variants")
	flag.Parse()
	t := tools{glslc: *glslc, spirvVal: *spirvVal, khr: &tools{glslc: *glslcKHR, spirvVal: *spirvValKHR}}
	if err := run(t, *src, *dst, *checkOnly); err != nil {
		fmt.Fprintln(os.Stderr, "spvgen:", err)
		os.Exit(1)
	}
}

// tools are the commands a build runs; khr those of the +khr variants.
type tools struct {
	glslc, spirvVal string
	khr             *tools
}

// forVariant returns the tools of variant va, or an error naming what is
// missing for a +khr variant.
func (t tools) forVariant(src string, va variant) (tools, error) {
	if !va.khr {
		return t, nil
	}
	if t.khr == nil || t.khr.glslc == "" || t.khr.spirvVal == "" {
		return tools{}, fmt.Errorf("%s: variant %q (+khr) needs -glslc-khr and -spirv-val-khr: glslang 13 or newer and its spirv-val (`make trixie-root` builds Debian trixie's)", src, va.name)
	}
	return *t.khr, nil
}

func run(t tools, src, dst string, checkOnly bool) error {
	out := dst
	if checkOnly {
		tmp, err := os.MkdirTemp("", "spvgen")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		out = tmp
	}
	files, err := build(t, src, out)
	if err != nil {
		return err
	}
	if !checkOnly {
		// Remove .spv files whose source is gone.
		old, _ := filepath.Glob(filepath.Join(dst, "*.spv"))
		for _, p := range old {
			if _, ok := files[filepath.Base(p)]; !ok {
				if err := os.Remove(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var bad []string
	for name, want := range files {
		have, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || !bytes.Equal(have, want) {
			bad = append(bad, name)
		}
	}
	committed, _ := filepath.Glob(filepath.Join(dst, "*.spv"))
	for _, p := range committed {
		if _, ok := files[filepath.Base(p)]; !ok {
			bad = append(bad, filepath.Base(p)+" (no source)")
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("out of date with glsl/ (run `make shaders`): %s", strings.Join(bad, ", "))
	}
	fmt.Printf("spvgen: %d files match their sources\n", len(files))
	return nil
}

// build compiles and writes every shader and the Go file into out; it
// returns the bytes written by file name.
func build(t tools, src, out string) (map[string][]byte, error) {
	sources, err := filepath.Glob(filepath.Join(src, "*.comp"))
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("no *.comp files in %s", src)
	}
	sort.Strings(sources)
	tmp, err := os.MkdirTemp("", "spvgen-names")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	// Every build (a source and one of its variants) compiles, optimised
	// and plain, and validates on its own, as many at once as there are
	// CPUs; the Go file is then written in source and variant order.
	type job struct {
		src, base, stem, spv, plain string
		va                          variant
		vs                          []variant
		err                         error
	}
	var jobs []*job
	for _, s := range sources {
		base := strings.TrimSuffix(filepath.Base(s), ".comp")
		vs, err := variants(s)
		if err != nil {
			return nil, err
		}
		for _, va := range append([]variant{{}}, vs...) {
			stem := base
			if va.name != "" {
				stem = base + "_" + va.name
			}
			jobs = append(jobs, &job{src: s, base: base, stem: stem, spv: filepath.Join(out, stem+".spv"),
				plain: filepath.Join(tmp, stem+".spv"), va: va, vs: vs})
		}
	}
	var wg sync.WaitGroup
	next := make(chan *job)
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				j.err = t.buildOne(j.src, j.spv, j.plain, j.va)
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()

	written := map[string][]byte{}
	var g bytes.Buffer
	g.WriteString("// Code generated by spvgen from glsl/*.comp; DO NOT EDIT.\n\npackage spirv\n\n")
	var vars []string
	for _, j := range jobs {
		if j.err != nil {
			return nil, j.err
		}
		raw, err := os.ReadFile(j.spv)
		if err != nil {
			return nil, err
		}
		written[j.stem+".spv"] = raw
		m, err := reflectFile(j.spv)
		if err != nil {
			return nil, err
		}
		named, err := reflectFile(j.plain)
		if err != nil {
			return nil, err
		}
		addNames(m, named)
		v := goName(j.stem)
		vars = append(vars, v)
		writeShader(&g, v, j.base, j.stem, j.va, j.vs, m)
	}
	fmt.Fprintf(&g, "var all = []*Shader{%s}\n", strings.Join(vars, ", "))
	code, err := format.Source(g.Bytes())
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(out, genFile), code, 0o644); err != nil {
		return nil, err
	}
	written[genFile] = code
	return written, nil
}

// variant is a build of a source with extra macros; the zero value is the
// plain build. khr: built with the KHR tools (+khr).
type variant struct {
	name string
	khr  bool
	args []string
}

// variants reads the "// vkmps:variant NAME [+khr] -DMACRO[=VALUE]..."
// directives of the source at path.
func variants(path string) ([]variant, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []variant
	seen := map[string]bool{}
	for i, line := range strings.Split(string(text), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "// vkmps:variant")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		where := fmt.Sprintf("%s:%d", path, i+1)
		if len(f) < 2 {
			return nil, fmt.Errorf("%s: want // vkmps:variant NAME -DMACRO...", where)
		}
		name := f[0]
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
				return nil, fmt.Errorf("%s: variant name %q: want lower-case letters and digits", where, name)
			}
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: variant %q twice", where, name)
		}
		seen[name] = true
		args, khr := f[1:], f[1] == "+khr"
		if khr {
			args = args[1:]
		}
		if len(args) == 0 {
			return nil, fmt.Errorf("%s: variant %q: no -DMACRO", where, name)
		}
		for _, a := range args {
			if !strings.HasPrefix(a, "-D") || len(a) < 3 {
				return nil, fmt.Errorf("%s: variant %q: argument %q is not -DMACRO[=VALUE]", where, name, a)
			}
		}
		out = append(out, variant{name: name, khr: khr, args: args})
	}
	return out, nil
}

// buildOne compiles variant va of src optimised to spv and plain (for
// the names -O strips) to plain, and validates spv, with the variant's
// tools.
func (t tools) buildOne(src, spv, plain string, va variant) error {
	vt, err := t.forVariant(src, va)
	if err != nil {
		return err
	}
	if err := vt.compile(src, spv, true, va.args...); err != nil {
		return err
	}
	if err := vt.compile(src, plain, false, va.args...); err != nil {
		return err
	}
	if msg, err := exec.Command(vt.spirvVal, "--target-env", "vulkan1.1", spv).CombinedOutput(); err != nil {
		return fmt.Errorf("spirv-val %s: %v\n%s", spv, err, msg)
	}
	return nil
}

func (t tools) compile(src, dst string, optimize bool, defines ...string) error {
	args := append(append([]string{"--target-env=vulkan1.1"}, defines...), "-o", dst, src)
	if optimize {
		args = append([]string{"-O"}, args...)
	}
	if msg, err := exec.Command(t.glslc, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("glslc %s: %v\n%s", src, err, msg)
	}
	return nil
}

func reflectFile(path string) (*Module, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(raw)%4 != 0 {
		return nil, fmt.Errorf("%s: size %d is not a multiple of 4", path, len(raw))
	}
	words := make([]uint32, len(raw)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	m, err := Reflect(words)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// addNames copies binding and spec-constant names from the unoptimised
// module (matched by binding number and spec ID) where m lacks them.
func addNames(m, named *Module) {
	for i := range m.Bindings {
		for _, b := range named.Bindings {
			if b.Binding == m.Bindings[i].Binding && m.Bindings[i].Name == "" {
				m.Bindings[i].Name = b.Name
			}
		}
	}
	for i := range m.Spec {
		for _, s := range named.Spec {
			if s.ID == m.Spec[i].ID && (m.Spec[i].Name == "" || strings.HasPrefix(m.Spec[i].Name, "local_size_")) && s.Name != "" {
				m.Spec[i].Name = s.Name
			}
		}
	}
}

// writeShader writes the Go variable v of module m, built as stem.spv from
// glsl/base.comp as variant va (the plain build when va.name is ""); the
// plain build lists its variants vs.
func writeShader(g *bytes.Buffer, v, base, stem string, va variant, vs []variant, m *Module) {
	if va.name == "" {
		fmt.Fprintf(g, "// %s is glsl/%s.comp.\nvar %s = &Shader{\n", v, base, v)
	} else {
		fmt.Fprintf(g, "// %s is glsl/%s.comp built with %s (variant %q).\nvar %s = &Shader{\n",
			v, base, strings.Join(va.args, " "), va.name, v)
	}
	fmt.Fprintf(g, "\tName: %q,\n\tfile: %q,\n", stem, stem+".spv")
	g.WriteString("\tBindings: []Binding{\n")
	for _, bd := range m.Bindings {
		fmt.Fprintf(g, "\t\t{Binding: %d, Name: %q, Access: %s},\n", bd.Binding, bd.Name, bd.Access)
	}
	g.WriteString("\t},\n")
	fmt.Fprintf(g, "\tPushConstantSize: %d,\n", m.PushConstantSize)
	g.WriteString("\tSpec: []SpecConstant{\n")
	for _, s := range m.Spec {
		fmt.Fprintf(g, "\t\t{ID: %d, Name: %q, Default: %d},\n", s.ID, s.Name, s.Default)
	}
	g.WriteString("\t},\n")
	fmt.Fprintf(g, "\tLocalSize: [3]uint32{%d, %d, %d},\n", m.LocalSize[0], m.LocalSize[1], m.LocalSize[2])
	fmt.Fprintf(g, "\tLocalSizeSpec: [3]int{%d, %d, %d},\n", m.LocalSizeSpec[0], m.LocalSizeSpec[1], m.LocalSizeSpec[2])
	if va.name == "" && len(vs) > 0 {
		g.WriteString("\tvariants: map[string]*Shader{")
		for _, o := range vs {
			fmt.Fprintf(g, "%q: %s, ", o.name, goName(base+"_"+o.name))
		}
		g.WriteString("},\n")
	}
	g.WriteString("}\n\n")
}

// goName turns a file stem like "pooling_max_grad" into "PoolingMaxGrad".
func goName(stem string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(stem, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}
