package html_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
	reporthtml "github.com/itlsim/itlsim/reports/html"
	"github.com/itlsim/itlsim/reports/study"
	"github.com/itlsim/itlsim/sim"
)

// A study page opens with its answer in one sentence, names what was run
// (model, GPU, probes, terms) and puts each configuration's detail in a
// table, not in bold paragraphs.
func TestStudyPagesStateTheirCase(t *testing.T) {
	base := sim.DefaultConfig()
	lo, hi := 9.0, 11.0
	capRes := &study.CapacityResult{Answer: "a: 10 req/s; b: 8 req/s.", Rule: "the rule", Capacity: []study.Capacity{
		{Config: "a", MaxRate: 10.04, CILow: &lo, CIHigh: &hi, Seeds: 3, Probes: 20, USDPerMillionTokens: 0.2},
		{Config: "b", MaxRate: 8, CILow: &lo, CIHigh: &hi, Seeds: 3, Probes: 21, USDPerMillionTokens: 0.15},
	}}
	var c bytes.Buffer
	st := &reporthtml.StudyScenario{Config: base, Terms: []string{"ttft:p99<=1s"}, Seeds: 3, MaxExtend: 8}
	if err := reporthtml.WriteCapacity(&c, capRes, reporthtml.Options{Study: st}); err != nil {
		t.Fatal(err)
	}
	var s bytes.Buffer
	if err := reporthtml.WriteSweep(&s, sweepResult("cfg"), reporthtml.Options{Study: &reporthtml.StudyScenario{Config: base, Rates: []float64{5, 10, 20}, Seeds: 2}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		name, page, headline string
		rows                 int
	}{
		{"capacity", c.String(), "Cheapest setup that holds every term: b, up to 8.00 req/s (95 % CI 9.00–11.0), $0.15 per million output tokens.", 2},
		{"sweep", s.String(), "Stable up to 10.0 req/s of the rates swept; throughput saturates at 10.0 req/s.", 1},
	} {
		doc := parse(t, []byte(p.page))
		var answer *htmlNode
		walk(doc, func(n *htmlNode) {
			if attr(n, "id") == "answer" {
				answer = n
			}
		})
		if answer == nil {
			t.Fatalf("%s: no answer section", p.name)
		}
		var strong []string
		rows := 0
		walk(answer, func(n *htmlNode) {
			if n.Data == "strong" {
				strong = append(strong, text(n))
			}
			if n.Data == "tr" && n.Parent != nil && n.Parent.Data == "tbody" {
				rows++
			}
		})
		if len(strong) != 1 || strong[0] != p.headline {
			t.Errorf("%s: bold text %q, want one sentence %q", p.name, strong, p.headline)
		}
		if rows != p.rows {
			t.Errorf("%s: %d rows in the per-configuration table, want %d", p.name, rows, p.rows)
		}
		body := text(answer)
		for _, want := range []string{"Scenario: llama-3.1-8b on 1 × h100-sxm-80gb", "8192 batched tokens", "Each probe: "} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the answer section does not say %q:\n%s", p.name, want, body)
			}
		}
	}
	if !strings.Contains(c.String(), "SLO terms: ttft:p99&lt;=1s.") || !strings.Contains(c.String(), "extended up to 8×") {
		t.Errorf("capacity: the terms or the probe length are not named")
	}
	if !strings.Contains(s.String(), "at 5.00, 10.0, 20.0 req/s") {
		t.Errorf("sweep: the rates swept are not named")
	}
	if strings.Contains(s.String(), "configurations compared") {
		t.Errorf("sweep of one configuration: says it compares configurations")
	}
	// Configurations compared: the settings they differ in, each value
	// once, and whose the scenario's words are.
	a, b, d := base, base, base
	a.Name, b.Name, d.Name = "small", "large", "large-again"
	a.Scheduler.MaxNumBatchedTokens, b.Scheduler.MaxNumBatchedTokens, d.Scheduler.MaxNumBatchedTokens = 512, 2048, 2048
	d.Seed = 9
	var v bytes.Buffer
	if err := reporthtml.WriteSweep(&v, sweepResult("cfg"), reporthtml.Options{Study: &reporthtml.StudyScenario{Config: a, Variants: []sim.Config{a, b, d}, Rates: []float64{5}, Seeds: 1}}); err != nil {
		t.Fatal(err)
	}
	if want := "3 configurations compared, differing in max batched tokens (512, 2048), KV blocks ("; !strings.Contains(v.String(), want) {
		t.Errorf("sweep of 3 configurations does not say %q", want)
	}
	if want := ") and seed (1, 9); the scenario above is small&#39;s."; !strings.Contains(v.String(), want) {
		t.Errorf("sweep of 3 configurations does not say %q", want)
	}
}

// A cluster's scenario counts its replicas and gives the KV blocks per
// replica, not one GPU holding them all.
func TestClusterScenarioWords(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Cluster.Replicas = 8
	cfg.KVCache.NumGPUBlocks = 3000
	cfg.Workload.Requests = 200
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runs := []reports.Run{reports.NewRun("cluster", nil, e.Setup().Config, e.Run())}
	page := string(render(t, runs, reporthtml.Options{}))
	for _, want := range []string{"8 replicas of llama-3.1-8b, each on 1 × h100-sxm-80gb", "3000 blocks of 16 tokens per replica (24000 in all)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the scenario does not say %q", want)
		}
	}
}

// pctStyle finds "p95 dashed" claims in a section's caption.
var pctStyle = regexp.MustCompile(`\b(p\d+) (solid|dashed|dotted)\b`)

// Every chart's percentile lines have the style its caption names, the
// legend of at most 12 entries is shown whole, and category axes label
// every category: on the report page and the sweep page alike.
func TestChartsMatchTheirCaptions(t *testing.T) {
	var sw bytes.Buffer
	if err := reporthtml.WriteSweep(&sw, sweepResult("cfg"), reporthtml.Options{}); err != nil {
		t.Fatal(err)
	}
	pages := map[string][]byte{"report": render(t, simulated(t), reporthtml.Options{}), "sweep": sw.Bytes()}
	for name, page := range pages {
		checked := 0
		walk(parse(t, page), func(sec *htmlNode) {
			if sec.Data != "section" {
				return
			}
			intro := ""
			walk(sec, func(n *htmlNode) {
				if n.Data == "p" && intro == "" {
					intro = text(n)
				}
			})
			claims := map[string]string{}
			for _, m := range pctStyle.FindAllStringSubmatch(intro, -1) {
				claims[m[1]] = m[2]
			}
			walk(sec, func(n *htmlNode) {
				if n.Data != "script" || attr(n, "type") != "application/json" {
					return
				}
				var opt struct {
					Legend struct{ Type string } `json:"legend"`
					Series []struct {
						Name      string `json:"name"`
						LineStyle *struct {
							Type string `json:"type"`
						} `json:"lineStyle"`
					} `json:"series"`
					XAxis []struct {
						Type      string         `json:"type"`
						AxisLabel map[string]any `json:"axisLabel"`
					} `json:"xAxis"`
				}
				if err := json.Unmarshal([]byte(text(n)), &opt); err != nil {
					t.Fatalf("%s %s: %v", name, attr(n, "id"), err)
				}
				names := map[string]bool{}
				for _, s := range opt.Series {
					names[s.Name] = true
					for p, want := range claims {
						if strings.HasSuffix(s.Name, " "+p) && (s.LineStyle == nil || s.LineStyle.Type != want) {
							t.Errorf("%s %s: series %q is not %s as its caption says", name, attr(n, "id"), s.Name, want)
						}
					}
					checked++
				}
				if len(names) <= 12 && opt.Legend.Type != "plain" {
					t.Errorf("%s %s: %d legend entries paginated (%q)", name, attr(n, "id"), len(names), opt.Legend.Type)
				}
				for _, x := range opt.XAxis {
					if x.Type == "category" && x.AxisLabel["interval"] != 0.0 {
						t.Errorf("%s %s: a category axis that may skip labels (interval %v)", name, attr(n, "id"), x.AxisLabel["interval"])
					}
				}
			})
		})
		if checked == 0 {
			t.Errorf("%s: no series checked", name)
		}
	}
}
