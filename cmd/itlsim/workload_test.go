package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
)

const workloadTestdata = "testdata/workload"

// TestWorkloadInspectGolden inspects every source in testdata/workload and
// compares the output with its NAME.inspect file (rewritten by -update).
func TestWorkloadInspectGolden(t *testing.T) {
	sources, err := filepath.Glob(filepath.Join(workloadTestdata, "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, src := range sources {
		if strings.HasSuffix(src, ".inspect") {
			continue
		}
		n++
		t.Run(filepath.Base(src), func(t *testing.T) {
			r := mustRunCLI(t, "workload", "inspect", src)
			golden := strings.TrimSuffix(src, filepath.Ext(src)) + ".inspect"
			if *update {
				if err := os.WriteFile(golden, []byte(r.stdout), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if r.stdout != string(want) {
				t.Errorf("inspect %s:\n%s\nwant (%s):\n%s", src, r.stdout, golden, want)
			}
		})
	}
	if n < 2 {
		t.Fatalf("found %d sources in %s", n, workloadTestdata)
	}
}

// inspectJSON runs inspect --json.
func inspectJSON(t *testing.T, args ...string) reports.WorkloadSummary {
	t.Helper()
	r := mustRunCLI(t, append([]string{"workload", "inspect", "--json"}, args...)...)
	var s reports.WorkloadSummary
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, r.stdout)
	}
	return s
}

// TestWorkloadInspectAzure checks inspect's figures on Azure's 2023
// conversation trace against the facts published with it.
func TestWorkloadInspectAzure(t *testing.T) {
	path := "../../../shared/data/traces/AzureLLMInferenceTrace_conv_2023.csv"
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s absent", path)
	}
	s := inspectJSON(t, path)
	if s.Format != "azure" || s.Requests != 19366 || math.Abs(s.DurationS-3501.72) > 0.01 {
		t.Errorf("format %s, %d requests over %.2f s; want azure, 19366 over 3501.72 s", s.Format, s.Requests, s.DurationS)
	}
	if s.Input.P50 != 1020 || s.Output.P50 != 129 {
		t.Errorf("median context %g, generated %g; want 1020, 129", s.Input.P50, s.Output.P50)
	}
	// A window and a time scale: ten minutes, replayed twice as fast.
	w := inspectJSON(t, path, "--window", "600,1200", "--time-scale", "2")
	if w.Requests < 1000 || w.DurationS > 300 || math.Abs(w.RatePerS-2*float64(w.Requests-1)/(2*w.DurationS)) > 1e-9 {
		t.Errorf("window [600,1200) at 2×: %d requests over %.1f s at %.2f/s", w.Requests, w.DurationS, w.RatePerS)
	}
	r := inspectJSON(t, path, "--target-rate", "20")
	if math.Abs(r.RatePerS-20) > 1e-6 {
		t.Errorf("--target-rate 20: rate %.6f", r.RatePerS)
	}
}

// TestWorkloadGenerateReplays writes a scenario's workload as a trace, in
// both forms, and checks that the trace replays to the same requests: the
// same inspect figures and the same simulation.
func TestWorkloadGenerateReplays(t *testing.T) {
	scen := filepath.Join(workloadTestdata, "bursty.yaml")
	want := inspectJSON(t, scen)
	dir := t.TempDir()
	for _, name := range []string{"reqs.jsonl", "reqs.csv"} {
		out := filepath.Join(dir, name)
		r := mustRunCLI(t, "workload", "generate", scen, "-o", out)
		if !strings.Contains(r.stderr, "wrote 3000 requests to "+out) {
			t.Errorf("generate: stderr %q", r.stderr)
		}
		got := inspectJSON(t, out)
		got.Source, got.Format = want.Source, want.Format
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s inspects as\n%+v\nwant %+v", name, got, want)
		}
	}
	// Simulating the scenario and the scenario with its requests replayed
	// from the file gives the same results.
	summary := func(args ...string) any {
		r := mustRunCLI(t, append([]string{"run", scen, "--format", "json"}, args...)...)
		var doc struct {
			Runs []struct{ Summary any } `json:"runs"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Runs[0].Summary
	}
	if a, b := summary(), summary("--workload", filepath.Join(dir, "reqs.jsonl")); !reflect.DeepEqual(a, b) {
		t.Errorf("replaying the generated trace changed the results:\n%v\nvs\n%v", a, b)
	}
}

func TestWorkloadCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"timestamp": 0, "input_length": 5, "output_length": 1}`+"\n"+`{"timestamp": 1, "input_length": 0, "output_length": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(workloadTestdata, "bursty.yaml")
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"missing trace", []string{"workload", "inspect", filepath.Join(dir, "absent.csv")}, []string{"workload.trace", "absent.csv", "no such file"}},
		{"bad row", []string{"workload", "inspect", bad}, []string{bad + ":2: input_length", `"0"`}},
		{"bad row in run", []string{"run", "--workload", bad}, []string{bad + ":2: input_length"}},
		{"wrong format", []string{"workload", "inspect", bad, "--format", "azure"}, []string{bad + ":1: malformed CSV"}},
		{"unknown format", []string{"run", "--workload", bad, "--workload-format", "parquet"}, []string{"workload.format", "parquet", "mooncake"}},
		{"format on a scenario", []string{"workload", "inspect", scen, "--format", "azure"}, []string{"--format", "generates its requests"}},
		{"bad window", []string{"workload", "inspect", bad, "--window", "5"}, []string{"--window", "START,END"}},
		{"no output", []string{"workload", "generate", scen}, []string{"-o FILE: required"}},
		{"no folder", []string{"workload", "generate", scen, "-o", filepath.Join(dir, "none", "x.jsonl")}, []string{"none"}},
		{"no arguments", []string{"workload", "inspect"}, []string{"accepts 1 arg"}},
	} {
		r := execCLI(t, tt.args...)
		if r.code == 0 {
			t.Errorf("%s: exit 0, want an error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr %q lacks %q", tt.name, r.stderr, w)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed generate left files behind: %v", entries)
	}
}

// TestRunWorkloadFlag replays a small trace through run.
func TestRunWorkloadFlag(t *testing.T) {
	r := mustRunCLI(t, "run", "--workload", filepath.Join(workloadTestdata, "classes.csv"), "--format", "json")
	var doc struct {
		Runs []struct {
			Summary struct {
				Requests int `json:"requests"`
				Finished int `json:"finished"`
			} `json:"summary"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if s := doc.Runs[0].Summary; s.Requests != 6 || s.Finished != 6 {
		t.Errorf("run --workload classes.csv: %d requests, %d finished, want 6 and 6", s.Requests, s.Finished)
	}
}

// TestInspectLengthsFile: a length-only CSV has no arrival times, so
// inspect says what the file holds (its pairs and their lengths) apart from
// what a run would generate from it (the arrival process's requests, each
// drawing a pair), rather than describing the default arrivals as if they
// were the file's.
func TestInspectLengthsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "len.csv")
	if err := os.WriteFile(path, []byte("num_prefill_tokens,num_decode_tokens\n100,10\n200,20\n300,30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRunCLI(t, "workload", "inspect", path, "--set", "workload.requests=50")
	for _, want := range []string{"3 length pairs", "no arrival times", "generated", "50 requests", "poisson",
		"file input ", "file output "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("inspect lacks %q:\n%s", want, r.stdout)
		}
	}
	var s struct {
		File *struct {
			Pairs int `json:"pairs"`
			Input struct {
				Max int `json:"max"`
			} `json:"input_tokens"`
		} `json:"file"`
		Generated string `json:"generated"`
		Requests  int    `json:"requests"`
	}
	j := mustRunCLI(t, "workload", "inspect", path, "--set", "workload.requests=50", "--json")
	if err := json.Unmarshal([]byte(j.stdout), &s); err != nil {
		t.Fatal(err)
	}
	if s.File == nil || s.File.Pairs != 3 || s.File.Input.Max != 300 || s.Requests != 50 || s.Generated == "" {
		t.Errorf("JSON file %+v, generated %q, requests %d; want 3 pairs of max input 300 and 50 generated requests", s.File, s.Generated, s.Requests)
	}
}

// TestInspectExpectedReuse: workload inspect reports the reuse a
// conversation workload offers an unbounded prefix cache.
func TestInspectExpectedReuse(t *testing.T) {
	scen := writeScenario(t, "conv.yaml", "workload:\n  requests: 200\n  conversation:\n    turns: 4\n    think_s: 2\n")
	r := mustRunCLI(t, "workload", "inspect", scen)
	if !strings.Contains(r.stdout, "reuse ") || !strings.Contains(r.stdout, "of prompt tokens an unbounded prefix cache would serve") {
		t.Errorf("no reuse line:\n%s", r.stdout)
	}
	plain := mustRunCLI(t, "workload", "inspect", writeScenario(t, "plain.yaml", "workload:\n  requests: 50\n"))
	if strings.Contains(plain.stdout, "reuse ") {
		t.Errorf("a workload without sharing reports reuse:\n%s", plain.stdout)
	}
}
