package graph_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/graph/graphref"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/vk/vktest"
)

// Every loss type and reduction as a graph node, from JSON: the loss and
// the training graph's gradient of the prediction on the GPU equal the
// CPU's, whose gradient equals central finite differences of its loss
// (issue 20: the softmax cross-entropy, mean and weight gradients
// included).
func TestLossNodesTrain(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(7))
	pd := ops.ImageDescriptor{N: 2, C: 4, H: 2, W: 3}
	for _, typ := range []string{"mae", "mse", "softmax-cross-entropy", "sigmoid-cross-entropy", "categorical-cross-entropy",
		"hinge", "huber", "cosine-distance", "log", "kl-divergence"} {
		for _, red := range []string{"none", "sum", "mean", "sum-by-nonzero-weights"} {
			extra := `, "weight": 0.5`
			if typ == "softmax-cross-entropy" || typ == "sigmoid-cross-entropy" {
				extra += `, "label_smoothing": 0.1`
			}
			if typ == "huber" {
				extra += `, "delta": 0.7`
			}
			js := fmt.Sprintf(`{"inputs": {"pred": [2, 4, 2, 3], "labels": [2, 4, 2, 3]}, "nodes": [
				{"name": "loss", "op": "loss", "loss": %q, "reduction": %q%s, "sources": ["pred", "labels"]}], "loss": "loss"}`, typ, red, extra)
			t.Run(typ+"/"+red, func(t *testing.T) {
				g, f := must2(graph.Load(stringsReader(js)))
				shapes := must(f.Shapes())
				lt := must(ops.ParseLossType(typ))
				pv, lv := ref.LossInputs(r, ref.LossType(lt), pd.N, pd.C, pd.H, pd.W)
				lossNode := g.Image("loss").Producer()
				grads := must(g.Training(lossNode))
				gp := grads[g.Image("pred")]
				require.NotNil(t, gp)
				e := must(g.Compile(dev, graph.CompileOptions{Inputs: shapes, Outputs: []*graph.Image{g.Image("loss"), gp}}))
				gpu := must(e.Run(ctx, map[string][]float32{"pred": pv, "labels": lv}))
				require.NoError(t, e.Close())
				feeds := map[string][]float64{"pred": to64(pv), "labels": to64(lv)}
				cpu := must(graphref.Eval(g, shapes, feeds, g.Image("loss"), gp))
				for _, name := range []string{"loss", gp.Name()} {
					for i, w := range cpu[name] {
						require.InDelta(t, w, float64(gpu[name][i]), 1e-4*math.Max(1, math.Abs(w)), "%s[%d]", name, i)
					}
				}
				total := func(v []float64) float64 {
					s := 0.0
					for _, x := range v {
						s += x
					}
					return s
				}
				const h = 1e-6
				for i := range pv {
					p := append([]float64(nil), feeds["pred"]...)
					m := append([]float64(nil), feeds["pred"]...)
					p[i] += h
					m[i] -= h
					lp := total(must(graphref.Eval(g, shapes, map[string][]float64{"pred": p, "labels": feeds["labels"]}, g.Image("loss")))["loss"])
					lm := total(must(graphref.Eval(g, shapes, map[string][]float64{"pred": m, "labels": feeds["labels"]}, g.Image("loss")))["loss"])
					fd := (lp - lm) / (2 * h)
					if (typ == "mae" || typ == "hinge" || typ == "huber") && math.Abs(fd-cpu[gp.Name()][i]) > 1e-3 {
						continue // a central difference across a kink
					}
					require.InDelta(t, fd, cpu[gp.Name()][i], 1e-5*math.Max(1, math.Abs(fd)), "d loss / d pred[%d]", i)
				}
			})
		}
	}
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
