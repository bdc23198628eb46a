package graph_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/graph/graphref"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// trainingGraph is a small training graph: two poolings of x, joined,
// a mean squared error against labels, and the gradient of x. It returns
// the graph, the input shapes and the outputs (loss, grad(x)).
func trainingGraph(t testing.TB) (*graph.Graph, map[string]ops.ImageDescriptor, []*graph.Image) {
	t.Helper()
	g := graph.New()
	x := must(g.Input("x"))
	labels := must(g.Input("labels"))
	p1 := must(g.Pooling("p1", ops.KindMax, geom(3, 2), x, graph.PoolingOptions{}))
	p2 := must(g.Pooling("p2", ops.KindAverage, geom(2, 2), x, graph.PoolingOptions{}))
	cat := must(g.Concat("cat", p1.Result(), p2.Result()))
	loss := must(g.Loss("loss", ops.LossDescriptor{Reduction: ops.ReductionMean}, cat.Result(), labels))
	grads := must(g.Training(loss))
	shapes := map[string]ops.ImageDescriptor{"x": {N: 2, C: 3, H: 12, W: 12}}
	shapes["labels"] = must(g.InferShapes(shapes, cat.Result()))[cat.Result()]
	return g, shapes, []*graph.Image{loss.Result(), grads[x]}
}

func randomFeeds(r *rand.Rand, shapes map[string]ops.ImageDescriptor) map[string][]float32 {
	feeds := map[string][]float32{}
	for _, name := range []string{"x", "labels"} { // a fixed order: the same seed, the same feeds
		feeds[name] = randomData(r, n(shapes[name]))
	}
	return feeds
}

// sameOutputs reports how two runs' outputs differ, or "".
func sameOutputs(a, b map[string][]float32) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d outputs, then %d", len(a), len(b))
	}
	for k, va := range a {
		vb := b[k]
		if len(va) != len(vb) {
			return fmt.Sprintf("%s: %d values, then %d", k, len(va), len(vb))
		}
		for i := range va {
			if math.Float32bits(va[i]) != math.Float32bits(vb[i]) {
				return fmt.Sprintf("%s[%d]: %v, then %v", k, i, va[i], vb[i])
			}
		}
	}
	return ""
}

// TestConcurrentExecutors: several executors of one graph on one device,
// each run by its own goroutine, plus goroutines sharing one executor
// (whose runs serialize), give exactly the results of the same runs made
// one after another; those match the CPU evaluation. `make check` runs it
// under -race.
func TestConcurrentExecutors(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	g, shapes, outs := trainingGraph(t)
	opts := graph.CompileOptions{Inputs: shapes, Outputs: outs, RecordArgmax: true}
	const workers, runs = 4, 4
	r := rand.New(rand.NewSource(21))
	feeds := make([][]map[string][]float32, workers+2)
	want := make([][]map[string][]float32, workers+2)
	seq := must(g.Compile(dev, opts))
	defer seq.Close()
	for w := range feeds {
		for i := 0; i < runs; i++ {
			f := randomFeeds(r, shapes)
			feeds[w] = append(feeds[w], f)
			want[w] = append(want[w], must(seq.Run(ctx, f)))
		}
	}
	// The sequential results are right.
	cpu := must(graphref.Eval(g, shapes, map[string][]float64{"x": to64(feeds[0][0]["x"]), "labels": to64(feeds[0][0]["labels"])}, outs...))
	for name, v := range cpu {
		for i := range v {
			require.InDelta(t, v[i], float64(want[0][0][name][i]), 1e-5*math.Max(1, math.Abs(v[i])), "%s[%d]", name, i)
		}
	}

	errs := make(chan error, workers+2)
	for w := 0; w < workers+2; w++ {
		go func() {
			errs <- func() error {
				e := seq // the last two share the sequential executor
				if w < workers {
					var err error
					if e, err = g.Compile(dev, opts); err != nil {
						return err
					}
					defer e.Close()
				}
				for i, f := range feeds[w] {
					got, err := e.Run(ctx, f)
					if err != nil {
						return err
					}
					if d := sameOutputs(want[w][i], got); d != "" {
						return fmt.Errorf("worker %d run %d: %s", w, i, d)
					}
				}
				return nil
			}()
		}()
	}
	for w := 0; w < workers+2; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// heavyGraph pools a large image through a chain of stride-1 windows, so
// that a run takes long enough on a CPU device to be cancelled midway.
func heavyGraph(t testing.TB) (*graph.Graph, map[string]ops.ImageDescriptor) {
	g := graph.New()
	x := must(g.Input("x"))
	im := x
	for i, k := range []ops.PoolingKind{ops.KindAverage, ops.KindMax, ops.KindL2Norm, ops.KindAverage} {
		im = must(g.Pooling(fmt.Sprintf("p%d", i), k, geom(5, 1), im, graph.PoolingOptions{})).Result()
	}
	return g, map[string]ops.ImageDescriptor{"x": {N: 1, C: 8, H: 320, W: 320}}
}

// TestRunCancelled: Run returns promptly with the context's error, and
// the executor and device keep working: the next runs give the results of
// an executor that was never cancelled.
func TestRunCancelled(t *testing.T) {
	dev := vktest.Open(t)
	g, shapes := heavyGraph(t)
	e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes}))
	defer e.Close()
	feeds := map[string][]float32{"x": randomData(rand.New(rand.NewSource(5)), n(shapes["x"]))}

	// Cancelled before: nothing is done.
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	before := dev.Submissions()
	start := time.Now()
	_, err := e.Run(cancelled, feeds)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 100*time.Millisecond)
	assert.Equal(t, before, dev.Submissions(), "a cancelled run submits nothing")

	// Cancelled while the GPU works.
	deadline, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	start = time.Now()
	_, err = e.Run(deadline, feeds)
	elapsed := time.Since(start)
	if err == nil {
		t.Logf("the run finished within 1 ms (%v): cancellation mid-run not observed", elapsed)
	} else {
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, elapsed, 500*time.Millisecond, "Run returns promptly")
	}

	// Both later runs and a fresh executor agree.
	ctx := context.Background()
	got := must(e.Run(ctx, feeds))
	fresh := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes}))
	defer fresh.Close()
	want := must(fresh.Run(ctx, feeds))
	assert.Empty(t, sameOutputs(want, got))
	assert.Empty(t, sameOutputs(want, must(e.Run(ctx, feeds))))
}

// TestDeviceLostGraph: after the device is lost, Run (of an executor that
// ran before and of one that never ran) and Compile fail with
// vk.ErrDeviceLost at once; closing still works.
func TestDeviceLostGraph(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	g, shapes, outs := trainingGraph(t)
	opts := graph.CompileOptions{Inputs: shapes, Outputs: outs}
	feeds := randomFeeds(rand.New(rand.NewSource(3)), shapes)
	ran := must(g.Compile(dev, opts))
	defer ran.Close()
	must(ran.Run(ctx, feeds))
	idle := must(g.Compile(dev, opts))
	defer idle.Close()

	vktest.MarkLost(t, dev)
	for name, f := range map[string]func() error{
		"Run":             func() error { _, err := ran.Run(ctx, feeds); return err },
		"Run again":       func() error { _, err := ran.Run(ctx, feeds); return err },
		"first Run":       func() error { _, err := idle.Run(ctx, feeds); return err },
		"Compile":         func() error { _, err := g.Compile(dev, opts); return err },
		"ops.NewImage":    func() error { _, err := ops.NewImage(dev, ops.ImageDescriptor{N: 1, C: 1, H: 1, W: 1}); return err },
		"vk.NewBuffer":    func() error { _, err := dev.NewBuffer(4, "b"); return err },
		"Device.WaitIdle": func() error { return dev.WaitIdle(ctx) },
	} {
		start := time.Now()
		assert.ErrorIs(t, f(), vk.ErrDeviceLost, name)
		assert.Less(t, time.Since(start), time.Second, name)
	}
	require.NoError(t, ran.Close())
	require.NoError(t, idle.Close())
}

// TestArenaOutOfMemory: a graph whose intermediate cannot be allocated
// fails to compile with vk.ErrOutOfDeviceMemory naming the arena, leaves
// nothing allocated, and the device compiles and runs the next graph.
func TestArenaOutOfMemory(t *testing.T) {
	dev := vktest.Open(t)
	// A 2x2 window dilated 32767 times under "full" padding turns a 1x1
	// image into a 32768x32768 one: 4 GiB a channel, with enough channels
	// to exceed the device's memory. A second window brings it back to 1x1.
	channels := int(dev.Limits().DeviceLocalBytes>>32) + 1
	g := graph.New()
	x := must(g.Input("x"))
	big := must(g.Pooling("big", ops.KindDilatedMax, ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 1, StrideY: 1,
		DilationX: 32767, DilationY: 32767}, x, graph.PoolingOptions{Padding: must(graph.ParsePolicy("full"))}))
	small := must(g.Pooling("small", ops.KindMax, ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 1 << 15, StrideY: 1 << 15},
		big.Result(), graph.PoolingOptions{Padding: must(graph.ParsePolicy("valid"))}))
	shapes := map[string]ops.ImageDescriptor{"x": {N: 1, C: channels, H: 1, W: 1}}
	d := must(g.InferShapes(shapes, small.Result()))
	require.Equal(t, ops.ImageDescriptor{N: 1, C: channels, H: 32768, W: 32768, Label: "big"}, d[big.Result()])
	_, err := g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{small.Result()}})
	require.ErrorIs(t, err, vk.ErrOutOfDeviceMemory)
	assert.Contains(t, err.Error(), "graph arena")
	require.NoError(t, dev.WaitIdle(context.Background()))
	assert.Empty(t, dev.LiveSummary(), "nothing left allocated")

	// The device keeps working.
	tg, tshapes, outs := trainingGraph(t)
	e := must(tg.Compile(dev, graph.CompileOptions{Inputs: tshapes, Outputs: outs}))
	defer e.Close()
	out := must(e.Run(context.Background(), randomFeeds(rand.New(rand.NewSource(1)), tshapes)))
	assert.Len(t, out["grad(x)"], n(tshapes["x"]))
}

// soakRuns is the number of runs of TestSoak: 300, or $VKMPS_SOAK.
func soakRuns(t *testing.T) int {
	runs := 300
	if s := os.Getenv("VKMPS_SOAK"); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(t, err, "VKMPS_SOAK")
		runs = v
	} else if testing.Short() {
		runs = 60
	}
	return runs
}

// rss returns the process's resident memory in bytes (Linux), after a
// collection, or 0 where /proc is missing.
func rss() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

// TestSoak runs a training graph many times (300; VKMPS_SOAK=10000 for
// the long soak), then compiles, runs and closes executors over and over:
// after a warm-up the live Vulkan objects, the device memory and the
// resident memory stay where they were, and every run gives the same
// results.
func TestSoak(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	runs := soakRuns(t)
	g, shapes, outs := trainingGraph(t)
	opts := graph.CompileOptions{Inputs: shapes, Outputs: outs, RecordArgmax: true}
	e := must(g.Compile(dev, opts))
	defer e.Close()
	r := rand.New(rand.NewSource(17))
	feeds := []map[string][]float32{randomFeeds(r, shapes), randomFeeds(r, shapes)}
	want := []map[string][]float32{must(e.Run(ctx, feeds[0])), must(e.Run(ctx, feeds[1]))}

	const warm = 20
	var live0 map[string]int
	var mem0 vk.MemoryStats
	var rss0, rssMax uint64
	start := time.Now()
	for i := 0; i < runs; i++ {
		got, err := e.Run(ctx, feeds[i%2])
		require.NoError(t, err, "run %d", i)
		require.Empty(t, sameOutputs(want[i%2], got), "run %d", i)
		switch {
		case i == warm:
			live0, mem0, rss0 = dev.LiveObjects(), dev.MemoryStats(), rss()
			rssMax = rss0
		case i > warm && (i%100 == 0 || i == runs-1):
			require.Equal(t, live0, dev.LiveObjects(), "live objects after run %d", i)
			require.Equal(t, mem0, dev.MemoryStats(), "device memory after run %d", i)
			rssMax = max(rssMax, rss())
		}
	}
	perRun := time.Since(start) / time.Duration(max(runs, 1))

	// Compile/close cycles return to where they started.
	cycles := max(runs/10, 10)
	require.NoError(t, dev.WaitIdle(ctx))
	liveBefore := dev.LiveObjects()
	for c := 0; c < cycles; c++ {
		e2, err := g.Compile(dev, opts)
		require.NoError(t, err, "cycle %d", c)
		got, err := e2.Run(ctx, feeds[c%2])
		require.NoError(t, err)
		require.Empty(t, sameOutputs(want[c%2], got), "cycle %d", c)
		require.NoError(t, e2.Close())
		if c%10 == 9 {
			rssMax = max(rssMax, rss())
		}
	}
	require.NoError(t, dev.WaitIdle(ctx))
	require.Equal(t, liveBefore, dev.LiveObjects(), "after %d compile/close cycles", cycles)
	rssEnd := rss()
	rssMax = max(rssMax, rssEnd)
	t.Logf("%d runs (%v each), %d compile/run/close cycles; live objects %v; device memory %d blocks, %d bytes; RSS %.1f MiB after warm-up, at most %.1f MiB, %.1f MiB at the end",
		runs, perRun, cycles, live0, mem0.Blocks, mem0.Bytes, mib(rss0), mib(rssMax), mib(rssEnd))
	if rss0 > 0 {
		// Bounded: no growth with the number of runs beyond allocator noise.
		assert.Less(t, rssMax, rss0+32<<20, "resident memory grows")
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
