package graph_test

import (
	"context"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk/vktest"
)

// A pipelined executor overlaps runs: Start feeds and submits run k+1
// while run k executes, each with its own staging buffers and command
// buffer; every result equals the one a plain Run gives, each run is one
// submission, and waiting on a run whose outputs were overwritten is an
// error, not stale data.
func TestPipelinedRuns(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(3))
	xd := ops.ImageDescriptor{N: 2, C: 3, H: 9, W: 11}
	g := graph.New()
	x := must(g.Input("x"))
	p := must(g.Pooling("p", ops.KindAverage, geom(3, 2), x, graph.PoolingOptions{}))
	shapes := map[string]ops.ImageDescriptor{"x": xd}
	plain := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes}))
	defer plain.Close()
	piped := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Pipelined: true}))
	defer piped.Close()

	const runs = 6
	feeds := make([]map[string][]float32, runs)
	want := make([][]float32, runs)
	for i := range feeds {
		feeds[i] = map[string][]float32{"x": randomData(r, n(xd))}
		want[i] = must(plain.Run(ctx, feeds[i]))[p.Name()]
	}
	before := dev.Submissions()
	prev := must(piped.Start(ctx, feeds[0]))
	for i := 1; i < runs; i++ {
		next := must(piped.Start(ctx, feeds[i])) // run i queued behind run i-1
		got := must(prev.Wait(ctx))
		require.Equal(t, want[i-1], got[p.Name()], "run %d", i-1)
		prev = next
	}
	require.Equal(t, want[runs-1], must(prev.Wait(ctx))[p.Name()])
	require.Equal(t, uint64(runs), dev.Submissions()-before, "one submission per run")

	a := must(piped.Start(ctx, feeds[0]))
	_ = must(piped.Start(ctx, feeds[1]))
	_ = must(piped.Start(ctx, feeds[2])) // reuses a's set
	_, err := a.Wait(ctx)
	require.ErrorIs(t, err, graph.ErrGraph)
	require.ErrorContains(t, err, "overwritten")
}

// A profiled run gives every node's GPU time; they add up to no more than
// the run's.
func TestProfiledRun(t *testing.T) {
	dev := vktest.Open(t)
	if !dev.Limits().TimestampsSupported {
		t.Skip("no timestamps")
	}
	ctx := context.Background()
	g := graph.New()
	x := must(g.Input("x"))
	p := must(g.Pooling("p", ops.KindMax, geom(3, 2), x, graph.PoolingOptions{}))
	q := must(g.Pooling("q", ops.KindAverage, geom(2, 1), p.Result(), graph.PoolingOptions{}))
	xd := ops.ImageDescriptor{N: 2, C: 4, H: 33, W: 31}
	e := must(g.Compile(dev, graph.CompileOptions{Inputs: map[string]ops.ImageDescriptor{"x": xd}, Profile: true}))
	defer e.Close()
	pend := must(e.Start(ctx, map[string][]float32{"x": randomData(rand.New(rand.NewSource(1)), n(xd))}))
	must(pend.Wait(ctx))
	prof := pend.Profile()
	require.Len(t, prof, 2)
	require.Equal(t, p.Name(), prof[0].Node.Name())
	require.Equal(t, q.Name(), prof[1].Node.Name())
	require.LessOrEqual(t, prof[0].Time+prof[1].Time, pend.GPUTime())
}

// Resident inputs stay on the device: WriteInput sets them, runs take no
// feed for them and record no upload of them, and give what feeding the
// same values gives, in float32 and float16, pipelined or not; a new
// WriteInput between runs changes the next run's results. Feeding a
// resident input, writing one that is not resident or does not exist, a
// wrong length, and a resident name that is no input are errors.
func TestResidentInputs(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(4))
	xd := ops.ImageDescriptor{N: 2, C: 3, H: 9, W: 11}
	g := graph.New()
	x := must(g.Input("x"))
	y := must(g.Input("y"))
	p := must(g.Pooling("p", ops.KindAverage, geom(3, 2), x, graph.PoolingOptions{}))
	q := must(g.Pooling("q", ops.KindMax, geom(3, 2), y, graph.PoolingOptions{}))
	shapes := map[string]ops.ImageDescriptor{"x": xd, "y": xd}
	outs := []*graph.Image{p.Result(), q.Result()}
	for _, format := range []ops.Format{ops.Float32, ops.Float16} {
		for _, piped := range []bool{false, true} {
			plain := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: outs, Format: format}))
			defer plain.Close()
			res := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: outs, Format: format, Pipelined: piped, Resident: []string{"x"}}))
			defer res.Close()
			x1, x2 := randomData(r, n(xd)), randomData(r, n(xd))
			require.NoError(t, res.WriteInput(ctx, "x", x1))
			for i := 0; i < 3; i++ {
				yv := randomData(r, n(xd))
				want := must(plain.Run(ctx, map[string][]float32{"x": x1, "y": yv}))
				got := must(res.Run(ctx, map[string][]float32{"y": yv}))
				require.Equal(t, want, got, "%v pipelined %v run %d", format, piped, i)
			}
			require.NoError(t, res.WriteInput(ctx, "x", x2))
			yv := randomData(r, n(xd))
			want := must(plain.Run(ctx, map[string][]float32{"x": x2, "y": yv}))
			require.Equal(t, want, must(res.Run(ctx, map[string][]float32{"y": yv})), "after a new WriteInput")

			_, err := res.Run(ctx, map[string][]float32{"x": x1, "y": yv})
			require.ErrorIs(t, err, graph.ErrGraph)
			require.ErrorContains(t, err, `input "x" is resident`)
			require.ErrorContains(t, res.WriteInput(ctx, "y", yv), `"y" is not resident`)
			require.ErrorContains(t, res.WriteInput(ctx, "z", yv), `no input named "z"`)
			require.ErrorIs(t, res.WriteInput(ctx, "x", x1[:5]), graph.ErrShape)
		}
	}
	_, err := g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: outs, Resident: []string{"p"}})
	require.ErrorIs(t, err, graph.ErrGraph)
	require.ErrorContains(t, err, `resident input "p"`)
}
