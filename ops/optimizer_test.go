package ops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// optRef returns the reference configuration of an ops descriptor.
func optRef(d ops.OptimizerDescriptor) ref.Optimizer {
	return ref.Optimizer{
		Type: ref.OptimizerType(d.Type), LearningRate: float64(d.LearningRate), GradientRescale: float64(d.GradientRescale),
		Clip: d.ApplyGradientClipping, ClipMin: float64(d.GradientClipMin), ClipMax: float64(d.GradientClipMax),
		Regularization: ref.Regularization(d.RegularizationType), RegularizationScale: float64(d.RegularizationScale),
		Momentum: float64(d.MomentumScale), Nesterov: d.UseNesterovMomentum, Decay: d.Decay,
		Beta1: d.Beta1, Beta2: d.Beta2, AMSGrad: d.AMSGrad, Epsilon: float64(d.Epsilon),
		PyTorch: d.Form == ops.OptimizerFormPyTorch,
	}
}

func optF64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// optClose reports the first value of got farther than
// rel*max(floor, |want|) from want (NaN matches NaN), or nil.
func optClose(what string, got []float32, want []float64, rel, floor float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := float64(got[i]), want[i]
		if math.IsNaN(g) || math.IsNaN(w) {
			if math.IsNaN(g) != math.IsNaN(w) {
				return fmt.Errorf("%s[%d] = %v, want %v", what, i, g, w)
			}
			continue
		}
		if math.Abs(g-w) > rel*math.Max(floor, math.Abs(w)) {
			return fmt.Errorf("%s[%d] = %v, want %v (diff %.3g)", what, i, g, w, g-w)
		}
	}
	return nil
}

// optReadState reads a state's images into a reference state (nil where
// absent).
func optReadState(t *testing.T, s *ops.OptimizerState, step int) *ref.OptimizerState {
	t.Helper()
	rs := &ref.OptimizerState{Step: step}
	read := func(im *ops.Image) []float64 {
		if im == nil {
			return nil
		}
		v, err := im.Read(context.Background())
		require.NoError(t, err)
		return optF64(v)
	}
	rs.Momentum, rs.Velocity, rs.MaximumVelocity = read(s.Momentum()), read(s.Velocity()), read(s.MaximumVelocity())
	return rs
}

func optCopyState(s *ref.OptimizerState) *ref.OptimizerState {
	c := *s
	c.Momentum = append([]float64(nil), s.Momentum...)
	c.Velocity = append([]float64(nil), s.Velocity...)
	c.MaximumVelocity = append([]float64(nil), s.MaximumVelocity...)
	return &c
}

// optCompareState compares the GPU's state got with the reference's want
// after one step from prev with preprocessed gradients g. A moment is the
// sum of two terms (say b1*m and (1-b1)*g), which may cancel, so each
// value is held to 4e-6 times the sum of its terms' magnitudes: a few
// float32 roundings of the larger term.
func optCompareState(what string, o ref.Optimizer, got, want, prev *ref.OptimizerState, g []float64) error {
	type moment struct {
		name             string
		got, want, prev  []float64
		decay, gradScale float64
		square           bool
	}
	var ms []moment
	switch o.Type {
	case ref.SGD:
		gs := 1.0
		if !o.PyTorch && !o.Nesterov {
			gs = o.LearningRate
		}
		ms = append(ms, moment{"momentum", got.Momentum, want.Momentum, prev.Momentum, o.Momentum, gs, false})
	case ref.RMSProp:
		ms = append(ms, moment{"sum of squares", got.Velocity, want.Velocity, prev.Velocity, o.Decay, 1 - o.Decay, true})
	case ref.Adam:
		ms = append(ms, moment{"momentum", got.Momentum, want.Momentum, prev.Momentum, o.Beta1, 1 - o.Beta1, false},
			moment{"velocity", got.Velocity, want.Velocity, prev.Velocity, o.Beta2, 1 - o.Beta2, true})
		if o.AMSGrad {
			ms = append(ms, moment{"maximum velocity", got.MaximumVelocity, want.MaximumVelocity, prev.Velocity, o.Beta2, 1 - o.Beta2, true})
		}
	}
	for _, m := range ms {
		if len(m.want) == 0 {
			if len(m.got) != 0 {
				return fmt.Errorf("%s: unexpected %s", what, m.name)
			}
			continue
		}
		if len(m.got) != len(m.want) {
			return fmt.Errorf("%s: %s has %d values, want %d", what, m.name, len(m.got), len(m.want))
		}
		for j := range m.want {
			gt := g[j]
			if m.square {
				gt *= gt
			}
			p := 0.0
			if len(m.prev) > 0 {
				p = m.prev[j]
			}
			tol := 4e-6*(math.Abs(m.decay*p)+math.Abs(m.gradScale*gt)) + 1e-37
			if m.name == "maximum velocity" {
				tol = math.Max(tol, 4e-6*math.Abs(m.want[j]))
			}
			if d := math.Abs(m.got[j] - m.want[j]); !(d <= tol) {
				return fmt.Errorf("%s: %s[%d] = %v, want %v (diff %.3g, tolerance %.3g)", what, m.name, j, m.got[j], m.want[j], d, tol)
			}
		}
	}
	return nil
}

// optCases is every optimizer and option: each rule in both forms,
// clipping, rescaling, L1 and L2.
func optCases() []ops.OptimizerDescriptor {
	mk := func(t ops.OptimizerType, lr float32, f func(d *ops.OptimizerDescriptor)) ops.OptimizerDescriptor {
		d := ops.NewOptimizerDescriptor(t, lr)
		if f != nil {
			f(&d)
		}
		return d
	}
	sgd, rms, adam := ops.OptimizerStochasticGradientDescent, ops.OptimizerRMSProp, ops.OptimizerAdam
	return []ops.OptimizerDescriptor{
		mk(sgd, 0.1, nil),
		mk(sgd, 0.05, func(d *ops.OptimizerDescriptor) { d.MomentumScale = 0.9 }),
		mk(sgd, 0.05, func(d *ops.OptimizerDescriptor) { d.MomentumScale = 0.9; d.Form = ops.OptimizerFormPyTorch }),
		mk(sgd, 0.05, func(d *ops.OptimizerDescriptor) { d.MomentumScale = 0.8; d.UseNesterovMomentum = true }),
		mk(sgd, 0.1, func(d *ops.OptimizerDescriptor) {
			d.MomentumScale = 0.5
			d.ApplyGradientClipping, d.GradientClipMin, d.GradientClipMax = true, -0.5, 0.25
			d.GradientRescale = 0.5
		}),
		mk(sgd, 0.1, func(d *ops.OptimizerDescriptor) {
			d.RegularizationType, d.RegularizationScale = ops.RegularizationL1, 0.01
		}),
		mk(rms, 0.01, nil),
		mk(rms, 0.01, func(d *ops.OptimizerDescriptor) {
			d.Decay, d.Epsilon = 0.99, 1e-6
			d.RegularizationType, d.RegularizationScale = ops.RegularizationL2, 0.05
		}),
		mk(adam, 0.01, nil),
		mk(adam, 0.01, func(d *ops.OptimizerDescriptor) { d.Form = ops.OptimizerFormPyTorch; d.Beta1, d.Beta2 = 0.8, 0.99 }),
		mk(adam, 0.01, func(d *ops.OptimizerDescriptor) { d.AMSGrad = true }),
		mk(adam, 0.01, func(d *ops.OptimizerDescriptor) {
			d.AMSGrad, d.Form = true, ops.OptimizerFormPyTorch
			d.ApplyGradientClipping, d.GradientClipMin, d.GradientClipMax = true, -1, 0.5
			d.RegularizationType, d.RegularizationScale = ops.RegularizationL2, 0.1
			d.GradientRescale = 2
		}),
		mk(adam, 0.01, func(d *ops.OptimizerDescriptor) {
			d.RegularizationType, d.RegularizationScale = ops.RegularizationL1, 0.01
			d.TimeStep = 1000
		}),
	}
}

func optName(d ops.OptimizerDescriptor) string {
	s := fmt.Sprintf("%v-%v", d.Type, d.Form)
	if d.MomentumScale != 0 {
		s += fmt.Sprintf("-mu%g", d.MomentumScale)
	}
	if d.UseNesterovMomentum {
		s += "-nesterov"
	}
	if d.AMSGrad {
		s += "-amsgrad"
	}
	if d.ApplyGradientClipping {
		s += "-clip"
	}
	if d.RegularizationType != ops.RegularizationNone {
		s += "-" + d.RegularizationType.String()
	}
	if d.TimeStep != 0 {
		s += fmt.Sprintf("-t%d", d.TimeStep)
	}
	return s
}

// optimizerRun records one training step (EncodeStep and the updates of
// every parameter) into one command buffer.
type optimizerRun struct {
	opt    *ops.Optimizer
	params []*ops.Image
	grads  []*ops.Image
	states []*ops.OptimizerState
	cb     *vk.CommandBuffer
}

func newOptimizerRun(t *testing.T, dev *vk.Device, d ops.OptimizerDescriptor, shapes []padding.Descriptor, r *rand.Rand) *optimizerRun {
	t.Helper()
	ctx := context.Background()
	opt, err := ops.NewOptimizer(dev, d)
	require.NoError(t, err)
	t.Cleanup(func() { opt.Close() })
	o := &optimizerRun{opt: opt}
	for _, sh := range shapes {
		n := sh.N * sh.C * sh.H * sh.W
		p := newImage(t, dev, sh, randomData(r, n))
		g := newImage(t, dev, sh, nil)
		s, err := opt.NewState(ctx, p)
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		o.params, o.grads, o.states = append(o.params, p), append(o.grads, g), append(o.states, s)
	}
	o.cb, err = dev.NewCommandBuffer()
	require.NoError(t, err)
	t.Cleanup(func() { o.cb.Close() })
	require.NoError(t, opt.EncodeStep(o.cb))
	for i := range o.params {
		require.NoError(t, opt.Encode(o.cb, o.params[i], o.grads[i], o.states[i]))
	}
	return o
}

// step writes the gradients and commits (replays) the recorded step.
func (o *optimizerRun) step(t *testing.T, grads [][]float32) {
	t.Helper()
	ctx := context.Background()
	for i, g := range grads {
		require.NoError(t, o.grads[i].Write(ctx, g))
	}
	require.NoError(t, o.cb.Commit())
	require.NoError(t, o.cb.Wait(ctx))
}

var optShapes = []padding.Descriptor{{N: 5, C: 3, H: 3, W: 3}, {N: 1, C: 7, H: 1, W: 1}, {N: 1, C: 1, H: 1, W: 1}}

// optGradients draws one step's gradients: normal values with a few large
// ones and a few tiny ones, so that clipping and epsilon both matter.
func optGradients(r *rand.Rand, shapes []padding.Descriptor) [][]float32 {
	out := make([][]float32, len(shapes))
	for i, sh := range shapes {
		g := randomData(r, sh.N*sh.C*sh.H*sh.W)
		for j := range g {
			switch r.Intn(10) {
			case 0:
				g[j] *= 8
			case 1:
				g[j] *= 1e-4
			}
		}
		out[i] = g
	}
	return out
}

// Every optimizer and option on the GPU, step by step against the float64
// reference started from the GPU's own previous values (so each step is
// checked alone), over 6 replays of one recorded command buffer, with the
// learning rate changed between some of them. Tolerances: parameters
// within 1e-6 * max(1, |w|) (one float32 update of a value near 1 rounds
// by 6e-8; the coefficients and Adam's bias corrections by a few ulp),
// moments as optCompareState says.
func TestOptimizerMatchesReference(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	for ci, d := range optCases() {
		t.Run(optName(d), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(100 + ci)))
			o := newOptimizerRun(t, dev, d, optShapes, r)
			rd := optRef(d)
			for step := 0; step < 6; step++ {
				if step == 3 {
					rd.LearningRate /= 4
					require.NoError(t, o.opt.SetLearningRate(ctx, float32(rd.LearningRate)))
					rd.LearningRate = float64(float32(rd.LearningRate))
				}
				// The reference starts from what the GPU holds now.
				before := make([][]float64, len(o.params))
				states := make([]*ref.OptimizerState, len(o.params))
				for i, p := range o.params {
					v, err := p.Read(ctx)
					require.NoError(t, err)
					before[i] = optF64(v)
					states[i] = optReadState(t, o.states[i], d.TimeStep+step)
				}
				grads := optGradients(r, optShapes)
				o.step(t, grads)
				prev := make([]*ref.OptimizerState, len(o.params))
				pre := make([][]float64, len(o.params))
				for i, p := range o.params {
					prev[i] = optCopyState(states[i])
					pre[i] = make([]float64, len(grads[i]))
					for j, g := range grads[i] {
						pre[i][j] = rd.PreprocessGradient(float64(g), before[i][j])
					}
					require.NoError(t, rd.Step(before[i], optF64(grads[i]), states[i]))
					got, err := p.Read(ctx)
					require.NoError(t, err)
					require.NoError(t, optClose(fmt.Sprintf("step %d param %d", step+1, i), got, before[i], 1e-6, 1), d)
					gs := optReadState(t, o.states[i], 0)
					require.NoError(t, optCompareState(fmt.Sprintf("step %d state %d", step+1, i), rd, gs, states[i], prev[i], pre[i]), d)
				}
			}
			ts, err := o.opt.TimeStep(ctx)
			require.NoError(t, err)
			assert.Equal(t, d.TimeStep+6, ts, "time step after 6 replays")
		})
	}
}

// One recorded command buffer replayed 8 times performs 8 successive
// steps: Adam's t advances on the GPU (bias corrections change each
// replay), a learning-rate schedule set between replays is followed, and
// SetTimeStep restarts t. Compared with a free-running float64 reference
// (its own state from the start), parameters within 1e-5 * max(1, |w|)
// after every replay.
func TestOptimizerReplay(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	for _, d := range []ops.OptimizerDescriptor{
		ops.NewOptimizerDescriptor(ops.OptimizerAdam, 0.01),
		func() ops.OptimizerDescriptor {
			d := must(ops.ParseOptimizer("momentum", 0.05, 0.9, 1e-3))
			return d
		}(),
		func() ops.OptimizerDescriptor {
			d := ops.NewOptimizerDescriptor(ops.OptimizerStochasticGradientDescent, 0.05)
			d.MomentumScale = 0.9 // MPS form: the momentum carries the old rates
			return d
		}(),
	} {
		t.Run(optName(d), func(t *testing.T) {
			r := rand.New(rand.NewSource(7))
			o := newOptimizerRun(t, dev, d, optShapes, r)
			rd := optRef(d)
			params := make([][]float64, len(o.params))
			states := make([]*ref.OptimizerState, len(o.params))
			for i, p := range o.params {
				v, err := p.Read(ctx)
				require.NoError(t, err)
				params[i] = optF64(v)
				states[i] = rd.NewOptimizerState(p.Len())
			}
			commands := o.cb.Commands()
			for step := 1; step <= 8; step++ {
				lr := float32(0.05 * math.Pow(0.7, float64(step-1)))
				require.NoError(t, o.opt.SetLearningRate(ctx, lr))
				rd.LearningRate = float64(lr)
				if step == 5 && d.Type == ops.OptimizerAdam {
					require.NoError(t, o.opt.SetTimeStep(ctx, 100))
					for _, s := range states {
						s.Step = 100
					}
				}
				grads := optGradients(r, optShapes)
				o.step(t, grads)
				for i, p := range o.params {
					require.NoError(t, rd.Step(params[i], optF64(grads[i]), states[i]))
					got, err := p.Read(ctx)
					require.NoError(t, err)
					require.NoError(t, optClose(fmt.Sprintf("replay %d param %d", step, i), got, params[i], 1e-5, 1))
				}
			}
			assert.Equal(t, commands, o.cb.Commands(), "replays record nothing")
			ts, err := o.opt.TimeStep(ctx)
			require.NoError(t, err)
			if d.Type == ops.OptimizerAdam {
				assert.Equal(t, 104, ts)
			} else {
				assert.Equal(t, 8, ts)
			}
		})
	}
}

// optTorchCase is one case of testdata/torch/optimizer_cases.json.
type optTorchCase struct {
	Name        string      `json:"name"`
	Optimizer   string      `json:"optimizer"`
	LR          []float64   `json:"lr"`
	Momentum    float64     `json:"momentum"`
	Nesterov    bool        `json:"nesterov"`
	WeightDecay float64     `json:"weight_decay"`
	Alpha       float64     `json:"alpha"`
	Betas       [2]float64  `json:"betas"`
	Eps         float64     `json:"eps"`
	AMSGrad     bool        `json:"amsgrad"`
	Clip        []float64   `json:"clip"`
	Param0      []float32   `json:"param0"`
	Grads       [][]float32 `json:"grads"`
	Params      [][]float32 `json:"params"`
}

// descriptor maps the case to an ops descriptor in form f.
func (c optTorchCase) descriptor(f ops.OptimizerForm) ops.OptimizerDescriptor {
	var d ops.OptimizerDescriptor
	switch c.Optimizer {
	case "sgd":
		d = ops.NewOptimizerDescriptor(ops.OptimizerStochasticGradientDescent, float32(c.LR[0]))
		d.MomentumScale, d.UseNesterovMomentum = float32(c.Momentum), c.Nesterov
	case "rmsprop":
		d = ops.NewOptimizerDescriptor(ops.OptimizerRMSProp, float32(c.LR[0]))
		d.Decay, d.Epsilon = c.Alpha, float32(c.Eps)
	case "adam":
		d = ops.NewOptimizerDescriptor(ops.OptimizerAdam, float32(c.LR[0]))
		d.Beta1, d.Beta2, d.Epsilon, d.AMSGrad = c.Betas[0], c.Betas[1], float32(c.Eps), c.AMSGrad
	}
	if c.WeightDecay != 0 {
		d.RegularizationType, d.RegularizationScale = ops.RegularizationL2, float32(c.WeightDecay)
	}
	if c.Clip != nil {
		d.ApplyGradientClipping, d.GradientClipMin, d.GradientClipMax = true, float32(c.Clip[0]), float32(c.Clip[1])
	}
	d.Form = f
	return d
}

func loadOptTorchCases(t *testing.T) []optTorchCase {
	t.Helper()
	b, err := os.ReadFile("testdata/torch/optimizer_cases.json")
	require.NoError(t, err)
	var f struct {
		Cases []optTorchCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	require.NotEmpty(t, f.Cases)
	return f.Cases
}

// The PyTorch cases (torch.optim, 5 steps each, float32): the reference
// and the GPU in PyTorch's form match torch after every step within
// 2e-6 * max(1, |w|) (torch and the GPU both round in float32, so a few
// ulp of 1 per step); in MPS's form they match it where the forms agree
// (SGD momentum under a constant learning rate, RMSProp, Nesterov), and
// differ by more than 1e-5 where they do not (a decaying learning rate
// with momentum, Adam with gradients near 1e-6).
func TestOptimizerAgainstPyTorch(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	mpsDiffers := map[string]bool{"sgd-momentum-decaying-lr": true, "adam-small-gradients": true}
	for _, c := range loadOptTorchCases(t) {
		for _, form := range []ops.OptimizerForm{ops.OptimizerFormPyTorch, ops.OptimizerFormMPS} {
			t.Run(c.Name+"/"+form.String(), func(t *testing.T) {
				d := c.descriptor(form)
				rd := optRef(d)
				p := newImage(t, dev, padding.Descriptor{N: 1, C: len(c.Param0), H: 1, W: 1}, c.Param0)
				o := &optimizerRun{params: []*ops.Image{p}}
				o.opt = must(ops.NewOptimizer(dev, d))
				t.Cleanup(func() { o.opt.Close() })
				o.grads = []*ops.Image{newImage(t, dev, padding.Descriptor{N: 1, C: len(c.Param0), H: 1, W: 1}, nil)}
				st := must(o.opt.NewState(ctx, p))
				t.Cleanup(func() { st.Close() })
				o.states = []*ops.OptimizerState{st}
				o.cb = must(dev.NewCommandBuffer())
				t.Cleanup(func() { o.cb.Close() })
				require.NoError(t, o.opt.EncodeStep(o.cb))
				require.NoError(t, o.opt.Encode(o.cb, p, o.grads[0], st))
				rp := optF64(c.Param0)
				rs := rd.NewOptimizerState(len(rp))
				worst := 0.0
				for i := range c.Grads {
					require.NoError(t, o.opt.SetLearningRate(ctx, float32(c.LR[i])))
					rd.LearningRate = float64(float32(c.LR[i]))
					o.step(t, [][]float32{c.Grads[i]})
					require.NoError(t, rd.Step(rp, optF64(c.Grads[i]), rs))
					got := must(p.Read(ctx))
					want := optF64(c.Params[i])
					for j := range want {
						worst = math.Max(worst, math.Abs(rp[j]-want[j])/math.Max(1, math.Abs(want[j])))
					}
					if form == ops.OptimizerFormPyTorch || !mpsDiffers[c.Name] {
						require.NoError(t, optClose(fmt.Sprintf("GPU step %d", i+1), got, want, 2e-6, 1))
						rp32 := make([]float32, len(rp))
						for j, v := range rp {
							rp32[j] = float32(v)
						}
						require.NoError(t, optClose(fmt.Sprintf("reference step %d", i+1), rp32, want, 2e-6, 1))
					} else {
						// The GPU follows the MPS-form reference.
						require.NoError(t, optClose(fmt.Sprintf("GPU step %d vs reference", i+1), got, rp, 1e-5, 1))
					}
				}
				if form == ops.OptimizerFormMPS && mpsDiffers[c.Name] {
					t.Logf("MPS form vs torch: largest difference %.3g", worst)
					assert.Greater(t, worst, 1e-5, "the forms should differ visibly here")
				}
			})
		}
	}
}

// Large tensors are split into dispatches under the storage-buffer range:
// a 64 KiB cap and 40001 values (160 KB) give 3 dispatches per update.
func TestOptimizerSplitsLargeTensors(t *testing.T) {
	dev := vktest.Open(t, vk.Options{MaxStorageBufferRange: 64 << 10})
	ctx := context.Background()
	r := rand.New(rand.NewSource(3))
	d := ops.NewOptimizerDescriptor(ops.OptimizerAdam, 0.01)
	d.AMSGrad = true
	shapes := []padding.Descriptor{{N: 1, C: 40001, H: 1, W: 1}}
	o := newOptimizerRun(t, dev, d, shapes, r)
	rd := optRef(d)
	params := optF64(must(o.params[0].Read(ctx)))
	st := rd.NewOptimizerState(len(params))
	for step := 0; step < 2; step++ {
		g := optGradients(r, shapes)
		o.step(t, g)
		require.NoError(t, rd.Step(params, optF64(g[0]), st))
		require.NoError(t, optClose("param", must(o.params[0].Read(ctx)), params, 1e-5, 1))
	}
	assert.Equal(t, 4, o.cb.Commands(), "EncodeStep and 3 update dispatches")
}

// Bad input, one row per class: each gives its sentinel, nothing panics
// and nothing refused is recorded.
func TestOptimizerBadInput(t *testing.T) {
	dev := vktest.Open(t)
	other := vktest.Open(t)
	ctx := context.Background()
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	sgd, adam := ops.OptimizerStochasticGradientDescent, ops.OptimizerAdam
	desc := func(t ops.OptimizerType, f func(d *ops.OptimizerDescriptor)) ops.OptimizerDescriptor {
		d := ops.NewOptimizerDescriptor(t, 0.01)
		f(&d)
		return d
	}
	for _, c := range []struct {
		name string
		d    ops.OptimizerDescriptor
	}{
		{"NaN learning rate", desc(adam, func(d *ops.OptimizerDescriptor) { d.LearningRate = nan })},
		{"infinite learning rate", desc(sgd, func(d *ops.OptimizerDescriptor) { d.LearningRate = inf })},
		{"negative learning rate", desc(sgd, func(d *ops.OptimizerDescriptor) { d.LearningRate = -0.1 })},
		{"NaN rescale", desc(sgd, func(d *ops.OptimizerDescriptor) { d.GradientRescale = nan })},
		{"zero rescale (a literal descriptor)", ops.OptimizerDescriptor{LearningRate: 0.1}},
		{"clip min > max", desc(sgd, func(d *ops.OptimizerDescriptor) {
			d.ApplyGradientClipping, d.GradientClipMin, d.GradientClipMax = true, 1, -1
		})},
		{"NaN clip", desc(sgd, func(d *ops.OptimizerDescriptor) { d.ApplyGradientClipping, d.GradientClipMax = true, nan })},
		{"unknown regularization", desc(sgd, func(d *ops.OptimizerDescriptor) { d.RegularizationType = 3 })},
		{"negative regularization scale", desc(sgd, func(d *ops.OptimizerDescriptor) {
			d.RegularizationType, d.RegularizationScale = ops.RegularizationL2, -1
		})},
		{"momentum 1", desc(sgd, func(d *ops.OptimizerDescriptor) { d.MomentumScale = 1 })},
		{"negative momentum", desc(sgd, func(d *ops.OptimizerDescriptor) { d.MomentumScale = -0.1 })},
		{"Nesterov without momentum", desc(sgd, func(d *ops.OptimizerDescriptor) { d.UseNesterovMomentum = true })},
		{"decay 1", desc(ops.OptimizerRMSProp, func(d *ops.OptimizerDescriptor) { d.Decay = 1 })},
		{"beta1 1", desc(adam, func(d *ops.OptimizerDescriptor) { d.Beta1 = 1 })},
		{"beta2 negative", desc(adam, func(d *ops.OptimizerDescriptor) { d.Beta2 = -0.1 })},
		{"beta NaN", desc(adam, func(d *ops.OptimizerDescriptor) { d.Beta2 = math.NaN() })},
		{"epsilon 0", desc(adam, func(d *ops.OptimizerDescriptor) { d.Epsilon = 0 })},
		{"epsilon negative", desc(ops.OptimizerRMSProp, func(d *ops.OptimizerDescriptor) { d.Epsilon = -1e-8 })},
		{"negative time step", desc(adam, func(d *ops.OptimizerDescriptor) { d.TimeStep = -1 })},
		{"unknown type", desc(7, func(*ops.OptimizerDescriptor) {})},
		{"unknown form", desc(adam, func(d *ops.OptimizerDescriptor) { d.Form = 2 })},
	} {
		_, err := ops.NewOptimizer(dev, c.d)
		assert.ErrorIs(t, err, ops.ErrGeometry, c.name)
	}
	_, err := ops.NewOptimizer(nil, ops.NewOptimizerDescriptor(sgd, 0.1))
	assert.ErrorIs(t, err, ops.ErrDevice)
	_, err = ops.ParseOptimizer("lbfgs", 0.1, 0, 0)
	assert.ErrorIs(t, err, ops.ErrGeometry)
	_, err = ops.ParseOptimizer("adam", -1, 0, 0)
	assert.ErrorIs(t, err, ops.ErrGeometry)

	r := rand.New(rand.NewSource(1))
	sh := padding.Descriptor{N: 2, C: 3, H: 2, W: 2}
	opt := must(ops.NewOptimizer(dev, ops.NewOptimizerDescriptor(adam, 0.01)))
	defer opt.Close()
	plain := must(ops.NewOptimizer(dev, ops.NewOptimizerDescriptor(sgd, 0.01)))
	defer plain.Close()
	param := newImage(t, dev, sh, randomData(r, 24))
	grad := newImage(t, dev, sh, randomData(r, 24))
	state := must(opt.NewState(ctx, param))
	defer state.Close()
	wrongGrad := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 2, W: 3}, nil)
	smallParam := newImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 2, W: 2}, nil)
	smallGrad := newImage(t, dev, padding.Descriptor{N: 1, C: 3, H: 2, W: 2}, nil)
	plainState := must(plain.NewState(ctx, param))
	closedState := must(opt.NewState(ctx, param))
	require.NoError(t, closedState.Close())
	require.NoError(t, closedState.Close())
	closedImage := newImage(t, dev, sh, nil)
	require.NoError(t, closedImage.Close())
	foreign := newImage(t, other, sh, nil)
	view := must(param.ChannelView(0, 2))
	gradView := must(grad.ChannelView(0, 2))
	closedOpt := must(ops.NewOptimizer(dev, ops.NewOptimizerDescriptor(adam, 0.01)))
	require.NoError(t, closedOpt.Close())
	require.NoError(t, closedOpt.Close())

	cb := must(dev.NewCommandBuffer())
	defer cb.Close()
	// No EncodeStep yet in cb.
	assert.ErrorIs(t, opt.Encode(cb, param, grad, state), ops.ErrState, "no EncodeStep")
	stepped := must(dev.NewCommandBuffer())
	defer stepped.Close()
	require.NoError(t, opt.EncodeStep(stepped))
	require.NoError(t, plain.EncodeStep(stepped))
	before := stepped.Commands()
	for _, c := range []struct {
		name        string
		err         error
		k           *ops.Optimizer
		cb          *vk.CommandBuffer
		param, grad *ops.Image
		state       *ops.OptimizerState
	}{
		{"nil command buffer", ops.ErrInvalidImage, opt, nil, param, grad, state},
		{"closed optimizer", ops.ErrClosed, closedOpt, stepped, param, grad, state},
		{"nil parameter", ops.ErrInvalidImage, opt, stepped, nil, grad, state},
		{"nil gradient", ops.ErrInvalidImage, opt, stepped, param, nil, state},
		{"closed parameter", ops.ErrClosed, opt, stepped, closedImage, grad, state},
		{"foreign gradient", ops.ErrDevice, opt, stepped, param, foreign, state},
		{"gradient of another shape", ops.ErrShape, opt, stepped, param, wrongGrad, state},
		{"channel view", ops.ErrShape, opt, stepped, view, gradView, state},
		{"gradient aliasing the parameter", ops.ErrAlias, opt, stepped, param, param, state},
		{"nil state", ops.ErrState, opt, stepped, param, grad, nil},
		{"closed state", ops.ErrClosed, opt, stepped, param, grad, closedState},
		{"state of another optimizer", ops.ErrState, opt, stepped, param, grad, plainState},
		{"state of another shape", ops.ErrState, opt, stepped, smallParam, smallGrad, state},
	} {
		assert.ErrorIs(t, c.k.Encode(c.cb, c.param, c.grad, c.state), c.err, c.name)
	}
	assert.Equal(t, before, stepped.Commands(), "nothing refused was recorded")
	if dev.Limits().Float16Storage {
		half := newHalfImage(t, dev, sh, nil)
		assert.ErrorIs(t, opt.Encode(stepped, half, grad, state), ops.ErrFormat, "float16 parameter")
		assert.ErrorIs(t, opt.Encode(stepped, param, half, state), ops.ErrFormat, "float16 gradient")
		_, err := opt.NewState(ctx, half)
		assert.ErrorIs(t, err, ops.ErrFormat, "float16 state")
	}
	assert.ErrorIs(t, closedOpt.EncodeStep(stepped), ops.ErrClosed)
	assert.ErrorIs(t, opt.EncodeStep(nil), ops.ErrInvalidImage)
	assert.ErrorIs(t, opt.SetLearningRate(ctx, nan), ops.ErrGeometry)
	assert.ErrorIs(t, opt.SetLearningRate(ctx, -1), ops.ErrGeometry)
	assert.ErrorIs(t, closedOpt.SetLearningRate(ctx, 0.1), ops.ErrClosed)
	assert.ErrorIs(t, plain.SetMomentumScale(ctx, 0.9), ops.ErrGeometry, "no momentum kept")
	assert.ErrorIs(t, opt.SetRegularizationScale(ctx, -1), ops.ErrGeometry)
	assert.ErrorIs(t, opt.SetTimeStep(ctx, -1), ops.ErrGeometry)
	_, err = opt.NewState(ctx, foreign)
	assert.ErrorIs(t, err, ops.ErrDevice)
	_, err = closedOpt.NewState(ctx, param)
	assert.ErrorIs(t, err, ops.ErrClosed)
	assert.Equal(t, 0, cb.Commands())
	assert.Equal(t, before, stepped.Commands(), "nothing refused was recorded")
	plainState.Close()
}

// ParseOptimizer gives PyTorch's defaults for `vkmps graph train`'s flags.
func TestParseOptimizer(t *testing.T) {
	d := must(ops.ParseOptimizer("Momentum", 0.1, 0, 5e-4))
	assert.Equal(t, ops.OptimizerStochasticGradientDescent, d.Type)
	assert.Equal(t, float32(0.9), d.MomentumScale)
	assert.Equal(t, ops.RegularizationL2, d.RegularizationType)
	assert.Equal(t, float32(5e-4), d.RegularizationScale)
	assert.Equal(t, ops.OptimizerFormPyTorch, d.Form)
	d = must(ops.ParseOptimizer("sgd", 0.1, 0, 0))
	assert.Zero(t, d.MomentumScale)
	assert.Equal(t, ops.RegularizationNone, d.RegularizationType)
	d = must(ops.ParseOptimizer("nesterov", 0.1, 0.8, 0))
	assert.True(t, d.UseNesterovMomentum)
	assert.Equal(t, float32(0.8), d.MomentumScale)
	d = must(ops.ParseOptimizer("rmsprop", 0.01, 0, 0))
	assert.Equal(t, 0.99, d.Decay)
	d = must(ops.ParseOptimizer("adam", 1e-3, 0, 0))
	assert.Equal(t, 0.9, d.Beta1)
	assert.Equal(t, 0.999, d.Beta2)
	assert.Equal(t, float32(1e-8), d.Epsilon)
}

// A NaN gradient makes its parameter NaN under every rule (clipping keeps
// it NaN, as PyTorch's clamp does) and leaves the other values finite.
func TestOptimizerNaNPropagates(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	for _, d := range optCases() {
		r := rand.New(rand.NewSource(5))
		shapes := []padding.Descriptor{{N: 1, C: 9, H: 1, W: 1}}
		o := newOptimizerRun(t, dev, d, shapes, r)
		g := optGradients(r, shapes)
		g[0][4] = float32(math.NaN())
		o.step(t, g)
		got := must(o.params[0].Read(ctx))
		for j, v := range got {
			assert.Equal(t, j == 4, math.IsNaN(float64(v)), "%s value %d = %v", optName(d), j, v)
		}
	}
}
