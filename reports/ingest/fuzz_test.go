package ingest_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
)

// fuzzParse is the property every importer holds on any input: no panic;
// an error names the file; a recording summarizes to finite figures whose
// counts add up.
func fuzzParse(t *testing.T, data []byte, f ingest.Format) {
	recs, err := ingest.Parse("fuzz.in", data, f)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "fuzz.in: ") {
			t.Fatalf("error %q does not name the file", err)
		}
		return
	}
	m := sim.DefaultConfig().Metrics
	for i := range recs {
		rec := &recs[i]
		res := rec.Result(m)
		s := reports.Summarize(res, m)
		failed, rejected := 0, 0
		for _, n := range rec.Failed {
			failed += n
		}
		for _, n := range rec.Rejected {
			rejected += n
		}
		if s.Finished != len(rec.Streams) || s.Requests != len(rec.Streams)+failed+rejected || s.Failed != failed || s.Rejected != rejected {
			t.Fatalf("run %q: finished %d requests %d failed %d rejected %d for %d streams, %d failed and %d rejected",
				rec.Name, s.Finished, s.Requests, s.Failed, s.Rejected, len(rec.Streams), failed, rejected)
		}
		for _, v := range []float64{s.TTFT.Mean, s.TTFT.P99, s.TPOT.Mean, s.E2EL.Max, s.ITLPooled.Mean, s.ITLPooled.P99,
			s.StreamP99ITL.P99, s.StreamMaxGap.Max, s.StreamJitter.Max, s.ITLGoodput, s.SLOGoodput, s.RequestsPerS} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("run %q: figure %v in %+v", rec.Name, v, s)
			}
		}
		reports.StreamRows(res)
		reports.Timeseries(res)
		reports.ITLByPosition(res)
		reports.WorstStreams(res)
	}
}

func addSeeds(f *testing.F, files ...string) {
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func FuzzVLLM(f *testing.F) {
	addSeeds(f, "testdata/vllm_small.json")
	f.Add([]byte(`{"ttfts": [0.1, 0.2], "itls": [[0.01], [-1]], "output_lens": [2, 1], "errors": ["", ""]}`))
	f.Add([]byte(`{"ttfts": [0.1], "itls": [[0.01]], "output_lens": [2], "latencies": [0.05], "start_times": [3]}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, data, ingest.FormatVLLM) })
}

func FuzzAIPerf(f *testing.F) {
	addSeeds(f, "testdata/aiperf_small.jsonl")
	f.Add([]byte(`{"metadata":{"timestamp_ns":-9223372036854775808},"metrics":{"ttft":{"value":1,"unit":"ms"}},"error":null}` + "\n" +
		`{"metadata":{"timestamp_ns":9223372036854775807},"metrics":{"ttft":{"value":1,"unit":"ms"}},"error":null}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, data, ingest.FormatAIPerf) })
}

func FuzzGuideLLM(f *testing.F) {
	addSeeds(f, "testdata/guidellm_v03.json", "testdata/guidellm_v04.json")
	// Keys match case-insensitively: two runs of no requests, whose error
	// once named the run and not the file.
	f.Add([]byte(`{"BenChmArks":[{"requests":{}},{"requests":{}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, data, ingest.FormatGuideLLM) })
}

func FuzzStreams(f *testing.F) {
	addSeeds(f, "testdata/streams_small.jsonl")
	f.Add([]byte(`{"id":0,"arrival_s":1e6,"chunk_times_s":[1e6,2e6],"output_tokens":-1}`))
	f.Add([]byte(`{"id":0,"arrival_s":0,"rejected":"queue-full"}` + "\n" + `{"id":1,"arrival_s":0,"chunk_times_s":[1,2],"error":"connection"}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, data, ingest.FormatStreams) })
}

// FuzzDetect feeds any input to format detection and the importer it picks.
func FuzzDetect(f *testing.F) {
	addSeeds(f, "testdata/vllm_small.json", "testdata/aiperf_small.jsonl", "testdata/guidellm_v03.json", "testdata/streams_small.jsonl")
	f.Add([]byte(`{"scenario": {}, "runs": []}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, data, "") })
}
