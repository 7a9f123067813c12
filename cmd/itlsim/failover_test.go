package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/itlsim/itlsim/reports"
)

// Through the CLI: a failover aborts the stream on the primary by default,
// so the server view counts it cancelled and the freed capacity shortens
// everyone's wait; keep_primary leaves it running, so failovers can be
// compared with the primary's own finish (failover_saved_ms) at the price
// of that capacity. Same requests and draws in both runs.
func TestFailoverAbortsPrimary(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"run", "--requests", "300", "--network", "datacenter", "--failover-ms", "500ms",
		"--set", "cost.hiccup_rate_per_s=0.2", "--set", "cost.hiccup_ms=1500",
		"--vary", "delivery.failover.keep_primary=false,true", "--format", "json"}
	if code := Main(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc reports.Document
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(doc.Runs))
	}
	cut, kept := doc.Runs[0], doc.Runs[1]
	if cut.SummaryServer == nil || kept.SummaryServer == nil {
		t.Fatal("no summary_server")
	}
	c, k := cut.Summary, kept.Summary
	if c.Finished != 300 || k.Finished != 300 {
		t.Errorf("client view finished %d and %d, want every stream (the backup completes them)", c.Finished, k.Finished)
	}
	if c.Delivery.Failovers == 0 || cut.SummaryServer.Cancelled != c.Delivery.Failovers ||
		cut.SummaryServer.Finished+cut.SummaryServer.Cancelled != 300 || c.Delivery.FailoverSavedMS != 0 {
		t.Errorf("aborting: %d failovers, server %d cancelled + %d finished, saved %.0f ms",
			c.Delivery.Failovers, cut.SummaryServer.Cancelled, cut.SummaryServer.Finished, c.Delivery.FailoverSavedMS)
	}
	if kept.SummaryServer.Cancelled != 0 || kept.SummaryServer.Finished != 300 || k.Delivery.FailoverSavedMS == 0 {
		t.Errorf("keep_primary: server %d cancelled, %d finished, saved %.0f ms", kept.SummaryServer.Cancelled,
			kept.SummaryServer.Finished, k.Delivery.FailoverSavedMS)
	}
	if c.E2EL.Mean >= k.E2EL.Mean || c.TTFT.P50 >= k.TTFT.P50 {
		t.Errorf("aborting the primaries freed nothing: E2EL mean %.0f vs %.0f ms, TTFT p50 %.0f vs %.0f ms",
			c.E2EL.Mean, k.E2EL.Mean, c.TTFT.P50, k.TTFT.P50)
	}
}
