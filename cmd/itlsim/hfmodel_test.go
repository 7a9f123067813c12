package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A model given as a Hugging Face config.json runs like its preset: the
// Llama-3.1-8B config in sim/cost/testdata gives the preset's results.
func TestRunWithHFConfigMatchesPreset(t *testing.T) {
	cfgPath, err := filepath.Abs(filepath.Join("..", "..", "sim", "cost", "testdata", "hf", "llama-3.1-8b", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfgPath); err != nil {
		t.Fatalf("test config missing: %v", err)
	}
	summary := func(model string) map[string]any {
		var out, errb bytes.Buffer
		if code := Main([]string{"run", "--requests", "100", "--model", model, "--format", "json"}, &out, &errb); code != 0 {
			t.Fatalf("--model %s: exit %d: %s", model, code, errb.String())
		}
		var doc struct {
			Runs []struct {
				Summary map[string]any `json:"summary"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Runs[0].Summary
	}
	hf, preset := summary(cfgPath), summary("llama-3.1-8b")
	for _, k := range []string{"output_tokens", "duration_s", "kv_blocks"} {
		if hf[k] != preset[k] {
			t.Errorf("%s: config.json gives %v, preset %v", k, hf[k], preset[k])
		}
	}

	var out, errb bytes.Buffer
	bad := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(bad, []byte(`{"hidden_size": 4096}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := Main([]string{"run", "--model", bad}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "config.json") {
		t.Errorf("incomplete config.json: exit %d, stderr %q; want an error naming the file", code, errb.String())
	}
}
