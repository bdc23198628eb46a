package graph

// ScratchGrown returns how many times an executor's shared convolution
// scratch grew (each growth during a recording made it record again).
func ScratchGrown(e *Executor) uint64 {
	if e.scratch == nil {
		return 0
	}
	return e.scratch.Grown()
}
