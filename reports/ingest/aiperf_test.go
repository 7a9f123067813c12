package ingest_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
)

// aiperfFile is AIPerf's example export of gpt-oss-20b (ai-dynamo/aiperf,
// Apache-2.0): 100 requests, 11 cancelled.
func aiperfFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(sharedData, "streams/aiperf_gpt-oss-20b/profile_export.jsonl")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no AIPerf export: %v", err)
	}
	return p
}

// TestAIPerfMatchesIndependent checks the AIPerf import against the
// definitions computed straight from the file: error records are failed
// requests, never streams; TTFT, pooled ITL (inter_chunk_latency) and
// per-stream figures equal the independent computation to 1e-9, and every
// stream's TPOT equals AIPerf's own inter_token_latency to 1e-9.
func TestAIPerfMatchesIndependent(t *testing.T) {
	path := aiperfFile(t)
	type metric struct {
		Value json.RawMessage `json:"value"`
	}
	var ttft, pooled, streamP99 []float64
	var tpotAIPerf []float64
	failed, total := 0, 0
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r struct {
			Metrics map[string]metric `json:"metrics"`
			Error   any               `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		total++
		if r.Error != nil {
			failed++
			continue
		}
		var v float64
		var gaps []float64
		_ = json.Unmarshal(r.Metrics["ttft"].Value, &v)
		ttft = append(ttft, v)
		_ = json.Unmarshal(r.Metrics["inter_chunk_latency"].Value, &gaps)
		pooled = append(pooled, gaps...)
		g := slices.Sorted(slices.Values(gaps))
		streamP99 = append(streamP99, numpyPercentile(g, 99))
		_ = json.Unmarshal(r.Metrics["inter_token_latency"].Value, &v)
		tpotAIPerf = append(tpotAIPerf, v)
	}
	rec, s := analyzeFile(t, path, "")
	if rec.Format != ingest.FormatAIPerf {
		t.Fatalf("detected %q, want aiperf", rec.Format)
	}
	if s.Requests != total || s.Failed != failed || s.Finished != total-failed || failed == 0 {
		t.Errorf("requests %d finished %d failed %d; want %d, %d, %d (and some failed)", s.Requests, s.Finished, s.Failed, total, total-failed, failed)
	}
	if s.FailedByReason["RequestCancellationError"] != failed {
		t.Errorf("failed by reason %v, want %d RequestCancellationError", s.FailedByReason, failed)
	}
	for _, xs := range [][]float64{ttft, pooled, streamP99} {
		slices.Sort(xs)
	}
	var mean float64
	for _, g := range pooled {
		mean += g
	}
	mean /= float64(len(pooled))
	checks := []struct {
		what      string
		got, want float64
	}{
		{"TTFT p50", s.TTFT.P50, numpyPercentile(ttft, 50)}, {"TTFT p99", s.TTFT.P99, numpyPercentile(ttft, 99)},
		{"pooled ITL mean", s.ITLPooled.Mean, mean}, {"pooled ITL p50", s.ITLPooled.P50, numpyPercentile(pooled, 50)},
		{"pooled ITL p99", s.ITLPooled.P99, numpyPercentile(pooled, 99)}, {"pooled ITL max", s.ITLPooled.Max, pooled[len(pooled)-1]},
		{"stream p99 ITL p99", s.StreamP99ITL.P99, numpyPercentile(streamP99, 99)},
	}
	for _, c := range checks {
		if !relEqual(c.got, c.want, 1e-9) {
			t.Errorf("%s: got %.17g, want %.17g", c.what, c.got, c.want)
		}
		t.Logf("%-18s %.17g vs %.17g", c.what, c.got, c.want)
	}
	res := rec.Result(sim.DefaultConfig().Metrics)
	for i := range res.Streams.Len() {
		st := res.Streams.At(i)
		got := sim.TPOTOf(res.Measured.Streams[i].E2EL-res.Measured.Streams[i].TTFT, st.OutputTokens) / 1e6
		if !relEqual(got, tpotAIPerf[i], 1e-9) {
			t.Errorf("stream %d: TPOT %.17g ms, AIPerf's inter_token_latency %.17g", st.ID, got, tpotAIPerf[i])
		}
	}
	if rec.Duration <= 0 {
		t.Errorf("duration %g ns", rec.Duration)
	}
}
