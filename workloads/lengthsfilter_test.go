package workloads

import (
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
