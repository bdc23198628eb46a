package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/flagx"
	"github.com/vkmps/vkmps/ops"
)

// convTuningFlag defines --conv-tuning on fs: the convolution family's
// work shapes for every convolution, transpose convolution and fully
// connected node (graph.CompileOptions.ConvolutionTuning), parsed into t
// by ops.ParseConvolutionTuning (the keys of $VKMPS_GEMM in the
// benchmarks).
func convTuningFlag(fs *flag.FlagSet, t *ops.ConvolutionTuning) {
	fs.Func("conv-tuning", "the convolution nodes' work shapes, `KEY=N,...`: tile, direct, coopmat, cooptile, splits, units, small, winograd (default: the kernels choose)", func(s string) error {
		v, err := ops.ParseConvolutionTuning(s)
		if err != nil {
			return err
		}
		*t = v
		return nil
	})
}

// argmaxFlag registers --argmax of the training commands: max pooling
// nodes record each window's argmax in the forward (a byte or two per
// output) for their gradient, which then reads it instead of the source
// (graph.CompileOptions.RecordArgmax; the same gradient). On by default:
// PyTorch records indices too, and recording was the cheaper of the two
// for every max pooling shape measured (README's training pairs).
func argmaxFlag(fs *flag.FlagSet, on *bool) {
	fs.BoolVar(on, "argmax", true, "max pooling nodes record their argmax for the gradient (false: the gradient recomputes it from the source, as MPSCNNPoolingMaxGradient does)")
}

// parseInterleaved parses args into fs, allowing flags before and after
// positional arguments ("vkmps graph run g.json --in x=x.npy"), and returns
// the positional arguments. -h prints c's usage to stdout, as parse does;
// errors are flagx's one-line messages, as usageError marks them. Everything
// after "--" is positional.
func parseInterleaved(c *command, e *env, fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(e.stdout, "usage: vkmps %s %s\n\nflags:\n", c.name, c.usage)
			fs.SetOutput(e.stdout)
			fs.PrintDefaults()
			return nil, flag.ErrHelp
		}
		if err != nil {
			return nil, usageError(c, flagx.ParseError(fs, err))
		}
		rest := fs.Args()
		if len(rest) == 0 {
			if err := flagx.NoEmpty(fs, "device"); err != nil {
				return nil, usageError(c, err)
			}
			return pos, nil
		}
		// fs.Parse stops at the first non-flag, or after "--".
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			if err := flagx.NoEmpty(fs, "device"); err != nil {
				return nil, usageError(c, err)
			}
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
