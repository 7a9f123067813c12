package html

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"

	"github.com/itlsim/itlsim/reports"
)

// CDNURL is where a page made without an inlined ECharts loads it from:
// the assets host go-echarts uses by default. Such a page needs the network
// to draw its charts; its tables never do.
const CDNURL = "https://go-echarts.github.io/go-echarts-assets/assets/echarts.min.js"

// Options tune a report.
type Options struct {
	// ECharts is the ECharts build to inline (the contents of
	// echarts.min.js, e.g. package/dist/echarts.min.js of `npm pack
	// echarts@5`). Empty: the page loads CDNURL.
	ECharts []byte
	// Title heads the page. Default "itlsim report".
	Title string
	// Gate is a gate's report in its markdown form (gate.Write with
	// reports.FormatMarkdown); the page then opens with its verdict table.
	Gate []byte
	// SelfTest adds a script that, once the charts have drawn, writes into
	// <pre id="itlsim-selftest"> a JSON object: the ECharts version, per
	// chart container whether an ECharts instance exists and how many SVG
	// paths it drew, and every error the page logged. Browser tests read it.
	SelfTest bool
	// Study names what a sweep's or capacity study's page ran (WriteSweep,
	// WriteCapacity): nil leaves the scenario out of the page.
	Study *StudyScenario
	// Finding, when set, opens the page's finding in place of the ranking
	// of runs by their SLOs: validate states each simulation's error
	// against its measurement, which a ranking of a measured run against
	// its simulation does not say.
	Finding []string
}

// CheckECharts reports whether js can be inlined in a <script> element
// as it is: it must not contain "</script" or "<!--", which would end the
// element early or change how the browser reads it.
func CheckECharts(js []byte) error {
	if len(bytes.TrimSpace(js)) == 0 {
		return errors.New("the ECharts file is empty")
	}
	if bytes.Contains(bytes.ToLower(js), []byte("</script")) || bytes.Contains(js, []byte("<!--")) {
		return errors.New(`the ECharts file contains "</script" or "<!--" and cannot be inlined in a page`)
	}
	return nil
}

// WriteDocument writes the report of every run of doc; see Write.
func WriteDocument(w io.Writer, doc reports.Document, o Options) error {
	return Write(w, doc.Runs, o)
}

// Write writes one self-contained HTML page comparing runs: the scenario
// in words, the summary table, the charts and their numbers as tables.
// The same runs and options always give the same bytes.
func Write(w io.Writer, runs []reports.Run, o Options) error {
	if len(runs) == 0 {
		return errors.New("report: no runs")
	}
	if len(o.ECharts) > 0 {
		if err := CheckECharts(o.ECharts); err != nil {
			return err
		}
	}
	p, err := build(runs, o)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := pageTemplate.Execute(bw, p); err != nil {
		return err
	}
	return bw.Flush()
}

// page is everything the template shows.
type page struct {
	Title    string
	Names    []string
	Verdict  *verdictView
	Finding  []string
	Scenario scenarioView
	Summary  table
	// SummaryZero holds the summary's rows that are zero for every run.
	SummaryZero table
	Sections    []section
	// Hidden names the sections left out for want of data, and why.
	Hidden   []string
	Inline   bool
	ECharts  template.JS
	CDN      string
	SelfTest bool
}

func build(runs []reports.Run, o Options) (*page, error) {
	names := displayNames(runs)
	p := &page{Title: o.Title, Names: names, Finding: finding(runs, names), Scenario: scenarioOf(runs, names), CDN: CDNURL, SelfTest: o.SelfTest}
	if p.Title == "" {
		p.Title = "itlsim report"
	}
	if len(o.Finding) > 0 {
		p.Finding = append(slices.Clone(o.Finding), stallFinding(runs, names))
	}
	p.Verdict = verdictOf(o.Gate)
	if p.Verdict != nil {
		// The finding opens with the gate's verdict, so that a reader of the
		// finding alone reads what the gate decided, not only the ranking.
		p.Finding = append([]string{p.Verdict.finding()}, p.Finding...)
	}
	if len(o.ECharts) > 0 {
		p.Inline, p.ECharts = true, template.JS(o.ECharts)
	}
	var err error
	if p.Summary, err = summaryTable(runs, names); err != nil {
		return nil, err
	}
	p.Summary, p.SummaryZero = splitZeroRows(p.Summary)
	sets := make([]streamSets, len(runs))
	for i := range runs {
		sets[i] = setsOf(&runs[i])
	}
	for _, mk := range []func() (section, error){
		func() (section, error) { return itlTimeSection(runs, names) },
		func() (section, error) { return positionSection(runs, names) },
		func() (section, error) { return cdfSection(runs, names, sets) },
		func() (section, error) { return jitterSection(runs, names, sets) },
		func() (section, error) { return stallSection(runs, names) },
		func() (section, error) { return worstSection(runs, names) },
		func() (section, error) { return kvSection(runs, names) },
		func() (section, error) { return latencySection(runs, names, sets) },
		func() (section, error) { return goodputSection(runs, names) },
	} {
		s, err := mk()
		if err != nil {
			return nil, err
		}
		if why := noData(s.ID, runs); why != "" {
			p.Hidden = append(p.Hidden, s.Title+": "+why)
			continue
		}
		p.Sections = append(p.Sections, s)
	}
	if s, ok, err := replicasSection(runs, names); err != nil {
		return nil, err
	} else if ok {
		p.Sections = append(p.Sections, s)
	}
	return p, nil
}

// noData says why no run has data for the section id (measured files
// without start times, gaps or server-side figures), or "" when one has.
func noData(id string, runs []reports.Run) string {
	none := func(has func(r *reports.Run) bool) bool {
		for i := range runs {
			if has(&runs[i]) {
				return false
			}
		}
		return true
	}
	switch id {
	case "itl-time", "kv":
		if none(func(r *reports.Run) bool { return len(r.Timeseries) > 0 }) {
			return "no run has a time series (the files record no request start times)"
		}
	case "itl-position":
		if none(func(r *reports.Run) bool { return len(r.ITLByPosition) > 0 }) {
			return "no run records the gaps between tokens"
		}
	case "stalls":
		if none(func(r *reports.Run) bool { return !r.Summary.Measured }) {
			return "measured streams do not say why a gap was long"
		}
	case "worst":
		if none(func(r *reports.Run) bool { return len(r.WorstStreams) > 0 }) {
			return "no run records the gaps between tokens"
		}
	}
	return ""
}

// displayNames are the runs' names made unique and non-empty: charts key
// their categories and legends by name.
func displayNames(runs []reports.Run) []string {
	names := make([]string, len(runs))
	seen := map[string]bool{}
	for i := range runs {
		n := runs[i].Name
		if n == "" {
			n = fmt.Sprintf("run %d", i+1)
		}
		base := n
		for k := 2; seen[n]; k++ {
			n = fmt.Sprintf("%s (%d)", base, k)
		}
		seen[n] = true
		names[i] = n
	}
	return names
}

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

// pageHTML is the page. html/template escapes every value for its context
// (text, attribute, CSS); the option JSON and the inlined ECharts are
// template.JS, checked beforehand to be unable to end their script element.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}: {{range $i, $n := .Names}}{{if $i}} · {{end}}{{$n}}{{end}}</title>
<style>
{{template "css"}}th.section { background: #fafafa; font-weight: 600; }
td.wrap { max-width: 700px; overflow-wrap: anywhere; font-size: 12px; }
nav a { margin-right: 12px; }
p.pass strong { color: #1a7f37; }
p.fail strong { color: #c62828; }
</style>
{{- if .SelfTest}}{{template "selftest-head"}}{{- end}}
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">{{len .Names}} run(s) compared: {{range $i, $n := .Names}}{{if $i}}, {{end}}<strong>{{$n}}</strong>{{end}}.
{{- if .Inline}} ECharts is inlined in this file: the charts need no network.
{{- else}} The charts load ECharts from {{.CDN}} and need the network; <code>--echarts-js FILE</code> inlines a local copy instead.
{{- end}} Every chart's numbers are also in the tables below it.</p>
<div id="itlsim-nojs" class="warn">The chart library (ECharts) could not be loaded
{{- if .Inline}} (it is inlined in this file: scripts may be disabled)
{{- else}} from {{.CDN}} (this page needs the network for its charts; make an offline report with <code>--echarts-js FILE</code>)
{{- end}}, so no chart is drawn. The tables hold every number.</div>
{{- with .Verdict}}
<section id="verdict">
<h2>Verdict</h2>
<p class="{{if .Pass}}pass{{else}}fail{{end}}"><strong>{{.Headline}}</strong></p>
{{template "table" .Table}}
{{- range .Notes}}
<p class="meta">{{.}}</p>
{{- end}}
</section>
{{- end}}
<section id="finding">
<h2>Finding</h2>
{{- range .Finding}}
<p>{{.}}</p>
{{- end}}
</section>
<nav>{{if .Verdict}}<a href="#verdict">Verdict</a>{{end}}<a href="#finding">Finding</a><a href="#scenario">Scenario</a><a href="#summary">Summary</a>{{range .Sections}}<a href="#{{.ID}}">{{.Title}}</a>{{end}}</nav>

{{- if .Hidden}}
<p class="meta">Not shown, for want of data: {{range $i, $h := .Hidden}}{{if $i}}; {{end}}{{$h}}{{end}}.</p>
{{- end}}

<section id="scenario">
<h2>Scenario</h2>
{{- with .Scenario}}
{{- if .Many}}
<p>As the first run, <strong>{{.First}}</strong>, has it:</p>
{{- end}}
<p>{{.Setup}}</p>
<p>Workload: {{.Workload}}</p>
<p>{{.Judged}}</p>
{{- if .Differ.Rows}}
{{template "table" .Differ}}
{{- else if .Many}}
<p>The runs share every setting above.</p>
{{- end}}
{{- end}}
</section>

<section id="summary">
<h2>Summary</h2>
{{template "table" .Summary}}
{{- if .SummaryZero.Rows}}
{{template "table" .SummaryZero}}
{{- end}}
</section>
{{template "sections" .Sections}}{{template "draw" .}}{{- if .SelfTest}}{{template "selftest-body"}}{{- end}}
</body>
</html>
{{define "css"}}body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 16px 48px; color: #222; }
h1 { margin: 20px 0 4px; }
h2 { margin-top: 36px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { margin: 18px 0 4px; font-size: 15px; }
.meta { color: #555; }
.warn { background: #fff4e5; border: 1px solid #f0a040; padding: 8px 12px; margin: 12px 0; }
.chart { width: 100%; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 8px 0 16px; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
thead th { background: #f4f4f4; }
{{end}}{{define "sections"}}{{range .}}
<section id="{{.ID}}">
<h2>{{.Title}}</h2>
<p>{{.Intro}}</p>
{{- range .Charts}}
<h3>{{.Title}}</h3>
<div class="chart" id="{{.ID}}" style="height: {{.Height}}px"></div>
<script type="application/json" id="{{.ID}}-option">{{.Option}}</script>
{{- end}}
{{- range .Tables}}
{{template "table" .}}
{{- end}}
</section>
{{end}}{{end}}{{define "draw"}}{{- if .Inline}}
<script>{{.ECharts}}</script>
{{- else}}
<script src="{{.CDN}}"></script>
{{- end}}
<script>
(function () {
  "use strict";
  if (typeof echarts === "undefined") { return; }
  document.getElementById("itlsim-nojs").style.display = "none";
  // fit lays a chart out for its real width (charts.go's layout marks
  // what it sizes): category labels get their share of the width, and the
  // grid and the chart grow by the rows a plain legend wraps to, so that no
  // text sits on other text.
  function fit(el, opt) {
    var plot = Math.max(200, el.clientWidth - 160);
    (opt.xAxis || []).forEach(function (ax) {
      var l = ax.axisLabel;
      if (ax.type !== "category" || !ax.data || !ax.data.length || !l || !l.overflow) { return; }
      var share = 0.8 * plot / ax.data.length, widest = 0, word = 0;
      ax.data.forEach(function (d) {
        var t = String(d && d.value !== undefined ? d.value : d);
        widest = Math.max(widest, 7 * Array.from(t).length);
        t.split(" ").forEach(function (w) { word = Math.max(word, 7 * Array.from(w).length); });
      });
      if (!l.rotate && widest <= share) {
        delete l.overflow; delete l.width; // every label fits on one line
      } else if (!l.rotate && word <= share) {
        l.width = Math.floor(share); l.lineHeight = 16; // wrapped between words
      } else {
        // Too narrow to wrap: slanted, and cut to fit beside the next.
        l.rotate = l.rotate || 30; l.overflow = "truncate";
        var rad = l.rotate * Math.PI / 180;
        l.width = Math.floor(Math.min(180, share / Math.cos(rad)));
        // The axis title goes below the slanted labels, and the chart grows
        // by what it moved.
        var gap = Math.ceil((l.margin || 8) + Math.min(widest, l.width) * Math.sin(rad) + 12 * Math.cos(rad) + 10);
        if (ax.name && gap > (ax.nameGap || 15)) {
          el.style.height = (el.clientHeight + gap - (ax.nameGap || 15)) + "px";
          ax.nameGap = gap;
        }
      }
    });
    var g = [].concat(opt.grid || [])[0], lg = [].concat(opt.legend || [])[0]; // an object or a list of them
    if (!g || !lg || lg.type !== "plain" || g.itlsimBaseTop === undefined) { return; }
    var names = [], seen = {};
    (opt.series || []).forEach(function (s) { if (s.name && !seen[s.name]) { seen[s.name] = true; names.push(s.name); } });
    var rows = 1, x = 0;
    names.forEach(function (n) {
      var w = 35 + 6.5 * Array.from(n).length;
      if (x > 0 && x + w > plot) { rows++; x = 0; }
      x += w;
    });
    g.top = String(g.itlsimBaseTop + 24 * (rows - 1));
    el.style.height = (el.clientHeight + 24 * (rows - 1)) + "px";
  }
  var els = document.querySelectorAll("div.chart");
  for (var i = 0; i < els.length; i++) {
    try {
      var opt = JSON.parse(document.getElementById(els[i].id + "-option").textContent);
      fit(els[i], opt);
      // Draw every series in one pass: progressive rendering (ECharts'
      // default above 3,000 points) never finishes in headless Chromium
      // under a virtual time budget, and the data are bounded anyway.
      (opt.series || []).forEach(function (s) { s.progressive = 0; });
      echarts.init(els[i], null, { renderer: "svg" }).setOption(opt);
    } catch (e) {
      console.error("chart " + els[i].id + ": " + e);
    }
  }
  window.addEventListener("resize", function () {
    for (var i = 0; i < els.length; i++) {
      var c = echarts.getInstanceByDom(els[i]);
      if (c) { c.resize(); }
    }
  });
})();
</script>{{end}}{{define "selftest-head"}}
<script>
window.itlsimErrors = [];
window.addEventListener("error", function (e) { window.itlsimErrors.push("error: " + (e.message || String(e))); });
(function () {
  var orig = console.error;
  console.error = function () {
    window.itlsimErrors.push("console.error: " + Array.prototype.map.call(arguments, String).join(" "));
    return orig.apply(console, arguments);
  };
})();
</script>
{{- end}}{{define "selftest-body"}}
<pre id="itlsim-selftest"></pre>
<script>
window.addEventListener("load", function () {
  setTimeout(function () {
    var ok = typeof echarts !== "undefined";
    var out = { echarts: ok ? echarts.version : "", notice_hidden: document.getElementById("itlsim-nojs").style.display === "none", charts: [], errors: window.itlsimErrors };
    var finding = document.getElementById("finding") || document.getElementById("answer");
    out.finding = finding ? finding.innerText : "";
    var verdict = document.getElementById("verdict");
    out.verdict = verdict ? verdict.querySelector("p").innerText : "";
    out.verdict_rows = verdict ? verdict.querySelectorAll("tbody tr").length : 0;
    // Tables wider than the window must scroll in their own box, never
    // widen the page or be cut off at its edge.
    out.cut_tables = [];
    var vw = document.documentElement.clientWidth, tables = document.querySelectorAll("table");
    for (var t = 0; t < tables.length; t++) {
      if (tables[t].getBoundingClientRect().width <= vw) { continue; }
      var box = tables[t].parentElement, scrolls = false;
      for (; box && box !== document.body; box = box.parentElement) {
        var ox = getComputedStyle(box).overflowX;
        if ((ox === "auto" || ox === "scroll") && box.getBoundingClientRect().width <= vw) { scrolls = true; break; }
      }
      if (!scrolls) { out.cut_tables.push(tables[t].id || "table " + t); }
    }
    out.page_wider = document.documentElement.scrollWidth > vw + 1;
    var els = document.querySelectorAll("div.chart");
    for (var i = 0; i < els.length; i++) {
      var inst = ok ? echarts.getInstanceByDom(els[i]) : null;
      var o = inst ? inst.getOption() : {};
      var series = (o.series || []).length;
      var legend = (o.legend || [])[0] || {};
      var styles = (o.series || []).map(function (s) { return [s.name || "", (s.lineStyle || {}).type || ""]; });
      // Text that overlaps other text: every pair of drawn labels whose
      // boxes intersect by more than 2 px in both directions.
      var boxes = [], texts = els[i].querySelectorAll("svg text");
      for (var k = 0; k < texts.length; k++) {
        var r = texts[k].getBoundingClientRect();
        if (texts[k].textContent.trim() !== "" && r.width > 0 && r.height > 0) { boxes.push({ t: texts[k].textContent, r: r }); }
      }
      var overlaps = [];
      for (var a = 0; a < boxes.length; a++) {
        for (var b = a + 1; b < boxes.length; b++) {
          var p = boxes[a].r, q = boxes[b].r;
          if (Math.min(p.right, q.right) - Math.max(p.left, q.left) > 2 && Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top) > 2) {
            overlaps.push(boxes[a].t + " / " + boxes[b].t);
          }
        }
      }
      // Each category axis: its categories and the labels ECharts laid
      // out for them (fewer when it skips some).
      var categories = [];
      ["xAxis", "yAxis"].forEach(function (key) {
        (o[key] || []).forEach(function (ax, k) {
          if (ax.type !== "category") { return; }
          var m = inst.getModel().getComponent(key, k);
          categories.push([key + k, (ax.data || []).length, m && m.axis ? m.axis.getViewLabels().length : -1]);
        });
      });
      var section = els[i].closest("section");
      var intro = section ? (section.querySelector("p") || {}).innerText || "" : "";
      out.charts.push({ id: els[i].id, instance: !!inst, series: series, svg: els[i].querySelectorAll("svg").length, paths: els[i].querySelectorAll("svg path").length,
        legend: legend.type || "", styles: styles, overlaps: overlaps, intro: intro, categories: categories });
    }
    document.getElementById("itlsim-selftest").textContent = JSON.stringify(out);
  }, 500);
});
</script>
{{- end}}{{define "table"}}
{{- if .Collapsed}}<details><summary>{{.Caption}} ({{len .Rows}} rows)</summary>{{end}}
<div class="scroll">
<table id="{{.ID}}">
<caption>{{.Caption}}</caption>
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{- $n := len .Head}}{{$wrap := .Wrap}}
{{- range .Rows}}
{{- if .Section}}
<tr><th class="section" colspan="{{$n}}">{{.Section}}</th></tr>
{{- else}}
<tr>{{range $i, $c := .Cells}}{{if not $i}}<th>{{$c}}</th>{{else if and $wrap (eq $i $wrap)}}<td class="wrap">{{$c}}</td>{{else}}<td>{{$c}}</td>{{end}}{{end}}</tr>
{{- end}}
{{- end}}
</tbody>
</table>
</div>
{{- if .Collapsed}}</details>{{end}}
{{- end}}
`
