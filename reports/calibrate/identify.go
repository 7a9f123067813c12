package calibrate

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

// FrontEndParams are the front end's constants calibrate fits by default
// beside DefaultTuned when the measured runs can separate each from step
// time (Identify): the serial work per prompt token and per request, and
// detokenization per output token.
var FrontEndParams = []string{"server.serial_us_per_prompt_token", "server.serial_ms_per_request", "server.detokenize_us_per_output_token"}

// The identifiability rule (Identify). Linearise the fit at its starting
// point: column j of the sensitivity matrix J is how the target figures'
// log errors (every target of every run, as the loss sums them) move when
// field j moves by one step (IdentifyStep of its value, or IdentifyFloor
// of its range from 0). A least-squares fit then knows field j to within a
// standard error of
//
//	σ / (‖J_j‖ · s_j) steps,
//
// where s_j, its independence, is the sine of the angle between J_j and the
// span of the other fitted fields' columns (the share of what it does that
// no combination of them can do; 1/s_j² is its variance inflation factor)
// and σ = NoiseLogError is the noise of a target figure the fit cannot
// explain. A field is separable when that standard error is at most
// MaxStandardError steps: the data fix it to within ±25 % of its value.
// So a field that moves the figures a lot may be fitted beside others that
// do much the same, and one that moves them little needs to be nearly
// alone in what it does.
const (
	IdentifyStep  = 0.25
	IdentifyFloor = 0.05
	// NoiseLogError is 5 %: half the 10 % that docs/fidelity.md allows a
	// p50 figure out of sample, as two standard deviations.
	NoiseLogError    = 0.05
	MaxStandardError = 1.0
)

// Separability is one front-end field's identifiability on the data.
type Separability struct {
	Path      string
	Separable bool
	Held      bool    // set by the user: neither tested nor fitted
	Value     float64 // its value at the start of the fit
	// Step is the field's identification step, in its own unit;
	// Movement the RMS change of the target figures' log errors when the
	// field moves by it; Independence the share of that the other fields
	// cannot make; StdErr the standard error in steps (see
	// MaxStandardError), +Inf when nothing moves.
	Step         float64
	Movement     float64
	Independence float64
	StdErr       float64
	// Like are the fields whose columns are closest to its own (by
	// |cosine|), at most two, best first: what a fit would trade it for.
	Like []string
}

// Why says in words why a field is not separable (or that it is).
func (s Separability) Why() string {
	switch {
	case s.Held:
		return s.Path + ": held at " + num(s.Value) + " as given"
	case s.Movement == 0:
		return s.Path + ": no target figure moves with it"
	}
	se := fmt.Sprintf("%s ± %s (standard error %.2f of a step of %s)", num(s.Value), num(s.StdErr*s.Step), s.StdErr, num(s.Step))
	if s.StdErr > 100 {
		se = fmt.Sprintf("%s ± more than 100 steps of %s", num(s.Value), num(s.Step))
	}
	if s.Separable {
		return s.Path + ": separable, " + se
	}
	return fmt.Sprintf("%s: known to %s only, over %g; %.1f %% of what it does is matched by %s",
		s.Path, se, MaxStandardError, 100*(1-s.Independence*s.Independence), strings.Join(s.Like, " and "))
}

// Identification is the outcome of Identify: which front-end fields a fit
// can take beside the others, and the condition number of the normalised
// sensitivity matrix of the fields then fitted (for information: it is
// large when any two of them, front end or not, are hard to tell apart).
type Identification struct {
	Fields    []Separability
	Condition float64
}

// Fit lists the separable fields' paths.
func (id *Identification) Fit() []string {
	var out []string
	for _, s := range id.Fields {
		if s.Separable {
			out = append(out, s.Path)
		}
	}
	return out
}

// Summary is the line calibrate prints: the front-end fields it fits, or
// "front end: not separable from step time on this data (why)".
func (id *Identification) Summary() string {
	var fit, not []string
	for _, s := range id.Fields {
		switch {
		case s.Separable:
			fit = append(fit, s.Why())
		case !s.Held:
			not = append(not, s.Why())
		}
	}
	var parts []string
	if len(fit) > 0 {
		parts = append(parts, "front end: fitted beside step time ("+strings.Join(fit, "; ")+")")
	}
	if len(not) > 0 {
		what := "front end"
		if len(fit) > 0 {
			what = "the rest of the front end"
		}
		parts = append(parts, what+": not separable from step time on this data ("+strings.Join(not, "; ")+"), held at its value")
	}
	if len(parts) == 0 {
		return "front end: every constant held as given"
	}
	out := strings.Join(parts, "; ")
	if c := id.Condition; c > 0 && !math.IsInf(c, 1) {
		out += fmt.Sprintf(" [condition number of the fitted fields' sensitivities %.3g]", c)
	}
	return out
}

// Identify tells which of the candidate front-end fields (not in hold) the
// measured runs can separate from the fields fitted anyway (fitted), at
// base: it simulates base and base with each field moved by one step, and
// applies the rule of MaxStandardError to the columns of the resulting
// sensitivity matrix. A field found not separable is dropped and
// the rest tested again, so two fields that stand in for each other do not
// both go. It takes 1 + len(fitted) + len(candidates) simulations.
func Identify(base sim.Config, recs []ingest.Recording, fitted, candidates, hold []string, o Options) (*Identification, error) {
	id := &Identification{}
	var test []string
	for _, p := range candidates {
		v, err := FieldValue(base, p)
		if err != nil {
			return nil, err
		}
		s := Separability{Path: p, Value: v, Held: slices.Contains(hold, p), StdErr: math.Inf(1)}
		id.Fields = append(id.Fields, s)
		if !s.Held {
			test = append(test, p)
		}
	}
	if len(test) == 0 {
		return id, nil
	}
	resid := func(c sim.Config) ([]float64, error) {
		setup, err := c.Resolve()
		if err != nil {
			return nil, err
		}
		cmps, err := Validate(setup, recs, o)
		if err != nil {
			return nil, err
		}
		return residuals(cmps), nil
	}
	r0, err := resid(base)
	if err != nil {
		return nil, err
	}
	all := append(append([]string(nil), fitted...), test...)
	cols := make(map[string][]float64, len(all))
	for _, p := range all {
		c, _, err := moved(base, p)
		if err != nil {
			return nil, err
		}
		r, err := resid(c)
		if err != nil {
			return nil, err
		}
		if len(r) != len(r0) {
			return nil, fmt.Errorf("identify %s: %d target figures, %d at the start", p, len(r), len(r0))
		}
		col := make([]float64, len(r0))
		for i := range r {
			col[i] = r[i] - r0[i]
		}
		cols[p] = col
	}
	id.separate(cols, fitted, test, func(p string) float64 {
		_, step, _ := moved(base, p)
		return step
	})
	return id, nil
}

// separate applies the rule of MaxStandardError to the sensitivity
// columns cols (by field path): each field of id in test is marked
// separable or not beside the fields in fitted, which are fitted anyway.
// The least identified field found not separable is dropped and the rest
// tested again, until every field left is separable. step gives a field's
// identification step, for the record. It sets id.Condition over the
// fields then fitted.
func (id *Identification) separate(cols map[string][]float64, fitted, test []string, step func(string) float64) {
	all := append(append([]string(nil), fitted...), test...)
	live := slices.Clone(test)
	defer func() { id.Condition = condition(cols, append(slices.Clone(fitted), id.Fit()...)) }()
	for {
		worst, worstS := -1, math.Inf(1) // the least identified goes first
		for i := range id.Fields {
			s := &id.Fields[i]
			if s.Held || !slices.Contains(live, s.Path) {
				continue
			}
			var others []string
			for _, p := range all {
				if p != s.Path && (slices.Contains(fitted, p) || slices.Contains(live, p)) {
					others = append(others, p)
				}
			}
			col := cols[s.Path]
			s.Step = step(s.Path)
			s.Movement = rms(col)
			s.Independence = independence(col, others, cols)
			s.Like = closest(col, others, cols, 2)
			s.StdErr = math.Inf(1)
			if d := norm(col) * s.Independence; d > 0 {
				s.StdErr = NoiseLogError / d
			}
			s.Separable = s.StdErr <= MaxStandardError
			if !s.Separable && -s.StdErr < worstS {
				worst, worstS = i, -s.StdErr
			}
		}
		if worst < 0 {
			return
		}
		id.Fields[worst].Separable = false
		live = slices.DeleteFunc(live, func(p string) bool { return p == id.Fields[worst].Path })
		if len(live) == 0 {
			return
		}
	}
}

// moved is c with field p moved by one identification step, and the step.
func moved(c sim.Config, p string) (sim.Config, float64, error) {
	prm, ok := TunableParams[p]
	if !ok {
		return c, 0, fmt.Errorf("unknown field %q to fit; valid: %s", p, strings.Join(TunableNames(), ", "))
	}
	v, err := FieldValue(c, p)
	if err != nil {
		return c, 0, err
	}
	step := IdentifyStep * v
	if v <= 0 {
		step = IdentifyFloor * (prm.Hi - prm.Lo)
	}
	nv := v + step
	if nv > prm.Hi { // at its top: move down instead
		nv = v - step
	}
	out := c
	return out, step, scenario.Set(&out, p, fmt.Sprintf("%g", nv))
}

// residuals are the log errors of the target figures, in the order loss
// sums them.
func residuals(cmps []Comparison) []float64 {
	var r []float64
	for i := range cmps {
		for _, key := range TargetMetrics {
			f, ok := cmps[i].Figure(key)
			if !ok || f.Error == nil || f.Simulated <= 0 {
				continue
			}
			r = append(r, math.Log(f.Simulated/f.Measured))
		}
	}
	return r
}

func rms(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s / float64(len(v)))
}

// independence is the norm of the part of v orthogonal to the span of the
// columns named by others, over the norm of v (1: nothing else does what
// it does; 0: a combination of the others does exactly that). It uses
// modified Gram–Schmidt on the unit columns, skipping any that the ones
// before already span.
func independence(v []float64, others []string, cols map[string][]float64) float64 {
	n := norm(v)
	if n == 0 {
		return 0
	}
	var basis [][]float64
	for _, p := range others {
		u := slices.Clone(cols[p])
		un := norm(u)
		if un == 0 {
			continue
		}
		scale(u, 1/un)
		for _, b := range basis {
			scale2(u, b, -dot(u, b))
		}
		if bn := norm(u); bn > 1e-6 {
			scale(u, 1/bn)
			basis = append(basis, u)
		}
	}
	r := slices.Clone(v)
	scale(r, 1/n)
	for _, b := range basis {
		scale2(r, b, -dot(r, b))
	}
	return norm(r)
}

// closest names the k columns of others with the largest |cosine| to v.
func closest(v []float64, others []string, cols map[string][]float64, k int) []string {
	type c struct {
		p   string
		cos float64
	}
	var cs []c
	for _, p := range others {
		if d := norm(v) * norm(cols[p]); d > 0 {
			cs = append(cs, c{p, math.Abs(dot(v, cols[p])) / d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].cos > cs[j].cos })
	var out []string
	for i := 0; i < len(cs) && i < k; i++ {
		out = append(out, cs[i].p)
	}
	return out
}

// condition is the ratio of the largest to the smallest singular value of
// the matrix of unit columns named by ps (+Inf when a column is 0 or they
// are dependent).
func condition(cols map[string][]float64, ps []string) float64 {
	if len(ps) == 0 {
		return math.NaN()
	}
	m := len(cols[ps[0]])
	if m < len(ps) {
		return math.Inf(1)
	}
	a := mat.NewDense(m, len(ps), nil)
	for j, p := range ps {
		n := norm(cols[p])
		if n == 0 {
			return math.Inf(1)
		}
		for i, x := range cols[p] {
			a.Set(i, j, x/n)
		}
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDNone) {
		return math.NaN()
	}
	s := svd.Values(nil)
	if s[len(s)-1] <= 0 {
		return math.Inf(1)
	}
	return s[0] / s[len(s)-1]
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }

func scale(a []float64, k float64) {
	for i := range a {
		a[i] *= k
	}
}

// scale2 adds k·b to a.
func scale2(a, b []float64, k float64) {
	for i := range a {
		a[i] += k * b[i]
	}
}

// SplitFit reads --fit's fields: either the fields to fit instead of the
// default set, or +FIELD entries added to it (extra), not both.
func SplitFit(fit []string) (params, extra []string, err error) {
	params = fit
	for i, f := range fit {
		if strings.HasPrefix(f, "+") != strings.HasPrefix(fit[0], "+") {
			return nil, nil, fmt.Errorf("--fit: give either fields (%s) or +fields added to the default set, not both (%q)", fit[0], fit[i])
		}
		if strings.HasPrefix(f, "+") {
			params, extra = nil, append(extra, strings.TrimPrefix(f, "+"))
		}
	}
	return params, extra, nil
}

// HeldFrontEnd are the front-end fields a default fit leaves as given:
// those the user set (given reports a flag, even at its default value, or
// --set), and those the scenario or a profile moved from the built-in
// default. A --frontend profile's values are cited defaults the fit starts
// from, not a choice: the fields are compared as written.
func HeldFrontEnd(base sim.Config, given func(path string) bool) []string {
	var held []string
	def := sim.DefaultServer()
	for _, p := range FrontEndParams {
		g := given(p)
		if !g {
			raw := base.Server
			raw.Frontend = ""
			r, _ := FieldValue(sim.Config{Server: raw}, p)
			d, _ := FieldValue(sim.Config{Server: def}, p)
			g = r != d
		}
		if g {
			held = append(held, p)
		}
	}
	return held
}
