package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// Reading a command's inputs (issue 22). Every tensor file is read with
// the command's context, so that Ctrl-C ends a wait on a FIFO without a
// writer or a pipe that sends nothing, and pipes are read as streams
// (tensorio.ReadContext). Before an input's data is read, or its pixels
// decoded, its shape is checked against the device that will hold it:
// an image larger than one allocation of the device, or inputs and
// results that together exceed its memory, are refused at the cost of the
// file's header, whatever its size once decoded (a small PNG can decode
// to gigabytes).

// lazyDevice opens the command's device when an input's check first
// needs its limits (or when the command asks for it), so that errors in
// the files themselves come without opening a device.
type lazyDevice struct {
	sel string
	dev *vk.Device
	err error
	// used is the device memory the inputs accepted so far need, with
	// their results.
	used uint64
}

// get opens the device, once.
func (d *lazyDevice) get() (*vk.Device, error) {
	if d.dev == nil && d.err == nil {
		d.dev, d.err = openCmdDevice(d.sel)
		if d.err != nil {
			d.err = deviceOpenError{d.err}
		}
	}
	return d.dev, d.err
}

// close closes the device when it was opened.
func (d *lazyDevice) close() error {
	if d.dev == nil {
		return nil
	}
	return closeCmdDevice(d.dev)
}

// limitsHook, when set (by tests), changes the device limits the input
// checks use: a small memory makes small files exercise them.
var limitsHook func(*vk.Limits)

// deviceOpenError is a failure to open the device inside an input's
// check: reported as it is, not as a problem of the file.
type deviceOpenError struct{ err error }

func (e deviceOpenError) Error() string { return e.err.Error() }
func (e deviceOpenError) Unwrap() error { return e.err }

// mib formats a byte count.
func mib(b uint64) string {
	if b < 10<<20 {
		return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d MiB", (b+(1<<20)-1)>>20)
}

// check returns the tensorio.Check of an input: its float32 image must
// fit one allocation of the device, and with results (the bytes the
// command allocates because of it, from its shape) and the inputs checked
// before it, the device's memory. With results nil only the allocation is
// checked (an input another's results already count).
func (d *lazyDevice) check(results func(n, c, h, w int) uint64) tensorio.Check {
	return func(n, c, h, w int) error {
		dev, err := d.get()
		if err != nil {
			return err
		}
		lim := dev.Limits()
		if limitsHook != nil {
			limitsHook(&lim)
		}
		size := uint64(n) * uint64(c) * uint64(h) * uint64(w) * 4
		if m := lim.MaxMemoryAllocationSize; m > 0 && size > m {
			return fmt.Errorf("%w: a (%d, %d, %d, %d) float32 image is %s, more than the %s %s can allocate at once",
				ops.ErrDeviceLimit, n, c, h, w, mib(size), mib(m), dev.Info().Name)
		}
		if results == nil {
			return nil
		}
		need := size + results(n, c, h, w)
		if m := lim.DeviceLocalBytes; m > 0 && d.used+need > m {
			others := ""
			if d.used > 0 {
				others = fmt.Sprintf(" (%s with the other inputs)", mib(d.used+need))
			}
			return fmt.Errorf("%w: a (%d, %d, %d, %d) image needs %s of device memory with its results%s; %s has %s",
				ops.ErrDeviceLimit, n, c, h, w, mib(need), others, dev.Info().Name, mib(m))
		}
		d.used += need
		return nil
	}
}

// readInput reads the tensor file at path with ctx and check (nil for
// none); a failure to open the device in the check is returned as it is.
func readInput(ctx context.Context, path string, check tensorio.Check) (tensorio.Tensor, error) {
	t, err := tensorio.ReadContext(ctx, path, check)
	var de deviceOpenError
	if errors.As(err, &de) {
		return t, de.err
	}
	return t, err
}

// checkDataSetFiles refuses data-set files (graph train --batch) that are
// not regular files: the data set is read whole from files, not from
// pipes or devices. paths maps input names to files.
func checkDataSetFiles(paths map[string]string) error {
	names := make([]string, 0, len(paths))
	for n := range paths {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := paths[n]
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("--in %s=%s: %w", n, p, err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%w: --in %s=%s: a data set (--batch) is read from a regular .npy file, not a pipe, device or directory",
				tensorio.ErrFormat, n, p)
		}
	}
	return nil
}
