package reports

import (
	"strings"
	"testing"

	"github.com/itlsim/itlsim/workloads"
)

// Four evenly spaced requests of two classes: rate, burstiness and the
// length percentiles are exact, and each class gets its row.
func TestInspectWorkload(t *testing.T) {
	var reqs []workloads.Request
	for i := range 4 {
		class := "chat"
		if i%2 == 1 {
			class = "batch"
		}
		reqs = append(reqs, workloads.Request{ID: i, Arrival: int64(i) * 500e6, InputTokens: 100 * (i + 1), OutputTokens: 10, Class: class})
	}
	s, err := InspectWorkload("four.jsonl", &workloads.Slice{Requests: reqs}, workloads.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 4 || s.DurationS != 1.5 || s.RatePerS != 2 || s.GapCV != 0 {
		t.Errorf("requests %d over %g s at %g/s, CV %g; want 4 over 1.5 s at 2/s, CV 0", s.Requests, s.DurationS, s.RatePerS, s.GapCV)
	}
	if s.Input.Mean != 250 || s.Input.P50 != 250 || s.Input.Max != 400 || s.Output.Max != 10 {
		t.Errorf("input %+v, output %+v", s.Input, s.Output)
	}
	if s.Format != "generated" || s.Source != "four.jsonl" || s.SchemaVersion != SchemaVersion {
		t.Errorf("format %q, source %q, schema %d", s.Format, s.Source, s.SchemaVersion)
	}
	if len(s.Classes) != 2 || s.Classes[0].Class != "batch" || s.Classes[0].Input.Max != 400 || s.Classes[1].Input.Max != 300 {
		t.Errorf("classes %+v: want batch (max 400) then chat (max 300)", s.Classes)
	}
	var b strings.Builder
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"source      four.jsonl (generated)\n", "rate        2.000 requests/s\n", "input  batch (2 requests)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
	if _, err := InspectWorkload("empty", &workloads.Slice{}, workloads.Config{}); err == nil {
		t.Error("an empty workload: no error")
	}
}
