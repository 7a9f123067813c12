package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim/delivery"
	"github.com/itlsim/itlsim/workloads/seed"
)

// Where injected pauses go in a stream.
const (
	pauseAtStart  = "start"
	pauseAtMiddle = "middle"
	pauseAtEnd    = "end"
	pauseAtRandom = "random"
)

type replayOptions struct {
	temps *tempFiles
	measuredFlags
	metrics   metricFlags
	slo       sloFlags
	pauses    int
	pauseMS   string
	pauseAt   string
	seed      uint64
	smoothing []string
	flush     []string
	network   []string
	frameMS   float64
}

func newReplayCmd(temps *tempFiles) *cobra.Command {
	o := &replayOptions{temps: temps}
	cmd := &cobra.Command{
		Use:   "replay FILE...",
		Short: "Replay measured streams with injected pauses through client mitigations and score what the client sees",
		Long: `Read measured streams (anything itlsim analyze reads), inject synthetic pauses
into each stream, deliver the result through a client mitigation — a smoothing
buffer, a server flush window, a network profile — and print the same table
and JSON as itlsim analyze for what the client sees, one column per
mitigation compared. The pauses and the network's draws are seeded per stream
and identical in every column, so the columns differ only by the mitigation.

Pauses (--pauses N per stream, each drawn from --pause-ms) go into the gaps
between chunks: start puts them in the first gaps, end in the last, middle
around the middle one, random in gaps drawn uniformly. A pause adds to the
gap it lands in. A stream with one chunk has no gap and gets none.

Mitigations, comma-separated lists compared side by side:
  --smoothing none|CADENCE[/DEPTH]  client smoothing buffer releasing every
                                    CADENCE and holding DEPTH of tokens
                                    (default depth 250ms), e.g. 33ms/500ms
  --flush none|WINDOW               server accept-then-flush window, e.g. 50ms
  --network none|PROFILE            network profile: ` + strings.Join(delivery.ProfileNames(), ", ") + `
Durations take a unit (33ms, 0.5s) or are milliseconds.

  itlsim replay serving_qps_16.json --pauses 1 --pause-ms 300 --pause-at middle --smoothing none,33ms/500ms
  itlsim replay profile_export.jsonl --network none,mobile-4g --smoothing none,33ms`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args)
		},
	}
	o.measuredFlags.bind(cmd)
	f := cmd.Flags()
	f.IntVar(&o.pauses, "pauses", 0, "pauses to inject per stream")
	f.StringVar(&o.pauseMS, "pause-ms", "500", "pause length distribution in ms: a number, fixed:MS, uniform:MIN,MAX, exp:MEAN, normal:…, lognormal:…, pareto:…")
	f.StringVar(&o.pauseAt, "pause-at", pauseAtRandom, "where pauses go: start, middle, end or random")
	f.Uint64Var(&o.seed, "seed", 1, "seeds the pauses and the network's draws")
	f.StringSliceVar(&o.smoothing, "smoothing", []string{"none"}, "client smoothing buffers to compare: none or CADENCE[/DEPTH]")
	f.StringSliceVar(&o.flush, "flush", []string{"none"}, "server flush windows to compare: none or WINDOW")
	f.StringSliceVar(&o.network, "network", []string{"none"}, "network profiles to compare: none, "+strings.Join(delivery.ProfileNames(), ", "))
	f.Var(newMS(&o.frameMS), "frame-ms", "renderer frame period, ms or with a unit (16.7 or 16.7ms for 60 Hz); 0 shows chunks on arrival")
	o.metrics.bind(cmd)
	o.slo.bind(cmd)
	return cmd
}

// mitigation is one compared combination and the path that applies it.
type mitigation struct {
	label string
	notes []string
	path  *delivery.Path
}

// pausePlan is the validated pause injection.
type pausePlan struct {
	n    int
	dist delivery.Dist
	at   string
	seed uint64
}

func (o *replayOptions) run(cmd *cobra.Command, args []string) error {
	in, out, err := o.formats(cmd)
	if err != nil {
		return err
	}
	m, err := o.metrics.config()
	if err != nil {
		return err
	}
	if err := o.slo.applyGoodput(cmd, &m); err != nil {
		return err
	}
	terms, err := o.slo.parse("", nil, nil)
	if err != nil {
		return err
	}
	plan, err := o.pausePlan()
	if err != nil {
		return err
	}
	if o.pauses == 0 {
		for _, name := range []string{"pause-ms", "pause-at"} {
			if cmd.Flags().Changed(name) {
				return fmt.Errorf("--%s: applies to injected pauses, and --pauses is 0: give --pauses N (per stream) or drop --%s", name, name)
			}
		}
	}
	mits, err := o.mitigations()
	if err != nil {
		return err
	}
	files := newOutputs(o.temps)
	defer files.discard()
	outs := runOutputs{files: files, json: files.add("--json", o.jsonPath), summaryCSV: files.add("--summary-csv", o.summaryCSV), format: out}
	files.reads("FILE", args...)
	if err := files.check(); err != nil {
		return err
	}
	recs, err := readRecordings(args, in)
	if err != nil {
		return err
	}
	var replayed []ingest.Recording
	for ri := range recs {
		rec := &recs[ri]
		if rec.NoGaps {
			return fmt.Errorf("%s: %s records only each request's first and last token times: there are no chunks to replay", rec.File, rec.Format)
		}
		for _, mit := range mits {
			r := replayRecording(rec, uint64(ri), plan, mit)
			switch {
			case len(recs) == 1 && len(mits) == 1:
			case len(recs) == 1:
				r.Name = mit.label
			case len(mits) > 1:
				r.Name = rec.Name + "/" + mit.label
			}
			replayed = append(replayed, r)
		}
	}
	runs := analyzeRuns(replayed, m, true)
	judge(runs, terms)
	return outs.write(cmd.OutOrStdout(), runs)
}

func (o *replayOptions) pausePlan() (pausePlan, error) {
	p := pausePlan{n: o.pauses, at: o.pauseAt, seed: o.seed}
	if o.pauses < 0 || o.pauses > 1000 {
		return p, fmt.Errorf("--pauses: must be in [0, 1000] per stream, got %d", o.pauses)
	}
	switch o.pauseAt {
	case pauseAtStart, pauseAtMiddle, pauseAtEnd, pauseAtRandom:
	default:
		return p, fmt.Errorf("--pause-at: must be start, middle, end or random, got %q", o.pauseAt)
	}
	d, err := delivery.ParseDist(o.pauseMS)
	if err != nil {
		return p, fmt.Errorf("--pause-ms: %w", err)
	}
	p.dist = d
	return p, nil
}

// mitigations builds one path per combination of the compared values,
// network slowest, smoothing fastest.
func (o *replayOptions) mitigations() ([]mitigation, error) {
	if !(o.frameMS >= 0 && o.frameMS <= 1000) {
		return nil, fmt.Errorf("--frame-ms: must be in [0, 1000] ms, got %g", o.frameMS)
	}
	type value struct {
		text string
		set  func(c *delivery.Config)
	}
	parse := func(flag string, vals []string, one func(string) (func(c *delivery.Config), error)) ([]value, error) {
		if len(vals) == 0 {
			// --network "" gives no values: no column to show.
			return nil, fmt.Errorf("--%s: expected a value, got \"\" (none: without it)", flag)
		}
		var out []value
		for _, v := range vals {
			v = strings.TrimSpace(v)
			set, err := one(v)
			if err != nil {
				return nil, fmt.Errorf("--%s: %q: %w", flag, v, err)
			}
			out = append(out, value{v, set})
		}
		return out, nil
	}
	networks, err := parse("network", o.network, func(v string) (func(c *delivery.Config), error) {
		if v == "none" {
			return func(*delivery.Config) {}, nil
		}
		if _, ok := delivery.LookupProfile(v); !ok {
			return nil, fmt.Errorf("unknown profile; valid: none, %s", strings.Join(delivery.ProfileNames(), ", "))
		}
		return func(c *delivery.Config) { c.Network.Profile = v }, nil
	})
	if err != nil {
		return nil, err
	}
	flushes, err := parse("flush", o.flush, func(v string) (func(c *delivery.Config), error) {
		if v == "none" {
			return func(*delivery.Config) {}, nil
		}
		w, err := parseMS(v)
		if err != nil {
			return nil, err
		}
		return func(c *delivery.Config) { c.Flush.WindowMS = w }, nil
	})
	if err != nil {
		return nil, err
	}
	smoothings, err := parse("smoothing", o.smoothing, func(v string) (func(c *delivery.Config), error) {
		if v == "none" {
			return func(*delivery.Config) {}, nil
		}
		cadence, depth, hasDepth := strings.Cut(v, "/")
		cms, err := parseMS(cadence)
		if err != nil {
			return nil, fmt.Errorf("cadence: %w", err)
		}
		dms := -1.0
		if hasDepth {
			if dms, err = parseMS(depth); err != nil {
				return nil, fmt.Errorf("depth: %w", err)
			}
		}
		return func(c *delivery.Config) {
			c.Smoothing.CadenceMS = cms
			if dms >= 0 {
				c.Smoothing.DepthMS = dms
			}
		}, nil
	})
	if err != nil {
		return nil, err
	}
	var out []mitigation
	for _, n := range networks {
		for _, f := range flushes {
			for _, s := range smoothings {
				cfg := delivery.DefaultConfig()
				cfg.Render.FrameMS = o.frameMS
				n.set(&cfg)
				f.set(&cfg)
				s.set(&cfg)
				path, err := delivery.New(cfg)
				if err != nil {
					return nil, fmt.Errorf("--network %s --flush %s --smoothing %s: %w", n.text, f.text, s.text, err)
				}
				var label []string
				if len(networks) > 1 {
					label = append(label, n.text)
				}
				if len(flushes) > 1 {
					label = append(label, "flush="+f.text)
				}
				if len(smoothings) > 1 {
					label = append(label, "smoothing="+s.text)
				}
				r := path.Config()
				note := fmt.Sprintf("replayed through network %s, flush %s, smoothing %s", n.text, f.text, s.text)
				if r.Smoothing.CadenceMS > 0 {
					note += fmt.Sprintf(" (cadence %g ms, depth %g ms)", r.Smoothing.CadenceMS, r.Smoothing.DepthMS)
				}
				if o.frameMS > 0 {
					note += fmt.Sprintf(", %g ms frames", o.frameMS)
				}
				out = append(out, mitigation{label: strings.Join(label, "/"), notes: []string{note}, path: path})
			}
		}
	}
	return out, nil
}

// parseMS reads a duration: Go syntax with a unit (33ms, 0.5s) or a plain
// number of milliseconds.
func parseMS(s string) (float64, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		d, derr := time.ParseDuration(s)
		if derr != nil {
			return 0, fmt.Errorf("expected a duration such as 33ms or 0.5s, got %q", s)
		}
		v = float64(d) / 1e6
	}
	if !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("expected a non-negative duration, got %q", s)
	}
	return v, nil
}

// streamSeed is the seed of stream s of recording rec under the replay
// seed, its child "recording/<rec>/stream/<s>" (see package seed); the
// stream's injected pauses and its delivery draw from children of it, so
// every compared mitigation sees the same pauses and the same network
// draws.
func streamSeed(replaySeed, rec uint64, s int) uint64 {
	return seed.Derive(seed.Derive(replaySeed, "recording", int(rec)), "stream", s)
}

// replayRecording injects the planned pauses into every stream of rec and
// delivers it through mit's path; the result is a recording of what the
// client saw. Streams a dropped connection ended count as failed requests.
func replayRecording(rec *ingest.Recording, recIdx uint64, plan pausePlan, mit mitigation) ingest.Recording {
	out := ingest.Recording{
		Name: rec.Name, File: rec.File, Format: rec.Format, Duration: rec.Duration,
		NoArrivals: rec.NoArrivals, Failed: map[string]int{},
		Notes: append([]string{}, rec.Notes...),
	}
	for k, n := range rec.Failed {
		out.Failed[k] = n
	}
	var (
		st       delivery.Stream
		res      delivery.Result
		chunks   []delivery.Chunk
		exact    []float64 // each server chunk's time in float ns
		injected int
		pausedNS float64
		startup  float64
		losses   int
	)
	for si := range rec.Streams {
		s := &rec.Streams[si]
		n := len(s.Gaps) + 1
		exact = exact[:0]
		t := s.Arrival + s.TTFT
		exact = append(exact, t)
		for _, g := range s.Gaps {
			t += g
			exact = append(exact, t)
		}
		if plan.n > 0 && n > 1 {
			r := seed.Stream(streamSeed(plan.seed, recIdx, si), "pauses")
			for j := range plan.n {
				gap := pauseGap(plan.at, j, plan.n, n-1, &r)
				d := float64(plan.dist.SampleNS(&r))
				for c := gap + 1; c < n; c++ {
					exact[c] += d
				}
				injected++
				pausedNS += d
			}
		}
		chunks = chunks[:0]
		for c, at := range exact {
			chunks = append(chunks, delivery.Chunk{At: int64(math.Round(at)), Tokens: ingest.ChunkTokens(s, c, n)})
		}
		arrival := int64(math.Round(s.Arrival))
		if chunks[0].At < arrival { // rounding of a zero TTFT
			chunks[0].At = arrival
		}
		mit.path.Deliver(&st, delivery.Request{
			Seed: seed.Derive(streamSeed(plan.seed, recIdx, si), "delivery"), Arrival: arrival,
			PromptTokens: s.InputTokens, Chunks: chunks,
		}, &res)
		losses += res.Losses
		if res.Failed {
			out.Failed["connection dropped"]++
			continue
		}
		startup += float64(res.StartupDelay)
		// Client times in float ns: the integer time plus the sub-nanosecond
		// part of the server chunk its first token came from, so a stream the
		// path leaves alone comes back with exactly its measured times.
		c := ingest.Stream{ID: s.ID, Arrival: s.Arrival, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
			Chunks: len(res.Client)}
		var prev float64
		for k, ch := range res.Client {
			at := float64(ch.At)
			if j := res.ServerFirst[k]; j >= 0 {
				at += exact[j] - float64(chunks[j].At)
			}
			if k == 0 {
				c.TTFT = at - s.Arrival
			} else {
				c.Gaps = append(c.Gaps, at-prev)
			}
			prev = at
		}
		c.E2EL = prev - s.Arrival
		if s.ChunkTokens != nil {
			c.ChunkTokens = make([]int, len(res.Client))
			for k, ch := range res.Client {
				c.ChunkTokens[k] = ch.Tokens
			}
		}
		out.Duration = max(out.Duration, prev)
		out.Streams = append(out.Streams, c)
	}
	note := mit.notes[0]
	if plan.n > 0 {
		note += fmt.Sprintf("; %d pauses injected (%d per stream of %s ms at %s, seed %d), mean %.1f ms",
			injected, plan.n, plan.dist, plan.at, plan.seed, pausedNS/max(float64(injected), 1)/1e6)
	}
	if ok := len(out.Streams); ok > 0 && mit.path.Config().Smoothing.CadenceMS > 0 {
		note += fmt.Sprintf("; mean smoothing start-up delay %.1f ms", startup/float64(ok)/1e6)
	}
	if losses > 0 {
		note += fmt.Sprintf("; %d lost transmissions", losses)
	}
	out.Notes = append(out.Notes, note)
	return out
}

// pauseGap is the gap (0-based, of gaps gaps) pause j of n goes into.
func pauseGap(at string, j, n, gaps int, r *seed.Rand) int {
	switch at {
	case pauseAtStart:
		return min(j, gaps-1)
	case pauseAtEnd:
		return max(gaps-1-j, 0)
	case pauseAtMiddle:
		return min(max((gaps-1)/2-(n-1)/2+j, 0), gaps-1)
	}
	return r.IntN(gaps)
}
