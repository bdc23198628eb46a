package tensorio

import (
	"context"
	"errors"
	"io"
	"os"
	"time"
)

// A Check inspects the shape (N, C, H, W) of a tensor being read, once
// its header says it and before memory the size of its data is allocated
// or its pixels are decoded: a caller's limits (a device's memory, say)
// refuse a huge input at the cost of its header. Its error ends the read,
// named with the file.
type Check func(n, c, h, w int) error

// ReadContext reads the .npy or .png file at path, by extension, as Read
// does, with two additions. ctx interrupts it: opening a FIFO that has no
// writer yet, or reading a pipe or terminal that sends nothing, waits
// until data comes or ctx is done (the error then wraps ctx.Err()); a nil
// ctx never interrupts. check, when not nil, sees the shape before the
// data is read. Pipes, FIFOs and /dev/stdin are read as streams: their
// size is what arrives before the writer closes them.
func ReadContext(ctx context.Context, path string, check Check) (Tensor, error) {
	f, err := FormatOf(path)
	if err != nil {
		return Tensor{}, err
	}
	return readFile(ctx, path, f, check)
}

// readFile reads path in format f.
func readFile(ctx context.Context, path string, f Format, check Check) (Tensor, error) {
	in, err := openInput(ctx, path)
	if err != nil {
		return Tensor{}, err
	}
	defer in.Close()
	var t Tensor
	if f == PNG {
		if in.size > maxPNGFile {
			return Tensor{}, &Error{Path: path, Err: ErrTooLarge, Msg: "PNG file too large"}
		}
		t, err = readPNG(in, check)
	} else {
		t, err = readNPY(in, in.size, check)
	}
	return t, withPath(path, err)
}

// input is an open input file: a regular file of known size, or a stream
// (size -1) whose reads ctx interrupts.
type input struct {
	f    *os.File
	ctx  context.Context
	size int64
	stop func() bool
}

// openInput opens path read-only; a directory is an error. A FIFO is
// opened without blocking the caller beyond ctx.
func openInput(ctx context.Context, path string) (*input, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, withPath(path, err)
	}
	if fi.IsDir() {
		return nil, &Error{Path: path, Err: ErrFormat, Msg: "is a directory, not a file"}
	}
	in := &input{ctx: ctx, size: -1}
	if fi.Mode().IsRegular() {
		if in.f, err = os.Open(path); err != nil {
			return nil, withPath(path, err)
		}
		if st, err := in.f.Stat(); err == nil && st.Mode().IsRegular() {
			in.size = st.Size()
		}
		return in, nil
	}
	// A FIFO's open waits for a writer, in the kernel: wait for it in a
	// goroutine, so that ctx can end the wait. (Should ctx win, the
	// goroutine closes the file once a writer comes, or ends with the
	// process.)
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			return nil, withPath(path, o.err)
		}
		in.f = o.f
	case <-ctx.Done():
		go func() {
			if o := <-done; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, &Error{Path: path, Err: ctx.Err(), Msg: "interrupted while waiting for a writer to open it (" + ctx.Err().Error() + ")"}
	}
	// Pipes and terminals are pollable: a deadline ends a blocked read.
	in.stop = context.AfterFunc(ctx, func() { in.f.SetReadDeadline(time.Now()) })
	return in, nil
}

// Read reads from the file, stopping with an error wrapping ctx.Err()
// once ctx is done.
func (in *input) Read(b []byte) (int, error) {
	if err := in.ctx.Err(); err != nil {
		return 0, interrupted(err)
	}
	n, err := in.f.Read(b)
	if err != nil && in.ctx.Err() != nil && (errors.Is(err, os.ErrDeadlineExceeded) || n == 0) {
		return n, interrupted(in.ctx.Err())
	}
	return n, err
}

func (in *input) Close() error {
	if in.stop != nil {
		in.stop()
	}
	return in.f.Close()
}

var _ io.ReadCloser = (*input)(nil)

func interrupted(err error) error {
	return &Error{Err: err, Msg: "interrupted while waiting for data (" + err.Error() + ")"}
}

// isInterrupt reports whether err ends a read because its context is done.
func isInterrupt(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
