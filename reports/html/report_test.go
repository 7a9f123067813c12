package html_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	nethtml "golang.org/x/net/html"

	"github.com/itlsim/itlsim/reports"
	reporthtml "github.com/itlsim/itlsim/reports/html"
	"github.com/itlsim/itlsim/sim"
)

// wantCharts are the chart containers of a two-run report, in page order:
// fixed ids, so the page is byte-identical from one rendering to the next.
var wantCharts = []string{"chart-itl-time", "chart-itl-position", "chart-p99-cdf", "chart-jitter", "chart-stalls",
	"chart-worst-0", "chart-worst-1", "chart-kv-0", "chart-kv-1", "chart-ttft", "chart-e2el", "chart-goodput"}

func TestChartIDsAreFixed(t *testing.T) {
	got := chartIDs(parse(t, render(t, simulated(t), reporthtml.Options{})))
	if !slices.Equal(got, wantCharts) {
		t.Errorf("chart ids = %v, want %v", got, wantCharts)
	}
}

// TestDeterministic renders the same runs twice, and once more after a
// JSON round trip (what `itlsim report` reads), and wants the same bytes.
func TestDeterministic(t *testing.T) {
	runs := simulated(t)
	o := reporthtml.Options{ECharts: []byte("window.echarts = window.echarts || {};")}
	a := render(t, runs, o)
	b := render(t, simulated(t), o)
	if !bytes.Equal(a, b) {
		t.Fatal("two renderings of the same runs differ")
	}
	js, err := json.Marshal(reports.Document{Scenario: runs[0].Config, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	var doc reports.Document
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := reporthtml.WriteDocument(&c, doc, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, c.Bytes()) {
		t.Fatal("the report of the JSON round trip differs from the report of the runs")
	}
	for _, banned := range []string{"Date", "generated at", "Generated"} {
		if bytes.Contains(a, []byte(banned)) {
			t.Errorf("the page contains %q: no timestamps", banned)
		}
	}
}

// TestInjection gives the run, the model, a compared field and a scenario
// path hostile names and checks, with an HTML5 parser, that no element was
// injected, that every name shows as text, and that every chart option is
// JSON with no '<' that could end its script element.
func TestInjection(t *testing.T) {
	runs := simulated(t)
	runs[0].Name = `<img src=x onerror="window.injected=1" id="injected">`
	runs[0].Config.Model = `llama</p><h1 id="injected">model</h1><!--`
	runs[0].Overrides = map[string]string{`scheduler.policy"><h1 id="injected">`: `</code><h1 id="injected">v</h1>`}
	runs[1].Config.Workload.LengthsFile = `]]></script><script id="injected">alert(1)</script>`
	page := render(t, runs, reporthtml.Options{SelfTest: true})
	doc := parse(t, page)

	h1, scripts, jsonBlocks := 0, 0, 0
	walk(doc, func(n *htmlNode) {
		if attr(n, "id") == "injected" {
			t.Errorf("injected element <%s id=injected>", n.Data)
		}
		switch n.Data {
		case "h1":
			h1++
		case "img":
			t.Errorf("injected <img>")
		case "script":
			scripts++
			if attr(n, "type") == "application/json" {
				jsonBlocks++
				body := text(n)
				if strings.ContainsAny(body, "<>") {
					t.Errorf("option %s holds a raw '<' or '>'", attr(n, "id"))
				}
				var v map[string]any
				if err := json.Unmarshal([]byte(body), &v); err != nil {
					t.Errorf("option %s is not JSON: %v", attr(n, "id"), err)
				}
			}
		}
	})
	if h1 != 1 {
		t.Errorf("%d <h1> elements, want the page's own one", h1)
	}
	// The page's own scripts: error capture, the CDN loader, the chart
	// init, the self-test; plus one JSON block per chart.
	if want := 4 + len(wantCharts); scripts != want || jsonBlocks != len(wantCharts) {
		t.Errorf("%d scripts (%d JSON blocks), want %d (%d)", scripts, jsonBlocks, want, len(wantCharts))
	}
	// Every hostile name is there, as text.
	body := text(doc)
	for _, s := range []string{runs[0].Name, runs[1].Name, runs[0].Config.Model, runs[1].Config.Workload.LengthsFile} {
		if !strings.Contains(body, s) {
			t.Errorf("the page's text lacks %q", s)
		}
	}
	// And the charts carry the names unchanged once their JSON is read.
	var legend bool
	walk(doc, func(n *htmlNode) {
		if attr(n, "id") == "chart-p99-cdf-option" {
			var opt struct {
				Series []struct{ Name string } `json:"series"`
			}
			if err := json.Unmarshal([]byte(text(n)), &opt); err != nil {
				t.Fatal(err)
			}
			legend = len(opt.Series) == 2 && opt.Series[0].Name == runs[0].Name && opt.Series[1].Name == runs[1].Name
		}
	})
	if !legend {
		t.Error("the CDF chart's series do not carry the run names")
	}
}

func TestNoticeAndCDN(t *testing.T) {
	page := render(t, simulated(t), reporthtml.Options{})
	doc := parse(t, page)
	var notice *htmlNode
	var src []string
	walk(doc, func(n *htmlNode) {
		if attr(n, "id") == "itlsim-nojs" {
			notice = n
		}
		if n.Data == "script" && attr(n, "src") != "" {
			src = append(src, attr(n, "src"))
		}
	})
	if notice == nil || attr(notice, "style") != "" || attr(notice, "hidden") != "" {
		t.Fatal("the chart-library notice must be in the page and shown by default")
	}
	if !strings.Contains(text(notice), reporthtml.CDNURL) {
		t.Errorf("the notice does not name where ECharts comes from: %q", text(notice))
	}
	if !slices.Equal(src, []string{reporthtml.CDNURL}) {
		t.Errorf("script sources = %v, want only %s", src, reporthtml.CDNURL)
	}
	inline := render(t, simulated(t), reporthtml.Options{ECharts: []byte("var echarts;")})
	if bytes.Contains(inline, []byte(reporthtml.CDNURL+`"></script>`)) || !bytes.Contains(inline, []byte("<script>var echarts;</script>")) {
		t.Error("with ECharts given, the page must inline it and load nothing")
	}
}

func TestCheckECharts(t *testing.T) {
	for _, tc := range []struct {
		js string
		ok bool
	}{
		{"!function(){var e=1}();", true},
		{"", false},
		{"var s='</script>';", false},
		{"var s='</SCRIPT >';", false},
		{"x<!--y", false},
	} {
		err := reporthtml.CheckECharts([]byte(tc.js))
		if (err == nil) != tc.ok {
			t.Errorf("CheckECharts(%q) = %v, want ok=%v", tc.js, err, tc.ok)
		}
	}
	var buf bytes.Buffer
	if err := reporthtml.Write(&buf, simulated(t), reporthtml.Options{ECharts: []byte("a</script>b")}); err == nil {
		t.Error("Write inlined a file holding </script>")
	}
	if err := reporthtml.Write(&buf, nil, reporthtml.Options{}); err == nil {
		t.Error("Write of no runs: want an error")
	}
}

// syntheticRun is a run of n streams with made-up but plausible values:
// the shape `itlsim run --json` writes for a large run, without
// simulating one.
func syntheticRun(name string, n int, seed uint64) reports.Run {
	rng := rand.New(rand.NewPCG(seed, 1))
	cfg := sim.DefaultConfig()
	cfg.Workload.Requests = n
	run := reports.Run{Name: name, Overrides: map[string]string{}, Config: cfg, Streams: make([]reports.StreamRow, n)}
	s := &run.Summary
	s.Requests, s.Finished = n, n
	s.ITLGoodputMS, s.StallThresholdMS = 400, 250
	s.StallMSByCause = map[string]float64{"decode": 1e5, "kv-recompute": 3e6, "prefill-interference": 2e6}
	s.StallStreamsByCause = map[string]float64{"decode": 0.1, "kv-recompute": 0.05, "prefill-interference": 0.2}
	for i := range run.Streams {
		p50 := 8 + rng.Float64()*4
		p99 := p50 * math.Exp(rng.NormFloat64()*0.8+1.5)
		run.Streams[i] = reports.StreamRow{ID: i, Status: "finished", ArrivalS: float64(i) / 17,
			InputTokens: 1000, OutputTokens: 2 + rng.IntN(500), TTFTMS: 30 * math.Exp(rng.NormFloat64()),
			TPOTMS: p50 * 1.2, E2ELMS: 3000 * math.Exp(rng.NormFloat64()*0.5), Chunks: 100,
			ITLP50MS: p50, ITLP99MS: p99, MaxGapMS: p99 * 1.5, JitterRatio: p99 / p50, StallCauses: []string{}}
	}
	for i := range 1024 {
		run.Timeseries = append(run.Timeseries, reports.Point{TS: float64(i) * 64, Running: 200, Waiting: float64(i % 50),
			KVUtilization: 0.9, Steps: 3000, Preemptions: i % 7, ITLCount: 1e5, ITLP50MS: 9, ITLP99MS: 80 + float64(i%30)})
	}
	for i := range 20 {
		run.ITLByPosition = append(run.ITLByPosition, reports.PositionRow{From: 1 << i, To: 1<<(i+1) - 1, Count: 1e6, ITLP50MS: 9, ITLP90MS: 20, ITLP99MS: 90})
	}
	for k := range 10 {
		w := reports.WorstStream{ID: k * 1000, ArrivalS: float64(k), MaxGapMS: 3000}
		t := float64(k) + 0.05
		for j := range 4000 { // long responses: every chunk is kept, exactly
			t += 0.012
			if j%1000 == 999 {
				w.Stalls = append(w.Stalls, reports.StallRecord{Index: j, StartS: t, GapMS: 3000, CauseMS: map[string]float64{"kv-recompute": 2900, "decode": 100}})
				t += 3
			}
			w.ChunkTimesS = append(w.ChunkTimesS, t)
			w.ChunkTokens = append(w.ChunkTokens, 1)
		}
		run.WorstStreams = append(run.WorstStreams, w)
	}
	return run
}

// TestLargeReportSize renders a synthetic run of a million streams: the
// per-stream charts are computed from every stream but emitted with
// bounded points, so the page stays well under 10 MB.
func TestLargeReportSize(t *testing.T) {
	if testing.Short() {
		t.Skip("a million synthetic streams; skipped with -short")
	}
	const n = 1_000_000
	runs := []reports.Run{syntheticRun("large", n, 1)}
	page := render(t, runs, reporthtml.Options{})
	t.Logf("report of %d streams: %d bytes (ECharts not inlined; inlining adds the build's ~1 MB)", n, len(page))
	if len(page) > 10<<20 {
		t.Errorf("report of %d streams is %d bytes, want ≤ 10 MiB", n, len(page))
	}
	walk(parse(t, page), func(n *nethtml.Node) {
		if attr(n, "id") != "chart-p99-cdf-option" {
			return
		}
		var opt struct {
			Series []struct{ Data []any } `json:"series"`
		}
		if err := json.Unmarshal([]byte(text(n)), &opt); err != nil {
			t.Fatal(err)
		}
		for _, s := range opt.Series {
			if len(s.Data) > reporthtml.MaxCDFPoints {
				t.Errorf("CDF series of %d points, want ≤ %d", len(s.Data), reporthtml.MaxCDFPoints)
			}
		}
	})
}

// BenchmarkLargeReport measures rendering a million-stream run.
func BenchmarkLargeReport(b *testing.B) {
	runs := []reports.Run{syntheticRun("large", 1_000_000, 1)}
	for b.Loop() {
		var buf bytes.Buffer
		if err := reporthtml.Write(&buf, runs, reporthtml.Options{}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(buf.Len()), "bytes")
	}
}

// ExampleWrite writes the report of a --json document's runs.
func ExampleWrite() {
	cfg := sim.DefaultConfig()
	cfg.Workload.Requests = 20
	e, err := sim.New(cfg)
	if err != nil {
		panic(err)
	}
	run := reports.NewRun("default", nil, e.Setup().Config, e.Run())
	var page bytes.Buffer
	if err := reporthtml.Write(&page, []reports.Run{run}, reporthtml.Options{Title: "Default scenario"}); err != nil {
		panic(err)
	}
	fmt.Println(strings.Contains(page.String(), `<div class="chart" id="chart-p99-cdf"`))
	// Output: true
}
