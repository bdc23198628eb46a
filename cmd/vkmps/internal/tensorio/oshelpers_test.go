package tensorio_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The operating system's share of what the tests expect, so that they
// hold on Windows (make windows-test) as on Unix.

// openErrText is the system's own text for the error of opening path
// ("no such file or directory" on Unix; "The system cannot find the file
// specified." on Windows), which the errors name after the path.
func openErrText(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err == nil {
		f.Close()
		t.Fatalf("%s exists", path)
	}
	var pe *fs.PathError
	require.True(t, errors.As(err, &pe), "%v", err)
	return pe.Err.Error()
}

// permAsKept is the permission a file chmod-ed to perm shows here: perm
// on Unix; on Windows, which keeps only a read-only attribute, 0o666 or
// 0o444.
func permAsKept(t *testing.T, perm fs.FileMode) fs.FileMode {
	t.Helper()
	p := filepath.Join(t.TempDir(), "perm")
	require.NoError(t, os.WriteFile(p, nil, 0o600))
	require.NoError(t, os.Chmod(p, perm))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	return fi.Mode().Perm()
}

// symlinked makes a symbolic link at link to target and reports whether
// there is one now: Windows refuses them without a privilege, and Wine's
// CreateSymbolicLink reports success but makes nothing.
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
