//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mkfifo makes a named pipe in dir.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	return p
}

// feed writes data into the FIFO p once a reader opens it, then, unless
// hold is set, closes it; with hold it keeps the pipe open until the test
// ends (a writer that stalls).
func feed(t *testing.T, p string, data []byte, hold bool) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(data)
		if hold {
			<-release
		}
		f.Close()
	}()
}

// TestInputFromPipes: a .npy or PNG input through a FIFO (as --in
// /dev/stdin or <(...) give it) is read as a stream (it was refused as
// truncated); a FIFO nobody writes, or a writer that stalls, no longer
// blocks for ever: Ctrl-C (the context) ends the command with one line,
// exit 2, in pool, graph run and graph train --optimizer; and a data set
// (--batch) must be a regular file.
func TestInputFromPipes(t *testing.T) {
	requireVulkan(t)
	dir := t.TempDir()
	x := writeTensor(t, dir, "x.npy", ramp(1, 2, 6, 6, 4))
	mustSucceed(t, "pool", "--op", "avg", "--kernel", "2", "--in", x, "--out", filepath.Join(dir, "want.npy"), "--quiet")
	for _, name := range []string{"in.npy", "in.png"} {
		src := x
		if name == "in.png" {
			src = writeTensor(t, dir, "x.png", ramp(1, 3, 6, 6, 3))
		}
		p := mkfifo(t, dir, name)
		feed(t, p, mustRead(t, src), false)
		out := filepath.Join(dir, "from-"+name+".npy")
		mustSucceed(t, "pool", "--op", "avg", "--kernel", "2", "--in", p, "--out", out, "--quiet")
		if name == "in.npy" {
			assert.Equal(t, readTensor(t, filepath.Join(dir, "want.npy")).Data, readTensor(t, out).Data)
		}
	}

	f := newTrainFixture(t)
	interrupted := func(t *testing.T, args []string, want string) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		r := runVkmpsContext(t, ctx, args...)
		assertOneLineError(t, r, 2, want)
		assert.Less(t, time.Since(start), 10*time.Second)
	}
	for _, tc := range []struct {
		name   string
		writer []byte // nil: none
		args   func(p string) []string
	}{
		{"pool, no writer", nil, func(p string) []string {
			return []string{"pool", "--op", "max", "--kernel", "2", "--in", p, "--out", filepath.Join(dir, "y.npy")}
		}},
		{"pool-grad, a writer that stalls", mustRead(t, x)[:100], func(p string) []string {
			return []string{"pool-grad", "--op", "max", "--kernel", "2", "--in", x, "--grad", p, "--out", filepath.Join(dir, "dx.npy")}
		}},
		{"graph run, no writer", nil, func(p string) []string {
			return []string{"graph", "run", f.json, "--in", "x=" + p, "--in", "labels=" + f.labels}
		}},
		{"graph train, a writer that stalls", mustRead(t, f.x)[:200], func(p string) []string {
			return []string{"graph", "train", f.json, "--in", "x=" + p, "--in", "labels=" + f.labels, "--optimizer", "sgd"}
		}},
		{"graph train, no writer", nil, func(p string) []string {
			return []string{"graph", "train", f.json, "--in", "x=" + p, "--in", "labels=" + f.labels, "--optimizer", "adam", "--steps", "2"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mkfifo(t, t.TempDir(), "x.npy")
			want := p + ": interrupted while waiting for a writer"
			if tc.writer != nil {
				feed(t, p, tc.writer, true)
				want = p + ": interrupted while waiting for data"
			}
			interrupted(t, tc.args(p), want)
		})
	}
	p := mkfifo(t, dir, "set.npy")
	r := runVkmps(t, "graph", "train", f.json, "--in", "x="+p, "--in", "labels="+f.labels, "--optimizer", "sgd", "--batch", "2")
	assertOneLineError(t, r, 2, "--in x="+p+": a data set (--batch) is read from a regular .npy file, not a pipe")
}
