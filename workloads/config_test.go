package workloads

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	// The chat mix fits a 4,096-token context and has the means its
	// comment claims.
	if got := c.InputLen.Max() + c.OutputLen.Max(); got > 4096 {
		t.Errorf("input max + output max = %d, want ≤ 4096", got)
	}
	for _, tt := range []struct {
		name string
		d    Dist
		want float64
	}{{"input", c.InputLen, 963}, {"output", c.OutputLen, 248}} {
		if got := tt.d.Mean(); math.Abs(got-tt.want) > 1 {
			t.Errorf("%s mean = %.1f, want about %.0f", tt.name, got, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *Config)
		want   string // substring of the error; "" for valid
	}{
		{"default", func(c *Config) {}, ""},
		{"empty arrival means poisson", func(c *Config) { c.Arrival = "" }, ""},
		{"constant", func(c *Config) { c.Arrival = ArrivalConstant }, ""},
		{"duration only", func(c *Config) { c.Requests, c.DurationS = 0, 60 }, ""},
		{"lengths file replaces dists", func(c *Config) {
			c.InputLen, c.OutputLen, c.LengthsFile = Dist{}, Dist{}, "x.csv"
		}, ""},
		{"unknown arrival", func(c *Config) { c.Arrival = "burst" },
			`workload.arrival: unknown arrival process "burst"; valid: closed, constant, gamma, poisson, weibull`},
		{"negative rate", func(c *Config) { c.Rate = -3 },
			"workload.rate: must be > 0 and finite (requests per second), got -3"},
		{"zero rate", func(c *Config) { c.Rate = 0 }, "workload.rate: must be > 0"},
		{"NaN rate", func(c *Config) { c.Rate = math.NaN() }, "workload.rate: must be > 0 and finite (requests per second), got NaN"},
		{"infinite rate", func(c *Config) { c.Rate = math.Inf(1) }, "workload.rate: must be > 0 and finite (requests per second), got +Inf"},
		{"negative requests", func(c *Config) { c.Requests = -1 }, "workload.requests: must be in [0, 1073741824], got -1"},
		{"negative duration", func(c *Config) { c.Requests, c.DurationS = 0, -1 },
			"workload.duration_s: must be a finite number ≥ 0 (seconds), got -1"},
		{"neither bound", func(c *Config) { c.Requests, c.DurationS = 0, 0 },
			"workload.requests: one of requests and duration_s must be > 0, got requests=0 and duration_s=0"},
		{"horizon too long", func(c *Config) { c.Rate, c.Requests = 1e-6, 1000 },
			"workload.requests: 1000 requests at 1e-06/s arrive over 9.99e+08 s, beyond the 1e+08 s limit"},
		{"duration too long", func(c *Config) { c.Requests, c.DurationS = 0, 1e9 }, "workload.duration_s: must be ≤ 1e+08 s, got 1e+09"},
		{"too many requests by duration", func(c *Config) { c.Requests, c.DurationS, c.Rate = 0, 1e6, 1e4 },
			"workload.duration_s: 1e+06 s at 10000/s is about 1e+10 requests, more than 1073741824"},
		{"missing input_len", func(c *Config) { c.InputLen = Dist{} },
			`workload.input_len: required unless lengths_file or trace is set (e.g. "lognormal:1024,1024,16,3072")`},
		{"missing output_len", func(c *Config) { c.OutputLen = Dist{} }, "workload.output_len: required"},
		{"blank lengths file", func(c *Config) { c.LengthsFile = " " }, `workload.lengths_file: must name a file, got " "`},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.modify(&c)
		err := c.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: Validate() = %v, want nil", tt.name, err)
		case tt.want != "" && err == nil:
			t.Errorf("%s: Validate() = nil, want error containing %q", tt.name, tt.want)
		case tt.want != "" && !strings.Contains(err.Error(), tt.want):
			t.Errorf("%s: Validate() = %q, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func TestValidateReportsEveryField(t *testing.T) {
	c := Config{Arrival: "burst", Rate: -1}
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	for _, field := range []string{"arrival", "rate", "requests", "input_len", "output_len"} {
		if !strings.Contains(err.Error(), "workload."+field+":") {
			t.Errorf("Validate() = %q, want a line about workload.%s", err, field)
		}
	}
}

// TestConfigYAML reads a scenario's workload section over the defaults, as
// the engine does.
func TestConfigYAML(t *testing.T) {
	const doc = `
arrival: constant
rate: 4.5
requests: 0
duration_s: 120
input_len: uniform:100,200
output_len: fixed:64
`
	c := DefaultConfig()
	if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
		t.Fatalf("yaml.Unmarshal: %v", err)
	}
	want := Config{
		Arrival: ArrivalConstant, Rate: 4.5, DurationS: 120,
		InputLen: MustParseDist("uniform:100,200"), OutputLen: MustParseDist("fixed:64"),
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v, want %+v", c, want)
	}
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Config
	if err := yaml.Unmarshal(out, &back); err != nil || !reflect.DeepEqual(back, c) {
		t.Errorf("round trip through\n%s gave %+v, %v", out, back, err)
	}
}

// TestTraceConfigYAML reads the trace and transformation fields, the
// window in both its forms, and writes them back.
func TestTraceConfigYAML(t *testing.T) {
	for _, doc := range []string{
		"trace: t.jsonl\nformat: mooncake\ntime_scale: 2\nwindow_s: [600, .inf]\nsample: 0.5\ncap_tokens: 4096\ncap_to_context: true\n",
		"trace: t.jsonl\nformat: mooncake\ntime_scale: 2\nwindow_s: \"600,\"\nsample: 0.5\ncap_tokens: 4096\ncap_to_context: true\n",
	} {
		c := DefaultConfig()
		if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
			t.Fatalf("yaml.Unmarshal(%q): %v", doc, err)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Validate: %v", err)
		}
		if c.WindowS != (Window{600, math.Inf(1)}) || c.Trace != "t.jsonl" || c.Format != FormatMooncake ||
			c.TimeScale != 2 || c.Sample != 0.5 || c.CapTokens != 4096 || !c.CapToContext {
			t.Errorf("%q: got %+v", doc, c)
		}
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back Config
		if err := yaml.Unmarshal(out, &back); err != nil || !reflect.DeepEqual(back, c) {
			t.Errorf("round trip through\n%s gave %+v, %v", out, back, err)
		}
	}
	for _, bad := range []string{"window_s: [1]\n", "window_s: [5, 1]\n", "window_s: {a: 1}\n", "window_s: [a, 2]\n", "window_s: 7\n"} {
		var c Config
		if err := yaml.Unmarshal([]byte(bad), &c); err == nil {
			t.Errorf("yaml.Unmarshal(%q) accepted %+v", bad, c.WindowS)
		}
	}
	var c Config
	if err := yaml.Unmarshal([]byte("window_s: ~\n"), &c); err != nil || !c.WindowS.IsZero() {
		t.Errorf("a null window: %+v, %v", c.WindowS, err)
	}
}
