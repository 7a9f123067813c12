package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestCalibrateFitsNoise: calibrate --fit cost.noise_cv recovers the step
// noise of a run from its ITL distribution (the run is itlsim's own, with
// noise 0.1), and writes it into the profile, which run --profile loads.
func TestCalibrateFitsNoise(t *testing.T) {
	dir := t.TempDir()
	streams, prof := filepath.Join(dir, "noisy.jsonl"), filepath.Join(dir, "noisy.yaml")
	mustRunCLI(t, "run", "--requests", "200", "--rate", "8", "--noise-cv", "0.1", "--timelines", streams)
	mustRunCLI(t, "calibrate", streams, "--fit", "cost.noise_cv", "--evals", "40", "-o", prof)
	raw, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Cost struct {
			NoiseCV *float64 `yaml:"noise_cv"`
		} `yaml:"cost"`
	}
	if err := yaml.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	if p.Cost.NoiseCV == nil || *p.Cost.NoiseCV < 0.06 || *p.Cost.NoiseCV > 0.14 {
		t.Fatalf("fitted noise_cv %v, want 0.1 within 0.04:\n%s", p.Cost.NoiseCV, raw)
	}
	r := mustRunCLI(t, "run", "--requests", "20", "--profile", prof, "--print-config")
	if want := "noise_cv: " + yamlFloat(*p.Cost.NoiseCV); !strings.Contains(r.stdout, want) {
		t.Errorf("run --profile does not load the fitted noise (%q):\n%s", want, r.stdout)
	}
}

func yamlFloat(v float64) string {
	b, _ := yaml.Marshal(v)
	return string(b[:len(b)-1])
}
