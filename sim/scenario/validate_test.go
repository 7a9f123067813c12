package scenario_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
	"github.com/itlsim/itlsim/workloads"
)

// TestSetNumbers: numbers are decimal as a person reads them; '_' groups
// digits in every numeric field alike, and a form the YAML library would
// read as another number (a leading 0 is octal to it) is refused, never
// taken at that other value.
func TestSetNumbers(t *testing.T) {
	good := []struct {
		path, value string
		get         func(c *sim.Config) any
		want        any
	}{
		{"seed", "1_000", func(c *sim.Config) any { return c.Seed }, uint64(1000)},
		{"tp", "1_0", func(c *sim.Config) any { return c.TP }, 10},
		{"workload.rate", "1_000", func(c *sim.Config) any { return c.Workload.Rate }, 1000.0},
		{"workload.rate", "1_000.5", func(c *sim.Config) any { return c.Workload.Rate }, 1000.5},
		{"workload.rate", "0.5", func(c *sim.Config) any { return c.Workload.Rate }, 0.5},
		{"workload.rate", "0", func(c *sim.Config) any { return c.Workload.Rate }, 0.0},
		{"seed", "0", func(c *sim.Config) any { return c.Seed }, uint64(0)},
	}
	for _, tt := range good {
		c := sim.DefaultConfig()
		if err := scenario.Set(&c, tt.path, tt.value); err != nil {
			t.Errorf("Set(%s, %q): %v", tt.path, tt.value, err)
			continue
		}
		if got := tt.get(&c); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Set(%s, %q) gave %v, want %v", tt.path, tt.value, got, tt.want)
		}
	}
	bad := []struct{ path, value, want string }{
		{"seed", "010", "leading 0"},
		{"tp", "-01", "leading 0"},
		{"workload.rate", "010", "leading 0"},
		{"seed", "1__0", "non-negative integer"},
		{"seed", "_1", "non-negative integer"},
		{"seed", "0x10", "non-negative integer"},
		{"workload.rate", "0x1p4", "finite number"},
		{"workload.rate", "1_", "finite number"},
	}
	for _, tt := range bad {
		c := sim.DefaultConfig()
		before := c
		err := scenario.Set(&c, tt.path, tt.value)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), tt.path+": ") {
			t.Errorf("Set(%s, %q): error %v, want one starting %q and containing %q", tt.path, tt.value, err, tt.path+": ", tt.want)
		}
		if !reflect.DeepEqual(c, before) {
			t.Errorf("Set(%s, %q) changed the configuration despite its error", tt.path, tt.value)
		}
	}
}

// TestSetList: a list field takes YAML flow syntax, strictly, and replaces
// the list; the result equals the file's.
func TestSetList(t *testing.T) {
	c := sim.DefaultConfig()
	if err := scenario.Set(&c, "workload.classes", "[{preset: chat, share: 0.7}, {preset: rag, share: 0.3, priority: 2}]"); err != nil {
		t.Fatal(err)
	}
	f, err := scenario.Parse("s.yaml", []byte("workload:\n  classes:\n    - {preset: chat, share: 0.7}\n    - {preset: rag, share: 0.3, priority: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Workload.Classes, f.Workload.Classes) {
		t.Errorf("--set gave %+v, the file %+v", c.Workload.Classes, f.Workload.Classes)
	}
	if err := scenario.Set(&c, "workload.classes", "[]"); err != nil || len(c.Workload.Classes) != 0 {
		t.Errorf("[] gave %v, %+v; want no classes", err, c.Workload.Classes)
	}
	for _, tt := range []struct{ value, want string }{
		{"[{nme: chat, share: 1}]", `unknown field "nme"`},
		{"[{preset: chat, share: x}]", `expected a number, got the string "x"`},
		{"chat", "expected a YAML list"},
		{"{preset: chat}", "expected a YAML list"},
		{"~", "expected a value"},
		{"", "expected a value"},
		{"[a", "workload.classes: "},
	} {
		c := sim.DefaultConfig()
		err := scenario.Set(&c, "workload.classes", tt.value)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Set(workload.classes, %q): error %v, want %q", tt.value, err, tt.want)
			continue
		}
		for _, leak := range []string{"workloads.Class", "!!", "yaml:", "line "} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("Set(workload.classes, %q): error %q leaks %q", tt.value, err, leak)
			}
		}
	}
	_ = workloads.Class{}
}

// TestParseTypeErrors: a mistyped value names the file, its line and the
// field path in plain words, never a Go type.
func TestParseTypeErrors(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		want       []string
	}{
		{"quoted number", "delivery:\n  network:\n    profile: broadband\n    loss: \"0.1\"\n",
			[]string{"s.yaml:4: delivery.network.loss: expected a number, got the string \"0.1\""}},
		{"quoted integer", "seed: '7'\n", []string{"s.yaml:1: seed: expected a non-negative integer", `"7"`}},
		{"quoted boolean", "delivery:\n  failover:\n    keep_primary: \"true\"\n", []string{"s.yaml:3: delivery.failover.keep_primary: expected true or false"}},
		{"list for a number", "seed: [1]\n", []string{"s.yaml:1: seed: expected a non-negative integer, got a list"}},
		{"mapping for a number", "workload:\n  rate: {a: 1}\n", []string{"s.yaml:2: workload.rate: expected a number, got a mapping"}},
		{"inside a list", "workload:\n  classes:\n    - {preset: chat, share: x}\n", []string{"s.yaml:3: workload.classes[0].share: expected a number"}},
		{"leading zero", "seed: 010\n", []string{"s.yaml:1: seed:", "leading 0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scenario.Parse("s.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, leak := range []string{"float64", "uint64", "unmarshal", "!!", "workloads."} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q leaks %q", err, leak)
				}
			}
		})
	}
	// Underscores group digits in integer and float fields alike.
	f, err := scenario.Parse("s.yaml", []byte("seed: 1_000\nworkload:\n  rate: 1_000\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Seed != 1000 || f.Workload.Rate != 1000 {
		t.Errorf("got seed %d rate %g, want 1000 and 1000", f.Seed, f.Workload.Rate)
	}
}

// TestParseNotAScenario: a trace or a measured result given as a scenario
// says what it is not and what to do, in one line, whatever its size.
func TestParseNotAScenario(t *testing.T) {
	csv := "TIMESTAMP,ContextTokens,GeneratedTokens\n" + strings.Repeat("2023-11-16 18:15:46.6805900,374,44\n", 10000)
	for _, tt := range []struct {
		name, data string
		want       []string
	}{
		{"csv trace", csv, []string{"trace.csv:1: not a scenario file", "--workload FILE", `"TIMESTAMP,ContextTokens`}},
		{"json result", `{"date": "x", "backend": "vllm", "ttfts": [0.1], "itls": [[]], "metrics": 1}`, []string{"trace.csv: not a scenario file", "date, backend, ttfts, itls", "itlsim analyze"}},
		{"list", "[1, 2]\n", []string{"trace.csv:1: not a scenario file", "got a list"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scenario.Parse("trace.csv", []byte(tt.data))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if len(err.Error()) > 400 || strings.Contains(err.Error(), "\n") {
				t.Errorf("error is %d bytes or several lines: %q", len(err.Error()), err)
			}
		})
	}
	// A .yaml file with a misspelled key still gets the key and its line.
	_, err := scenario.Parse("s.yaml", []byte("sed: 1\n"))
	if err == nil || !strings.Contains(err.Error(), `s.yaml:1: unknown field "sed"`) {
		t.Errorf("misspelled key: %v", err)
	}
	// A scenario written as JSON parses as one.
	if f, err := scenario.Parse("s.json", []byte(`{"seed": 3, "tp": 1}`)); err != nil || f.Seed != 3 {
		t.Errorf("JSON scenario: %v, seed %d", err, f.Seed)
	}
}

// TestCheckComparisons: a field compared twice and too many runs are
// refused, naming both comparisons, before any run is expanded.
func TestCheckComparisons(t *testing.T) {
	cmp := func(origin, s string) scenario.Comparison {
		c, err := scenario.ParseComparison(s)
		if err != nil {
			t.Fatal(err)
		}
		c.Origin = origin
		return c
	}
	_, err := scenario.Expand(sim.DefaultConfig(), []scenario.Comparison{cmp("--vary seed=1,2", "seed=1,2"), cmp("--vary seed=3,4", "seed=3,4")})
	if err == nil || !strings.Contains(err.Error(), "--vary seed=3,4: seed is already compared (by --vary seed=1,2)") {
		t.Errorf("seed compared twice: %v", err)
	}
	// Without an origin the comparison is named by its path and values.
	_, err = scenario.Expand(sim.DefaultConfig(), []scenario.Comparison{cmp("", "tp=1,2"), cmp("", "tp=4")})
	if err == nil || !strings.Contains(err.Error(), "tp=4: tp is already compared (by tp=1,2)") {
		t.Errorf("tp compared twice: %v", err)
	}
	ten := "=1,2,3,4,5,6,7,8,9,10"
	var cmps []scenario.Comparison
	for _, p := range []string{"seed", "workload.rate", "workload.requests", "scheduler.max_num_seqs", "kvcache.num_gpu_blocks"} {
		cmps = append(cmps, cmp("", p+ten))
	}
	err = scenario.CheckComparisons(cmps)
	if err == nil || !strings.Contains(err.Error(), "make 100000 runs (10 × 10 × 10 × 10 × 10); the limit is 1000") {
		t.Errorf("100000 runs: %v", err)
	}
	if err := scenario.CheckComparisons(cmps[:3]); err != nil {
		t.Errorf("1000 runs refused: %v", err)
	}
	// A product too large for an integer is still reported, not wrapped.
	many := make([]scenario.Comparison, 400)
	for i := range many {
		many[i] = scenario.Comparison{Path: "p" + strings.Repeat("x", i), Values: strings.Split("1,2,3,4,5,6,7,8,9,10", ",")}
	}
	if err := scenario.CheckComparisons(many); err == nil || !strings.Contains(err.Error(), "+Inf runs") && !strings.Contains(err.Error(), "e+") {
		t.Errorf("10^400 runs: %v", err)
	}
}

func TestQuoteShort(t *testing.T) {
	if got := scenario.QuoteShort("abc", 5); got != `"abc"` {
		t.Errorf("short: %s", got)
	}
	if got := scenario.QuoteShort("abcdefgh", 5); got != `"abcde"…` {
		t.Errorf("long: %s", got)
	}
	if got := scenario.QuoteShort("\x00\xffé\n", 10); got != `"\x00\xffé\n"` {
		t.Errorf("binary: %s", got)
	}
}
