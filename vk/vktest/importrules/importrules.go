// Package importrules holds vkmps's package layering (STYLE.md) and the
// test helper that enforces it with `go list -deps`: each library package
// has a test calling Check in one line, so a new import that breaks the
// layering fails that package's tests.
//
//	padding                 the standard library only
//	spirv                   the standard library only (embed)
//	vk                      vulkan-go and cgo (the only package with either),
//	                        vk/internal/testhook; not spirv: shaders come in
//	                        through the vk.Shader interface
//	vk/vkenv, vk/vktest     vk (the environment helper, the test helper)
//	ops                     vk, spirv, padding
//	ops/ref                 padding (the CPU reference)
//	graph                   ops, vk, padding (never ops/ref: the CPU
//	                        evaluation lives in graph/graphref)
//	graph/graphref          graph, ops, ops/ref, vk, padding
//	cmd/...                 anything
//
// A rule lists what a package may import directly; what it depends on at
// all (`go list -deps`) must come from those imports (each checked by its
// own rule) or the standard library. Tests and test-only packages are not
// covered: they may import testify, vktest, spirv and the like.
package importrules

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Module is vkmps's module path.
const Module = "github.com/vkmps/vkmps"

// Rule is what one package may import directly: module packages by their
// path inside the module ("vk", "ops/ref") and other modules' packages by
// full import path. Cgo says whether it may use cgo.
type Rule struct {
	Imports []string
	Cgo     bool
}

// Rules are the library packages' rules, by path inside the module.
var Rules = map[string]Rule{
	"padding":               {},
	"spirv":                 {},
	"spirv/internal/spvgen": {},
	"vk":                    {Imports: []string{"vk/internal/testhook", "github.com/vulkan-go/vulkan"}, Cgo: true},
	"vk/internal/testhook":  {},
	"vk/vkenv":              {Imports: []string{"vk"}},
	"vk/vktest":             {Imports: []string{"vk", "vk/vkenv", "vk/internal/testhook"}},
	"ops":                   {Imports: []string{"vk", "spirv", "padding"}},
	"ops/ref":               {Imports: []string{"padding"}},
	"graph": {Imports: []string{"ops", "vk", "padding",
		// checkpoints: .npy and safetensors files
		"github.com/sbinet/npyio/npy", "github.com/nlpodyssey/safetensors"}},
	"graph/graphref":        {Imports: []string{"graph", "ops", "ops/ref", "vk", "padding"}},
	"vk/vktest/importrules": {},
}

// ListingFile is where, at the module root, a listing made by
// `go list -deps -f '{{template}}' ./...` (see ListFormat) may stand in for
// the go command: docker/stage.sh writes it for the container, which has
// no Go toolchain.
const ListingFile = ".go-list-deps.txt"

// ListFormat is the -f template of the listing: one package per line.
const ListFormat = `{{.ImportPath}}	{{.Standard}}	{{len .CgoFiles}}	{{join .Imports " "}}	{{join .Deps " "}}`

// pkg is one package of the listing.
type pkg struct {
	path     string
	standard bool
	cgo      bool
	imports  []string
	deps     []string
}

var listing struct {
	once sync.Once
	pkgs map[string]*pkg
	from string
	err  error
}

// Root returns the module root above the working directory (a test's
// package directory), or an error.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module "+Module)) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s above the working directory", Module)
		}
		dir = parent
	}
}

// load lists every package of the module with its dependencies, once per
// test binary: with the go command where there is one, else from
// ListingFile.
func load() (map[string]*pkg, string, error) {
	listing.once.Do(func() {
		root, err := Root()
		if err != nil {
			listing.err = err
			return
		}
		var out []byte
		if _, lerr := exec.LookPath("go"); lerr == nil {
			cmd := exec.Command("go", "list", "-deps", "-f", ListFormat, "./...")
			cmd.Dir = root
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if out, err = cmd.Output(); err != nil {
				listing.err = fmt.Errorf("go list -deps: %v: %s", err, stderr.Bytes())
				return
			}
			listing.from = "go list -deps"
		} else if out, err = os.ReadFile(filepath.Join(root, ListingFile)); err == nil {
			listing.from = ListingFile + " (no go command here)"
		} else {
			listing.err = fmt.Errorf("no go command, and no %s at the module root %s", ListingFile, root)
			return
		}
		listing.pkgs, listing.err = parse(out)
	})
	return listing.pkgs, listing.from, listing.err
}

func parse(out []byte) (map[string]*pkg, error) {
	pkgs := map[string]*pkg{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 5 {
			return nil, fmt.Errorf("listing line %q: want 5 tab-separated fields", sc.Text())
		}
		pkgs[f[0]] = &pkg{path: f[0], standard: f[1] == "true", cgo: f[2] != "0", imports: strings.Fields(f[3]), deps: strings.Fields(f[4])}
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("empty listing")
	}
	return pkgs, sc.Err()
}

// full returns the import path of a rule's entry.
func full(p string) string {
	if strings.Contains(strings.Split(p, "/")[0], ".") {
		return p
	}
	return Module + "/" + p
}

// Check fails t where the package at path rel inside the module breaks
// its rule in Rules: a direct import the rule does not list (the standard
// library and cgo's "C" aside), cgo without Cgo, or a dependency that none
// of the allowed imports brings.
func Check(t testing.TB, rel string) {
	t.Helper()
	for _, err := range Violations(rel) {
		t.Error(err)
	}
}

// Violations returns what Check reports, as errors.
func Violations(rel string) []error {
	pkgs, from, err := load()
	if err != nil {
		return []error{err}
	}
	return violations(pkgs, from, Rules, rel)
}

func violations(pkgs map[string]*pkg, from string, rules map[string]Rule, rel string) []error {
	rule, ok := rules[rel]
	if !ok {
		return []error{fmt.Errorf("%s has no rule in importrules.Rules: add one (STYLE.md's layering)", rel)}
	}
	p := pkgs[full(rel)]
	if p == nil {
		return []error{fmt.Errorf("%s is not in the listing (%s)", full(rel), from)}
	}
	var errs []error
	allowed := map[string]bool{"C": true}
	for _, a := range rule.Imports {
		allowed[full(a)] = true
	}
	for _, imp := range p.imports {
		if pkgs[imp] != nil && pkgs[imp].standard || allowed[imp] {
			continue
		}
		errs = append(errs, fmt.Errorf("%s imports %s, which its rule does not allow (allowed: %s; see vk/vktest/importrules)",
			rel, imp, strings.Join(append([]string{"the standard library"}, rule.Imports...), ", ")))
	}
	if p.cgo && !rule.Cgo {
		errs = append(errs, fmt.Errorf("%s uses cgo: only vk may", rel))
	}
	// Everything it depends on must come through an allowed import.
	reach := map[string]bool{}
	for a := range allowed {
		reach[a] = true
		if q := pkgs[a]; q != nil {
			for _, d := range q.deps {
				reach[d] = true
			}
		}
	}
	direct := map[string]bool{}
	for _, imp := range p.imports {
		direct[imp] = true // reported above when not allowed
	}
	var stray []string
	for _, d := range p.deps {
		if q := pkgs[d]; (q != nil && q.standard) || reach[d] || direct[d] {
			continue
		}
		stray = append(stray, d)
	}
	sort.Strings(stray)
	for _, d := range stray {
		errs = append(errs, fmt.Errorf("%s depends on %s, which none of its allowed imports brings (%s)", rel, d, from))
	}
	return errs
}
