package graph

// ScratchGrown returns how many times an executor's shared convolution
// scratches grew (each growth during a recording made it record again).
func ScratchGrown(e *Executor) uint64 { return e.scratchGrown() }

// ScratchSizes returns the bytes of an executor's two shared convolution
// scratches: the weight gradients' and the other kernels'.
func ScratchSizes(e *Executor) (weights, others uint64) {
	if e.scratch == nil {
		return 0, 0
	}
	return e.weightScratch.Size(), e.scratch.Size()
}
