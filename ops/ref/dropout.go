package ref

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/vkmps/vkmps/padding"
)

// Philox4x32 returns Philox4x32-10 of counter ctr under key: the
// counter-based generator of Salmon, Moraes, Dror and Shaw ("Parallel
// random numbers: as easy as 1, 2, 3", SC11), as Random123, cuRAND and
// PyTorch define it. Ten rounds of
//
//	hi0:lo0 = 0xD2511F53 * ctr[0],  hi1:lo1 = 0xCD9E8D57 * ctr[2]  (64-bit products)
//	ctr = (hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0)
//
// with key += (0x9E3779B9, 0xBB67AE85) before every round but the first.
// Integer arithmetic only, so every device computes the same bits.
func Philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	for r := 0; r < 10; r++ {
		if r > 0 {
			key[0] += 0x9E3779B9
			key[1] += 0xBB67AE85
		}
		hi0, lo0 := bits.Mul32(0xD2511F53, ctr[0])
		hi1, lo1 := bits.Mul32(0xCD9E8D57, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
	}
	return ctr
}

// Dropout is one draw of a dropout mask (MPSCNNDropout): the keep
// probability, the seed, the draw number (the kernel's GPU counter when
// the forward ran) and MPS's maskStrideInPixels, 1 or 0 per axis: x, y and
// feature channel. A stride of 0 broadcasts the mask along that axis (one
// mask value for every channel when StrideC is 0); 1 gives each position
// its own.
//
// The mask has MaskShape: N × (StrideC ? C : 1) × (StrideY ? H : 1) ×
// (StrideX ? W : 1); image element (n, c, y, x) uses mask element
// (n, c*StrideC, y*StrideY, x*StrideX). Batch images always have masks of
// their own. Mask element (n, c, y, x) of an image whose mask has Cm
// channels is kept when
//
//	Philox4x32((x>>2, y, n*Cm + c, Draw), (Seed & 0xffffffff, Seed >> 32))[x&3] < Threshold()
//
// so it depends on the seed, the draw, its coordinates and Cm only:
// every device, run and split of the work gives the same mask.
type Dropout struct {
	KeepProbability float32
	Seed            uint64
	Draw            uint32
	// StrideX, StrideY, StrideC are the mask strides (MPS's
	// maskStrideInPixels width, height, depth): 1 or 0.
	StrideX, StrideY, StrideC int
}

// Validate checks the keep probability (in (0, 1), not NaN) and the
// strides (0 or 1).
func (d Dropout) Validate() error {
	k := d.KeepProbability
	if !(k > 0 && k < 1) {
		return fmt.Errorf("%w: dropout keep probability %v outside (0, 1)", ErrGeometry, k)
	}
	for _, s := range []struct {
		axis string
		v    int
	}{{"x", d.StrideX}, {"y", d.StrideY}, {"feature channel", d.StrideC}} {
		if s.v != 0 && s.v != 1 {
			return fmt.Errorf("%w: dropout mask stride %d on axis %s: MPS allows 0 (broadcast) or 1", ErrGeometry, s.v, s.axis)
		}
	}
	return nil
}

// Threshold is floor(KeepProbability * 2^32): a mask element is kept when
// its 32-bit random word is below it, so the keep probability is
// Threshold/2^32, exactly KeepProbability for every float32 probability
// from 2^-9 up (their ulp is at least 2^-32).
func (d Dropout) Threshold() uint32 {
	return uint32(math.Floor(float64(d.KeepProbability) * (1 << 32)))
}

// Scale is 1/KeepProbability, the factor kept values are multiplied by,
// computed in float64 (a float32 kernel rounds it to float32 once).
func (d Dropout) Scale() float64 { return 1 / float64(d.KeepProbability) }

// MaskShape returns the shape of the mask of an image of shape x.
func (d Dropout) MaskShape(x padding.Descriptor) padding.Descriptor {
	m := padding.Descriptor{N: x.N, C: 1, H: 1, W: 1}
	if d.StrideC != 0 {
		m.C = x.C
	}
	if d.StrideY != 0 {
		m.H = x.H
	}
	if d.StrideX != 0 {
		m.W = x.W
	}
	return m
}

// MaskBit reports whether mask element (n, c, y, x) of a mask with cm
// channels is kept.
func (d Dropout) MaskBit(cm, n, c, y, x int) bool {
	key := [2]uint32{uint32(d.Seed), uint32(d.Seed >> 32)}
	r := Philox4x32([4]uint32{uint32(x) >> 2, uint32(y), uint32(n*cm + c), d.Draw}, key)
	return r[x&3] < d.Threshold()
}

// Mask returns the mask of an image of shape x: MaskShape(x) values, NCHW,
// true where kept.
func (d Dropout) Mask(x padding.Descriptor) []bool {
	m := d.MaskShape(x)
	out := make([]bool, m.N*m.C*m.H*m.W)
	key := [2]uint32{uint32(d.Seed), uint32(d.Seed >> 32)}
	th := d.Threshold()
	i := 0
	for n := 0; n < m.N; n++ {
		for c := 0; c < m.C; c++ {
			for y := 0; y < m.H; y++ {
				var r [4]uint32
				for xx := 0; xx < m.W; xx++ {
					if xx&3 == 0 {
						r = Philox4x32([4]uint32{uint32(xx) >> 2, uint32(y), uint32(n*m.C + c), d.Draw}, key)
					}
					out[i] = r[xx&3] < th
					i++
				}
			}
		}
	}
	return out
}

// maskIndex returns the mask element of image element (n, c, y, x).
func (d Dropout) maskIndex(m padding.Descriptor, n, c, y, x int) int {
	return ((n*m.C+c*d.StrideC)*m.H+y*d.StrideY)*m.W + x*d.StrideX
}

// checkMask validates a mask for an image of shape x.
func (d Dropout) checkMask(mask []bool, x padding.Descriptor) (padding.Descriptor, error) {
	if err := d.Validate(); err != nil {
		return padding.Descriptor{}, err
	}
	if err := checkDesc("dropout image", x); err != nil {
		return padding.Descriptor{}, err
	}
	m := d.MaskShape(x)
	if len(mask) != m.N*m.C*m.H*m.W {
		return m, fmt.Errorf("%w: dropout mask of %d values for an image %v (mask %v)", ErrShape, len(mask), x, m)
	}
	return m, nil
}

// DropoutForward returns y = mask ? x*scale : 0 for every element of x,
// scale = T(Scale()) (rounded to T once), mask from Mask or any mask of
// MaskShape. The product is one rounding in T: a float32 kernel that
// multiplies by the same float32 scale gives the same bits. A dropped
// element is +0 whatever x holds (NaN and Inf included: MPS's "outputs
// 0", not PyTorch's x*0).
func DropoutForward[T Float](d Dropout, mask []bool, x Tensor[T]) (Tensor[T], error) {
	return dropoutApply(d, mask, x, "source")
}

// DropoutGradient returns dx = mask ? dy*scale : 0, the gradient of
// DropoutForward for the same mask, with DropoutForward's rounding.
func DropoutGradient[T Float](d Dropout, mask []bool, dy Tensor[T]) (Tensor[T], error) {
	return dropoutApply(d, mask, dy, "source gradient")
}

func dropoutApply[T Float](d Dropout, mask []bool, x Tensor[T], role string) (Tensor[T], error) {
	if err := x.check(role); err != nil {
		return Tensor[T]{}, err
	}
	m, err := d.checkMask(mask, x.Shape())
	if err != nil {
		return Tensor[T]{}, err
	}
	scale := T(d.Scale())
	out := NewTensor[T](x.N, x.C, x.H, x.W)
	i := 0
	for n := 0; n < x.N; n++ {
		for c := 0; c < x.C; c++ {
			for y := 0; y < x.H; y++ {
				for xx := 0; xx < x.W; xx++ {
					if mask[d.maskIndex(m, n, c, y, xx)] {
						out.Data[i] = x.Data[i] * scale
					}
					i++
				}
			}
		}
	}
	return out, nil
}
