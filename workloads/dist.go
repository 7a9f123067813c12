package workloads

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/workloads/seed"
)

// MaxLength is the largest token count a Dist can return or a spec can name.
// An unclipped lognormal reports it as its Max: it has no finite bound.
const MaxLength = math.MaxInt32

// Names of the length distributions, the KIND in a "KIND:PARAMS" spec.
const (
	DistFixed     = "fixed"
	DistUniform   = "uniform"
	DistNormal    = "normal"
	DistLognormal = "lognormal"
	DistPareto    = "pareto"
	DistTable     = "table"
	DistEmpirical = "empirical"
)

// distKind is the family of a Dist; the zero value marks the zero Dist.
type distKind uint8

const (
	kindNone distKind = iota
	kindFixed
	kindUniform
	kindNormal
	kindLognormal
	kindPareto
	kindTable
	kindEmpirical
)

// distSpec says how one kind is written and parsed.
type distSpec struct {
	kind   distKind
	params string // the PARAMS part as the error messages spell it
	parse  func(d *Dist, args []string) error
}

// distKinds is the registry of length distributions; DistKinds and the
// unknown-kind error are derived from it.
func distKinds() map[string]distSpec {
	return map[string]distSpec{
		DistFixed:     {kindFixed, "N", parseFixed},
		DistUniform:   {kindUniform, "MIN,MAX", parseUniform},
		DistNormal:    {kindNormal, "MEAN,SD,MIN,MAX", parseNormal},
		DistLognormal: {kindLognormal, "MEAN,SD[,MIN,MAX]", parseLognormal},
		DistPareto:    {kindPareto, "MIN,ALPHA[,MAX]", parsePareto},
		DistTable:     {kindTable, "LEN=WEIGHT,LEN=WEIGHT,...", parseTable},
		DistEmpirical: {kindEmpirical, "FILE:COLUMN", nil}, // parsed whole: FILE may hold commas
	}
}

// DistKinds returns the valid distribution kinds, sorted.
func DistKinds() []string {
	names := make([]string, 0, 7)
	for name := range distKinds() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Dist is a distribution of token counts (prompt or output lengths), parsed
// from a spec string by ParseDist. Every value Sample returns is an integer
// in [1, Max()]. The zero Dist means "not set": IsZero reports it, it
// marshals to the empty string, and Sample panics on it.
//
// Dist is a comparable value: two Dists parsed from specs with the same
// canonical String are ==. A table or empirical Dist samples from a table
// that Load builds (reading the file, for empirical) and that loaded Dists
// share by pointer; ParseDist leaves it unbuilt, so parsing stays free of
// I/O and == keeps its meaning.
type Dist struct {
	kind distKind
	// mean and sd are the MEAN and SD of normal and lognormal, in tokens;
	// mean is also the exact mean of a table (and of a loaded empirical).
	mean, sd float64
	// lo and hi bound every sample: N,N for fixed, MIN,MAX otherwise;
	// 1,MaxLength for an unclipped lognormal, a Pareto without MAX and an
	// empirical Dist before Load; the smallest and largest length of a
	// table.
	lo, hi int
	// mu and sigma are the parameters of the underlying normal of a
	// lognormal, derived from mean and sd by ParseDist.
	mu, sigma float64
	// alpha is a Pareto's tail index.
	alpha float64
	// spec holds the canonical PARAMS of a table and an empirical Dist.
	spec string
	// tab is the sampling table of a loaded table or empirical Dist.
	tab *lengthTable
}

// lengthTable is an immutable table of lengths to sample from: with cum
// set, values[i] has probability cum[i] − cum[i−1]; without, every value
// (one per file row) is equally likely.
type lengthTable struct {
	values []int32
	cum    []float64
}

// ParseDist parses a length distribution spec:
//
//	fixed:N                  always N
//	uniform:MIN,MAX          an integer uniformly in [MIN, MAX]
//	normal:MEAN,SD,MIN,MAX   a normal rounded to an integer and clipped to [MIN, MAX]
//	lognormal:MEAN,SD        a lognormal whose lengths (not their logs) have
//	                         mean MEAN and standard deviation SD, rounded and
//	                         clamped to at least 1
//	lognormal:MEAN,SD,MIN,MAX  the same, clipped to [MIN, MAX]
//	pareto:MIN,ALPHA         a Pareto (type I) of scale MIN and tail index
//	                         ALPHA: P(X > x) = (MIN/x)^ALPHA for x ≥ MIN,
//	                         rounded (heavy-tailed: its mean is infinite for
//	                         ALPHA ≤ 1, so give a MAX)
//	pareto:MIN,ALPHA,MAX     the same, clipped to MAX
//	table:LEN=W,LEN=W,...    LEN with probability W/ΣW (a probability table;
//	                         the weights need not sum to 1)
//	empirical:FILE:COLUMN    a value drawn uniformly from COLUMN of FILE (a CSV
//	                         with a header, or JSON lines with COLUMN a key),
//	                         read when the workload starts (see Load)
//
// N, MIN and MAX are integers in [1, MaxLength] with MIN ≤ MAX; MEAN is a
// number in [1, MaxLength] and SD a number in [0, MaxLength]; ALPHA a
// number in (0, 100]; LEN an integer in [1, MaxLength] and W a number ≥ 0,
// some W > 0. Clipping moves the samples outside [MIN, MAX] onto the bound
// (it does not redraw them).
func ParseDist(spec string) (Dist, error) {
	kindName, params, ok := strings.Cut(spec, ":")
	kindName = strings.TrimSpace(kindName)
	if !ok {
		return Dist{}, fmt.Errorf("expected KIND:PARAMS such as \"fixed:128\" (kinds: %s), got %q",
			strings.Join(DistKinds(), ", "), spec)
	}
	ds, ok := distKinds()[kindName]
	if !ok {
		return Dist{}, fmt.Errorf("unknown distribution kind %q in %q; valid kinds: %s",
			kindName, spec, strings.Join(DistKinds(), ", "))
	}
	if ds.kind == kindEmpirical {
		d, err := parseEmpirical(params)
		if err != nil {
			return Dist{}, fmt.Errorf("%s: %w", kindName, err)
		}
		return d, nil
	}
	args := strings.Split(params, ",")
	for i := range args {
		args[i] = strings.TrimSpace(args[i])
	}
	d := Dist{kind: ds.kind}
	if err := ds.parse(&d, args); err != nil {
		var arity *arityError
		if errors.As(err, &arity) {
			return Dist{}, fmt.Errorf("%s: expected %s, got %q", kindName, ds.params, params)
		}
		return Dist{}, fmt.Errorf("%s: %w", kindName, err)
	}
	return d, nil
}

// arityError reports a wrong number of parameters; ParseDist turns it into
// a message that shows the expected form.
type arityError struct{}

func (*arityError) Error() string { return "wrong number of parameters" }

func parseFixed(d *Dist, args []string) error {
	if len(args) != 1 {
		return &arityError{}
	}
	n, err := parseLength("N", args[0])
	if err != nil {
		return err
	}
	d.lo, d.hi = n, n
	return nil
}

func parseUniform(d *Dist, args []string) error {
	if len(args) != 2 {
		return &arityError{}
	}
	return parseBounds(d, args[0], args[1])
}

func parseNormal(d *Dist, args []string) error {
	if len(args) != 4 {
		return &arityError{}
	}
	if err := parseMoments(d, args[0], args[1]); err != nil {
		return err
	}
	return parseBounds(d, args[2], args[3])
}

func parseLognormal(d *Dist, args []string) error {
	if len(args) != 2 && len(args) != 4 {
		return &arityError{}
	}
	if err := parseMoments(d, args[0], args[1]); err != nil {
		return err
	}
	d.lo, d.hi = 1, MaxLength
	if len(args) == 4 {
		if err := parseBounds(d, args[2], args[3]); err != nil {
			return err
		}
	}
	// A lognormal with mean m and variance s² has log-variance
	// σ² = ln(1 + s²/m²) and log-mean μ = ln m − σ²/2. MEAN ≥ 1 and
	// SD ≤ MaxLength keep both finite (σ < 6.6).
	s2 := math.Log1p((d.sd / d.mean) * (d.sd / d.mean))
	d.sigma = math.Sqrt(s2)
	d.mu = math.Log(d.mean) - s2/2
	return nil
}

// parseMoments reads MEAN and SD into d.
func parseMoments(d *Dist, meanArg, sdArg string) error {
	mean, err := parseNumber("MEAN", meanArg, 1)
	if err != nil {
		return err
	}
	sd, err := parseNumber("SD", sdArg, 0)
	if err != nil {
		return err
	}
	d.mean, d.sd = mean, sd
	return nil
}

// parseBounds reads MIN and MAX into d.
func parseBounds(d *Dist, minArg, maxArg string) error {
	lo, err := parseLength("MIN", minArg)
	if err != nil {
		return err
	}
	hi, err := parseLength("MAX", maxArg)
	if err != nil {
		return err
	}
	if lo > hi {
		return fmt.Errorf("MIN must be ≤ MAX, got MIN=%d, MAX=%d", lo, hi)
	}
	d.lo, d.hi = lo, hi
	return nil
}

// parseLength reads an integer token count in [1, MaxLength].
func parseLength(name, s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > MaxLength {
		return 0, fmt.Errorf("%s must be an integer in [1, %d], got %q", name, MaxLength, s)
	}
	return int(n), nil
}

// parseNumber reads a finite number in [min, MaxLength].
func parseNumber(name, s string, min float64) (float64, error) {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || x < min || x > MaxLength {
		return 0, fmt.Errorf("%s must be a number in [%g, %d], got %q", name, min, MaxLength, s)
	}
	return x + 0, nil // + 0 turns -0 into 0 so equal specs give == Dists
}

// Sample draws one length from r. It never returns less than 1 or more than
// Max(). Each call consumes a fixed number of draws from r for a given kind
// (none for fixed, one otherwise; NormFloat64 may itself loop internally).
func (d Dist) Sample(r *seed.Rand) int {
	switch d.kind {
	case kindFixed:
		return d.lo
	case kindUniform:
		return d.lo + r.IntN(d.hi-d.lo+1)
	case kindNormal:
		return d.clip(d.mean + d.sd*r.NormFloat64())
	case kindLognormal:
		return d.clip(math.Exp(d.mu + d.sigma*r.NormFloat64()))
	case kindPareto:
		// MIN·U^(−1/ALPHA) for U uniform in (0,1] is MIN·e^(E/ALPHA), E exponential.
		return d.clip(float64(d.lo) * math.Exp(r.ExpFloat64()/d.alpha))
	case kindTable, kindEmpirical:
		if d.tab == nil {
			panic("workloads: Sample on a " + d.String() + " Dist that was not loaded (use Load)")
		}
		return d.tab.sample(r)
	}
	panic("workloads: Sample on the zero Dist (use ParseDist)")
}

// clip rounds x to the nearest integer and clamps it to [lo, hi]. Clamping
// in float64 first keeps the conversion in range whatever x is (±Inf too).
func (d Dist) clip(x float64) int {
	x = math.Round(x)
	if !(x >= float64(d.lo)) { // also catches NaN, which cannot occur
		return d.lo
	}
	if x > float64(d.hi) {
		return d.hi
	}
	return int(x)
}

// Max returns the largest value Sample can return: N for fixed, MAX
// otherwise, the largest LEN of a table, and MaxLength for an unclipped
// lognormal or Pareto, which have no bound (callers checking lengths
// against a model's context should reject it, or ask for the clipped form
// lognormal:MEAN,SD,MIN,MAX), and for an empirical Dist before Load.
func (d Dist) Max() int { return d.hi }

// Min returns the smallest value Sample can return: N for fixed, MIN
// otherwise, 1 for an unclipped lognormal.
func (d Dist) Min() int { return d.lo }

// Mean returns the mean of the values Sample returns. It is exact for fixed,
// uniform, table and a loaded empirical Dist (NaN before Load). For normal,
// lognormal and Pareto it is the exact mean of the clipped continuous
// distribution, so it ignores the rounding to integers, which moves it by
// less than half a token (and by far less when SD is large).
func (d Dist) Mean() float64 {
	switch d.kind {
	case kindFixed:
		return float64(d.lo)
	case kindUniform:
		return (float64(d.lo) + float64(d.hi)) / 2
	case kindNormal:
		if d.sd == 0 {
			return float64(d.clip(d.mean))
		}
		a, b := float64(d.lo), float64(d.hi)
		za, zb := (a-d.mean)/d.sd, (b-d.mean)/d.sd
		// E[clip(X,a,b)] = a·P(X<a) + b·P(X>b) + E[X; a≤X≤b].
		return a*stdNormalCDF(za) + b*stdNormalCDF(-zb) +
			d.mean*(stdNormalCDF(zb)-stdNormalCDF(za)) + d.sd*(stdNormalPDF(za)-stdNormalPDF(zb))
	case kindLognormal:
		if d.sigma == 0 {
			return float64(d.clip(d.mean))
		}
		a, b := float64(d.lo), float64(d.hi)
		za, zb := (math.Log(a)-d.mu)/d.sigma, (math.Log(b)-d.mu)/d.sigma
		// E[X; a≤X≤b] = e^(μ+σ²/2)·(Φ(zb−σ) − Φ(za−σ)) for X = e^(μ+σZ).
		return a*stdNormalCDF(za) + b*stdNormalCDF(-zb) +
			d.mean*(stdNormalCDF(zb-d.sigma)-stdNormalCDF(za-d.sigma))
	case kindPareto:
		// E[min(X,b)] = ∫₀ᵇ P(X>x) dx = m + ∫ₘᵇ (m/x)^α dx.
		m, b, a := float64(d.lo), float64(d.hi), d.alpha
		if math.Abs(a-1) < 1e-12 {
			return m + m*math.Log(b/m)
		}
		return m + m*(math.Pow(m/b, a-1)-1)/(1-a)
	case kindTable:
		return d.mean
	case kindEmpirical:
		if d.tab == nil {
			return math.NaN()
		}
		return d.mean
	}
	return 0
}

func stdNormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func stdNormalPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }

// String returns the canonical spec: ParseDist(d.String()) == d. The zero
// Dist gives "".
func (d Dist) String() string {
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch d.kind {
	case kindFixed:
		return fmt.Sprintf("%s:%d", DistFixed, d.lo)
	case kindUniform:
		return fmt.Sprintf("%s:%d,%d", DistUniform, d.lo, d.hi)
	case kindNormal:
		return fmt.Sprintf("%s:%s,%s,%d,%d", DistNormal, num(d.mean), num(d.sd), d.lo, d.hi)
	case kindLognormal:
		if d.lo == 1 && d.hi == MaxLength {
			return fmt.Sprintf("%s:%s,%s", DistLognormal, num(d.mean), num(d.sd))
		}
		return fmt.Sprintf("%s:%s,%s,%d,%d", DistLognormal, num(d.mean), num(d.sd), d.lo, d.hi)
	case kindPareto:
		if d.hi == MaxLength {
			return fmt.Sprintf("%s:%d,%s", DistPareto, d.lo, num(d.alpha))
		}
		return fmt.Sprintf("%s:%d,%s,%d", DistPareto, d.lo, num(d.alpha), d.hi)
	case kindTable:
		return DistTable + ":" + d.spec
	case kindEmpirical:
		return DistEmpirical + ":" + d.spec
	}
	return ""
}

// IsZero reports whether d is the zero Dist (not set). YAML omitempty
// honours it.
func (d Dist) IsZero() bool { return d.kind == kindNone }

// MarshalText returns the canonical spec, so a Dist is a YAML scalar and a
// JSON string.
func (d Dist) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses a spec with ParseDist. Empty text gives the zero
// Dist, so a zero Dist survives a marshal round trip; Config.Validate
// rejects it where a distribution is required.
func (d *Dist) UnmarshalText(text []byte) error {
	if len(strings.TrimSpace(string(text))) == 0 {
		*d = Dist{}
		return nil
	}
	parsed, err := ParseDist(string(text))
	if err != nil {
		return err
	}
	*d = parsed
	return nil
}

// MustParseDist is ParseDist for specs fixed in the source, such as
// defaults; it panics on a bad spec, which is a programming error there.
func MustParseDist(spec string) Dist {
	d, err := ParseDist(spec)
	if err != nil {
		panic("workloads: MustParseDist: " + err.Error())
	}
	return d
}

// MeanLength is d's mean, or, without d, the shortest mean of the classes'
// lengths (input when in, else output): 1 when none is known.
func MeanLength(d Dist, classes []Class, in bool) float64 {
	m := math.Inf(1)
	if !d.IsZero() {
		m = d.Mean()
	}
	for _, c := range classes {
		cd := c.OutputLen
		if in {
			cd = c.InputLen
		}
		if !cd.IsZero() && cd.Mean() < m {
			m = cd.Mean()
		}
	}
	if !(m >= 1) || math.IsInf(m, 1) {
		return 1
	}
	return m
}
