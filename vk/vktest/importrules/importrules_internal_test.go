package importrules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The checker itself, on a made-up listing: each kind of breach is found
// and named.
func TestViolationsFound(t *testing.T) {
	m := func(p string) string { return Module + "/" + p }
	listing := strings.Join([]string{
		m("padding") + "\tfalse\t0\tfmt\tfmt",
		m("ops/ref") + "\tfalse\t0\t" + m("padding") + "\tfmt " + m("padding"),
		m("ops") + "\tfalse\t0\t" + m("padding") + " " + m("ops/ref") + "\tfmt " + m("padding") + " " + m("ops/ref"),
		m("graph") + "\tfalse\t1\t" + m("ops") + " C\tfmt " + m("ops") + " " + m("ops/ref") + " " + m("padding"),
		"fmt\ttrue\t0\t\t",
	}, "\n")
	pkgs, err := parse([]byte(listing))
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]Rule{"padding": {}, "ops/ref": {Imports: []string{"padding"}}, "ops": {Imports: []string{"padding"}}, "graph": {Imports: []string{"ops"}}}
	for rel, want := range map[string][]string{
		"padding": nil,
		"ops/ref": nil,
		"ops":     {"ops imports " + m("ops/ref") + ", which its rule does not allow"},
		// graph's own imports are fine; what it reaches through ops is
		// ops's breach, reported there. Cgo is graph's own.
		"graph": {"graph uses cgo"},
		"nope":  {"nope has no rule"},
	} {
		errs := violations(pkgs, "test", rules, rel)
		if len(errs) != len(want) {
			t.Errorf("%s: %d violations %v, want %d", rel, len(errs), errs, len(want))
			continue
		}
		for i, w := range want {
			if !strings.Contains(errs[i].Error(), w) {
				t.Errorf("%s: %q does not say %q", rel, errs[i], w)
			}
		}
	}
	// A dependency that no allowed import brings, e.g. through a package
	// without a rule of its own.
	rules["graph"] = Rule{Imports: []string{"ops"}, Cgo: true}
	pkgs[m("ops")].deps = []string{"fmt", m("padding")}
	errs := violations(pkgs, "test", rules, "graph")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "graph depends on "+m("ops/ref")+", which none of its allowed imports brings") {
		t.Errorf("graph: %v", errs)
	}
}

// Every library package (all but cmd/...) has a rule and a test that
// checks it; every rule names a package that exists.
func TestEveryPackageHasARule(t *testing.T) {
	pkgs, from, err := load()
	if err != nil {
		t.Fatal(err)
	}
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for path := range pkgs {
		rel, ok := strings.CutPrefix(path, Module+"/")
		if !ok || strings.HasPrefix(rel, "cmd/") {
			continue
		}
		seen[rel] = true
		if _, ok := Rules[rel]; !ok {
			t.Errorf("%s has no rule in Rules (%s)", rel, from)
		}
		b, err := os.ReadFile(filepath.Join(root, rel, "layering_test.go"))
		if err != nil || !strings.Contains(string(b), `importrules.Check(t, "`+rel+`")`) {
			t.Errorf("%s: no layering_test.go calling importrules.Check(t, %q)", rel, rel)
		}
	}
	for rel := range Rules {
		if !seen[rel] {
			t.Errorf("Rules has %s, which is not a package of the module", rel)
		}
	}
}

// envReaders are the library files allowed to read the environment, and
// why. The rest of the library takes its behaviour from Options and
// constructor arguments only (issue 20); commands and tests read the
// variables and pass them on (vk/vkenv, cmd/vkmps).
var envReaders = map[string]string{
	"vk/vkenv/vkenv.go": "the one documented mapping of VKMPS_DEVICE, VKMPS_VALIDATION and VKMPS_REQUIRE_DEVICE to vk.Options",
	"vk/loader.go":      "VKMPS_VULKAN_LIBRARY: the loader is opened once per process, before any Options",
}

// TestLibraryReadsNoEnvironment: no library source (all but cmd/... and
// tests) calls os.Getenv, os.LookupEnv, os.Environ or syscall.Getenv,
// except the files of envReaders.
func TestLibraryReadsNoEnvironment(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "cmd" || rel == "docker" || rel == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || rel == "vk/vktest/importrules/importrules.go" {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			call := x.Name + "." + sel.Sel.Name
			switch call {
			case "os.Getenv", "os.LookupEnv", "os.Environ", "syscall.Getenv":
				found[rel] = true
				if _, ok := envReaders[rel]; !ok {
					t.Errorf("%s calls %s: library code takes its settings from Options and constructor arguments; read the environment in cmd/ or the tests (vk/vkenv), or list the file in envReaders with the reason", rel, call)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for rel := range envReaders {
		if !found[rel] {
			stale = append(stale, rel)
		}
	}
	sort.Strings(stale)
	for _, rel := range stale {
		t.Errorf("%s is listed in envReaders but reads no environment now: remove it from the list", rel)
	}
}

// docker/stage.sh writes the listing the container's tests read with the
// same template as load's go list (where the sources have the script).
func TestListingFormatMatchesStage(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "docker", "stage.sh"))
	if os.IsNotExist(err) {
		return // the container: staged sources hold no docker/
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "list_format='"+ListFormat+"'") {
		t.Errorf("docker/stage.sh's list_format is not ListFormat %q", ListFormat)
	}
}
