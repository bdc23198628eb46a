package padding

import "math"

// Reference formulas of other frameworks, written as they write them, for
// tables to compare against.

// tfSame is TensorFlow's SAME: out = ceil(src/stride),
// pad_total = max((out-1)*stride + ke - src, 0), pad_before = pad_total/2.
func tfSame(src, ke, stride int) (out, padBefore, padTotal int) {
	out = (src + stride - 1) / stride
	padTotal = max((out-1)*stride+ke-src, 0)
	return out, padTotal / 2, padTotal
}

// tfValid is TensorFlow's VALID: out = ceil((src - ke + 1)/stride), the
// first window starting at pixel 0.
func tfValid(src, ke, stride int) int {
	return (src - ke + stride) / stride
}

// divRtn is PyTorch's div_rtn: division rounding toward negative infinity.
func divRtn(x, y int) int {
	q, r := x/y, x%y
	if r != 0 && (r < 0) != (y < 0) {
		q--
	}
	return q
}

// torchOut is PyTorch's pooling_output_shape_pad_lr (aten/src/ATen/native/
// Pool.h), current form: the last-window rule applies in ceil mode.
func torchOut(src, k, padL, padR, stride, dilation int, ceilMode bool) int {
	c := 0
	if ceilMode {
		c = stride - 1
	}
	out := divRtn(src+padL+padR-dilation*(k-1)-1+c, stride) + 1
	if ceilMode {
		// ensure that the last pooling starts inside the image
		if (out-1)*stride >= src+padL {
			out--
		}
	}
	return out
}

// caffeOut is Caffe's PoolingLayer::Reshape: a float ceil, and the
// last-window rule when any pad (of either axis) is non-zero.
func caffeOut(src, k, pad, stride int, anyPad bool) int {
	out := int(math.Ceil(float64(src+2*pad-k)/float64(stride))) + 1
	if anyPad && (out-1)*stride >= src+pad {
		out--
	}
	return out
}

// extent returns the pixels [start, end) spanned by the window of
// destination i (first tap to last tap).
func extent(a Axis, i, stride, ke int) (start, end int) {
	start = i*stride - a.Before
	return start, start + ke
}
