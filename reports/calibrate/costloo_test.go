package calibrate

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim/cost"
)

// TestCostLeaveOneOut runs the hold-out over cost check's sources and
// checks that each source is held out once, with rows for every suite it
// holds; that no fold's fit saw its held-out source (the fit is the one on
// the other sources named explicitly, and differs from a fit that also
// sees it); that the folds' fits differ; and that the printed outcome is
// the same on a second run.
func TestCostLeaveOneOut(t *testing.T) {
	needData(t)
	hs, err := CostLeaveOneOut(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != len(CostSources) {
		t.Fatalf("%d held-out sources, want %d (one per source)", len(hs), len(CostSources))
	}
	srcs, err := loadCostSources(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	all, _, _, err := fitCostSources(srcs, cost.DefaultRoofline())
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hs {
		src := CostSources[i]
		if h.Source != src.Name {
			t.Errorf("fold %d holds out %s, want %s", i, h.Source, src.Name)
		}
		if slices.Contains(h.FittedOn, h.Source) || len(h.FittedOn) != len(CostSources)-1 {
			t.Errorf("without %s: fitted on %v, want every other source", h.Source, h.FittedOn)
		}
		for _, suite := range src.Suites {
			d, o := deviations(h.Defaults, suite), deviations(h.HeldOut, suite)
			if len(d) == 0 || len(d) != len(o) {
				t.Errorf("without %s: suite %s has %d rows with the defaults and %d held out", h.Source, suite, len(d), len(o))
			}
		}
		for _, r := range slices.Concat(h.Defaults, h.HeldOut) {
			if !slices.Contains(src.Suites, r.Suite) {
				t.Errorf("without %s: row of suite %s, not one of the source's %v", h.Source, r.Suite, src.Suites)
			}
		}

		var others []loadedSource
		for _, s := range srcs {
			if s.Name != h.Source {
				others = append(others, s)
			}
		}
		again, _, _, err := fitCostSources(others, cost.DefaultRoofline())
		if err != nil {
			t.Fatal(err)
		}
		if !equalRoofline(again, h.Fitted) {
			t.Errorf("without %s: the fold's constants %+v are not the fit on %v alone, %+v", h.Source, h.Fitted, h.FittedOn, again)
		}
		if equalRoofline(all, h.Fitted) {
			t.Errorf("without %s: the fold's constants are those of the fit on every source, held-out one included", h.Source)
		}
		for _, g := range hs[:i] {
			if equalRoofline(g.Fitted, h.Fitted) {
				t.Errorf("the fits without %s and without %s found the same constants", g.Source, h.Source)
			}
		}
	}

	var a, b bytes.Buffer
	if err := RunCheckLeaveOneOut(&a, dataDir); err != nil {
		t.Fatal(err)
	}
	if err := RunCheckLeaveOneOut(&b, dataDir); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("two runs printed different tables:\n%s\n---\n%s", a.String(), b.String())
	}
	for _, h := range hs {
		if !strings.Contains(a.String(), "without "+h.Source) {
			t.Errorf("the printed tables have no fit without %s:\n%s", h.Source, a.String())
		}
		// A default held in a fold that leaves out a source it was read
		// off must be named as in sample.
		for _, s := range h.Identification.Fields {
			if !s.Separable && slices.Contains(CostDefaultsReadOff[s.Path], h.Source) {
				line := "without " + h.Source + ": " + strings.TrimPrefix(s.Path, "cost.roofline.") + " = "
				if !strings.Contains(a.String(), line) {
					t.Errorf("the output does not name %s as held at a default read off %s:\n%s", s.Path, h.Source, a.String())
				}
			}
		}
	}
	t.Logf("\n%s", a.String())
}

// equalRoofline compares the fields CostFitCandidates may move.
func equalRoofline(a, b cost.RooflineConfig) bool {
	for _, p := range CostFitCandidates {
		x, _ := rooflineField(&a, p)
		y, _ := rooflineField(&b, p)
		if *x != *y {
			return false
		}
	}
	return true
}

func TestCostLeaveOneOutMissingData(t *testing.T) {
	var w bytes.Buffer
	dir := t.TempDir()
	err := RunCheckLeaveOneOut(&w, dir)
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("empty data folder: error %v, want one naming a file under %s", err, dir)
	}
	if err := RunCheckLeaveOneOut(&w, dir+"/absent"); err == nil || !strings.Contains(err.Error(), "--data") {
		t.Errorf("absent data folder: error %v, want one naming --data", err)
	}
	if w.Len() != 0 {
		t.Errorf("printed %q before failing", w.String())
	}
}
