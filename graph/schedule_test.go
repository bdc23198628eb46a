package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
)

// A training step records each weight gradient one node after its place
// in creation order (past the node that reads its data gradient), keeps
// every node after its sources' producers and its forward node, and
// runs every node once.
func TestScheduleDefersWeightGradients(t *testing.T) {
	g := graph.New()
	x := must(g.Input("x"))
	labels := must(g.Input("labels"))
	pad := graph.ConvolutionOptions{Padding: padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, false, false)}
	d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 4, OutputFeatureChannels: 4}
	c1 := must(g.Convolution("c1", x, d, pad))
	bn := must(g.BatchNormalization("bn", c1.Result(), ops.BatchNormalizationDescriptor{Channels: 4, Epsilon: 1e-5}, graph.BatchNormOptions{}))
	c2 := must(g.Convolution("c2", bn.Result(), d, pad))
	f := must(g.FullyConnected("f", c2.Result(), 4*6*6, 5, ops.NeuronDescriptor{}, graph.ConvolutionOptions{}))
	loss := must(g.Loss("loss", ops.LossDescriptor{Type: ops.LossSoftmaxCrossEntropy, Reduction: ops.ReductionMean}, f.Result(), labels))
	updates := must(g.Optimize(loss, must(ops.ParseOptimizer("sgd", 0.01, 0, 0))))

	order := must(g.Schedule(append([]*graph.Image{loss.Result()}, updates...)...))
	pos := map[*graph.Node]int{}
	for i, n := range order {
		_, seen := pos[n]
		require.False(t, seen, "%s runs twice", n)
		pos[n] = i
	}
	created := map[*graph.Node]int{}
	for i, n := range g.Nodes() {
		created[n] = i
	}
	require.Len(t, order, len(g.Nodes()), "every node runs")
	deferred := 0
	for i, n := range order {
		for _, s := range n.Sources() {
			if p := s.Producer(); p != nil {
				require.Less(t, pos[p], i, "%s reads %s before %s made it", n, s, p)
			}
		}
		if fw := n.Forward(); fw != nil {
			require.Less(t, pos[fw], i, "%s before its forward node", n)
		}
		if _, ok := n.Operation().(*graph.ConvolutionWeightsGradientOp); !ok {
			continue
		}
		deferred++
		// The node just before it in creation order (its data gradient,
		// or what precedes it) and the one after both come first.
		prev := g.Nodes()[created[n]-1]
		assert.Less(t, pos[prev], i, "%s stays after %s", n, prev)
		if next := created[n] + 1; next < len(g.Nodes()) {
			if nx := g.Nodes()[next]; nx.Operation() != nil {
				if _, w := nx.Operation().(*graph.ConvolutionWeightsGradientOp); !w && nx.Forward() != n {
					assert.Less(t, pos[nx], i, "%s is recorded after %s, the node created after it", n, nx)
				}
			}
		}
	}
	assert.Equal(t, 3, deferred, "c1, c2 and f have weight gradients")
}
