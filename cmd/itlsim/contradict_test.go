package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContradictoryInputIsNamed: a measured file whose token counts
// contradict its chunks, and a trace row that gives a key twice, are not
// taken silently: an itlsim stream whose output_tokens disagrees with its
// chunk_tokens and a duplicate key are errors naming the line; a vLLM
// stream with more tokens than chunks (its TPOT is far below its gaps) is
// counted in a note under the table.
func TestContradictoryInputIsNamed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dupTrace := write("dup.jsonl", `{"timestamp": 0, "input_length": 100, "output_length": 10}
{"timestamp": 5, "input_length": 100, "output_length": 10, "input_length": 7}
`)
	dupRequests := write("dup-requests.jsonl", `{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5, "output_tokens": 6}
`)
	streams := write("s.jsonl", `{"id":0,"arrival_s":0,"output_tokens":50,"chunk_times_s":[0.1,0.2],"chunk_tokens":[1,1]}
`)
	dupStream := write("dup-s.jsonl", `{"id":0,"arrival_s":0,"chunk_times_s":[0.1,0.2]}
{"id":1,"arrival_s":0,"chunk_times_s":[0.1,0.2],"arrival_s":5}
`)
	dupVLLM := write("dup-v.json", `{"duration": 1, "output_lens": [3], "ttfts": [0.1], "itls": [[0.02, 0.02]],
 "TTFTs": [9], "errors": [""]}`)
	vllm := write("v.json", `{"duration": 1, "input_lens": [10, 10], "output_lens": [50, 3], "ttfts": [0.1, 0.1], "itls": [[0.1], [0.02, 0.02]], "errors": ["", ""]}`)

	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--workload", dupTrace, "--workload-format", "mooncake"}, []string{"dup.jsonl:2", "input_length", "twice"}},
		{[]string{"workload", "inspect", dupRequests}, []string{"dup-requests.jsonl:1", "output_tokens", "twice"}},
		{[]string{"analyze", streams}, []string{"s.jsonl", "line 1", "output_tokens 50", "chunk_tokens", "2"}},
		{[]string{"analyze", dupStream}, []string{"dup-s.jsonl", "line 2", `"arrival_s"`, "twice"}},
		{[]string{"analyze", dupVLLM}, []string{"dup-v.json", "line 2", `"TTFTs"`, "twice"}},
	} {
		r := execCLI(t, c.args...)
		if r.code == 0 {
			t.Errorf("%s: exit 0, want an error", strings.Join(c.args, " "))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr %q lacks %q", strings.Join(c.args, " "), r.stderr, w)
			}
		}
	}
	r := mustRunCLI(t, "analyze", vllm)
	if !strings.Contains(r.stdout, "1 stream records more output tokens than chunks") {
		t.Errorf("no note on the stream with 50 tokens in 2 chunks:\n%s", r.stdout)
	}
}
