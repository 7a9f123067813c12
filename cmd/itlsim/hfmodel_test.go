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

// The published Llama 4 Scout FP8-dynamic config.json (llm-compressor's
// compressed-tensors quantization_config) runs in fp8: it holds more KV
// blocks per GPU and decodes faster than the same file without its
// quantization_config, and runs exactly as that stripped file with
// --quantization fp8.
func TestRunCompressedTensorsConfigIsFP8(t *testing.T) {
	published, err := filepath.Abs(filepath.Join("..", "..", "sim", "cost", "testdata", "hf-published",
		"llama-4-scout-17b-16e-instruct-fp8-dynamic", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(published)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["quantization_config"]; !ok {
		t.Fatal("the published file has no quantization_config")
	}
	delete(doc, "quantization_config")
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	stripped := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(stripped, data, 0o644); err != nil {
		t.Fatal(err)
	}
	type summary struct {
		KVBlocks  float64 `json:"kv_blocks"`
		DurationS float64 `json:"duration_s"`
		TPOT      struct {
			Mean float64 `json:"mean"`
		} `json:"tpot_ms"`
	}
	run := func(args ...string) summary {
		var out, errb bytes.Buffer
		args = append([]string{"run", "--gpu", "h100-sxm-80gb", "--tp", "4", "--requests", "4", "--format", "json"}, args...)
		if code := Main(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		var d struct {
			Runs []struct {
				Summary summary `json:"summary"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(out.Bytes(), &d); err != nil || len(d.Runs) == 0 {
			t.Fatalf("%v: %v", args, err)
		}
		return d.Runs[0].Summary
	}
	fp8, bf16, forced := run("--model", published), run("--model", stripped), run("--model", stripped, "--quantization", "fp8")
	if !(fp8.KVBlocks > bf16.KVBlocks) || !(fp8.TPOT.Mean < bf16.TPOT.Mean) {
		t.Errorf("compressed-tensors fp8: %d KV blocks, TPOT %.3f ms; without quantization_config %d, %.3f ms; want more blocks and a shorter TPOT",
			int(fp8.KVBlocks), fp8.TPOT.Mean, int(bf16.KVBlocks), bf16.TPOT.Mean)
	}
	if fp8 != forced {
		t.Errorf("compressed-tensors fp8 %+v, stripped with --quantization fp8 %+v; want the same run", fp8, forced)
	}
}
