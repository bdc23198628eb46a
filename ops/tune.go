package ops

import (
	"os"
	"strconv"
	"strings"
)

// tuning overrides the work shapes the kernels choose, for measuring
// alternatives on a device without rebuilding: VKMPS_TUNE holds
// comma-separated key=value pairs, read once at start-up. A development
// aid, not an API: unknown keys and bad values are ignored, and results
// stay exact under any setting.
//
//	ox=N        destination pixels per invocation of the direct forward passes (1, 2, 4 or 8; argmax passes 4 or 8)
//	gathercx=N  cells per gather invocation (1..8)
//	wg=N        invocations per workgroup aimed at (32..1024, a power of two)
//	vw=N        widest load of the direct passes, in elements (1, 2, 4 or 8)
//	vstore=0    no vector stores
//	argmax=N    the direct argmax pass: 1 tap by tap with selects, 2 maximum then first equal
type tuning struct {
	ox, gatherCX, wg, vw int
	argmax               int
	noVStore             bool
}

var tune = parseTuning(os.Getenv("VKMPS_TUNE"))

func parseTuning(s string) tuning {
	var t tuning
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			continue
		}
		switch k {
		case "ox":
			if n == 1 || n == 2 || n == 4 || n == 8 {
				t.ox = n
			}
		case "gathercx":
			if n >= 1 && n <= 8 {
				t.gatherCX = n
			}
		case "wg":
			if n >= 32 && n <= 1024 && n&(n-1) == 0 {
				t.wg = n
			}
		case "vw":
			if n == 1 || n == 2 || n == 4 || n == 8 {
				t.vw = n
			}
		case "argmax":
			if n == 1 || n == 2 {
				t.argmax = n
			}
		case "vstore":
			t.noVStore = n == 0
		}
	}
	return t
}
