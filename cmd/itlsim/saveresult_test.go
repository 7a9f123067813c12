package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// record --save-result writes the recording as vLLM bench's result JSON:
// validate and analyze read it as a vLLM file, its per-request lists have
// one entry per request sent (a failed one with its error and no output),
// and the default name follows vLLM's pattern.
func TestRecordSaveResultCLI(t *testing.T) {
	dir := t.TempDir()
	url := hostileServer(t, "ok", "500", "ok", "ok")
	base := []string{"record", url, "--served-model-name", "org/m", "--num-prompts", "4", "--request-rate", "1000",
		"--max-concurrency", "1", "--timeout", "2s", "--input-len", "fixed:4", "--output-len", "fixed:2"}
	named := filepath.Join(dir, "vllm.json")
	mustRunCLI(t, append(base, "--save-result", "--result-filename", named, "-o", filepath.Join(dir, "rec.jsonl"))...)
	data, err := os.ReadFile(named)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Backend        string      `json:"backend"`
		ModelID        string      `json:"model_id"`
		NumPrompts     int         `json:"num_prompts"`
		MaxConcurrency int         `json:"max_concurrency"`
		Completed      int         `json:"completed"`
		TTFTs          []float64   `json:"ttfts"`
		ITLs           [][]float64 `json:"itls"`
		Errors         []string    `json:"errors"`
		OutputLens     []int       `json:"output_lens"`
		MeanTTFT       *float64    `json:"mean_ttft_ms"`
		P99ITL         *float64    `json:"p99_itl_ms"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if doc.Backend != "vllm" || doc.ModelID != "org/m" || doc.NumPrompts != 4 || doc.MaxConcurrency != 1 || doc.Completed != 3 {
		t.Errorf("header %+v", doc)
	}
	if len(doc.TTFTs) != 4 || len(doc.ITLs) != 4 || doc.Errors[1] != "http 500" || doc.OutputLens[1] != 0 ||
		doc.Errors[0] != "" || len(doc.ITLs[0]) != 1 || doc.TTFTs[0] <= 0 {
		t.Errorf("per-request lists: ttfts %v itls %v errors %q output_lens %v", doc.TTFTs, doc.ITLs, doc.Errors, doc.OutputLens)
	}
	if doc.MeanTTFT == nil || doc.P99ITL == nil {
		t.Errorf("summary figures missing:\n%s", data)
	}
	// analyze reads it as vLLM's own result file.
	r := mustRunCLI(t, "analyze", named, "--format", "json")
	if !strings.Contains(r.stdout, `"finished": 3`) {
		t.Errorf("analyze of the saved result:\n%.1500s", r.stdout)
	}

	// Without --result-filename the name is vLLM's, in --result-dir.
	sub := filepath.Join(dir, "results")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	mustRunCLI(t, append(base, "--save-result", "--result-dir", sub)...)
	got, _ := filepath.Glob(filepath.Join(sub, "vllm-1000.0qps-concurrency1-m-*.json"))
	if len(got) != 1 {
		entries, _ := os.ReadDir(sub)
		t.Errorf("default name: found %v in %s", entries, sub)
	}

	// The file's options need --save-result; the file may not be an input.
	if r := execCLI(t, append(base, "--result-filename", named)...); r.code == 0 || !strings.Contains(r.stderr, "--result-filename: needs --save-result") {
		t.Errorf("--result-filename alone: exit %d, %q", r.code, r.stderr)
	}
	scen := filepath.Join(dir, "s.yaml")
	os.WriteFile(scen, []byte("seed: 1\n"), 0o644)
	before, _ := os.ReadFile(scen)
	r2 := execCLI(t, "record", url, scen, "--served-model-name", "m", "--requests", "1", "--save-result", "--result-filename", scen)
	after, _ := os.ReadFile(scen)
	if r2.code == 0 || !strings.Contains(r2.stderr, "is an input of this command") || string(before) != string(after) {
		t.Errorf("--result-filename over the scenario: exit %d, %q", r2.code, r2.stderr)
	}
}
