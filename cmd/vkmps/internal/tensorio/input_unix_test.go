//go:build unix

package tensorio_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
)

// fifo makes a named pipe in a temporary directory.
func fifo(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	return p
}

// TestReadFromPipe reads a .npy and a PNG through FIFOs, as
// `--in /dev/stdin` or `--in <(...)` give them: a stream of unknown size,
// not a truncated file.
func TestReadFromPipe(t *testing.T) {
	want := ramp(2 * 3 * 4)
	npyFile := npyBytes("<f4", false, []int{2, 3, 4}, f32Bytes(binary.LittleEndian, want...))
	pngFile := rawPNG(2, 1, 8, 0, [][]byte{{0, 255}})
	for _, tc := range []struct {
		name string
		file []byte
	}{{"x.npy", npyFile}, {"x.png", pngFile}} {
		t.Run(tc.name, func(t *testing.T) {
			p := fifo(t, tc.name)
			go func() {
				f, err := os.OpenFile(p, os.O_WRONLY, 0)
				if err == nil {
					// In two writes, so the reader sees a partial stream first.
					f.Write(tc.file[:len(tc.file)/2])
					time.Sleep(10 * time.Millisecond)
					f.Write(tc.file[len(tc.file)/2:])
					f.Close()
				}
			}()
			x, err := tensorio.ReadContext(context.Background(), p, nil)
			require.NoError(t, err)
			if tc.name == "x.npy" {
				assert.Equal(t, []int{2, 3, 4}, x.Shape())
				sameBits(t, want, x.Data)
			} else {
				assert.Equal(t, []float32{0, 1}, x.Data)
			}
		})
	}

	// Trailing bytes and short data of a stream are still errors.
	p := fifo(t, "long.npy")
	go func() {
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Write(append(npyFile, 0))
			f.Close()
		}
	}()
	_, err := tensorio.ReadContext(context.Background(), p, nil)
	assert.ErrorIs(t, err, tensorio.ErrTrailing)
	p = fifo(t, "short.npy")
	go func() {
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Write(npyFile[:len(npyFile)-3])
			f.Close()
		}
	}()
	_, err = tensorio.ReadContext(context.Background(), p, nil)
	assert.ErrorIs(t, err, tensorio.ErrTruncated)
	assert.Contains(t, err.Error(), "needs 96 bytes, file has 93")
}

// TestReadInterrupted: a FIFO nobody opens for writing, and a pipe whose
// writer sends half a file and then nothing, block a read only until its
// context is done (Ctrl-C in the command line); the error names the file
// and wraps the context's.
func TestReadInterrupted(t *testing.T) {
	npyFile := npyBytes("<f4", false, []int{2, 3}, make([]byte, 24))
	for _, tc := range []struct {
		name  string
		write []byte // nil: no writer at all
	}{
		{"no writer", nil},
		{"a writer that sends nothing", []byte{}},
		{"a writer that stops in the header", npyFile[:20]},
		{"a writer that stops in the data", npyFile[:len(npyFile)-4]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fifo(t, "x.npy")
			release := make(chan struct{})
			defer close(release)
			if tc.write != nil {
				go func() {
					f, err := os.OpenFile(p, os.O_WRONLY, 0)
					if err != nil {
						return
					}
					f.Write(tc.write)
					<-release // keeps the pipe open: the reader sees no EOF
					f.Close()
				}()
			}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			_, err := tensorio.ReadContext(ctx, p, nil)
			assert.Less(t, time.Since(start), 5*time.Second)
			require.Error(t, err)
			assert.True(t, errors.Is(err, context.Canceled), "%v", err)
			assert.Contains(t, err.Error(), p+": interrupted while waiting for ")
		})
	}
	if tc := "no writer, no context"; true {
		// A nil context never interrupts; a writer that comes later is read.
		p := fifo(t, "late.npy")
		go func() {
			time.Sleep(50 * time.Millisecond)
			if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
				f.Write(npyFile)
				f.Close()
			}
		}()
		_, err := tensorio.ReadContext(nil, p, nil)
		assert.NoError(t, err, tc)
	}
}

// TestCheckBeforeData: the check sees the shape before the data of a
// stream is read, so that a header claiming a huge tensor is refused at
// the cost of its header, and its error names the file.
func TestCheckBeforeData(t *testing.T) {
	limit := errors.New("over the limit")
	p := fifo(t, "huge.npy")
	release := make(chan struct{})
	defer close(release)
	go func() {
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Write(npyBytes("<f4", false, []int{1, 3, 32768, 32768}, make([]byte, 1<<16)))
			<-release
			f.Close()
		}
	}()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var seen [4]int
	_, err := tensorio.ReadContext(context.Background(), p, func(n, c, h, w int) error {
		seen = [4]int{n, c, h, w}
		return limit
	})
	runtime.ReadMemStats(&after)
	assert.ErrorIs(t, err, limit)
	assert.Equal(t, p+": over the limit", err.Error())
	assert.Equal(t, [4]int{1, 3, 32768, 32768}, seen)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20))
}
