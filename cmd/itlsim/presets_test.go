package main

import (
	"strings"
	"testing"

	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim/cost"
)

// presetLines returns, for each section title of `itlsim presets` (the
// words before its parenthesis), the first word of each of its indented lines.
func presetLines(t *testing.T, out string) map[string][]string {
	t.Helper()
	sections := map[string][]string{}
	section := ""
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if !strings.HasPrefix(line, "  ") {
			section, _, _ = strings.Cut(line, " (")
			if _, dup := sections[section]; dup {
				t.Errorf("section %s listed twice", section)
			}
			sections[section] = nil
			continue
		}
		if section == "" {
			t.Fatalf("entry %q before any section title", line)
		}
		sections[section] = append(sections[section], strings.Fields(line)[0])
	}
	return sections
}

func TestPresets(t *testing.T) {
	r := mustRunCLI(t, "presets")
	if r.stderr != "" {
		t.Errorf("presets wrote to stderr: %q", r.stderr)
	}
	got := presetLines(t, r.stdout)
	tests := []struct {
		section string
		want    []string
	}{
		{"MODELS", []string{"llama-3.1-8b", "llama-3.1-70b", "llama-3.3-70b", "llama-2-7b", "llama-2-70b", "mistral-7b", "qwen2.5-7b", "yi-34b"}},
		{"GPUS", []string{"a100-40gb", "a100-80gb", "h100-sxm-80gb", "h200-141gb", "l40s", "mi300x"}},
		{"BATCHING POLICIES", []string{"chunked", "prefill-first", "orca", "static"}},
		{"ADMISSION RULES", []string{"always", "kv-watermark", "kv-reserve", "max-queue", "token-bucket"}},
		{"QUEUE ORDERS", []string{"fcfs", "priority", "shortest-prompt-first"}},
		{"PREEMPTION VICTIMS", []string{"newest", "lowest-priority"}},
		{"PREEMPTION MODES", []string{"recompute", "swap"}},
		{"COST MODELS", []string{"roofline", "linear"}},
		{"ARRIVAL PROCESSES", []string{"poisson", "constant"}},
	}
	for _, tt := range tests {
		names, ok := got[tt.section]
		if !ok {
			t.Errorf("no %s section in:\n%s", tt.section, r.stdout)
			continue
		}
		for _, w := range tt.want {
			n := 0
			for _, name := range names {
				if name == w {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%s: %q listed %d times, want once; got %q", tt.section, w, n, names)
			}
		}
	}
	// Every registered name is listed: the lists come from the registries.
	for section, names := range map[string][]string{
		"MODELS":             cost.ModelNames(),
		"GPUS":               cost.GPUNames(),
		"BATCHING POLICIES":  scheduler.BatcherNames(),
		"ADMISSION RULES":    scheduler.AdmissionNames(),
		"QUEUE ORDERS":       scheduler.OrderNames(),
		"PREEMPTION VICTIMS": scheduler.VictimNames(),
	} {
		if len(got[section]) != len(names) {
			t.Errorf("%s: %d lines, want one per registered name %q", section, len(got[section]), names)
		}
	}
	// One line each, with a description after the name.
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "  ") && len(strings.Fields(line)) < 2 &&
			!strings.Contains(line, "poisson") && !strings.Contains(line, "constant") {
			t.Errorf("line %q has no description", line)
		}
	}
}

func TestPresetsRejectsArguments(t *testing.T) {
	r := execCLI(t, "presets", "extra")
	if r.code == 0 {
		t.Errorf("presets extra: exit 0, want an error")
	}
}
