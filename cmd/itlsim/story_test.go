package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim/cost"
)

// update rewrites the golden files of the story tests:
//
//	go test ./cmd/itlsim -run TestStory -update
var update = flag.Bool("update", false, "rewrite golden files")

// runStory runs testdata/stories/NAME.yaml, compares its markdown table
// with NAME.md (rewritten under -update) and returns the JSON document.
func runStory(t *testing.T, name string) reports.Document {
	t.Helper()
	scen := filepath.Join("testdata", "stories", name+".yaml")
	jsonPath := filepath.Join(t.TempDir(), "out.json")
	var out, errb bytes.Buffer
	if code := Main([]string{"run", scen, "--format", "markdown", "--json", jsonPath}, &out, &errb); code != 0 {
		if strings.Contains(errb.String(), "no such file") && strings.Contains(errb.String(), "shared/data") {
			t.Skipf("public data absent: %s", errb.String())
		}
		t.Fatalf("itlsim run %s: exit %d: %s", scen, code, errb.String())
	}
	golden := filepath.Join("testdata", "stories", name+".md")
	got := "<!-- itlsim run " + scen + " --format markdown; rewrite with: go test ./cmd/itlsim -run TestStory -update -->\n" + out.String()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s changed; if intended, rerun with -update and review the diff.\ngot:\n%s", golden, got)
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc reports.Document
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func runByName(t *testing.T, doc reports.Document, name string) reports.Summary {
	t.Helper()
	for _, r := range doc.Runs {
		if r.Name == name {
			return r.Summary
		}
	}
	t.Fatalf("no run named %q", name)
	return reports.Summary{}
}

func TestStoryLongPrompts(t *testing.T) {
	doc := runStory(t, "long-prompts")
	pf, ch := runByName(t, doc, "prefill-first"), runByName(t, doc, "chunked")

	// One budgeted chunked step: 512 prefill tokens at ~2,600 tokens of
	// context plus the decodes running beside them.
	m, _ := cost.LookupModel("llama-3.1-8b")
	g, _ := cost.LookupGPU("h100-sxm-80gb")
	rl, err := cost.NewRoofline(m, g, 1, cost.DefaultRoofline())
	if err != nil {
		t.Fatal(err)
	}
	var b cost.Batch
	b.AddPrefill(2600, 512)
	for range 32 {
		b.AddDecode(3000)
	}
	stepMS := float64(rl.StepNS(&b)) / 1e6

	if ch.StreamP99ITL.P99 > 1.5*stepMS {
		t.Errorf("chunked: p99 of per-stream p99 ITL %.1f ms, want near one budgeted step (≤ 1.5 × %.1f ms)", ch.StreamP99ITL.P99, stepMS)
	}
	// A 2,600-token prefill of Llama-3.1-8B on an H100 takes ~60 ms; under
	// prefill-first most streams' worst gap is at least that.
	if pf.StreamMaxGap.P50 < 60 {
		t.Errorf("prefill-first: median stream max gap %.1f ms, want ≥ 60 ms (a long prefill)", pf.StreamMaxGap.P50)
	}
	if pf.StreamP99ITL.P90 < 3*ch.StreamP99ITL.P90 {
		t.Errorf("prefill-first p90 of per-stream p99 ITL %.1f ms, want ≥ 3 × chunked's %.1f ms", pf.StreamP99ITL.P90, ch.StreamP99ITL.P90)
	}
	if pf.UnstableStreamShare < 0.5 || ch.UnstableStreamShare > 0.05 {
		t.Errorf("unstable shares: prefill-first %.2f (want ≥ 0.5), chunked %.2f (want ≤ 0.05)", pf.UnstableStreamShare, ch.UnstableStreamShare)
	}
	if pf.StallMSByCause["prefill-interference"] <= 0 || ch.Stalls != 0 {
		t.Errorf("stalls: prefill-first prefill-interference %.1f ms (want > 0); chunked %d stalls (want 0)",
			pf.StallMSByCause["prefill-interference"], ch.Stalls)
	}
	// Pooled ITL hides it: the medians are the same.
	if d := pf.ITLPooled.P50 / ch.ITLPooled.P50; d < 0.8 || d > 1.25 {
		t.Errorf("pooled p50 ITL differs more than expected: %.1f vs %.1f ms", pf.ITLPooled.P50, ch.ITLPooled.P50)
	}
}

func TestStoryKVPressure(t *testing.T) {
	doc := runStory(t, "kv-pressure")
	al, rs := runByName(t, doc, "always"), runByName(t, doc, "kv-reserve")
	if al.Preemptions.Recompute == 0 || al.StallMSByCause["kv-recompute"] <= 0 {
		t.Errorf("always: %d recompute preemptions, %.1f ms kv-recompute stalls; want both > 0", al.Preemptions.Recompute, al.StallMSByCause["kv-recompute"])
	}
	if rs.Preemptions.Recompute+rs.Preemptions.Swap != 0 || rs.StallMSByCause["kv-recompute"] != 0 {
		t.Errorf("kv-reserve: %+v preemptions, want none", rs.Preemptions)
	}
	if rs.TTFT.Mean <= al.TTFT.Mean {
		t.Errorf("kv-reserve mean TTFT %.0f ms, want above always's %.0f ms (it trades TTFT for no preemption)", rs.TTFT.Mean, al.TTFT.Mean)
	}
	if rs.StreamMaxGap.Max >= al.StreamMaxGap.Max {
		t.Errorf("kv-reserve worst gap %.0f ms, want below always's %.0f ms", rs.StreamMaxGap.Max, al.StreamMaxGap.Max)
	}
}

func TestStorySwapVsRecompute(t *testing.T) {
	doc := runStory(t, "swap-vs-recompute")
	perPreemption := func(s reports.Summary, cause string) float64 {
		n := s.Preemptions.Recompute + s.Preemptions.Swap
		if n == 0 {
			t.Fatalf("no preemptions in %+v", s.Preemptions)
		}
		return s.StallMSByCause[cause] / float64(n)
	}
	rFast := runByName(t, doc, "recompute/host_link_gbps=64")
	rSlow := runByName(t, doc, "recompute/host_link_gbps=4")
	sFast := runByName(t, doc, "swap/host_link_gbps=64")
	sSlow := runByName(t, doc, "swap/host_link_gbps=4")
	if !reflect.DeepEqual(rFast.E2EL, rSlow.E2EL) {
		t.Errorf("recompute depends on the host link: %+v vs %+v", rFast.E2EL, rSlow.E2EL)
	}
	if sFast.Preemptions.Swap == 0 || sFast.SwapBytes == 0 {
		t.Fatalf("swap run did not swap: %+v, %d bytes", sFast.Preemptions, sFast.SwapBytes)
	}
	rc, sf, ss := perPreemption(rFast, "kv-recompute"), perPreemption(sFast, "kv-swap"), perPreemption(sSlow, "kv-swap")
	if !(sf < rc && rc < ss) {
		t.Errorf("stall ms per preemption: swap@64GB/s %.1f, recompute %.1f, swap@4GB/s %.1f; want swap fast < recompute < swap slow", sf, rc, ss)
	}
}

// positionOf returns the run's ITL-by-position row holding token pos.
func positionOf(t *testing.T, doc reports.Document, run string, pos int) reports.PositionRow {
	t.Helper()
	for _, r := range doc.Runs {
		if r.Name != run {
			continue
		}
		for _, p := range r.ITLByPosition {
			if p.From <= pos && (pos <= p.To || p.To == 0) {
				return p
			}
		}
	}
	t.Fatalf("run %q has no ITL row for token %d", run, pos)
	return reports.PositionRow{}
}

func TestStorySpecOutOfDistribution(t *testing.T) {
	doc := runStory(t, "spec-ood")
	none := runByName(t, doc, "none/window=0")
	spec := runByName(t, doc, "draft-model/window=0")
	fb := runByName(t, doc, "draft-model/window=8")
	const early, middle = 40, 200 // in distribution (< 20 % of 400 tokens); out of it
	nE, nM := positionOf(t, doc, "none/window=0", early), positionOf(t, doc, "none/window=0", middle)
	sE, sM := positionOf(t, doc, "draft-model/window=0", early), positionOf(t, doc, "draft-model/window=0", middle)
	fM := positionOf(t, doc, "draft-model/window=8", middle)

	// In distribution, speculation is a speed-up of about 2× per token.
	if sE.PerTokenMeanMS > 0.6*nE.PerTokenMeanMS {
		t.Errorf("early tokens: %.2f ms/token with speculation, %.2f without; want a speed-up of at least 1/0.6", sE.PerTokenMeanMS, nE.PerTokenMeanMS)
	}
	// Out of distribution it is a slow-down, in the middle of responses,
	// and each visible update takes longer.
	if sM.PerTokenMeanMS < 1.2*nM.PerTokenMeanMS {
		t.Errorf("middle tokens: %.2f ms/token with speculation, %.2f without; want a slow-down of at least 1.2×", sM.PerTokenMeanMS, nM.PerTokenMeanMS)
	}
	if sM.ITLP99MS < 1.5*nM.ITLP99MS || spec.StreamP99ITL.P50 < 1.5*none.StreamP99ITL.P50 {
		t.Errorf("p99 ITL mid-response %.1f vs %.1f ms, per-stream p99 %.1f vs %.1f ms: want speculation 1.5× higher",
			sM.ITLP99MS, nM.ITLP99MS, spec.StreamP99ITL.P50, none.StreamP99ITL.P50)
	}
	// Over whole responses the slow-down wins: streams generate more slowly.
	if spec.TPOT.Mean <= none.TPOT.Mean {
		t.Errorf("TPOT %.2f ms with speculation, %.2f without: want slower", spec.TPOT.Mean, none.TPOT.Mean)
	}
	// Fallback restores both: whole responses are no slower than without
	// speculation, and the middle runs close to plain-decode speed (each
	// retry after the cooldown costs a window of poor verify steps).
	if fM.PerTokenMeanMS > 1.12*nM.PerTokenMeanMS || fM.PerTokenMeanMS >= sM.PerTokenMeanMS || fb.TPOT.Mean > none.TPOT.Mean {
		t.Errorf("with fallback: middle %.2f ms/token (plain %.2f), TPOT %.2f ms (plain %.2f); want both restored",
			fM.PerTokenMeanMS, nM.PerTokenMeanMS, fb.TPOT.Mean, none.TPOT.Mean)
	}
	if fb.Spec == nil || fb.Spec.FallbackStreams == 0 {
		t.Errorf("no stream fell back: %+v", fb.Spec)
	}
	// The stall table names the rejected work, and fallback cuts it.
	if spec.StallMSByCause["spec-rejection"] <= 0 || fb.StallMSByCause["spec-rejection"] >= spec.StallMSByCause["spec-rejection"] {
		t.Errorf("spec-rejection stall ms: %.1f without fallback, %.1f with; want > 0 and cut by fallback",
			spec.StallMSByCause["spec-rejection"], fb.StallMSByCause["spec-rejection"])
	}
	if none.Spec != nil || spec.Spec.AcceptanceRate <= 0 {
		t.Errorf("summary.spec: %v without speculation; acceptance %v with", none.Spec, spec.Spec)
	}
}

func TestStoryPrefixCache(t *testing.T) {
	doc := runStory(t, "prefix-cache")
	off, on := runByName(t, doc, "false"), runByName(t, doc, "true")
	if off.PrefixCacheHitRate != 0 || on.PrefixCacheHitRate < 0.02 || on.PrefixCacheEvictions == 0 {
		t.Errorf("hit rates %.3f off, %.3f on (%d evictions); want 0, ≥ 0.02 and evictions", off.PrefixCacheHitRate, on.PrefixCacheHitRate, on.PrefixCacheEvictions)
	}
	// Without caching the GPU cannot keep up: the queue grows and TTFT
	// reaches minutes; with it the run keeps up with the arrivals.
	if on.TTFT.P50*10 > off.TTFT.P50 || on.RequestsPerS < 0.95*0.6 || off.RequestsPerS > 0.9*0.6 {
		t.Errorf("TTFT p50 %.0f ms on vs %.0f off; throughput %.3f on vs %.3f off req/s", on.TTFT.P50, off.TTFT.P50, on.RequestsPerS, off.RequestsPerS)
	}
	if 2*on.StallMSByCause["prefill-interference"] > off.StallMSByCause["prefill-interference"] {
		t.Errorf("prefill-interference stalls %.0f ms on vs %.0f off: want at least halved", on.StallMSByCause["prefill-interference"], off.StallMSByCause["prefill-interference"])
	}
}

func TestStoryDelivery(t *testing.T) {
	doc := runStory(t, "delivery")
	none := runByName(t, doc, "cadence_ms=0/watchdog_ms=0")
	smooth := runByName(t, doc, "cadence_ms=33/watchdog_ms=0")
	fail := runByName(t, doc, "cadence_ms=0/watchdog_ms=1500")
	// Smoothing: steadier streams, paid for in TTFT and E2EL.
	if smooth.StreamJitter.P50 >= none.StreamJitter.P50/2 || smooth.StreamP99ITL.P50 >= none.StreamP99ITL.P50 {
		t.Errorf("smoothing: median jitter %.1f (none %.1f), median stream p99 ITL %.1f ms (none %.1f); want both lower",
			smooth.StreamJitter.P50, none.StreamJitter.P50, smooth.StreamP99ITL.P50, none.StreamP99ITL.P50)
	}
	if smooth.TTFT.Mean < none.TTFT.Mean+200 || smooth.E2EL.Mean <= none.E2EL.Mean || smooth.Delivery.StartupDelayMS != 250 {
		t.Errorf("smoothing: TTFT %.0f ms (none %.0f), E2EL %.0f ms (none %.0f), start-up delay %.0f ms; want the price visible",
			smooth.TTFT.Mean, none.TTFT.Mean, smooth.E2EL.Mean, none.E2EL.Mean, smooth.Delivery.StartupDelayMS)
	}
	// Failover: the longest gaps are cut near the watchdog plus the
	// backup's time to first token; streams finished by another model are
	// coherence breaks.
	if fail.Delivery.Failovers == 0 || fail.Delivery.CoherenceBreaks == 0 || fail.StallMSByCause["failover"] <= 0 {
		t.Errorf("failover: %+v, failover stall %.0f ms; want failovers, coherence breaks and failover time", fail.Delivery, fail.StallMSByCause["failover"])
	}
	if fail.StreamMaxGap.P99 > 2000 || none.StreamMaxGap.P99 < 2500 {
		t.Errorf("p99 of stream max gap: %.0f ms with failover, %.0f without; want ≤ 2000 (1500 watchdog + backup TTFT) and the 3 s hiccups without", fail.StreamMaxGap.P99, none.StreamMaxGap.P99)
	}
	// The network shows in the client's stall table.
	if none.StallMSByCause["network"] <= 0 || none.StallMSByCause["packet-loss"] <= 0 {
		t.Errorf("client stalls: network %.0f ms, packet-loss %.0f ms; want both > 0", none.StallMSByCause["network"], none.StallMSByCause["packet-loss"])
	}
	// Smoothing happens on the client: the server view is the same with
	// and without it. Failing over aborts the stream on the primary: every
	// failover is a cancelled server stream, and the capacity it frees lets
	// the other streams start sooner.
	server := func(name string) reports.Summary {
		for _, r := range doc.Runs {
			if r.Name == name {
				if r.SummaryServer == nil {
					t.Fatalf("run %s has no summary_server", r.Name)
				}
				return *r.SummaryServer
			}
		}
		t.Fatalf("no run %s", name)
		return reports.Summary{}
	}
	for _, w := range []string{"0", "1500"} {
		a, b := server("cadence_ms=0/watchdog_ms="+w), server("cadence_ms=33/watchdog_ms="+w)
		if !reflect.DeepEqual(a.TTFT, b.TTFT) || !reflect.DeepEqual(a.StreamP99ITL, b.StreamP99ITL) {
			t.Errorf("watchdog %s ms: server views differ with smoothing: %+v vs %+v", w, a.TTFT, b.TTFT)
		}
	}
	sNone, sFail := server("cadence_ms=0/watchdog_ms=0"), server("cadence_ms=0/watchdog_ms=1500")
	if sNone.Cancelled != 0 || sFail.Cancelled != fail.Delivery.Failovers || sFail.TTFT.P50 >= sNone.TTFT.P50 {
		t.Errorf("server view: %d cancelled without failover, %d with (%d failovers); server TTFT p50 %.1f ms with failover, %.1f without",
			sNone.Cancelled, sFail.Cancelled, fail.Delivery.Failovers, sFail.TTFT.P50, sNone.TTFT.P50)
	}
}

// TestStoryAPCRecompute: under KV pressure, recomputes with automatic
// prefix caching find most of their own tokens cached and cost a fraction
// of a full re-prefill.
func TestStoryAPCRecompute(t *testing.T) {
	doc := runStory(t, "apc-recompute")
	off, on := runByName(t, doc, "false"), runByName(t, doc, "true")
	t.Logf("recomputes: off %d (%d tokens, %.1f%% cached), on %d (%d tokens, %.1f%% cached); kv-recompute stall ms %.0f vs %.0f",
		off.Preemptions.Recompute, off.RecomputeTokens, 100*off.RecomputeCachedShare,
		on.Preemptions.Recompute, on.RecomputeTokens, 100*on.RecomputeCachedShare,
		off.StallMSByCause["kv-recompute"], on.StallMSByCause["kv-recompute"])
	if off.Preemptions.Recompute == 0 || on.Preemptions.Recompute == 0 {
		t.Fatalf("recomputes %d and %d: the story needs preemptions in both runs", off.Preemptions.Recompute, on.Preemptions.Recompute)
	}
	if off.RecomputeCachedShare != 0 || on.RecomputeCachedShare < 0.5 {
		t.Errorf("cached share of recomputed tokens %.3f without caching, %.3f with; want 0 and ≥ 0.5", off.RecomputeCachedShare, on.RecomputeCachedShare)
	}
	if on.StallMSByCause["kv-recompute"] >= off.StallMSByCause["kv-recompute"] {
		t.Errorf("kv-recompute stall %.0f ms with caching, %.0f without; want less with it", on.StallMSByCause["kv-recompute"], off.StallMSByCause["kv-recompute"])
	}
}

// quartiles returns the finished streams of run in the shortest and the
// longest quarter by output length.
func quartiles(t *testing.T, doc reports.Document, run string) (short, long []reports.StreamRow) {
	t.Helper()
	for _, r := range doc.Runs {
		if r.Name != run {
			continue
		}
		var fin []reports.StreamRow
		for _, s := range r.Streams {
			if s.Status == "finished" {
				fin = append(fin, s)
			}
		}
		slices.SortStableFunc(fin, func(a, b reports.StreamRow) int { return a.OutputTokens - b.OutputTokens })
		q := len(fin) / 4
		if q == 0 {
			t.Fatalf("run %q: %d finished streams", run, len(fin))
		}
		return fin[:q], fin[len(fin)-q:]
	}
	t.Fatalf("no run named %q", run)
	return nil, nil
}

func meanOf(rows []reports.StreamRow, f func(reports.StreamRow) float64) float64 {
	var s float64
	for _, r := range rows {
		s += f(r)
	}
	return s / float64(len(rows))
}

func TestStoryKVResponses(t *testing.T) {
	doc := runStory(t, "kv-responses")
	off := runStory(t, "kv-offload")
	rc, sw, pa := runByName(t, doc, "recompute"), runByName(t, doc, "swap"), runByName(t, doc, "pause")
	if rc.StallMSByCause["kv-recompute"] <= 0 || sw.StallMSByCause["kv-swap"] <= 0 || pa.StallMSByCause["kv-pause"] <= 0 {
		t.Fatalf("each response must stall on its own cause: recompute %.0f, swap %.0f, pause %.0f ms",
			rc.StallMSByCause["kv-recompute"], sw.StallMSByCause["kv-swap"], pa.StallMSByCause["kv-pause"])
	}
	// Pause holds blocks instead of freeing them, but when every running
	// stream is paused the newest is recomputed: fewer recomputes, not none.
	if pa.Preemptions.Pause == 0 || pa.Preemptions.Recompute == 0 || pa.Preemptions.Recompute >= rc.Preemptions.Recompute {
		t.Errorf("pause: %+v; recompute run %+v; want pauses, and fewer deadlock-breaking recomputes than recompute's preemptions", pa.Preemptions, rc.Preemptions)
	}
	// Pauses are many and short: the median stream's p99 ITL rises, the
	// worst stream's falls.
	if !(pa.StreamP99ITL.P50 > rc.StreamP99ITL.P50 && pa.StreamP99ITL.Max < rc.StreamP99ITL.Max) {
		t.Errorf("stream p99 ITL p50/max: pause %.1f/%.1f, recompute %.1f/%.1f; want pause's median above and worst below",
			pa.StreamP99ITL.P50, pa.StreamP99ITL.Max, rc.StreamP99ITL.P50, rc.StreamP99ITL.Max)
	}
	// Long streams pay: under every response, with or without the tier,
	// the longest quarter's worst gap is well above the shortest quarter's.
	for _, d := range []reports.Document{doc, off} {
		for _, run := range []string{"recompute", "swap", "pause"} {
			short, long := quartiles(t, d, run)
			gs, gl := meanOf(short, func(r reports.StreamRow) float64 { return r.MaxGapMS }), meanOf(long, func(r reports.StreamRow) float64 { return r.MaxGapMS })
			if gl < 1.15*gs {
				t.Errorf("%s (%d runs): mean max gap of the longest quarter %.0f ms, of the shortest %.0f ms; want long ≥ 1.15× short", run, len(d.Runs), gl, gs)
			}
		}
	}
	// Per-stream p99 hides it: a short stream's p99 is its single stall.
	short, long := quartiles(t, doc, "recompute")
	if ps, pl := meanOf(short, func(r reports.StreamRow) float64 { return r.ITLP99MS }), meanOf(long, func(r reports.StreamRow) float64 { return r.ITLP99MS }); ps <= pl {
		t.Errorf("recompute: mean p99 ITL short %.1f, long %.1f; want short above (few gaps: p99 is the max)", ps, pl)
	}

	// The CPU tier: a recomputed stream loads its own evicted blocks back
	// instead of computing them, so recompute stalls shrink.
	orc, osw := runByName(t, off, "recompute"), runByName(t, off, "swap")
	if len(orc.PrefixCacheTiers) != 2 || orc.PrefixCacheTiers[1].Name != "cpu" || orc.PrefixCacheTiers[1].HitTokens == 0 || orc.TierLoadBytes == 0 {
		t.Fatalf("offload recompute found nothing in the cpu tier: %+v, %d bytes loaded", orc.PrefixCacheTiers, orc.TierLoadBytes)
	}
	if orc.PrefixCacheHitRate <= rc.PrefixCacheHitRate || orc.StallMSByCause["kv-recompute"] >= rc.StallMSByCause["kv-recompute"] {
		t.Errorf("the cpu tier: hit rate %.3f vs %.3f without, kv-recompute %.0f vs %.0f ms; want more hits and less recompute stall",
			orc.PrefixCacheHitRate, rc.PrefixCacheHitRate, orc.StallMSByCause["kv-recompute"], rc.StallMSByCause["kv-recompute"])
	}
	// Swap goes through the tier: swapped blocks displace cached ones.
	if osw.SwapBytes == 0 || osw.PrefixCacheTiers[1].DroppedBlocks == 0 {
		t.Errorf("offload swap: %d bytes swapped, cpu tier %+v; want swaps that displace cached blocks", osw.SwapBytes, osw.PrefixCacheTiers)
	}
}
