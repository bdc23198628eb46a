package flagx_test

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/flagx"
)

// poolFlags is the flag set of `vkmps pool`, as far as flagx goes.
type poolFlags struct {
	fs                       *flag.FlagSet
	kernel, stride, dilation *flagx.PairHW
	zeroPad                  *flagx.PairXY
	pad                      *flagx.Quad
	op, edge, padding        *flagx.Choice
	ceil                     *bool
}

func newPoolFlags() *poolFlags {
	fs := flag.NewFlagSet("pool", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &poolFlags{
		fs:       fs,
		kernel:   flagx.NewPairHW(fs, "kernel", 0, 0, 1, "window `KH,KW`"),
		stride:   flagx.NewPairHW(fs, "stride", 1, 1, 1, "step `SH,SW`"),
		dilation: flagx.NewPairHW(fs, "dilation", 1, 1, 1, "tap spacing `DH,DW`"),
		zeroPad:  flagx.NewPairXY(fs, "zero-pad", 0, 0, 0, "zero padding `X,Y`"),
		pad:      flagx.NewQuad(fs, "pad", 0, "explicit pads `T,L,B,R`"),
		op:       flagx.NewChoice(fs, "op", "", []string{"max", "avg", "l2", "dilated-max"}, "kernel"),
		edge:     flagx.NewChoice(fs, "edge", "zero", []string{"zero", "clamp"}, "edge mode"),
		padding:  flagx.NewChoice(fs, "padding", "", []string{"valid", "same", "full", "tf-same", "tf-valid", "caffe"}, "policy"),
		ceil:     fs.Bool("ceil-mode", false, "PyTorch ceil_mode"),
	}
}

func (p *poolFlags) parse(args ...string) error {
	return flagx.ParseError(p.fs, p.fs.Parse(args))
}

func TestGoodValues(t *testing.T) {
	p := newPoolFlags()
	require.NoError(t, p.parse("--kernel", "3", "--stride=2,1", "-dilation", " 2 , 3 ",
		"--zero-pad", "4,5", "--pad", "1,2", "--op", "dilated-max", "--edge", "CLAMP"))
	assert.Equal(t, [2]int{3, 3}, [2]int{p.kernel.H, p.kernel.W})
	assert.Equal(t, [2]int{2, 1}, [2]int{p.stride.H, p.stride.W})
	assert.Equal(t, [2]int{2, 3}, p.dilation.Get())
	assert.Equal(t, 4, p.zeroPad.X, "zero-pad is X,Y: x first")
	assert.Equal(t, 5, p.zeroPad.Y)
	assert.Equal(t, [4]int{1, 2, 1, 2}, p.pad.Get(), "PH,PW: top=bottom=PH, left=right=PW")
	assert.Equal(t, "dilated-max", p.op.Value)
	assert.Equal(t, "clamp", p.edge.Value, "case-insensitive, stored as listed")
	assert.Equal(t, "", p.padding.Value)
	assert.Equal(t, "3,3", p.kernel.String())
	assert.Equal(t, "1,2,1,2", p.pad.String())
	assert.Equal(t, "4,5", p.zeroPad.String())

	q := flagx.NewQuad(nil, "pad", 0, "")
	require.NoError(t, q.Set("7"))
	assert.Equal(t, [4]int{7, 7, 7, 7}, q.Get())
	require.NoError(t, q.Set("1,2,3,4"))
	assert.Equal(t, "1,2,3,4", q.String())
	assert.Equal(t, 1, q.Top)
	assert.Equal(t, 2, q.Left)
	assert.Equal(t, 3, q.Bottom)
	assert.Equal(t, 4, q.Right)
}

func TestDefaultsAndIsSet(t *testing.T) {
	p := newPoolFlags()
	require.NoError(t, p.parse("--kernel", "2", "--pad", "0"))
	assert.True(t, p.kernel.IsSet())
	assert.False(t, p.stride.IsSet())
	assert.Equal(t, [2]int{1, 1}, p.stride.Get(), "default kept")
	assert.True(t, p.pad.IsSet(), "set even when equal to the default")
	assert.False(t, p.op.IsSet())
	assert.Equal(t, "zero", p.edge.Value)
	assert.True(t, flagx.WasSet(p.fs, "pad"))
	assert.False(t, flagx.WasSet(p.fs, "padding"))
	assert.False(t, flagx.WasSet(p.fs, "no-such-flag"))

	assert.EqualError(t, flagx.Require(p.fs, "kernel", "op"), "flag --op is required")
	assert.NoError(t, flagx.Require(p.fs, "kernel", "pad"))
	assert.NoError(t, flagx.Conflict(p.fs, "pad", "padding"))

	p = newPoolFlags()
	require.NoError(t, p.parse("--pad", "1", "--padding", "same", "--ceil-mode"))
	assert.EqualError(t, flagx.Conflict(p.fs, "pad", "padding"), "flag --pad conflicts with flag --padding")
	assert.EqualError(t, flagx.Conflict(p.fs, "padding", "ceil-mode"), "flag --padding conflicts with flag --ceil-mode")
}

// TestBadValues is the table of every class of bad flag value (issue 10)
// and the exact message each gives after ParseError.
func TestBadValues(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--kernel", "3,x"}, `--kernel: "3,x" is not a number ("x")`},
		{[]string{"--kernel", "x"}, `--kernel: "x" is not a number ("x")`},
		{[]string{"--kernel", "3.5"}, `--kernel: "3.5" is not a number ("3.5")`},
		{[]string{"--kernel", "3,"}, `--kernel: "3," is not a number ("")`},
		{[]string{"--kernel", ""}, `--kernel: empty value: want KH,KW or one number`},
		{[]string{"--kernel", "1,2,3"}, `--kernel: "1,2,3" has 3 numbers: want KH,KW or one number`},
		{[]string{"--kernel", "0"}, `--kernel: 0 is too small: must be >= 1`},
		{[]string{"--kernel", "3,-1"}, `--kernel: -1 is too small: must be >= 1`},
		{[]string{"--stride", "0,2"}, `--stride: 0 is too small: must be >= 1`},
		{[]string{"--stride", "1;2"}, `--stride: "1;2" is not a number ("1;2")`},
		{[]string{"--dilation", "2147483648"}, `--dilation: 2147483648 is too large: must be <= 2147483647`},
		{[]string{"--dilation", "99999999999999999999999"}, `--dilation: 99999999999999999999999 is too large: must be <= 2147483647`},
		{[]string{"--zero-pad", "-1"}, `--zero-pad: -1 is too small: must be >= 0`},
		{[]string{"--zero-pad", "1,2,3"}, `--zero-pad: "1,2,3" has 3 numbers: want X,Y or one number`},
		{[]string{"--pad", "1,2,3"}, `--pad: "1,2,3" has 3 numbers: want T,L,B,R, PH,PW or one number`},
		{[]string{"--pad", "1,2,3,4,5"}, `--pad: "1,2,3,4,5" has 5 numbers: want T,L,B,R, PH,PW or one number`},
		{[]string{"--pad", "1,2,x,4"}, `--pad: "1,2,x,4" is not a number ("x")`},
		{[]string{"--pad", "0,0,0,-2"}, `--pad: -2 is too small: must be >= 0`},
		{[]string{"--op", "mux"}, `--op: unknown value "mux": want one of max, avg, l2, dilated-max`},
		{[]string{"--op", ""}, `--op: unknown value "": want one of max, avg, l2, dilated-max`},
		{[]string{"--edge", "wrap"}, `--edge: unknown value "wrap": want one of zero, clamp`},
		{[]string{"--padding", "SAME_UPPER"}, `--padding: unknown value "SAME_UPPER": want one of valid, same, full, tf-same, tf-valid, caffe`},
		{[]string{"--bogus", "1"}, `unknown flag --bogus`},
		{[]string{"--kernel"}, `flag --kernel needs a value`},
		{[]string{"--ceil-mode=maybe"}, `invalid boolean value "maybe" for -ceil-mode: parse error`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			p := newPoolFlags()
			err := p.parse(tt.args...)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
			var fe *flagx.Error
			if errors.As(err, &fe) {
				assert.Equal(t, tt.args[0][2:], fe.Flag)
			}
		})
	}
}

func TestFailedSetKeepsValue(t *testing.T) {
	k := flagx.NewPairHW(nil, "kernel", 2, 3, 1, "")
	require.Error(t, k.Set("0,5"))
	assert.Equal(t, [2]int{2, 3}, k.Get())
	assert.False(t, k.IsSet())
	c := flagx.NewChoice(nil, "op", "max", []string{"max", "avg"}, "")
	require.Error(t, c.Set("min"))
	assert.Equal(t, "max", c.Value)
	assert.Equal(t, []string{"max", "avg"}, c.Values())
}

func TestParseErrorPassesOthers(t *testing.T) {
	p := newPoolFlags()
	assert.NoError(t, flagx.ParseError(p.fs, nil))
	assert.ErrorIs(t, p.parse("--help"), flag.ErrHelp)
	other := errors.New("something else")
	assert.Equal(t, other, flagx.ParseError(p.fs, other))
}

func TestHelpShowsPlaceholdersAndChoices(t *testing.T) {
	p := newPoolFlags()
	var out []string
	p.fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		out = append(out, f.Name+" "+name+": "+usage+" ["+f.DefValue+"]")
	})
	assert.Contains(t, out, "kernel KH,KW: window KH,KW [0,0]")
	assert.Contains(t, out, "pad T,L,B,R: explicit pads T,L,B,R [0,0,0,0]")
	assert.Contains(t, out, "op value: kernel (max|avg|l2|dilated-max) []")
	assert.Contains(t, out, "edge value: edge mode (zero|clamp) [zero]")
}

// ExamplePairHW shows the flags of `vkmps pool` and their errors.
func ExamplePairHW() {
	fs := flag.NewFlagSet("pool", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	kernel := flagx.NewPairHW(fs, "kernel", 0, 0, 1, "pooling window `KH,KW`")
	zeroPad := flagx.NewPairXY(fs, "zero-pad", 0, 0, 0, "zero padding `X,Y`")
	pad := flagx.NewQuad(fs, "pad", 0, "explicit pads `T,L,B,R`")

	err := fs.Parse([]string{"--kernel", "3", "--zero-pad", "1,2", "--pad", "1,2"})
	fmt.Println(err, kernel.H, kernel.W, zeroPad.X, zeroPad.Y, pad.Top, pad.Left, pad.Bottom, pad.Right)

	err = fs.Parse([]string{"--kernel", "3,x"})
	fmt.Println(flagx.ParseError(fs, err))
	// Output:
	// <nil> 3 3 1 2 1 2 1 2
	// --kernel: "3,x" is not a number ("x")
}

// TestNoEmpty: a string flag given "" is refused naming it (not later as
// a file without an extension), unless allowed; unset flags, non-string
// flags and non-empty values pass.
func TestNoEmpty(t *testing.T) {
	fs := flag.NewFlagSet("pool", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("out", "", "")
	fs.String("grad", "", "")
	fs.String("device", "", "")
	fs.Int("iters", 0, "")
	flagx.NewChoice(fs, "op", "", []string{"max"}, "")
	require.NoError(t, fs.Parse([]string{"--device", "", "--iters", "0", "--grad", "dy.npy"}))
	assert.NoError(t, flagx.NoEmpty(fs, "device"))
	assert.EqualError(t, flagx.NoEmpty(fs), "flag --device needs a value (got an empty string)")
	require.NoError(t, fs.Parse([]string{"--out", "", "--grad", ""}))
	assert.EqualError(t, flagx.NoEmpty(fs, "device"), "flag --grad needs a value (got an empty string)", "the first in name order")
}
