package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim/frontend"
)

// The sources table of docs/fidelity.md ("The front end's sources") is the
// front-end profiles' figures: one row per figure, its value the constant
// in sim, at least two sources cited.
func TestFrontendSourcesTable(t *testing.T) {
	data, err := os.ReadFile("../../docs/fidelity.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "### The front end's sources\n")
	if !ok {
		t.Fatal(`docs/fidelity.md has no "The front end's sources" section`)
	}
	want := map[string]float64{
		"serial_us_per_prompt_token":     frontend.TokenizeUSPerPromptToken,
		"serial_ms_per_request":          frontend.ProfileSerialMSPerRequest,
		"handoff_ms":                     frontend.ProfileHandoffMS,
		"detokenize_us_per_output_token": frontend.ProfileDetokenizeUSPerOutputToken,
	}
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\| ([0-9.]+) (µs|ms) \\| (.+) \\|$")
	cite := regexp.MustCompile(`[\w.-]+/[\w.-]+#\d+|stackoverflow\.com/questions/\d+|zeromq-dev, \w+ \d{4}`)
	seen := map[string]bool{}
	for _, line := range strings.Split(after, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		field := m[1]
		v, _ := strconv.ParseFloat(m[2], 64)
		w, known := want[field]
		switch {
		case !known:
			t.Errorf("row %s: no such front-end figure", field)
		case v != w:
			t.Errorf("row %s: the table says %g, sim says %g", field, v, w)
		}
		if n := len(cite.FindAllString(m[4], -1)); n < 2 {
			t.Errorf("row %s cites %d sources, want at least 2", field, n)
		}
		seen[field] = true
	}
	for f := range want {
		if !seen[f] {
			t.Errorf("the table has no row for %s", f)
		}
	}
	// Each profile uses the figures of the table (vllm-v0 has no hand-off).
	for _, p := range frontend.Profiles {
		s := p.Server
		if s.SerialUSPerPromptToken != want["serial_us_per_prompt_token"] || s.SerialMSPerRequest != want["serial_ms_per_request"] ||
			s.DetokenizeUSPerOutputToken != want["detokenize_us_per_output_token"] || (s.HandoffMS != 0 && s.HandoffMS != want["handoff_ms"]) {
			t.Errorf("profile %s: %+v uses a figure the table does not give", p.Name, s)
		}
	}
}

// Through the CLI: --frontend names a profile; vllm-v0 lengthens steps
// (detokenization in the engine loop), vllm-v1 does not; an unknown name is
// a one-line error.
func TestRunFrontendProfiles(t *testing.T) {
	args := []string{"--requests", "40", "--rate", "4"}
	tpot := func(extra ...string) float64 {
		return runSummary(t, append(append([]string{}, args...), extra...)...)["tpot_ms"].(map[string]any)["p50"].(float64)
	}
	none, v1, v0 := tpot("--frontend", "none"), tpot("--frontend", "vllm-v1"), tpot("--frontend", "vllm-v0")
	if v1 > none*1.02 || v1 < none*0.98 || v0 < none*1.02 {
		t.Errorf("TPOT p50: none %.2f, vllm-v1 %.2f, vllm-v0 %.2f ms; want v1 ≈ none < v0", none, v1, v0)
	}
	r := execCLI(t, "run", "--frontend", "vllm-v3", "--requests", "2")
	if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, `server.frontend: unknown profile "vllm-v3"; valid: vllm-v1, vllm-v0, none`) {
		t.Errorf("--frontend vllm-v3: exit %d, stderr %q", r.code, r.stderr)
	}
}
