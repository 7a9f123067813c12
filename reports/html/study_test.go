package html_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	reporthtml "github.com/itlsim/itlsim/reports/html"
	"github.com/itlsim/itlsim/reports/study"
)

func sweepResult(name string) *study.SweepResult {
	var pts []study.Point
	for _, r := range []float64{5, 10, 20} {
		for _, seed := range []uint64{1, 2} {
			p := study.Point{Config: name, Rate: r, Seed: seed}
			p.Stable = r < 20
			p.OutputTokensPerS = 250 * r
			p.TokensPerSPerUser = study.UserRate{Mean: 100 - 3*r, P10: 90 - 3*r}
			p.Summary.TTFT.P99 = 10 * r
			pts = append(pts, p)
		}
	}
	sat := 10.0
	return &study.SweepResult{Points: pts, Configs: []study.Saturation{{Config: name, SaturationRate: &sat, HighestStable: 10, Words: name + ": stable up to 10 req/s."}}}
}

func TestStudyPagesAreDeterministicAndEscaped(t *testing.T) {
	evil := `<img src=x onerror="window.injected=1" id="injected">`
	var a, b bytes.Buffer
	if err := reporthtml.WriteSweep(&a, sweepResult(evil), reporthtml.Options{}); err != nil {
		t.Fatal(err)
	}
	_ = reporthtml.WriteSweep(&b, sweepResult(evil), reporthtml.Options{})
	if a.String() != b.String() {
		t.Error("the same sweep gave two different pages")
	}
	capRes := &study.CapacityResult{Answer: evil + ": 10 req/s.", Capacity: []study.Capacity{
		{Config: evil, MaxRate: 10, TokensPerSPerGPU: 1000, TokensPerSPerUser: 50, StreamP99ITLP99: 100, Pareto: true, ParetoITL: true},
		{Config: "b", MaxRate: 8, TokensPerSPerGPU: 800, TokensPerSPerUser: 40, StreamP99ITLP99: 120},
	}}
	var c bytes.Buffer
	if err := reporthtml.WriteCapacity(&c, capRes, reporthtml.Options{}); err != nil {
		t.Fatal(err)
	}
	for name, page := range map[string][]byte{"sweep": a.Bytes(), "capacity": c.Bytes()} {
		doc := parse(t, page)
		walk(doc, func(n *htmlNode) {
			if attr(n, "id") == "injected" || n.Data == "img" {
				t.Errorf("%s: injected <%s>", name, n.Data)
			}
			if n.Data == "script" && attr(n, "type") == "application/json" {
				var v map[string]any
				if body := text(n); strings.ContainsAny(body, "<>") || json.Unmarshal([]byte(body), &v) != nil {
					t.Errorf("%s: option %s is not escaped JSON", name, attr(n, "id"))
				}
			}
		})
		want := []string{"chart-sweep-ttft", "chart-sweep-itl", "chart-sweep-goodput", "chart-sweep-user", "chart-sweep-frontier"}
		if name == "capacity" {
			want = []string{"chart-capacity", "chart-pareto-user", "chart-pareto-itl"}
		}
		if got := chartIDs(doc); !slices.Equal(got, want) {
			t.Errorf("%s: charts %v, want %v", name, got, want)
		}
	}
	if !strings.Contains(c.String(), "Pareto front") {
		t.Error("the capacity page draws no Pareto front")
	}
	if err := reporthtml.WriteSweep(&a, &study.SweepResult{}, reporthtml.Options{}); err == nil {
		t.Error("an empty sweep: no error")
	}
}
