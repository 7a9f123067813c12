package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// capacityExamples are the worked examples of docs/capacity.md: each
// command's output is the golden testdata/capacity/NAME.md, which the page
// shows in a block marked <!-- golden: capacity/NAME.md --> (TestDocGoldens
// holds the block to the golden). Rewrite both after a change of output:
//
//	go test ./cmd/itlsim -run 'TestCapacityPageExamples|TestDocGoldens' -update
//
// The Pareto grid is the slowest (six configurations, about 25 s of CPU,
// 95 s of wall time on a loaded 2-core machine): -short leaves it out.
var capacityExamples = []struct {
	name string
	args []string
	// figures are what the page's prose quotes from the output: each
	// phrase must be on the page and its source in the output, so the
	// prose cannot keep a figure the command no longer prints.
	figures [][2]string // {phrase on the page, text in the output}
}{
	{"sweep", []string{"sweep", "--rate", "8:28:4", "--duration", "240", "--format", "markdown"}, [][2]string{
		{"saturates at a fitted 22.2 req/s (21.5 to 22.8)", "saturates at 22.2 req/s (fitted; 95 % CI 21.5 to 22.8)"},
		{"serves\nevery rate up to 20 req/s", "stable up to 20 req/s"},
		{"from 89.4 at 8 req/s to 71.4 at 12", "| chunked | 8    | 1    | 8.09          | 8.06           | 2000         | 89.4 "},
		{"71.4 at 12", "| chunked | 12   | 1    | 12.21         | 12.09          | 3048         | 71.4 "},
		{"52.7 at 16 and 31.6 at 20", "| 4047         | 52.7 "},
		{"31.6 at 20", "| 5031         | 31.6 "},
		{"climbs from 79 to 180 ms", "| 79.1 "},
		{"climbs from 79 to 180 ms", "| 179.7 "},
		{"At 24 req/s the run stays inconclusive after three\ndoublings", "(after 3 doublings of the run, the cap)"},
	}},
	{"capacity", []string{"capacity", "--duration", "240", "--slo", "stream-p99-itl:p99<=150ms", "--slo", "ttft:p99<=500ms", "--format", "markdown"}, [][2]string{
		{"at 17.7 req/s (15.4 to 20.0)", "chunked: 17.7 req/s (95 % CI 15.4 to 20 over 3 seeds"},
		{"Here it is the per-stream ITL term", "limited by stream-p99-itl:p99<=150ms"},
	}},
	{"target", []string{"capacity", "--duration", "240", "--target-rate", "60", "--slo", "stream-p99-itl:p99<=150ms", "--slo", "ttft:p99<=500ms", "--format", "markdown"}, [][2]string{
		{"Four replicas behind the round-robin router hold 60 req/s on every seed", "cluster.replicas=4 holds 60 req/s on every seed"},
		{"Three do not", "(3 does not: stream-p99-itl:p99<=150ms)"},
		{"above one replica's 17.7 mean", "| 17.71 "}, // the capacity example's (checked against it below)
	}},
	{"pareto", []string{"capacity", "--duration", "240", "--gpu", "h100-sxm-80gb,h200-141gb,a100-80gb", "--tp", "1,2",
		"--slo", "stream-p99-itl:p99<=150ms", "--slo", "ttft:p99<=500ms", "--format", "markdown"}, [][2]string{
		{"TP2 on an H100 is the cheapest per\nmillion tokens", "h100-sxm-80gb/tp=2: 40.6 req/s (95 % CI 39.8 to 41.3 over 3 seeds, 27 probes), limited by ttft:p99<=500ms, $0.167 per million output tokens, 10 % cheaper"},
		{"16.9 tokens/s per user at capacity", "| h100-sxm-80gb/tp=2 | 40.55     | 39.79–41.31 | 40.38     | 3     | 27     | ttft:p99<=500ms           | 2    | 3.00      | 9985         | 4993      | 16.9 "},
		{"(55.5 against\n43.7 tokens/s per user)", "| 4975         | 4975      | 55.5 "},
		{"43.7 tokens/s per user", "| 4490         | 4490      | 43.7 "},
		{"its answer is 0.60 req/s, with an interval of 0.05 to 1.14 over three seeds", "| a100-80gb/tp=1     | 0.60      | 0.05–1.14   |"},
	}},
}

func TestCapacityPageExamples(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docs", "capacity.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Prose is compared with its line breaks as spaces.
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	page := flat(string(raw))
	outs := map[string]string{}
	for _, ex := range capacityExamples {
		t.Run(ex.name, func(t *testing.T) {
			if ex.name == "pareto" && testing.Short() {
				t.Skip("six configurations: about 25 s of CPU")
			}
			args := ex.args
			jsonPath := filepath.Join(t.TempDir(), "c.json")
			if ex.name == "target" { // its prose quotes the probes of --json too
				args = append(args[:len(args):len(args)], "--json", jsonPath)
			}
			r := mustRunCLI(t, args...)
			golden := filepath.Join("testdata", "capacity", ex.name+".md")
			got := "<!-- itlsim " + strings.Join(quoteArgs(ex.args), " ") + "; rewrite with: go test ./cmd/itlsim -run 'TestCapacityPageExamples|TestDocGoldens' -update -->\n" + r.stdout
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
				t.Errorf("%s changed; if intended, rerun with -update, review the diff and the prose of docs/capacity.md.\ngot:\n%s", golden, got)
			}
			outs[ex.name] = r.stdout
			if !strings.Contains(page, "<!-- golden: capacity/"+ex.name+".md -->") {
				t.Errorf("docs/capacity.md does not show the golden capacity/%s.md", ex.name)
			}
			for _, f := range ex.figures {
				if !strings.Contains(page, flat(f[0])) {
					t.Errorf("docs/capacity.md no longer says %q", f[0])
				}
				src := r.stdout
				if ex.name == "target" && strings.HasPrefix(f[1], "| 17.71") {
					src = outs["capacity"]
				}
				if !strings.Contains(src, f[1]) {
					t.Errorf("docs/capacity.md says %q, but the output has no %q: update the prose", f[0], f[1])
				}
			}
			if ex.name == "target" {
				checkTargetProbes(t, jsonPath, page, flat)
			}
		})
	}
}

// checkTargetProbes holds what the target example's prose says of its
// probes (the points[] of --json): one and two replicas never steady,
// three holding on seed 1 and failing on seed 2 on the ITL term's bound.
func checkTargetProbes(t *testing.T, path, page string, flat func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Points []struct {
			Overrides map[string]string `json:"overrides"`
			Seed      int               `json:"seed"`
			Pass      bool              `json:"pass"`
			Stable    bool              `json:"stable"`
			SLO       []struct {
				Term  string   `json:"term"`
				Value *float64 `json:"value"`
				Pass  bool     `json:"pass"`
			} `json:"slo"`
		} `json:"points"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, p := range doc.Points {
		switch n := p.Overrides["cluster.replicas"]; {
		case n == "1" || n == "2":
			if p.Stable {
				t.Errorf("%s replicas, seed %d: stable; the page says one and two never reach a steady state", n, p.Seed)
			}
		case n == "3" && (p.Seed == 1 || p.Seed == 2) && len(p.SLO) > 0 && p.SLO[0].Value != nil:
			said = append(said, fmt.Sprintf("seed %d pass=%v term-pass=%v %.1f ms", p.Seed, p.Pass, p.SLO[0].Pass, *p.SLO[0].Value))
		}
	}
	want := []string{"seed 1 pass=true term-pass=true 126.5 ms", "seed 2 pass=false term-pass=true 143.8 ms"}
	if strings.Join(said, "; ") != strings.Join(want, "; ") {
		t.Errorf("three replicas' probes: %q; the page's prose says %q", said, want)
	}
	for _, phrase := range []string{"One and two replicas never reach a steady state",
		"on seed 1 three replicas hold (p99 of per-stream p99 ITL 126.5 ms), but on seed 2 they reach 143.8 ms, and the term's 95 % bound is over 150 ms"} {
		if !strings.Contains(page, flat(phrase)) {
			t.Errorf("docs/capacity.md no longer says %q", phrase)
		}
	}
}

// quoteArgs quotes the arguments a shell would split or expand.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "<>=:$ ") && strings.Contains(a, "<") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}
