package workloads

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/workloads/seed"
	"go.yaml.in/yaml/v3"
)

func TestParseDist(t *testing.T) {
	tests := []struct {
		spec    string
		want    string // canonical String, when valid
		wantErr string // substring of the error, when invalid
	}{
		{spec: "fixed:128", want: "fixed:128"},
		{spec: " fixed : 128 ", want: "fixed:128"},
		{spec: "fixed:+7", want: "fixed:7"},
		{spec: "uniform:1,1", want: "uniform:1,1"},
		{spec: "uniform:16, 4096", want: "uniform:16,4096"},
		{spec: "normal:512,256,16,4096", want: "normal:512,256,16,4096"},
		{spec: "normal:512.5,0,1,2147483647", want: "normal:512.5,0,1,2147483647"},
		{spec: "normal:1e3,-0,1,2000", want: "normal:1000,0,1,2000"},
		{spec: "lognormal:1024,1024", want: "lognormal:1024,1024"},
		{spec: "lognormal:1024,1024,1,2147483647", want: "lognormal:1024,1024"},
		{spec: "lognormal:1024,1024,16,3072", want: "lognormal:1024,1024,16,3072"},

		{spec: "", wantErr: `expected KIND:PARAMS such as "fixed:128" (kinds: empirical, fixed, lognormal, normal, pareto, table, uniform), got ""`},
		{spec: "512", wantErr: `expected KIND:PARAMS such as "fixed:128"`},
		{spec: "gamma:1,2", wantErr: `unknown distribution kind "gamma" in "gamma:1,2"; valid kinds: empirical, fixed, lognormal, normal, pareto, table, uniform`},
		{spec: "Fixed:1", wantErr: `unknown distribution kind "Fixed"`},
		{spec: "normal:1,2", wantErr: `normal: expected MEAN,SD,MIN,MAX, got "1,2"`},
		{spec: "lognormal:1,2,3", wantErr: `lognormal: expected MEAN,SD[,MIN,MAX], got "1,2,3"`},
		{spec: "uniform:5", wantErr: `uniform: expected MIN,MAX, got "5"`},
		{spec: "fixed:", wantErr: `fixed: N must be an integer in [1, 2147483647], got ""`},
		{spec: "fixed:1,2", wantErr: `fixed: expected N, got "1,2"`},
		{spec: "fixed:0", wantErr: `fixed: N must be an integer in [1, 2147483647], got "0"`},
		{spec: "fixed:-3", wantErr: `fixed: N must be an integer in [1, 2147483647], got "-3"`},
		{spec: "fixed:2.5", wantErr: `got "2.5"`},
		{spec: "fixed:2147483648", wantErr: `got "2147483648"`},
		{spec: "uniform:10,5", wantErr: `uniform: MIN must be ≤ MAX, got MIN=10, MAX=5`},
		{spec: "uniform:-1,5", wantErr: `uniform: MIN must be an integer in [1, 2147483647], got "-1"`},
		{spec: "normal:512,-1,16,4096", wantErr: `normal: SD must be a number in [0, 2147483647], got "-1"`},
		{spec: "normal:0,1,16,4096", wantErr: `normal: MEAN must be a number in [1, 2147483647], got "0"`},
		{spec: "normal:NaN,1,16,4096", wantErr: `MEAN must be a number`},
		{spec: "normal:512,Inf,16,4096", wantErr: `SD must be a number`},
		{spec: "normal:512,256,4096,16", wantErr: `normal: MIN must be ≤ MAX, got MIN=4096, MAX=16`},
		{spec: "lognormal:-5,1", wantErr: `lognormal: MEAN must be a number in [1, 2147483647], got "-5"`},
		{spec: "lognormal:100,10,0,50", wantErr: `lognormal: MIN must be an integer`},
	}
	for _, tt := range tests {
		d, err := ParseDist(tt.spec)
		if tt.wantErr != "" {
			if err == nil {
				t.Errorf("ParseDist(%q) = %v, want error containing %q", tt.spec, d, tt.wantErr)
			} else if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseDist(%q) error = %q, want it to contain %q", tt.spec, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseDist(%q) error = %v", tt.spec, err)
			continue
		}
		if got := d.String(); got != tt.want {
			t.Errorf("ParseDist(%q).String() = %q, want %q", tt.spec, got, tt.want)
		}
		if d.IsZero() {
			t.Errorf("ParseDist(%q).IsZero() = true", tt.spec)
		}
	}
}

func TestDistMaxMin(t *testing.T) {
	tests := []struct {
		spec     string
		min, max int
	}{
		{"fixed:7", 7, 7},
		{"uniform:3,9", 3, 9},
		{"normal:100,10,50,150", 50, 150},
		{"lognormal:100,10", 1, MaxLength},
		{"lognormal:100,10,20,300", 20, 300},
	}
	for _, tt := range tests {
		d := MustParseDist(tt.spec)
		if d.Min() != tt.min || d.Max() != tt.max {
			t.Errorf("%s: Min, Max = %d, %d, want %d, %d", tt.spec, d.Min(), d.Max(), tt.min, tt.max)
		}
	}
}

// TestDistSampleMean checks that sample means agree with the analytic Mean
// to within four standard errors plus the half token Mean may be off by
// rounding, and that every sample lies in [Min, Max].
func TestDistSampleMean(t *testing.T) {
	specs := []string{
		"fixed:300",
		"uniform:1,1",
		"uniform:16,4096",
		"normal:512,256,16,4096",
		"normal:512,0,16,4096",
		"normal:100,200,16,300", // heavily clipped on both sides
		"normal:3,1,1,10",       // rounding matters
		"lognormal:1024,1024",
		"lognormal:1024,1024,16,3072",
		"lognormal:256,256,16,1024",
		"lognormal:2,3", // mass piles up at the clamp to 1
		"lognormal:50,0",
	}
	const n = 200_000
	for _, spec := range specs {
		d := MustParseDist(spec)
		r := seed.Stream(1, "test", 2)
		var sum, sumSq float64
		for range n {
			v := d.Sample(&r)
			if v < d.Min() || v > d.Max() {
				t.Fatalf("%s: sample %d outside [%d, %d]", spec, v, d.Min(), d.Max())
			}
			x := float64(v)
			sum += x
			sumSq += x * x
		}
		mean := sum / n
		sd := math.Sqrt(max(0, sumSq/n-mean*mean))
		tol := 4*sd/math.Sqrt(n) + 0.5
		if got, want := mean, d.Mean(); math.Abs(got-want) > tol {
			t.Errorf("%s: sample mean %.2f, want Mean() %.2f ± %.2f", spec, got, want, tol)
		}
	}
}

func TestDistZero(t *testing.T) {
	var d Dist
	if !d.IsZero() || d.String() != "" {
		t.Errorf("zero Dist: IsZero %v, String %q; want true, \"\"", d.IsZero(), d.String())
	}
	if err := d.UnmarshalText([]byte("  ")); err != nil || !d.IsZero() {
		t.Errorf("UnmarshalText(blank) = %v, %v; want the zero Dist, nil", d, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Sample on the zero Dist did not panic")
		}
	}()
	r := seed.Stream(1, "test", 2)
	d.Sample(&r)
}

func TestDistYAMLAndJSON(t *testing.T) {
	type doc struct {
		In  Dist `yaml:"in" json:"in"`
		Out Dist `yaml:"out,omitempty" json:"out,omitzero"`
	}
	var got doc
	if err := yaml.Unmarshal([]byte("in: normal:512,256,16,4096\n"), &got); err != nil {
		t.Fatalf("yaml.Unmarshal: %v", err)
	}
	if got.In.String() != "normal:512,256,16,4096" || !got.Out.IsZero() {
		t.Errorf("yaml.Unmarshal = %+v", got)
	}
	b, err := yaml.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "in: normal:512,256,16,4096\n" {
		t.Errorf("yaml.Marshal = %q, want %q", b, "in: normal:512,256,16,4096\n")
	}
	if err := yaml.Unmarshal([]byte("in: normal:1,2\n"), &got); err == nil ||
		!strings.Contains(err.Error(), `normal: expected MEAN,SD,MIN,MAX, got "1,2"`) {
		t.Errorf("yaml.Unmarshal(bad spec) error = %v", err)
	}

	j, err := json.Marshal(doc{In: MustParseDist("fixed:5")})
	if err != nil {
		t.Fatal(err)
	}
	if string(j) != `{"in":"fixed:5"}` {
		t.Errorf("json.Marshal = %s, want %s", j, `{"in":"fixed:5"}`)
	}
	var back doc
	if err := json.Unmarshal(j, &back); err != nil || back.In != MustParseDist("fixed:5") {
		t.Errorf("json.Unmarshal(%s) = %+v, %v", j, back, err)
	}
}

func FuzzParseDist(f *testing.F) {
	for _, seed := range []string{
		"fixed:1", "uniform:16,4096", "normal:512,256,16,4096", "lognormal:1024,1024",
		"lognormal:1024,1024,16,3072", "normal:1e3,-0,1,2000", "lognormal:1,2147483647",
		"normal:2147483647,2147483647,1,2147483647", "", ":", "fixed:", "gamma:1", "uniform:5,1",
		"pareto:16,1.5", "pareto:16,0.5,4096", "pareto:1,1,1", "table:128=0.5,512=0.3,2048=0.2", "table:5=0,6=1",
		"table:1=1e300,2=1e300", "empirical:a.csv:x", "empirical:c:\\x:y:col", "empirical::x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		d, err := ParseDist(spec)
		if err != nil {
			return
		}
		again, err := ParseDist(d.String())
		if err != nil {
			t.Fatalf("ParseDist(%q).String() = %q does not parse: %v", spec, d.String(), err)
		}
		if again != d {
			t.Fatalf("round trip of %q via %q gave %#v, want %#v", spec, d.String(), again, d)
		}
		if d, err = d.Load(); err != nil {
			return // an empirical FILE that does not exist
		}
		lo, hi := d.Min(), d.Max()
		if lo < 1 || lo > hi || hi > MaxLength {
			t.Fatalf("%q: Min, Max = %d, %d", spec, lo, hi)
		}
		if m := d.Mean(); !(m >= float64(lo)-1e-6*float64(lo)) || !(m <= float64(hi)*(1+1e-9)) {
			t.Fatalf("%q: Mean() = %v outside [%d, %d]", spec, m, lo, hi)
		}
		r := seed.Stream(3, "test", 4)
		for range 16 {
			if v := d.Sample(&r); v < lo || v > hi {
				t.Fatalf("%q: Sample() = %d outside [%d, %d]", spec, v, lo, hi)
			}
		}
	})
}
