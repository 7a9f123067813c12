package html

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
)

// finding says in words what the page shows, for a reader who reads
// nothing else: which run is best on the SLOs and by how much, how smooth
// its streams are, and the dominant stall cause. Runs rank by SLO goodput,
// then ITL goodput, then the p99 across streams of per-stream p99 ITL.
func finding(runs []reports.Run, names []string) []string {
	order := make([]int, len(runs))
	for i := range order {
		order[i] = i
	}
	s := func(i int) *reports.Summary { return &runs[i].Summary }
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(s(b).SLOGoodput, s(a).SLOGoodput); c != 0 {
			return c
		}
		if c := cmp.Compare(s(b).ITLGoodput, s(a).ITLGoodput); c != 0 {
			return c
		}
		return cmp.Compare(s(a).StreamP99ITL.P99, s(b).StreamP99ITL.P99)
	})
	best, worst := order[0], order[len(order)-1]
	slo := sloWords(runs[best].Config.Metrics.SLO)
	if slo == "none" {
		slo = "no limits set: every finished request counts"
	}
	pct := func(v float64) string { return fmt.Sprintf("%.1f %%", 100*v) }
	smooth := func(i int) string {
		if s(i).GapsUnavailable {
			return "its file records no gaps between tokens"
		}
		return fmt.Sprintf("%s of its streams never waited more than θ = %g ms for a token, and the p99 across streams of each stream's p99 ITL is %.1f ms",
			pct(s(i).ITLGoodput), s(i).ITLGoodputMS, s(i).StreamP99ITL.P99)
	}
	var out []string
	if len(runs) == 1 {
		out = append(out, fmt.Sprintf("%s: %s of %d requests met the SLOs (%s)%s; %s.",
			names[0], pct(s(0).SLOGoodput), s(0).Requests, slo, lost(s(0)), smooth(0)))
	} else {
		gap := 100 * (s(best).SLOGoodput - s(worst).SLOGoodput)
		if gap > 0 {
			out = append(out, fmt.Sprintf("Best on the SLOs (%s): %s, with %s SLO goodput%s against %s for %s, the worst of the %d runs: %.1f points apart.",
				slo, names[best], pct(s(best).SLOGoodput), lost(s(best)), pct(s(worst).SLOGoodput), names[worst], len(runs), gap))
		} else {
			out = append(out, fmt.Sprintf("All %d runs meet the SLOs (%s) alike, %s SLO goodput; on their streams %s ranks first.",
				len(runs), slo, pct(s(best).SLOGoodput), names[best]))
		}
		out = append(out, fmt.Sprintf("In %s %s; in %s %s.", names[best], smooth(best), names[worst], smooth(worst)))
	}
	return append(out, stallFinding(runs, names))
}

// lost says how many requests a run turned away or lost, if any.
func lost(s *reports.Summary) string {
	var parts []string
	if s.Rejected > 0 {
		parts = append(parts, fmt.Sprintf("%d rejected", s.Rejected))
	}
	if s.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", s.Failed))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// stallFinding names the cause with the most stall time over all runs.
func stallFinding(runs []reports.Run, names []string) string {
	var total float64
	byCause := map[string]float64{}
	measured, stalls := false, 0
	for i := range runs {
		s := &runs[i].Summary
		measured = measured || s.Measured
		stalls += s.Stalls
		for c, v := range s.StallMSByCause {
			byCause[c] += v
			total += v
		}
	}
	thr := runs[0].Summary.StallThresholdMS
	if measured {
		return fmt.Sprintf("Stall causes are unknown for measured streams (a client sees that a gap was long, not why): %d gaps over %g ms.", stalls, thr)
	}
	if total == 0 {
		return fmt.Sprintf("No gap between tokens exceeded the stall threshold of %g ms.", thr)
	}
	dominant, most := "", -1.0
	for _, c := range sim.Causes() {
		if v := byCause[c.String()]; v > most {
			dominant, most = c.String(), v
		}
	}
	where, share := "", 0.0
	for i := range runs {
		if v := runs[i].Summary.StallMSByCause[dominant]; v > share {
			where, share = names[i], v
		}
	}
	return fmt.Sprintf("The dominant stall cause is %s: %.0f %% of the stall time over gaps above %g ms (%.0f ms of %.0f ms), most of it in %s.",
		dominant, 100*most/total, thr, most, total, where)
}
