package ops

// SetElementwiseTuning sets the element-wise kernels' work shapes for a
// benchmark or test (0: the default) and returns a function restoring the
// previous ones.
func SetElementwiseTuning(groups, softmaxSlices int) func() {
	old := ewTune
	ewTune = ewTuning{groups: groups, smSlices: softmaxSlices}
	return func() { ewTune = old }
}
