package workloads

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/itlsim/itlsim/workloads/seed"
)

// Class is one named kind of traffic in a workload mix: its share of the
// arrivals, its lengths, its priority, and the SLO limits and speculative
// acceptance profile its requests are judged and served with. A class may
// start from a preset (Preset) and override any field.
type Class struct {
	// Name labels the class in reports. Default: the preset's name.
	Name string `yaml:"name" json:"name"`
	// Preset is a built-in class to start from: chat, rag, code,
	// batch-report, reasoning (see `itlsim presets`).
	Preset string `yaml:"preset,omitempty" json:"preset,omitempty"`
	// Share is the class's weight among arrivals (normalised over classes).
	Share float64 `yaml:"share" json:"share"`
	// InputLen and OutputLen are the class's prompt and output lengths.
	InputLen  Dist `yaml:"input_len,omitempty" json:"input_len,omitzero"`
	OutputLen Dist `yaml:"output_len,omitempty" json:"output_len,omitzero"`
	// Priority orders the queue under queue: priority (lower is sooner).
	Priority int `yaml:"priority" json:"priority"`
	// SLO holds the class's limits in ms for SLO goodput; 0 = none.
	SLO ClassSLO `yaml:"slo" json:"slo"`
	// Acceptance is the class's speculative-decoding acceptance model
	// (e.g. iid:0.9), used instead of spec_decode.acceptance when set.
	Acceptance string `yaml:"acceptance,omitempty" json:"acceptance,omitempty"`
	// QoE is the delivery the class's users expect, for the QoE and
	// fluidity scores (reading a chat answer, glancing at a completion,
	// listening to a voice reply).
	QoE ClassQoE `yaml:"qoe,omitempty" json:"qoe,omitzero"`
	// Delivery overrides the run's client-side delivery settings for the
	// class's streams (the right trade-off differs by surface: a voice
	// reply wants no smoothing buffer, a code assistant a deep one).
	Delivery ClassDelivery `yaml:"delivery,omitempty" json:"delivery,omitzero"`
}

// ClassDelivery holds a class's delivery settings; a field left out
// (nil) keeps the run's delivery.* value. Milliseconds; 0 turns the
// mechanism off for the class.
type ClassDelivery struct {
	// SmoothingCadenceMS is delivery.smoothing.cadence_ms.
	SmoothingCadenceMS *float64 `yaml:"smoothing_cadence_ms,omitempty" json:"smoothing_cadence_ms,omitempty"`
	// SmoothingDepthMS is delivery.smoothing.depth_ms.
	SmoothingDepthMS *float64 `yaml:"smoothing_depth_ms,omitempty" json:"smoothing_depth_ms,omitempty"`
	// FlushWindowMS is delivery.flush.window_ms.
	FlushWindowMS *float64 `yaml:"flush_window_ms,omitempty" json:"flush_window_ms,omitempty"`
	// FrameMS is delivery.render.frame_ms.
	FrameMS *float64 `yaml:"frame_ms,omitempty" json:"frame_ms,omitempty"`
}

// IsZero reports whether the class keeps every run setting.
func (d ClassDelivery) IsZero() bool {
	return d.SmoothingCadenceMS == nil && d.SmoothingDepthMS == nil && d.FlushWindowMS == nil && d.FrameMS == nil
}

// ClassSLO holds per-class limits in milliseconds; 0 means no limit. A
// request of the class meets its SLO (and counts in the run's SLO goodput)
// when it meets every limit given.
type ClassSLO struct {
	TTFTMS float64 `yaml:"ttft_ms" json:"ttft_ms"`
	TPOTMS float64 `yaml:"tpot_ms" json:"tpot_ms"`
	E2ELMS float64 `yaml:"e2el_ms" json:"e2el_ms"`
	// StreamP99ITLMS limits the stream's own p99 gap; StreamMaxGapMS its
	// largest gap (a freeze a person notices).
	StreamP99ITLMS float64 `yaml:"stream_p99_itl_ms,omitempty" json:"stream_p99_itl_ms,omitempty"`
	StreamMaxGapMS float64 `yaml:"stream_max_gap_ms,omitempty" json:"stream_max_gap_ms,omitempty"`
}

// over is s with each limit it does not give (0) taken from base: a
// class's own slo: adds to or tightens its preset's limits and keeps the
// others.
func (s ClassSLO) over(base ClassSLO) ClassSLO {
	pick := func(own, b float64) float64 {
		if own == 0 {
			return b
		}
		return own
	}
	return ClassSLO{TTFTMS: pick(s.TTFTMS, base.TTFTMS), TPOTMS: pick(s.TPOTMS, base.TPOTMS), E2ELMS: pick(s.E2ELMS, base.E2ELMS),
		StreamP99ITLMS: pick(s.StreamP99ITLMS, base.StreamP99ITLMS), StreamMaxGapMS: pick(s.StreamMaxGapMS, base.StreamMaxGapMS)}
}

// ClassQoE is the delivery a class's users expect (see sim.QoE): 0 takes
// the run's metrics.qoe.
type ClassQoE struct {
	ExpectedTTFTMS float64 `yaml:"expected_ttft_ms,omitempty" json:"expected_ttft_ms,omitempty"`
	TokensPerS     float64 `yaml:"tokens_per_s,omitempty" json:"tokens_per_s,omitempty"`
}

// classPresets are the built-in classes. Their lengths are assumptions
// chosen to be typical of each kind of traffic, not measurements: chat
// follows the default chat workload (see DefaultConfig); RAG has long
// retrieved contexts and short answers; code completion short outputs with
// predictable text (high acceptance); batch report generation long
// outputs; reasoning short prompts and very long outputs.
//
// Their limits follow the latency budgets stated for each surface:
//   - TTFT: from Nielsen's response-time limits ("Response Times: The 3
//     Important Limits", Nielsen Norman Group: 0.1 s feels instantaneous,
//     1 s keeps the flow of thought, 10 s keeps attention). Code
//     completion 100 ms: an inline suggestion must feel instantaneous while
//     the user types. Chat 500 ms: well inside the 1 s flow limit, the
//     budget commonly stated for chat. RAG and reasoning 2 s: a
//     retrieval-sized prompt or a thinking phase the user knows to wait
//     for, still far inside the 10 s attention limit.
//   - TPOT: at least reading speed. People read about 4–5 words a second
//     (Brysbaert 2019, ~238 words/min silent reading), about 6 tokens/s at
//     4/3 tokens a word; a TPOT of 50 ms (20 tokens/s) keeps a stream three
//     times ahead of a fast reader for chat and RAG, 100 ms (10 tokens/s)
//     for reasoning traces people skim.
//   - Batch report generation has no interactive limit, only an end-to-end
//     one (10 minutes).
//   - Chat, RAG and reasoning also hold each stream's largest gap to 2 s
//     (a freeze longer than Nielsen's 1 s limit for an uninterrupted flow,
//     with slack for queueing); code completion to 500 ms.
var classPresets = map[string]struct {
	doc string
	c   Class
}{
	"chat": {"interactive chat: ~1k-token prompts, ~250-token answers", Class{
		InputLen: MustParseDist("lognormal:1024,1024,16,3072"), OutputLen: MustParseDist("lognormal:256,256,16,1024"),
		SLO: ClassSLO{TTFTMS: 500, TPOTMS: 50, StreamMaxGapMS: 2000}, Acceptance: "iid:0.7"}},
	"rag": {"retrieval-augmented answers: ~6k-token contexts, ~200-token answers", Class{
		InputLen: MustParseDist("lognormal:6000,3000,1024,16000"), OutputLen: MustParseDist("lognormal:200,150,16,800"),
		SLO: ClassSLO{TTFTMS: 2000, TPOTMS: 50, StreamMaxGapMS: 2000}, Acceptance: "iid:0.75"}},
	"code": {"code completion: ~2k-token files, ~60-token completions, tight limits", Class{
		InputLen: MustParseDist("lognormal:2000,1500,64,8000"), OutputLen: MustParseDist("lognormal:64,64,4,512"),
		SLO: ClassSLO{TTFTMS: 100, TPOTMS: 50, StreamMaxGapMS: 500}, Acceptance: "iid:0.85",
		QoE: ClassQoE{ExpectedTTFTMS: 100, TokensPerS: 30}}},
	"batch-report": {"batch report generation: long outputs, low priority, an end-to-end limit only", Class{
		InputLen: MustParseDist("lognormal:3000,2000,256,12000"), OutputLen: MustParseDist("lognormal:1500,800,200,4000"),
		Priority: 10, SLO: ClassSLO{E2ELMS: 600000}, Acceptance: "iid:0.7"}},
	"reasoning": {"long-output reasoning: short prompts, ~4k-token answers", Class{
		InputLen: MustParseDist("lognormal:800,600,32,4000"), OutputLen: MustParseDist("lognormal:4000,3000,256,16000"),
		SLO: ClassSLO{TTFTMS: 2000, TPOTMS: 100, StreamMaxGapMS: 2000}, Acceptance: "iid:0.6"}},
}

// mixPresets are built-in workload mixes: class preset → share.
var mixPresets = map[string]struct {
	doc    string
	shares map[string]float64
}{
	"assistant":  {"chat 60 %, RAG 25 %, code 15 %", map[string]float64{"chat": 0.6, "rag": 0.25, "code": 0.15}},
	"enterprise": {"chat 40 %, RAG 40 %, batch reports 20 %", map[string]float64{"chat": 0.4, "rag": 0.4, "batch-report": 0.2}},
	"reasoning":  {"chat 50 %, long-output reasoning 50 %", map[string]float64{"chat": 0.5, "reasoning": 0.5}},
	"all":        {"the five classes in equal shares", map[string]float64{"chat": 0.2, "rag": 0.2, "code": 0.2, "batch-report": 0.2, "reasoning": 0.2}},
}

// ClassPresets lists the class presets, sorted; MixPresets the mixes.
func ClassPresets() []string { return slices.Sorted(maps.Keys(classPresets)) }

// MixPresets lists the workload mix presets, sorted.
func MixPresets() []string { return slices.Sorted(maps.Keys(mixPresets)) }

// DescribeClass returns a class preset's one-line description.
func DescribeClass(name string) (string, bool) {
	p, ok := classPresets[name]
	return p.doc, ok
}

// DescribeMix returns a mix preset's one-line description.
func DescribeMix(name string) (string, bool) {
	p, ok := mixPresets[name]
	return p.doc, ok
}

// ResolveClasses returns the workload's classes with presets applied: the
// mix's classes, then the explicit ones (an explicit class named like a mix
// class replaces it). nil when the workload has no classes.
func (c Config) ResolveClasses() ([]Class, error) {
	var out []Class
	if c.Mix != "" {
		m, ok := mixPresets[c.Mix]
		if !ok {
			return nil, fmt.Errorf("workload.mix: unknown mix %q; valid: %s", c.Mix, strings.Join(MixPresets(), ", "))
		}
		for _, name := range slices.Sorted(maps.Keys(m.shares)) {
			out = append(out, Class{Name: name, Preset: name, Share: m.shares[name]})
		}
	}
	fromMix := len(out)
	for _, cl := range c.Classes {
		if cl.Name == "" {
			cl.Name = cl.Preset
		}
		// An explicit class replaces the mix's class of that name; two
		// explicit classes of one name are an error below.
		if i := slices.IndexFunc(out[:fromMix], func(o Class) bool { return o.Name == cl.Name }); i >= 0 && cl.Name != "" {
			out[i] = cl
			out[i].Preset = cmpOr(cl.Preset, out[i].Name)
			continue
		}
		out = append(out, cl)
	}
	seen := map[string]bool{}
	for i := range out {
		cl := &out[i]
		field := fmt.Sprintf("workload.classes[%d]", i)
		if cl.Preset != "" {
			p, ok := classPresets[cl.Preset]
			if !ok {
				return nil, fmt.Errorf("%s.preset: unknown class %q; valid: %s", field, cl.Preset, strings.Join(ClassPresets(), ", "))
			}
			base := p.c
			if cl.Name == "" {
				cl.Name = cl.Preset
			}
			if cl.InputLen.IsZero() {
				cl.InputLen = base.InputLen
			}
			if cl.OutputLen.IsZero() {
				cl.OutputLen = base.OutputLen
			}
			if cl.Priority == 0 {
				cl.Priority = base.Priority
			}
			cl.SLO = cl.SLO.over(base.SLO)
			if cl.Acceptance == "" {
				cl.Acceptance = base.Acceptance
			}
			if cl.QoE == (ClassQoE{}) {
				cl.QoE = base.QoE
			}
		}
		switch {
		case cl.Name == "":
			return nil, fmt.Errorf("%s.name: a class needs a name or a preset", field)
		case seen[cl.Name]:
			return nil, fmt.Errorf("%s.name: class %q appears twice", field, cl.Name)
		case !(cl.Share > 0 && cl.Share <= 1e6):
			return nil, fmt.Errorf("%s.share: class %s needs a share in (0, 1e6] (shares are relative weights), got %g", field, cl.Name, cl.Share)
		case cl.InputLen.IsZero() || cl.OutputLen.IsZero():
			return nil, fmt.Errorf("%s: class %s needs input_len and output_len (or a preset)", field, cl.Name)
		case !(cl.SLO.TTFTMS >= 0 && cl.SLO.TPOTMS >= 0 && cl.SLO.E2ELMS >= 0 && cl.SLO.StreamP99ITLMS >= 0 && cl.SLO.StreamMaxGapMS >= 0):
			return nil, fmt.Errorf("%s.slo: limits must be ≥ 0 ms, got %+v", field, cl.SLO)
		case !(cl.QoE.ExpectedTTFTMS >= 0 && cl.QoE.ExpectedTTFTMS <= 1e9 && cl.QoE.TokensPerS >= 0 && cl.QoE.TokensPerS <= 1e6):
			return nil, fmt.Errorf("%s.qoe: expected_ttft_ms must be in [0, 1e9] and tokens_per_s in [0, 1e6] (0: the run's), got %+v", field, cl.QoE)
		}
		seen[cl.Name] = true
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	if _, ok := classPresets[b]; ok {
		return b
	}
	return ""
}

// classPicker draws a class per request by share.
type classPicker struct {
	classes []Class
	in, out []Dist // loaded length distributions
	cum     []float64
	rng     *seed.Rand
}

func newClassPicker(classes []Class, seed uint64) (*classPicker, error) {
	p := &classPicker{classes: classes, rng: stream(seed, "classes")}
	total := 0.0
	for i, cl := range classes {
		in, err := cl.InputLen.Load()
		if err != nil {
			return nil, fmt.Errorf("workload.classes[%d].input_len: %w", i, err)
		}
		out, err := cl.OutputLen.Load()
		if err != nil {
			return nil, fmt.Errorf("workload.classes[%d].output_len: %w", i, err)
		}
		p.in, p.out = append(p.in, in), append(p.out, out)
		total += cl.Share
		p.cum = append(p.cum, total)
	}
	for i := range p.cum {
		p.cum[i] /= total
	}
	return p, nil
}

// pick returns a class index.
func (p *classPicker) pick() int {
	u := p.rng.Float64()
	for i, c := range p.cum {
		if u < c {
			return i
		}
	}
	return len(p.cum) - 1
}
