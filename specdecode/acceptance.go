package specdecode

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Acceptance model names.
const (
	IID           = "iid"
	PositionDecay = "position-decay"
	Beta          = "beta"
	Regime        = "regime"
	OODShare      = "ood-share"
	OODRegion     = "ood-region"
)

type acceptanceSpec struct {
	args []string
	doc  string
}

// acceptances is the registry of acceptance models: name → parameters and
// meaning. Kinds lists the names derived from it.
var acceptances = map[string]acceptanceSpec{
	IID:           {[]string{"A"}, "each draft token accepted with probability A until the first rejection (Leviathan et al.)"},
	PositionDecay: {[]string{"A", "D"}, "draft position j (0-based) accepted with probability A·D^j, front-loaded as vLLM's per-position rates show"},
	Beta:          {[]string{"A", "B"}, "each request draws its own α from Beta(A,B), then iid"},
	Regime:        {[]string{"AIN", "AOUT", "MEANIN", "MEANOUT"}, "streams alternate in-distribution (α=AIN) and out-of-distribution (α=AOUT) phases of geometric length with means MEANIN and MEANOUT tokens, starting in distribution"},
	OODShare:      {[]string{"AIN", "AOUT", "SHARE"}, "a SHARE of requests is out of distribution throughout (α=AOUT), the rest in (α=AIN)"},
	OODRegion:     {[]string{"AIN", "AOUT", "FROM", "TO"}, "the tokens from fraction FROM to TO of each response are out of distribution (α=AOUT), the rest in (α=AIN)"},
}

// Kinds lists the acceptance model names, sorted.
func Kinds() []string {
	return []string{Beta, IID, OODRegion, OODShare, PositionDecay, Regime}
}

// Describe returns an acceptance model's form and meaning.
func Describe(kind string) (string, bool) {
	a, ok := acceptances[kind]
	if !ok {
		return "", false
	}
	return kind + ":" + strings.Join(a.args, ",") + "  " + a.doc, true
}

// Acceptance is a parsed acceptance model such as "iid:0.8". It is a
// comparable value; the zero value means none.
type Acceptance struct {
	kind string
	p    [4]float64
}

// ParseAcceptance parses "KIND:P1,P2,…".
func ParseAcceptance(spec string) (Acceptance, error) {
	spec = strings.TrimSpace(spec)
	kind, rest, _ := strings.Cut(spec, ":")
	kind = strings.TrimSpace(kind)
	a, ok := acceptances[kind]
	if !ok {
		return Acceptance{}, fmt.Errorf("unknown acceptance model %q; valid: %s", kind, strings.Join(Kinds(), ", "))
	}
	var args []string
	if strings.TrimSpace(rest) != "" {
		args = strings.Split(rest, ",")
	}
	if len(args) != len(a.args) {
		return Acceptance{}, fmt.Errorf("%s: expected %s, got %q", kind, strings.Join(a.args, ","), rest)
	}
	out := Acceptance{kind: kind}
	for i, s := range args {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return Acceptance{}, fmt.Errorf("%s: %s must be a number, got %q", kind, a.args[i], s)
		}
		out.p[i] = v
	}
	if err := out.check(); err != nil {
		return Acceptance{}, err
	}
	return out, nil
}

func (a Acceptance) check() error {
	prob := func(name string, v float64) error {
		if v < 0 || v > 1 {
			return fmt.Errorf("%s: %s is a probability and must be in [0,1], got %g", a.kind, name, v)
		}
		return nil
	}
	names := acceptances[a.kind].args
	switch a.kind {
	case IID:
		return prob(names[0], a.p[0])
	case PositionDecay:
		if err := prob(names[0], a.p[0]); err != nil {
			return err
		}
		return prob(names[1], a.p[1])
	case Beta:
		if !(a.p[0] >= 1e-3 && a.p[1] >= 1e-3 && a.p[0] <= 1e6 && a.p[1] <= 1e6) {
			return fmt.Errorf("beta: A and B must be in [0.001, 1e6], got %g,%g", a.p[0], a.p[1])
		}
	case Regime:
		if err := prob("AIN", a.p[0]); err != nil {
			return err
		}
		if err := prob("AOUT", a.p[1]); err != nil {
			return err
		}
		if !(a.p[2] >= 1 && a.p[3] >= 1 && a.p[2] <= 1e9 && a.p[3] <= 1e9) {
			return fmt.Errorf("regime: MEANIN and MEANOUT are mean phase lengths in tokens and must be in [1, 1e9], got %g,%g", a.p[2], a.p[3])
		}
	case OODShare:
		for i, n := range names {
			if err := prob(n, a.p[i]); err != nil {
				return err
			}
		}
	case OODRegion:
		for i, n := range names {
			if err := prob(n, a.p[i]); err != nil {
				return err
			}
		}
		if a.p[2] > a.p[3] {
			return fmt.Errorf("ood-region: FROM %g is after TO %g", a.p[2], a.p[3])
		}
	}
	return nil
}

// Kind is the model's name; "" for the zero value.
func (a Acceptance) Kind() string { return a.kind }

// IsZero reports whether no model is set.
func (a Acceptance) IsZero() bool { return a.kind == "" }

// String is the canonical spec; it parses back to the same value.
func (a Acceptance) String() string {
	if a.kind == "" {
		return ""
	}
	n := len(acceptances[a.kind].args)
	parts := make([]string, n)
	for i := range n {
		parts[i] = strconv.FormatFloat(a.p[i], 'g', -1, 64)
	}
	return a.kind + ":" + strings.Join(parts, ",")
}

// MarshalText makes an Acceptance a YAML and JSON scalar.
func (a Acceptance) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText parses a spec; an empty text is the zero value.
func (a *Acceptance) UnmarshalText(b []byte) error {
	if strings.TrimSpace(string(b)) == "" {
		*a = Acceptance{}
		return nil
	}
	v, err := ParseAcceptance(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// MeanAlpha is the model's long-run per-token acceptance probability, for
// documentation and tests (for regime, weighted by the phases' mean
// lengths; for ood-region, by the region's share).
func (a Acceptance) MeanAlpha() float64 {
	switch a.kind {
	case IID, PositionDecay:
		return a.p[0]
	case Beta:
		return a.p[0] / (a.p[0] + a.p[1])
	case Regime:
		return (a.p[0]*a.p[2] + a.p[1]*a.p[3]) / (a.p[2] + a.p[3])
	case OODShare:
		return a.p[0]*(1-a.p[2]) + a.p[1]*a.p[2]
	case OODRegion:
		w := a.p[3] - a.p[2]
		return a.p[0]*(1-w) + a.p[1]*w
	}
	return 0
}

// ExpectedTokens is (1 − α^(k+1))/(1 − α): the mean tokens a verify step of
// k drafts yields (accepted drafts plus the bonus token) when each draft is
// accepted independently with probability α.
func ExpectedTokens(alpha float64, k int) float64 {
	if alpha >= 1 {
		return float64(k + 1)
	}
	return (1 - math.Pow(alpha, float64(k+1))) / (1 - alpha)
}
