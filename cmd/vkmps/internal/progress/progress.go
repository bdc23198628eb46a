// Package progress draws the progress bars of vkmps selfcheck and bench
// on stderr, with github.com/schollz/progressbar/v3, and stays silent
// where a bar would only be noise: when the writer is not a terminal
// (a pipe, a file, a CI log), unless forced, and always when disabled.
//
// A nil *Bar is a valid silent bar, so callers never test for one.
// Progress is best-effort: drawing errors are ignored.
package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Options says when a bar is drawn.
type Options struct {
	// Force draws the bar even when the writer is not a terminal (tests,
	// or a user who wants it in a log).
	Force bool
	// Disable never draws the bar, overriding Force (for --quiet or
	// --json output).
	Disable bool
}

// Bar is a progress bar, or nothing when silent; a nil *Bar is silent.
type Bar struct {
	pb *progressbar.ProgressBar
}

// New returns a bar counting to total (total <= 0: unknown, drawn as a
// spinner with a count) labelled description, drawn on w: when
// opts.Disable is false and either opts.Force is set or w is a terminal.
// Otherwise it returns nil, a silent bar. Call Finish when done.
func New(w io.Writer, total int, description string, opts Options) *Bar {
	if w == nil || opts.Disable || !opts.Force && !IsTerminal(w) {
		return nil
	}
	if total <= 0 {
		total = -1
	}
	pb := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(description),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		// No ticker goroutine for spinners: it would outlive a bar that
		// is never finished.
		progressbar.OptionSetSpinnerChangeInterval(0),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
	return &Bar{pb: pb}
}

// IsTerminal reports whether w is an *os.File open on a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Add advances the bar by n steps.
func (b *Bar) Add(n int) {
	if b != nil {
		b.pb.Add(n)
	}
}

// Describe changes the bar's label, e.g. to the kernel being checked.
func (b *Bar) Describe(description string) {
	if b != nil {
		b.pb.Describe(description)
	}
}

// Finish fills the bar, draws it a last time and ends its line. Calling
// it again does nothing.
func (b *Bar) Finish() {
	if b != nil && !b.pb.IsFinished() {
		b.pb.Finish()
	}
}
