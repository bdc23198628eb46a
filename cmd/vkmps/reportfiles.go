package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
)

// Report files (bench --json and --plot) replace a file only when it is
// one vkmps wrote before (a bench JSON file, a PNG picture): a name that
// holds anything else, such as a .npy data set given by mistake, is
// refused before any work, and so is one path for two reports.

// checkReportOutput refuses path as the output of --flag: CheckOutput's
// refusals (a directory, a missing directory), or an existing non-empty
// file that ours does not recognise.
func checkReportOutput(flag, path string, ours func(head []byte) bool) error {
	if err := tensorio.CheckOutput(path); err != nil {
		return err
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--%s %s: %w", flag, path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: --%s %s: not a regular file", tensorio.ErrOutput, flag, path)
	}
	head := make([]byte, 64)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return fmt.Errorf("--%s %s: %w", flag, path, err)
	}
	if n > 0 && !ours(head[:n]) {
		return fmt.Errorf("%w: --%s %s: the file exists and is not one vkmps bench writes: refusing to overwrite it (remove it, or give another name)",
			tensorio.ErrOutput, flag, path)
	}
	return nil
}

// isBenchJSON recognises bench's JSON lines: their header comes first.
func isBenchJSON(head []byte) bool { return bytes.HasPrefix(head, []byte(`{"vkmps":"bench"`)) }

// isPNG recognises a PNG file.
func isPNG(head []byte) bool { return bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")) }

// sameFile reports whether a and b (both non-empty) name one file: the
// same cleaned absolute path, or links to one file.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == bb {
		return true
	}
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

// allSkipped returns an error when no bench row ran: every case was
// refused (a geometry the device cannot do, an empty output).
func allSkipped(rows []benchRow) error {
	for _, r := range rows {
		if r.Skipped == "" {
			return nil
		}
	}
	if len(rows) == 0 {
		return errors.New("no case to run")
	}
	return fmt.Errorf("no case ran: all %d were skipped (%s %s: %s)", len(rows), rows[0].shape, rows[0].op, rows[0].Skipped)
}
