package graph

// weightGradientDelay is how many later nodes a weight-gradient node is
// recorded after (deferWeightGradients).
const weightGradientDelay = 1

// deferWeightGradients returns order with each weight-gradient node
// (ConvolutionWeightsGradientOp: convolutions, transpose convolutions,
// fully connected layers) moved past the next weightGradientDelay nodes
// that do not read its results, keeping the weight-gradient nodes'
// own order. A training step's weight gradients feed only the updates
// at its end, while each data gradient feeds the next node: recorded
// one node later, a weight gradient's passes no longer sit between a
// data gradient and the batch normalization gradient that reads it, and
// they run beside that node's (their own scratch, Executor.weightScratch,
// keeps the shared scratch from ordering them), where the device's
// multiprocessors would otherwise wait at the barriers of small
// kernels.
//
// A node that reads a deferred node's result is recorded after it (and
// after every deferred node before it): order stays topological.
func deferWeightGradients(order []*Node) []*Node {
	type pending struct {
		n    *Node
		left int
	}
	out := make([]*Node, 0, len(order))
	var wait []pending
	flush := func(upto int) { // records wait[:upto]
		for _, p := range wait[:upto] {
			out = append(out, p.n)
		}
		wait = append(wait[:0], wait[upto:]...)
	}
	for _, n := range order {
		if _, ok := n.op.(*ConvolutionWeightsGradientOp); ok {
			wait = append(wait, pending{n, weightGradientDelay})
			continue
		}
		// The last deferred node whose results n reads, and those before it.
		need := 0
		for i, p := range wait {
			if reads(n, p.n) {
				need = i + 1
			}
		}
		flush(need)
		out = append(out, n)
		due := 0
		for i := range wait {
			if wait[i].left--; wait[i].left <= 0 {
				due = i + 1
			}
		}
		flush(due)
	}
	flush(len(wait))
	return out
}

// reads reports whether n reads a result of m, or is m's gradient (whose
// step takes m's state).
func reads(n, m *Node) bool {
	if n.forward == m {
		return true
	}
	for _, s := range n.sources {
		if s.producer == m {
			return true
		}
	}
	return false
}
