package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
)

// runOf returns the named run of a story's document.
func runOf(t *testing.T, doc reports.Document, name string) reports.Run {
	t.Helper()
	for _, r := range doc.Runs {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no run named %q", name)
	return reports.Run{}
}

// A cluster of one replica is the plain run, whatever its router: the same
// table, from flags or from a scenario's cluster section.
func TestClusterOfOneIsThePlainRun(t *testing.T) {
	plain := mustRunCLI(t, "run", "--requests", "200", "--noise-cv", "0.2", "--hiccup-rate", "0.5")
	for _, args := range [][]string{
		{"--replicas", "1", "--router", "llm-d", "--router-staleness", "250ms"},
		{"--replicas", "1", "--router", "random"},
	} {
		got := mustRunCLI(t, append([]string{"run", "--requests", "200", "--noise-cv", "0.2", "--hiccup-rate", "0.5"}, args...)...)
		if got.stdout != plain.stdout {
			t.Errorf("%v: output differs from the plain run:\n%s\nwant:\n%s", args, got.stdout, plain.stdout)
		}
	}
	scen := writeScenario(t, "one.yaml", "workload: {requests: 200}\ncost: {noise_cv: 0.2, hiccup_rate_per_s: 0.5}\ncluster: {replicas: 1, router: {policy: vllm-dp}}\n")
	if got := mustRunCLI(t, "run", scen); got.stdout != plain.stdout {
		t.Errorf("a scenario with cluster: {replicas: 1} differs from the plain run")
	}
	if strings.Contains(plain.stdout, "REPLICAS") {
		t.Error("a single replica prints a REPLICAS section")
	}
}

func TestClusterJSONAndTable(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "c.json")
	r := mustRunCLI(t, "run", "--requests", "300", "--rate", "40", "--replicas", "3", "--router", "least-outstanding,vllm-dp", "--json", jsonPath)
	for _, want := range []string{"REPLICAS", "least-outstanding (0)", "vllm-dp (100)", "replica-2: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Name     string           `json:"name"`
			Summary  map[string]any   `json:"summary"`
			Replicas []map[string]any `json:"replicas"`
			Cluster  map[string]any   `json:"cluster"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, run := range doc.Runs {
		if len(run.Replicas) != 3 {
			t.Fatalf("%s: %d replicas in JSON, want 3", run.Name, len(run.Replicas))
		}
		routed := 0.0
		for _, rep := range run.Replicas {
			for _, k := range []string{"name", "pool", "gpu", "tp", "routed", "summary", "busy_share", "kv_utilization_mean", "load"} {
				if _, ok := rep[k]; !ok {
					t.Errorf("%s: replica lacks %q", run.Name, k)
				}
			}
			routed += rep["routed"].(float64)
			checkSummaryKeys(t, run.Name, rep["summary"].(map[string]any))
		}
		if routed != 300 || run.Summary["requests"].(float64) != 300 {
			t.Errorf("%s: replicas were routed %g requests, the summary counts %v; want 300", run.Name, routed, run.Summary["requests"])
		}
		for _, k := range []string{"replicas", "router", "imbalance", "staleness_ms", "decisions"} {
			if _, ok := run.Cluster[k]; !ok {
				t.Errorf("%s: cluster lacks %q", run.Name, k)
			}
		}
		if imb := run.Cluster["imbalance"].(float64); imb < 1 || imb > 3 {
			t.Errorf("%s: imbalance %g", run.Name, imb)
		}
	}
	// The same cluster run again: identical bytes.
	again := filepath.Join(dir, "again.json")
	r2 := mustRunCLI(t, "run", "--requests", "300", "--rate", "40", "--replicas", "3", "--router", "least-outstanding,vllm-dp", "--json", again)
	raw2, _ := os.ReadFile(again)
	if r2.stdout != r.stdout || string(raw2) != string(raw) {
		t.Error("two runs of one cluster scenario differ")
	}
	// The HTML report draws the per-replica load.
	html := filepath.Join(dir, "c.html")
	mustRunCLI(t, "run", "--requests", "200", "--replicas", "2", "--html", html)
	page, _ := os.ReadFile(html)
	if !strings.Contains(string(page), `id="chart-replicas-0"`) || !strings.Contains(string(page), "imbalance") {
		t.Error("the HTML report lacks the per-replica load chart or the imbalance")
	}
}

func TestClusterBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		file string
		want string
	}{
		{args: []string{"--router", "nope", "--replicas", "2"}, want: `cluster.router.policy: unknown router "nope"; valid: least-kv, least-outstanding, llm-d, power-of-two, random, round-robin, sglang-cache-aware, vllm-dp`},
		{args: []string{"--replicas", "0"}, want: "cluster.replicas: must be in [1, 4096], got 0"},
		{args: []string{"--router-staleness", "-3ms"}, want: "cluster.router.staleness_ms"},
		{file: "cluster:\n  pools:\n    - {replicas: 2}\n", want: "cluster.pools[0].name: every pool needs a name"},
		{file: "cluster:\n  replicas: 3\n  pools:\n    - {name: a, replicas: 2}\n", want: "cluster.replicas: with pools, give each pool's replicas instead"},
		{file: "cluster:\n  pools:\n    - {name: a, replicas: 1, gpu: nope}\n", want: `cluster.pools[0] (a): gpu: unknown preset "nope"`},
		{file: "cluster:\n  pools:\n    - {name: a, replicas: 1, colour: red}\n", want: "colour"},
		// Disaggregation.
		{args: []string{"--replicas", "4", "--set", "cluster.prefill_decode=1:2"}, want: `cluster.prefill_decode: "1:2" splits 3 replicas, but cluster.replicas is 4`},
		{args: []string{"--replicas", "4", "--set", "cluster.prefill_decode=0:4"}, want: "cluster.prefill_decode: expected P:D (replicas of each role, both ≥ 1) or mixed"},
		{args: []string{"--replicas", "2", "--set", "cluster.kv_link.preset=ib"}, want: `cluster.kv_link.preset: unknown link "ib"; valid: nvlink, rdma, tcp`},
		{args: []string{"--replicas", "2", "--set", "cluster.kv_link.latency_us=-1"}, want: "cluster.kv_link.latency_us: must be in [0, 1e7]"},
		{args: []string{"--replicas", "2", "--set", "cluster.decode_router.policy=nope"}, want: `cluster.decode_router.policy: unknown router "nope"`},
		{file: "cluster:\n  pools:\n    - {name: a, replicas: 1, role: prefil}\n    - {name: b, replicas: 1, role: decode}\n", want: `cluster.pools[0].role: must be mixed, prefill or decode, got "prefil"`},
		{file: "cluster:\n  pools:\n    - {name: a, replicas: 1, role: prefill}\n", want: "cluster.pools: a prefill pool needs at least one decode pool"},
		{file: "cluster:\n  pools:\n    - {name: a, replicas: 1, role: prefill}\n    - {name: b, replicas: 1, role: decode}\n    - {name: c, replicas: 1}\n", want: "every pool needs role prefill or decode"},
		{file: "cluster:\n  replicas: 2\n  prefill_decode: \"1:1\"\n  pools:\n    - {name: a, replicas: 2}\n", want: "cluster.prefill_decode: splits cluster.replicas; with pools, give each pool a role instead"},
	} {
		args := append([]string{"run", "--requests", "10"}, tc.args...)
		if tc.file != "" {
			args = append(args, writeScenario(t, "bad.yaml", tc.file))
		}
		r := execCLI(t, args...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "goroutine") {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", args, r.code, r.stderr, tc.want)
		}
	}
}

func TestStoryClusterHeavyTail(t *testing.T) {
	doc := runStory(t, "cluster-heavy-tail")
	rr, rnd := runOf(t, doc, "round-robin").Summary, runOf(t, doc, "random").Summary
	for _, name := range []string{"least-outstanding", "power-of-two"} {
		s := runOf(t, doc, name).Summary
		for _, base := range []struct {
			name string
			s    reports.Summary
		}{{"round-robin", rr}, {"random", rnd}} {
			if s.TTFT.P99 >= base.s.TTFT.P99/2 || s.StreamP99ITL.P99 >= base.s.StreamP99ITL.P99 {
				t.Errorf("%s: p99 TTFT %.0f ms, p99 of stream p99 ITL %.1f ms; want below half of %s's %.0f ms and below its %.1f ms",
					name, s.TTFT.P99, s.StreamP99ITL.P99, base.name, base.s.TTFT.P99, base.s.StreamP99ITL.P99)
			}
		}
		if p := s.Preemptions.Recompute; p >= rr.Preemptions.Recompute {
			t.Errorf("%s: %d preemptions, want fewer than round-robin's %d", name, p, rr.Preemptions.Recompute)
		}
	}
	// Round-robin's tail is one replica's queue: the worst replica's p99
	// TTFT is far above the best's.
	lo, hi := 1e18, 0.0
	for _, rep := range runOf(t, doc, "round-robin").Replicas {
		lo, hi = min(lo, rep.Summary.TTFT.P99), max(hi, rep.Summary.TTFT.P99)
	}
	if hi < 10*lo {
		t.Errorf("round-robin replicas' p99 TTFT from %.0f to %.0f ms; want one replica's queue far behind", lo, hi)
	}
}

func TestStoryClusterStaleness(t *testing.T) {
	doc := runStory(t, "cluster-staleness")
	live := runOf(t, doc, "staleness_ms=0").Summary
	s100 := runOf(t, doc, "staleness_ms=100").Summary
	s500 := runOf(t, doc, "staleness_ms=500").Summary
	// Past vLLM's 100 ms the per-stream tail no longer grows (within 2 %
	// either way, with or without the front end's tokenization): a stale
	// snapshot is worse than a live one, not 500 ms than 100.
	if !(live.StreamP99ITL.P99 < s100.StreamP99ITL.P99 && live.StreamP99ITL.P99 < s500.StreamP99ITL.P99 &&
		math.Abs(s500.StreamP99ITL.P99/s100.StreamP99ITL.P99-1) < 0.05) {
		t.Errorf("p99 of per-stream p99 ITL: %.1f, %.1f, %.1f ms at 0, 100, 500 ms; want a stale snapshot above the live one and 500 ms within 5 %% of 100 ms",
			live.StreamP99ITL.P99, s100.StreamP99ITL.P99, s500.StreamP99ITL.P99)
	}
	if !(live.TTFT.P99 < s100.TTFT.P99 && s100.TTFT.P99 <= s500.TTFT.P99) {
		t.Errorf("p99 TTFT: %.1f, %.1f, %.1f ms; want rising with the snapshot's age", live.TTFT.P99, s100.TTFT.P99, s500.TTFT.P99)
	}
	for _, r := range doc.Runs {
		if r.Cluster == nil || r.Cluster.Router != "vllm-dp" {
			t.Errorf("%s: cluster %+v", r.Name, r.Cluster)
		}
	}
}

func TestStoryClusterPrefix(t *testing.T) {
	doc := runStory(t, "cluster-prefix")
	rr := runOf(t, doc, "round-robin").Summary
	for _, name := range []string{"llm-d", "sglang-cache-aware"} {
		s := runOf(t, doc, name).Summary
		if s.PrefixCacheHitRate < 3*rr.PrefixCacheHitRate || s.TTFT.Mean >= rr.TTFT.Mean || s.TTFT.P50 >= 0.75*rr.TTFT.P50 {
			t.Errorf("%s: hit rate %.3f, TTFT mean %.0f p50 %.0f ms; round-robin %.3f, %.0f, %.0f: want 3× the hits, a lower mean and a median below 3/4",
				name, s.PrefixCacheHitRate, s.TTFT.Mean, s.TTFT.P50, rr.PrefixCacheHitRate, rr.TTFT.Mean, rr.TTFT.P50)
		}
	}
}

// Generated shared prefixes (no block ids in the workload): the routers'
// indexes name a prompt's blocks as the KV cache does, so a prefix keeps
// going where it is cached (issue 27: at least 15 points above
// round-robin's hit rate).
func TestStoryClusterGeneratedPrefix(t *testing.T) {
	doc := runStory(t, "cluster-generated-prefix")
	rr := runOf(t, doc, "round-robin").Summary
	for _, name := range []string{"llm-d", "sglang-cache-aware"} {
		s := runOf(t, doc, name).Summary
		if s.PrefixCacheHitRate < rr.PrefixCacheHitRate+0.15 || s.TTFT.Mean >= rr.TTFT.Mean {
			t.Errorf("%s: hit rate %.3f, TTFT mean %.0f ms; round-robin %.3f, %.0f: want 15 points more hits and a lower mean",
				name, s.PrefixCacheHitRate, s.TTFT.Mean, rr.PrefixCacheHitRate, rr.TTFT.Mean)
		}
	}
}

// llm-d's precise scorer reads the replicas' caches; on the same workload
// it must route at least as well as the approximate index it replaces.
func TestStoryClusterKVEvents(t *testing.T) {
	doc := runStory(t, "cluster-kv-events")
	ap, pr := runOf(t, doc, "approximate").Summary, runOf(t, doc, "precise").Summary
	if pr.PrefixCacheHitRate < ap.PrefixCacheHitRate || pr.PrefixCacheHitRate < 0.5 {
		t.Errorf("precise hit rate %.3f, approximate %.3f: want precise ≥ approximate and ≥ 0.5", pr.PrefixCacheHitRate, ap.PrefixCacheHitRate)
	}
}

func TestStoryClusterMixed(t *testing.T) {
	doc := runStory(t, "cluster-mixed")
	rr := runOf(t, doc, "round-robin")
	for _, name := range []string{"least-outstanding", "power-of-two"} {
		r := runOf(t, doc, name)
		if r.Summary.TTFT.P99 >= rr.Summary.TTFT.P99/4 || r.Summary.TTFT.Mean >= rr.Summary.TTFT.Mean/4 {
			t.Errorf("%s: TTFT p99 %.0f, mean %.0f ms; round-robin %.0f, %.0f: want both below a quarter",
				name, r.Summary.TTFT.P99, r.Summary.TTFT.Mean, rr.Summary.TTFT.P99, rr.Summary.TTFT.Mean)
		}
		// It sends the A100s fewer requests than the H100s.
		var h100, a100 int
		for _, rep := range r.Replicas {
			switch rep.Pool {
			case "h100":
				h100 += rep.Routed
			case "a100":
				a100 += rep.Routed
			}
		}
		if a100 >= h100*3/4 {
			t.Errorf("%s: %d requests to the A100s, %d to the H100s; want the slower GPUs sent fewer", name, a100, h100)
		}
	}
	for _, rep := range rr.Replicas {
		if rep.Routed != 750 {
			t.Errorf("round-robin sent %s %d requests, want 750", rep.Name, rep.Routed)
		}
	}
}

// The running gauge of the time series is a time-weighted mean: a step is
// charged to every bucket it spans, so no bucket's mean exceeds the
// batch limit (it did when a whole step was charged to the bucket it
// started in: 1115 running against max_num_seqs 1024).
func TestTimeseriesRunningWithinMaxNumSeqs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ts.json")
	mustRunCLI(t, "run", "--rate", "1000", "--requests", "1500", "--max-num-seqs", "64",
		"--set", "metrics.timeseries_interval_s=0.005", "--replicas", "1,2", "--json", path)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Name       string `json:"name"`
			Timeseries []struct {
				TS      float64 `json:"t_s"`
				Running float64 `json:"running"`
			} `json:"timeseries"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Runs {
		limit := 64.0
		if strings.Contains(r.Name, "2") {
			limit = 128 // two replicas of 64
		}
		peak := 0.0
		for _, p := range r.Timeseries {
			peak = max(peak, p.Running)
			if p.Running > limit+1e-9 {
				t.Fatalf("%s: %.1f running at t=%.3f s, above max_num_seqs %g", r.Name, p.Running, p.TS, limit)
			}
		}
		if peak < limit/2 {
			t.Errorf("%s: peak running %.1f; the run should saturate the batch", r.Name, peak)
		}
	}
}

// TestStoryDisaggSplit: on 4 GPUs, splitting prefill from decode removes
// the prefill-interference stalls of mixed replicas (p99 of per-stream p99
// ITL down), pays in TTFT, and which split is best depends on the
// prompt/output ratio.
func TestStoryDisaggSplit(t *testing.T) {
	doc := runStory(t, "disagg-split")
	const long, short = "lognormal:6000,3000,1000,16000/", "lognormal:1500,750,256,4000/"
	mixed := runOf(t, doc, long+"mixed")
	if mixed.Summary.StallMSByCause["prefill-interference"] <= 0 || mixed.Cluster.KVTransfer != nil || len(mixed.Pools) != 0 {
		t.Errorf("mixed: prefill-interference stalls %g ms, transfers %v, %d pools; want stalls, no transfers, no pools",
			mixed.Summary.StallMSByCause["prefill-interference"], mixed.Cluster.KVTransfer, len(mixed.Pools))
	}
	for _, split := range []string{"1:3", "2:2"} {
		r := runOf(t, doc, long+split)
		s := r.Summary
		if s.StreamP99ITL.P99 >= mixed.Summary.StreamP99ITL.P99/5 || s.StallMSByCause["prefill-interference"] != 0 {
			t.Errorf("%s: p99 of stream p99 ITL %.1f ms, prefill-interference stalls %g ms; mixed %.1f: want below a fifth and none",
				split, s.StreamP99ITL.P99, s.StallMSByCause["prefill-interference"], mixed.Summary.StreamP99ITL.P99)
		}
		if s.TTFT.P50 <= mixed.Summary.TTFT.P50 || s.TTFT.P99 <= mixed.Summary.TTFT.P99 {
			t.Errorf("%s: TTFT p50 %.0f p99 %.0f ms; mixed %.0f, %.0f: want the transfer paid in TTFT", split, s.TTFT.P50, s.TTFT.P99, mixed.Summary.TTFT.P50, mixed.Summary.TTFT.P99)
		}
		tr := r.Cluster.KVTransfer
		if tr == nil || tr.Transfers != int64(s.Finished) || tr.TimeMS.Mean <= 0 || len(r.Pools) != 2 || r.Pools[0].Role != "prefill" || r.Pools[1].Role != "decode" ||
			r.Pools[0].HandedOff != r.Pools[1].Received || r.Pools[1].Summary.Finished != s.Finished {
			t.Fatalf("%s: transfers %+v, pools %+v; want one transfer per finished request, a prefill and a decode pool that agree", split, tr, r.Pools)
		}
	}
	// Long prompts: one prefill replica is the bottleneck, one decode
	// replica too; 2:2 has both tails lowest.
	l13, l22, l31 := runOf(t, doc, long+"1:3").Summary, runOf(t, doc, long+"2:2").Summary, runOf(t, doc, long+"3:1").Summary
	if l13.TTFT.P99 <= 10*l22.TTFT.P99 || l31.StreamP99ITL.P99 <= 10*l22.StreamP99ITL.P99 {
		t.Errorf("long prompts: TTFT p99 1:3 %.0f vs 2:2 %.0f ms; stream p99 ITL p99 3:1 %.1f vs 2:2 %.1f: want 2:2 ten times better on each",
			l13.TTFT.P99, l22.TTFT.P99, l31.StreamP99ITL.P99, l22.StreamP99ITL.P99)
	}
	// Short prompts: decode-heavy, so the decode-heavy split wins on ITL.
	s13, s22, s31 := runOf(t, doc, short+"1:3").Summary, runOf(t, doc, short+"2:2").Summary, runOf(t, doc, short+"3:1").Summary
	if s13.StreamP99ITL.P99 >= s22.StreamP99ITL.P99 || s22.StreamP99ITL.P99 >= s31.StreamP99ITL.P99 {
		t.Errorf("short prompts: stream p99 ITL p99 1:3 %.1f, 2:2 %.1f, 3:1 %.1f ms: want it rising with fewer decode replicas",
			s13.StreamP99ITL.P99, s22.StreamP99ITL.P99, s31.StreamP99ITL.P99)
	}
}

// TestCapacityOverTheSplit: a capacity search can vary the prefill:decode
// split of four GPUs; with long prompts and a per-stream ITL term, 2:2
// sustains several times the rate of four mixed replicas.
func TestCapacityOverTheSplit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cap.json")
	mustRunCLI(t, "capacity", "--requests", "300", "--seeds", "1", "--replicas", "4", "--router", "least-outstanding",
		"--set", "workload.rate=10", "--set", "workload.input_len=lognormal:6000,3000,1000,16000",
		"--set", "workload.output_len=lognormal:250,150,16,1000",
		"--vary", "cluster.prefill_decode=mixed,2:2", "--slo", "stream-p99-itl:p99<=50ms", "--json", path)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Capacity []struct {
			Config  string  `json:"config"`
			MaxRate float64 `json:"max_rate"`
		} `json:"capacity"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Capacity) != 2 || doc.Capacity[0].Config != "mixed" || doc.Capacity[1].Config != "2:2" ||
		doc.Capacity[1].MaxRate < 3*doc.Capacity[0].MaxRate {
		t.Errorf("capacity %+v: want mixed and 2:2, 2:2 at least 3× mixed's rate", doc.Capacity)
	}
}
