package reports

// Vocabulary is itlsim's one list of the per-stream and per-gap figures:
// for each population, the name every output gives it. SLO terms
// (reports/slo), gate metrics (reports/gate), validation figures
// (reports/calibrate) and the summary's JSON keys read their names from
// here, and docs/metrics.md's vocabulary table is written from it
// (TestVocabularyDoc), so one metric has one row instead of four or five
// spellings kept in step by hand. A new population is one Population
// constant, the summary field that holds it, and one row.
var Vocabulary = []Metric{
	{Pop: PopTTFT, Term: "ttft", Gate: "ttft", Figure: "ttft", JSON: "ttft_ms", VLLM: "ttft",
		Unit: "ms", Doc: "time to first token", GateDoc: "TTFT"},
	{Pop: PopTPOT, Term: "tpot", Gate: "tpot", Figure: "tpot", JSON: "tpot_ms", VLLM: "tpot",
		Unit: "ms", Doc: "time per output token (vLLM's)", GateDoc: "TPOT"},
	{Pop: PopE2EL, Term: "e2el", Gate: "e2el", Figure: "e2el", JSON: "e2el_ms", VLLM: "e2el",
		Unit: "ms", Doc: "end-to-end latency", GateDoc: "E2EL"},
	{Pop: PopITL, Term: "itl", Gate: "itl_pooled", Figure: "itl", JSON: "itl_pooled_ms", VLLM: "itl",
		Unit: "ms", PerGap: true, NeedsGaps: true, Doc: "every gap of every stream, pooled (vLLM's ITL)",
		GateDoc: "every gap of every stream (vLLM's ITL; needs stream files)"},
	{Pop: PopStreamP99ITL, Term: "stream-p99-itl", Gate: "stream_p99_itl", Figure: "stream_p99_itl", JSON: "stream_p99_itl_ms",
		Unit: "ms", PerGap: true, Doc: "each stream's p99 gap", GateDoc: "each stream's p99 ITL across streams"},
	{Pop: PopStreamMaxGap, Term: "stream-max-gap", Gate: "stream_max_gap", JSON: "stream_max_gap_ms",
		Unit: "ms", PerGap: true, Doc: "each stream's largest gap", GateDoc: "each stream's largest gap across streams"},
	{Pop: PopJitter, Term: "jitter", Gate: "stream_jitter", JSON: "stream_jitter_ratio",
		Unit: "ratio", PerGap: true, Doc: "each stream's p99/p50 gap ratio", GateDoc: "each stream's p99/p50 gap ratio across streams"},
	{Pop: PopQoE, Term: "qoe", Gate: "qoe", JSON: "qoe",
		Unit: "score", HigherIsBetter: true, Doc: "each stream's Andes QoE", GateDoc: "each stream's Andes QoE"},
	{Pop: PopFluidity, Term: "fluidity", Gate: "fluidity", JSON: "fluidity",
		Unit: "score", HigherIsBetter: true, Doc: "each stream's fluidity index", GateDoc: "each stream's fluidity index"},
	{Pop: PopTokensPerSPerUser, Term: "tokens-per-s-per-user", JSON: "tokens_per_s_per_user",
		Unit: "tokens/s", HigherIsBetter: true, Doc: "each stream's decode speed"},
}

// Metric is one population's row of the Vocabulary. An empty name means
// that output does not offer the population.
type Metric struct {
	Pop Population
	// Term is its name in SLO terms (--slo TERM:STAT<=LIMIT), kebab-case.
	Term string
	// Gate is its family in gate metrics: Gate_STAT (stream_p99_itl_p99).
	Gate string
	// Figure is its prefix in validation figures: Figure_STAT_ms
	// (stream_p99_itl_p50_ms).
	Figure string
	// JSON is the summary's key of its distribution (summary.ttft_ms).
	JSON string
	// VLLM is vLLM bench's name of the same figure (its mean_X_ms keys),
	// where there is one.
	VLLM string
	// Unit is "ms", "ratio", "score" (in [0, 1]) or "tokens/s".
	Unit string
	// HigherIsBetter is true for scores and speeds.
	HigherIsBetter bool
	// PerGap marks figures of gaps, unknown for a source that records none
	// (GuideLLM); NeedsGaps those computed from every gap, which only
	// measured stream files carry (a JSON document keeps per-stream rows).
	PerGap, NeedsGaps bool
	// Doc says what it is (SLO terms' help); GateDoc as the gate's help
	// says it.
	Doc, GateDoc string
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
