package flagx

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// register adds v to fs as name, unless fs is nil.
func register(fs *flag.FlagSet, v flag.Value, name, usage string) {
	if fs != nil {
		fs.Var(v, name, usage)
	}
}

// erring is a flagx value that remembers its last Set error.
type erring interface{ lastErr() error }

// ParseError turns an error from fs.Parse into vkmps's one-line form:
// a flagx value's own error (`--kernel: "3,x" is not a number ("x")`)
// instead of the flag package's "invalid value ... for flag -kernel: ...",
// "unknown flag --x" for "flag provided but not defined: -x", and
// "flag --x needs a value" for "flag needs an argument: -x". Other errors,
// flag.ErrHelp and nil are returned unchanged.
func ParseError(fs *flag.FlagSet, err error) error {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	var own error
	fs.VisitAll(func(f *flag.Flag) {
		if e, ok := f.Value.(erring); ok && own == nil && e.lastErr() != nil {
			own = e.lastErr()
		}
	})
	if own != nil {
		return own
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return fmt.Errorf("unknown flag -%s", name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return fmt.Errorf("flag -%s needs a value", name)
	}
	return err
}

// WasSet reports whether the flag called name was given on the command
// line of fs (after fs.Parse), whatever its type.
func WasSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// Require returns "flag --NAME is required" for the first of names that
// was not given on the command line, or nil.
func Require(fs *flag.FlagSet, names ...string) error {
	for _, n := range names {
		if !WasSet(fs, n) {
			return fmt.Errorf("flag --%s is required", n)
		}
	}
	return nil
}

// Conflict returns "flag --A conflicts with flag --B" when both a and b
// were given on the command line, or nil.
func Conflict(fs *flag.FlagSet, a, b string) error {
	if WasSet(fs, a) && WasSet(fs, b) {
		return fmt.Errorf("flag --%s conflicts with flag --%s", a, b)
	}
	return nil
}

// NoEmpty returns "flag --NAME needs a value (got an empty string)" for
// the first flag (in name order) that was given on the command line with
// an empty value and holds a string (a plain string flag, or any value
// whose Get returns a string), or nil. A file flag given "" (--out "",
// a shell variable that is unset) is refused naming the flag, not later
// as a file without an extension. allow names flags for which an empty
// value means their default (--device "").
func NoEmpty(fs *flag.FlagSet, allow ...string) error {
	var bad string
	fs.Visit(func(f *flag.Flag) {
		if bad != "" {
			return
		}
		for _, a := range allow {
			if a == f.Name {
				return
			}
		}
		if g, ok := f.Value.(flag.Getter); ok {
			if s, ok := g.Get().(string); ok && s == "" {
				bad = f.Name
			}
		}
	})
	if bad != "" {
		return fmt.Errorf("flag --%s needs a value (got an empty string)", bad)
	}
	return nil
}
