package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	nethtml "golang.org/x/net/html"
)

// answerSection parses page and returns the text of its answer section
// (the study pages' opening), its bold sentences and the rows of its
// per-configuration table.
func answerSection(t *testing.T, page []byte) (body string, strong []string, rows int) {
	t.Helper()
	doc, err := nethtml.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var answer *nethtml.Node
	var find func(n *nethtml.Node)
	find = func(n *nethtml.Node) {
		for _, a := range n.Attr {
			if a.Key == "id" && a.Val == "answer" {
				answer = n
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c)
		}
	}
	find(doc)
	if answer == nil {
		t.Fatal("the page has no answer section")
	}
	var walk func(n *nethtml.Node)
	walk = func(n *nethtml.Node) {
		if n.Type == nethtml.ElementNode && n.Data == "strong" {
			strong = append(strong, nodeText(n))
		}
		if n.Type == nethtml.ElementNode && n.Data == "tr" && n.Parent != nil && n.Parent.Data == "tbody" {
			rows++
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(answer)
	return nodeText(answer), strong, rows
}

// The sweep and capacity pages written by the commands open with the
// answer in one bold sentence, name the scenario (model, GPU, TP, the
// settings the configurations differ in, each probe's workload and length,
// the rates or the SLO terms) and give one table row per configuration.
func TestStudyPagesNameTheirScenario(t *testing.T) {
	dir := t.TempDir()
	sweep, capacity := filepath.Join(dir, "sweep.html"), filepath.Join(dir, "capacity.html")
	mustRunCLI(t, "sweep", "--rate", "8,16", "--requests", "100", "--seeds", "1",
		"--vary", "scheduler.max_num_batched_tokens=512,2048", "--html", sweep)
	mustRunCLI(t, "capacity", "--gpu", "h100-sxm-80gb,h200-141gb", "--slo", "ttft:p99<=1s", "--requests", "100", "--seeds", "1",
		"--html", capacity)
	for _, c := range []struct {
		page, headline string
		want           []string
	}{
		{sweep, "Stable to the highest rate: ", []string{
			"Scenario: llama-3.1-8b on 1 × h100-sxm-80gb (tensor parallel 1).",
			"2 configurations compared, differing in max batched tokens (512, 2048) and KV blocks (",
			"the scenario above is max_num_batched_tokens=512's.",
			"Each probe: 100 requests (extended up to 8× until its backlog trend is conclusive), poisson arrivals at 8.00, 16.0 req/s;",
			"; 1 seed.",
		}},
		{capacity, "Cheapest setup that holds every term: ", []string{
			"Scenario: llama-3.1-8b on 1 × h100-sxm-80gb (tensor parallel 1).",
			"2 configurations compared, differing in GPUs (1 × h100-sxm-80gb, 1 × h200-141gb) and KV blocks (",
			"Each probe: 100 requests (extended up to 8× until its backlog trend is conclusive), poisson arrivals at the rates the search probes;",
			"SLO terms: ttft:p99<=1s.",
		}},
	} {
		body, strong, rows := answerSection(t, mustRead(t, c.page))
		name := filepath.Base(c.page)
		if len(strong) != 1 || !strings.HasPrefix(strong[0], c.headline) || strings.Count(strong[0], ". ") > 0 {
			t.Errorf("%s: bold text %q, want one sentence starting %q", name, strong, c.headline)
		}
		if name == "capacity.html" && (!strings.Contains(strong[0], "$") || !strings.HasSuffix(strong[0], " per million output tokens.")) {
			t.Errorf("%s: the answer %q gives no cost per million tokens", name, strong[0])
		}
		if rows != 2 {
			t.Errorf("%s: %d rows in the per-configuration table, want 2", name, rows)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the answer section does not say %q:\n%s", name, w, body)
			}
		}
	}
}

// run --replicas 8 --num-gpu-blocks 3000 --html describes 8 replicas of
// 3,000 blocks each, not one GPU holding 24,000.
func TestClusterPageNamesItsReplicas(t *testing.T) {
	page := filepath.Join(t.TempDir(), "cluster.html")
	mustRunCLI(t, "run", "--replicas", "8", "--num-gpu-blocks", "3000", "--requests", "200", "--html", page)
	raw := string(mustRead(t, page))
	for _, want := range []string{"8 replicas of llama-3.1-8b, each on 1 × h100-sxm-80gb (tensor parallel 1)",
		"KV cache of 3000 blocks of 16 tokens per replica (24000 in all)"} {
		if !strings.Contains(raw, want) {
			t.Errorf("the cluster page does not say %q", want)
		}
	}
	if strings.Contains(raw, "KV cache of 24000 blocks") {
		t.Error("the cluster page gives all replicas' blocks as one cache")
	}
}

// validate --html describes each measured run by its file and the
// simulated run beside it by its setup, with no empty format named.
func TestValidatePageDescribesBothSides(t *testing.T) {
	page := filepath.Join(t.TempDir(), "validate.html")
	mustRunCLI(t, "validate", "testdata/analyze/vllm_small.json", "--html", page)
	raw := string(mustRead(t, page))
	i := strings.Index(raw, "Sources of the runs")
	if i < 0 {
		t.Fatal("no table of the runs' sources")
	}
	sources := raw[i : i+strings.Index(raw[i:], "</table>")]
	for _, want := range []string{"<th>vllm_small measured</th><td>Measured streams read from testdata/analyze/vllm_small.json; not a simulation",
		"<th>vllm_small simulated</th><td>Simulated: llama-3.1-8b on 1 × h100-sxm-80gb (tensor parallel 1).",
		"The requests are the measured run&#39;s"} {
		if !strings.Contains(sources, want) {
			t.Errorf("the sources table lacks %q:\n%s", want, sources)
		}
	}
	if strings.Contains(raw, "( format)") {
		t.Error("the page names an empty format")
	}
}

// validate --html opens with each simulation's error against its
// measurement, the same figures validate prints, and does not rank the
// measured run against its simulation by SLO goodput as if they were two
// setups compared.
func TestValidatePageFindingGivesTheErrors(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "validate.html")
	r := mustRunCLI(t, "validate", "testdata/analyze/vllm_small.json", "--html", page, "--format", "markdown")
	raw := string(mustRead(t, page))
	i := strings.Index(raw, "<h2>Finding</h2>")
	if i < 0 {
		t.Fatal("no finding")
	}
	finding := raw[i : i+strings.Index(raw[i:], "</section>")]
	if strings.Contains(finding, "Best on the SLOs") || strings.Contains(finding, "the worst of the") {
		t.Errorf("the finding ranks the measured run against its simulation:\n%s", finding)
	}
	// The markdown table's overview row: "meas / sim (err)" per figure, in
	// the order of its head; the finding must give the same error for
	// TTFT p50 and TPOT p50.
	var row string
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "| vllm_small ") {
			row = line
			break
		}
	}
	cells := strings.Split(row, "|")
	if len(cells) < 5 {
		t.Fatalf("no overview row for vllm_small in:\n%s", r.stdout)
	}
	for k, label := range map[int]string{3: "TTFT p50", 4: "TPOT p50"} {
		cell := strings.TrimSpace(cells[k])
		meas, rest, _ := strings.Cut(cell, " / ")
		sim, errPart, _ := strings.Cut(rest, " (")
		want := label + " " + sim + " against " + meas + " (" + errPart
		if !strings.Contains(finding, want) {
			t.Errorf("the finding lacks %q (from the table's %q):\n%s", want, cell, finding)
		}
	}
}
