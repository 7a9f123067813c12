package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// With two cores a run reduces its ended streams on a second goroutine
// (sim's finisher); with one, on the engine's. The command line's output —
// the table, --json, --timelines and --streams — is the same bytes either
// way, for one replica and for a cluster.
func TestRunSameBytesOnOneCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, args := range [][]string{
		{"run", "--requests", "400", "--rate", "30"},
		{"run", "--replicas", "4", "--rate", "60", "--requests", "600", "--router", "least-outstanding,llm-d"},
	} {
		out := func(procs int) map[string][]byte {
			runtime.GOMAXPROCS(procs)
			dir := t.TempDir()
			a := append(args[:len(args):len(args)], "--json", filepath.Join(dir, "j.json"),
				"--timelines", filepath.Join(dir, "t.jsonl"), "--streams", filepath.Join(dir, "s.csv"))
			got := map[string][]byte{"stdout": []byte(mustRunCLI(t, a...).stdout)}
			for _, f := range []string{"j.json", "t.jsonl", "s.csv"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				got[f] = b
			}
			return got
		}
		two, one := out(2), out(1)
		for k, b := range two {
			if string(b) != string(one[k]) {
				t.Errorf("%v: %s differs between two cores and one (%d and %d bytes)", args, k, len(b), len(one[k]))
			}
		}
	}
}
