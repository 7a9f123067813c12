package reports

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim"
)

// statColumn is a column of one statistic of a population: KEY_mean,
// KEY_p99, KEY_p99.9, KEY_max (the summary CSV's form).
var statColumn = regexp.MustCompile(`^(.+)_(mean|max|min|p[0-9.]+)$`)

// TestVocabularyColumns holds the outputs that spell a population's name
// to the Vocabulary: a column or row naming a metric that is not the
// Vocabulary's, or a row of the Vocabulary an output does not show as it
// says, fails.
func TestVocabularyColumns(t *testing.T) {
	ps := []float64{50, 90, 99, 99.9}

	// The summary CSV: each row with CSV has its columns JSON_STAT, in
	// Vocabulary order; no other column is a statistic of a population.
	var head []string
	for _, c := range summaryColumns(ps) {
		head = append(head, c.name)
	}
	at := 0
	for _, m := range Vocabulary {
		if !m.CSV {
			continue
		}
		var want []string
		if m.Shape == ShapeDist {
			want = append(want, m.JSON+"_mean")
		}
		for _, p := range ps {
			want = append(want, m.JSON+"_"+PercentileKey(p))
		}
		want = append(want, m.JSON+"_max")
		i := slices.Index(head, want[0])
		if i < at || i+len(want) > len(head) || !slices.Equal(head[i:i+len(want)], want) {
			t.Errorf("summary CSV: %s's columns are not %v in Vocabulary order: %v", m.Doc, want, head)
			continue
		}
		at = i + len(want)
	}
	for _, h := range head {
		if sm := statColumn.FindStringSubmatch(h); sm != nil {
			if i := slices.IndexFunc(Vocabulary, func(m Metric) bool { return m.CSV && m.JSON == sm[1] }); i < 0 {
				t.Errorf("summary CSV column %q is a statistic of %q, which is no Vocabulary row's JSON key with CSV", h, sm[1])
			}
		}
	}

	// The summary's JSON: every population's distribution is a row's key.
	// itl_per_token_ms is pooled ITL split evenly among a chunk's tokens
	// (speculative decoding's view), no population of streams or gaps.
	st := reflect.TypeOf(Summary{})
	for i := range st.NumField() {
		f := st.Field(i)
		key := strings.Split(f.Tag.Get("json"), ",")[0]
		if f.Type != reflect.TypeOf(Dist{}) && f.Type != reflect.TypeOf(ScoreSummary{}) || key == "itl_per_token_ms" {
			continue
		}
		if !slices.ContainsFunc(Vocabulary, func(m Metric) bool { return m.JSON == key }) {
			t.Errorf("summary JSON key %q (Summary.%s) is a distribution no Vocabulary row names", key, f.Name)
		}
	}
	// Each row's accessor reads the field its JSON key names.
	var s Summary
	sv := reflect.ValueOf(&s).Elem()
	for i := range st.NumField() {
		if !st.Field(i).IsExported() {
			continue
		}
		if d, ok := sv.Field(i).Addr().Interface().(*Dist); ok {
			d.N = i + 1
		}
		if d, ok := sv.Field(i).Addr().Interface().(*ScoreSummary); ok {
			d.N = i + 1
		}
	}
	for _, m := range Vocabulary {
		var f reflect.StructField
		for i := range st.NumField() {
			if strings.Split(st.Field(i).Tag.Get("json"), ",")[0] == m.JSON {
				f = st.Field(i)
			}
		}
		if f.Name == "" {
			continue // TestVocabulary says so
		}
		if got := m.Dist(&s).N; got != f.Index[0]+1 {
			t.Errorf("%s: Dist reads the summary's field %d, not %s (%q)", m.Doc, got-1, f.Name, m.JSON)
		}
		if (m.Shape == ShapeScore) != (m.Score != nil) {
			t.Errorf("%s: a Score accessor goes with ShapeScore and only with it", m.Doc)
		} else if m.Score != nil && m.Score(&s).N != f.Index[0]+1 {
			t.Errorf("%s: Score does not read %s (%q)", m.Doc, f.Name, m.JSON)
		}
	}

	// The stream rows: every Row is a key of StreamRow's JSON; the
	// --streams CSV's columns are StreamRow's keys, and one that names a
	// metric is a row's Row. itl_mean_ms and itl_p90_ms are a stream's own
	// gap statistics that no population of the summary gathers.
	rowTags := map[string]bool{}
	rt := reflect.TypeOf(StreamRow{})
	for i := range rt.NumField() {
		rowTags[strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	rowOf := map[string]bool{}
	for _, m := range Vocabulary {
		if m.Row != "" {
			rowOf[m.Row] = true
			if !rowTags[m.Row] {
				t.Errorf("%s: Row %q is not a key of the stream rows' JSON", m.Doc, m.Row)
			}
		}
	}
	for _, h := range streamsCSVHeader()[1:] {
		if !rowTags[h] {
			t.Errorf("--streams CSV column %q is not a key of the stream rows' JSON", h)
		}
		if SpeaksOfMetric(h) && !rowOf[h] && h != "itl_mean_ms" && h != "itl_p90_ms" {
			t.Errorf("--streams CSV column %q names a metric no Vocabulary row's Row is", h)
		}
	}
	for i := range rt.NumField() {
		key := strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]
		if rt.Field(i).Type.Kind() != reflect.String && SpeaksOfMetric(key) && !rowOf[key] &&
			key != "itl_mean_ms" && key != "itl_p90_ms" {
			t.Errorf("stream rows' JSON key %q names a metric no Vocabulary row's Row is", key)
		}
	}

	// The comparison table, with every section on: each row with a Label
	// is one row, under the section its Shape picks; the delivery rows are
	// "server Name"; a row naming a metric otherwise is one of the figures
	// derived from a population (goodputs, shares, rates), listed here.
	derived := regexp.MustCompile(`^(unstable \(jitter > .*\)|ITL goodput \(max gap ≤ .* ms\)|fluid tokens/s p10/p50|ITL per token|server unstable / ITL goodput)$`)
	cfg := sim.DefaultConfig()
	run := NewRun("a", nil, cfg, testResult())
	run.Summary.Spec = &SpecSummary{}
	run.Summary.Delivery = &DeliverySummary{}
	c := run.Summary
	run.Summary.ByClass = map[string]*Summary{"chat": &c}
	run.Summary.SLO = []SLOOutcome{{Term: "ttft:p99<=2s"}}
	rows := summaryRows([]Run{run})
	section := ""
	seen := map[string]bool{}
	for _, r := range rows {
		if r.cell == nil {
			section = r.label
			continue
		}
		if section == "BY CLASS (ms)" || strings.HasPrefix(section, "SLOs") {
			continue // labelled by class names and SLO terms
		}
		seen[r.label] = true
		i := slices.IndexFunc(Vocabulary, func(m Metric) bool { return m.Label != "" && m.Label == r.label })
		if i >= 0 {
			want := map[Shape]string{ShapeDist: "LATENCY", ShapeSpread: "PER STREAM", ShapeScore: "PERCEIVED"}[Vocabulary[i].Shape]
			if !strings.HasPrefix(section, want) {
				t.Errorf("table row %q is under %q, not its shape's section %s", r.label, section, want)
			}
			continue
		}
		if name, ok := strings.CutPrefix(r.label, "server "); ok && slices.ContainsFunc(Vocabulary, func(m Metric) bool { return m.Label != "" && m.Name == name }) {
			continue
		}
		if SpeaksOfMetric(r.label) && !derived.MatchString(r.label) {
			t.Errorf("table row %q (%s) names a metric that is no Vocabulary row's Label", r.label, section)
		}
	}
	for _, m := range Vocabulary {
		if m.Label != "" && !seen[m.Label] {
			t.Errorf("%s: Label %q is no row of the comparison table", m.Doc, m.Label)
		}
		if m.Label != "" && !strings.HasPrefix(m.Label, m.Name) {
			t.Errorf("%s: Label %q does not start with its Name %q", m.Doc, m.Label, m.Name)
		}
	}
}

// ColumnMetric finds each row from every form the outputs spell it in,
// and no row from a figure derived from one or a misspelling.
func TestColumnMetric(t *testing.T) {
	for _, m := range Vocabulary {
		forms := []string{m.Name, m.Head("p99"), m.Head("p50/p95/p99"), m.Head("mean"), m.JSON, m.JSON + "_p99.9", m.JSON + "_max"}
		if m.Unit == "ms" {
			forms = append(forms, m.Head(""))
		}
		if m.Label != "" {
			forms = append(forms, m.Label, "server "+m.Name)
		}
		if m.Figure != "" {
			forms = append(forms, m.FigureKey("p90"), m.FigureKey("mean"))
		}
		if m.Gate != "" {
			forms = append(forms, m.Gate+"_p99")
		}
		if m.Row != "" {
			forms = append(forms, m.Row)
		}
		for _, f := range forms {
			if got, ok := ColumnMetric(f); !ok || got.Pop != m.Pop {
				t.Errorf("ColumnMetric(%q) = %q, %v; want %s's row", f, got.Doc, ok, m.Doc)
			}
		}
	}
	for _, f := range []string{"ITL goodput", "itl_goodput", "ttft_ms_p", "TTFT p99", "TTFT ms p99", "stream max gap ms ms", "ttft_ms_", "jitter ratio ms", "max gap ms", "itl_goodput_threshold_ms", ""} {
		if m, ok := ColumnMetric(f); ok {
			t.Errorf("ColumnMetric(%q) = %s's row, want none", f, m.Doc)
		}
	}
}
