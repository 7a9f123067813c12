package ingest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/itlsim/itlsim/sim/delivery"
	"github.com/itlsim/itlsim/workloads/seed"
)

// Where injected pauses go in a stream.
const (
	PauseAtStart  = "start"
	PauseAtMiddle = "middle"
	PauseAtEnd    = "end"
	PauseAtRandom = "random"
)

// ReplayOptions are the pauses to inject into measured streams and the
// client mitigations to compare, as itlsim replay's flags give them; the
// errors they give name those flags.
type ReplayOptions struct {
	Pauses  int    // --pauses: pauses per stream, in [0, 1000]
	PauseMS string // --pause-ms: the pause length distribution, ms
	PauseAt string // --pause-at: start, middle, end or random
	Seed    uint64 // --seed: seeds the pauses and the network's draws

	// Comma lists compared side by side: "none" or a value each.
	Smoothing []string // --smoothing: CADENCE[/DEPTH]
	Flush     []string // --flush: WINDOW
	Network   []string // --network: a delivery profile name
	FrameMS   float64  // --frame-ms: renderer frame period, ms (0: off)
}

// Mitigation is one compared combination and the path that applies it.
type Mitigation struct {
	Label string
	Notes []string
	Path  *delivery.Path
}

// PausePlan is the validated pause injection.
type PausePlan struct {
	N    int
	Dist delivery.Dist
	At   string
	Seed uint64
}

// PausePlan validates the pause injection.
func (o ReplayOptions) PausePlan() (PausePlan, error) {
	p := PausePlan{N: o.Pauses, At: o.PauseAt, Seed: o.Seed}
	if o.Pauses < 0 || o.Pauses > 1000 {
		return p, fmt.Errorf("--pauses: must be in [0, 1000] per stream, got %d", o.Pauses)
	}
	switch o.PauseAt {
	case PauseAtStart, PauseAtMiddle, PauseAtEnd, PauseAtRandom:
	default:
		return p, fmt.Errorf("--pause-at: must be start, middle, end or random, got %q", o.PauseAt)
	}
	d, err := delivery.ParseDist(o.PauseMS)
	if err != nil {
		return p, fmt.Errorf("--pause-ms: %w", err)
	}
	p.Dist = d
	return p, nil
}

// Mitigations builds one path per combination of the compared values,
// network slowest, smoothing fastest.
func (o ReplayOptions) Mitigations() ([]Mitigation, error) {
	if !(o.FrameMS >= 0 && o.FrameMS <= 1000) {
		return nil, fmt.Errorf("--frame-ms: must be in [0, 1000] ms, got %g", o.FrameMS)
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
	networks, err := parse("network", o.Network, func(v string) (func(c *delivery.Config), error) {
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
	flushes, err := parse("flush", o.Flush, func(v string) (func(c *delivery.Config), error) {
		if v == "none" {
			return func(*delivery.Config) {}, nil
		}
		w, err := ParseMS(v)
		if err != nil {
			return nil, err
		}
		return func(c *delivery.Config) { c.Flush.WindowMS = w }, nil
	})
	if err != nil {
		return nil, err
	}
	smoothings, err := parse("smoothing", o.Smoothing, func(v string) (func(c *delivery.Config), error) {
		if v == "none" {
			return func(*delivery.Config) {}, nil
		}
		cadence, depth, hasDepth := strings.Cut(v, "/")
		cms, err := ParseMS(cadence)
		if err != nil {
			return nil, fmt.Errorf("cadence: %w", err)
		}
		dms := -1.0
		if hasDepth {
			if dms, err = ParseMS(depth); err != nil {
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
	var out []Mitigation
	for _, n := range networks {
		for _, f := range flushes {
			for _, s := range smoothings {
				cfg := delivery.DefaultConfig()
				cfg.Render.FrameMS = o.FrameMS
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
				if o.FrameMS > 0 {
					note += fmt.Sprintf(", %g ms frames", o.FrameMS)
				}
				out = append(out, Mitigation{Label: strings.Join(label, "/"), Notes: []string{note}, Path: path})
			}
		}
	}
	return out, nil
}

// ParseMS reads a duration: Go syntax with a unit (33ms, 0.5s) or a plain
// number of milliseconds.
func ParseMS(s string) (float64, error) {
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

// CheckReplayable is an error for a recording without chunk times, which
// has nothing to replay.
func (r *Recording) CheckReplayable() error {
	if r.NoGaps {
		return fmt.Errorf("%s: %s records only each request's first and last token times: there are no chunks to replay", r.File, r.Format)
	}
	return nil
}

// ReplayAll replays every recording through every mitigation, in that
// order. Each result is named by its mitigation when there is one
// recording, by recording/mitigation when there are several of each, and
// keeps its recording's name otherwise.
func ReplayAll(recs []Recording, plan PausePlan, mits []Mitigation) ([]Recording, error) {
	var replayed []Recording
	for ri := range recs {
		rec := &recs[ri]
		if err := rec.CheckReplayable(); err != nil {
			return nil, err
		}
		for _, mit := range mits {
			r := Replay(rec, uint64(ri), plan, mit)
			switch {
			case len(recs) == 1 && len(mits) == 1:
			case len(recs) == 1:
				r.Name = mit.Label
			case len(mits) > 1:
				r.Name = rec.Name + "/" + mit.Label
			}
			replayed = append(replayed, r)
		}
	}
	return replayed, nil
}

// streamSeed is the seed of stream s of recording rec under the replay
// seed, its child "recording/<rec>/stream/<s>" (see package seed); the
// stream's injected pauses and its delivery draw from children of it, so
// every compared mitigation sees the same pauses and the same network
// draws.
func streamSeed(replaySeed, rec uint64, s int) uint64 {
	return seed.Derive(seed.Derive(replaySeed, "recording", int(rec)), "stream", s)
}

// Replay injects the planned pauses into every stream of rec (the recIdx-th
// recording replayed) and delivers it through mit's path; the result is a
// recording of what the client saw. Streams a dropped connection ended
// count as failed requests.
func Replay(rec *Recording, recIdx uint64, plan PausePlan, mit Mitigation) Recording {
	out := Recording{
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
		if plan.N > 0 && n > 1 {
			r := seed.Stream(streamSeed(plan.Seed, recIdx, si), "pauses")
			for j := range plan.N {
				gap := pauseGap(plan.At, j, plan.N, n-1, &r)
				d := float64(plan.Dist.SampleNS(&r))
				for c := gap + 1; c < n; c++ {
					exact[c] += d
				}
				injected++
				pausedNS += d
			}
		}
		chunks = chunks[:0]
		for c, at := range exact {
			chunks = append(chunks, delivery.Chunk{At: int64(math.Round(at)), Tokens: ChunkTokens(s, c, n)})
		}
		arrival := int64(math.Round(s.Arrival))
		if chunks[0].At < arrival { // rounding of a zero TTFT
			chunks[0].At = arrival
		}
		mit.Path.Deliver(&st, delivery.Request{
			Seed: seed.Derive(streamSeed(plan.Seed, recIdx, si), "delivery"), Arrival: arrival,
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
		c := Stream{ID: s.ID, Arrival: s.Arrival, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
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
	note := mit.Notes[0]
	if plan.N > 0 {
		note += fmt.Sprintf("; %d pauses injected (%d per stream of %s ms at %s, seed %d), mean %.1f ms",
			injected, plan.N, plan.Dist, plan.At, plan.Seed, pausedNS/max(float64(injected), 1)/1e6)
	}
	if ok := len(out.Streams); ok > 0 && mit.Path.Config().Smoothing.CadenceMS > 0 {
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
	case PauseAtStart:
		return min(j, gaps-1)
	case PauseAtEnd:
		return max(gaps-1-j, 0)
	case PauseAtMiddle:
		return min(max((gaps-1)/2-(n-1)/2+j, 0), gaps-1)
	}
	return r.IntN(gaps)
}
