package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// maxIters bounds --iters: a run count that is still a measurement (about
// 30 years at one run a second); its memory does not depend on it.
const maxIters = 1_000_000_000

// timeSample keeps the durations of up to timeSampleSize runs, a uniform
// random sample of all added (reservoir sampling, with a fixed seed), so
// that a median over any number of runs takes bounded memory.
type timeSample struct {
	d   []time.Duration
	n   int
	rng *rand.Rand
}

const timeSampleSize = 1 << 14

func (s *timeSample) add(d time.Duration) {
	s.n++
	if len(s.d) < timeSampleSize {
		s.d = append(s.d, d)
		return
	}
	if s.rng == nil {
		s.rng = rand.New(rand.NewPCG(1, 2))
	}
	if i := s.rng.IntN(s.n); i < timeSampleSize {
		s.d[i] = d
	}
}

// median returns the sample's median (0 when empty).
func (s *timeSample) median() time.Duration {
	if len(s.d) == 0 {
		return 0
	}
	c := slices.Clone(s.d)
	slices.Sort(c)
	return c[len(c)/2]
}

// describe says what the median is of: "N" runs, or "a sample of K of N".
func (s *timeSample) describe() string {
	if s.n <= len(s.d) {
		return fmt.Sprint(s.n)
	}
	return fmt.Sprintf("a sample of %d of %d", len(s.d), s.n)
}
