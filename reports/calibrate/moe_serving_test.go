package calibrate

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
)

// moeServingRow is one published benchmark of testdata/moe_serving.csv.
type moeServingRow struct {
	id, model, gpu, quant, source   string
	tp, maxModelLen, requests       int
	concurrency                     int
	inf                             bool
	rate                            float64
	inputLen, outputLen             int
	measured                        [3]float64 // TTFT, TPOT, ITL p50 ms; 0: not published
	expect                          [3]string  // in, miss, na
	vllm, hardware, server, command string
}

// moeBounds are the bounds on |simulated/measured − 1| for TTFT,
// TPOT and ITL p50.
var moeBounds = [3]float64{0.25, 0.20, 0.20}

func readMoEServing(t *testing.T, path string) []moeServingRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var rows []moeServingRow
	for n, rec := range recs[1:] {
		get := func(k string) string { return rec[col[k]] }
		num := func(k string) float64 {
			v, err := strconv.ParseFloat(get(k), 64)
			if err != nil {
				t.Fatalf("%s: row %d (%s): field %s: %v", path, n+1, get("id"), k, err)
			}
			return v
		}
		row := moeServingRow{id: get("id"), model: get("model"), gpu: get("gpu"), quant: get("quantization"),
			source: get("source"), tp: int(num("tp")), maxModelLen: int(num("max_model_len")), requests: int(num("requests")),
			concurrency: int(num("concurrency")), inputLen: int(num("input_len")), outputLen: int(num("output_len")),
			measured: [3]float64{num("ttft_ms"), num("tpot_ms"), num("itl_ms")},
			vllm:     get("vllm"), hardware: get("hardware"), server: get("server"), command: get("bench")}
		if get("rate") == "inf" {
			row.inf = true
		} else {
			row.rate = num("rate")
		}
		ex := strings.Fields(get("expect"))
		if len(ex) != 3 {
			t.Fatalf("%s: row %d (%s): expect: want three verdicts (TTFT TPOT ITL), got %q", path, n+1, row.id, get("expect"))
		}
		copy(row.expect[:], ex)
		rows = append(rows, row)
	}
	return rows
}

// simulateMoEServing runs one row's benchmark under itlsim's defaults with
// vLLM's CUDA graphs on, and returns the TTFT, TPOT and pooled ITL medians.
func simulateMoEServing(t *testing.T, row moeServingRow) [3]float64 {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Model, cfg.GPU, cfg.TP, cfg.Quantization = row.model, row.gpu, row.tp, row.quant
	cfg.Cost.EnforceEager = false
	cfg.MaxModelLen = row.maxModelLen
	cfg.Workload.MaxConcurrency = row.concurrency
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatalf("%s: %v", row.id, err)
	}
	reqs := make([]workloads.Request, row.requests)
	for i := range reqs {
		var at int64
		if !row.inf {
			at = int64(float64(i) / row.rate * 1e9) // evenly spaced at the rate
		}
		reqs[i] = workloads.Request{ID: i, Arrival: at, InputTokens: row.inputLen, OutputTokens: row.outputLen,
			Seed: workloads.RequestSeed(costcheckSeed, i)}
	}
	e, err := sim.NewFromSetup(setup, &workloads.Slice{Requests: reqs})
	if err != nil {
		t.Fatalf("%s: %v", row.id, err)
	}
	s := reports.Summarize(e.Run(), setup.Config.Metrics)
	return [3]float64{s.TTFT.P50, s.TPOT.P50, s.ITLPooled.P50}
}

// TestMoEServingValidation simulates each published MoE serving benchmark
// of testdata/moe_serving.csv and prints the table docs/fidelity.md shows
// (go test ./reports/calibrate -run TestMoEServingValidation -v). Each
// figure's verdict against the bounds must be the one the file
// and the docs state: a change to the model that moves a row in or out of
// its bound fails here until both are updated.
func TestMoEServingValidation(t *testing.T) {
	rows := readMoEServing(t, "testdata/moe_serving.csv")
	if len(rows) < 5 {
		t.Fatalf("%d rows, want at least 5", len(rows))
	}
	var b strings.Builder
	b.WriteString("| row | vLLM | measured TTFT / TPOT / ITL p50 (ms) | itlsim (ms) | error TTFT / TPOT / ITL |\n|:--|:--|--:|--:|--:|\n")
	in, total := 0, 0
	for _, row := range rows {
		got := simulateMoEServing(t, row)
		var meas, sims, errs [3]string
		for k := range 3 {
			sims[k] = fmt.Sprintf("%.1f", got[k])
			if row.measured[k] == 0 {
				meas[k], errs[k] = "–", "–"
				if row.expect[k] != "na" {
					t.Errorf("%s: figure %d not published, expect %q: want na", row.id, k, row.expect[k])
				}
				continue
			}
			meas[k] = fmt.Sprintf("%.1f", row.measured[k])
			e := got[k]/row.measured[k] - 1
			verdict := "miss"
			if math.Abs(e) <= moeBounds[k] {
				verdict = "in"
				in++
			}
			total++
			errs[k] = fmt.Sprintf("%+.1f %%", 100*e)
			if verdict == "miss" {
				errs[k] = "**" + errs[k] + "**"
			}
			if verdict != row.expect[k] {
				t.Errorf("%s: figure %d: simulated %.2f ms against measured %.2f (%+.1f %%): %s its bound of %.0f %%, the file says %s",
					row.id, k, got[k], row.measured[k], 100*e, verdict, 100*moeBounds[k], row.expect[k])
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", row.id, row.vllm,
			strings.Join(meas[:], " / "), strings.Join(sims[:], " / "), strings.Join(errs[:], " / "))
	}
	t.Logf("\n%s\n%d of %d published figures within the bounds (TTFT 25 %%, TPOT and ITL 20 %%)", b.String(), in, total)
}
