package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// gate --html writes one report comparing baseline and candidate, named as such.
func TestGateWritesHTML(t *testing.T) {
	dir := t.TempDir()
	a, b, page := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "gate.html")
	for i, p := range []string{a, b} {
		var out, errb bytes.Buffer
		if code := Main([]string{"run", "--requests", "120", "--seed", []string{"1", "2"}[i], "--json", p}, &out, &errb); code != 0 {
			t.Fatalf("run: %s", errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"gate", "--baseline", a, "--candidate", b, "--html", page}, &out, &errb); code != 0 && code != 1 {
		t.Fatalf("gate exit %d: %s", code, errb.String())
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"baseline: " + a, "candidate: " + b, "<table"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Bad input: no report is left behind.
	bad := filepath.Join(dir, "bad.html")
	if code := Main([]string{"gate", "--baseline", a, "--candidate", filepath.Join(dir, "missing.json"), "--html", bad}, &out, &errb); code != 2 {
		t.Errorf("missing candidate: exit %d, want 2", code)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("a report was written for bad input")
	}
}

// TestGateHTMLVerdictOnTop: the gate's page opens with its verdict, the
// table the terminal prints (metric, baseline, candidate, change, interval,
// verdict), before the finding and the summary.
func TestGateHTMLVerdictOnTop(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "gate.html")
	small := "testdata/replay/small.jsonl"
	r := execCLI(t, "gate", "--baseline", small, "--candidate", "testdata/analyze/aiperf_small.jsonl",
		"--metric", "stream_p99_itl_p99,ttft_p99", "--html", page)
	if r.code != 0 && r.code != 1 {
		t.Fatalf("gate exit %d: %s", r.code, r.stderr)
	}
	raw := string(mustRead(t, page))
	v := strings.Index(raw, `<table id="gate-verdict">`)
	if v < 0 {
		t.Fatalf("no verdict table in the page")
	}
	for _, later := range []string{`<section id="finding">`, `<table id="table-summary">`} {
		if i := strings.Index(raw, later); i < v {
			t.Errorf("%s comes before the verdict", later)
		}
	}
	verdict := raw[v : v+strings.Index(raw[v:], "</table>")]
	for _, want := range []string{"<th>metric</th>", "<th>baseline</th>", "<th>candidate</th>", "<th>change</th>", "CI of change", "<th>verdict</th>",
		"<th>stream_p99_itl_p99</th>", "<th>ttft_p99</th>", "334.9 ms", "inconclusive", "<th>n</th>", "<th>MDE (80% power)</th>", "5&#43;2"} {
		if !strings.Contains(verdict, want) {
			t.Errorf("verdict table lacks %q:\n%s", want, verdict)
		}
	}
	if !strings.Contains(raw, "itlsim gate: FAIL") {
		t.Error("the page does not say FAIL (the candidate left a third of its requests unserved)")
	}
	// The finding agrees with the verdict: it opens with it.
	f := raw[strings.Index(raw, `<section id="finding">`):]
	if !strings.Contains(f[:strings.Index(f, "</section>")], "The gate&#39;s verdict is FAIL; inconclusive: stream_p99_itl_p99, ttft_p99 (too few streams to detect a 25% regression); failed: unserved_share (&#43;33.3 pts).") {
		t.Errorf("the finding does not open with the verdict:\n%s", f[:strings.Index(f, "</section>")])
	}
}

// A gate that fails by far while the runs' SLO goodput is close: the
// finding opens with the verdict and each failed metric's change as the
// verdict table gives it, so it cannot read as "the runs are alike".
func TestGateHTMLFindingAgreesWithVerdict(t *testing.T) {
	dir := t.TempDir()
	a, b, page := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "gate.html")
	mustRunCLI(t, "run", "--requests", "200", "--json", a)
	mustRunCLI(t, "run", "--requests", "200", "--hiccup-rate", "0.5", "--hiccup-ms", "800", "--json", b)
	r := execCLI(t, "gate", "--baseline", a, "--candidate", b, "--html", page)
	if r.code != 1 {
		t.Fatalf("gate exit %d, want 1 (FAIL): %s", r.code, r.stderr)
	}
	raw := string(mustRead(t, page))
	row := regexp.MustCompile(`<th>stream_p99_itl_p99</th><td>[^<]*</td><td>[^<]*</td><td>([^<]*)</td>`).FindStringSubmatch(raw)
	if row == nil {
		t.Fatal("no stream_p99_itl_p99 row in the verdict table")
	}
	f := raw[strings.Index(raw, `<section id="finding">`):]
	first := f[strings.Index(f, "<p>")+3 : strings.Index(f, "</p>")]
	if want := "The gate&#39;s verdict is FAIL; failed: stream_p99_itl_p99 (" + row[1] + ")"; !strings.HasPrefix(first, want) {
		t.Errorf("the finding opens with %q, want %q", first, want)
	}
}
