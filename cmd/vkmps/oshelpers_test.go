package main

import (
	"io/fs"
	"os"
	"testing"
)

// symlinked makes a symbolic link at link to target and reports whether
// there is one now: Windows refuses them without a privilege, and Wine's
// CreateSymbolicLink reports success but makes nothing (make windows-test).
func symlinked(t *testing.T, target, link string) bool {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Logf("no symbolic links here: %v", err)
		return false
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Logf("no symbolic links here: os.Symlink(%s, %s) made none (Lstat: %v)", target, link, err)
		return false
	}
	return true
}
