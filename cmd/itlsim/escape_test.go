package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNamesFromFilesAreEscaped: run and class names read from files reach
// stdout with terminal control characters escaped (an ESC sequence could
// clear the screen or rewrite what was printed), and a '|' or a newline in
// a name keeps a markdown table's shape.
func TestNamesFromFilesAreEscaped(t *testing.T) {
	dir := t.TempDir()
	streams := filepath.Join(dir, "s.jsonl")
	lines := `{"run":"a|b\u001b[2J","id":0,"arrival_s":0,"chunk_times_s":[0.1,0.2]}
{"run":"c\nd","id":0,"arrival_s":0,"chunk_times_s":[0.1,0.3]}
`
	if err := os.WriteFile(streams, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "t.csv")
	csv := "arrival_s,input_tokens,output_tokens,class\n0,10,5,\"x|y\x1b]0;title\x07\"\n0.1,10,5,\"p\nq\"\n"
	if err := os.WriteFile(trace, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"analyze", streams},
		{"analyze", streams, "--output", "markdown"},
		{"workload", "inspect", trace},
		{"run", "--workload", trace, "--format", "markdown"},
		{"run", "--workload", trace},
	} {
		r := mustRunCLI(t, args...)
		name := strings.Join(args, " ")
		for _, c := range []string{"\x1b", "\x07"} {
			if strings.Contains(r.stdout, c) {
				t.Errorf("%s: stdout holds the control character %q:\n%s", name, c, r.stdout)
			}
		}
		if !strings.Contains(name, "markdown") {
			continue
		}
		want := -1
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			if !strings.HasPrefix(line, "|") {
				continue
			}
			n := strings.Count(line, "|") - strings.Count(line, `\|`)
			if want < 0 {
				want = n
			} else if n != want {
				t.Errorf("%s: table line %q has %d cell borders, the header %d", name, line, n, want)
			}
		}
		if want < 0 {
			t.Errorf("%s: no markdown table:\n%s", name, r.stdout)
		}
	}
}
