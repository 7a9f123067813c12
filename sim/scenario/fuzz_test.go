package scenario_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

// FuzzParse feeds arbitrary bytes to Parse. It must never panic; an error
// must name the file; a file it accepts must hold a valid configuration
// that survives a marshal round trip unchanged.
//
//	go test ./sim/scenario -run '^$' -fuzz FuzzParse -fuzztime 1m
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"# only a comment\n",
		"---\n",
		"null\n",
		"foo\n",
		"[1, 2]\n",
		"tp: 2\n---\ntp: 3\n",
		"scheduler:\n  polciy: x\n",
		"tp: two\n",
		"workload: {rate: -3}\n",
		"workload: {rate: .nan, input_len: 'fixed:abc'}\n",
		"workload:\n  input_len: uniform:10,1\n",
		"a: &x {tp: 2}\n<<: *x\n",
		"scheduler: &s {policy: orca}\nkvcache: *s\n",
		"compare: [scheduler.policy=chunked,orca, 'workload.input_len=fixed:1;fixed:2']\n",
		"seed: 18446744073709551615\n",
		"seed: -1\n",
		"tp: 9223372036854775808\n",
		"metrics: {slo: {ttft_ms: 1e400}}\n",
		"scheduler:\n\tpolicy: orca\n",
		"\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := scenario.Parse("fuzz.yaml", data)
		if err != nil {
			// (Not every line: a quoted multi-line value may break one.)
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if err := got.Config.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid configuration: %v", err)
		}
		// Writing the configuration out and reading it back gives the
		// same configuration (compared as YAML, so that NaN equals NaN).
		out, err := yaml.Marshal(got)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := scenario.Parse("again.yaml", out)
		if err != nil {
			t.Fatalf("re-parsing the marshalled configuration:\n%s\nerror: %v", out, err)
		}
		out2, err := yaml.Marshal(again)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != string(out2) {
			t.Fatalf("round trip changed the configuration:\n%s\nvs\n%s", out, out2)
		}
	})
}

// FuzzSet sets arbitrary values on every field path: it must never panic,
// and an accepted value must not be null-like.
func FuzzSet(f *testing.F) {
	for _, s := range []string{"1", "-1", "1.5", "two", "", "~", ".nan", ".inf", "1e400", "0x10", "fixed:8",
		"uniform:1,10", "lognormal:1,0", "normal:5,1,1,9", "[1]", "{a: 1}", "'x'", "\"\x00\"", "18446744073709551616"} {
		f.Add(s)
	}
	paths := scenario.Paths()
	// Every field takes the value or refuses it with an error that names
	// the field; a value taken once is taken again to the same config.
	f.Fuzz(func(t *testing.T, value string) {
		for _, p := range paths {
			c := sim.DefaultConfig()
			err := scenario.Set(&c, p, value)
			if err != nil {
				if !strings.HasPrefix(err.Error(), p+": ") {
					t.Fatalf("Set(%s, %q): error %q does not name the field", p, value, err)
				}
				continue
			}
			again := sim.DefaultConfig()
			if err := scenario.Set(&again, p, value); err != nil || !reflect.DeepEqual(again, c) {
				t.Fatalf("Set(%s, %q) twice: %v, configs equal %v", p, value, err, reflect.DeepEqual(again, c))
			}
		}
	})
}

// FuzzParseComparison: never panics; an accepted comparison has a path and
// only non-empty, trimmed values.
func FuzzParseComparison(f *testing.F) {
	for _, s := range []string{"a=1,2", "a=1;2", "a=", "=1", "a", "workload.input_len=uniform:1,10;fixed:3", " a = 1 , 2 ", "a=1,,2", "a=;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := scenario.ParseComparison(s)
		if err != nil {
			return
		}
		if c.Path == "" || len(c.Values) == 0 {
			t.Fatalf("%q: accepted %+v", s, c)
		}
		for _, v := range c.Values {
			if v == "" || v != strings.TrimSpace(v) {
				t.Fatalf("%q: value %q is empty or untrimmed", s, v)
			}
		}
	})
}
