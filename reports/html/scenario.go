package html

import (
	"fmt"
	"slices"
	"strings"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim"
)

// describe says a run's configuration in words: the setup (model, GPU,
// scheduler, KV cache), the workload, and the thresholds it is judged by.
// blocks is the KV block count the run used (its summary's), 0 if unknown.
func describe(c sim.Config, blocks int) (setup, workload, judged string) {
	var b strings.Builder
	per := fmt.Sprintf("%d × %s (tensor parallel %d)", c.TP, c.GPU, c.TP)
	if c.DP > 1 || c.EnableExpertParallel {
		ep := ""
		if c.EnableExpertParallel {
			ep = ", expert parallel"
		}
		per = fmt.Sprintf("%d × %s (tensor parallel %d, data parallel %d%s)", c.TP*max(c.DP, 1), c.GPU, c.TP, max(c.DP, 1), ep)
	}
	replicas := 1
	if n := c.Cluster.Replicas; n > 1 && len(c.Cluster.Pools) == 0 {
		replicas = n
		router := c.Cluster.Router.Policy
		if router == "" {
			router = "round-robin"
		}
		fmt.Fprintf(&b, "%d replicas of %s, each on %s, routed by %s. ", n, c.Model, per, router)
	} else {
		fmt.Fprintf(&b, "%s on %s. ", c.Model, per)
	}
	s := c.Scheduler
	fmt.Fprintf(&b, "Batching policy %s with at most %d batched tokens and %d sequences per step",
		s.Policy, s.MaxNumBatchedTokens, s.MaxNumSeqs)
	if s.LongPrefillTokenThreshold > 0 {
		fmt.Fprintf(&b, ", at most %d prefill tokens per request per step", s.LongPrefillTokenThreshold)
	}
	fmt.Fprintf(&b, "; %s queue; admission %s", s.Queue, admissionWords(s.Admission))
	fmt.Fprintf(&b, "; preemption by %s, victim %s. ", s.Preemption, s.Victim)
	k := c.KVCache
	if blocks == 0 {
		blocks = k.NumGPUBlocks
	}
	if replicas > 1 {
		fmt.Fprintf(&b, "KV cache of %d blocks of %d tokens per replica (%d in all), %g GiB of CPU swap space per GPU. ", blocks/replicas, k.BlockSize, blocks, k.SwapSpaceGiB)
	} else {
		fmt.Fprintf(&b, "KV cache of %d blocks of %d tokens, %g GiB of CPU swap space per GPU. ", blocks, k.BlockSize, k.SwapSpaceGiB)
	}
	fmt.Fprintf(&b, "Step cost model %s", c.Cost.Model)
	if c.Cost.NoiseCV > 0 {
		fmt.Fprintf(&b, ", step-time noise CV %g", c.Cost.NoiseCV)
	}
	if c.Cost.HiccupRatePerS > 0 {
		fmt.Fprintf(&b, ", engine hiccups of %g ms at %g/s", c.Cost.HiccupMS, c.Cost.HiccupRatePerS)
	}
	b.WriteString(".")
	setup = b.String()

	b.Reset()
	w := c.Workload
	if w.Requests > 0 {
		fmt.Fprintf(&b, "%d requests", w.Requests)
	} else {
		fmt.Fprintf(&b, "%g s of requests", w.DurationS)
	}
	fmt.Fprintf(&b, " arriving as a %s process at %g requests/s; ", w.Arrival, w.Rate)
	if w.LengthsFile != "" {
		fmt.Fprintf(&b, "prompt and output lengths sampled from %s", w.LengthsFile)
	} else {
		fmt.Fprintf(&b, "prompt lengths %s, output lengths %s tokens", w.InputLen, w.OutputLen)
	}
	fmt.Fprintf(&b, "; seed %d.", c.Seed)
	workload = b.String()

	b.Reset()
	m := c.Metrics
	fmt.Fprintf(&b, "Stalls are gaps over %g ms; ITL goodput counts streams whose largest gap is at most θ = %g ms; a stream is unstable above a jitter ratio of %g; SLO goodput limits: ",
		m.StallThresholdMS, m.ITLGoodputMS, m.UnstableJitter)
	b.WriteString(sloWords(m.SLO))
	b.WriteString(".")
	judged = b.String()
	return setup, workload, judged
}

// sloWords lists the SLO limits set, or says there are none.
func sloWords(slo sim.SLO) string {
	var parts []string
	for _, l := range []struct {
		pop reports.Population
		v   float64
	}{{reports.PopTTFT, slo.TTFTMS}, {reports.PopTPOT, slo.TPOTMS}, {reports.PopE2EL, slo.E2ELMS}} {
		if l.v > 0 {
			parts = append(parts, fmt.Sprintf("%s ≤ %g ms", metric(l.pop).Name, l.v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// admissionWords names an admission rule with the parameter it uses.
func admissionWords(a scheduler.AdmissionConfig) string {
	switch a.Rule {
	case "kv-watermark":
		return fmt.Sprintf("%s (watermark %g)", a.Rule, a.Watermark)
	case "kv-reserve":
		if a.ReserveOutputTokens == 0 {
			return a.Rule + " (reserving prompt plus max_tokens)"
		}
		return fmt.Sprintf("%s (reserving prompt plus %d output tokens)", a.Rule, a.ReserveOutputTokens)
	case "max-queue":
		return fmt.Sprintf("%s (at most %d waiting)", a.Rule, a.MaxQueue)
	case "token-bucket":
		return fmt.Sprintf("%s (%g tokens/s, burst %g)", a.Rule, a.TokensPerS, a.BurstTokens)
	}
	return a.Rule
}

// fact is one scenario setting in words, for the table of differences.
type fact struct{ Label, Value string }

// facts lists a run's settings one by one, in the order describe says them.
func facts(c sim.Config, blocks int) []fact {
	s, k, w, m := c.Scheduler, c.KVCache, c.Workload, c.Metrics
	if blocks == 0 {
		blocks = k.NumGPUBlocks
	}
	lengths := fmt.Sprintf("prompts %s, outputs %s", w.InputLen, w.OutputLen)
	if w.LengthsFile != "" {
		lengths = "sampled from " + w.LengthsFile
	}
	requests := fmt.Sprint(w.Requests)
	if w.Requests == 0 {
		requests = fmt.Sprintf("%g s of arrivals", w.DurationS)
	}
	gpus, kv := fmt.Sprintf("%d × %s", c.TP*max(c.DP, 1), c.GPU), fmt.Sprintf("%d × %d tokens", blocks, k.BlockSize)
	if n := c.Cluster.Replicas; n > 1 && len(c.Cluster.Pools) == 0 {
		gpus = fmt.Sprintf("%d replicas × %s", n, gpus)
		kv = fmt.Sprintf("%d × %d tokens per replica", blocks/n, k.BlockSize)
	}
	return []fact{
		{"model", c.Model},
		{"GPUs", gpus},
		{"batching policy", s.Policy},
		{"max batched tokens", fmt.Sprint(s.MaxNumBatchedTokens)},
		{"max sequences", fmt.Sprint(s.MaxNumSeqs)},
		{"long-prefill threshold", fmt.Sprint(s.LongPrefillTokenThreshold)},
		{"queue", s.Queue},
		{"admission", admissionWords(s.Admission)},
		{"preemption", s.Preemption + ", victim " + s.Victim},
		{"KV blocks", kv},
		{"swap space", fmt.Sprintf("%g GiB", k.SwapSpaceGiB)},
		{"cost model", c.Cost.Model},
		{"step-time noise CV", fmt.Sprintf("%g", c.Cost.NoiseCV)},
		{"engine hiccups", fmt.Sprintf("%g/s of %g ms", c.Cost.HiccupRatePerS, c.Cost.HiccupMS)},
		{"arrivals", fmt.Sprintf("%s at %g requests/s", w.Arrival, w.Rate)},
		{"requests", requests},
		{"lengths", lengths},
		{"seed", fmt.Sprint(c.Seed)},
		{"stall threshold", fmt.Sprintf("%g ms", m.StallThresholdMS)},
		{"θ (ITL goodput)", fmt.Sprintf("%g ms", m.ITLGoodputMS)},
		{"unstable jitter", fmt.Sprintf("> %g", m.UnstableJitter)},
		{"SLO limits", sloWords(m.SLO)},
	}
}

// scenarioView is the scenario section: the first run's configuration in
// words, and a table of the settings in which the runs differ.
type scenarioView struct {
	First                   string // the first run's name
	Setup, Workload, Judged string
	// Differ has one row per differing setting: its label, then one value per run.
	Differ table
	// Many is true when more than one run is compared.
	Many bool
}

// describeSource says a measured run's source in words, in place of a
// simulated configuration it does not have: the file, its format and the
// model it names, the requests and their rate, and what the file lacks.
func describeSource(r *reports.Run) (setup, workload string) {
	src, s := r.Source, &r.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "Measured streams read from %s", src.File)
	if src.Format != "" {
		fmt.Fprintf(&b, " (%s format)", src.Format)
	}
	if src.Model != "" {
		fmt.Fprintf(&b, ", serving %s", src.Model)
	}
	b.WriteString("; not a simulation: the server's configuration, its KV cache and the causes of stalls are not in the file.")
	setup = b.String()
	b.Reset()
	fmt.Fprintf(&b, "%d requests (%d finished", s.Requests, s.Finished)
	if s.Failed > 0 {
		fmt.Fprintf(&b, ", %d failed", s.Failed)
	}
	if s.Rejected > 0 {
		fmt.Fprintf(&b, ", %d rejected", s.Rejected)
	}
	fmt.Fprintf(&b, ") over %.1f s, %.2f finished requests/s, prompts of %d tokens and outputs of %d tokens in all",
		s.DurationS, s.RequestsPerS, s.InputTokens, s.OutputTokens)
	if len(src.Notes) > 0 {
		b.WriteString(". On the file: " + strings.Join(src.Notes, "; "))
	}
	b.WriteString(".")
	return setup, b.String()
}

func scenarioOf(runs []reports.Run, names []string) scenarioView {
	v := scenarioView{First: names[0], Many: len(runs) > 1}
	v.Setup, v.Workload, v.Judged = describe(runs[0].Config, runs[0].Summary.KVBlocks)
	if runs[0].Source != nil {
		v.Setup, v.Workload = describeSource(&runs[0])
		// A simulated run beside the measured ones (validate's page) is
		// described by its setup; its requests are the measured ones, not
		// its configuration's workload.
		var rows []tableRow
		for i := range runs {
			var s, w string
			if runs[i].Source != nil {
				s, w = describeSource(&runs[i])
			} else {
				s, _, _ = describe(runs[i].Config, runs[i].Summary.KVBlocks)
				s = "Simulated: " + s
				w = "The requests are the measured run's: their lengths, and arrivals from its start times or its schedule."
			}
			rows = append(rows, tableRow{Cells: []string{names[i], s + " " + w}})
		}
		if len(runs) > 1 {
			v.Differ = table{ID: "table-scenario", Caption: "Sources of the runs", Head: []string{"run", "source"}, Rows: rows}
		}
		return v
	}
	v.Differ = table{ID: "table-scenario", Caption: "Settings in which the runs differ", Head: append([]string{"setting"}, names...)}
	all := make([][]fact, len(runs))
	overrides := []string{"compared fields"}
	anyOverride := false
	for i := range runs {
		all[i] = facts(runs[i].Config, runs[i].Summary.KVBlocks)
		r := &runs[i]
		keys := make([]string, 0, len(r.Overrides))
		for k := range r.Overrides {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var ov []string
		for _, k := range keys {
			ov = append(ov, k+" = "+r.Overrides[k])
		}
		anyOverride = anyOverride || len(ov) > 0
		if len(ov) == 0 {
			ov = []string{"–"}
		}
		overrides = append(overrides, strings.Join(ov, "; "))
	}
	for j, f := range all[0] {
		row := []string{f.Label, f.Value}
		same := true
		for i := 1; i < len(all); i++ {
			row = append(row, all[i][j].Value)
			same = same && all[i][j].Value == f.Value
		}
		if !same {
			v.Differ.add(row...)
		}
	}
	if anyOverride {
		v.Differ.add(overrides...)
	}
	return v
}
