package ops

// Test hooks of the instance normalization kernels (package ops_test).

// SetINChunkBytes makes k cut planes of more than bytes bytes of input
// into segments of about that size (0: the default, bnMaxChunkBytes), so
// that small planes take the chunked passes; it returns a function
// restoring the old value.
func SetINChunkBytes(k interface{ inCoreOf() *inCore }, bytes int) (restore func()) {
	c := k.inCoreOf()
	old := c.chunkBytes
	c.chunkBytes = bytes
	return func() { c.chunkBytes = old }
}

func (k *InstanceNormalization) inCoreOf() *inCore         { return &k.inCore }
func (k *InstanceNormalizationGradient) inCoreOf() *inCore { return &k.inCore }
