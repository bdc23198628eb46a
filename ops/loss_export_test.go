package ops

// SetLossGroupCap caps the workgroups of every loss.comp dispatch at n (0:
// the device's limit), so that tests reach the shader's grid stride with
// small tensors; the returned function restores the cap.
func SetLossGroupCap(n int) (restore func()) {
	old := lossGroupCap
	lossGroupCap = n
	return func() { lossGroupCap = old }
}
