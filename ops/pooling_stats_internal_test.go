package ops

import (
	"os"
	"strings"
	"testing"
)

// TestPoolPipelineStatistics prints the driver compiler's statistics
// (registers, instructions, spills, where it reports them) of the direct
// forward passes and gathers of vkmps bench's two large pooling shapes,
// float32 and float16, under the tunings of bench/pool_f16_sweep.sh. A
// diagnosis aid for the GPU machine, run with
//
//	VKMPS_POOL_STATS=1 go test ./ops -run TestPoolPipelineStatistics -v
//
// ($VKMPS_POOL_STATS_TUNE: a space-separated list of tunings instead).
func TestPoolPipelineStatistics(t *testing.T) {
	dev := statsDevice(t, "VKMPS_POOL_STATS")
	tunings := []string{"fastmax=0", "", "ox=8,vw=8"}
	if s := os.Getenv("VKMPS_POOL_STATS_TUNE"); s != "" {
		tunings = strings.Fields(s)
	}
	shapes := []struct {
		name      string
		g         Geometry
		w, pad    int
		kind      PoolingKind
		destWidth int
	}{
		{"max 3x3/2 112", Geometry{3, 3, 2, 2, 1, 1}, 112, 1, KindMax, 56},
		{"max 2x2/2 56", Geometry{2, 2, 2, 2, 1, 1}, 56, 0, KindMax, 28},
		{"dilated 3x3/2 d2 112", Geometry{3, 3, 2, 2, 2, 2}, 112, 1, KindDilatedMax, 56},
		// 1x1 windows: a load and a store per value, the three kinds side
		// by side (run 3 of bench/results/h200-2026-11-28-s3 timed them).
		{"max 1x1 56", Geometry{1, 1, 1, 1, 1, 1}, 56, 0, KindMax, 56},
		{"avg 1x1 56", Geometry{1, 1, 1, 1, 1, 1}, 56, 0, KindAverage, 56},
		{"l2 1x1 56", Geometry{1, 1, 1, 1, 1, 1}, 56, 0, KindL2Norm, 56},
	}
	for _, ts := range tunings {
		tune, err := ParseTuning(ts)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range shapes {
			for _, f := range []Format{Float32, Float16} {
				if f == Float16 && !dev.Limits().Float16Storage {
					continue
				}
				ps := newPasses(dev, sh.kind, sh.g)
				ps.setTuning(tune)
				src := &Image{w: sh.w, format: f}
				for _, pass := range []passKind{passValues, passArgmax} {
					if pass == passArgmax && !sh.kind.IsMax() {
						continue
					}
					k := ps.key(pass, EdgeClamp, src, passTarget{dstW: sh.destWidth, w: sh.destWidth, h: sh.destWidth, z: 64, firstSrcCol: -sh.pad})
					p, err := ps.pipeline(k)
					if err != nil {
						t.Errorf("%s %v %s: %v", sh.name, f, ts, err)
						continue
					}
					st, err := p.Statistics()
					if err != nil {
						t.Errorf("%s %v %s: %v", sh.name, f, ts, err)
						continue
					}
					t.Logf("%s %v pass %d tune %q (ox %d vw %d vstore %v):\n%s", sh.name, f, pass, ts,
						stripWidth(sh.g, pass, tune), k.vw, k.vstore, st)
				}
			}
		}
	}
}

// TestPoolGatherStatistics prints the statistics of the gathers of the
// same shapes, as TestPoolPipelineStatistics does for the forward passes.
func TestPoolGatherStatistics(t *testing.T) {
	dev := statsDevice(t, "VKMPS_POOL_STATS")
	tunings := []string{"gvec=0", "gathercx=1", ""}
	if s := os.Getenv("VKMPS_POOL_STATS_TUNE"); s != "" {
		tunings = strings.Fields(s)
	}
	for _, ts := range tunings {
		tune, err := ParseTuning(ts)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []Geometry{{3, 3, 2, 2, 1, 1}, {2, 2, 2, 2, 1, 1}, {3, 3, 2, 2, 2, 2}} {
			for _, kind := range []PoolingKind{KindMax, KindAverage, KindL2Norm} {
				for _, f16 := range []bool{false, true} {
					if f16 && !dev.Limits().Float16Storage {
						continue
					}
					p, err := newPoolingGradient(dev, kind, g)
					if err != nil {
						t.Fatal(err)
					}
					if err := p.SetTuning(tune); err != nil {
						t.Fatal(err)
					}
					bits := 0
					if kind == KindMax {
						bits = argmaxBitsFor(g.KernelWidth * g.KernelHeight)
					}
					f := Float32
					if f16 {
						f = Float16
					}
					cx, _ := gatherVectorCells(g, tune, f)
					loop := gatherLoop(g, cx)
					// dx 112 wide, windows from column -1 (PyTorch's pad 1).
					gv, gpar := gatherVector(g, tune, cx, loop, dev.Limits(), 0, -1, &Image{w: 112, format: f})
					pl, err := p.gather(gatherKey{bits: bits, f16: f16, loop: loop, cx: int8(cx), gv: int8(gv), gpar: int8(gpar), pz: int8(gatherPlanes(tune, f, 1<<30)), lx: 32, ly: 8, lz: 1})
					if err != nil {
						t.Errorf("%v %v: %v", kind, g, err)
						continue
					}
					st, err := pl.Statistics()
					if err != nil {
						t.Errorf("%v %v: %v", kind, g, err)
						continue
					}
					t.Logf("gather %v %v f16 %v tune %q (cx %d gv %d gpar %d pz %d):\n%s", kind, g, f16, ts, cx, gv, gpar, gatherPlanes(tune, f, 1<<30), st)
				}
			}
		}
	}
}
