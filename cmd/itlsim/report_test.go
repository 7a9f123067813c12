package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	nethtml "golang.org/x/net/html"
)

// reportTables returns the text of every <table> of an HTML report, one
// block per table: its id and caption, then one line per row with the
// cells separated by " | " (a heading row as "-- HEADING --").
func reportTables(t *testing.T, page []byte) string {
	t.Helper()
	doc, err := nethtml.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var visit func(n *nethtml.Node)
	visit = func(n *nethtml.Node) {
		if n.Type == nethtml.ElementNode && n.Data == "table" {
			writeTable(&b, n)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(doc)
	return b.String()
}

func writeTable(b *strings.Builder, table *nethtml.Node) {
	id := ""
	for _, a := range table.Attr {
		if a.Key == "id" {
			id = a.Val
		}
	}
	var rows func(n *nethtml.Node)
	rows = func(n *nethtml.Node) {
		if n.Type != nethtml.ElementNode {
			return
		}
		switch n.Data {
		case "caption":
			b.WriteString("## " + id + ": " + nodeText(n) + "\n")
			return
		case "tr":
			var cells []string
			heading := false
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == nethtml.ElementNode {
					cells = append(cells, nodeText(c))
					for _, a := range c.Attr {
						heading = heading || a.Key == "colspan"
					}
				}
			}
			if heading {
				b.WriteString("-- " + strings.Join(cells, " ") + " --\n")
			} else {
				b.WriteString(strings.Join(cells, " | ") + "\n")
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rows(c)
		}
	}
	rows(table)
	b.WriteString("\n")
}

func nodeText(n *nethtml.Node) string {
	if n.Type == nethtml.TextNode {
		return n.Data
	}
	var s string
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		s += nodeText(c)
	}
	return strings.TrimSpace(s)
}

// TestReportGolden runs the small scenario with --json and --html, makes
// the report from the JSON with `itlsim report`, checks both pages are the
// same bytes, and pins the report's tables in small.tables.txt:
//
//	go test ./cmd/itlsim -run TestReportGolden -update
func TestReportGolden(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join("testdata", "report", "small.yaml")
	result, direct, fromJSON := filepath.Join(dir, "result.json"), filepath.Join(dir, "run.html"), filepath.Join(dir, "report.html")
	mustRunCLI(t, "run", scen, "--json", result, "--html", direct)
	mustRunCLI(t, "report", result, "-o", fromJSON)
	a, err := os.ReadFile(direct)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fromJSON)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("run --html and report of run --json differ")
	}

	got := "# itlsim run " + filepath.ToSlash(scen) + " --html report.html: the report's tables.\n" +
		"# Rewrite with: go test ./cmd/itlsim -run TestReportGolden -update\n\n" + reportTables(t, a)
	golden := filepath.Join("testdata", "report", "small.tables.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s changed; if intended, rerun with -update and review the diff.\ngot:\n%s", golden, got)
	}
}

// TestReportOfSeveralDocuments compares the runs of two result files; a
// name found in both is prefixed with its file's name.
func TestReportOfSeveralDocuments(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "tp1.json"), filepath.Join(dir, "tp2.json")
	mustRunCLI(t, "run", "--requests", "20", "--json", one)
	mustRunCLI(t, "run", "--requests", "20", "--tp", "2", "--json", two)
	out := mustRunCLI(t, "report", one, two)
	tables := reportTables(t, []byte(out.stdout))
	for _, want := range []string{"metric | tp1: chunked | tp2: chunked", "GPUs | 1 × h100-sxm-80gb | 2 × h100-sxm-80gb"} {
		if !strings.Contains(tables, want) {
			t.Errorf("report of two documents lacks %q:\n%s", want, tables[:min(len(tables), 2000)])
		}
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "notes.json")
	if err := os.WriteFile(notJSON, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(`{"runs":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	badJS := filepath.Join(dir, "echarts.min.js")
	if err := os.WriteFile(badJS, []byte("var s='</script>';"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.html")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "requires at least 1 arg"},
		{[]string{"report", filepath.Join(dir, "missing.json")}, "missing.json"},
		{[]string{"report", notJSON}, "not an itlsim --json result"},
		{[]string{"report", empty}, "no runs"},
		{[]string{"report", notJSON, "--echarts-js", badJS}, "cannot be inlined"},
		{[]string{"report", notJSON, "--echarts-js", filepath.Join(dir, "nope.js")}, "--echarts-js"},
		// A bad --echarts-js fails before the simulation, not after it.
		{[]string{"run", "--requests", "1000000", "--html", out, "--echarts-js", badJS}, "cannot be inlined"},
	} {
		r := execCLI(t, tc.args...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("itlsim %s: exit %d, stderr %q; want an error containing %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s behind", out)
	}
}

// TestReportIsRunHTML: itlsim report of a --json result writes the very
// page run --html wrote, byte for byte, including what only the tables
// show: the BY CLASS rows and the server-side delivery rows.
func TestReportIsRunHTML(t *testing.T) {
	dir := t.TempDir()
	page, doc, again := filepath.Join(dir, "run.html"), filepath.Join(dir, "r.json"), filepath.Join(dir, "report.html")
	mustRunCLI(t, "run", "--requests", "60", "--set", "workload.mix=assistant", "--network", "mobile-4g",
		"--html", page, "--json", doc)
	mustRunCLI(t, "report", doc, "-o", again)
	want, got := mustRead(t, page), mustRead(t, again)
	for _, s := range []string{"BY CLASS", "server TTFT"} {
		if !bytes.Contains(want, []byte(s)) {
			t.Fatalf("run --html lacks %q", s)
		}
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("report differs from run --html at byte %d: %.120q against %.120q", i, got[i:], want[i:])
	}
}
