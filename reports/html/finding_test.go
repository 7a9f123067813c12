package html_test

import (
	"strings"
	"testing"

	nethtml "golang.org/x/net/html"

	reporthtml "github.com/itlsim/itlsim/reports/html"
)

// findingText is the text of the page's finding section.
func findingText(t *testing.T, page []byte) string {
	t.Helper()
	var got string
	walk(parse(t, page), func(n *nethtml.Node) {
		if n.Type == nethtml.ElementNode && attr(n, "id") == "finding" {
			got = text(n)
		}
	})
	if got == "" {
		t.Fatal("the page has no finding section")
	}
	return got
}

// TestFinding: the page opens with the finding in words: the run best on
// the SLOs, how far the worst is behind, and the dominant stall cause.
func TestFinding(t *testing.T) {
	runs := simulated(t)
	runs[1].Name = "prefill-first"
	runs[0].Summary.SLOGoodput, runs[1].Summary.SLOGoodput = 0.6, 0.9
	got := findingText(t, render(t, runs, reporthtml.Options{}))
	for _, want := range []string{"Best on the SLOs", "prefill-first, with 90.0 % SLO goodput", "against 60.0 % for chunked", "30.0 points apart", "The dominant stall cause is"} {
		if !strings.Contains(got, want) {
			t.Errorf("finding %q lacks %q", got, want)
		}
	}
	one := findingText(t, render(t, runs[:1], reporthtml.Options{}))
	if !strings.Contains(one, "chunked: 60.0 % of 150 requests met the SLOs") {
		t.Errorf("finding of one run: %q", one)
	}
}

// TestZeroRowsCollapsed: summary rows that are zero for every run move to
// a collapsed table of their own, with their section headings, and every
// row is in exactly one of the two tables.
func TestZeroRowsCollapsed(t *testing.T) {
	page := string(render(t, simulated(t), reporthtml.Options{}))
	i := strings.Index(page, `<table id="table-summary-zero">`)
	if i < 0 {
		t.Fatal("no table of zero rows")
	}
	if d := strings.LastIndex(page[:i], "<details>"); d < 0 || strings.Contains(page[d:i], "</details>") {
		t.Error("the zero rows are not in a closed <details>")
	}
	main := page[strings.Index(page, `<table id="table-summary">`):i]
	zero := page[i : i+strings.Index(page[i:], "</table>")]
	for _, row := range []string{"spec-rejection", "failover"} {
		if strings.Contains(main, "<th>"+row+"</th>") || !strings.Contains(zero, "<th>"+row+"</th>") {
			t.Errorf("row %s, zero in every run, is not (only) in the collapsed table", row)
		}
	}
	if !strings.Contains(main, "<th>decode</th>") || strings.Contains(zero, "<th>decode</th>") {
		t.Error("row decode, not zero, left the summary")
	}
}

// TestVerdictOnTop: given a gate's report, the page opens with its verdict
// table, row for row, before the finding.
func TestVerdictOnTop(t *testing.T) {
	page := string(render(t, simulated(t), reporthtml.Options{Gate: []byte(gateMarkdown)}))
	v, f := strings.Index(page, `<section id="verdict">`), strings.Index(page, `<section id="finding">`)
	if v < 0 || f < v {
		t.Fatalf("verdict at %d, finding at %d: want the verdict first", v, f)
	}
	sec := page[v:f]
	for _, want := range []string{"itlsim gate: FAIL", "<th>stream_p99_itl_p99</th><td>134.0 ms</td><td>402.1 ms</td><td>&#43;200.1%</td><td>[&#43;150.0%, &#43;260.0%]</td><td>FAIL</td>",
		"<th>95% CI of change</th>", "Failed: stream_p99_itl_p99, itl_goodput."} {
		if !strings.Contains(sec, want) {
			t.Errorf("verdict section lacks %q:\n%s", want, sec)
		}
	}
	if strings.Contains(string(render(t, simulated(t), reporthtml.Options{})), `id="verdict"`) {
		t.Error("a page without a gate shows a verdict")
	}
}
