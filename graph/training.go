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

// constSources is implemented by ops some of whose sources take no
// gradient (a loss's labels are constants, as with MPSCNNLoss).
type constSources interface{ constSource(i int) bool }

func constSource(n *Node, i int) bool {
	c, ok := n.op.(constSources)
	return ok && c.constSource(i)
}

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

// GradientFilters returns the node computing the gradient of each source
// of n (gradientFiltersWithSource:): a concatenation gives a channel slice
// per source, an addition passes the gradient to each side, a convolution
// gives its data, weight and bias gradients, a loss gives the gradient of
// its prediction and nil for its labels. One node may compute the
// gradients of several sources (batch normalization's gives dx, dgamma
// and dbeta); its Results are then in source order. Results are named
// "grad(SOURCE)<-NODE".
func (n *Node) GradientFilters(sourceGradient *Image) ([]*Node, error) {
	wanted := make([]bool, len(n.sources))
	for i := range wanted {
		wanted[i] = !constSource(n, i) && (n.sources[i].param == nil || n.sources[i].Trainable())
	}
	ims, err := n.gradientImages(sourceGradient, n.contribNames(nil), wanted)
	if err != nil {
		return nil, err
	}
	out := make([]*Node, len(ims))
	for i, im := range ims {
		if im != nil {
			out[i] = im.producer
		}
	}
	return out, nil
}

// contribNames names n's gradient images: "grad(S)<-N", with "#i" added
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

// gradientImages adds n's gradient nodes and returns the gradient image of
// each wanted source (nil elsewhere).
func (n *Node) gradientImages(dy *Image, names []string, wanted []bool) ([]*Image, error) {
	g := n.g
	if n.forward != nil {
		return nil, fmt.Errorf("%w: %s is a gradient node; it has no gradient", ErrGraph, n)
	}
	o, ok := n.op.(gradOp)
	if !ok {
		return nil, fmt.Errorf("%w: %s has no gradient", ErrGraph, n)
	}
	if _, isLoss := n.op.(LossOp); !isLoss {
		if dy == nil {
			return nil, fmt.Errorf("%w: %s: nil source gradient", ErrGraph, n)
		}
		if dy.g != g {
			return nil, fmt.Errorf("%w: %s: source gradient %s belongs to another graph", ErrGraph, n, dy)
		}
	}
	ims, err := o.gradients(&gradCtx{g: g, n: n, names: names}, n, dy, wanted)
	if err != nil {
		return nil, err
	}
	if len(ims) != len(n.sources) {
		return nil, fmt.Errorf("%w: %s: %d gradients for %d sources (internal error)", ErrGraph, n, len(ims), len(n.sources))
	}
	return ims, nil
}

// Training derives the training graph of a graph ending in loss (MPS's
// automatic training graph): walking back from the loss it adds each
// node's gradient nodes, and sums gradients with addition nodes wherever
// an image feeds several filters. It returns the gradient image of every
// graph input and every trainable parameter the loss depends on through
// its prediction: a loss's labels are constants (no gradient flows
// through them, as with MPSCNNLoss), even when they are computed from an
// input. Gradient images are named "grad(IMAGE)" ("grad(c1.weights)" for
// a parameter); where an image has several contributions they are named
// "grad(IMAGE)<-NODE" and summed into "grad(IMAGE)". There is one
// exception: the result of a neuron (not PReLU) with two contributions,
// such as a residual block's ReLU output. Its gradient node adds them
// itself (NeuronGradientOp.SumDy), and no "grad(IMAGE)" image is made.
func (g *Graph) Training(loss *Node) (map[*Image]*Image, error) {
	var wrt []*Image
	for _, im := range g.images {
		if im.IsInput() || im.Trainable() {
			wrt = append(wrt, im)
		}
	}
	return g.TrainingFor(loss, wrt)
}

// TrainingFor is Training for the gradients of the images wrt only (graph
// inputs and trainable parameters): an optimizer needs its parameters'
// gradients, not the input images'.
func (g *Graph) TrainingFor(loss *Node, wrt []*Image) (map[*Image]*Image, error) {
	if loss == nil || loss.g != g {
		return nil, fmt.Errorf("%w: Training needs a loss node of this graph", ErrGraph)
	}
	if _, ok := loss.op.(LossOp); !ok {
		return nil, fmt.Errorf("%w: Training: %s is not a loss node", ErrGraph, loss)
	}
	target := map[*Image]bool{}
	for _, im := range wrt {
		if im == nil || im.g != g || im.producer != nil {
			return nil, fmt.Errorf("%w: Training: %v is not an input or parameter of this graph", ErrGraph, im)
		}
		if im.param != nil && !im.Trainable() {
			return nil, fmt.Errorf("%w: Training: %s is not trainable (or frozen)", ErrGraph, im)
		}
		target[im] = true
	}
	// The forward nodes the loss depends on, in topological order.
	order, err := ancestors(loss)
	if err != nil {
		return nil, err
	}
	// needs[im]: the gradient of im is wanted (im depends on a target
	// other than through loss labels).
	needs := map[*Image]bool{}
	for im := range target {
		needs[im] = true
	}
	for _, n := range order {
		for i, s := range n.sources {
			if !constSource(n, i) && needs[s] {
				for _, r := range n.results {
					needs[r] = true
				}
			}
		}
	}
	wanted := func(n *Node, i int) bool { return !constSource(n, i) && needs[n.sources[i]] }
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
	// gradient returns the summed gradient of im, adding the sum nodes.
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
			n, err := g.add(name, SumOp{}, []*Image{sum, cs[k]}, nil)
			if err != nil {
				return nil, err
			}
			sum = n.Result()
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
			if len(n.results) != 1 {
				return nil, fmt.Errorf("%w: %s has %d results; Training follows single-result forward nodes", ErrGraph, n, len(n.results))
			}
			if dy, err = gradient(n.Result()); err != nil {
				return nil, err
			}
			if dy == nil {
				continue // no gradient reaches this node
			}
		}
		single := make([]bool, len(n.sources))
		want := make([]bool, len(n.sources))
		for i, s := range n.sources {
			want[i] = wanted(n, i)
			single[i] = consumers[s] == 1 && want[i]
		}
		gs, err := n.gradientImages(dy, n.contribNames(single), want)
		if err != nil {
			return nil, err
		}
		for i, gi := range gs {
			if gi != nil && want[i] {
				contribs[n.sources[i]] = append(contribs[n.sources[i]], gi)
			}
		}
	}
	out := map[*Image]*Image{}
	for _, im := range wrt {
		gi, err := gradient(im)
		if err != nil {
			return nil, err
		}
		if gi != nil {
			out[im] = gi
		}
	}
	return out, nil
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
