package workloads

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// traceDir holds the public traces of shared/data, reached from the
// package directory; tests that need them skip where it is absent.
const traceDir = "../../shared/data/traces"

// needTrace returns the path of a public trace, skipping the test if absent.
func needTrace(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join(traceDir, name)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s absent", path)
	}
	return path
}

// replayOf returns every request of a trace replayed with default settings.
func replayOf(t testing.TB, path string, modify func(c *Config)) []Request {
	t.Helper()
	c := DefaultConfig()
	c.Trace = path
	if modify != nil {
		modify(&c)
	}
	return Collect(mustNew(t, c, 1), 0)
}

// median returns numpy's median of the values f picks.
func median(reqs []Request, f func(Request) int) float64 {
	v := make([]int, len(reqs))
	for i, r := range reqs {
		v[i] = f(r)
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return float64(v[n/2])
	}
	return float64(v[n/2-1]+v[n/2]) / 2
}

func inputOf(r Request) int  { return r.InputTokens }
func outputOf(r Request) int { return r.OutputTokens }

// TestAzureTraces replays Azure's 2023 traces and checks the facts
// shared/data/README.md gives for them.
func TestAzureTraces(t *testing.T) {
	for _, tt := range []struct {
		file            string
		n               int
		spanS           float64
		inP50, outP50   float64
		firstIn, lastIn int
	}{
		{"AzureLLMInferenceTrace_conv_2023.csv", 19366, 3501.721937, 1020, 129, 374, 0},
		{"AzureLLMInferenceTrace_code_2023.csv", 8819, 3435.948056, 1469, 13, 4808, 0},
	} {
		t.Run(tt.file, func(t *testing.T) {
			path := needTrace(t, tt.file)
			if f, err := DetectFormat(path); err != nil || f != FormatAzure {
				t.Errorf("DetectFormat = %q, %v, want azure", f, err)
			}
			reqs := replayOf(t, path, nil)
			if len(reqs) != tt.n {
				t.Fatalf("%d requests, want %d", len(reqs), tt.n)
			}
			if reqs[0].Arrival != 0 || reqs[0].InputTokens != tt.firstIn {
				t.Errorf("first request %+v, want arrival 0 and %d prompt tokens", reqs[0], tt.firstIn)
			}
			// The 2023 files have 7 fractional digits: 100 ns resolution.
			if got := float64(reqs[len(reqs)-1].Arrival) / 1e9; math.Abs(got-tt.spanS) > 1e-6 {
				t.Errorf("last arrival %.7f s, want %.6f s", got, tt.spanS)
			}
			if got := median(reqs, inputOf); got != tt.inP50 {
				t.Errorf("median context %g, want %g", got, tt.inP50)
			}
			if got := median(reqs, outputOf); got != tt.outP50 {
				t.Errorf("median generated %g, want %g", got, tt.outP50)
			}
			for i, r := range reqs {
				if r.ID != i || r.Seed != RequestSeed(1, i) || (i > 0 && r.Arrival < reqs[i-1].Arrival) {
					t.Fatalf("request %d: %+v", i, r)
				}
			}
		})
	}
}

func TestParseAzureTime(t *testing.T) {
	base := int64(1700158546) * 1e9 // 2023-11-16 18:15:46 UTC
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"2023-11-16 18:15:46.6805900", base + 680590000, true},
		{"2023-11-16 18:15:46", base, true},
		{"2023-11-16T18:15:46.5", base + 5e8, true},
		{"2023-11-16 18:15:46.680590+00:00", base + 680590000, true},
		{"2023-11-16 18:15:46+00:00", base, true},
		{"2023-11-16 18:15:46Z", base, true},
		{"2023-11-16 19:15:46+01:00", base, true},
		{"2023-11-16 17:15:46.000000001-0100", base + 1, true},
		{"2023-11-16 18:15:46.1234567891", base + 123456789, true},
		{" 2023-11-16 18:15:46 ", base, true},
		{"2023-11-16 18:15", 0, false},
		{"2023-02-29 00:00:00", 0, false},
		{"2024-02-29 00:00:00", 1709164800 * 1e9, true},
		{"2023-13-01 00:00:00", 0, false},
		{"2023-11-16 24:00:00", 0, false},
		{"2023-11-16 18:15:46.", 0, false},
		{"2023-11-16 18:15:46+00", 0, false},
		{"2023-11-16 18:15:46+0a:00", 0, false},
		{"2023-11-16 18:15:46 UTC", 0, false},
		{"1699999999", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseAzureTime(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseAzureTime(%q) = %d, %v, want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMooncakeTraces(t *testing.T) {
	for _, tt := range []struct {
		file              string
		n                 int
		meanIn, meanOut   float64
		lastMS            int64
		firstBlocks       []uint64
		distinctBlocksMin int
	}{
		{"mooncake_fast25_conversation_trace.jsonl", 12031, 12035, 343, 3536999, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, 182790},
		{"mooncake_fast25_synthetic_trace.jsonl", 3993, 15325, 149, 1022025, nil, 43924},
	} {
		t.Run(tt.file, func(t *testing.T) {
			path := needTrace(t, tt.file)
			if f, err := DetectFormat(path); err != nil || f != FormatMooncake {
				t.Errorf("DetectFormat = %q, %v, want mooncake", f, err)
			}
			reqs := replayOf(t, path, nil)
			if len(reqs) != tt.n {
				t.Fatalf("%d requests, want %d", len(reqs), tt.n)
			}
			var sumIn, sumOut float64
			distinct := map[uint64]bool{}
			for _, r := range reqs {
				sumIn += float64(r.InputTokens)
				sumOut += float64(r.OutputTokens)
				// One id per started 512-token block of the prompt.
				if want := (r.InputTokens + 511) / 512; len(r.PrefixBlocks) != want || r.PrefixBlockTokens != 512 {
					t.Fatalf("request %d: %d prompt tokens, %d block ids of %d tokens", r.ID, r.InputTokens, len(r.PrefixBlocks), r.PrefixBlockTokens)
				}
				if cap(r.PrefixBlocks) != len(r.PrefixBlocks) {
					t.Fatalf("request %d: PrefixBlocks has spare capacity: appending would clobber a neighbour", r.ID)
				}
				for _, id := range r.PrefixBlocks {
					distinct[id] = true
				}
			}
			n := float64(len(reqs))
			if math.Abs(sumIn/n-tt.meanIn) > 1 || math.Abs(sumOut/n-tt.meanOut) > 1 {
				t.Errorf("mean lengths %.1f, %.1f, want %.0f, %.0f", sumIn/n, sumOut/n, tt.meanIn, tt.meanOut)
			}
			if got := reqs[len(reqs)-1].Arrival; got != tt.lastMS*1e6 {
				t.Errorf("last arrival %d ns, want %d ms", got, tt.lastMS)
			}
			if len(distinct) != tt.distinctBlocksMin {
				t.Errorf("%d distinct block ids, want %d", len(distinct), tt.distinctBlocksMin)
			}
			if tt.firstBlocks != nil && !slices.Equal(reqs[0].PrefixBlocks, tt.firstBlocks) {
				t.Errorf("first request's ids %v, want %v", reqs[0].PrefixBlocks, tt.firstBlocks)
			}
		})
	}
}

// TestLengthTracesAsWorkload replays the length-only traces (format
// detected) with generated arrivals.
func TestLengthTracesAsWorkload(t *testing.T) {
	for _, file := range []string{
		"sarathi_sharegpt_8k_filtered_stats_llama2_tokenizer.csv",
		"vidur_arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv",
	} {
		path := needTrace(t, file)
		if f, err := DetectFormat(path); err != nil || f != FormatLengths {
			t.Errorf("%s: DetectFormat = %q, %v, want lengths", file, f, err)
		}
		table, err := ReadLengths(path)
		if err != nil {
			t.Fatal(err)
		}
		maxIn, maxOut := table.Max()
		reqs := replayOf(t, path, func(c *Config) { c.Requests, c.Arrival, c.Rate = 500, ArrivalConstant, 2 })
		if len(reqs) != 500 || reqs[499].Arrival != 249_500_000_000 {
			t.Fatalf("%s: %d requests, last at %d ns; want 500, the last at 249.5 s", file, len(reqs), reqs[len(reqs)-1].Arrival)
		}
		for _, r := range reqs {
			if r.InputTokens > maxIn || r.OutputTokens > maxOut {
				t.Fatalf("%s: request %+v exceeds the file's maxima", file, r)
			}
		}
	}
}

// writeFile writes content into dir/name and returns the path.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTraceFormatsSmall(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, format, content string
		want                  []Request // ID, Seed filled below
	}{
		{"a.csv", FormatAzure, "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 00:00:01.5+00:00,10,2\n2024-05-10 00:00:00+00:00,20,3",
			[]Request{{Arrival: 0, InputTokens: 20, OutputTokens: 3}, {Arrival: 1.5e9, InputTokens: 10, OutputTokens: 2}}},
		{"m.jsonl", FormatMooncake, `{"hash_ids": [1, 2], "output_length": 4, "input_length": 600, "timestamp": 1000.5, "x": {"y": [null]}}` + "\n" +
			`{"timestamp": 2000, "input_length": 5, "output_length": 1}` + "\n",
			[]Request{{Arrival: 0, InputTokens: 600, OutputTokens: 4, PrefixBlocks: []uint64{1, 2}, PrefixBlockTokens: 512},
				{Arrival: 999.5e6, InputTokens: 5, OutputTokens: 1}}},
		{"v.csv", FormatVidur, "arrived_at,num_prefill_tokens,num_decode_tokens,num_total_tokens\n0.25,100,5,105\n1.000000001,7.0,3,10\n",
			[]Request{{Arrival: 0, InputTokens: 100, OutputTokens: 5}, {Arrival: 750000001, InputTokens: 7, OutputTokens: 3}}},
		{"i.jsonl", FormatItlsim, `{"arrival_s":0.5,"input_tokens":9,"output_tokens":8,"class":"rag","priority":-2,"prefix_blocks":[5],"prefix_block_tokens":16}` + "\n",
			[]Request{{Arrival: 0, InputTokens: 9, OutputTokens: 8, Class: "rag", Priority: -2, PrefixBlocks: []uint64{5}, PrefixBlockTokens: 16}}},
		{"i.csv", FormatItlsim, "output_tokens,input_tokens,arrival_s\n8,9,2\n1,2,3.5\n",
			[]Request{{Arrival: 0, InputTokens: 9, OutputTokens: 8}, {Arrival: 1.5e9, InputTokens: 2, OutputTokens: 1}}},
	}
	for _, tt := range tests {
		path := writeFile(t, dir, tt.name, tt.content)
		if f, err := DetectFormat(path); err != nil || f != tt.format {
			t.Errorf("%s: DetectFormat = %q, %v, want %s", tt.name, f, err, tt.format)
		}
		for i := range tt.want {
			tt.want[i].ID, tt.want[i].Seed = i, RequestSeed(1, i)
		}
		got := replayOf(t, path, func(c *Config) { c.Format = tt.format })
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

// TestUnsortedTrace: a trace out of time order is sorted (stably) in
// memory and shifted to start at 0.
func TestUnsortedTrace(t *testing.T) {
	path := writeFile(t, t.TempDir(), "u.csv", "arrival_s,input_tokens,output_tokens,class\n3,1,1,c\n1,1,1,a\n2,1,1,b\n1,1,1,a2\n")
	var classes []string
	var arrivals []int64
	for i, r := range replayOf(t, path, nil) {
		if r.ID != i || r.Seed != RequestSeed(1, i) {
			t.Errorf("request %d: ID %d, Seed %x", i, r.ID, r.Seed)
		}
		classes, arrivals = append(classes, r.Class), append(arrivals, r.Arrival)
	}
	if want := []string{"a", "a2", "b", "c"}; !slices.Equal(classes, want) {
		t.Errorf("order %v, want %v", classes, want)
	}
	if want := []int64{0, 0, 1e9, 2e9}; !slices.Equal(arrivals, want) {
		t.Errorf("arrivals %v, want %v", arrivals, want)
	}
}

func TestTraceErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		want          string // after "PATH:"
	}{
		{"a1.csv", "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46,1\n", `1: missing column GeneratedTokens (the header is "TIMESTAMP,ContextTokens")`},
		{"a2.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,1\n2023-11-16 25:15:46,1,1\n",
			`3: TIMESTAMP: expected a time like "2023-11-16 18:15:46.6805900" or "2024-05-10 00:00:00.009930+00:00", got "2023-11-16 25:15:46"`},
		{"a3.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,-5,1\n", `2: ContextTokens: expected a positive integer ≤ 2147483647, got "-5"`},
		{"a4.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,5,0\n", `2: GeneratedTokens: expected a positive integer ≤ 2147483647, got "0"`},
		{"a5.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,5,1\n2023-11-16 18:15:47,5\n", "3: expected 3 fields as in the header, got 2"},
		{"a6.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n\"2023,5,1\n", `2: malformed CSV: extraneous or missing " in quoted-field`},
		{"a7.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n", " no requests"},
		{"m1.jsonl", `{"timestamp": 0, "input_length": 5, "output_length": 1}` + "\n" + `{"timestamp": 1, "input_length": 5,` + "\n",
			"2: malformed JSON at column 36: expected a quoted key"},
		{"m2.jsonl", `{"timestamp": 0, "input_length": 5}`, "1: missing field output_length"},
		{"m3.jsonl", `{"timestamp": 0, "input_length": -4, "output_length": 1}`, `1: input_length: expected a positive integer ≤ 2147483647, got "-4"`},
		{"m4.jsonl", `{"timestamp": "0", "input_length": 4, "output_length": 1}`, "1: timestamp: malformed JSON at column 15: expected a number"},
		{"m5.jsonl", `{"timestamp": -1, "input_length": 4, "output_length": 1}`, "1: timestamp: expected milliseconds in [0, 1e+11], got -1"},
		{"m6.jsonl", `{"timestamp": 0, "input_length": 4, "output_length": 1, "hash_ids": [1, -2]}`, "1: hash_ids: element 2: expected an integer in [0, 2^64), got -2"},
		{"m7.jsonl", `{"timestamp": 0, "input_length": 4, "output_length": 1} x`, `1: malformed JSON at column 57: unexpected 'x' after the object`},
		{"v1.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\nabc,1,1\n", `2: arrived_at: expected seconds in [0, 1e+08], got "abc"`},
		{"v2.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n1,1.5,1\n", `2: num_prefill_tokens: expected a positive integer, got "1.5"`},
		{"i1.csv", "arrival_s,input_tokens,output_tokens,prefix_blocks\n0,1,1,3 4\n", "2: prefix_block_tokens: required with prefix_blocks"},
		{"i2.csv", "arrival_s,input_tokens,output_tokens,priority\n0,1,1,high\n", `2: priority: expected an integer, got "high"`},
		{"i3.csv", "arrival_s,input_tokens,output_tokens,prefix_blocks,prefix_block_tokens\n0,1,1,3 x,16\n", `2: prefix_blocks: element 2: expected an integer in [0, 2^64), got "x"`},
		{"i4.jsonl", `{"arrival_s": 0, "input_tokens": 1, "output_tokens": 1, "class": 7}`, "1: class: malformed JSON at column 66: expected a string"},
		{"i5.jsonl", `{"arrival_s": 1e9, "input_tokens": 1, "output_tokens": 1}`, "1: arrival_s: expected seconds in [0, 1e+08], got 1e9"},
		{"i6.jsonl", `{"arrival_s": 0, "input_tokens": 1, "output_tokens": 1}` + "\n[1, 2]", "2: malformed JSON at column 1: expected '{', got '['"},
	}
	for _, tt := range tests {
		path := writeFile(t, dir, tt.name, tt.content)
		c := DefaultConfig()
		c.Trace = path
		_, err := New(c, 1)
		if want := path + ":" + tt.want; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: New error = %v\nwant %s", tt.name, err, want)
		}
	}
	// Errors that name the setting.
	c := DefaultConfig()
	c.Trace = filepath.Join(dir, "absent.csv")
	if _, err := New(c, 1); err == nil || !strings.HasPrefix(err.Error(), "workload.trace: open ") {
		t.Errorf("missing trace: %v", err)
	}
	c.Trace = writeFile(t, dir, "what.csv", "a,b,c\n1,2,3\n")
	if _, err := New(c, 1); err == nil || !strings.Contains(err.Error(), `what.csv:1: cannot tell the format from the first line "a,b,c"; set workload.format`) {
		t.Errorf("unknown format: %v", err)
	}
	c.Trace = writeFile(t, dir, "ok.jsonl", `{"timestamp": 0, "input_length": 5, "output_length": 1}`)
	c.WindowS = Window{10, 20}
	if _, err := New(c, 1); err == nil || !strings.Contains(err.Error(), "spans 0.000 s, so no request arrives in [10, 20) s") {
		t.Errorf("window past the end: %v", err)
	}
}

// TestItlsimRoundTrip writes a workload in itlsim's format, JSON lines and
// CSV, and replays it: every field comes back, arrivals to the nanosecond.
func TestItlsimRoundTrip(t *testing.T) {
	c := DefaultConfig()
	c.Arrival, c.CV, c.Requests, c.RateCurve = ArrivalGamma, 3, 2000, "sine:30,0.8"
	want := Collect(mustNew(t, c, 9), 0)
	for i := range want {
		r := &want[i]
		r.Class = []string{"", "chat", "rag, \"long\""}[i%3]
		r.Priority = i%5 - 2
		if i%4 == 0 {
			r.PrefixBlocks = []uint64{uint64(i), 1 << 63, 7}
			r.PrefixBlockTokens = 16
		}
	}
	// Arrival 0 is the replay's origin, as for the generated workload.
	dir := t.TempDir()
	for _, name := range []string{"reqs.jsonl", "reqs.csv"} {
		path := filepath.Join(dir, name)
		var buf bytes.Buffer
		n, err := WriteRequests(NewRequestWriterFor(&buf, path), &Slice{Requests: want})
		if err != nil || n != len(want) {
			t.Fatalf("%s: WriteRequests = %d, %v", name, n, err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		rc := DefaultConfig()
		rc.Trace = path
		got := Collect(mustNew(t, rc, 9), 0)
		if !reflect.DeepEqual(got, want) {
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%s: request %d:\ngot  %+v\nwant %+v", name, i, got[i], want[i])
				}
			}
			t.Fatalf("%s: %d requests back, want %d", name, len(got), len(want))
		}
	}
}

func TestTransforms(t *testing.T) {
	path := needTrace(t, "AzureLLMInferenceTrace_conv_2023.csv")
	all := replayOf(t, path, nil)

	t.Run("time_scale", func(t *testing.T) {
		got := replayOf(t, path, func(c *Config) { c.TimeScale = 2 })
		for i := range all {
			if want := int64(math.Round(float64(all[i].Arrival) / 2)); got[i].Arrival != want || got[i].InputTokens != all[i].InputTokens {
				t.Fatalf("request %d at %d ns, want %d", i, got[i].Arrival, want)
			}
		}
	})
	t.Run("window", func(t *testing.T) {
		var want []Request
		for _, r := range all {
			if r.Arrival >= 600e9 && r.Arrival < 1200e9 {
				r.Arrival -= 600e9
				r.ID, r.Seed = len(want), RequestSeed(1, len(want))
				want = append(want, r)
			}
		}
		got := replayOf(t, path, func(c *Config) { c.WindowS = Window{600, 1200} })
		if len(want) < 3000 || !reflect.DeepEqual(got, want) {
			t.Errorf("window [600, 1200): %d requests, want the %d of the trace in it, shifted", len(got), len(want))
		}
	})
	t.Run("sample", func(t *testing.T) {
		got := replayOf(t, path, func(c *Config) { c.Sample = 0.25 })
		// Binomial: mean 4841.5, sd 60.
		if n := len(got); math.Abs(float64(n)-0.25*float64(len(all))) > 250 {
			t.Errorf("kept %d of %d, want about a quarter", n, len(all))
		}
		if again := replayOf(t, path, func(c *Config) { c.Sample = 0.25 }); !reflect.DeepEqual(got, again) {
			t.Errorf("sampling with the same seed kept different requests")
		}
	})
	t.Run("target_rate", func(t *testing.T) {
		got := replayOf(t, path, func(c *Config) { c.TargetRate = 20; c.WindowS = Window{0, 1800} })
		rate := float64(len(got)-1) / (float64(got[len(got)-1].Arrival-got[0].Arrival) / 1e9)
		if math.Abs(rate-20)/20 > 1e-6 {
			t.Errorf("rate %.6f requests/s, want 20", rate)
		}
	})
	t.Run("cap", func(t *testing.T) {
		got := replayOf(t, path, func(c *Config) { c.CapTokens = 2048 })
		capped := 0
		for i, r := range got {
			a := all[i]
			switch {
			case a.InputTokens+a.OutputTokens <= 2048:
				if r.InputTokens != a.InputTokens || r.OutputTokens != a.OutputTokens {
					t.Fatalf("request %d changed under the cap: %+v from %+v", i, r, a)
				}
			default:
				capped++
				if r.InputTokens != min(a.InputTokens, 2047) || r.InputTokens+r.OutputTokens != min(2048, r.InputTokens+a.OutputTokens) {
					t.Fatalf("request %d capped to %d + %d from %d + %d", i, r.InputTokens, r.OutputTokens, a.InputTokens, a.OutputTokens)
				}
			}
		}
		if capped < 1000 {
			t.Errorf("only %d requests exceeded 2048 tokens", capped)
		}
		c := DefaultConfig()
		c.CapToContext = true
		if got := c.CapAtContext(4096).CapTokens; got != 4096 {
			t.Errorf("CapAtContext(4096) = %d, want 4096", got)
		}
		c.CapTokens = 1000
		if got := c.CapAtContext(4096).CapTokens; got != 1000 {
			t.Errorf("CapAtContext(4096) with cap 1000 = %d, want 1000", got)
		}
	})
}

// TestTransformGenerated applies the transformations to a generated
// workload.
func TestTransformGenerated(t *testing.T) {
	c := DefaultConfig()
	c.Requests, c.DurationS, c.Rate, c.Arrival = 0, 100, 10, ArrivalConstant
	c.WindowS, c.TimeScale = Window{10, 20}, 0.5
	got := Collect(mustNew(t, c, 3), 0)
	if len(got) != 100 {
		t.Fatalf("%d requests, want the 100 of [10, 20) s", len(got))
	}
	for i, r := range got {
		if want := int64(i) * 2e8; r.Arrival != want || r.ID != i || r.Seed != RequestSeed(3, i) {
			t.Fatalf("request %d: %+v, want arrival %d (100 ms gaps stretched 2×)", i, r, want)
		}
	}
}

func TestDetectFormat(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, content, want string }{
		{"x.csv", "\ufeff TIMESTAMP , ContextTokens,GeneratedTokens\r\n", FormatAzure},
		{"x.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n", FormatVidur},
		{"x.csv", "num_prefill_tokens,num_decode_tokens,pd_ratio\n", FormatLengths},
		{"x.csv", "arrival_s,input_tokens,output_tokens\n", FormatItlsim},
		{"x.jsonl", "\n", ""},
		{"x.jsonl", `{"arrival_s":0,"input_tokens":1,"output_tokens":1}`, FormatItlsim},
		{"x.txt", `{"timestamp":0}`, FormatMooncake},
		{"x.jsonl", `{"time":0}`, ""},
		{"chunk-0-trace.csv", "", FormatServeGen},
		{"chunk-0-dataset.json", "", FormatServeGen},
		{"x.csv", "a,b\n", ""},
	} {
		path := writeFile(t, dir, tt.name, tt.content)
		got, err := DetectFormat(path)
		if got != tt.want || (tt.want == "") != (err != nil) {
			t.Errorf("DetectFormat(%s with %q) = %q, %v, want %q", tt.name, tt.content, got, err, tt.want)
		}
	}
}

func TestTraceConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *Config)
		want   string
	}{
		{"both files", func(c *Config) { c.Trace, c.LengthsFile = "a", "b" }, "workload.trace: set trace or lengths_file, not both"},
		{"blank trace", func(c *Config) { c.Trace = " " }, `workload.trace: must name a file, got " "`},
		{"format alone", func(c *Config) { c.Format = FormatAzure }, `workload.format: applies to a trace; set trace too`},
		{"unknown format", func(c *Config) { c.Trace, c.Format = "a", "parquet" },
			`workload.format: unknown trace format "parquet"; valid: azure, itlsim, lengths, mooncake, servegen, vidur`},
		{"time scale", func(c *Config) { c.TimeScale = -1 }, "workload.time_scale: must be in [0.001, 1000] (0 means 1), got -1"},
		{"window", func(c *Config) { c.WindowS = Window{5, 5} }, "workload.window_s: expected 0 ≤ START < END seconds, got [5, 5]"},
		{"sample", func(c *Config) { c.Sample = 1.5 }, "workload.sample: must be a probability in (0, 1] (0 keeps all), got 1.5"},
		{"target and scale", func(c *Config) { c.TargetRate, c.TimeScale = 5, 2 }, "workload.target_rate: set target_rate or time_scale, not both"},
		{"cap 1", func(c *Config) { c.CapTokens = 1 }, "workload.cap_tokens: must be 0 (no cap) or in [2, 2147483647]"},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.modify(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate() = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
	// A trace needs neither lengths nor a bound.
	c := Config{Rate: 1, Trace: "t.csv"}
	if err := c.Validate(); err != nil {
		t.Errorf("bare trace: %v", err)
	}
	c.Format = FormatLengths
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "workload.requests: one of requests and duration_s") {
		t.Errorf("lengths trace without a bound: %v", err)
	}
}

// BenchmarkReplay streams the public traces: New checks the file, then the
// replay reads it again. Reported per request.
func BenchmarkReplay(b *testing.B) {
	for _, file := range []string{"AzureLLMInferenceTrace_conv_2023.csv", "mooncake_fast25_conversation_trace.jsonl"} {
		b.Run(file, func(b *testing.B) {
			path := needTrace(b, file)
			c := DefaultConfig()
			c.Trace = path
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				src := mustNew(b, c, 1)
				var r Request
				for src.Next(&r) {
					n++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/request")
		})
	}
}
