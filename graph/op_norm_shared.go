package graph

import (
	"fmt"

	"github.com/vkmps/vkmps/ops"
)

// normParam is one per-channel parameter of a normalization node: its name
// suffix, its given first values (nil: def) and whether it trains.
type normParam struct {
	suffix    string
	init      *Init
	def       InitKind
	trainable bool
}

// normParams adds the per-channel parameters "NAME.SUFFIX" (1 x C x 1 x 1,
// shape [C]) of a normalization node.
func (g *Graph) normParams(name string, channels int, ps []normParam) ([]*Image, error) {
	pd := ops.ImageDescriptor{N: 1, C: channels, H: 1, W: 1}
	params := make([]*Image, 0, len(ps))
	for _, p := range ps {
		in := Init{Kind: p.def}
		if p.init != nil {
			in = *p.init
		}
		im, err := g.Parameter(name+"."+p.suffix, pd, in, p.trainable)
		if err != nil {
			return nil, err
		}
		im.param.shape = []int{channels}
		params = append(params, im)
	}
	return params, nil
}

// addNorm adds a normalization node over src and its parameters, which it
// then owns.
func (g *Graph) addNorm(name string, o Op, src *Image, params []*Image) (*Node, error) {
	n, err := g.add(name, o, append([]*Image{src}, params...), nil)
	if err != nil {
		return nil, err
	}
	for _, p := range params {
		p.param.owner = n
	}
	return n, nil
}

// normGradients adds g, a normalization's gradient node computing dx and
// (sources 1 and 2) dgamma and dbeta where wanted, and returns the
// gradients by source.
func normGradients(b *gradCtx, n *Node, dy *Image, wanted []bool, g Op) ([]*Image, error) {
	idx := []int{0}
	for i := 1; i <= 2; i++ {
		if wanted[i] {
			idx = append(idx, i)
		}
	}
	ims, err := b.addMulti(idx, g, dy, n.sources[0])
	if err != nil {
		return nil, err
	}
	out := make([]*Image, len(n.sources))
	for k, i := range idx {
		if wanted[i] {
			out[i] = ims[k]
		}
	}
	return out, nil
}

// normGradInfer infers a normalization gradient's results (sources: dy,
// the forward source): dx, then dgamma and dbeta (1 x channels x 1 x 1)
// where wanted.
func normGradInfer(c *inferCtx, src []ops.ImageDescriptor, channels int, gamma, beta bool) ([]ops.ImageDescriptor, error) {
	if !sameDesc(src[0], src[1]) {
		return nil, c.errorf(ErrShape, "source gradient %s, forward source %s", descString(src[0]), descString(src[1]))
	}
	out := []ops.ImageDescriptor{c.like(src[1])}
	p := ops.ImageDescriptor{N: 1, C: channels, H: 1, W: 1}
	if gamma {
		out = append(out, p)
	}
	if beta {
		out = append(out, p)
	}
	return out, nil
}

// normGradImages returns a normalization gradient step's dy, x, dx, and
// dgamma and dbeta (nil where not wanted).
func (b *buildCtx) normGradImages(gamma, beta bool) (dy, x, dx, dgamma, dbeta *ops.Image) {
	dy, x, dx = b.src[0], b.src[1], b.dst[0]
	i := 1
	if gamma {
		dgamma, i = b.dst[i], i+1
	}
	if beta {
		dbeta = b.dst[i]
	}
	return
}

// normForwardState returns the state of the forward step of a
// normalization's gradient, of type S.
func normForwardState[S any](b *buildCtx, what string) (S, error) {
	var zero S
	fwd, err := b.forwardStep()
	if err != nil {
		return zero, err
	}
	s, ok := fwd.state.(S)
	if !ok {
		return zero, fmt.Errorf("%w: the forward %s step has no state", ErrGraph, what)
	}
	return s, nil
}
