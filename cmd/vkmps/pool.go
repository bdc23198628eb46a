package main

import (
	"context"
	"fmt"
	"time"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/flagx"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

func init() {
	register(&command{
		name:    "pool",
		summary: "run one pooling kernel on a .npy or .png file",
		usage: `--op max|avg|l2|dilated-max --kernel KH,KW [--stride SH,SW]
       [--dilation DH,DW] [--pad T,L,B,R] [--ceil-mode] [--count-include-pad]
       [--padding valid|same|full|tf-same|tf-valid|caffe] [--padding-method N]
       [--edge zero|clamp] [--zero-pad X,Y] [--device D] [--quiet]
       --in X.npy|X.png --out Y.npy|Y.png

Runs one forward pooling kernel on the chosen device and writes its output.

Input: .npy of float32 or float64 (converted), shaped (N,C,H,W), (C,H,W) or
(H,W); or a PNG image, read as (1,C,H,W) with values in 0..1 (grey, RGB, RGBA:
1, 3 or 4 channels). A pipe works too (--in /dev/stdin, a FIFO); Ctrl-C ends
a wait for its data. An input the device cannot hold with the output is
refused from its header, before its data is read or its pixels decoded.
Output: .npy float32 with the input's rank, or a PNG of the output
normalised to its range. The output is written atomically and is never one
of the inputs. A one-line summary goes to stdout unless --quiet.

` + poolFlagsHelp + `

examples:
  vkmps pool --op max --kernel 2 --in x.npy --out y.npy
      PyTorch max_pool2d(x, 2): stride 2, no padding
  vkmps pool --op avg --kernel 3 --stride 2 --pad 1 --count-include-pad --ceil-mode --in x.npy --out y.npy
      PyTorch avg_pool2d(x, 3, 2, padding=1, ceil_mode=True)
  vkmps pool --op dilated-max --kernel 3 --stride 1 --dilation 2 --padding same --edge clamp --in photo.png --out y.png
  vkmps pool --op avg --kernel 3,3 --stride 2,2 --padding tf-same --in x.npy --out y.npy
      TensorFlow avg_pool2d(x, 3, 2, 'SAME')`,
		run: runPool,
	})
	register(&command{
		name:    "pool-grad",
		summary: "run a pooling kernel's gradient on .npy files",
		usage: `(the flags of pool) [--argmax] --in X.npy --grad DY.npy --out DX.npy|DX.png

Runs the forward kernel on X (keeping its gradient state), then its gradient
kernel with DY, the gradient of the loss with respect to the forward output,
and writes DX, the gradient with respect to X (X's shape and rank). DY must
have the forward output's shape (what vkmps pool writes for the same flags).
--argmax makes max kernels record each window's winner in the forward pass
instead of the gradient recomputing it; the result is the same. A PNG output
is a heatmap: blue negative, white 0, red positive, one panel per channel.
Inputs and output as for vkmps pool (the inputs may also be PNG images).

` + poolFlagsHelp + `

examples:
  vkmps pool-grad --op max --kernel 2 --in x.npy --grad dy.npy --out dx.npy
      x.grad after max_pool2d(x, 2).backward(dy) in PyTorch
  vkmps pool-grad --op avg --kernel 3 --stride 2 --pad 1 --in x.npy --grad dy.npy --out dx.png`,
		run: runPoolGrad,
	})
}

func runPool(ctx context.Context, e *env, args []string) error {
	return poolCommand(ctx, e, commands["pool"], args, false)
}

func runPoolGrad(ctx context.Context, e *env, args []string) error {
	return poolCommand(ctx, e, commands["pool-grad"], args, true)
}

// poolCommand is `vkmps pool` (grad false) and `vkmps pool-grad`.
func poolCommand(ctx context.Context, e *env, c *command, args []string, grad bool) (err error) {
	fs := newFlags(c, e)
	pf := addPoolFlags(fs)
	var gradPath *string
	var argmax *bool
	if grad {
		gradPath = fs.String("grad", "", "`DY.npy`: the loss gradient w.r.t. the forward output (required)")
		argmax = fs.Bool("argmax", false, "max kernels record the argmax in the forward pass (same result)")
	}
	if err := parse(c, e, fs, args); err != nil {
		return err
	}
	required := []string{"op", "kernel", "in"}
	if grad {
		required = append(required, "grad")
	}
	if err := flagx.Require(fs, append(required, "out")...); err != nil {
		return usageError(c, err)
	}
	cfg, err := pf.config()
	if err != nil {
		return usageError(c, err)
	}

	// Refuse the output before any work: its format, an input's name, a
	// missing directory.
	inputs := []string{*pf.in}
	if grad {
		inputs = append(inputs, *gradPath)
	}
	if _, err := tensorio.FormatOf(*pf.out); err != nil {
		return err
	}
	if err := tensorio.CheckOutput(*pf.out, inputs...); err != nil {
		return err
	}
	// The inputs, checked against the device before their data is read.
	ld := &lazyDevice{sel: *pf.device}
	defer func() {
		if cerr := ld.close(); err == nil {
			err = cerr
		}
	}()
	x, err := readInput(ctx, *pf.in, ld.check(func(n, c, h, w int) uint64 { return cfg.resultBytes(n, c, h, w, grad) }))
	if err != nil {
		return err
	}
	var dy *tensorio.Tensor
	if grad {
		t, err := readInput(ctx, *gradPath, ld.check(nil)) // counted with x
		if err != nil {
			return err
		}
		dy = &t
	}
	dev, err := ld.get()
	if err != nil {
		return err
	}
	r, err := runPoolKernel(ctx, dev, cfg, x, dy, poolOptions{inName: *pf.in, gradName: "--grad " + valueOr(gradPath), argmax: argmax != nil && *argmax})
	if err != nil {
		return err
	}

	kind, result, what := tensorio.Image, r.y, "out"
	if grad {
		kind, result, what = tensorio.Heatmap, r.dx, "dx"
	}
	if err := tensorio.Write(*pf.out, result, kind); err != nil {
		return err
	}
	if !*pf.quiet {
		name := r.kernel.Kind().String()
		from := "in " + x.ShapeString()
		if grad {
			name += "Gradient"
			from = "dy " + dy.ShapeString() + ", in " + x.ShapeString()
		}
		fmt.Fprintf(e.stdout, "%s (%s): %s -> %s %s on %s, %s; wrote %s\n", name, describeKernel(r.kernel),
			from, what, result.ShapeString(), dev.Info().Name, r.timing(), *pf.out)
	}
	return nil
}

// resultBytes is the device memory pool (grad false) or pool-grad needs
// besides an input of shape (n, c, h, w): the output, and for the
// gradient the output gradient read (its size) and dx (the input's). 0
// when the padding leaves no output (the kernel reports that).
func (c poolConfig) resultBytes(n, cc, h, w int, grad bool) uint64 {
	g := c.geom
	k := padding.Kernel{KernelW: g.KernelWidth, KernelH: g.KernelHeight, StrideX: g.StrideX, StrideY: g.StrideY,
		DilationX: g.DilationX, DilationY: g.DilationY, EdgeMode: c.edge, ZeroPad: c.zeroPad}
	r, err := padding.Resolve(c.policy, []padding.Descriptor{{N: n, C: cc, H: h, W: w}}, nil, k)
	if err != nil {
		return 0
	}
	y := uint64(r.Dest.N) * uint64(r.Dest.C) * uint64(r.Dest.H) * uint64(r.Dest.W) * 4
	if !grad {
		return y
	}
	return 2*y + uint64(n)*uint64(cc)*uint64(h)*uint64(w)*4
}

func valueOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// poolOptions are runPoolKernel's options.
type poolOptions struct {
	inName   string // how to name x in errors
	gradName string // how to name dy in errors
	argmax   bool   // record the argmax in the forward pass
}

// poolResult is what runPoolKernel computed.
type poolResult struct {
	kernel ops.Pooling
	y      tensorio.Tensor // the forward output, at x's rank
	dx     tensorio.Tensor // the gradient, at x's rank (with dy)
	gpu    time.Duration   // GPU time from timestamps; 0 where the device has none
	wall   time.Duration   // from commit to the end of the wait
}

// timing says how long the GPU work took.
func (r poolResult) timing() string {
	if r.gpu > 0 {
		return "GPU time " + fmtDuration(r.gpu)
	}
	return "wall time " + fmtDuration(r.wall)
}

func fmtDuration(d time.Duration) string {
	return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
}

// runPoolKernel runs the kernel cfg describes on x and, when dy is not
// nil, its gradient with dy, in one command buffer, and reads the results
// back. dy must have the forward output's shape (its rank may differ).
func runPoolKernel(ctx context.Context, dev *vk.Device, cfg poolConfig, x tensorio.Tensor, dy *tensorio.Tensor, opt poolOptions) (res poolResult, err error) {
	k, err := cfg.newKernel(dev)
	if err != nil {
		return res, err
	}
	k.SetRecordArgmax(opt.argmax)
	res.kernel = k
	src, err := newImageFrom(ctx, dev, x, "input")
	if err != nil {
		return res, err
	}
	defer src.Close()
	var cbOpts []vk.CommandBufferOption
	if dev.Limits().TimestampsSupported {
		cbOpts = append(cbOpts, vk.WithTimestamps())
	}
	cb, err := dev.NewCommandBuffer(cbOpts...)
	if err != nil {
		return res, err
	}
	defer cb.Close()

	var dst, dx *ops.Image
	var st *ops.PoolingGradientState
	if dy == nil {
		dst, err = k.EncodeNew(cb, src)
	} else if dst, st, err = k.EncodeNewWithState(cb, src); err == nil {
		defer st.Close()
	}
	if err != nil {
		// Most often geometry the input cannot have: name the input.
		return res, fmt.Errorf("%s %s: %w", opt.inName, x.ShapeString(), err)
	}
	defer dst.Close()
	d := dst.Descriptor()
	res.y = tensorio.Tensor{N: d.N, C: d.C, H: d.H, W: d.W, Rank: x.Rank}
	if dy != nil {
		if dy.N != d.N || dy.C != d.C || dy.H != d.H || dy.W != d.W {
			return res, fmt.Errorf("%s has shape %s, want the forward output's shape %s",
				opt.gradName, dy.ShapeString(), res.y.ShapeString())
		}
		dyIm, err := newImageFrom(ctx, dev, *dy, "dy")
		if err != nil {
			return res, err
		}
		defer dyIm.Close()
		g, err := ops.NewPoolingGradient(dev, k.Kind(), k.Geometry())
		if err != nil {
			return res, err
		}
		if dx, err = g.EncodeNew(cb, dyIm, src, st); err != nil {
			return res, err
		}
		defer dx.Close()
	}
	start := time.Now()
	if err := cb.Commit(); err != nil {
		return res, err
	}
	if err := cb.Wait(ctx); err != nil {
		return res, err
	}
	res.wall = time.Since(start)
	if len(cbOpts) > 0 {
		res.gpu, _ = cb.GPUTime()
	}
	if res.y.Data, err = dst.Read(ctx); err != nil {
		return res, err
	}
	if dx != nil {
		res.dx = tensorio.Tensor{N: x.N, C: x.C, H: x.H, W: x.W, Rank: x.Rank}
		if res.dx.Data, err = dx.Read(ctx); err != nil {
			return res, err
		}
	}
	return res, nil
}

// newImageFrom makes an image holding t.
func newImageFrom(ctx context.Context, dev *vk.Device, t tensorio.Tensor, label string) (*ops.Image, error) {
	im, err := ops.NewImage(dev, ops.ImageDescriptor{N: t.N, C: t.C, H: t.H, W: t.W, Label: label})
	if err != nil {
		return nil, err
	}
	if err := im.Write(ctx, t.Data); err != nil {
		im.Close()
		return nil, err
	}
	return im, nil
}
