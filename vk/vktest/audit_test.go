package vktest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// openedThemselves are the test files that open a Vulkan device without
// vktest.Open, and why their devices are still checked (or need not be).
var openedThemselves = map[string]string{
	"vk/loader_test.go":           "child processes that expect vk.Open to fail (no loader, no driver)",
	"vk/vk_test.go":               "TestOpenIgnoresTheEnvironment opens devices that vktest.Open's environment would change, and closes them",
	"vk/lost_internal_test.go":    "an internal test (cannot import vktest); it asserts no validation message at the end",
	"vk/present_test.go":          "TestMissingInstanceExtension expects vk.Open to fail (no such extension)",
	"vk/vkenv/vkenv_test.go":      "expects vkenv.Open to fail (bad variables, no such device)",
	"graph/example_train_test.go": "a compiled-only example (no Output comment, never run) showing vk.Open as a user writes it",
}

var openCall = regexp.MustCompile(`\bvk\.Open\(|\bvkenv\.Open\(|(^|[^.\w])Open\(Options\{|(^|[^.\w])Open\(opts\)`)

// TestEveryTestDeviceIsChecked is the validation audit of issue 10: every
// test that opens a device does so with vktest.Open, whose cleanup fails
// the test on any validation message (error or warning) and any object
// left open, except the files listed above with their reasons. Commands
// run by the CLI tests close their devices with closeCmdDevice, which
// does the same (cmd/vkmps TestDeviceProblemsFailCommands).
func TestEveryTestDeviceIsChecked(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skipf("module root not found from %s", root)
	}
	var found []string
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "vk/vktest/audit_test.go" {
			return nil
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") || !openCall.MatchString(line) {
				continue
			}
			found = append(found, rel)
			if _, ok := openedThemselves[rel]; !ok {
				t.Errorf("%s:%d opens a device without vktest.Open: use vktest.Open (its cleanup checks validation messages and leaks), or list the file in openedThemselves with the reason", rel, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(found)
	for rel := range openedThemselves {
		if !contains(found, rel) {
			t.Logf("%s is listed in openedThemselves but opens no device now", rel)
		}
	}
}

func contains(list []string, s string) bool {
	i := sort.SearchStrings(list, s)
	return i < len(list) && list[i] == s
}
