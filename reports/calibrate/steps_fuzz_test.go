package calibrate

import (
	"math"
	"strings"
	"testing"
)

// FuzzParseSteps: whatever the bytes, the step-timing reader returns an
// error or steps that a fit can use: a finite positive duration and no
// negative batch term (an overflowed product would show as one).
func FuzzParseSteps(f *testing.F) {
	for _, seed := range []string{
		"prefill_tokens,decode_seqs,decode_context,duration_ms\n512,0,0,31.5\n0,64,32768,12\n",
		"prefill_tokens,decode_seqs,decode_context,duration_ms,prefill_context,prefill_seqs\n256,8,4096,20,65536,2\n",
		"batch_num_prefill_tokens,batch_num_decode_tokens,batch_execution_time\n1024,0,0.05\n",
		"model,hardware,tensor_parallel,prompt_size,batch_size,token_size,prompt_time,token_time\nllama2-70b,a100-80gb,4,1500,8,250,180,30\n",
		"prefill_tokens,decode_seqs,decode_context,duration_ms\n1,2,3,NaN\n",
		"prefill_tokens,decode_seqs,decode_context,duration_ms\n1e9,1e9,1e9,1e9\n",
	} {
		f.Add([]byte(seed))
	}
	sel := Select{Model: "llama-2-70b", GPU: "a100-80gb", TP: 4}
	f.Fuzz(func(t *testing.T, data []byte) {
		steps, _, err := ParseSteps("f.csv", data, sel)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "f.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(steps) == 0 {
			t.Fatal("no error and no steps")
		}
		for _, s := range steps {
			if !(s.MS > 0) || math.IsInf(s.MS, 0) {
				t.Fatalf("line %d: duration %v ms", s.Line, s.MS)
			}
			b := s.Batch
			if b.PrefillSeqs < 0 || b.PrefillTokens < 0 || b.PrefillAttn < 0 || b.PrefillTokCtx < 0 ||
				b.PrefillContext < 0 || b.DecodeSeqs < 0 || b.DecodeContext < 0 {
				t.Fatalf("line %d: negative batch term %+v", s.Line, b)
			}
		}
	})
}
