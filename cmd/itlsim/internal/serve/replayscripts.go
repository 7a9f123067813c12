package serve

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
)

// Counts says how the served requests ended: finished, rejected and
// aborted by reason (cancelled: the client went away; write-timeout and
// drain: the server cut the stream), as the summary and the timelines
// file count them.
func Counts(res *sim.Result) string {
	parts := []string{fmt.Sprintf("%d finished", res.Finished)}
	if n := res.RejectedTotal(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d rejected", n))
	}
	whys := slices.Sorted(maps.Keys(res.Aborted))
	for _, why := range whys {
		parts = append(parts, fmt.Sprintf("%d %s", res.Aborted[why], why))
	}
	return strings.Join(parts, ", ")
}

// ReplayScripts reads the recording at path (format: an ingest format name,
// "" to detect it) and injects ro's pauses: one script per stream, offsets
// from its arrival. Replay serves the chunks as recorded: no smoothing,
// flush or network path.
func ReplayScripts(path, format string, ro ingest.ReplayOptions) ([]Script, error) {
	in, err := ingest.ParseFormat(format)
	if err != nil {
		return nil, fmt.Errorf("--replay-format: %w", err)
	}
	ro.Smoothing, ro.Flush, ro.Network = []string{"none"}, []string{"none"}, []string{"none"}
	plan, err := ro.PausePlan()
	if err != nil {
		return nil, err
	}
	mits, err := ro.Mitigations()
	if err != nil {
		return nil, err
	}
	recs, err := ingest.ReadFiles([]string{path}, in)
	if err != nil {
		return nil, err
	}
	scripts, err := Scripts(recs, plan, mits[0])
	if err != nil {
		return nil, err
	}
	if len(scripts) == 0 {
		return nil, fmt.Errorf("--replay %s: no stream with output to serve", path)
	}
	return scripts, nil
}
