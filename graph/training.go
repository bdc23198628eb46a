package graph

import (
	"fmt"
	"sort"
)

// gradName is the name of the gradient of image s.
func gradName(s string) string { return "grad(" + s + ")" }

// contribName is the name of node n's contribution to the gradient of s,
// when s has several.
func contribName(s, n string) string { return "grad(" + s + ")<-" + n }

// GradientFilter returns the gradient node of a single-source forward node
// (MPSNNFilterNode gradientFilterWithSource:): its sources are
// sourceGradient (the gradient of the node's result) and whatever else the
// gradient needs from the forward node (its source image and state). Its
// result, the gradient of the node's source, is named "grad(SOURCE)<-NODE".
func (n *Node) GradientFilter(sourceGradient *Image) (*Node, error) {
	gs, err := n.GradientFilters(sourceGradient)
	if err != nil {
		return nil, err
	}
	if len(gs) != 1 || gs[0] == nil {
		return nil, fmt.Errorf("%w: %s has %d sources; use GradientFilters", ErrGraph, n, len(n.sources))
	}
	return gs[0], nil
}

// GradientFilters returns one gradient node per source of n
// (gradientFiltersWithSource:): a concatenation gives a channel slice per
// source, an addition passes the gradient to each side, a loss gives the
// gradient of its prediction and nil for its labels. Results are named
// "grad(SOURCE)<-NODE".
func (n *Node) GradientFilters(sourceGradient *Image) ([]*Node, error) {
	return n.gradientFilters(sourceGradient, n.contribNames(nil))
}

// contribNames names n's gradient nodes: "grad(S)<-N", with "#i" added
// when n reads S more than once; single[i] replaces source i's name with
// "grad(S)" (its only contribution).
func (n *Node) contribNames(single []bool) []string {
	names := make([]string, len(n.sources))
	seen := map[*Image]int{}
	for _, s := range n.sources {
		seen[s]++
	}
	nth := map[*Image]int{}
	for i, s := range n.sources {
		switch {
		case single != nil && single[i]:
			names[i] = gradName(s.name)
		case seen[s] > 1:
			names[i] = fmt.Sprintf("%s#%d", contribName(s.name, n.name), nth[s])
		default:
			names[i] = contribName(s.name, n.name)
		}
		nth[s]++
	}
	return names
}

func (n *Node) gradientFilters(dy *Image, names []string) ([]*Node, error) {
	g := n.g
	if n.forward != nil {
		return nil, fmt.Errorf("%w: %s is a gradient node; it has no gradient", ErrGraph, n)
	}
	if _, isLoss := n.op.(lossOp); !isLoss {
		if dy == nil {
			return nil, fmt.Errorf("%w: %s: nil source gradient", ErrGraph, n)
		}
		if dy.g != g {
			return nil, fmt.Errorf("%w: %s: source gradient %s belongs to another graph", ErrGraph, n, dy)
		}
	}
	out := make([]*Node, len(n.sources))
	var err error
	switch o := n.op.(type) {
	case *poolOp:
		out[0], err = g.add(names[0], &poolGradOp{fwd: o}, []*Image{dy, n.sources[0]}, n)
	case concatOp:
		// The slices' offsets are the sources' channel counts, known when
		// the graph is compiled; record them as the cumulative position.
		for i := range n.sources {
			out[i], err = g.add(names[i], &concatSliceOp{concat: n, index: i}, []*Image{dy}, n)
			if err != nil {
				break
			}
		}
	case sliceOp:
		out[0], err = g.add(names[0], &unsliceOp{slice: n}, []*Image{dy}, n)
	case addOp:
		for i := range n.sources {
			out[i], err = g.add(names[i], identityOp{}, []*Image{dy}, n)
			if err != nil {
				break
			}
		}
	case lossOp:
		// The loss is where the gradient starts: dLoss/dLoss = 1 is implied.
		out[0], err = g.add(names[0], lossGradOp{desc: o.desc}, []*Image{n.sources[0], n.sources[1]}, n)
	default:
		return nil, fmt.Errorf("%w: %s has no gradient", ErrGraph, n)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Training derives the training graph of a graph ending in loss (MPS's
// automatic training graph): walking back from the loss it adds each
// node's gradient node, and sums gradients with an addition node wherever
// an image feeds several filters. It returns the gradient image of every
// graph input the loss depends on through its prediction: a loss's labels
// are constants (no gradient flows through them, as with MPSCNNLoss), even
// when they are computed from an input.
// Gradient images are named "grad(IMAGE)"; where an image has several
// contributions they are named "grad(IMAGE)<-NODE" and summed into
// "grad(IMAGE)".
func (g *Graph) Training(loss *Node) (map[*Image]*Image, error) {
	if loss == nil || loss.g != g {
		return nil, fmt.Errorf("%w: Training needs a loss node of this graph", ErrGraph)
	}
	if _, ok := loss.op.(lossOp); !ok {
		return nil, fmt.Errorf("%w: Training: %s is not a loss node", ErrGraph, loss)
	}
	// The forward nodes the loss depends on, in topological order.
	order, err := ancestors(loss)
	if err != nil {
		return nil, err
	}
	// needs[im]: the gradient of im is wanted (im depends on an input
	// other than through loss labels).
	needs := map[*Image]bool{}
	for _, n := range order {
		for i, s := range n.sources {
			if _, isLoss := n.op.(lossOp); isLoss && i == 1 {
				continue
			}
			if s.producer == nil || needs[s] {
				needs[n.result] = true
			}
		}
	}
	wanted := func(n *Node, i int) bool {
		s := n.sources[i]
		if _, isLoss := n.op.(lossOp); isLoss && i == 1 {
			return false
		}
		return s.producer == nil || needs[s]
	}
	// flows[n]: the loss's gradient reaches n's result (n is the loss, or
	// a wanted source of a node it reaches).
	flows := map[*Node]bool{loss: true}
	for k := len(order) - 1; k >= 0; k-- {
		n := order[k]
		if !flows[n] {
			continue
		}
		for i, s := range n.sources {
			if wanted(n, i) && s.producer != nil {
				flows[s.producer] = true
			}
		}
	}
	// How many contributions each image's gradient receives.
	consumers := map[*Image]int{}
	for _, n := range order {
		if !flows[n] {
			continue
		}
		for i, s := range n.sources {
			if wanted(n, i) {
				consumers[s]++
			}
		}
	}
	contribs := map[*Image][]*Image{}
	// gradient returns the summed gradient of im, adding the sum node.
	gradient := func(im *Image) (*Image, error) {
		cs := contribs[im]
		if len(cs) == 0 {
			return nil, nil
		}
		if len(cs) == 1 {
			return cs[0], nil
		}
		sum := cs[0]
		for k := 1; k < len(cs); k++ {
			name := gradName(im.name)
			if k < len(cs)-1 {
				name = fmt.Sprintf("%s+%d", gradName(im.name), k)
			}
			n, err := g.add(name, addOp{}, []*Image{sum, cs[k]}, nil)
			if err != nil {
				return nil, err
			}
			sum = n.result
		}
		return sum, nil
	}
	for k := len(order) - 1; k >= 0; k-- {
		n := order[k]
		if !flows[n] {
			continue
		}
		var dy *Image
		if n != loss {
			if dy, err = gradient(n.result); err != nil {
				return nil, err
			}
			if dy == nil {
				continue // no gradient reaches this node
			}
		}
		single := make([]bool, len(n.sources))
		for i, s := range n.sources {
			single[i] = consumers[s] == 1 && wanted(n, i)
		}
		gs, err := n.gradientFilters(dy, n.contribNames(single))
		if err != nil {
			return nil, err
		}
		for i, gn := range gs {
			if gn == nil || !wanted(n, i) {
				if gn != nil {
					g.remove(gn)
				}
				continue
			}
			contribs[n.sources[i]] = append(contribs[n.sources[i]], gn.result)
		}
	}
	out := map[*Image]*Image{}
	for _, in := range g.Inputs() {
		gi, err := gradient(in)
		if err != nil {
			return nil, err
		}
		if gi != nil {
			out[in] = gi
		}
	}
	return out, nil
}

// remove deletes a node that was just added and is not wanted (a loss's
// labels take no gradient).
func (g *Graph) remove(n *Node) {
	for i, m := range g.nodes {
		if m == n {
			g.nodes = append(g.nodes[:i], g.nodes[i+1:]...)
			break
		}
	}
	for i, im := range g.images {
		if im == n.result {
			g.images = append(g.images[:i], g.images[i+1:]...)
			break
		}
	}
	delete(g.byName, n.result.name)
}

// ancestors returns the nodes that image-wise precede target (target
// included), in a topological order: each node after the nodes producing
// its sources. Ties keep creation order.
func ancestors(target *Node) ([]*Node, error) {
	seen := map[*Node]int{} // 1 visiting, 2 done
	var order []*Node
	var visit func(n *Node) error
	visit = func(n *Node) error {
		switch seen[n] {
		case 1:
			return fmt.Errorf("%w: cycle through %s", ErrGraph, n)
		case 2:
			return nil
		}
		seen[n] = 1
		srcs := append([]*Image(nil), n.sources...)
		sort.SliceStable(srcs, func(i, j int) bool { return srcs[i].id < srcs[j].id })
		for _, s := range srcs {
			if s.producer != nil {
				if err := visit(s.producer); err != nil {
					return err
				}
			}
		}
		seen[n] = 2
		order = append(order, n)
		return nil
	}
	if err := visit(target); err != nil {
		return nil, err
	}
	return order, nil
}
