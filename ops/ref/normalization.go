package ref

import (
	"fmt"
	"math"
)

// Batch and instance normalization in float64 (ops.BatchNormalization,
// ops.InstanceNormalization). Per-channel vectors (gamma, beta, means,
// variances and their gradients) are []float64 of length C.
//
// Batch normalization of channel c, over the M = N*H*W values of c:
//
//	z = gamma[c] * (x - mean[c]) / sqrt(var[c] + eps) + beta[c],  y = f(z)
//
// with f the fused neuron (NeuronNone for none). Training uses the batch's
// mean and biased variance (BatchNormStatistics), so they depend on x;
// inference uses given (running) values, constants. Instance normalization
// is the same per (n, c) plane over its H*W values, with gamma and beta per
// channel and no neuron.

// BatchNorm is a batch normalization's parameters: epsilon and the fused
// neuron.
type BatchNorm struct {
	Epsilon float64
	Neuron  Neuron
}

// normCheck validates x against per-channel vectors of length x.C.
func normCheck(x Tensor[float64], vecs ...[]float64) error {
	if err := x.check("source"); err != nil {
		return err
	}
	for _, v := range vecs {
		if len(v) != x.C {
			return fmt.Errorf("%w: per-channel vector of %d values for %d channels", ErrShape, len(v), x.C)
		}
	}
	return nil
}

// normSame reports a tensor whose shape differs from x's.
func normSame(x Tensor[float64], name string, t Tensor[float64]) error {
	if err := t.check(name); err != nil {
		return err
	}
	if t.Shape() != x.Shape() {
		return fmt.Errorf("%w: %s is %v, want %v", ErrShape, name, t.Shape(), x.Shape())
	}
	return nil
}

// BatchNormStatistics returns each channel's mean and biased variance
// over N, H and W (two passes in float64).
func BatchNormStatistics(x Tensor[float64]) (mean, variance []float64) {
	mean, variance = make([]float64, x.C), make([]float64, x.C)
	m := float64(x.N * x.H * x.W)
	plane := x.H * x.W
	for c := 0; c < x.C; c++ {
		s := 0.0
		for n := 0; n < x.N; n++ {
			for _, v := range x.Data[x.Index(n, c, 0, 0):][:plane] {
				s += v
			}
		}
		mu := s / m
		q := 0.0
		for n := 0; n < x.N; n++ {
			for _, v := range x.Data[x.Index(n, c, 0, 0):][:plane] {
				q += (v - mu) * (v - mu)
			}
		}
		mean[c], variance[c] = mu, q/m
	}
	return mean, variance
}

// Forward writes y = f(gamma*(x-mean)/sqrt(var+eps) + beta) per channel.
func (b BatchNorm) Forward(x Tensor[float64], gamma, beta, mean, variance []float64, y *Tensor[float64]) error {
	if y == nil {
		return fmt.Errorf("%w: nil destination", ErrShape)
	}
	if err := normCheck(x, gamma, beta, mean, variance); err != nil {
		return err
	}
	if err := normSame(x, "destination", *y); err != nil {
		return err
	}
	plane := x.H * x.W
	for n := 0; n < x.N; n++ {
		for c := 0; c < x.C; c++ {
			inv := 1 / math.Sqrt(variance[c]+b.Epsilon)
			i0 := x.Index(n, c, 0, 0)
			for i := i0; i < i0+plane; i++ {
				z := gamma[c]*(x.Data[i]-mean[c])*inv + beta[c]
				y.Data[i] = b.Neuron.Forward(z, c)
			}
		}
	}
	return nil
}

// Gradient writes dx (x's shape), dgamma and dbeta (length C) for the loss
// gradient dy w.r.t. y. With training the mean and variance are the
// batch's (pass BatchNormStatistics(x)) and their dependence on x is
// differentiated:
//
//	g = dy * f'(z),  xhat = (x - mean) * invstd,  invstd = 1/sqrt(var + eps)
//	dbeta = sum g,  dgamma = sum g*xhat          (sums over N, H, W)
//	dx = gamma*invstd * (g - dbeta/M - xhat*dgamma/M)     (training)
//	dx = gamma*invstd * g                                  (inference)
func (b BatchNorm) Gradient(x, dy Tensor[float64], gamma, beta, mean, variance []float64, training bool,
	dx *Tensor[float64], dgamma, dbeta []float64) error {
	if dx == nil {
		return fmt.Errorf("%w: nil destination gradient", ErrShape)
	}
	if err := normCheck(x, gamma, beta, mean, variance, dgamma, dbeta); err != nil {
		return err
	}
	if err := normSame(x, "source gradient", dy); err != nil {
		return err
	}
	if err := normSame(x, "destination gradient", *dx); err != nil {
		return err
	}
	plane := x.H * x.W
	m := float64(x.N * plane)
	g := make([]float64, len(x.Data))
	for c := 0; c < x.C; c++ {
		inv := 1 / math.Sqrt(variance[c]+b.Epsilon)
		sg, sgx := 0.0, 0.0
		for n := 0; n < x.N; n++ {
			i0 := x.Index(n, c, 0, 0)
			for i := i0; i < i0+plane; i++ {
				xhat := (x.Data[i] - mean[c]) * inv
				g[i] = dy.Data[i] * b.Neuron.Derivative(gamma[c]*xhat+beta[c], c)
				sg += g[i]
				sgx += g[i] * xhat
			}
		}
		dgamma[c], dbeta[c] = sgx, sg
		for n := 0; n < x.N; n++ {
			i0 := x.Index(n, c, 0, 0)
			for i := i0; i < i0+plane; i++ {
				v := g[i]
				if training {
					v -= sg/m + (x.Data[i]-mean[c])*inv*sgx/m
				}
				dx.Data[i] = gamma[c] * inv * v
			}
		}
	}
	return nil
}

// UpdateRunning applies PyTorch's running-statistics update after a
// training batch of count values per channel: running = (1-m)*running +
// m*batch, with the unbiased variance var*count/(count-1) for the running
// variance.
func UpdateRunning(runningMean, runningVar, mean, variance []float64, count int, momentum float64) {
	for c := range runningMean {
		runningMean[c] = (1-momentum)*runningMean[c] + momentum*mean[c]
		runningVar[c] = (1-momentum)*runningVar[c] + momentum*variance[c]*float64(count)/float64(count-1)
	}
}

// InstanceNorm is an instance normalization's epsilon.
type InstanceNorm struct{ Epsilon float64 }

// InstanceNormStatistics returns the mean and biased variance of every
// (n, c) plane, N*C values in NCHW plane order.
func InstanceNormStatistics(x Tensor[float64]) (mean, variance []float64) {
	plane := x.H * x.W
	mean, variance = make([]float64, x.N*x.C), make([]float64, x.N*x.C)
	for i := range mean {
		p := x.Data[i*plane : (i+1)*plane]
		s := 0.0
		for _, v := range p {
			s += v
		}
		mu := s / float64(plane)
		q := 0.0
		for _, v := range p {
			q += (v - mu) * (v - mu)
		}
		mean[i], variance[i] = mu, q/float64(plane)
	}
	return mean, variance
}

// Forward writes y = gamma[c]*(x-mean)/sqrt(var+eps) + beta[c] with the mean
// and biased variance of each (n, c) plane.
func (in InstanceNorm) Forward(x Tensor[float64], gamma, beta []float64, y *Tensor[float64]) error {
	if y == nil {
		return fmt.Errorf("%w: nil destination", ErrShape)
	}
	if err := normCheck(x, gamma, beta); err != nil {
		return err
	}
	if err := normSame(x, "destination", *y); err != nil {
		return err
	}
	mean, variance := InstanceNormStatistics(x)
	plane := x.H * x.W
	for i := range mean {
		c := i % x.C
		inv := 1 / math.Sqrt(variance[i]+in.Epsilon)
		for j := i * plane; j < (i+1)*plane; j++ {
			y.Data[j] = gamma[c]*(x.Data[j]-mean[i])*inv + beta[c]
		}
	}
	return nil
}

// Gradient writes dx, dgamma and dbeta: per plane
//
//	dx = gamma*invstd * (dy - mean(dy) - xhat*mean(dy*xhat))
//
// (means over the plane's H*W values), dbeta[c] = sum over n, h, w of dy,
// dgamma[c] = sum of dy*xhat.
func (in InstanceNorm) Gradient(x, dy Tensor[float64], gamma []float64, dx *Tensor[float64], dgamma, dbeta []float64) error {
	if dx == nil {
		return fmt.Errorf("%w: nil destination gradient", ErrShape)
	}
	if err := normCheck(x, gamma, dgamma, dbeta); err != nil {
		return err
	}
	if err := normSame(x, "source gradient", dy); err != nil {
		return err
	}
	if err := normSame(x, "destination gradient", *dx); err != nil {
		return err
	}
	mean, variance := InstanceNormStatistics(x)
	plane := x.H * x.W
	clear(dgamma)
	clear(dbeta)
	for i := range mean {
		c := i % x.C
		inv := 1 / math.Sqrt(variance[i]+in.Epsilon)
		sg, sgx := 0.0, 0.0
		for j := i * plane; j < (i+1)*plane; j++ {
			sg += dy.Data[j]
			sgx += dy.Data[j] * (x.Data[j] - mean[i]) * inv
		}
		dgamma[c] += sgx
		dbeta[c] += sg
		m := float64(plane)
		for j := i * plane; j < (i+1)*plane; j++ {
			xhat := (x.Data[j] - mean[i]) * inv
			dx.Data[j] = gamma[c] * inv * (dy.Data[j] - sg/m - xhat*sgx/m)
		}
	}
	return nil
}
