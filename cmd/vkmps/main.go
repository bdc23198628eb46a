// Command vkmps runs vkmps's pooling kernels from the shell: list devices,
// run a kernel or its gradient on .npy/.png files, run graphs, check a
// driver against the CPU reference, benchmark, and a demo.
//
//	vkmps devices              list Vulkan devices, the chosen one marked
//	vkmps pool                 run a pooling kernel on a .npy or PNG file
//	vkmps pool-grad            its gradient, given the output's gradient
//	vkmps graph run|train      run a JSON graph, or derive and run its training graph
//	vkmps selfcheck            GPU against the CPU reference: is my driver right?
//	vkmps bench                GPU timings of every kernel, forward and backward
//	vkmps demo                 the pooling family on a built-in picture, with PNGs
//	vkmps help COMMAND         a command's flags and examples
//
// Every error prints one line to stderr and exits with status 2.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/flagx"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	// usage is the text after "usage: vkmps NAME", including examples.
	usage string
	// run executes the command; fs is a fresh flag set named for it whose
	// output goes to stderr.
	run func(ctx context.Context, env *env, args []string) error
}

// env is what a command may use: its output streams.
type env struct {
	stdout, stderr io.Writer
}

// commands registers every subcommand; files add theirs in init.
var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// errUsage marks errors in how the command was called.
var errUsage = errors.New("usage")

// errCheckFailed marks a check that ran and found problems (exit 1).
var errCheckFailed = errors.New("check failed")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	// The first Ctrl-C cancels ctx, which every wait honours (the GPU, a
	// pipe, a FIFO without a writer); a second one kills the process.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit status: 0 on
// success, 1 when a check found problems, 2 on any error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "vkmps: internal error: %v (please report it)\n", r)
			code = 2
		}
	}()
	e := &env{stdout: stdout, stderr: stderr}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1 {
		topUsage(stdout)
		return 0
	}
	name, rest := args[0], args[1:]
	if name == "help" {
		name, rest = rest[0], []string{"--help"}
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "vkmps: unknown command %q (run `vkmps help` for the list)\n", name)
		return 2
	}
	err := c.run(ctx, e, rest)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errCheckFailed):
		fmt.Fprintf(stderr, "vkmps %s: %v\n", name, oneLine(err))
		return 1
	}
	fmt.Fprintf(stderr, "vkmps %s: %v\n", name, oneLine(err))
	return 2
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

func topUsage(w io.Writer) {
	fmt.Fprintln(w, "vkmps: Metal Performance Shaders' CNN kernels, their gradients and training, on any Vulkan device.")
	fmt.Fprintln(w, "\nusage: vkmps COMMAND [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun `vkmps COMMAND --help` for a command's flags and examples.")
	fmt.Fprintln(w, "Environment: VKMPS_DEVICE picks the device (index or part of its name);")
	fmt.Fprintln(w, "VKMPS_VALIDATION=1 turns on the Vulkan validation layer.")
}

// newFlags returns a flag set for c whose -h prints c's usage.
func newFlags(c *command, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args into fs; -h prints the usage to stdout.
func parse(c *command, e *env, fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(e.stdout, "usage: vkmps %s %s\n\nflags:\n", c.name, c.usage)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		return flag.ErrHelp
	}
	if err != nil {
		return usageError(c, flagx.ParseError(fs, err))
	}
	if err := flagx.NoEmpty(fs, "device"); err != nil {
		return usageError(c, err)
	}
	if fs.NArg() > 0 {
		return usageError(c, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	return nil
}

// usageError marks err as an error in how command c was called: it wraps
// err and errUsage, and its message is err's followed by where the flags
// are explained, e.g. "unknown flag --x (see `vkmps pool --help`)".
func usageError(c *command, err error) error {
	// %.0w wraps errUsage without printing it.
	return fmt.Errorf("%w (see `vkmps %s --help`)%.0w", err, c.name, errUsage)
}
