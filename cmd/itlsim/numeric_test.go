package main

import (
	"path/filepath"
	"testing"
)

// TestCalibrateStepsRefusesNonFinite: a step-timing file with a NaN, an
// infinite or a negative duration is refused naming the line and column,
// instead of fitting a model to it.
func TestCalibrateStepsRefusesNonFinite(t *testing.T) {
	dir := t.TempDir()
	head := "prefill_tokens,decode_seqs,decode_context,duration_ms\n512,0,0,30\n0,64,4096,12\n"
	var cases []badInputCase
	for _, c := range []struct{ name, row string }{
		{"nan", "0,32,2048,NaN\n"},
		{"inf", "0,32,2048,Inf\n"},
		{"negative", "0,32,2048,-3\n"},
	} {
		p := filepath.Join(dir, c.name+".csv")
		writeFile(t, p, head+c.row)
		cases = append(cases, badInputCase{c.name, []string{"calibrate", "--steps", p}, 0,
			[]string{c.name + ".csv: line 4: duration_ms: expected a number in [0, 1e+09]"}})
	}
	checkBadInput(t, cases)
}
