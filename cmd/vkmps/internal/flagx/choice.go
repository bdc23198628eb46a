package flagx

import (
	"flag"
	"fmt"
	"strings"
)

// Choice is one word from a fixed list: --op max|avg|l2|dilated-max,
// --edge zero|clamp, --padding valid|same|full|tf-same|tf-valid|caffe.
// Set matches case-insensitively and stores the listed spelling. Make one
// with NewChoice.
type Choice struct {
	Value string // the chosen word, or the default

	name   string
	values []string
	set    bool
	err    error
}

// NewChoice returns a Choice for flag name among values with default def
// ("" for none, so that the command can require it), registered on fs
// when fs is not nil with usage followed by " (a|b|c)".
func NewChoice(fs *flag.FlagSet, name, def string, values []string, usage string) *Choice {
	c := &Choice{Value: def, name: name, values: append([]string(nil), values...)}
	list := strings.Join(values, "|")
	if usage == "" {
		usage = "one of"
	}
	register(fs, c, name, fmt.Sprintf("%s (%s)", usage, list))
	return c
}

// Set accepts one of the listed values; anything else is an error that
// lists them, and leaves Value unchanged.
func (c *Choice) Set(s string) error {
	for _, v := range c.values {
		if strings.EqualFold(strings.TrimSpace(s), v) {
			c.Value, c.set, c.err = v, true, nil
			return nil
		}
	}
	c.err = &Error{c.name, fmt.Sprintf("unknown value %q: want one of %s", s, strings.Join(c.values, ", "))}
	return c.err
}

// String returns Value.
func (c *Choice) String() string {
	if c == nil {
		return ""
	}
	return c.Value
}

// Get returns Value, for flag.Getter.
func (c *Choice) Get() any { return c.Value }

// Values returns the accepted words in order.
func (c *Choice) Values() []string { return append([]string(nil), c.values...) }

// IsSet reports whether Set succeeded at least once (the flag was given).
func (c *Choice) IsSet() bool { return c.set }

func (c *Choice) lastErr() error { return c.err }
