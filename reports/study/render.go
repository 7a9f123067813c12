package study

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/itlsim/itlsim/reports"
)

func fx(v float64, d int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', d, 64)
}
func pct(v float64) string { return fx(100*v, 1) + "%" }
func g(v float64) string   { return strconv.FormatFloat(v, 'g', -1, 64) }

func newTable(w io.Writer, f reports.Format) *tablewriter.Table {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	}
	if f == reports.FormatMarkdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	return tablewriter.NewTable(w, opts...)
}

// metric is the Vocabulary's row of p: the names the tables' heads and
// the CSVs' columns give it.
func metric(p reports.Population) reports.Metric {
	m, _ := reports.MetricOf(p)
	return m
}

// Column names of the Vocabulary's populations in the sweep's and the
// capacity's tables and CSVs.
var (
	ttftCol, tpotCol, streamP99Col, userCol = metric(reports.PopTTFT), metric(reports.PopTPOT),
		metric(reports.PopStreamP99ITL), metric(reports.PopTokensPerSPerUser)
)

// pointColumns are the sweep table's and the CSV's per-point figures.
var pointColumns = []struct {
	head, csv string
	cell      func(p *Point) (string, string) // table, csv
}{
	{"arrived req/s", "arrived_req_per_s", func(p *Point) (string, string) { return fx(p.ArrivedPerS, 2), g(p.ArrivedPerS) }},
	{"achieved req/s", "achieved_req_per_s", func(p *Point) (string, string) { return fx(p.AchievedPerS, 2), g(p.AchievedPerS) }},
	{"output tok/s", "output_tokens_per_s", func(p *Point) (string, string) { return fx(p.OutputTokensPerS, 0), g(p.OutputTokensPerS) }},
	{userCol.Head("mean"), userCol.JSON + "_mean", func(p *Point) (string, string) {
		return fx(p.TokensPerSPerUser.Mean, 1), g(p.TokensPerSPerUser.Mean)
	}},
	{userCol.Head("p10"), userCol.JSON + "_p10", func(p *Point) (string, string) {
		return fx(p.TokensPerSPerUser.P10, 1), g(p.TokensPerSPerUser.P10)
	}},
	{ttftCol.Head("p50/p95/p99"), ttftCol.FigureKey("p50") + "," + ttftCol.FigureKey("p95") + "," + ttftCol.FigureKey("p99"), func(p *Point) (string, string) {
		t := p.Summary.TTFT
		return fx(t.P50, 0) + "/" + fx(t.P95, 0) + "/" + fx(t.P99, 0), g(t.P50) + "," + g(t.P95) + "," + g(t.P99)
	}},
	{tpotCol.Head("mean"), tpotCol.FigureKey("mean"), func(p *Point) (string, string) { return fx(p.Summary.TPOT.Mean, 1), g(p.Summary.TPOT.Mean) }},
	{streamP99Col.Head("p99"), streamP99Col.FigureKey("p99"), func(p *Point) (string, string) {
		return fx(p.Summary.StreamP99ITL.P99, 1), g(p.Summary.StreamP99ITL.P99)
	}},
	{"ITL goodput", "itl_goodput", func(p *Point) (string, string) { return pct(p.Summary.ITLGoodput), g(p.Summary.ITLGoodput) }},
	{"SLO attainment", "slo_goodput", func(p *Point) (string, string) { return pct(p.Summary.SLOGoodput), g(p.Summary.SLOGoodput) }},
	{"goodput req/s", "slo_goodput_per_s", func(p *Point) (string, string) {
		return fx(p.Summary.SLOGoodputPerS, 2), g(p.Summary.SLOGoodputPerS)
	}},
	{"stable", "stable", func(p *Point) (string, string) {
		switch {
		case p.Stable:
			return "yes", "true"
		case p.Steady.Verdict == VerdictInconclusive:
			return "inconclusive", "false"
		case p.Steady.Verdict == VerdictTooFew:
			return "not judged", "false"
		}
		return "NO", "false"
	}},
}

// WriteSweepTable prints one row per point, then each configuration's
// saturation point in words.
func WriteSweepTable(w io.Writer, r *SweepResult, f reports.Format) error {
	t := newTable(w, f)
	head := []any{"config", "rate", "seed"}
	for _, c := range pointColumns {
		head = append(head, c.head)
	}
	judged := len(r.Points) > 0 && r.Points[0].Pass != nil
	if judged {
		head = append(head, "SLO terms")
	}
	t.Header(head...)
	for i := range r.Points {
		p := &r.Points[i]
		row := []any{p.Config, g(p.Rate), strconv.FormatUint(p.Seed, 10)}
		for _, c := range pointColumns {
			cell, _ := c.cell(p)
			row = append(row, cell)
		}
		if judged {
			v := "pass"
			if !*p.Pass {
				v = "FAIL: " + p.Limiting
			}
			row = append(row, v)
		}
		if err := t.Append(row...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, r.Rule)
	fmt.Fprintln(w)
	for _, c := range r.Configs {
		if f == reports.FormatMarkdown {
			fmt.Fprintf(w, "- %s\n", c.Words)
		} else {
			fmt.Fprintln(w, c.Words)
		}
	}
	return nil
}

// WriteSweepCSV writes one row per point, for notebooks.
func WriteSweepCSV(w io.Writer, r *SweepResult) error {
	cw := csv.NewWriter(w)
	head := []string{"config", "rate", "seed"}
	for _, c := range pointColumns {
		head = append(head, splitComma(c.csv)...)
	}
	_ = cw.Write(head)
	for i := range r.Points {
		p := &r.Points[i]
		row := []string{p.Config, g(p.Rate), strconv.FormatUint(p.Seed, 10)}
		for _, c := range pointColumns {
			_, v := c.cell(p)
			row = append(row, splitComma(v)...)
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// WriteJSON writes v indented, as every itlsim JSON document.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteCapacityTable prints the answer in words, then one row per
// configuration.
func WriteCapacityTable(w io.Writer, r *CapacityResult, f reports.Format) error {
	fmt.Fprintln(w, r.Answer)
	fmt.Fprintln(w)
	fmt.Fprintln(w, r.Rule)
	fmt.Fprintln(w)
	t := newTable(w, f)
	target := len(r.Capacity) > 0 && r.Capacity[0].Target != nil
	head := []any{"config", "max req/s", "95% CI", "min req/s", "seeds", "probes", "limiting term", "GPUs", "USD/GPU-h", "output tok/s", "tok/s/GPU", userCol.Name, streamP99Col.Head("p99"), "USD/M tokens", "pareto"}
	if target {
		head = []any{"config", "target", "holds", "seeds", "probes", "limiting term", "GPUs", "USD/GPU-h", "output tok/s", "tok/s/GPU", userCol.Name, streamP99Col.Head("p99"), "USD/M tokens", "pareto"}
	}
	sens := HasSensitivity(r.Capacity)
	if sens {
		head = append(head, "sensitivity %/%")
	}
	t.Header(head...)
	for _, c := range r.Capacity {
		price, usd := "n/a", "n/a"
		if c.USDPerGPUHour > 0 {
			price = fx(float64(c.USDPerGPUHour), 2)
		}
		if c.USDPerMillionTokens > 0 {
			usd = fx(float64(c.USDPerMillionTokens), 3)
		}
		var par []string
		if c.Pareto {
			par = append(par, "user")
		}
		if c.ParetoITL {
			par = append(par, "ITL")
		}
		ps := "–"
		if len(par) > 0 {
			ps = par[0]
			if len(par) > 1 {
				ps += "+" + par[1]
			}
		}
		row := []any{c.Config, rateCell(c.MaxRate), ciCell(c), rateCell(c.MinRate), strconv.Itoa(c.Seeds), strconv.Itoa(c.Probes)}
		if target {
			holds := "no"
			if c.Target.Holds {
				holds = fmt.Sprintf("%s=%d", c.Target.Field, c.Target.Value)
			}
			row = []any{c.Config, g(c.Target.Rate), holds, strconv.Itoa(c.Seeds), strconv.Itoa(c.Probes)}
		}
		figs := []any{fx(c.OutputTokensPerS, 0), fx(c.TokensPerSPerGPU, 0), fx(c.TokensPerSPerUser, 1), fx(c.StreamP99ITLP99, 1)}
		if !(c.MaxRate > 0) && !(target && c.Target.Holds) { // nothing holds: no rate to read them at
			figs = []any{"n/a", "n/a", "n/a", "n/a"}
		}
		row = append(row, c.LimitingTerm, strconv.Itoa(c.GPUs), price)
		row = append(row, figs...)
		row = append(row, usd, ps)
		if sens {
			row = append(row, ElasticityCell(c.Sensitivity))
		}
		if err := t.Append(row...); err != nil {
			return err
		}
	}
	return t.Render()
}

// HasSensitivity tells whether any configuration carries an elasticity to
// step time (capacity --sensitivity): the tables add its column then.
func HasSensitivity(cs []Capacity) bool {
	return slices.ContainsFunc(cs, func(c Capacity) bool { return c.Sensitivity != nil })
}

// ElasticityCell is an elasticity in % per %, signed, n/a without one.
func ElasticityCell(el *float64) string {
	if el == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.2f", *el)
}

// rateCell is a rate, n/a when nothing held.
func rateCell(v float64) string {
	if v <= 0 {
		return "n/a"
	}
	return fx(v, 2)
}

// ciCell is a configuration's interval, n/a without one.
func ciCell(c Capacity) string {
	if c.CILow == nil || c.CIHigh == nil {
		return "n/a"
	}
	return fx(*c.CILow, 2) + "–" + fx(*c.CIHigh, 2)
}
