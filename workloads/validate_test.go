package workloads

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmpiricalMissingColumnQuotesLittle: a missing column's message quotes
// at most maxQuoted characters of the header, escaped, however long or
// binary the header is.
func TestEmpiricalMissingColumnQuotesLittle(t *testing.T) {
	dir := t.TempDir()
	var cols []string
	for i := range 100_000 {
		cols = append(cols, "col"+strings.Repeat("x", i%7))
	}
	wide := filepath.Join(dir, "wide.csv")
	if err := os.WriteFile(wide, []byte(strings.Join(cols, ",")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	binary := filepath.Join(dir, "binary.csv")
	data := make([]byte, 0, 4096)
	for i := range 4096 {
		if b := byte(i); b != '\n' && b != '\r' && b != '"' {
			data = append(data, b)
		}
	}
	if err := os.WriteFile(binary, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{wide, binary} {
		_, err := MustParseDist("empirical:" + path + ":x").Load()
		if err == nil {
			t.Fatalf("%s: no error", path)
		}
		msg := err.Error()
		if !strings.Contains(msg, "missing column x (the header is \"") || !strings.HasSuffix(msg, "\"…)") {
			t.Errorf("%s: error %.300q does not quote a cut header", path, msg)
		}
		if len(msg) > len(path)+4*maxQuoted+100 {
			t.Errorf("%s: error is %d bytes", path, len(msg))
		}
		for _, r := range msg {
			if r < ' ' || r == 0x7f {
				t.Errorf("%s: error holds the control character %U", path, r)
				break
			}
		}
	}
	if got := quoted("a,b"); got != `"a,b"` {
		t.Errorf("short header quoted as %s", got)
	}
}

// TestTargetRateRange: a target rate that would push arrivals past the
// clock, or below a nanosecond apart, is an error, not a silently clamped
// or collapsed trace.
func TestTargetRateRange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	trace := "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,5,1\n2023-11-16 18:15:47,5,1\n2023-11-16 18:15:49,5,1\n"
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		rate float64
		want string
	}{
		{1e-300, "beyond the simulator's clock"},
		{1e-12, "beyond the simulator's clock"},
		{1e308, "workload.target_rate: must be a rate in [0, 1e+09]"},
		{2e9, "workload.target_rate: must be a rate in [0, 1e+09]"},
	} {
		c := DefaultConfig()
		c.Trace, c.TargetRate = path, tt.rate
		if _, err := New(c, 1); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("target_rate %g: error %v, want %q", tt.rate, err, tt.want)
		}
	}
	// At the bounds' inside the rate is reached.
	for _, rate := range []float64{1e-6, 1e9} {
		got := replayOf(t, path, func(c *Config) { c.TargetRate = rate })
		span := float64(got[len(got)-1].Arrival - got[0].Arrival)
		if r := float64(len(got)-1) / (span / 1e9); r < rate*0.99 || r > rate*1.01 {
			t.Errorf("target_rate %g reached %g", rate, r)
		}
	}
}
