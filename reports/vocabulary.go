package reports

import (
	"regexp"
	"strings"
)

// Vocabulary is itlsim's one list of the per-stream and per-gap figures:
// for each population, the name every output gives it and how to read it
// from a summary. SLO terms (reports/slo), gate metrics (reports/gate),
// validation figures (reports/calibrate), the summary's JSON keys and its
// vLLM block, the summary CSV's columns, the comparison table's rows, the
// per-stream rows' keys (--streams CSV, the JSON's streams) and the HTML
// report's column heads read their names from here, and docs/metrics.md's
// vocabulary table is written from it (TestVocabularyDoc), so one metric
// has one row instead of four or five spellings kept in step by hand
// (TestVocabularyColumns holds the outputs to it). A new population is one
// Population constant, the summary field that holds it, and one row.
var Vocabulary = []Metric{
	{Pop: PopTTFT, Term: "ttft", Gate: "ttft", Figure: "ttft", JSON: "ttft_ms", VLLM: "ttft",
		Unit: "ms", Doc: "time to first token", GateDoc: "TTFT",
		Name: "TTFT", Label: "TTFT", Shape: ShapeDist, CSV: true, Row: "ttft_ms",
		Dist: func(s *Summary) Dist { return s.TTFT }},
	{Pop: PopTPOT, Term: "tpot", Gate: "tpot", Figure: "tpot", JSON: "tpot_ms", VLLM: "tpot",
		Unit: "ms", Doc: "time per output token (vLLM's)", GateDoc: "TPOT",
		Name: "TPOT", Label: "TPOT", Shape: ShapeDist, CSV: true, Row: "tpot_ms",
		Dist: func(s *Summary) Dist { return s.TPOT }},
	{Pop: PopE2EL, Term: "e2el", Gate: "e2el", Figure: "e2el", JSON: "e2el_ms", VLLM: "e2el",
		Unit: "ms", Doc: "end-to-end latency", GateDoc: "E2EL",
		Name: "E2EL", Label: "E2EL", Shape: ShapeDist, CSV: true, Row: "e2el_ms",
		Dist: func(s *Summary) Dist { return s.E2EL }},
	{Pop: PopITL, Term: "itl", Gate: "itl_pooled", Figure: "itl", JSON: "itl_pooled_ms", VLLM: "itl",
		Unit: "ms", PerGap: true, NeedsGaps: true, Doc: "every gap of every stream, pooled (vLLM's ITL)",
		GateDoc: "every gap of every stream (vLLM's ITL; needs stream files)",
		Name:    "ITL pooled", Label: "ITL pooled (vLLM)", Shape: ShapeDist, CSV: true,
		Dist: func(s *Summary) Dist { return s.ITLPooled }},
	// Shown by the summary (JSON, CSV) and the stream rows, but no SLO
	// term, gate metric or figure names it: docs/metrics.md leaves it out.
	{Pop: popStreamP50ITL, JSON: "stream_p50_itl_ms",
		Unit: "ms", PerGap: true, Doc: "each stream's median gap",
		Name: "stream p50 ITL", Shape: ShapeSpread, CSV: true, Row: "itl_p50_ms",
		Dist: func(s *Summary) Dist { return s.StreamP50ITL }},
	{Pop: PopStreamP99ITL, Term: "stream-p99-itl", Gate: "stream_p99_itl", Figure: "stream_p99_itl", JSON: "stream_p99_itl_ms",
		Unit: "ms", PerGap: true, Doc: "each stream's p99 gap", GateDoc: "each stream's p99 ITL across streams",
		Name: "stream p99 ITL", Label: "stream p99 ITL", Shape: ShapeSpread, CSV: true, Row: "itl_p99_ms",
		Dist: func(s *Summary) Dist { return s.StreamP99ITL }},
	{Pop: PopStreamMaxGap, Term: "stream-max-gap", Gate: "stream_max_gap", JSON: "stream_max_gap_ms",
		Unit: "ms", PerGap: true, Doc: "each stream's largest gap", GateDoc: "each stream's largest gap across streams",
		Name: "stream max gap", Label: "stream max gap", Shape: ShapeSpread, CSV: true, Row: "max_gap_ms",
		Dist: func(s *Summary) Dist { return s.StreamMaxGap }},
	{Pop: PopJitter, Term: "jitter", Gate: "stream_jitter", JSON: "stream_jitter_ratio",
		Unit: "ratio", PerGap: true, Doc: "each stream's p99/p50 gap ratio", GateDoc: "each stream's p99/p50 gap ratio across streams",
		Name: "jitter ratio", Label: "jitter ratio p99/p50", Shape: ShapeSpread, CSV: true, Row: "jitter_ratio",
		Dist: func(s *Summary) Dist { return s.StreamJitter }},
	{Pop: PopQoE, Term: "qoe", Gate: "qoe", JSON: "qoe",
		Unit: "score", HigherIsBetter: true, Doc: "each stream's Andes QoE", GateDoc: "each stream's Andes QoE",
		Name: "QoE", Label: "QoE (Andes)", Shape: ShapeScore, Row: "qoe",
		Dist: func(s *Summary) Dist { return s.scoreDist(PopQoE, s.QoE) }, Score: func(s *Summary) ScoreSummary { return s.QoE }},
	{Pop: PopFluidity, Term: "fluidity", Gate: "fluidity", JSON: "fluidity",
		Unit: "score", HigherIsBetter: true, Doc: "each stream's fluidity index", GateDoc: "each stream's fluidity index",
		Name: "fluidity index", Label: "fluidity index (Etalon)", Shape: ShapeScore, Row: "fluidity",
		Dist: func(s *Summary) Dist { return s.scoreDist(PopFluidity, s.Fluidity) }, Score: func(s *Summary) ScoreSummary { return s.Fluidity }},
	{Pop: PopTokensPerSPerUser, Term: "tokens-per-s-per-user", JSON: "tokens_per_s_per_user",
		Unit: "tokens/s", HigherIsBetter: true, Doc: "each stream's decode speed",
		Name: "tok/s/user", Shape: ShapeDist,
		Dist: func(s *Summary) Dist { return s.TokensPerSPerUser }},
}

// Shape is which statistics of a population the summary keeps and the
// tables and the summary CSV show.
type Shape int

// Shapes.
const (
	// ShapeDist: a Dist over streams (or gaps) shown as its mean, then
	// its percentiles (KEY_mean, KEY_p50, …, KEY_max in the summary CSV).
	ShapeDist Shape = iota
	// ShapeSpread: a per-stream statistic across streams (Spread), shown
	// as its percentiles and max, without a mean.
	ShapeSpread
	// ShapeScore: a score in [0, 1] across scored streams
	// (ScoreSummary): mean, p10, p50 and the share below ScoreBelow.
	ShapeScore
)

// Metric is one population's row of the Vocabulary. An empty name means
// that output does not offer the population.
type Metric struct {
	Pop Population
	// Term is its name in SLO terms (--slo TERM:STAT<=LIMIT), kebab-case.
	Term string
	// Gate is its family in gate metrics: Gate_STAT (stream_p99_itl_p99).
	Gate string
	// Figure is its prefix in validation figures and the sweep CSV:
	// Figure_STAT_ms (stream_p99_itl_p50_ms; FigureKey).
	Figure string
	// JSON is the summary's key of its distribution (summary.ttft_ms),
	// and with CSV set the prefix of its summary CSV columns: JSON_STAT
	// (ttft_ms_p99).
	JSON string
	// VLLM is vLLM bench's name of the same figure (its mean_X_ms keys,
	// which the run's vllm block writes), where there is one.
	VLLM string
	// Unit is "ms", "ratio", "score" (in [0, 1]) or "tokens/s".
	Unit string
	// HigherIsBetter is true for scores and speeds.
	HigherIsBetter bool
	// PerGap marks figures of gaps, unknown for a source that records none
	// (GuideLLM; the tables show n/a, the summary CSV an empty cell);
	// NeedsGaps those computed from every gap, which only measured stream
	// files carry (a JSON document keeps per-stream rows).
	PerGap, NeedsGaps bool
	// Doc says what it is (SLO terms' help); GateDoc as the gate's help
	// says it.
	Doc, GateDoc string

	// Name is its short name in tables and column heads: the delivery
	// rows' "server Name", the HTML report's "Name p99 ms" (Head).
	Name string
	// Label is its row in the comparison table (WriteSummaryTable, and the
	// HTML report's summary), under the section its Shape picks.
	Label string
	// Shape is which statistics the summary keeps of it.
	Shape Shape
	// CSV is set when the summary CSV has its columns (JSON_STAT).
	CSV bool
	// Row is the key of a stream's own figure in the stream rows: the
	// --streams CSV's column and the JSON's streams[].Row.
	Row string
	// Dist reads its distribution from a summary (Summary.Dist); Score,
	// for ShapeScore, its score summary.
	Dist  func(s *Summary) Dist
	Score func(s *Summary) ScoreSummary
}

// MetricOf is the Vocabulary's row of p.
func MetricOf(p Population) (Metric, bool) {
	for _, m := range Vocabulary {
		if m.Pop == p {
			return m, true
		}
	}
	return Metric{}, false
}

// metricOf is MetricOf for the populations this package names, which
// all have a row.
func metricOf(p Population) Metric {
	m, ok := MetricOf(p)
	if !ok {
		panic("reports: population without a Vocabulary row")
	}
	return m
}

// FigureKey is the key of statistic stat (p50, mean) among validation
// figures and the sweep CSV's columns: Figure_STAT_ms (ttft_p50_ms).
func (m Metric) FigureKey(stat string) string { return m.Figure + "_" + stat + "_ms" }

// Head is a column head for statistic stat of the metric: its Name, the
// statistic and, for times, the unit ("TTFT p99 ms"); stat "" gives the
// Name and unit alone ("TTFT ms").
func (m Metric) Head(stat string) string {
	parts := []string{m.Name}
	if stat != "" {
		parts = append(parts, stat)
	}
	if m.Unit == "ms" {
		parts = append(parts, m.Unit)
	}
	return strings.Join(parts, " ")
}

// VocabularyMarkdown is the Vocabulary as docs/metrics.md shows it: one
// row per population with its name in each output ("–" where an output
// does not offer it).
func VocabularyMarkdown() string {
	or := func(s string) string {
		if s == "" {
			return "–"
		}
		return "`" + s + "`"
	}
	var b []byte
	b = append(b, "| population | SLO term | gate metric | validation figure | summary JSON | vLLM bench | unit | better |\n|---|---|---|---|---|---|---|---|\n"...)
	for _, m := range Vocabulary {
		if m.Pop >= numPops {
			continue // no output but the summary's names it
		}
		better := "lower"
		if m.HigherIsBetter {
			better = "higher"
		}
		gate, figure := m.Gate, m.Figure
		if gate != "" {
			gate += "_STAT"
		}
		if figure != "" {
			figure += "_STAT_ms"
		}
		b = append(b, "| "+m.Doc+" | "+or(m.Term)+" | "+or(gate)+" | "+or(figure)+" | "+or(m.JSON)+" | "+or(m.VLLM)+" | "+m.Unit+" | "+better+" |\n"...)
	}
	return string(b)
}

// rowKeys are the stream rows' keys of the per-stream figures that are
// the Vocabulary's populations (its Row names), for the writers of the
// --streams CSV and the JSON's streams.
var rowKeys = struct {
	ttft, tpot, e2el, itlP50, itlP99, maxGap, jitter, qoe, fluidity string
}{
	metricOf(PopTTFT).Row, metricOf(PopTPOT).Row, metricOf(PopE2EL).Row,
	metricOf(popStreamP50ITL).Row, metricOf(PopStreamP99ITL).Row, metricOf(PopStreamMaxGap).Row,
	metricOf(PopJitter).Row, metricOf(PopQoE).Row, metricOf(PopFluidity).Row,
}

// statWords are statistics as heads and columns spell them: mean, max,
// min, p50, p99.9, and several joined by "/" (p50/p95/p99).
var statWords = regexp.MustCompile(`^(mean|max|min|p[0-9.]+)(/(mean|max|min|p[0-9.]+))*$`)

// metricWords are the words the Vocabulary's names are made of: a head,
// label or column holding one speaks of a population (SpeaksOfMetric).
var metricWords = regexp.MustCompile(`(?i)ttft|tpot|e2el|itl|gap|jitter|qoe|fluidity|tok(ens)?/s(/| per )user|tokens_per_s_per_user`)

// SpeaksOfMetric tells whether a table head, row label or column name
// holds a word of the Vocabulary's names (TTFT, ITL, gap, jitter, QoE,
// tokens/s per user, …): one that should then be spelled by a row
// (ColumnMetric), or be a figure derived from one (a goodput, a share).
func SpeaksOfMetric(col string) bool { return metricWords.MatchString(col) }

// ColumnMetric returns the Vocabulary's row that col spells in one of the
// forms the outputs give it: Name, Label, "server Name", Head(STAT)
// ("TTFT p99 ms", "TTFT ms", "tok/s/user mean"), the JSON key alone or
// with a statistic (ttft_ms, ttft_ms_p99, tokens_per_s_per_user_mean),
// a gate metric (Gate_STAT: stream_p99_itl_p99), FigureKey(STAT)
// (ttft_p99_ms) or Row (itl_p99_ms); false when it spells none.
func ColumnMetric(col string) (Metric, bool) {
	stat := func(s string) bool { return statWords.MatchString(s) }
	// Names first, then forms with a statistic: a stream row's itl_p99_ms
	// (its own p99 gap) is also pooled ITL's figure p99 (FigureKey), and
	// names the stream's.
	for _, m := range Vocabulary {
		switch {
		case m.Name != "" && (col == m.Name || col == "server "+m.Name),
			m.Label != "" && col == m.Label,
			m.JSON != "" && col == m.JSON,
			m.Row != "" && col == m.Row:
			return m, true
		}
	}
	for _, m := range Vocabulary {
		if rest, ok := strings.CutPrefix(col, m.Name+" "); ok && m.Name != "" {
			if m.Unit == "ms" {
				if rest == "ms" {
					return m, true
				}
				rest, ok = strings.CutSuffix(rest, " ms")
			}
			if ok && stat(rest) {
				return m, true
			}
		}
		if rest, ok := strings.CutPrefix(col, m.JSON+"_"); ok && m.JSON != "" && stat(rest) {
			return m, true
		}
		if rest, ok := strings.CutPrefix(col, m.Gate+"_"); ok && m.Gate != "" && stat(rest) {
			return m, true
		}
		if rest, ok := strings.CutPrefix(col, m.Figure+"_"); ok && m.Figure != "" {
			if rest, ok = strings.CutSuffix(rest, "_ms"); ok && stat(rest) {
				return m, true
			}
		}
	}
	return Metric{}, false
}
