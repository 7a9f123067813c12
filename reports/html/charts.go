package html

import (
	"encoding/json"
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
)

// chart is one chart container of the page and its ECharts option.
type chart struct {
	ID     string
	Title  string
	Height int // px
	// Option is the option JSON with '<', '>' and '&' escaped as \u003c,
	// \u003e and \u0026 (encoding/json's default), so it cannot end the
	// <script type="application/json"> element that holds it.
	Option template.JS
}

// section is one part of the page: charts and the tables of their numbers.
type section struct {
	ID, Title, Intro string
	Charts           []chart
	Tables           []table
}

// optioner is what every go-echarts chart type provides.
type optioner interface {
	Validate()
	JSON() map[string]any
}

// runColors are go-echarts' default palette: run i draws in runColors[i%9].
var runColors = []string{"#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc"}

func runColor(i int) string { return runColors[i%len(runColors)] }

// causeColors give every stall cause its own colour, the same in every
// chart, and none the near-black of the worst streams' chunk dots
// (chunkColor). TestCauseColors holds every cause of sim.Causes to it.
var causeColors = map[string]string{
	"decode":               "#8c8c8c",
	"prefill-interference": "#fc8452",
	"batch-full":           "#9a60b4",
	"kv-swap":              "#5470c6",
	"kv-recompute":         "#ee6666",
	"engine-hiccup":        "#7a4b2a",
	"spec-rejection":       "#73c0de",
	"network":              "#1b9e77",
	"packet-loss":          "#e6ab02",
	"connection":           "#a50f15",
	"smoothing-delay":      "#66a61e",
	"failover":             "#e7298a",
	"kv-pause":             "#3ba272",
	"kv-transfer":          "#17becf",
}

// chunkColor draws the worst streams' chunks.
const chunkColor = "#333333"

func causeColor(c string) string {
	if col, ok := causeColors[c]; ok {
		return col
	}
	return "#bdbdbd" // a cause added without a colour: grey, never a chunk's
}

// percentileLine is the one line style of each percentile in every chart:
// p50 solid, p90 and p95 dashed, p99 dotted.
func percentileLine(p string) string {
	switch p {
	case "p50":
		return "solid"
	case "p99":
		return "dotted"
	}
	return "dashed"
}

// percentileLegend says which line is which percentile, from percentileLine,
// for a caption: "p50 solid, p95 dashed, p99 dotted".
func percentileLegend(ps ...string) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p + " " + percentileLine(p)
	}
	return strings.Join(parts, ", ")
}

// finish validates a go-echarts chart and encodes its option. The chart
// id is set on the chart explicitly (go-echarts would draw a random one).
func finish(c optioner, id, title string, height int) (chart, error) {
	c.Validate()
	b, err := json.Marshal(c.JSON())
	if err != nil {
		return chart{}, fmt.Errorf("chart %s: %w", id, err)
	}
	if b, height, err = layout(b, height); err != nil {
		return chart{}, fmt.Errorf("chart %s: %w", id, err)
	}
	return chart{ID: id, Title: title, Height: height, Option: template.JS(b)}, nil
}

const (
	maxPlainLegend = 30 // past it the legend pages (ECharts' scroll legend)
	xLabelMargin   = 14 // px between the x axis and its labels: below the y axis' lowest label
)

// layout fixes what go-echarts leaves to ECharts' defaults that would hide
// or overlap text: a legend of at most maxPlainLegend entries is laid out
// whole (type plain) instead of paginated, a category axis shows every
// category (interval 0) and its labels fit (overflow), and x labels sit
// below the y axis' lowest one. The sizes that depend on the chart's real
// width — each category label's width, the rows the legend wraps to and
// what the grid and the chart grow by — are set by the page's script when
// it draws (fit, in report.go's "draw" template), from the grid's top
// margin recorded here as itlsimBaseTop. It returns the option and the
// chart's height.
func layout(option []byte, height int) ([]byte, int, error) {
	var m map[string]any
	if err := json.Unmarshal(option, &m); err != nil {
		return nil, 0, err
	}
	var names []string
	series, _ := m["series"].([]any)
	seen := map[string]bool{}
	for _, s := range series {
		if sm, ok := s.(map[string]any); ok {
			if n, _ := sm["name"].(string); n != "" && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	if lg, ok := m["legend"].(map[string]any); ok && len(names) <= maxPlainLegend {
		lg["type"] = "plain"
		if grid, ok := m["grid"].([]any); ok && len(grid) > 0 {
			if g, ok := grid[0].(map[string]any); ok {
				top := 40.0
				if t, err := strconv.ParseFloat(fmt.Sprint(g["top"]), 64); err == nil {
					top = t
				}
				g["itlsimBaseTop"] = int(top)
			}
		}
	}
	for _, key := range []string{"xAxis", "yAxis"} {
		axes, _ := m[key].([]any)
		for _, a := range axes {
			ax, ok := a.(map[string]any)
			if !ok || ax["type"] != "category" {
				continue
			}
			label, _ := ax["axisLabel"].(map[string]any)
			if label == nil {
				label = map[string]any{}
				ax["axisLabel"] = label
			}
			label["interval"] = 0
			data, _ := ax["data"].([]any)
			if key != "xAxis" || len(data) == 0 {
				continue
			}
			label["overflow"] = "break" // the script sets the width, or slants and truncates
			if rot, ok := label["rotate"].(float64); ok && rot != 0 {
				label["overflow"] = "truncate"
			}
		}
	}
	xs, _ := m["xAxis"].([]any)
	for _, a := range xs {
		if ax, ok := a.(map[string]any); ok {
			label, _ := ax["axisLabel"].(map[string]any)
			if label == nil {
				label = map[string]any{}
				ax["axisLabel"] = label
			}
			if _, set := label["margin"]; !set {
				label["margin"] = xLabelMargin
			}
		}
	}
	b, err := json.Marshal(m)
	return b, height, err
}

// common are the options every chart shares: its fixed id and the SVG
// renderer, a scrolling legend, an axis tooltip, no animation.
func common(id string, height int, trigger string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithInitializationOpts(opts.Initialization{ChartID: id, Renderer: "svg", Width: "100%", Height: fmt.Sprintf("%dpx", height)}),
		charts.WithAnimation(false),
		charts.WithLegendOpts(opts.Legend{Type: "scroll", Top: "0"}),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: trigger}),
		charts.WithGridOpts(opts.Grid{Top: "40", Left: "60", Right: "60", Bottom: "50", ContainLabel: opts.Bool(true)}),
	}
}

func xValue(name string) opts.XAxis {
	return opts.XAxis{Type: "value", Name: name, NameLocation: "middle", NameGap: 30, Scale: opts.Bool(true)}
}

func xCategory(name string) opts.XAxis {
	return opts.XAxis{Type: "category", Name: name, NameLocation: "middle", NameGap: 30}
}

// xRuns is a category axis of run names: every name shown, slanted when
// one is long, so that none is skipped or overlaps its neighbour.
func xRuns(names []string) opts.XAxis {
	x := xCategory("") // the labels are the runs' names: no axis title to collide with them
	x.AxisLabel = &opts.AxisLabel{Interval: "0"}
	for _, n := range names {
		if len([]rune(n)) > 12 {
			x.AxisLabel.Rotate = 20
		}
	}
	return x
}

// yValue is a value axis named along its middle, turned, where a long name
// ("share of streams (%)") is neither cut at the chart's top edge nor laid
// over the legend.
func yValue(name string) opts.YAxis {
	return opts.YAxis{Type: "value", Name: name, NameLocation: "middle", NameGap: 50}
}

// style sets a series' colour, line type and symbols.
func style(color, lineType string, symbol bool) charts.SeriesOpts {
	return charts.WithSeriesOpts(func(s *charts.SingleSeries) {
		s.Color = color
		s.ItemStyle = &opts.ItemStyle{Color: color}
		if s.Type == "line" {
			s.LineStyle = &opts.LineStyle{Color: color, Type: lineType, Width: 1.5}
			s.ShowSymbol = opts.Bool(symbol)
		}
	})
}

// gap is a data item ECharts reads as empty: it breaks a line.
var gap = []any{"-", "-"}

func xy(x, y float64) []float64 { return []float64{round6(x), round6(y)} }

func itlTimeSection(runs []reports.Run, names []string) (section, error) {
	sec := section{ID: "itl-time", Title: "ITL over simulated time",
		Intro: "Median, p95 and p99 of the gaps that ended in each time bucket, per run (" + percentileLegend("p50", "p95", "p99") + "). A healthy server is a narrow band; where p99 leaves p50, streams stall. Buckets without gaps break the lines."}
	line := charts.NewLine()
	line.SetGlobalOptions(append(common("chart-itl-time", 380, "axis"),
		charts.WithXAxisOpts(xValue("simulated time (s)")), charts.WithYAxisOpts(yValue("ITL (ms)")))...)
	t := table{ID: "table-itl-time", Caption: "ITL by time bucket (bucket start, gaps ending in it, ms)", Collapsed: true,
		Head: []string{"run", "t (s)", "gaps", "p50 ms", "p95 ms", "p99 ms"}}
	for i := range runs {
		var p50, p95, p99 []opts.LineData
		for _, p := range runs[i].Timeseries {
			if p.ITLCount == 0 {
				p50 = append(p50, opts.LineData{Value: gap})
				p95 = append(p95, opts.LineData{Value: gap})
				p99 = append(p99, opts.LineData{Value: gap})
				continue
			}
			p50 = append(p50, opts.LineData{Value: xy(p.TS, p.ITLP50MS)})
			p95 = append(p95, opts.LineData{Value: xy(p.TS, p.ITLP95MS)})
			p99 = append(p99, opts.LineData{Value: xy(p.TS, p.ITLP99MS)})
			t.add(names[i], f2(p.TS), fmt.Sprint(p.ITLCount), f2(p.ITLP50MS), f2(p.ITLP95MS), f2(p.ITLP99MS))
		}
		line.AddSeries(names[i]+" p50", p50, style(runColor(i), percentileLine("p50"), false))
		line.AddSeries(names[i]+" p95", p95, style(runColor(i), percentileLine("p95"), false))
		line.AddSeries(names[i]+" p99", p99, style(runColor(i), percentileLine("p99"), false))
	}
	c, err := finish(line, "chart-itl-time", "ITL p50, p95 and p99 over time", 380)
	sec.Charts, sec.Tables = []chart{c}, []table{t}
	return sec, err
}

// positionLabel names a position range: the gaps after chunks from…to.
func positionLabel(p reports.PositionRow) string {
	switch {
	case p.To == 0:
		return fmt.Sprintf("%d+", p.From)
	case p.From == p.To:
		return fmt.Sprint(p.From)
	default:
		return fmt.Sprintf("%d–%d", p.From, p.To)
	}
}

func positionSection(runs []reports.Run, names []string) (section, error) {
	sec := section{ID: "itl-position", Title: "ITL by token position",
		Intro: "Percentiles of the gaps after chunk n of a response, n in power-of-two ranges: where in the stream the gaps grow (" + percentileLegend("p50", "p90", "p99") + ")."}
	// Categories: the union of every run's ranges, by start.
	var cats []reports.PositionRow
	seen := map[int]bool{}
	for i := range runs {
		for _, p := range runs[i].ITLByPosition {
			if !seen[p.From] {
				seen[p.From] = true
				cats = append(cats, p)
			}
		}
	}
	sortPositions(cats)
	labels := make([]string, len(cats))
	for i, p := range cats {
		labels[i] = positionLabel(p)
	}
	line := charts.NewLine()
	line.SetGlobalOptions(append(common("chart-itl-position", 360, "axis"),
		charts.WithXAxisOpts(xCategory("gap after chunk n")), charts.WithYAxisOpts(yValue("ITL (ms)")))...)
	line.SetXAxis(labels)
	t := table{ID: "table-itl-position", Caption: "ITL by position in the response (ms)",
		Head: []string{"run", "chunks", "gaps", "p50 ms", "p90 ms", "p99 ms"}}
	for i := range runs {
		byFrom := map[int]reports.PositionRow{}
		for _, p := range runs[i].ITLByPosition {
			byFrom[p.From] = p
			t.add(names[i], positionLabel(p), fmt.Sprint(p.Count), f2(p.ITLP50MS), f2(p.ITLP90MS), f2(p.ITLP99MS))
		}
		for _, pick := range []struct {
			name, line string
			v          func(reports.PositionRow) float64
		}{
			{"p50", percentileLine("p50"), func(p reports.PositionRow) float64 { return p.ITLP50MS }},
			{"p90", percentileLine("p90"), func(p reports.PositionRow) float64 { return p.ITLP90MS }},
			{"p99", percentileLine("p99"), func(p reports.PositionRow) float64 { return p.ITLP99MS }},
		} {
			data := make([]opts.LineData, len(cats))
			for j, c := range cats {
				if p, ok := byFrom[c.From]; ok {
					data[j] = opts.LineData{Value: round6(pick.v(p))}
				} else {
					data[j] = opts.LineData{Value: "-"}
				}
			}
			line.AddSeries(names[i]+" "+pick.name, data, style(runColor(i), pick.line, true))
		}
	}
	c, err := finish(line, "chart-itl-position", "ITL percentiles by position", 360)
	sec.Charts, sec.Tables = []chart{c}, []table{t}
	return sec, err
}

func sortPositions(ps []reports.PositionRow) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].From < ps[j-1].From; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// cdfQuantiles are the probabilities the CDF table reads the curve at.
var cdfQuantiles = []float64{0.01, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99, 0.999}

func cdfSection(runs []reports.Run, names []string, sets []streamSets) (section, error) {
	theta := runs[0].Summary.ITLGoodputMS
	sec := section{ID: "p99-cdf", Title: "Per-stream p99 ITL",
		Intro: fmt.Sprintf("The distribution (CDF) of each stream's own p99 gap, one line per run, over the finished streams with at least one gap; the vertical line is the ITL goodput threshold θ = %g ms. Each line has at most %d points, read exactly from the sorted per-stream values.", theta, MaxCDFPoints)}
	allPositive := true
	for i := range sets {
		if len(sets[i].P99) > 0 && sets[i].P99[0] <= 0 {
			allPositive = false
		}
	}
	x := xValue("per-stream p99 ITL (ms)")
	if allPositive {
		x.Type = "log"
		x.Scale = nil
	}
	line := charts.NewLine()
	line.SetGlobalOptions(append(common("chart-p99-cdf", 380, "axis"),
		charts.WithXAxisOpts(x), charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "share of streams", NameLocation: "middle", NameGap: 50, Min: 0, Max: 1}))...)
	head := []string{"run", "streams"}
	for _, q := range cdfQuantiles {
		head = append(head, "p"+g(q*100))
	}
	head = append(head, "max", fmt.Sprintf("share ≤ θ (%g ms)", theta))
	t := table{ID: "table-p99-cdf", Caption: "Per-stream p99 ITL across streams (ms): the CDF read at fixed shares", Head: head}
	for i := range runs {
		xs := sets[i].P99
		var data []opts.LineData
		if len(xs) > 0 {
			for _, p := range cdfPoints(xs) {
				data = append(data, opts.LineData{Value: xy(p.X, p.P)})
			}
			row := []string{names[i], itoa(len(xs))}
			for _, q := range cdfQuantiles {
				row = append(row, f2(quantileOf(xs, q)))
			}
			row = append(row, f2(xs[len(xs)-1]), pct(shareAtMost(xs, theta)))
			t.add(row...)
		} else {
			// No per-stream rows: the summary's spread gives four points.
			s := runs[i].Summary.StreamP99ITL
			for _, p := range []cdfPoint{{s.P50, 0.5}, {s.P90, 0.9}, {s.P99, 0.99}, {s.Max, 1}} {
				data = append(data, opts.LineData{Value: xy(p.X, p.P)})
			}
			t.add(append([]string{names[i], "(summary only)"}, summaryOnlyCells(len(cdfQuantiles)+2)...)...)
		}
		so := []charts.SeriesOpts{style(runColor(i), "solid", false), charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.Step = "end" })}
		if i == 0 {
			so = append(so,
				charts.WithMarkLineNameXAxisItemOpts(opts.MarkLineNameXAxisItem{Name: fmt.Sprintf("θ = %g ms", theta), XAxis: theta}),
				charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
					Label:     &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "insideEndTop"},
					LineStyle: &opts.LineStyle{Color: "#d62728", Type: "solid", Width: 2}}))
		}
		line.AddSeries(names[i], data, so...)
	}
	c, err := finish(line, "chart-p99-cdf", "CDF of per-stream p99 ITL", 380)
	sec.Charts, sec.Tables = []chart{c}, []table{t}
	return sec, err
}

func summaryOnlyCells(n int) []string {
	cells := make([]string, n)
	for i := range cells {
		cells[i] = "–"
	}
	return cells
}

func jitterSection(runs []reports.Run, names []string, sets []streamSets) (section, error) {
	u := runs[0].Config.Metrics.UnstableJitter
	edges := jitterEdges(u)
	labels := make([]string, len(edges))
	firstUnstable := -1
	for i := range edges {
		labels[i] = jitterLabel(edges, i)
		if firstUnstable < 0 && i > 0 && edges[i-1] >= u {
			firstUnstable = i
		}
	}
	sec := section{ID: "jitter", Title: "Jitter ratio",
		Intro: fmt.Sprintf("Each stream's p99 gap over its median gap, in bins, as a share of the finished streams with gaps; the shaded region (> %g) holds the unstable streams.", u)}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common("chart-jitter", 360, "axis"),
		charts.WithXAxisOpts(xCategory("jitter ratio p99/p50")), charts.WithYAxisOpts(yValue("share of streams (%)")))...)
	bar.SetXAxis(labels)
	head := []string{"jitter ratio"}
	for i := range runs {
		head = append(head, names[i])
	}
	t := table{ID: "table-jitter", Caption: "Streams by jitter ratio: count (share)", Head: head}
	counts := make([][]int, len(runs))
	for i := range runs {
		counts[i] = jitterCounts(sets[i].Jitter, edges)
		data := make([]opts.BarData, len(edges))
		for b := range edges {
			data[b] = opts.BarData{Value: round6(100 * share(counts[i][b], len(sets[i].Jitter)))}
		}
		so := []charts.SeriesOpts{style(runColor(i), "solid", false)}
		if i == 0 && firstUnstable >= 0 {
			so = append(so,
				charts.WithMarkAreaData([]opts.MarkAreaData{
					{Name: fmt.Sprintf("unstable (> %g)", u), XAxis: labels[firstUnstable]},
					{XAxis: labels[len(labels)-1]}}),
				charts.WithMarkAreaStyleOpts(opts.MarkAreaStyle{
					ItemStyle: &opts.ItemStyle{Color: "rgba(214,39,40,0.12)"},
					Label:     &opts.Label{Show: opts.Bool(true), Color: "#d62728"}}))
		}
		bar.AddSeries(names[i], data, so...)
	}
	for b := range edges {
		row := []string{labels[b]}
		for i := range runs {
			row = append(row, fmt.Sprintf("%d (%s)", counts[i][b], pct(share(counts[i][b], len(sets[i].Jitter)))))
		}
		t.add(row...)
	}
	row := []string{fmt.Sprintf("unstable (> %g)", u)}
	for i := range runs {
		row = append(row, pct(runs[i].Summary.UnstableStreamShare))
	}
	t.add(row...)
	c, err := finish(bar, "chart-jitter", "Jitter ratio distribution", 360)
	sec.Charts, sec.Tables = []chart{c}, []table{t}
	return sec, err
}

func share(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func stallSection(runs []reports.Run, names []string) (section, error) {
	sec := section{ID: "stalls", Title: "Stall time by cause",
		Intro: fmt.Sprintf("The time of every stall (a gap over %g ms) split by cause and summed over the run's streams, stacked per run.", runs[0].Summary.StallThresholdMS)}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common("chart-stalls", 360, "axis"),
		charts.WithXAxisOpts(xRuns(names)), charts.WithYAxisOpts(yValue("stall time (ms)")))...)
	bar.SetXAxis(names)
	head := append([]string{"cause"}, names...)
	t := table{ID: "table-stalls", Caption: "Stall time by cause: ms (share of streams hit)", Head: head}
	for _, c := range sim.Causes() {
		name := c.String()
		data := make([]opts.BarData, len(runs))
		row := []string{name}
		for i := range runs {
			s := &runs[i].Summary
			data[i] = opts.BarData{Value: round6(s.StallMSByCause[name])}
			row = append(row, fmt.Sprintf("%s (%s)", f1(s.StallMSByCause[name]), pct(s.StallStreamsByCause[name])))
		}
		t.add(row...)
		bar.AddSeries(name, data, style(causeColor(name), "solid", false),
			charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.Stack = "causes" }))
	}
	row := []string{"stalls / stalled streams"}
	for i := range runs {
		row = append(row, fmt.Sprintf("%d / %s", runs[i].Summary.Stalls, pct(runs[i].Summary.StalledStreamShare)))
	}
	t.add(row...)
	c, err := finish(bar, "chart-stalls", "Stall time by cause", 360)
	sec.Charts, sec.Tables = []chart{c}, []table{t}
	return sec, err
}

func worstSection(runs []reports.Run, names []string) (section, error) {
	sec := section{ID: "worst", Title: "Worst streams",
		Intro: "The streams with the largest gaps, chosen exactly by the simulator, on a clock that starts at each stream's arrival: a grey line until the first token, a dot per chunk of tokens, and each stall drawn as consecutive segments, one per cause, as long as that cause's part of the gap."}
	list := table{ID: "table-worst", Caption: "Worst streams", Head: []string{"run", "stream", "arrival s", "chunks", "tokens", metric(reports.PopTTFT).Head(""), "max gap ms", "stalls"}}
	stalls := table{ID: "table-worst-stalls", Caption: "Their stalls: the gap ending at chunk n, from its start (s after arrival), split by cause (ms)",
		Head: []string{"run", "stream", "chunk n", "start s", "gap ms", "parts ms"}}
	chunks := table{ID: "table-worst-chunks", Caption: "Their chunk times (s after arrival)", Collapsed: true,
		Head: []string{"run", "stream", "chunk times s"}}
	for i := range runs {
		ws := runs[i].WorstStreams
		id := fmt.Sprintf("chart-worst-%d", i)
		labels := make([]string, len(ws))
		for k, w := range ws {
			labels[k] = fmt.Sprintf("#%d", w.ID)
		}
		sc := charts.NewScatter()
		height := 90 + 28*max(len(ws), 3)
		sc.SetGlobalOptions(append(common(id, height, "item"),
			charts.WithXAxisOpts(xValue("seconds after arrival")),
			charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: labels, Inverse: opts.Bool(true), Name: "stream", NameLocation: "middle", NameGap: 40}))...)
		wait := charts.NewLine()
		segs := map[string][]opts.LineData{}
		var points []opts.ScatterData
		var waits []opts.LineData
		for k, w := range ws {
			tokens := 0
			for _, n := range w.ChunkTokens {
				tokens += n
			}
			ttft := 0.0
			if len(w.ChunkTimesS) > 0 {
				ttft = w.ChunkTimesS[0] - w.ArrivalS
				waits = append(waits, opts.LineData{Value: xy(0, float64(k))}, opts.LineData{Value: xy(ttft, float64(k))}, opts.LineData{Value: gap})
			}
			list.add(names[i], labels[k], f3(w.ArrivalS), itoa(len(w.ChunkTimesS)), itoa(tokens), f1(ttft*1000), f1(w.MaxGapMS), itoa(len(w.Stalls)))
			var ts strings.Builder
			for j, c := range w.ChunkTimesS {
				points = append(points, opts.ScatterData{Value: xy(c-w.ArrivalS, float64(k))})
				if j > 0 {
					ts.WriteString(" ")
				}
				ts.WriteString(f3(c - w.ArrivalS))
			}
			chunks.add(names[i], labels[k], ts.String())
			for _, s := range w.Stalls {
				x := s.StartS - w.ArrivalS
				var parts []string
				for _, c := range sim.Causes() {
					v := s.CauseMS[c.String()]
					if v <= 0 {
						continue
					}
					parts = append(parts, c.String()+" "+f1(v))
					segs[c.String()] = append(segs[c.String()],
						opts.LineData{Value: xy(x, float64(k))}, opts.LineData{Value: xy(x+v/1000, float64(k))}, opts.LineData{Value: gap})
					x += v / 1000
				}
				stalls.add(names[i], labels[k], itoa(s.Index), f3(s.StartS-w.ArrivalS), f1(s.GapMS), strings.Join(parts, ", "))
			}
		}
		sc.AddSeries("chunks", points, style(chunkColor, "solid", true),
			charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.SymbolSize = 4 }))
		wait.AddSeries("until first token", waits, style("#bbbbbb", "solid", false))
		for _, c := range sim.Causes() {
			d := segs[c.String()]
			if len(d) == 0 {
				continue
			}
			wait.AddSeries(c.String(), d, style(causeColor(c.String()), "solid", false),
				charts.WithSeriesOpts(func(s *charts.SingleSeries) {
					s.LineStyle.Width = 6
					s.SymbolSize = 0
				}))
		}
		sc.Overlap(wait)
		c, err := finish(sc, id, "Worst streams of "+names[i], height)
		if err != nil {
			return sec, err
		}
		sec.Charts = append(sec.Charts, c)
	}
	sec.Tables = []table{list, stalls, chunks}
	return sec, nil
}

func kvSection(runs []reports.Run, names []string) (section, error) {
	sec := section{ID: "kv", Title: "KV cache, queue and batch over time",
		Intro: "Time-weighted means per bucket: KV cache utilization (right axis, %), waiting queue and running batch size (left axis, requests); red dots mark buckets with preemptions."}
	t := table{ID: "table-kv", Caption: "KV cache, queue and batch by time bucket", Collapsed: true,
		Head: []string{"run", "t (s)", "running", "waiting", "preempted", "KV %", "preemptions", "steps", "batch tokens/step", "output tok/s"}}
	for i := range runs {
		id := fmt.Sprintf("chart-kv-%d", i)
		line := charts.NewLine()
		line.SetGlobalOptions(append(common(id, 340, "axis"),
			charts.WithXAxisOpts(xValue("simulated time (s)")), charts.WithYAxisOpts(yValue("requests")))...)
		line.ExtendYAxis(opts.YAxis{Type: "value", Name: "KV used (%)", NameLocation: "middle", NameGap: 50, Min: 0, Max: 100, Position: "right"})
		var kv, waiting, running []opts.LineData
		var pre []opts.ScatterData
		for _, p := range runs[i].Timeseries {
			kv = append(kv, opts.LineData{Value: xy(p.TS, 100*p.KVUtilization)})
			waiting = append(waiting, opts.LineData{Value: xy(p.TS, p.Waiting)})
			running = append(running, opts.LineData{Value: xy(p.TS, p.Running)})
			if p.Preemptions > 0 {
				pre = append(pre, opts.ScatterData{Value: []float64{round6(p.TS), round6(100 * p.KVUtilization), float64(p.Preemptions)}})
			}
			t.add(names[i], f2(p.TS), f2(p.Running), f2(p.Waiting), f2(p.Preempted), f1(100*p.KVUtilization),
				itoa(p.Preemptions), itoa(p.Steps), f1(p.BatchTokensPerStep), f1(p.OutputTokensPerS))
		}
		line.AddSeries("running", running, style("#5470c6", "solid", false))
		line.AddSeries("waiting", waiting, style("#fac858", "solid", false))
		line.AddSeries("KV used %", kv, style("#3ba272", "solid", false),
			charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.YAxisIndex = 1 }))
		sc := charts.NewScatter()
		sc.AddSeries("preemptions", pre, style("#d62728", "solid", true),
			charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.YAxisIndex = 1; s.SymbolSize = 8 }))
		line.Overlap(sc)
		c, err := finish(line, id, "KV cache, queue and batch: "+names[i], 340)
		if err != nil {
			return sec, err
		}
		sec.Charts = append(sec.Charts, c)
	}
	sec.Tables = []table{t}
	return sec, nil
}

func latencySection(runs []reports.Run, names []string, sets []streamSets) (section, error) {
	ttft, tpot, e2el := metric(reports.PopTTFT), metric(reports.PopTPOT), metric(reports.PopE2EL)
	sec := section{ID: "latency", Title: ttft.Name + " and " + e2el.Name,
		Intro: "Box plots over every finished stream: the box spans p25 to p75 around the median, the whiskers p1 and p99, and a dot marks the maximum. Computed exactly from all streams."}
	t := table{ID: "table-latency", Caption: ttft.Name + ", " + tpot.Name + " and " + e2el.Name + " over finished streams (ms)",
		Head: []string{"run", "metric", "streams", "mean", "min", "p1", "p25", "p50", "p75", "p90", "p99", "max"}}
	for _, m := range []struct {
		id, name string
		pick     func(streamSets) []float64
		sum      func(*reports.Summary) reports.Dist
	}{
		{"chart-ttft", ttft.Name, func(s streamSets) []float64 { return s.TTFT }, ttft.Dist},
		{"chart-e2el", e2el.Name, func(s streamSets) []float64 { return s.E2EL }, e2el.Dist},
	} {
		box := charts.NewBoxPlot()
		box.SetGlobalOptions(append(common(m.id, 340, "item"),
			charts.WithXAxisOpts(xRuns(names)), charts.WithYAxisOpts(yValue(m.name+" (ms)")))...)
		box.SetXAxis(names)
		data := make([]opts.BoxPlotData, len(runs))
		var maxes []opts.ScatterData
		for i := range runs {
			xs := m.pick(sets[i])
			var v []float64
			if len(xs) > 0 {
				b := boxOf(xs)
				v = []float64{b.P1, b.P25, b.P50, b.P75, b.P99}
				maxes = append(maxes, opts.ScatterData{Value: []any{names[i], round6(b.Max)}})
			} else {
				// Summary only: p50 as the box, p90 and p99 above it.
				d := m.sum(&runs[i].Summary)
				v = []float64{d.P50, d.P50, d.P50, d.P90, d.P99}
				maxes = append(maxes, opts.ScatterData{Value: []any{names[i], round6(d.Max)}})
			}
			for k := range v {
				v[k] = round6(v[k])
			}
			data[i] = opts.BoxPlotData{Value: v}
		}
		box.AddSeries(m.name, data, style(runColor(0), "solid", false))
		sc := charts.NewScatter()
		sc.AddSeries("max", maxes, style("#d62728", "solid", true))
		box.Overlap(sc)
		c, err := finish(box, m.id, m.name+" by run", 340)
		if err != nil {
			return sec, err
		}
		sec.Charts = append(sec.Charts, c)
	}
	for i := range runs {
		for _, m := range []struct {
			name string
			xs   []float64
			d    reports.Dist
		}{{ttft.Name, sets[i].TTFT, runs[i].Summary.TTFT}, {tpot.Name, sets[i].TPOT, runs[i].Summary.TPOT}, {e2el.Name, sets[i].E2EL, runs[i].Summary.E2EL}} {
			if len(m.xs) == 0 {
				t.add(names[i], m.name, "(summary only)", f1(m.d.Mean), "–", "–", "–", f1(m.d.P50), "–", f1(m.d.P90), f1(m.d.P99), f1(m.d.Max))
				continue
			}
			b := boxOf(m.xs)
			t.add(names[i], m.name, itoa(b.N), f1(b.Mean), f1(b.Min), f1(b.P1), f1(b.P25), f1(b.P50), f1(b.P75), f1(b.P90), f1(b.P99), f1(b.Max))
		}
	}
	sec.Tables = []table{t}
	return sec, nil
}

func goodputSection(runs []reports.Run, names []string) (section, error) {
	r0 := &runs[0]
	slo := r0.Config.Metrics.SLO
	sec := section{ID: "goodput", Title: "Goodput against the thresholds",
		Intro: fmt.Sprintf("ITL goodput: finished streams whose largest gap is at most θ = %g ms. SLO goodput: arrived requests meeting every SLO limit (%s; rejected requests fail it); then the share meeting each limit alone.", r0.Summary.ITLGoodputMS, sloWords(slo))}
	type figure struct {
		label string
		v     func(i int) (float64, bool)
	}
	ms := []figure{
		{fmt.Sprintf("ITL goodput (max gap ≤ %g ms)", r0.Summary.ITLGoodputMS), func(i int) (float64, bool) { return runs[i].Summary.ITLGoodput, true }},
		{"SLO goodput (" + sloWords(slo) + ")", func(i int) (float64, bool) { return runs[i].Summary.SLOGoodput, true }},
	}
	shares := make([]sloShares, len(runs))
	for i := range runs {
		shares[i] = sloSharesOf(&runs[i])
	}
	for _, l := range []struct {
		pop   reports.Population
		limit float64
		v     func(s sloShares) float64
	}{
		{reports.PopTTFT, slo.TTFTMS, func(s sloShares) float64 { return s.TTFT }},
		{reports.PopTPOT, slo.TPOTMS, func(s sloShares) float64 { return s.TPOT }},
		{reports.PopE2EL, slo.E2ELMS, func(s sloShares) float64 { return s.E2EL }},
	} {
		if l.limit <= 0 {
			continue
		}
		ms = append(ms, figure{fmt.Sprintf("%s ≤ %g ms", metric(l.pop).Name, l.limit), func(i int) (float64, bool) { return l.v(shares[i]), shares[i].OK }})
	}
	labels := make([]string, len(ms))
	for k, m := range ms {
		labels[k] = m.label
	}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common("chart-goodput", 340, "axis"),
		charts.WithXAxisOpts(xCategory("")), charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "share (%)", NameLocation: "middle", NameGap: 50, Min: 0, Max: 100}))...)
	bar.SetXAxis(labels)
	t := table{ID: "table-goodput", Caption: "Goodput: share of streams or requests", Head: append([]string{"metric"}, names...)}
	rows := make([][]string, len(ms))
	for k := range ms {
		rows[k] = []string{ms[k].label}
	}
	for i := range runs {
		data := make([]opts.BarData, len(ms))
		for k, m := range ms {
			v, ok := m.v(i)
			if !ok {
				data[k] = opts.BarData{Value: "-"}
				rows[k] = append(rows[k], "–")
				continue
			}
			data[k] = opts.BarData{Value: round6(100 * v)}
			rows[k] = append(rows[k], pct(v))
		}
		bar.AddSeries(names[i], data, style(runColor(i), "solid", false))
	}
	row := []string{"SLO goodput per second"}
	for i := range runs {
		row = append(row, f2(runs[i].Summary.SLOGoodputPerS))
	}
	for _, r := range rows {
		t.add(r...)
	}
	t.add(row...)
	c, err := finish(bar, "chart-goodput", "Goodput", 340)
	sec.Charts, sec.Tables = []chart{c}, []table{t}
	return sec, err
}
