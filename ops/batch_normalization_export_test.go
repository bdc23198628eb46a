package ops

// Test hooks of the batch normalization kernels (package ops_test).

// SetBNChunkBytes makes k cut each channel's values into chunks of about
// bytes bytes of input (0: the default rule), so that small tensors run
// many chunks per channel; it returns a function restoring the old value.
func SetBNChunkBytes(k interface{ bnCoreOf() *bnCore }, bytes int) (restore func()) {
	c := k.bnCoreOf()
	old := c.chunkBytes
	c.chunkBytes = bytes
	return func() { c.chunkBytes = old }
}

// BNLastFused reports whether k's last training encode (forward, or
// EncodeAll) ran as the fused pass.
func BNLastFused(k interface{ bnCoreOf() *bnCore }) bool { return k.bnCoreOf().lastFused }

func (k *BatchNormalization) bnCoreOf() *bnCore                   { return &k.bnCore }
func (k *BatchNormalizationGradient) bnCoreOf() *bnCore           { return &k.bnCore }
func (k *BatchNormalizationStatisticsGradient) bnCoreOf() *bnCore { return &k.g.bnCore }

// BNFusedValues is bnFusedValues.
const BNFusedValues = bnFusedValues
