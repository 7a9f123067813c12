package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports/gate"
)

// writeStreams writes n synthetic streams in itlsim's stream format: one
// arrival every 100 ms, a 150 ms TTFT and 60 gaps of 20 ms ± 2 ms drawn
// from seed; every stallEvery-th stream (0: none) gets one 600 ms pause.
func writeStreams(t *testing.T, path string, n int, seed uint64, stallEvery int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	for i := range n {
		arrival := float64(i) * 0.1
		at := arrival + 0.15
		times := []string{strconv.FormatFloat(at, 'f', 6, 64)}
		for j := range 60 {
			g := 0.018 + 0.004*rng.Float64()
			if stallEvery > 0 && i%stallEvery == 0 && j == 30 {
				g = 0.6
			}
			at += g
			times = append(times, strconv.FormatFloat(at, 'f', 6, 64))
		}
		fmt.Fprintf(&b, `{"id":%d,"arrival_s":%g,"input_tokens":100,"chunk_times_s":[%s]}`+"\n", i, arrival, strings.Join(times, ","))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gateReport(t *testing.T, args ...string) (gate.Report, cliOutcome) {
	t.Helper()
	r := execCLI(t, append([]string{"gate", "--format", "json"}, args...)...)
	var rep gate.Report
	if r.code != 2 {
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("gate --format json: %v\n%s\n%s", err, r.stdout, r.stderr)
		}
	}
	return rep, r
}

// TestGateIdenticalPasses: a file against itself changes nothing and
// passes; its interval (the two sides are resampled independently) covers
// 0 and stays far inside the tolerance.
func TestGateIdenticalPasses(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	writeStreams(t, a, 200, 1, 0)
	rep, r := gateReport(t, "--baseline", a, "--candidate", a, "--bootstrap", "300", "--metric", "stream_p99_itl_p99,itl_goodput,ttft_p99,itl_pooled_p99")
	if r.code != 0 || !rep.Pass {
		t.Fatalf("exit %d, pass %v\n%s", r.code, rep.Pass, r.stderr)
	}
	for _, row := range rep.Rows {
		if row.Change != 0 || row.Low > 0 || row.High < 0 || row.Low < -0.01 || row.High > 0.01 || row.Verdict != gate.Pass || row.Noise {
			t.Errorf("%s: change %v [%v, %v] %s, want 0 within ±1 %% and pass", row.Metric, row.Change, row.Low, row.High, row.Verdict)
		}
	}
}

// TestGateInjectedStalls: the same streams with a 600 ms pause in every
// fourth fail the default metric and ITL goodput (exit 1); a pause in
// every 40th (2.5 % of streams, beyond the p99) still fails the p99, while
// goodput, 2.5 points lower, is within the 5-point tolerance.
func TestGateInjectedStalls(t *testing.T) {
	dir := t.TempDir()
	base, many, few := filepath.Join(dir, "base.jsonl"), filepath.Join(dir, "many.jsonl"), filepath.Join(dir, "few.jsonl")
	writeStreams(t, base, 200, 1, 0)
	writeStreams(t, many, 200, 2, 4)
	writeStreams(t, few, 200, 2, 40)
	rep, r := gateReport(t, "--baseline", base, "--candidate", many, "--metric", "stream_p99_itl_p99,itl_goodput,tpot_p50")
	if r.code != 1 || rep.Pass {
		t.Fatalf("stalls in a quarter of the streams: exit %d, pass %v\n%s", r.code, rep.Pass, r.stdout)
	}
	verdicts := map[string]string{}
	for _, row := range rep.Rows {
		verdicts[row.Metric] = row.Verdict
	}
	if verdicts["stream_p99_itl_p99"] != gate.Fail || verdicts["itl_goodput"] != gate.Fail {
		t.Errorf("verdicts %v: want stream_p99_itl_p99 and itl_goodput to fail", verdicts)
	}
	if !strings.Contains(r.stderr, "gate failed: stream_p99_itl_p99, itl_goodput") {
		t.Errorf("stderr %q does not name the failed metrics", r.stderr)
	}
	rep, r = gateReport(t, "--baseline", base, "--candidate", few, "--metric", "stream_p99_itl_p99,itl_goodput")
	if r.code != 1 || rep.Rows[0].Verdict != gate.Fail || rep.Rows[1].Verdict != gate.Pass {
		t.Errorf("stalls in 2.5 %% of streams: exit %d, rows %+v", r.code, rep.Rows)
	}
}

// TestGateSeedNoisePasses: two simulations of the default scenario that
// differ only by their seed pass on the p99 of per-stream p99 ITL and on
// ITL goodput — the bootstrap's interval covers the difference — in both
// directions; one with engine hiccups fails. (The default set also holds
// the p99 of per-stream max gap, which is set by the few largest steps of
// one run: different seeds draw different ones, a change of the offered
// load the interval does not cover, so gates compare on one seed.) The
// second seed is 4: seed 2's 300 requests offer a heavier load than seed
// 1's — 12.4k against 11.4k prompt tokens/s and 3.0k against 2.65k output
// tokens/s (`itlsim run --requests 300 --seed 2`, input_tokens_per_s and
// output_tokens_per_s) — and its tail is 40 % higher for that reason, a
// real change; seed 4 offers seed 1's load within 1 % in prompt tokens
// and 2.5 % in output tokens (11.3k, 2.59k), as two samples of one
// workload should. (Seeds 3, 5 and 7 pass too.)
func TestGateSeedNoisePasses(t *testing.T) {
	dir := t.TempDir()
	one, two, hic := filepath.Join(dir, "s1.json"), filepath.Join(dir, "s4.json"), filepath.Join(dir, "hiccup.json")
	mustRunCLI(t, "run", "--requests", "300", "--json", one)
	mustRunCLI(t, "run", "--requests", "300", "--seed", "4", "--json", two)
	mustRunCLI(t, "run", "--requests", "300", "--hiccup-rate", "1", "--hiccup-ms", "400", "--json", hic)
	for _, pair := range [][2]string{{one, two}, {two, one}} {
		rep, r := gateReport(t, "--baseline", pair[0], "--candidate", pair[1], "--metric", "stream_p99_itl_p99,itl_goodput")
		if r.code != 0 || !rep.Pass {
			t.Errorf("seeds %s against %s: exit %d, rows %+v", filepath.Base(pair[1]), filepath.Base(pair[0]), r.code, rep.Rows)
		}
		if rep.Rows[0].Low >= 0 || rep.Rows[0].High <= 0 {
			t.Errorf("seed noise: interval [%v, %v] does not cover 0", rep.Rows[0].Low, rep.Rows[0].High)
		}
	}
	rep, r := gateReport(t, "--baseline", one, "--candidate", hic)
	if r.code != 1 || rep.Pass || rep.Rows[0].Low <= 0.05 {
		t.Errorf("hiccups: exit %d, rows %+v", r.code, rep.Rows)
	}
}

// TestGateDocumentMatchesSummary: the gate's baseline value of a --json
// document, recomputed from its stream rows, is the document's own summary.
func TestGateDocumentMatchesSummary(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "a.json")
	mustRunCLI(t, "run", "--requests", "200", "--json", js)
	doc := readDoc(t, mustRead(t, js))
	s := doc.Runs[0].Summary
	rep, r := gateReport(t, "--baseline", js, "--candidate", js, "--metric", "stream_p99_itl_p99,stream_max_gap_p99,ttft_p99,tpot_p50,itl_goodput,slo_goodput,unstable_stream_share")
	// 200 streams cannot detect a 25 % regression of every tail (exit 3,
	// inconclusive); what is checked here is the baseline's values.
	if r.code != 0 && r.code != 3 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := []float64{
		s["stream_p99_itl_ms"].(map[string]any)["p99"].(float64), s["stream_max_gap_ms"].(map[string]any)["p99"].(float64),
		s["ttft_ms"].(map[string]any)["p99"].(float64), s["tpot_ms"].(map[string]any)["p50"].(float64),
		s["itl_goodput"].(float64), s["slo_goodput"].(float64), s["unstable_stream_share"].(float64),
	}
	for i, row := range rep.Rows[:len(want)] {
		if !relClose(float64(row.Baseline), want[i], 1e-12) {
			t.Errorf("%s: gate %.17g, document summary %.17g", row.Metric, float64(row.Baseline), want[i])
		}
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGateMarkdownGolden is the pull-request comment for the injected
// stalls, as reviewers see it.
func TestGateMarkdownGolden(t *testing.T) {
	dir := t.TempDir()
	base, cand := filepath.Join(dir, "baseline.jsonl"), filepath.Join(dir, "candidate.jsonl")
	writeStreams(t, base, 200, 1, 0)
	writeStreams(t, cand, 200, 2, 4)
	args := []string{"gate", "--baseline", base, "--candidate", cand, "--metric", "stream_p99_itl_p99,stream_max_gap_p99,itl_goodput,ttft_p99,tpot_p50", "--format", "markdown"}
	r := execCLI(t, args...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1: %s", r.code, r.stderr)
	}
	got := "<!-- itlsim gate --format markdown: 200 synthetic streams, a 600 ms pause in every 4th of the candidate's; " +
		"rewrite with: go test ./cmd/itlsim -run TestGateMarkdownGolden -update -->\n" + strings.ReplaceAll(r.stdout, dir+string(filepath.Separator), "")
	golden := "testdata/gate/injected-stalls.md"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s changed; if intended, rerun with -update and review the diff.\ngot:\n%s", golden, got)
	}
	// The same seed gives the same report.
	if again := execCLI(t, args...); again.stdout != r.stdout {
		t.Errorf("two runs with one seed differ")
	}
}

func TestGateOutputs(t *testing.T) {
	dir := t.TempDir()
	a, js := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "gate.json")
	writeStreams(t, a, 50, 1, 0)
	r := execCLI(t, "gate", "--baseline", a, "--candidate", a, "--json", js)
	if r.code != 0 || !strings.Contains(r.stdout, "itlsim gate: PASS") || !strings.Contains(r.stdout, "95% CI of change") {
		t.Errorf("table: exit %d\n%s", r.code, r.stdout)
	}
	var rep gate.Report
	if err := json.Unmarshal(mustRead(t, js), &rep); err != nil || !rep.Pass || rep.Bootstrap != 1000 || rep.Seed != 1 {
		t.Errorf("--json file: %v %+v", err, rep)
	}
	r = execCLI(t, "gate", "--help")
	for _, m := range []string{"stream_p99_itl_p99", "itl_goodput", "stream_max_gap_p99", "ttft_p99", "Exit status"} {
		if !strings.Contains(r.stdout, m) {
			t.Errorf("--help does not list %s", m)
		}
	}
}

// TestGateExitCodes: 2 for every kind of bad input, never 1.
func TestGateExitCodes(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	writeStreams(t, a, 20, 1, 0)
	noStreams := filepath.Join(dir, "summary-only.json")
	os.WriteFile(noStreams, []byte(`{"schema_version": 2, "scenario": {}, "runs": [{"name": "x", "summary": {"requests": 5}, "streams": []}]}`), 0o644)
	two := filepath.Join(dir, "two.json")
	// 60 requests: with 30 the p99 over streams is the worst one or two,
	// which the block bootstrap (blocks of about 10 streams) leaves out of
	// enough resamples that the interval of prefill-first's change reaches
	// below the tolerance although it is +94 %.
	mustRunCLI(t, "run", "--requests", "60", "--policy", "chunked,prefill-first", "--json", two)
	guide := filepath.Join("testdata", "analyze", "guidellm_v03.json")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--baseline", a}, "--candidate is required"},
		{[]string{"--baseline", a, "--candidate", filepath.Join(dir, "nope.json")}, "nope.json"},
		{[]string{"--baseline", a, "--candidate", a, "--metric", "p99"}, `unknown metric "p99"`},
		{[]string{"--baseline", a, "--candidate", a, "--tolerance", "lots"}, "--tolerance"},
		{[]string{"--baseline", a, "--candidate", a, "--bootstrap", "-3"}, "bootstrap"},
		{[]string{"--baseline", a, "--candidate", a, "--format", "html"}, "--format"},
		{[]string{"--baseline", a, "--candidate", a, "--frobnicate"}, "unknown flag"},
		{[]string{"--baseline", a, "--candidate", a, "extra"}, "unexpected argument"},
		{[]string{"--baseline", noStreams, "--candidate", a}, `no per-stream rows ("streams")`},
		{[]string{"--baseline", two, "--candidate", a}, "holds 2 runs (chunked, prefill-first): choose one with --baseline-run"},
		{[]string{"--baseline", two, "--baseline-run", "chunked", "--candidate", two, "--candidate-run", "prefill-first", "--metric", "itl_pooled_p99"}, "needs a stream file"},
		{[]string{"--baseline", guide, "--candidate", guide}, "records no gaps"},
		{[]string{"--baseline", "testdata/analyze/vllm_small.json", "--candidate", a, "--input-format", "guidellm"}, "not a GuideLLM benchmark file"},
	}
	for _, c := range cases {
		r := execCLI(t, append([]string{"gate"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("gate %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
	}
	// A GuideLLM file can still be gated on what it records; its few
	// requests cannot detect a 25 % regression of TTFT p99: inconclusive.
	if r := execCLI(t, "gate", "--baseline", guide, "--candidate", guide, "--metric", "ttft_p99,tpot_p50"); r.code != 3 || !strings.Contains(r.stderr, "gate inconclusive") {
		t.Errorf("GuideLLM on TTFT and TPOT: exit %d, want 3 (inconclusive): %s", r.code, r.stderr)
	}
	// Runs of one document are chosen by name; prefill-first is far worse on stream p99.
	if r := execCLI(t, "gate", "--baseline", two, "--baseline-run", "chunked", "--candidate", two, "--candidate-run", "prefill-first"); r.code != 1 {
		t.Errorf("chunked against prefill-first: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestGateRealVLLM gates the measured vLLM runs against each other and
// against themselves with injected stalls: a copy of the 4 req/s run in
// itlsim's stream format, with one 500 ms pause in every fifth stream.
func TestGateRealVLLM(t *testing.T) {
	path := filepath.Join(streamsData, "vllm_bench_llama33_70b_tp8_a100", "serving_tp8_pp1_sharegpt_qps_04.json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no vLLM results: %v", err)
	}
	var f struct {
		TTFTs []float64   `json:"ttfts"`
		ITLs  [][]float64 `json:"itls"`
	}
	if err := json.Unmarshal(mustRead(t, path), &f); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range f.TTFTs {
		at := f.TTFTs[i]
		times := []string{strconv.FormatFloat(at, 'g', -1, 64)}
		for j, g := range f.ITLs[i] {
			if i%5 == 0 && j == len(f.ITLs[i])/2 {
				g += 0.5
			}
			at += g
			times = append(times, strconv.FormatFloat(at, 'g', -1, 64))
		}
		fmt.Fprintf(&b, `{"id":%d,"arrival_s":0,"chunk_times_s":[%s]}`+"\n", i, strings.Join(times, ","))
	}
	cand := filepath.Join(t.TempDir(), "stalled.jsonl")
	os.WriteFile(cand, []byte(b.String()), 0o644)
	// Pooled ITL resamples every gap: 300 resamples keep the test quick.
	// 200 streams a side cannot detect a 25 % regression of the p99 of
	// per-stream p99 ITL (its MDE is about 74 %): the file against itself
	// is inconclusive on it (exit 3), and passes on the pooled p99 alone.
	if r := execCLI(t, "gate", "--baseline", path, "--candidate", path, "--bootstrap", "300", "--metric", "stream_p99_itl_p99,itl_pooled_p99"); r.code != 3 || !strings.Contains(r.stdout, "Inconclusive: stream_p99_itl_p99") {
		t.Errorf("the file against itself: exit %d, want 3 (inconclusive on stream_p99_itl_p99)\n%s", r.code, r.stdout)
	}
	if r := execCLI(t, "gate", "--baseline", path, "--candidate", path, "--bootstrap", "300", "--metric", "itl_pooled_p99"); r.code != 0 {
		t.Errorf("the file against itself on pooled ITL: exit %d\n%s", r.code, r.stdout)
	}
	rep, r := gateReport(t, "--baseline", path, "--candidate", cand, "--bootstrap", "300", "--metric", "stream_p99_itl_p99,stream_max_gap_p99,itl_pooled_p99,itl_goodput")
	if r.code != 1 {
		t.Fatalf("injected stalls: exit %d\n%s", r.code, r.stderr)
	}
	for _, row := range rep.Rows {
		// The pooled view barely moves: 40 of ~42,000 gaps are longer.
		want := gate.Fail
		if row.Metric == "itl_pooled_p99" || row.Metric == gate.UnservedMetric {
			want = gate.Pass
		}
		if row.Verdict != want {
			t.Errorf("%s: %s (change %.3g [%.3g, %.3g]), want %s", row.Metric, row.Verdict, row.Change, row.Low, row.High, want)
		}
	}
}

// writeFrozenStreams writes n streams in itlsim's stream format, one
// arrival every 100 ms, each of 200 gaps of 20–24 ms and one hiccup of
// 20–251.2 ms (0.5 % of streams pass the 250 ms stall threshold); with
// frozen, every 29th stream (3.5 % of 600) also has one gap of 2.5 s.
func writeFrozenStreams(t *testing.T, path string, n int, seed uint64, frozen bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 26))
	var b strings.Builder
	gaps := make([]float64, 200)
	for i := range n {
		for j := range gaps {
			gaps[j] = 0.020 + 0.004*rng.Float64()
		}
		gaps[rng.IntN(len(gaps))] = 0.020 + 0.2312*rng.Float64()
		if frozen && i%29 == 0 {
			gaps[rng.IntN(len(gaps))] = 2.5
		}
		arrival := float64(i) * 0.1
		at := arrival + 0.1 + 0.01*rng.Float64()
		times := []string{strconv.FormatFloat(at, 'f', 6, 64)}
		for _, g := range gaps {
			at += g
			times = append(times, strconv.FormatFloat(at, 'f', 6, 64))
		}
		fmt.Fprintf(&b, `{"id":%d,"arrival_s":%g,"input_tokens":100,"chunk_times_s":[%s]}`+"\n", i, arrival, strings.Join(times, ","))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGateFrozenShare: through the CLI, the default gate fails a candidate
// of 600 streams in which 3.5 % froze for 2.5 s on frozen_stream_share
// (Fisher's exact test, exit 1), passes the same configuration on another
// seed (exit 0) with every metric's n and MDE in the JSON, and calls 10
// streams a side inconclusive (exit 3), in the table too.
func TestGateFrozenShare(t *testing.T) {
	dir := t.TempDir()
	base, same, frozen, tiny := filepath.Join(dir, "base.jsonl"), filepath.Join(dir, "same.jsonl"), filepath.Join(dir, "frozen.jsonl"), filepath.Join(dir, "tiny.jsonl")
	writeFrozenStreams(t, base, 600, 1, false)
	writeFrozenStreams(t, same, 600, 3, false)
	writeFrozenStreams(t, frozen, 600, 2, true)
	writeFrozenStreams(t, tiny, 10, 4, false)
	row := func(rep gate.Report, name string) gate.Row {
		for _, r := range rep.Rows {
			if r.Metric == name {
				return r
			}
		}
		t.Fatalf("no row %s in %+v", name, rep.Rows)
		return gate.Row{}
	}
	rep, r := gateReport(t, "--baseline", base, "--candidate", frozen)
	fr := row(rep, gate.FrozenMetric)
	if r.code != 1 || rep.Verdict != gate.Fail || fr.Verdict != gate.Fail || fr.Test != "fisher" || fr.N != 1200 || !strings.Contains(r.stderr, "frozen_stream_share") {
		t.Errorf("3.5 %% frozen: exit %d, verdict %s, %+v\n%s", r.code, rep.Verdict, fr, r.stderr)
	}
	rep, r = gateReport(t, "--baseline", base, "--candidate", same)
	if r.code != 0 || rep.Verdict != gate.Pass || !rep.Pass {
		t.Errorf("same configuration, another seed: exit %d, verdict %s, rows %+v", r.code, rep.Verdict, rep.Rows)
	}
	for _, x := range rep.Rows {
		if x.N != 1200 || !(x.MDE > 0 && x.MDE <= gate.PowerEffect) {
			t.Errorf("%s: n %d, mde %v; want 1200 and in (0, %g]", x.Metric, x.N, x.MDE, gate.PowerEffect)
		}
	}
	rep, r = gateReport(t, "--baseline", tiny, "--candidate", tiny)
	if r.code != 3 || rep.Verdict != gate.Inconclusive || rep.Pass || !strings.Contains(r.stderr, "gate inconclusive") {
		t.Errorf("10 streams: exit %d, verdict %s, want 3 and inconclusive\n%s", r.code, rep.Verdict, r.stderr)
	}
	raw := execCLI(t, "gate", "--baseline", tiny, "--candidate", tiny)
	for _, want := range []string{"itlsim gate: INCONCLUSIVE", "MDE (80% power)", "10+10", "Inconclusive: "} {
		if !strings.Contains(raw.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, raw.stdout)
		}
	}
}
