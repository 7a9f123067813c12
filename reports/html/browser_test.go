package html_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/itlsim/itlsim/reports"
	reporthtml "github.com/itlsim/itlsim/reports/html"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/reports/study"
	"github.com/itlsim/itlsim/sim"
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
		// Categories has, per category axis, its name ("xAxis0"), its
		// categories and the labels ECharts laid out for them.
		Categories [][]any `json:"categories"`
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

// captionStyle finds "p95 dashed" (or "dashed p95") claims in a caption.
var captionStyle = regexp.MustCompile(`\b(p\d+) (solid|dashed|dotted)\b|\b(solid|dashed|dotted) (p\d+)\b`)

// checkLayout holds what the browser drew to what a reader is told; see
// layoutProblems.
func checkLayout(t *testing.T, page string, st *selftest) {
	t.Helper()
	for _, p := range layoutProblems(page, st) {
		t.Error(p)
	}
}

// layoutProblems lists where a page's drawing differs from what a reader
// is told: a table cut off at the window's edge, a legend of at most 12
// entries paginated, two labels of a chart overlapping (axis titles on
// tick labels among them), a category axis that leaves categories
// unlabelled, and a percentile line not in the style its caption names.
func layoutProblems(page string, st *selftest) []string {
	var out []string
	for _, id := range st.CutTables {
		out = append(out, fmt.Sprintf("%s: table %s is wider than the window and does not scroll in its own box", page, id))
	}
	if st.PageWider {
		out = append(out, page+": the page is wider than the window (something is cut off or scrolls the whole page)")
	}
	for _, c := range st.Charts {
		names := map[string]bool{}
		for _, s := range c.Styles {
			names[s[0]] = true
		}
		if len(names) <= 12 && c.Legend != "plain" {
			out = append(out, fmt.Sprintf("%s: chart %s has %d legend entries in a %q legend, want them all shown (plain)", page, c.ID, len(names), c.Legend))
		}
		for _, o := range c.Overlaps {
			out = append(out, fmt.Sprintf("%s: chart %s: labels overlap: %s", page, c.ID, o))
		}
		for _, a := range c.Categories {
			if len(a) != 3 || a[1] != a[2] {
				out = append(out, fmt.Sprintf("%s: chart %s: %v: want a label for every category (axis, categories, labels)", page, c.ID, a))
			}
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
					out = append(out, fmt.Sprintf("%s: chart %s: series %q is %s but its caption says %s %s", page, c.ID, s[0], s[1], p, want))
				}
			}
		}
	}
	return out
}

// gateMarkdown is a gate report as gate.Write prints it for a pull request
// (the columns of an older version: no test, n or MDE).
const gateMarkdown = "**itlsim gate: FAIL** — candidate `b.json` (120 streams) against baseline `a.json` (120 streams)\n\n" +
	"| metric | baseline | candidate | change | 95% CI of change | verdict |\n|:--|:--|:--|:--|:--|:--|\n" +
	"| stream_p99_itl_p99 | 134.0 ms | 402.1 ms | +200.1% | [+150.0%, +260.0%] | **FAIL** |\n" +
	"| itl_goodput | 100.0% | 87.0% | −13.0 pt | [−20.0 pt, −6.0 pt] | **FAIL** |\n\n" +
	"Failed: stream_p99_itl_p99, itl_goodput.\n"

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

// runSelfTest opens page in headless Chromium and returns what its
// self-test hook wrote.
func runSelfTest(t *testing.T, chromium, name string, page []byte) selftest {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	var result string
	walk(parse(t, dumpDOM(t, chromium, path)), func(n *htmlNode) {
		if attr(n, "id") == "itlsim-selftest" {
			result = text(n)
		}
		if attr(n, "id") == "injected" {
			t.Errorf("%s: a hostile name injected an element: <%s id=injected>", name, n.Data)
		}
	})
	if strings.TrimSpace(result) == "" {
		t.Fatalf("%s: the self-test wrote nothing: the page's scripts did not run to the end", name)
	}
	var st selftest
	if err := json.Unmarshal([]byte(result), &st); err != nil {
		t.Fatalf("%s: self-test output %q: %v", name, result, err)
	}
	return st
}

// pageTypes are the pages itlsim writes with --html, each as its command
// builds it, with ECharts inlined and the self-test hook: a run, runs
// compared (four, with long names, as run --vary writes them), a gate's
// page (one run named to inject markup), a cluster's run (its per-replica
// charts), measured runs (analyze and validate), a sweep of three
// configurations and a capacity study. Each maps to the text its opening
// must hold.
func pageTypes(t *testing.T, o reporthtml.Options) (map[string][]byte, map[string]string) {
	t.Helper()
	hostileRuns := simulated(t) // the second named to inject markup
	runs := cloneRuns(hostileRuns)
	runs[1].Name = "prefill-first"
	compared := cloneRuns(append(runs, runs...))
	for i, n := range []string{"max_num_batched_tokens=512/chunked", "max_num_batched_tokens=512/prefill-first",
		"max_num_batched_tokens=2048/chunked", "max_num_batched_tokens=2048/prefill-first"} {
		compared[i].Name = n
	}
	cfg := sim.DefaultConfig()
	cfg.Cluster.Replicas, cfg.KVCache.NumGPUBlocks, cfg.Workload.Requests = 4, 2000, 300
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cluster := []reports.Run{reports.NewRun("cluster", nil, e.Setup().Config, e.Run())}
	recs, err := ingest.ReadFiles([]string{"../ingest/testdata/vllm_small.json", "../ingest/testdata/aiperf_small.jsonl"}, "")
	if err != nil {
		t.Fatal(err)
	}
	measured := ingest.Runs(recs, sim.DefaultConfig().Metrics, true)
	g := o
	g.Gate = []byte(gateMarkdown)
	var sweep, capacity bytes.Buffer
	sw := sweepResult("chunked")
	for _, n := range []string{"prefill-first", "max_num_batched_tokens=2048/chunked"} {
		more := sweepResult(n)
		sw.Points, sw.Configs = append(sw.Points, more.Points...), append(sw.Configs, more.Configs...)
	}
	if err := reporthtml.WriteSweep(&sweep, sw, o); err != nil {
		t.Fatal(err)
	}
	capRes := &study.CapacityResult{Answer: "a: 10 req/s.", Capacity: []study.Capacity{
		{Config: "a", MaxRate: 10, TokensPerSPerGPU: 1000, TokensPerSPerUser: 50, StreamP99ITLP99: 100, Pareto: true, ParetoITL: true},
		{Config: "b", MaxRate: 8, TokensPerSPerGPU: 800, TokensPerSPerUser: 40, StreamP99ITLP99: 120},
	}}
	if err := reporthtml.WriteCapacity(&capacity, capRes, o); err != nil {
		t.Fatal(err)
	}
	pages := map[string][]byte{
		"run":      render(t, runs[:1], o),
		"compared": render(t, compared, o),
		"gate":     render(t, hostileRuns, g),
		"cluster":  render(t, cluster, o),
		"measured": render(t, measured, o),
		"sweep":    sweep.Bytes(),
		"capacity": capacity.Bytes(),
	}
	opening := map[string]string{
		"run":      "chunked: ",
		"compared": "Best on the SLOs",
		"gate":     "The gate's verdict is FAIL; failed: stream_p99_itl_p99 (+200.1%), itl_goodput (−13.0 pt).",
		"cluster":  "cluster: 100.0 % of 300 requests met the SLOs",
		"measured": "Stall causes are unknown for measured streams",
		"sweep":    "Stable to the highest rate: ",
		"capacity": "req/s",
	}
	return pages, opening
}

// TestBrowserChecksEveryPageType opens every type of page in headless
// Chromium and checks that every chart drew SVG paths, the "chart library
// could not be loaded" notice was hidden, the opening (the verdict, the
// finding or the answer) is shown and says what its page type must, the
// console logged no error, no name injected markup, and the layout holds (checkLayout: no table cut
// off, no paginated legend of 12 or fewer entries, no overlapping labels,
// every category labelled, every percentile line as its caption says).
func TestBrowserChecksEveryPageType(t *testing.T) {
	chromium, js := chromiumPath(t), echartsBuild(t)
	pages, opening := pageTypes(t, reporthtml.Options{ECharts: js, SelfTest: true})
	names := make([]string, 0, len(pages))
	for name := range pages {
		names = append(names, name)
	}
	slices.Sort(names)
	// Each page in its own Chromium, as many at once as -parallel allows:
	// a browser spends most of its time waiting, not computing.
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkPage(t, chromium, name, pages[name], opening[name])
		})
	}
}

// checkPage is TestBrowserChecksEveryPageType's check of one page.
func checkPage(t *testing.T, chromium, name string, page []byte, opening string) {
	t.Helper()
	want := chartIDs(parse(t, page))
	st := runSelfTest(t, chromium, name, page)
	if st.ECharts == "" || !st.NoticeHidden {
		t.Errorf("%s: ECharts %q, notice hidden %v", name, st.ECharts, st.NoticeHidden)
	}
	for _, e := range st.Errors {
		t.Errorf("%s: console error: %s", name, e)
	}
	if !strings.Contains(st.Finding, opening) {
		t.Errorf("%s: the opening shown is %q, want it to say %q", name, st.Finding, opening)
	}
	if len(st.Charts) != len(want) || len(want) == 0 {
		t.Errorf("%s: self-test saw %d charts, the page has %d", name, len(st.Charts), len(want))
	}
	// A gate's page opens with its verdict, the table row for row.
	if name == "gate" && (!strings.Contains(st.Verdict, "itlsim gate: FAIL") || st.VerdictRows != 2) {
		t.Errorf("gate: the verdict shown is %q with %d rows, want FAIL and 2 rows", st.Verdict, st.VerdictRows)
	}
	categories := 0
	for _, c := range st.Charts {
		categories += len(c.Categories)
		if !c.Instance || c.Series == 0 || c.SVG == 0 || c.Paths < 3 {
			t.Errorf("%s: chart %s did not draw: instance=%v series=%d svg=%d paths=%d", name, c.ID, c.Instance, c.Series, c.SVG, c.Paths)
		}
	}
	t.Logf("%s: %d charts, %d category axes", name, len(st.Charts), categories)
	checkLayout(t, name, &st)
}

// TestBrowserLayoutChecksFail: each layout check fails on a page broken
// in its way. The runs-compared page (whose wide tables scroll in their
// boxes and pass) is drawn with the Goodput chart labelling one category
// in three, the first plain legend paginated, the first dotted (p99) line
// dashed, the first 50 px axis title gap cut to 5 px, and a table wider
// than the window outside any scroll box.
func TestBrowserLayoutChecksFail(t *testing.T) {
	chromium, js := chromiumPath(t), echartsBuild(t)
	pages, _ := pageTypes(t, reporthtml.Options{ECharts: js, SelfTest: true})
	page := string(pages["compared"])
	i := strings.Index(page, `id="chart-goodput-option"`)
	if i < 0 {
		t.Fatal("no Goodput chart")
	}
	page = page[:i] + strings.Replace(page[i:], `"interval":0`, `"interval":2`, 1)
	for _, r := range [][2]string{{`"type":"plain"`, `"type":"scroll"`}, {`"type":"dotted"`, `"type":"dashed"`}, {`"nameGap":50`, `"nameGap":5`}} {
		if !strings.Contains(page, r[0]) {
			t.Fatalf("the page has no %s", r[0])
		}
		page = strings.Replace(page, r[0], r[1], 1)
	}
	wide := `<table id="wide"><tr><td style="white-space:nowrap">` + strings.Repeat("a wide cell ", 200) + `</td></tr></table>`
	page = strings.Replace(page, `<pre id="itlsim-selftest">`, wide+`<pre id="itlsim-selftest">`, 1)
	st := runSelfTest(t, chromium, "broken", []byte(page))
	problems := strings.Join(layoutProblems("broken", &st), "\n")
	for _, want := range []string{"chart chart-goodput: [xAxis0 4 2]: want a label for every category",
		`legend entries in a "scroll" legend`, "p99\" is dashed but its caption says p99 dotted", "labels overlap: ",
		"table wide is wider than the window", "the page is wider than the window"} {
		if !strings.Contains(problems, want) {
			t.Errorf("the broken page's problems do not include %q:\n%s", want, problems)
		}
	}
}
