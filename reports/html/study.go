package html

import (
	"bufio"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/study"
	"github.com/itlsim/itlsim/sim"
)

// studyPage is a sweep's or a capacity study's page: the answer in words,
// the charts and their numbers.
type studyPage struct {
	Title    string
	Headline string   // the answer in one sentence
	Scenario []string // what was run, in words
	Answers  table    // the answer per configuration
	Rule     string   // how each answer is judged
	Sections []section
	Inline   bool
	ECharts  template.JS
	CDN      string
	SelfTest bool // the browser test's hook, as on the report page
}

// WriteSweep writes the page of a sweep: per configuration, latency
// percentiles, per-stream p99 ITL, goodput and tokens/s per user against
// the offered load, and tokens/s per user against system tokens/s. Each
// figure is the median over the seeds of its point. The same result and
// options give the same bytes.
func WriteSweep(w io.Writer, r *study.SweepResult, o Options) error {
	if len(r.Points) == 0 {
		return errors.New("sweep report: no points")
	}
	p := newStudyPage(o, "itlsim sweep")
	p.Headline = sweepHeadline(r)
	p.Scenario = studyScenarioWords(o.Study)
	p.Rule = r.Rule
	p.Answers = table{ID: "table-answer", Caption: "Per configuration",
		Head: []string{"config", "saturation req/s", "95% CI", "highest stable req/s", "knee req/s", "in words"}, Wrap: 5}
	for _, c := range r.Configs {
		sat, ci := "beyond the sweep", "n/a"
		if c.SaturationRate != nil {
			sat = rateNum(*c.SaturationRate)
		}
		if c.SaturationCILow != nil && c.SaturationCIHigh != nil {
			ci = rateNum(*c.SaturationCILow) + "–" + rateNum(*c.SaturationCIHigh)
		}
		knee := "none"
		if c.KneeRate > 0 {
			knee = rateNum(c.KneeRate)
		}
		p.Answers.add(c.Config, sat, ci, rateOrNA(c.HighestStable), knee, c.Words)
	}
	lv := levelsOf(r)
	for _, mk := range []func([]configLevels) (section, error){sweepLatency, sweepITL, sweepGoodput, sweepUser, sweepFrontier} {
		s, err := mk(lv)
		if err != nil {
			return err
		}
		p.Sections = append(p.Sections, s)
	}
	return writeStudyPage(w, p, o)
}

// WriteCapacity writes the page of a capacity study: each configuration's
// capacity, and the Pareto fronts of tokens/s per GPU against tokens/s
// per user and against the p99 of per-stream p99 ITL.
func WriteCapacity(w io.Writer, r *study.CapacityResult, o Options) error {
	if len(r.Capacity) == 0 {
		return errors.New("capacity report: no configurations")
	}
	p := newStudyPage(o, "itlsim capacity")
	p.Headline = capacityHeadline(r)
	p.Scenario = studyScenarioWords(o.Study)
	p.Rule = r.Rule
	p.Answers = table{ID: "table-answer", Caption: "Per configuration", Head: []string{"config", "answer"}, Wrap: 1}
	for _, c := range r.Capacity {
		words := strings.TrimSuffix(study.AnswerWords([]study.Capacity{c}), ".")
		p.Answers.add(c.Config, strings.TrimPrefix(words, c.Config+": "))
	}
	for _, mk := range []func(*study.CapacityResult) (section, error){capacityRates, paretoUser, paretoITL} {
		s, err := mk(r)
		if err != nil {
			return err
		}
		p.Sections = append(p.Sections, s)
	}
	return writeStudyPage(w, p, o)
}

func newStudyPage(o Options, title string) *studyPage {
	p := &studyPage{Title: o.Title, CDN: CDNURL, SelfTest: o.SelfTest}
	if p.Title == "" {
		p.Title = title
	}
	if len(o.ECharts) > 0 {
		p.Inline, p.ECharts = true, template.JS(o.ECharts)
	}
	return p
}

func writeStudyPage(w io.Writer, p *studyPage, o Options) error {
	if len(o.ECharts) > 0 {
		if err := CheckECharts(o.ECharts); err != nil {
			return err
		}
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := studyTemplate.ExecuteTemplate(bw, "study", p); err != nil {
		return err
	}
	return bw.Flush()
}

// level is one configuration at one rate: the medians over seeds.
type level struct {
	rate                                float64
	ttft50, ttft95, ttft99, streamP99   float64
	itlGoodput, sloGoodput              float64
	userMean, userP10, tokens, achieved float64
	stable                              bool
}

type configLevels struct {
	name   string
	levels []level // by rate, ascending
}

func levelsOf(r *study.SweepResult) []configLevels {
	var out []configLevels
	idx := map[string]int{}
	group := map[string]map[float64][]*study.Point{}
	for i := range r.Points {
		p := &r.Points[i]
		if _, ok := idx[p.Config]; !ok {
			idx[p.Config] = len(out)
			out = append(out, configLevels{name: p.Config})
			group[p.Config] = map[float64][]*study.Point{}
		}
		group[p.Config][p.Rate] = append(group[p.Config][p.Rate], p)
	}
	for k := range out {
		g := group[out[k].name]
		rates := make([]float64, 0, len(g))
		for r := range g {
			rates = append(rates, r)
		}
		slices.Sort(rates)
		for _, rate := range rates {
			ps := g[rate]
			med := func(f func(p *study.Point) float64) float64 {
				xs := make([]float64, len(ps))
				for i, p := range ps {
					xs[i] = f(p)
				}
				slices.Sort(xs)
				return xs[(len(xs)-1)/2]
			}
			l := level{rate: rate, stable: true,
				ttft50:     med(func(p *study.Point) float64 { return p.Summary.TTFT.P50 }),
				ttft95:     med(func(p *study.Point) float64 { return p.Summary.TTFT.P95 }),
				ttft99:     med(func(p *study.Point) float64 { return p.Summary.TTFT.P99 }),
				streamP99:  med(func(p *study.Point) float64 { return p.Summary.StreamP99ITL.P99 }),
				itlGoodput: med(func(p *study.Point) float64 { return p.Summary.ITLGoodput }),
				sloGoodput: med(func(p *study.Point) float64 { return p.Summary.SLOGoodput }),
				userMean:   med(func(p *study.Point) float64 { return p.TokensPerSPerUser.Mean }),
				userP10:    med(func(p *study.Point) float64 { return p.TokensPerSPerUser.P10 }),
				tokens:     med(func(p *study.Point) float64 { return p.OutputTokensPerS }),
				achieved:   med(func(p *study.Point) float64 { return p.AchievedPerS }),
			}
			for _, p := range ps {
				l.stable = l.stable && p.Stable
			}
			out[k].levels = append(out[k].levels, l)
		}
	}
	return out
}

func rateLine(id, yName string) *charts.Line {
	line := charts.NewLine()
	line.SetGlobalOptions(append(common(id, 380, "axis"),
		charts.WithXAxisOpts(xValue("offered load (req/s)")), charts.WithYAxisOpts(yValue(yName)))...)
	return line
}

func series(ls []level, f func(l level) float64) []opts.LineData {
	out := make([]opts.LineData, len(ls))
	for i, l := range ls {
		out[i] = opts.LineData{Value: xy(l.rate, f(l))}
	}
	return out
}

func stableWord(l level) string {
	if l.stable {
		return "yes"
	}
	return "no"
}

func sweepLatency(cs []configLevels) (section, error) {
	ttft := metric(reports.PopTTFT).Name
	sec := section{ID: "sweep-ttft", Title: ttft + " against load",
		Intro: "Median, p95 and p99 time to first token at each offered rate, per configuration (" + percentileLegend("p50", "p95", "p99") + "; medians over seeds)."}
	line := rateLine("chart-sweep-ttft", ttft+" (ms)")
	t := table{ID: "table-sweep-ttft", Caption: ttft + " by offered load (ms)", Head: []string{"config", "req/s", "p50", "p95", "p99", "stable"}}
	for i, c := range cs {
		line.AddSeries(c.name+" p50", series(c.levels, func(l level) float64 { return l.ttft50 }), style(runColor(i), percentileLine("p50"), true))
		line.AddSeries(c.name+" p95", series(c.levels, func(l level) float64 { return l.ttft95 }), style(runColor(i), percentileLine("p95"), true))
		line.AddSeries(c.name+" p99", series(c.levels, func(l level) float64 { return l.ttft99 }), style(runColor(i), percentileLine("p99"), true))
		for _, l := range c.levels {
			t.add(c.name, g(l.rate), f1(l.ttft50), f1(l.ttft95), f1(l.ttft99), stableWord(l))
		}
	}
	ch, err := finish(line, "chart-sweep-ttft", ttft+" p50, p95 and p99 against offered load", 380)
	sec.Charts, sec.Tables = []chart{ch}, []table{t}
	return sec, err
}

func sweepITL(cs []configLevels) (section, error) {
	sec := section{ID: "sweep-itl", Title: "Per-stream p99 ITL against load",
		Intro: "The p99 across streams of each stream's own p99 gap: how bad the worst moments of the worst streams get as load grows."}
	line := rateLine("chart-sweep-itl", "p99 of per-stream p99 ITL (ms)")
	t := table{ID: "table-sweep-itl", Caption: "p99 of per-stream p99 ITL by offered load (ms)", Head: []string{"config", "req/s", "ms"}}
	for i, c := range cs {
		line.AddSeries(c.name, series(c.levels, func(l level) float64 { return l.streamP99 }), style(runColor(i), "solid", true))
		for _, l := range c.levels {
			t.add(c.name, g(l.rate), f1(l.streamP99))
		}
	}
	ch, err := finish(line, "chart-sweep-itl", "p99 of per-stream p99 ITL against offered load", 380)
	sec.Charts, sec.Tables = []chart{ch}, []table{t}
	return sec, err
}

func sweepGoodput(cs []configLevels) (section, error) {
	sec := section{ID: "sweep-goodput", Title: "Goodput against load",
		Intro: "ITL goodput (solid: streams whose largest gap is within θ) and SLO attainment (dashed: requests meeting every per-request SLO limit)."}
	line := charts.NewLine()
	line.SetGlobalOptions(append(common("chart-sweep-goodput", 380, "axis"),
		charts.WithXAxisOpts(xValue("offered load (req/s)")), charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "share (%)", Min: 0, Max: 100}))...)
	t := table{ID: "table-sweep-goodput", Caption: "Goodput by offered load", Head: []string{"config", "req/s", "ITL goodput", "SLO attainment"}}
	for i, c := range cs {
		line.AddSeries(c.name+" ITL goodput", series(c.levels, func(l level) float64 { return 100 * l.itlGoodput }), style(runColor(i), "solid", true))
		line.AddSeries(c.name+" SLO attainment", series(c.levels, func(l level) float64 { return 100 * l.sloGoodput }), style(runColor(i), "dashed", true))
		for _, l := range c.levels {
			t.add(c.name, g(l.rate), pct(l.itlGoodput), pct(l.sloGoodput))
		}
	}
	ch, err := finish(line, "chart-sweep-goodput", "ITL goodput and SLO attainment against offered load", 380)
	sec.Charts, sec.Tables = []chart{ch}, []table{t}
	return sec, err
}

func sweepUser(cs []configLevels) (section, error) {
	sec := section{ID: "sweep-user", Title: "Tokens/s per user against load",
		Intro: "Each stream's (output tokens − 1) / (E2EL − TTFT): the mean over streams (solid) and the p10, the slowest tenth (dashed)."}
	line := rateLine("chart-sweep-user", "tokens/s per user")
	t := table{ID: "table-sweep-user", Caption: "Tokens/s per user by offered load", Head: []string{"config", "req/s", "mean", "p10", "achieved req/s"}}
	for i, c := range cs {
		line.AddSeries(c.name+" mean", series(c.levels, func(l level) float64 { return l.userMean }), style(runColor(i), "solid", true))
		line.AddSeries(c.name+" p10", series(c.levels, func(l level) float64 { return l.userP10 }), style(runColor(i), "dashed", true))
		for _, l := range c.levels {
			t.add(c.name, g(l.rate), f1(l.userMean), f1(l.userP10), f2(l.achieved))
		}
	}
	ch, err := finish(line, "chart-sweep-user", "Tokens/s per user against offered load", 380)
	sec.Charts, sec.Tables = []chart{ch}, []table{t}
	return sec, err
}

func sweepFrontier(cs []configLevels) (section, error) {
	sec := section{ID: "sweep-frontier", Title: "Tokens/s per user against system tokens/s",
		Intro: "Each point is one offered rate: what the system emits in all (x) against what one user gets (y). Where the curve turns down steeply, more load buys little throughput at a high price in user speed."}
	line := charts.NewLine()
	line.SetGlobalOptions(append(common("chart-sweep-frontier", 380, "item"),
		charts.WithXAxisOpts(xValue("system output tokens/s")), charts.WithYAxisOpts(yValue("tokens/s per user (mean)")))...)
	t := table{ID: "table-sweep-frontier", Caption: "System against per-user tokens/s", Head: []string{"config", "req/s", "system tok/s", "tok/s per user"}}
	for i, c := range cs {
		data := make([]opts.LineData, len(c.levels))
		for k, l := range c.levels {
			data[k] = opts.LineData{Value: xy(l.tokens, l.userMean)}
			t.add(c.name, g(l.rate), f1(l.tokens), f1(l.userMean))
		}
		line.AddSeries(c.name, data, style(runColor(i), "solid", true))
	}
	ch, err := finish(line, "chart-sweep-frontier", "Tokens/s per user against system output tokens/s", 380)
	sec.Charts, sec.Tables = []chart{ch}, []table{t}
	return sec, err
}

func capacityRates(r *study.CapacityResult) (section, error) {
	sec := section{ID: "capacity", Title: "Capacity per configuration",
		Intro: "The highest arrival rate at which every SLO term held and the run was stable: the median over seeds (bar) and the lowest seed's (table)."}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common("chart-capacity", 340, "axis"),
		charts.WithXAxisOpts(xCategory("")), charts.WithYAxisOpts(yValue("req/s")))...)
	names := make([]string, len(r.Capacity))
	data := make([]opts.BarData, len(r.Capacity))
	t := table{ID: "table-capacity", Caption: "Capacity and cost",
		Head: []string{"config", "max req/s", "95% CI (seeds as replications)", "min req/s", "seeds", "probes", "limiting term", "GPUs", "USD/GPU-h", "tok/s/GPU", metric(reports.PopTokensPerSPerUser).Name, metric(reports.PopStreamP99ITL).Head("p99"), "USD/M tokens", "pareto (user)", "pareto (ITL)"}}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "–"
	}
	sens := study.HasSensitivity(r.Capacity)
	if sens {
		t.Head = append(t.Head, "sensitivity %/% (max req/s per 1 % of step time)")
	}
	for i, c := range r.Capacity {
		names[i] = c.Config
		v := c.MaxRate
		if c.Target != nil {
			v = c.Target.Rate
		}
		data[i] = opts.BarData{Value: round6(v), ItemStyle: &opts.ItemStyle{Color: runColor(i)}}
		usd, price := "n/a", "n/a"
		if c.USDPerMillionTokens > 0 {
			usd = f3(float64(c.USDPerMillionTokens))
		}
		if c.USDPerGPUHour > 0 {
			price = f2(float64(c.USDPerGPUHour))
		}
		ci := "n/a"
		if c.CILow != nil && c.CIHigh != nil {
			ci = rateNum(*c.CILow) + "–" + rateNum(*c.CIHigh)
		}
		cells := []string{c.Config, rateOrNA(c.MaxRate), ci, rateOrNA(c.MinRate), itoa(c.Seeds), itoa(c.Probes), c.LimitingTerm, itoa(c.GPUs), price, f1(c.TokensPerSPerGPU), f1(c.TokensPerSPerUser), f1(c.StreamP99ITLP99), usd, yes(c.Pareto), yes(c.ParetoITL)}
		if sens {
			cells = append(cells, study.ElasticityCell(c.Sensitivity))
		}
		t.add(cells...)
	}
	bar.SetXAxis(names)
	bar.AddSeries("max req/s", data)
	ch, err := finish(bar, "chart-capacity", "Highest rate holding every term (median over seeds)", 340)
	sec.Charts, sec.Tables = []chart{ch}, []table{t}
	return sec, err
}

// paretoChart draws every configuration as a point and the front as a
// line through the Pareto ones, sorted by x.
func paretoChart(r *study.CapacityResult, id, title, yName string, y func(c study.Capacity) float64, on func(c study.Capacity) bool) (chart, table, error) {
	sc := charts.NewScatter()
	sc.SetGlobalOptions(append(common(id, 380, "item"),
		charts.WithXAxisOpts(xValue("tokens/s per GPU")), charts.WithYAxisOpts(yValue(yName)))...)
	t := table{ID: "table-" + id[len("chart-"):], Caption: title, Head: []string{"config", "tok/s/GPU", yName, "on the front"}}
	type pt struct{ x, y float64 }
	var front []pt
	for i, c := range r.Capacity {
		if c.MaxRate <= 0 && c.Target == nil {
			continue
		}
		sc.AddSeries(c.Config, []opts.ScatterData{{Value: xy(c.TokensPerSPerGPU, y(c)), SymbolSize: 12}}, style(runColor(i), "solid", true))
		word := "no"
		if on(c) {
			word = "yes"
			front = append(front, pt{c.TokensPerSPerGPU, y(c)})
		}
		t.add(c.Config, f1(c.TokensPerSPerGPU), f1(y(c)), word)
	}
	slices.SortFunc(front, func(a, b pt) int {
		switch {
		case a.x < b.x:
			return -1
		case a.x > b.x:
			return 1
		}
		return 0
	})
	line := charts.NewLine()
	data := make([]opts.LineData, len(front))
	for i, p := range front {
		data[i] = opts.LineData{Value: xy(p.x, p.y)}
	}
	line.AddSeries("Pareto front", data, style("#333333", "dashed", false))
	sc.Overlap(line)
	c, err := finish(sc, id, title, 380)
	return c, t, err
}

func paretoUser(r *study.CapacityResult) (section, error) {
	sec := section{ID: "pareto-user", Title: "Pareto front: tokens/s per GPU against tokens/s per user",
		Intro: "At each configuration's capacity: what a GPU produces (x) against what a user gets (y). The dashed line joins the configurations no other beats on both (pareto: true in the JSON)."}
	c, t, err := paretoChart(r, "chart-pareto-user", "Tokens/s per GPU against tokens/s per user", "tokens/s per user",
		func(c study.Capacity) float64 { return c.TokensPerSPerUser }, func(c study.Capacity) bool { return c.Pareto })
	sec.Charts, sec.Tables = []chart{c}, []table{t}
	return sec, err
}

func paretoITL(r *study.CapacityResult) (section, error) {
	sec := section{ID: "pareto-itl", Title: "Pareto front: tokens/s per GPU against per-stream p99 ITL",
		Intro: "At each configuration's capacity: what a GPU produces (x) against the p99 of per-stream p99 ITL (y, lower is better). The dashed line joins the configurations no other beats on both (pareto_itl: true)."}
	c, t, err := paretoChart(r, "chart-pareto-itl", "Tokens/s per GPU against the p99 of per-stream p99 ITL", "p99 of per-stream p99 ITL (ms)",
		func(c study.Capacity) float64 { return c.StreamP99ITLP99 }, func(c study.Capacity) bool { return c.ParetoITL })
	sec.Charts, sec.Tables = []chart{c}, []table{t}
	return sec, err
}

// studyTemplate shares the report page's style sheet, sections, drawing
// script, table template and browser-test hooks.
var studyTemplate = template.Must(template.Must(pageTemplate.Clone()).New("study").Parse(studyHTML))

const studyHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
{{template "css"}}nav a { margin-right: 12px; }
</style>
{{- if .SelfTest}}{{template "selftest-head"}}{{- end}}
</head>
<body>
<h1>{{.Title}}</h1>
<section id="answer">
<p><strong>{{.Headline}}</strong></p>
{{- range .Scenario}}
<p>{{.}}</p>
{{- end}}
{{template "table" .Answers}}
<p class="meta">{{.Rule}}</p>
</section>
<p class="meta">
{{- if .Inline}}ECharts is inlined in this file: the charts need no network.
{{- else}}The charts load ECharts from {{.CDN}} and need the network; <code>--echarts-js FILE</code> inlines a local copy instead.
{{- end}} Every chart's numbers are also in the tables below it.</p>
<div id="itlsim-nojs" class="warn">The chart library (ECharts) could not be loaded, so no chart is drawn. The tables hold every number.</div>
<nav>{{range .Sections}}<a href="#{{.ID}}">{{.Title}}</a>{{end}}</nav>
{{template "sections" .Sections}}{{template "draw" .}}{{- if .SelfTest}}{{template "selftest-body"}}{{- end}}
</body>
</html>
`

// rateOrNA is a capacity, n/a when nothing held.
func rateOrNA(v float64) string {
	if v <= 0 {
		return "n/a"
	}
	return rateNum(v)
}

// rateNum is a rate to the precision a search resolves: three significant
// digits (20.4, 0.605, 1230).
func rateNum(v float64) string {
	return strconv.FormatFloat(finite(v), 'f', max(0, 2-int(math.Floor(math.Log10(math.Abs(finite(v))+1e-300)))), 64)
}

// StudyScenario is what a sweep or a capacity study ran, for its page:
// the base scenario (the first configuration's), every configuration
// compared, the rates swept (nil for capacity), the SLO terms as written,
// the seeds, and the longest a probe may be extended to (a multiple of the
// scenario's length).
type StudyScenario struct {
	Config sim.Config
	// Variants are the configurations studied, in order, the first being
	// Config; when there are several, the page names the settings in
	// which they differ.
	Variants  []sim.Config
	Rates     []float64
	Terms     []string
	Seeds     int
	MaxExtend int
}

// studyScenarioWords says what a study ran: the setup, then each probe's
// workload, the rates or the search, the seeds and the terms.
func studyScenarioWords(s *StudyScenario) []string {
	if s == nil {
		return nil
	}
	c := s.Config
	if st, err := c.Resolve(); err == nil { // the defaults the probes ran with
		c = st.Config
	}
	setup, _, _ := describe(c, 0)
	w := c.Workload
	var b strings.Builder
	b.WriteString("Each probe: ")
	if w.Requests > 0 {
		fmt.Fprintf(&b, "%d requests", w.Requests)
	} else {
		fmt.Fprintf(&b, "%g s of requests", w.DurationS)
	}
	if s.MaxExtend > 1 {
		fmt.Fprintf(&b, " (extended up to %d× until its backlog trend is conclusive)", s.MaxExtend)
	}
	fmt.Fprintf(&b, ", %s arrivals", w.Arrival)
	if len(s.Rates) > 0 {
		rs := make([]string, len(s.Rates))
		for i, r := range s.Rates {
			rs[i] = rateNum(r)
		}
		fmt.Fprintf(&b, " at %s req/s", strings.Join(rs, ", "))
	} else {
		b.WriteString(" at the rates the search probes")
	}
	if w.LengthsFile != "" {
		fmt.Fprintf(&b, "; prompt and output lengths sampled from %s", w.LengthsFile)
	} else if w.Trace == "" {
		fmt.Fprintf(&b, "; prompt lengths %s, output lengths %s tokens", w.InputLen, w.OutputLen)
	}
	fmt.Fprintf(&b, "; %d seed", s.Seeds)
	if s.Seeds != 1 {
		b.WriteString("s")
	}
	b.WriteString(".")
	out := []string{"Scenario: " + setup}
	if d := comparedWords(s.Variants); d != "" {
		out = append(out, d)
	}
	out = append(out, b.String())
	if len(s.Terms) > 0 {
		out = append(out, "SLO terms: "+strings.Join(s.Terms, ", ")+".")
	}
	return out
}

// comparedWords names the settings in which the configurations of a study
// differ, each with its values in the order the configurations first take
// them, and says whose the scenario's words are; "" for fewer than two.
func comparedWords(vs []sim.Config) string {
	if len(vs) < 2 {
		return ""
	}
	all := make([][]fact, len(vs))
	for i, c := range vs {
		if st, err := c.Resolve(); err == nil {
			c = st.Config
		}
		all[i] = facts(c, 0)
	}
	var parts []string
	for j, f := range all[0] {
		values := []string{f.Value}
		for i := 1; i < len(all); i++ {
			if v := all[i][j].Value; !slices.Contains(values, v) {
				values = append(values, v)
			}
		}
		if len(values) > 1 {
			parts = append(parts, f.Label+" ("+strings.Join(values, ", ")+")")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	first := vs[0].Name
	if first == "" {
		first = "the first configuration"
	}
	list := strings.Join(parts, ", ")
	if n := len(parts); n > 1 {
		list = strings.Join(parts[:n-1], ", ") + " and " + parts[n-1]
	}
	return fmt.Sprintf("%d configurations compared, differing in %s; the scenario above is %s's.", len(vs), list, first)
}

// capacityHeadline is a capacity study's answer in one sentence: the
// cheapest configuration that holds (by cost per million tokens, where
// every holding one has a price), else the one that holds most.
func capacityHeadline(r *study.CapacityResult) string {
	if strings.HasPrefix(r.Answer, "Cheapest holding") || strings.HasPrefix(r.Answer, "No configuration holds") {
		if i := strings.Index(r.Answer, ". "); i > 0 {
			return r.Answer[:i+1]
		}
	}
	best, priced := -1, true
	for i, c := range r.Capacity {
		if c.MaxRate > 0 {
			priced = priced && c.USDPerMillionTokens > 0
			if best < 0 {
				best = i
			}
		}
	}
	if best < 0 {
		return "No configuration holds every term at any rate probed."
	}
	for i, c := range r.Capacity {
		if c.MaxRate <= 0 {
			continue
		}
		if priced && c.USDPerMillionTokens < r.Capacity[best].USDPerMillionTokens || !priced && c.MaxRate > r.Capacity[best].MaxRate {
			best = i
		}
	}
	c := r.Capacity[best]
	var b strings.Builder
	switch {
	case len(r.Capacity) == 1:
		fmt.Fprintf(&b, "%s holds every term up to %s req/s", c.Config, rateNum(c.MaxRate))
	case priced:
		fmt.Fprintf(&b, "Cheapest setup that holds every term: %s, up to %s req/s", c.Config, rateNum(c.MaxRate))
	default:
		fmt.Fprintf(&b, "Highest capacity: %s, up to %s req/s", c.Config, rateNum(c.MaxRate))
	}
	if c.CILow != nil && c.CIHigh != nil {
		fmt.Fprintf(&b, " (95 %% CI %s–%s)", rateNum(*c.CILow), rateNum(*c.CIHigh))
	} else {
		b.WriteString(" (one seed: no interval)")
	}
	if c.USDPerMillionTokens > 0 {
		fmt.Fprintf(&b, ", $%.3g per million output tokens", float64(c.USDPerMillionTokens))
	}
	b.WriteString(".")
	return b.String()
}

// sweepHeadline is a sweep's answer in one sentence: the configuration
// stable to the highest rate swept and where its throughput saturates.
func sweepHeadline(r *study.SweepResult) string {
	if len(r.Configs) == 0 {
		return "No configuration was swept."
	}
	best := 0
	for i, c := range r.Configs {
		if c.HighestStable > r.Configs[best].HighestStable {
			best = i
		}
	}
	c := r.Configs[best]
	var b strings.Builder
	if len(r.Configs) == 1 {
		b.WriteString("Stable")
	} else {
		fmt.Fprintf(&b, "Stable to the highest rate: %s, stable", c.Config)
	}
	if c.HighestStable > 0 {
		fmt.Fprintf(&b, " up to %s req/s of the rates swept", rateNum(c.HighestStable))
	} else {
		b.WriteString(" at none of the rates swept")
	}
	if c.SaturationRate != nil {
		fmt.Fprintf(&b, "; throughput saturates at %s req/s", rateNum(*c.SaturationRate))
		if c.SaturationCILow != nil && c.SaturationCIHigh != nil {
			fmt.Fprintf(&b, " (95 %% CI %s–%s)", rateNum(*c.SaturationCILow), rateNum(*c.SaturationCIHigh))
		}
	} else {
		b.WriteString("; throughput saturates beyond the sweep")
	}
	b.WriteString(".")
	return b.String()
}
