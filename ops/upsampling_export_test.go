package ops

// SetUpsamplingExact makes the aligned-corner upsampling kernels divide
// positions with true divisions, as they do for images whose positions
// reach 2^31; the returned function restores the choice by size.
func SetUpsamplingExact(on bool) (restore func()) {
	old := upForceExact
	upForceExact = on
	return func() { upForceExact = old }
}
