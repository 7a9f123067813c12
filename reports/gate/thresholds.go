package gate

import (
	"fmt"

	"github.com/itlsim/itlsim/sim"
)

// OverrideThresholds sets in m the thresholds the gate's command line
// gave: each of given's fields whose flag changed names (--stall-threshold,
// --itl-goodput, --unstable-jitter, --slo-ttft, --slo-tpot, --slo-e2el),
// and percentiles when not empty (--percentiles).
func OverrideThresholds(m *sim.MetricsConfig, given sim.MetricsConfig, changed func(flag string) bool, percentiles string) error {
	set := func(name string, dst *float64, v float64) {
		if changed(name) {
			*dst = v
		}
	}
	set("stall-threshold", &m.StallThresholdMS, given.StallThresholdMS)
	set("itl-goodput", &m.ITLGoodputMS, given.ITLGoodputMS)
	set("unstable-jitter", &m.UnstableJitter, given.UnstableJitter)
	set("slo-ttft", &m.SLO.TTFTMS, given.SLO.TTFTMS)
	set("slo-tpot", &m.SLO.TPOTMS, given.SLO.TPOTMS)
	set("slo-e2el", &m.SLO.E2ELMS, given.SLO.E2ELMS)
	if percentiles != "" {
		ps, err := sim.ParsePercentiles(percentiles)
		if err != nil {
			return fmt.Errorf("--percentiles: %w", err)
		}
		m.Percentiles = ps
	}
	return nil
}
