package ref

import (
	"fmt"
	"math"
)

// SoftMax returns, for every pixel of x, the softmax over its feature
// channels (MPSCNNSoftMax), NCHW in float64:
//
//	y_c = exp(x_c - m) / sum_k exp(x_k - m),  m = max_k x_k
//
// With log set it returns the log-softmax (MPSCNNLogSoftMax):
// x_c - m - log(sum_k exp(x_k - m)).
func SoftMax[T Float](x Tensor[T], log bool) ([]float64, error) {
	if err := x.check("source"); err != nil {
		return nil, err
	}
	out := make([]float64, len(x.Data))
	plane := x.H * x.W
	for n := 0; n < x.N; n++ {
		for p := 0; p < plane; p++ {
			at := func(c int) int { return (n*x.C+c)*plane + p }
			m := math.Inf(-1)
			for c := 0; c < x.C; c++ {
				m = math.Max(m, float64(x.Data[at(c)]))
			}
			s := 0.0
			for c := 0; c < x.C; c++ {
				s += math.Exp(float64(x.Data[at(c)]) - m)
			}
			ls := math.Log(s)
			for c := 0; c < x.C; c++ {
				v := float64(x.Data[at(c)]) - m
				if log {
					out[at(c)] = v - ls
				} else {
					out[at(c)] = math.Exp(v) / s
				}
			}
		}
	}
	return out, nil
}

// SoftMaxGradient returns the gradient of the softmax's (log: the
// log-softmax's) source given dy and the forward's result y, as MPS's
// gradients take them (MPSCNNSoftMaxGradient, MPSCNNLogSoftMaxGradient),
// per pixel over its channels:
//
//	softmax:     dx_c = y_c * (dy_c - sum_k dy_k * y_k)
//	log-softmax: dx_c = dy_c - exp(y_c) * sum_k dy_k
func SoftMaxGradient[T Float](dy, y Tensor[T], log bool) ([]float64, error) {
	if err := y.check("forward result"); err != nil {
		return nil, err
	}
	if err := dy.check("source gradient"); err != nil {
		return nil, err
	}
	if dy.Shape() != y.Shape() {
		return nil, fmt.Errorf("%w: source gradient %v and forward result %v differ", ErrShape, dy.Shape(), y.Shape())
	}
	out := make([]float64, len(y.Data))
	plane := y.H * y.W
	for n := 0; n < y.N; n++ {
		for p := 0; p < plane; p++ {
			at := func(c int) int { return (n*y.C+c)*plane + p }
			s := 0.0
			for c := 0; c < y.C; c++ {
				if log {
					s += float64(dy.Data[at(c)])
				} else {
					s += float64(dy.Data[at(c)]) * float64(y.Data[at(c)])
				}
			}
			for c := 0; c < y.C; c++ {
				g, v := float64(dy.Data[at(c)]), float64(y.Data[at(c)])
				if log {
					out[at(c)] = g - math.Exp(v)*s
				} else {
					out[at(c)] = v * (g - s)
				}
			}
		}
	}
	return out, nil
}
