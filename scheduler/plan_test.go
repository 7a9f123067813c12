package scheduler

import (
	"math/rand/v2"
	"testing"
)

// TestPlanUnderPreemption steps every policy and preemption mode with a
// cache far too small for its sequences, so that plans preempt while the
// batchers walk the running set (which then moves to another array under
// the batchers' snapshot, Scheduler.snap). After every plan: no sequence is
// planned twice or both planned and preempted, every planned sequence is
// running, every sequence running before the plan and not preempted or
// paused is planned (the budget holds them all; prefill-first and static
// may leave decodes out), and the plan's decode sums
// are its entries' (what priceStep reads instead of the entries).
func TestPlanUnderPreemption(t *testing.T) {
	for _, policy := range []string{ChunkedName, PrefillFirstName, OrcaName, StaticName} {
		for _, mode := range []string{"recompute", "swap", "pause"} {
			t.Run(policy+"/"+mode, func(t *testing.T) {
				s, kv := newSched(t, policy, 60, 1<<16, func(c *Config) { c.Preemption = mode })
				rng := rand.New(rand.NewPCG(uint64(len(policy)), uint64(len(mode))))
				preempted := 0
				id := 0
				for step := range 3000 {
					if rng.IntN(3) == 0 && id < 400 {
						id++
						s.Arrive(int64(step), &Seq{ID: id, Arrival: int64(step), Prompt: 8 + rng.IntN(120), Output: 4 + rng.IntN(120)})
					}
					before := append([]*Seq(nil), s.Running()...)
					for _, r := range before {
						if r.Decoding() && rng.IntN(4) == 0 {
							r.Spec = rng.IntN(3)
						} else {
							r.Spec = 0
						}
					}
					p := s.Schedule(int64(step), func(*Seq, Reason) {})
					seen := map[*Seq]string{}
					var ctx, drafts, pairs int64
					maxK, decodes := 0, 0
					for _, e := range p.Entries {
						if seen[e.Seq] != "" {
							t.Fatalf("step %d: sequence %d planned twice", step, e.Seq.ID)
						}
						seen[e.Seq] = "planned"
						if e.Seq.State != Running {
							t.Fatalf("step %d: planned sequence %d is %v", step, e.Seq.ID, e.Seq.State)
						}
						if e.Decode {
							decodes++
							ctx += int64(e.Start + 1)
							drafts += int64(e.Tokens - 1)
							pairs += int64(e.Tokens-1) * int64(e.Start+1)
							maxK = max(maxK, e.Tokens-1)
						}
					}
					restart := map[*Seq]bool{}
					for _, e := range p.Entries {
						restart[e.Seq] = !e.Decode && e.Start == 0
					}
					for _, pr := range p.Preempted {
						// A pause deadlock's victim is preempted, and the plan
						// formed again may restart it at once.
						if seen[pr.Seq] == "planned" && !(mode == "pause" && restart[pr.Seq]) {
							t.Fatalf("step %d: sequence %d planned and preempted", step, pr.Seq.ID)
						}
						seen[pr.Seq] = "preempted"
						preempted++
					}
					for _, r := range p.Paused {
						seen[r] = "paused"
					}
					for _, r := range before {
						if seen[r] == "" && r.State == Running && policy != PrefillFirstName && policy != StaticName {
							t.Fatalf("step %d (%s): running sequence %d neither planned, preempted nor paused", step, policy, r.ID)
						}
					}
					if p.DecodeSeqs != decodes || p.DecodeContext != ctx || p.DecodeDrafts != drafts || p.DraftContext != pairs || p.MaxDrafts != maxK {
						t.Fatalf("step %d: plan sums %d %d %d %d %d, entries give %d %d %d %d %d", step,
							p.DecodeSeqs, p.DecodeContext, p.DecodeDrafts, p.DraftContext, p.MaxDrafts, decodes, ctx, drafts, pairs, maxK)
					}
					for _, e := range p.Entries { // as the engine applies a plan, drafts included
						if e.Decode && e.Tokens > 1 {
							e.Seq.Verify(rng.IntN(e.Tokens))
							kv.Shrink(&e.Seq.KV, e.Seq.Computed)
						} else if !e.Seq.Advance(e.Tokens) {
							continue
						}
						if e.Seq.Done() {
							s.Finish(e.Seq)
						}
					}
				}
				t.Logf("%d preemptions, %d requests", preempted, id)
				if preempted == 0 && mode != "pause" {
					t.Fatal("no preemption: the test exercises nothing")
				}
			})
		}
	}
}
