package graph

import (
	"fmt"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// InstanceNormOp is an instance normalization (MPSCNNInstanceNormalization,
// JSON op "instance_norm"); sources: the image and its trainable
// parameters "NODE.gamma" and "NODE.beta".
type InstanceNormOp struct {
	Desc ops.InstanceNormalizationDescriptor
}

func (InstanceNormOp) Name() string { return "instance_norm" }
func (InstanceNormOp) arity() int   { return 3 }

func (o InstanceNormOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	d, err := o.Desc.ResultDescriptor(c.like(src[0]))
	if err != nil {
		return nil, c.errorf(ErrShape, "%v", err)
	}
	return one(c.like(d), nil)
}

func (o InstanceNormOp) needsState(gradient Op) bool {
	_, ok := gradient.(*InstanceNormGradientOp)
	return ok
}

// inState is the compiled instance normalization its gradient reuses.
type inState struct{ k *ops.InstanceNormalization }

func (s *inState) Close() error { return s.k.Close() }

func (o InstanceNormOp) build(b *buildCtx) error {
	k, err := ops.NewInstanceNormalization(b.dev, o.Desc, b.src[1], b.src[2])
	if err != nil {
		return err
	}
	b.st.setState(&inState{k})
	src, dst := b.src[0], b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) })
	return nil
}

func (o InstanceNormOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	return normGradients(b, n, dy, wanted, &InstanceNormGradientOp{Forward: o, Gamma: wanted[1], Beta: wanted[2]})
}

// InstanceNormGradientOp is an instance normalization's gradient: dx, and
// dgamma and dbeta where wanted; sources: dy, the forward source.
type InstanceNormGradientOp struct {
	Forward     InstanceNormOp
	Gamma, Beta bool
}

func (*InstanceNormGradientOp) Name() string { return "instance_norm-gradient" }
func (*InstanceNormGradientOp) arity() int   { return 2 }

func (o *InstanceNormGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	return normGradInfer(c, src, o.Forward.Desc.Channels, o.Gamma, o.Beta)
}

func (o *InstanceNormGradientOp) build(b *buildCtx) error {
	s, err := normForwardState[*inState](b, "instance normalization")
	if err != nil {
		return err
	}
	k, err := ops.NewInstanceNormalizationGradient(s.k)
	if err != nil {
		return err
	}
	b.closer(k)
	dy, x, dx, dgamma, dbeta := b.normGradImages(o.Gamma, o.Beta)
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, dy, x, dx, dgamma, dbeta) })
	return nil
}

// InstanceNormalization adds an instance normalization over src with
// parameters "NAME.gamma" and "NAME.beta" (nil: 1 and 0).
func (g *Graph) InstanceNormalization(name string, src *Image, d ops.InstanceNormalizationDescriptor, gamma, beta *Init) (*Node, error) {
	params, err := g.normParams(name, d.Channels, []normParam{{"gamma", gamma, InitOnes, true}, {"beta", beta, InitZeros, true}})
	if err != nil {
		return nil, err
	}
	return g.addNorm(name, InstanceNormOp{Desc: d}, src, params)
}

// WindowNormKind is one of the parameter-free normalizations over a window.
type WindowNormKind int

const (
	// CrossChannelNorm is local response normalization across channels
	// (MPSCNNCrossChannelNormalization, JSON "cross_channel_norm": size,
	// alpha, beta, delta).
	CrossChannelNorm WindowNormKind = iota
	// SpatialNorm is MPSCNNSpatialNormalization (JSON "spatial_norm":
	// kernel, alpha, beta, delta).
	SpatialNorm
	// LocalContrastNorm is MPSCNNLocalContrastNormalization (JSON
	// "local_contrast_norm": kernel, alpha, beta, delta, p0, pm, ps).
	LocalContrastNorm
)

var windowNormNames = [...]string{"cross_channel_norm", "spatial_norm", "local_contrast_norm"}

// WindowNormOp is a cross-channel, spatial or local-contrast
// normalization; only the descriptor of its Kind is used.
type WindowNormOp struct {
	Kind          WindowNormKind
	CrossChannel  ops.CrossChannelNormalizationDescriptor
	Spatial       ops.SpatialNormalizationDescriptor
	LocalContrast ops.LocalContrastNormalizationDescriptor
}

func (o *WindowNormOp) Name() string { return windowNormNames[o.Kind] }
func (o *WindowNormOp) arity() int   { return 1 }

func (o *WindowNormOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	var d ops.ImageDescriptor
	var err error
	switch o.Kind {
	case CrossChannelNorm:
		d, err = o.CrossChannel.ResultDescriptor(src[0])
	case SpatialNorm:
		d, err = o.Spatial.ResultDescriptor(src[0])
	default:
		d, err = o.LocalContrast.ResultDescriptor(src[0])
	}
	if err != nil {
		return nil, c.errorf(ErrShape, "%v", err)
	}
	return one(c.like(d), nil)
}

func (o *WindowNormOp) gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error) {
	gi, err := b.add(0, &WindowNormGradientOp{Forward: o}, dy, n.sources[0])
	return []*Image{gi}, err
}

type encoder interface {
	Encode(cb *vk.CommandBuffer, src, dst *ops.Image) error
}

func (o *WindowNormOp) build(b *buildCtx) error {
	var k encoder
	var err error
	switch o.Kind {
	case CrossChannelNorm:
		k, err = ops.NewCrossChannelNormalization(b.dev, o.CrossChannel)
	case SpatialNorm:
		k, err = ops.NewSpatialNormalization(b.dev, o.Spatial)
	default:
		k, err = ops.NewLocalContrastNormalization(b.dev, o.LocalContrast)
	}
	if err != nil {
		return err
	}
	if c, ok := k.(interface{ Close() error }); ok {
		b.closer(c)
	}
	src, dst := b.src[0], b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) })
	return nil
}

// WindowNormGradientOp is a window normalization's gradient; sources: dy,
// the forward source.
type WindowNormGradientOp struct{ Forward *WindowNormOp }

func (o *WindowNormGradientOp) Name() string { return o.Forward.Name() + "-gradient" }
func (o *WindowNormGradientOp) arity() int   { return 2 }

func (o *WindowNormGradientOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	if !sameDesc(src[0], src[1]) {
		return nil, c.errorf(ErrShape, "source gradient %s, forward source %s", descString(src[0]), descString(src[1]))
	}
	return one(c.like(src[1]), nil)
}

func (o *WindowNormGradientOp) build(b *buildCtx) error {
	type grad interface {
		Encode(cb *vk.CommandBuffer, dy, src, dx *ops.Image) error
	}
	var k grad
	var err error
	f := o.Forward
	switch f.Kind {
	case CrossChannelNorm:
		k, err = ops.NewCrossChannelNormalizationGradient(b.dev, f.CrossChannel)
	case SpatialNorm:
		k, err = ops.NewSpatialNormalizationGradient(b.dev, f.Spatial)
	default:
		k, err = ops.NewLocalContrastNormalizationGradient(b.dev, f.LocalContrast)
	}
	if err != nil {
		return err
	}
	if c, ok := k.(interface{ Close() error }); ok {
		b.closer(c)
	}
	dy, x, dx := b.src[0], b.src[1], b.dst[0]
	b.encode(func(cb *vk.CommandBuffer) error { return k.Encode(cb, dy, x, dx) })
	return nil
}

// WindowNormalization adds a cross-channel, spatial or local-contrast
// normalization (o's descriptor of its Kind) over src.
func (g *Graph) WindowNormalization(name string, src *Image, o WindowNormOp) (*Node, error) {
	var err error
	switch o.Kind {
	case CrossChannelNorm:
		err = o.CrossChannel.Validate()
	case SpatialNorm:
		err = o.Spatial.Validate()
	case LocalContrastNorm:
		err = o.LocalContrast.Validate()
	default:
		err = fmt.Errorf("unknown kind %d", int(o.Kind))
	}
	if err != nil {
		return nil, errorfNode(ErrGraph, name, "%v", err)
	}
	return g.add(name, &o, []*Image{src}, nil)
}

type instanceNormSpec struct {
	specBase
	Gamma    string   `json:"gamma,omitempty"`
	Beta     string   `json:"beta,omitempty"`
	Channels int      `json:"channels,omitempty"`
	Epsilon  *float32 `json:"epsilon,omitempty"`
}

type windowNormSpec struct {
	specBase
	Size   int      `json:"size,omitempty"`
	Kernel Ints     `json:"kernel,omitempty"`
	Alpha  *float32 `json:"alpha,omitempty"`
	Beta   *float32 `json:"beta,omitempty"`
	Delta  *float32 `json:"delta,omitempty"`
	P0     *float32 `json:"p0,omitempty"`
	PM     *float32 `json:"pm,omitempty"`
	PS     *float32 `json:"ps,omitempty"`
}

func setIf(dst *float32, v *float32) {
	if v != nil {
		*dst = *v
	}
}

func init() {
	registerOp("instance_norm", opSpec{sources: 1, doc: "gamma, beta, epsilon, channels", parse: func(p *parseCtx) error {
		var s instanceNormSpec
		if err := p.decode(&s); err != nil {
			return err
		}
		files, c, err := normSpec{Channels: s.Channels}.vectors(p, map[string]string{"gamma": s.Gamma, "beta": s.Beta})
		if err != nil {
			return err
		}
		d := ops.NewInstanceNormalizationDescriptor(c)
		setIf(&d.Epsilon, s.Epsilon)
		_, err = p.g.InstanceNormalization(p.name, p.src[0], d, files["gamma"], files["beta"])
		return err
	}})
	for k, name := range windowNormNames {
		kind := WindowNormKind(k)
		registerOp(name, opSpec{sources: 1, doc: "size (cross-channel) or kernel, alpha, beta, delta (, p0, pm, ps)", parse: func(p *parseCtx) error {
			var s windowNormSpec
			if err := p.decode(&s); err != nil {
				return err
			}
			o := WindowNormOp{Kind: kind}
			if kind == CrossChannelNorm {
				if s.Kernel != nil || s.P0 != nil || s.PM != nil || s.PS != nil {
					return p.bad("cross_channel_norm takes size, alpha, beta, delta")
				}
				size := s.Size
				if size == 0 {
					size = 5
				}
				o.CrossChannel = ops.NewCrossChannelNormalizationDescriptor(size)
				setIf(&o.CrossChannel.Alpha, s.Alpha)
				setIf(&o.CrossChannel.Beta, s.Beta)
				setIf(&o.CrossChannel.Delta, s.Delta)
			} else {
				if s.Size != 0 {
					return p.bad("%s takes kernel, not size", name)
				}
				kh, kw := 5, 5
				if s.Kernel != nil {
					var err error
					if kh, kw, err = pair("kernel", s.Kernel, 1); err != nil {
						return p.bad("%v", err)
					}
				}
				if kind == SpatialNorm {
					if s.P0 != nil || s.PM != nil || s.PS != nil {
						return p.bad("p0, pm and ps apply to local_contrast_norm only")
					}
					o.Spatial = ops.NewSpatialNormalizationDescriptor(kw, kh)
					setIf(&o.Spatial.Alpha, s.Alpha)
					setIf(&o.Spatial.Beta, s.Beta)
					setIf(&o.Spatial.Delta, s.Delta)
				} else {
					o.LocalContrast = ops.NewLocalContrastNormalizationDescriptor(kw, kh)
					l := &o.LocalContrast
					setIf(&l.Alpha, s.Alpha)
					setIf(&l.Beta, s.Beta)
					setIf(&l.Delta, s.Delta)
					setIf(&l.P0, s.P0)
					setIf(&l.PM, s.PM)
					setIf(&l.PS, s.PS)
				}
			}
			_, err := p.g.WindowNormalization(p.name, p.src[0], o)
			return err
		}})
	}
}
