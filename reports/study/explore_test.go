package study

import (
	"fmt"
	"testing"

	"github.com/itlsim/itlsim/sim"
)

func TestExploreSteady(t *testing.T) {
	for _, n := range []int{1000, 4000, 16000} {
		for _, r := range []float64{17, 19, 20, 21, 22, 23, 25, 34} {
			cfg := sim.DefaultConfig()
			cfg.Workload.Requests = n
			cfg.Workload.Rate = r
			e, _ := sim.New(cfg)
			e.Run()
			st := DefaultSteadyRule().Judge(e.ServerResult())
			fmt.Printf("n=%d r=%g %s warm=%.1f arr=%d slope=%.3g [%.3g,%.3g] lim=%.3g %%/min=%.3g\n", n, r, st.Verdict, st.WarmUpS, st.Arrivals, st.TrendPerS, st.TrendLow, st.TrendHigh, st.LimitPerS, st.TrendPctPerMin)
		}
	}
}
