package html_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	reporthtml "github.com/itlsim/itlsim/reports/html"
	"github.com/itlsim/itlsim/reports/study"
)

// selftest is what the page's self-test hook writes into
// <pre id="itlsim-selftest">.
type selftest struct {
	ECharts      string `json:"echarts"`
	NoticeHidden bool   `json:"notice_hidden"`
	Charts       []struct {
		ID       string     `json:"id"`
		Instance bool       `json:"instance"`
		Series   int        `json:"series"`
		SVG      int        `json:"svg"`
		Paths    int        `json:"paths"`
		Legend   string     `json:"legend"`
		Styles   [][]string `json:"styles"`
		Overlaps []string   `json:"overlaps"`
		Intro    string     `json:"intro"`
	} `json:"charts"`
	Errors      []string `json:"errors"`
	Finding     string   `json:"finding"`
	Verdict     string   `json:"verdict"`
	VerdictRows int      `json:"verdict_rows"`
	CutTables   []string `json:"cut_tables"`
	PageWider   bool     `json:"page_wider"`
}

// missing skips the test on a developer machine, saying how to get what
// is missing; with ITLSIM_REQUIRE_BROWSER set (as .ci/run sets it) the
// test fails instead.
func missing(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("ITLSIM_REQUIRE_BROWSER") != "" {
		t.Fatalf("%s (ITLSIM_REQUIRE_BROWSER is set, so this fails instead of skipping)", msg)
	}
	t.Skip(msg)
}

// chromiumPath finds headless Chromium: $ITLSIM_CHROMIUM or /usr/bin/chromium.
func chromiumPath(t *testing.T) string {
	t.Helper()
	chromium := os.Getenv("ITLSIM_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing(t, "headless Chromium not found at "+chromium+": install it (apt-get install chromium) or set ITLSIM_CHROMIUM; .ci/run installs it")
	}
	return chromium
}

// echartsBuild reads the ECharts build named by $ITLSIM_ECHARTS_JS.
func echartsBuild(t *testing.T) []byte {
	t.Helper()
	path := os.Getenv("ITLSIM_ECHARTS_JS")
	if path == "" {
		missing(t, "ITLSIM_ECHARTS_JS is not set: point it at echarts.min.js (npm pack echarts@5, then package/dist/echarts.min.js); .ci/run does this")
	}
	js, err := os.ReadFile(path)
	if err != nil {
		missing(t, "ITLSIM_ECHARTS_JS: "+err.Error())
	}
	return js
}

// dumpDOM opens page in headless Chromium and returns the DOM after the
// page's scripts ran (virtual time lets the charts draw and the self-test
// run without waiting in real time).
func dumpDOM(t *testing.T, chromium, page string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	profile := t.TempDir()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+profile, "--virtual-time-budget=5000", "--window-size=800,700",
		"--dump-dom", "file://"+page)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return stdout.Bytes()
}

// TestBrowserDrawsEveryChart opens a report, with ECharts inlined and a
// hostile run name, in headless Chromium and checks that every chart
// container holds an ECharts instance that drew SVG paths, that the
// "chart library could not be loaded" notice was hidden, that the console
// logged no error, and that the hostile name injected nothing.
func TestBrowserDrawsEveryChart(t *testing.T) {
	chromium, js := chromiumPath(t), echartsBuild(t)
	runs := simulated(t)
	page := render(t, runs, reporthtml.Options{ECharts: js, SelfTest: true, Gate: []byte(gateMarkdown)})
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	want := chartIDs(parse(t, page))
	if len(want) < 10 {
		t.Fatalf("the page has %d chart containers, want at least 10", len(want))
	}

	dom := parse(t, dumpDOM(t, chromium, path))
	var result string
	walk(dom, func(n *htmlNode) {
		if attr(n, "id") == "itlsim-selftest" {
			result = text(n)
		}
		if attr(n, "id") == "injected" {
			t.Errorf("the hostile run name injected an element: <%s id=injected>", n.Data)
		}
	})
	if strings.TrimSpace(result) == "" {
		t.Fatal("the self-test wrote nothing: the page's scripts did not run to the end")
	}
	var st selftest
	if err := json.Unmarshal([]byte(result), &st); err != nil {
		t.Fatalf("self-test output %q: %v", result, err)
	}
	t.Logf("ECharts %s drew %d charts", st.ECharts, len(st.Charts))
	if st.ECharts == "" {
		t.Error("echarts is not defined in the page")
	}
	if !st.NoticeHidden {
		t.Error(`the "chart library could not be loaded" notice is still shown`)
	}
	for _, e := range st.Errors {
		t.Errorf("console error: %s", e)
	}
	// The headline and the gate verdict are what a reader sees first.
	if !strings.Contains(st.Finding, "dominant stall cause") {
		t.Errorf("the finding shown is %q", st.Finding)
	}
	if !strings.Contains(st.Verdict, "itlsim gate: FAIL") || st.VerdictRows != 2 {
		t.Errorf("the verdict shown is %q with %d rows, want FAIL and 2 rows", st.Verdict, st.VerdictRows)
	}
	if len(st.Charts) != len(want) {
		t.Errorf("self-test saw %d chart containers, the page has %d", len(st.Charts), len(want))
	}
	for _, c := range st.Charts {
		t.Logf("%-22s instance=%v series=%d svg=%d paths=%d", c.ID, c.Instance, c.Series, c.SVG, c.Paths)
		if !c.Instance || c.Series == 0 || c.SVG == 0 || c.Paths < 5 {
			t.Errorf("chart %s did not draw: instance=%v series=%d svg=%d paths=%d", c.ID, c.Instance, c.Series, c.SVG, c.Paths)
		}
	}
	checkLayout(t, "report", &st)
}

// captionStyle finds "p95 dashed" (or "dashed p95") claims in a caption.
var captionStyle = regexp.MustCompile(`\b(p\d+) (solid|dashed|dotted)\b|\b(solid|dashed|dotted) (p\d+)\b`)

// checkLayout holds what the browser drew to what a reader is told: a
// legend of at most 12 entries is not paginated, no two labels of a chart
// overlap, and every percentile line has the style its caption names.
func checkLayout(t *testing.T, page string, st *selftest) {
	t.Helper()
	for _, id := range st.CutTables {
		t.Errorf("%s: table %s is wider than the window and does not scroll in its own box", page, id)
	}
	if st.PageWider {
		t.Errorf("%s: the page is wider than the window (something is cut off or scrolls the whole page)", page)
	}
	for _, c := range st.Charts {
		names := map[string]bool{}
		for _, s := range c.Styles {
			names[s[0]] = true
		}
		if len(names) <= 12 && c.Legend != "plain" {
			t.Errorf("%s: chart %s has %d legend entries in a %q legend, want them all shown (plain)", page, c.ID, len(names), c.Legend)
		}
		for _, o := range c.Overlaps {
			t.Errorf("%s: chart %s: labels overlap: %s", page, c.ID, o)
		}
		claims := map[string]string{}
		for _, m := range captionStyle.FindAllStringSubmatch(c.Intro, -1) {
			if m[1] != "" {
				claims[m[1]] = m[2]
			} else {
				claims[m[4]] = m[3]
			}
		}
		for _, s := range c.Styles {
			for p, want := range claims {
				if strings.HasSuffix(s[0], " "+p) && s[1] != want {
					t.Errorf("%s: chart %s: series %q is %s but its caption says %s %s", page, c.ID, s[0], s[1], p, want)
				}
			}
		}
	}
}

// gateMarkdown is a gate report as gate.Write prints it for a pull request.
const gateMarkdown = "**itlsim gate: FAIL** — candidate `b.json` (120 streams) against baseline `a.json` (120 streams)\n\n" +
	"| metric | baseline | candidate | change | 95% CI of change | verdict |\n|:--|:--|:--|:--|:--|:--|\n" +
	"| stream_p99_itl_p99 | 134.0 ms | 402.1 ms | +200.1% | [+150.0%, +260.0%] | **FAIL** |\n" +
	"| itl_goodput | 100.0% | 87.0% | −13.0 pt | [−20.0 pt, −6.0 pt] | **FAIL** |\n\n" +
	"Regressed: stream_p99_itl_p99, itl_goodput.\n"

// TestBrowserShowsNoticeWithoutECharts opens a report whose ECharts cannot
// load (the CDN is unreachable offline, and the test blocks it anyway)
// and checks that the notice stays visible and the tables are there.
func TestBrowserShowsNoticeWithoutECharts(t *testing.T) {
	chromium := chromiumPath(t)
	page := render(t, simulated(t), reporthtml.Options{})
	// Point the script at a file that does not exist, so the test never
	// touches the network.
	page = bytes.Replace(page, []byte(reporthtml.CDNURL), []byte("missing-echarts.min.js"), 1)
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	dom := parse(t, dumpDOM(t, chromium, path))
	var notice *htmlNode
	tables := 0
	walk(dom, func(n *htmlNode) {
		if attr(n, "id") == "itlsim-nojs" {
			notice = n
		}
		if n.Data == "table" {
			tables++
		}
	})
	if notice == nil {
		t.Fatal("no #itlsim-nojs notice in the page")
	}
	if s := attr(notice, "style"); strings.Contains(s, "none") {
		t.Errorf("the notice is hidden (style %q) although ECharts did not load", s)
	}
	if !strings.Contains(text(notice), "could not be loaded") {
		t.Errorf("notice text %q", text(notice))
	}
	if tables < 10 {
		t.Errorf("%d tables in the page, want every chart's numbers", tables)
	}
}

// TestBrowserDrawsStudyPages opens a sweep page and a capacity page, with
// ECharts inlined, in headless Chromium and checks that every chart drew
// SVG paths, the answer in words is shown and the console logged no error.
func TestBrowserDrawsStudyPages(t *testing.T) {
	chromium, js := chromiumPath(t), echartsBuild(t)
	o := reporthtml.Options{ECharts: js, SelfTest: true}
	var sweep, capacity bytes.Buffer
	if err := reporthtml.WriteSweep(&sweep, sweepResult("chunked"), o); err != nil {
		t.Fatal(err)
	}
	capRes := &study.CapacityResult{Answer: "a: 10 req/s.", Capacity: []study.Capacity{
		{Config: "a", MaxRate: 10, TokensPerSPerGPU: 1000, TokensPerSPerUser: 50, StreamP99ITLP99: 100, Pareto: true, ParetoITL: true},
		{Config: "b", MaxRate: 8, TokensPerSPerGPU: 800, TokensPerSPerUser: 40, StreamP99ITLP99: 120},
	}}
	if err := reporthtml.WriteCapacity(&capacity, capRes, o); err != nil {
		t.Fatal(err)
	}
	for name, page := range map[string][]byte{"sweep": sweep.Bytes(), "capacity": capacity.Bytes()} {
		path := filepath.Join(t.TempDir(), name+".html")
		if err := os.WriteFile(path, page, 0o644); err != nil {
			t.Fatal(err)
		}
		want := chartIDs(parse(t, page))
		var result string
		walk(parse(t, dumpDOM(t, chromium, path)), func(n *htmlNode) {
			if attr(n, "id") == "itlsim-selftest" {
				result = text(n)
			}
		})
		var st selftest
		if err := json.Unmarshal([]byte(result), &st); err != nil {
			t.Fatalf("%s: self-test output %q: %v", name, result, err)
		}
		if st.ECharts == "" || !st.NoticeHidden {
			t.Errorf("%s: ECharts %q, notice hidden %v", name, st.ECharts, st.NoticeHidden)
		}
		for _, e := range st.Errors {
			t.Errorf("%s: console error: %s", name, e)
		}
		if !strings.Contains(st.Finding, "req/s") {
			t.Errorf("%s: the answer shown is %q", name, st.Finding)
		}
		if len(st.Charts) != len(want) || len(want) == 0 {
			t.Errorf("%s: self-test saw %d charts, the page has %d", name, len(st.Charts), len(want))
		}
		for _, c := range st.Charts {
			if !c.Instance || c.Series == 0 || c.SVG == 0 || c.Paths < 3 {
				t.Errorf("%s: chart %s did not draw: instance=%v series=%d svg=%d paths=%d", name, c.ID, c.Instance, c.Series, c.SVG, c.Paths)
			}
		}
		checkLayout(t, name, &st)
	}
}

// TestBrowserCatchesACutTable: the self-test's table check can fail. A
// table wider than the window inside the page's scroll box passes; the
// same table outside it is reported, as is the page it widens.
func TestBrowserCatchesACutTable(t *testing.T) {
	chromium, js := chromiumPath(t), echartsBuild(t)
	wide := `<table id="wide"><tr><td style="white-space:nowrap">` + strings.Repeat("a wide cell ", 200) + `</td></tr></table>`
	for _, c := range []struct {
		name, table string
		cut         bool
	}{
		{"in its scroll box", `<div class="scroll">` + wide + `</div>`, false},
		{"bare", wide, true},
	} {
		page := render(t, simulated(t), reporthtml.Options{ECharts: js, SelfTest: true})
		page = bytes.Replace(page, []byte(`<pre id="itlsim-selftest">`), []byte(c.table+`<pre id="itlsim-selftest">`), 1)
		path := filepath.Join(t.TempDir(), "report.html")
		if err := os.WriteFile(path, page, 0o644); err != nil {
			t.Fatal(err)
		}
		var result string
		walk(parse(t, dumpDOM(t, chromium, path)), func(n *htmlNode) {
			if attr(n, "id") == "itlsim-selftest" {
				result = text(n)
			}
		})
		var st selftest
		if err := json.Unmarshal([]byte(result), &st); err != nil {
			t.Fatalf("%s: self-test output %q: %v", c.name, result, err)
		}
		if got := slices.Contains(st.CutTables, "wide") && st.PageWider; got != c.cut {
			t.Errorf("%s: cut tables %v, page wider %v; want the wide table reported: %v", c.name, st.CutTables, st.PageWider, c.cut)
		}
		if !c.cut && (len(st.CutTables) > 0 || st.PageWider) {
			t.Errorf("%s: cut tables %v, page wider %v; want none", c.name, st.CutTables, st.PageWider)
		}
	}
}
