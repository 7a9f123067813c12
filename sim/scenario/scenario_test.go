package scenario_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
	"github.com/itlsim/itlsim/workloads"
)

func TestParse(t *testing.T) {
	def := sim.DefaultConfig()
	tests := []struct {
		name string
		yaml string
		// check inspects a good file's result; nil when an error is expected.
		check func(t *testing.T, f scenario.File)
		// wantErr lists substrings the error must contain.
		wantErr []string
		// wantRE, if set, is a pattern the error must match.
		wantRE string
	}{
		{
			name: "empty file keeps every default",
			yaml: "",
			check: func(t *testing.T, f scenario.File) {
				if !reflect.DeepEqual(f.Config, def) {
					t.Errorf("got %+v, want the default %+v", f.Config, def)
				}
			},
		},
		{
			name: "whitespace only",
			yaml: "\n   \n\t\n",
			check: func(t *testing.T, f scenario.File) {
				if !reflect.DeepEqual(f.Config, def) {
					t.Errorf("got %+v, want the default", f.Config)
				}
			},
		},
		{
			name: "comments only keeps every default",
			yaml: "# a template with everything commented out\n# tp: 2\n",
			check: func(t *testing.T, f scenario.File) {
				if !reflect.DeepEqual(f.Config, def) {
					t.Errorf("got %+v, want the default", f.Config)
				}
			},
		},
		{
			name: "fields override, the rest keep their defaults",
			yaml: "model: llama-2-7b\ntp: 2\nscheduler:\n  policy: orca\n  admission:\n    rule: kv-reserve\nworkload:\n  rate: 5.5\n  input_len: uniform:10,20\n",
			check: func(t *testing.T, f scenario.File) {
				want := sim.DefaultConfig()
				want.Model, want.TP = "llama-2-7b", 2
				want.Scheduler.Policy = "orca"
				want.Scheduler.Admission.Rule = "kv-reserve"
				want.Workload.Rate = 5.5
				want.Workload.InputLen = workloads.MustParseDist("uniform:10,20")
				if !reflect.DeepEqual(f.Config, want) {
					t.Errorf("got %+v\nwant %+v", f.Config, want)
				}
				if len(f.Compare) != 0 {
					t.Errorf("got compare %q, want none", f.Compare)
				}
			},
		},
		{
			name: "flow style and compare list",
			yaml: "scheduler: {policy: prefill-first}\ncompare:\n  - scheduler.policy=chunked,orca\n  - \"workload.input_len=fixed:8;fixed:16\"\n",
			check: func(t *testing.T, f scenario.File) {
				if f.Scheduler.Policy != "prefill-first" {
					t.Errorf("got policy %q, want prefill-first", f.Scheduler.Policy)
				}
				want := []string{"scheduler.policy=chunked,orca", "workload.input_len=fixed:8;fixed:16"}
				if !slices.Equal(f.Compare, want) {
					t.Errorf("got compare %q, want %q", f.Compare, want)
				}
			},
		},
		{
			name:    "unknown field names its line",
			yaml:    "scheduler:\n  polciy: x\n",
			wantErr: []string{"s.yaml:2:", `"polciy"`, "unknown field"},
		},
		{
			name:    "unknown top-level field",
			yaml:    "tp: 1\nmodle: llama-2-7b\n",
			wantErr: []string{"s.yaml:2:", `"modle"`},
		},
		{
			name:    "type error names its line",
			yaml:    "model: llama-3.1-8b\ntp: two\n",
			wantErr: []string{"s.yaml:2:", "two"},
		},
		{
			name:    "a section given a scalar",
			yaml:    "scheduler: chunked\n",
			wantErr: []string{"s.yaml:1:", "chunked"},
		},
		{
			name:    "validation error is located at its line",
			yaml:    "seed: 3\nworkload:\n  requests: 10\n  rate: -3\n",
			wantErr: []string{"s.yaml:4:", "workload.rate", "-3"},
		},
		{
			name:    "nested validation error",
			yaml:    "cost:\n  roofline:\n    compute_efficiency: 1.5\n",
			wantErr: []string{"s.yaml:3:", "cost.roofline.compute_efficiency", "1.5"},
		},
		{
			name:    "unknown policy is located and lists the valid ones",
			yaml:    "\nscheduler:\n  policy: fifo\n",
			wantErr: []string{"s.yaml:3:", "scheduler.policy", "fifo", "chunked", "prefill-first"},
		},
		{
			name:    "every validation error is reported at its own line",
			yaml:    "workload:\n  rate: -3\nscheduler:\n  policy: x\n",
			wantErr: []string{"s.yaml:2: workload.rate", "s.yaml:4: scheduler.policy"},
		},
		{
			name:    "bad length distribution",
			yaml:    "workload:\n  input_len: fixed:abc\n",
			wantErr: []string{"s.yaml", "abc"},
		},
		{
			// The YAML library reports where the unclosed sequence's
			// context is, counted its own way; the test asks for a line.
			name:    "malformed YAML names a line",
			yaml:    "tp: 1\nscheduler: [\n  policy: x\n",
			wantErr: []string{"s.yaml:", "did not find expected"},
			wantRE:  `^s\.yaml:\d+: `,
		},
		{
			name:    "tab indentation",
			yaml:    "scheduler:\n\tpolicy: orca\n",
			wantErr: []string{"s.yaml:2:"},
		},
		{
			name:    "a scalar document",
			yaml:    "foo\n",
			wantErr: []string{"s.yaml:1:", "foo"},
		},
		{
			name:    "compare must be a list",
			yaml:    "compare: scheduler.policy=a,b\n",
			wantErr: []string{"s.yaml:1:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := scenario.Parse("s.yaml", []byte(tt.yaml))
			if tt.check != nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				tt.check(t, f)
				return
			}
			if err == nil {
				t.Fatalf("Parse: got no error, want one containing %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse error %q does not contain %q", err, w)
				}
			}
			if tt.wantRE != "" && !regexp.MustCompile(tt.wantRE).MatchString(err.Error()) {
				t.Errorf("Parse error %q does not match %s", err, tt.wantRE)
			}
			if regexp.MustCompile(`(^|\s)yaml: `).MatchString(err.Error()) {
				t.Errorf("Parse error %q leaks the YAML library's prefix", err)
			}
		})
	}
}

// TestExampleScenario checks that the documented example parses, sets what
// it says, resolves, and that its comparisons expand.
func TestExampleScenario(t *testing.T) {
	path := filepath.Join("testdata", "example.yaml")
	f, err := scenario.Load(path, readFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Config
	if c.Name != "example" || c.Seed != 7 || c.MaxModelLen != 8192 {
		t.Errorf("got name %q seed %d max_model_len %d, want example, 7, 8192", c.Name, c.Seed, c.MaxModelLen)
	}
	if c.Scheduler.Preemption != "swap" || c.Scheduler.Admission.Rule != "kv-watermark" || c.Scheduler.LongPrefillTokenThreshold != 512 {
		t.Errorf("scheduler: got %+v", c.Scheduler)
	}
	if c.Cost.NoiseCV != 0.05 || c.Cost.HiccupMS != 300 || c.Cost.Linear.C4USPerPrefillTokenContext != 0.00076 {
		t.Errorf("cost: got %+v", c.Cost)
	}
	if got := c.Workload.OutputLen.String(); got != "uniform:16,512" {
		t.Errorf("output_len: got %q, want uniform:16,512", got)
	}
	if c.Metrics.SLO.TPOTMS != 100 {
		t.Errorf("metrics.slo.tpot_ms: got %g, want 100", c.Metrics.SLO.TPOTMS)
	}
	if _, err := c.Resolve(); err != nil {
		t.Errorf("Resolve: %v", err)
	}

	// The example sets every section: each top-level key of the config
	// appears in the file.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range scenario.Paths() {
		switch p {
		case "workload.lengths_file", "workload.trace", "workload.format":
			continue // exclusive with input_len/output_len
		case "workload.shape", "workload.target_rate":
			continue // exclusive with workload.cv and workload.time_scale
		}
		if !hasPath(doc, p) {
			t.Errorf("example.yaml does not set %s; keep it a complete reference", p)
		}
	}

	var cmps []scenario.Comparison
	for _, s := range f.Compare {
		cmp, err := scenario.ParseComparison(s)
		if err != nil {
			t.Fatal(err)
		}
		cmps = append(cmps, cmp)
	}
	vs, err := scenario.Expand(f.Config, cmps)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	want := []string{"chunked/uniform:16,512", "chunked/fixed:256", "prefill-first/uniform:16,512", "prefill-first/fixed:256"}
	if !slices.Equal(names, want) {
		t.Errorf("variants: got %q, want %q", names, want)
	}
}

func hasPath(m map[string]any, path string) bool {
	var cur any = m
	for key := range strings.SplitSeq(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = mm[key]; !ok {
			return false
		}
	}
	return true
}

func TestLoadResolvesRelativePaths(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte("workload:\n  lengths_file: lengths.csv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := scenario.Load(path, readFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "lengths.csv"); f.Workload.LengthsFile != want {
		t.Errorf("lengths_file: got %q, want %q (relative to the scenario)", f.Workload.LengthsFile, want)
	}
}

func TestPaths(t *testing.T) {
	paths := scenario.Paths()
	for _, want := range []string{
		"name", "seed", "model", "gpu", "tp", "max_model_len",
		"cost.model", "cost.roofline.overhead_us", "cost.linear.c0_us", "cost.noise_cv",
		"scheduler.policy", "scheduler.max_num_batched_tokens", "scheduler.admission.rule", "scheduler.admission.burst_tokens",
		"kvcache.block_size", "kvcache.swap_space_gib",
		"workload.rate", "workload.input_len", "workload.output_len", "workload.lengths_file",
		"metrics.stall_threshold_ms", "metrics.slo.ttft_ms", "metrics.timeseries_interval_s",
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("Paths() lacks %q", want)
		}
	}
	for _, p := range paths {
		if p == "compare" || strings.HasSuffix(p, ".") || p == "scheduler" || p == "metrics.slo" {
			t.Errorf("Paths() holds %q, which is not a settable field", p)
		}
	}
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			t.Errorf("Paths() lists %q twice", p)
		}
		seen[p] = true
	}
}

// TestSetRoundTrip sets every path of a zero config to the value the
// default config marshals to, and expects the default back: every field is
// settable, and overrides accept exactly what files hold.
func TestSetRoundTrip(t *testing.T) {
	def := sim.DefaultConfig()
	raw, err := yaml.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	var got sim.Config
	for _, p := range scenario.Paths() {
		n := nodeAt(&root, p)
		if n == nil {
			continue // omitted when empty (lengths_file); the zero value is the default
		}
		if n.Kind != yaml.ScalarNode {
			t.Errorf("%s: marshals to a %v node, want a scalar", p, n.Kind)
			continue
		}
		if err := scenario.Set(&got, p, n.Value); err != nil {
			t.Errorf("Set(%s, %q): %v", p, n.Value, err)
		}
	}
	if !reflect.DeepEqual(got, def) {
		t.Errorf("after setting every path from the default:\ngot  %+v\nwant %+v", got, def)
	}
}

func nodeAt(n *yaml.Node, path string) *yaml.Node {
	if n.Kind == yaml.DocumentNode {
		n = n.Content[0]
	}
	for key := range strings.SplitSeq(path, ".") {
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

func TestSet(t *testing.T) {
	tests := []struct {
		path, value string
		get         func(c *sim.Config) any
		want        any
	}{
		{"tp", "4", func(c *sim.Config) any { return c.TP }, 4},
		{"seed", "42", func(c *sim.Config) any { return c.Seed }, uint64(42)},
		{"model", "mistral-7b", func(c *sim.Config) any { return c.Model }, "mistral-7b"},
		{"name", "123", func(c *sim.Config) any { return c.Name }, "123"}, // a string field keeps digits as text
		{"name", "true", func(c *sim.Config) any { return c.Name }, "true"},
		{"name", "", func(c *sim.Config) any { return c.Name }, ""},
		{"workload.rate", "2.5", func(c *sim.Config) any { return c.Workload.Rate }, 2.5},
		{"workload.rate", "1e3", func(c *sim.Config) any { return c.Workload.Rate }, 1000.0},
		{"workload.rate", "7", func(c *sim.Config) any { return c.Workload.Rate }, 7.0},
		{"workload.requests", "200", func(c *sim.Config) any { return c.Workload.Requests }, 200},
		{"scheduler.policy", "orca", func(c *sim.Config) any { return c.Scheduler.Policy }, "orca"},
		{"scheduler.admission.rule", "kv-reserve", func(c *sim.Config) any { return c.Scheduler.Admission.Rule }, "kv-reserve"},
		{"scheduler.admission.watermark", "0.2", func(c *sim.Config) any { return c.Scheduler.Admission.Watermark }, 0.2},
		{"scheduler.max_num_batched_tokens", "512", func(c *sim.Config) any { return c.Scheduler.MaxNumBatchedTokens }, 512},
		{"kvcache.swap_space_gib", "0", func(c *sim.Config) any { return c.KVCache.SwapSpaceGiB }, 0.0},
		{"cost.roofline.overhead_us", "3000", func(c *sim.Config) any { return c.Cost.Roofline.OverheadUS }, 3000.0},
		{"metrics.slo.e2el_ms", "10000", func(c *sim.Config) any { return c.Metrics.SLO.E2ELMS }, 10000.0},
		{"workload.input_len", "fixed:512", func(c *sim.Config) any { return c.Workload.InputLen }, workloads.MustParseDist("fixed:512")},
		{"workload.input_len", "uniform:1,10", func(c *sim.Config) any { return c.Workload.InputLen }, workloads.MustParseDist("uniform:1,10")},
		{"workload.output_len", "normal:100,20,1,200", func(c *sim.Config) any { return c.Workload.OutputLen }, workloads.MustParseDist("normal:100,20,1,200")},
		{"workload.output_len", "lognormal:256,256", func(c *sim.Config) any { return c.Workload.OutputLen }, workloads.MustParseDist("lognormal:256,256")},
		{"workload.lengths_file", "trace.csv", func(c *sim.Config) any { return c.Workload.LengthsFile }, "trace.csv"},
	}
	for _, tt := range tests {
		t.Run(tt.path+"="+tt.value, func(t *testing.T) {
			c := sim.DefaultConfig()
			if err := scenario.Set(&c, tt.path, tt.value); err != nil {
				t.Fatalf("Set: %v", err)
			}
			if got := tt.get(&c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v (%T), want %v (%T)", got, got, tt.want, tt.want)
			}
			// Only the named field changes.
			again := sim.DefaultConfig()
			if err := scenario.Set(&again, tt.path, tt.value); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c, again) {
				t.Errorf("Set is not deterministic")
			}
		})
	}
}

func TestSetErrors(t *testing.T) {
	tests := []struct {
		path, value string
		want        []string
	}{
		{"nope", "1", []string{"nope", "unknown field"}},
		{"scheduler.polciy", "orca", []string{"scheduler.polciy", `"polciy"`}},
		{"compare", "a=1,2", []string{"compare", "unknown field"}},
		{"scheduler", "orca", []string{"scheduler", "section"}},
		{"metrics.slo", "1", []string{"metrics.slo", "section"}},
		{"tp.x", "1", []string{"tp.x", "not a section"}},
		{"tp", "two", []string{"tp:", "two"}},
		{"workload.rate", "fast", []string{"workload.rate:", "fast"}},
		{"seed", "-1", []string{"seed:", "non-negative", "-1"}},
		{"seed", "x", []string{"seed:", "x"}},
		{"workload.input_len", "fixed:abc", []string{"workload.input_len:", "abc"}},
		{"workload.input_len", "gamma:1,2", []string{"workload.input_len:", "gamma"}},
		{"workload.input_len", "512", []string{"workload.input_len:", "512"}},
		// An empty or null value must not silently keep the old one.
		{"tp", "", []string{"tp:"}},
		{"workload.rate", "~", []string{"workload.rate:"}},
		{"workload.rate", "null", []string{"workload.rate:"}},
	}
	for _, tt := range tests {
		t.Run(tt.path+"="+tt.value, func(t *testing.T) {
			c := sim.DefaultConfig()
			err := scenario.Set(&c, tt.path, tt.value)
			if err == nil {
				t.Fatalf("Set(%s, %q): got no error", tt.path, tt.value)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "line ") {
				t.Errorf("error %q mentions a line; a flag has none", err)
			}
		})
	}
}

func TestParseComparison(t *testing.T) {
	tests := []struct {
		in      string
		want    scenario.Comparison
		wantErr string
	}{
		{in: "scheduler.policy=chunked,orca", want: scenario.Comparison{Path: "scheduler.policy", Values: []string{"chunked", "orca"}}},
		{in: "tp=1", want: scenario.Comparison{Path: "tp", Values: []string{"1"}}},
		{in: " tp = 1 , 2 ,4", want: scenario.Comparison{Path: "tp", Values: []string{"1", "2", "4"}}},
		{in: "workload.input_len=fixed:512;fixed:4096", want: scenario.Comparison{Path: "workload.input_len", Values: []string{"fixed:512", "fixed:4096"}}},
		{in: "workload.input_len=uniform:1,10;uniform:5,50", want: scenario.Comparison{Path: "workload.input_len", Values: []string{"uniform:1,10", "uniform:5,50"}}},
		{in: "workload.input_len=uniform:1,10", want: scenario.Comparison{Path: "workload.input_len", Values: []string{"uniform:1", "10"}}}, // commas split unless ';' is present
		{in: "workload.input_len=uniform:1,10;", wantErr: "empty value"},
		{in: "tp=1,,2", wantErr: "empty value"},
		{in: "tp=1, ,2", wantErr: "empty value"},
		{in: "tp=", wantErr: "expected path=value1,value2"},
		{in: "=1,2", wantErr: "expected path=value1,value2"},
		{in: " =1,2", wantErr: "expected path=value1,value2"},
		{in: "tp", wantErr: "expected path=value1,value2"},
		{in: "", wantErr: "expected path=value1,value2"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := scenario.ParseComparison(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %+v, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	cmp := func(s string) scenario.Comparison {
		c, err := scenario.ParseComparison(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	named := sim.DefaultConfig()
	named.Name = "baseline"
	tests := []struct {
		name  string
		base  sim.Config
		cmps  []scenario.Comparison
		names []string
	}{
		{"no comparison takes the policy's name", sim.DefaultConfig(), nil, []string{"chunked"}},
		{"no comparison keeps the scenario's name", named, nil, []string{"baseline"}},
		{"one comparison", sim.DefaultConfig(), []scenario.Comparison{cmp("scheduler.policy=prefill-first,chunked")}, []string{"prefill-first", "chunked"}},
		{"numbers carry their field's name", sim.DefaultConfig(),
			[]scenario.Comparison{cmp("scheduler.max_num_batched_tokens=512,2048")},
			[]string{"max_num_batched_tokens=512", "max_num_batched_tokens=2048"}},
		{"a comparison overrides the scenario's name", named, []scenario.Comparison{cmp("scheduler.policy=orca")}, []string{"orca"}},
		{"cross product, the first comparison varies slowest", sim.DefaultConfig(),
			[]scenario.Comparison{cmp("scheduler.policy=chunked,orca"), cmp("scheduler.admission.rule=always,kv-reserve")},
			[]string{"chunked/always", "chunked/kv-reserve", "orca/always", "orca/kv-reserve"}},
		{"three comparisons", sim.DefaultConfig(),
			[]scenario.Comparison{cmp("scheduler.policy=chunked"), cmp("workload.rate=5,10"), cmp("workload.input_len=fixed:8;fixed:16")},
			[]string{"chunked/rate=5/fixed:8", "chunked/rate=5/fixed:16", "chunked/rate=10/fixed:8", "chunked/rate=10/fixed:16"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.base
			before := base
			vs, err := scenario.Expand(base, tt.cmps)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(base, before) {
				t.Errorf("Expand changed its base")
			}
			var names []string
			for _, v := range vs {
				names = append(names, v.Name)
				if v.Config.Name != v.Name {
					t.Errorf("variant %q: config name %q, want the variant's", v.Name, v.Config.Name)
				}
				if v.Config.Seed != base.Seed {
					t.Errorf("variant %q: seed %d, want the base's %d", v.Name, v.Config.Seed, base.Seed)
				}
				if len(v.Overrides) != len(tt.cmps) {
					t.Errorf("variant %q: %d overrides, want %d", v.Name, len(v.Overrides), len(tt.cmps))
				}
				// The variant equals the base with its overrides applied.
				want := base
				for _, o := range v.Overrides {
					if err := scenario.Set(&want, o.Path, o.Value); err != nil {
						t.Fatal(err)
					}
				}
				want.Name = v.Name
				if !reflect.DeepEqual(v.Config, want) {
					t.Errorf("variant %q: config differs from the base with its overrides %+v", v.Name, v.Overrides)
				}
			}
			if !slices.Equal(names, tt.names) {
				t.Errorf("got names %q, want %q", names, tt.names)
			}
		})
	}
}

func TestExpandOverridesInOrder(t *testing.T) {
	a, _ := scenario.ParseComparison("scheduler.policy=chunked,orca")
	b, _ := scenario.ParseComparison("tp=1,2")
	vs, err := scenario.Expand(sim.DefaultConfig(), []scenario.Comparison{a, b})
	if err != nil {
		t.Fatal(err)
	}
	got := vs[3].Overrides
	want := []scenario.Override{{Path: "scheduler.policy", Value: "orca"}, {Path: "tp", Value: "2"}}
	if !slices.Equal(got, want) {
		t.Errorf("got overrides %+v, want %+v", got, want)
	}
	if vs[3].Config.Scheduler.Policy != "orca" || vs[3].Config.TP != 2 {
		t.Errorf("got policy %q tp %d, want orca and 2", vs[3].Config.Scheduler.Policy, vs[3].Config.TP)
	}
}

func TestExpandErrors(t *testing.T) {
	cmp := func(s string) scenario.Comparison {
		c, err := scenario.ParseComparison(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	invalid := sim.DefaultConfig()
	invalid.Workload.Rate = -1
	tests := []struct {
		name string
		base sim.Config
		cmps []scenario.Comparison
		want []string
	}{
		{"unknown path", sim.DefaultConfig(), []scenario.Comparison{cmp("scheduler.polcy=a,b")}, []string{"scheduler.polcy", "unknown field"}},
		{"mistyped value", sim.DefaultConfig(), []scenario.Comparison{cmp("tp=1,two")}, []string{"tp", "two"}},
		{"invalid value names the run", sim.DefaultConfig(), []scenario.Comparison{cmp("scheduler.policy=chunked,fifo")}, []string{"run fifo", "scheduler.policy", "fifo"}},
		{"invalid base without comparisons", invalid, nil, []string{"workload.rate", "-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := scenario.Expand(tt.base, tt.cmps)
			if err == nil {
				t.Fatalf("got %d variants, want an error", len(vs))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// readFile returns the bytes of path, failing the test when it cannot.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
