package graphref

import "testing"

// TestEveryOpHasCPUEvaluation: every graph JSON op, and so every gradient a
// training graph can hold, runs on the CPU too.
func TestEveryOpHasCPUEvaluation(t *testing.T) {
	if m := missing(); len(m) > 0 {
		t.Errorf("graph ops without a CPU evaluation in graphref: %v", m)
	}
}
