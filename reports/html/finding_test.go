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
