package workloads

import (
	"os"
	"strings"
	"testing"
)

// vLLM's ShareGPT filter keeps prompt and output of at least 4 tokens, a
// prompt of at most 1024 and at most 2048 in all; "" keeps every pair.
func TestLengthsFilterVLLMShareGPT(t *testing.T) {
	l, err := ParseLengths(strings.NewReader("num_prefill_tokens,num_decode_tokens\n4,4\n3,10\n10,3\n1024,1024\n1025,1\n1000,1049\n"), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	all, err := l.Filter("t.csv", "")
	if err != nil || all.Len() != 6 {
		t.Fatalf("no filter: %d pairs, %v", all.Len(), err)
	}
	kept, err := l.Filter("t.csv", LengthFilterVLLMShareGPT)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]int
	for i := range kept.Len() {
		a, b := kept.At(i)
		got = append(got, [2]int{a, b})
	}
	if len(got) != 2 || got[0] != [2]int{4, 4} || got[1] != [2]int{1024, 1024} {
		t.Fatalf("kept %v, want [4 4] and [1024 1024]", got)
	}
}

// The figures docs/vllm-bench-aliases.md quotes for Sarathi-Serve's
// ShareGPT trace: vLLM's filter keeps 11,035 of its 30,731 pairs. Skipped
// without the shared data.
func TestShareGPTFilterOnSarathiTrace(t *testing.T) {
	const path = "../../shared/data/traces/sarathi_sharegpt_8k_filtered_stats_llama2_tokenizer.csv"
	l, err := ReadLengths(path)
	if err != nil {
		t.Skipf("no shared trace: %v", err)
	}
	kept, err := l.Filter(path, LengthFilterVLLMShareGPT)
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 30731 || kept.Len() != 11035 {
		t.Errorf("%d pairs, %d kept; the docs say 30,731 and 11,035", l.Len(), kept.Len())
	}
	doc, err := os.ReadFile("../docs/vllm-bench-aliases.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "keeps 11,035 of its 30,731 pairs") {
		t.Error("docs/vllm-bench-aliases.md no longer quotes the figures this test holds")
	}
}
