package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/reports/slo"
	"github.com/itlsim/itlsim/sim"
)

// ParseTolerance reads a fraction (0.05, at most 1) or a percentage (5%).
// A bare number above 1 is refused: "--tolerance 5" meant 5 % far more
// often than 500 %.
func ParseTolerance(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	if pct {
		t = strings.TrimSpace(strings.TrimSuffix(t, "%"))
	}
	v, err := strconv.ParseFloat(t, 64)
	switch {
	case err != nil || !(v >= 0) || v > 1e6:
		return 0, fmt.Errorf("--tolerance %q: expected a fraction from 0 to 1 (0.05) or a percentage (5%%)", s)
	case !pct && v > 1:
		return 0, fmt.Errorf("--tolerance %s: a fraction above 1 (%g %%); write %s%% for %s percent, or %g for that share", s, v*100, t, t, v/100)
	}
	if pct {
		v /= 100
	}
	return v, nil
}

// Input is one side of a gate as read: a run of a results document, or a
// measured recording (judged once the thresholds are known).
type Input struct {
	name   string
	doc    *Sample      // from a document: its run's rows
	docRun *reports.Run // from a document: the run itself (for --html)
	docM   sim.MetricsConfig
	record *ingest.Recording
}

// Run returns the input as a run of the JSON contract, named for the
// report: the document's run, or the recording analyzed under m.
func (g *Input) Run(label string, m sim.MetricsConfig) reports.Run {
	var r reports.Run
	if g.docRun != nil {
		r = *g.docRun
	} else {
		r = ingest.Runs([]ingest.Recording{*g.record}, m, true)[0]
	}
	r.Name = label + ": " + g.name
	return r
}

// Sample is the input's streams judged under m.
func (g *Input) Sample(m sim.MetricsConfig) Sample {
	if g.doc != nil {
		s := *g.doc
		s.Metrics = m
		return s
	}
	return Sample{Name: g.name, Result: g.record.Result(m), Metrics: m, AllGaps: !g.record.NoGaps}
}

// LoadInput reads a results document or a measured stream file (in: its
// format, "" to detect) and picks its run named run, or the only one;
// runFlag is the flag that names it, for messages.
func LoadInput(path, run, runFlag string, in ingest.Format) (*Input, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	data = ingest.TrimBOM(data)
	if in == "" {
		if _, derr := ingest.Detect(path, data); errors.Is(derr, ingest.ErrDocument) {
			return loadDocument(path, data, run, runFlag)
		}
	}
	recs, err := ingest.Parse(path, data, in)
	if err != nil {
		return nil, err
	}
	var names []string
	for i := range recs {
		names = append(names, recs[i].Name)
	}
	k, err := pickRun(path, names, run, runFlag)
	if err != nil {
		return nil, err
	}
	name := path
	if len(recs) > 1 {
		name += " (" + recs[k].Name + ")"
	}
	return &Input{name: reports.Printable(name), record: &recs[k]}, nil
}

func loadDocument(path string, data []byte, run, runFlag string) (*Input, error) {
	var doc reports.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: not an itlsim --json result: %w", path, ingest.JSONError(data, err))
	}
	if err := reports.CheckSchema(path, doc.SchemaVersion); err != nil {
		return nil, err
	}
	var names []string
	for _, r := range doc.Runs {
		names = append(names, r.Name)
	}
	k, err := pickRun(path, names, run, runFlag)
	if err != nil {
		return nil, err
	}
	name := path
	if len(doc.Runs) > 1 {
		name += " (" + doc.Runs[k].Name + ")"
	}
	name = reports.Printable(name)
	s, err := FromRun(name, &doc.Runs[k])
	if err != nil {
		return nil, err
	}
	return &Input{name: name, doc: &s, docRun: &doc.Runs[k], docM: doc.Runs[k].Config.Metrics}, nil
}

// pickRun finds the run named run, or the only one.
func pickRun(path string, names []string, run, runFlag string) (int, error) {
	if len(names) == 0 {
		return 0, fmt.Errorf("%s: no runs", path)
	}
	if run == "" {
		if len(names) > 1 {
			return 0, fmt.Errorf("%s holds %d runs (%s): choose one with %s", path, len(names), strings.Join(names, ", "), runFlag)
		}
		return 0, nil
	}
	for i, n := range names {
		if n == run {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s %q: %s has runs %s", runFlag, run, path, strings.Join(names, ", "))
}

// Thresholds settles the thresholds both sides are judged by: a results
// document's own, else the defaults, with flags (the ones given on the
// command line) applied on top. A document's rows count stalls at its own
// threshold, so a document judged at another stall threshold is an error.
func Thresholds(base, cand *Input, flags func(m *sim.MetricsConfig) error) (sim.MetricsConfig, error) {
	m := sim.DefaultConfig().Metrics
	for _, g := range []*Input{cand, base} {
		if g.doc != nil {
			m = g.docM
		}
	}
	if err := flags(&m); err != nil {
		return m, err
	}
	if err := m.Validate(); err != nil {
		return m, err
	}
	for _, g := range []*Input{base, cand} {
		if g.doc != nil && g.docM.StallThresholdMS != m.StallThresholdMS {
			return m, fmt.Errorf("%s counted stalls above %g ms, the other side above %g ms: its rows cannot be recounted; compare at one --stall-threshold",
				g.name, g.docM.StallThresholdMS, m.StallThresholdMS)
		}
	}
	return m, nil
}

// Decide judges cand against base under m (base nil: the SLO terms judge
// the candidate alone), restricted to one traffic class unless class is
// empty: the comparison, then the terms on the candidate.
func Decide(base, cand *Input, m sim.MetricsConfig, terms []slo.Term, o Options, class string) (Report, error) {
	cs := cand.Sample(m)
	var bs Sample
	if base != nil {
		bs = base.Sample(m)
	} else {
		bs = cs
	}
	var err error
	if class != "" {
		if bs, err = bs.ForClass(class); err != nil {
			return Report{}, err
		}
		if cs, err = cs.ForClass(class); err != nil {
			return Report{}, err
		}
	}
	var rep Report
	if base == nil {
		rep, err = Absolute(cs, terms)
	} else {
		rep, err = Compare(bs, cs, o)
		if err == nil && len(terms) > 0 {
			rep.SLO = Judge(cs, terms)
			rep.Settle()
		}
	}
	if err != nil {
		return Report{}, err
	}
	rep.Class = class
	return rep, nil
}
