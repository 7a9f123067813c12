package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim/scenario"
)

// The printed configuration is a complete scenario file: read back, it
// resolves to the same configuration.
func TestPrintConfigRoundTrips(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"run", "--print-config", "--policy", "orca", "--rate", "9"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "policy: orca") || !strings.Contains(out.String(), "rate: 9") {
		t.Fatalf("flags not reflected:\n%s", out.String())
	}
	path := filepath.Join(t.TempDir(), "printed.yaml")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := scenario.Load(path, out.Bytes())
	if err != nil {
		t.Fatalf("printed config does not load: %v", err)
	}
	s, err := f.Config.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if code := Main([]string{"run", "--print-config", path}, &again, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if again.String() != out.String() {
		t.Errorf("printing the printed config changed it:\n%s\nvs\n%s", again.String(), out.String())
	}
	if !reflect.DeepEqual(s.Config, f.Config) {
		t.Errorf("resolving a resolved config changed it")
	}
}

// Millisecond flags take durations with units, as the delivery issue writes them.
func TestMillisecondFlagsTakeUnits(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"run", "--print-config", "--network", "mobile-4g", "--smoothing", "33ms", "--failover-ms", "1.5s"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"cadence_ms: 33", "watchdog_ms: 1500", "profile: mobile-4g"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("resolved config lacks %q", want)
		}
	}
	if code := Main([]string{"run", "--smoothing", "33 parsecs"}, &out, &errb); code == 0 {
		t.Error("a nonsense duration was accepted")
	}
}
