package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateSmall: validate simulates the file's own requests (all at
// once for rate "inf") and prints both sides with an error column; --json
// carries the same figures; the run is deterministic.
func TestValidateSmall(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "v.json")
	args := []string{"validate", filepath.Join("testdata", "analyze", "vllm_small.json"), "--json", js, "--html", filepath.Join(dir, "v.html")}
	a := mustRunCLI(t, args...)
	b := mustRunCLI(t, args...)
	if a.stdout != b.stdout {
		t.Fatal("two identical validations printed different output")
	}
	for _, want := range []string{"all at once", "ttft_p50_ms", "stream_p99_itl_p50_ms", "measured", "simulated", "error"} {
		if !strings.Contains(a.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, a.stdout)
		}
	}
	raw, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Requests int    `json:"requests"`
			Arrivals string `json:"arrivals"`
			Figures  []struct {
				Metric              string
				Measured, Simulated float64
				Error               *float64
			} `json:"figures"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 1 || doc.Runs[0].Requests != 3 || doc.Runs[0].Arrivals != "all at once" {
		t.Fatalf("runs %+v, want one of 3 requests all at once", doc.Runs)
	}
	for _, f := range doc.Runs[0].Figures {
		if f.Error != nil && *f.Error != f.Simulated/f.Measured-1 {
			t.Errorf("%s: error %g, want simulated/measured − 1 = %g", f.Metric, *f.Error, f.Simulated/f.Measured-1)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "v.html")); err != nil {
		t.Error(err)
	}
}

func TestValidateBadInput(t *testing.T) {
	small := filepath.Join("testdata", "analyze", "vllm_small.json")
	checkBadInput(t, []badInputCase{
		{"compared", []string{"validate", small, "--tp", "1,2"}, 0, []string{"validate simulates one configuration"}},
		{"seeds", []string{"validate", small, "--seeds", "0"}, 0, []string{"--seeds: must be in [1, 1000]"}},
		{"missing", []string{"validate", "nope.json"}, 0, []string{"nope.json"}},
		{"guidellm no schedule", []string{"validate", filepath.Join("testdata", "analyze", "guidellm_v03.json"), "--input-format", "vllm"}, 0, []string{"guidellm_v03.json"}},
	})
}

// vllm70B are the shared vLLM runs of Llama-3.3-70B on 8 × A100-40GB.
func vllm70B(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "data", "streams", "vllm_bench_llama33_70b_tp8_a100")
	var files []string
	for _, q := range []string{"01", "04", "16", "inf"} {
		p := filepath.Join(dir, "serving_tp8_pp1_sharegpt_qps_"+q+".json")
		if _, err := os.Stat(p); err != nil {
			t.Skipf("public data absent: %v", err)
		}
		files = append(files, p)
	}
	return files
}

// TestValidateWarmCache: the four vLLM runs were made back to back with
// prefix caching on; modelling the warm cache brings the simulated TTFT of
// the all-at-once run from several times the measured down to below it.
func TestValidateWarmCache(t *testing.T) {
	files := vllm70B(t)
	ttft := func(warm bool) (float64, float64) {
		args := append([]string{"validate"}, files[0], files[3])
		args = append(args, "--model", "llama-3.3-70b", "--gpu", "a100-40gb", "--tp", "8", "--seeds", "1", "--format", "json")
		if warm {
			args = append(args, "--warm-cache")
		}
		r := mustRunCLI(t, args...)
		var doc struct {
			Runs []struct {
				WarmBlocks int `json:"warm_blocks"`
				Figures    []struct {
					Metric              string
					Measured, Simulated float64
				} `json:"figures"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		inf := doc.Runs[1]
		if warm != (inf.WarmBlocks > 0) {
			t.Errorf("warm %v: %d warm blocks", warm, inf.WarmBlocks)
		}
		return inf.Figures[0].Measured, inf.Figures[0].Simulated
	}
	meas, cold := ttft(false)
	_, warm := ttft(true)
	t.Logf("qps inf TTFT p50: measured %.0f ms, simulated cold %.0f ms, warm %.0f ms", meas, cold, warm)
	if cold < 3*meas || warm > meas {
		t.Errorf("TTFT p50 cold %.0f ms, warm %.0f ms against measured %.0f: want cold ≥ 3× and warm below", cold, warm, meas)
	}
}

// TestRunVLLMBenchWorkload: run --workload takes a vLLM benchmark result
// directly: its three successful requests, all at once for rate "inf".
func TestRunVLLMBenchWorkload(t *testing.T) {
	r := mustRunCLI(t, "run", "--workload", filepath.Join("testdata", "analyze", "vllm_small.json"), "--format", "json")
	if !strings.Contains(r.stdout, `"requests": 3`) {
		t.Errorf("want 3 requests simulated:\n%.800s", r.stdout)
	}
}
