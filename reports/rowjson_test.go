package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// TestRowJSONIsMarshalIndent: the hand-written row encoder writes the bytes
// json.MarshalIndent writes, over random rows with every optional field
// present or absent, strings that need escaping, floats of every
// magnitude (exponent forms, -0, integers), and refuses what it refuses.
func TestRowJSONIsMarshalIndent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	strs := []string{"", "finished", "kv-full", `a "quoted" <name> & more`, "tab\there", "ünïcode", "line\u2028sep", "back\\slash", "\x00nul"}
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-7, 1.5e-6, 1e-6, 9.99e20, 1e21, 3.2e25, -4.5e-9, 123456.789, 1.0 / 3, 17.000000000000004, 1e300, math.SmallestNonzeroFloat64}
	f := func() float64 {
		if rng.IntN(3) == 0 {
			return floats[rng.IntN(len(floats))]
		}
		return (rng.Float64() - 0.3) * math.Pow(10, float64(rng.IntN(30)-10))
	}
	p := func() *float64 {
		if rng.IntN(3) == 0 {
			return nil
		}
		v := f()
		return &v
	}
	for trial := range 3000 {
		row := StreamRow{ID: rng.IntN(1 << 40), Status: strs[rng.IntN(len(strs))], RejectReason: strs[rng.IntN(len(strs))],
			ArrivalS: f(), InputTokens: rng.IntN(5000), OutputTokens: rng.IntN(5000) - 10, TTFTMS: f(), TPOTMS: f(), E2ELMS: f(),
			Chunks: rng.IntN(300), ITLMeanMS: f(), ITLP50MS: f(), ITLP90MS: f(), ITLP99MS: f(), MaxGapMS: f(), JitterRatio: f(),
			Stalls: rng.IntN(5), StallMS: f(), Preemptions: rng.IntN(3), Class: strs[rng.IntN(len(strs))], QoE: p(), Fluidity: p(), FluidRate: p()}
		switch trial % 3 {
		case 1:
			row.StallCauses = []string{}
		case 2:
			for range 1 + rng.IntN(3) {
				row.StallCauses = append(row.StallCauses, strs[rng.IntN(len(strs))])
			}
		}
		want, err := json.MarshalIndent(&row, "        ", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRowJSON(nil, &row, "        ")
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("row %d: got (err %v)\n%s\nwant\n%s", trial, err, got, want)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		row := StreamRow{TTFTMS: bad}
		_, want := json.MarshalIndent(&row, "", "  ")
		if _, got := appendRowJSON(nil, &row, ""); got == nil || want == nil || got.Error() != want.Error() {
			t.Errorf("%v: got error %v, want %v", bad, got, want)
		}
	}
}
