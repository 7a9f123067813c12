package calibrate

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
)

// StepSpec is one engine step to price (`itlsim cost step`): decoding
// sequences at a context, and prefill tokens split evenly over fresh
// prompts, all ranks' together.
type StepSpec struct {
	DecodeSeqs, Context        int
	PrefillTokens, PrefillSeqs int
}

// Validate names the first flag out of range.
func (s StepSpec) Validate() error {
	switch {
	case s.DecodeSeqs < 0 || s.DecodeSeqs > 1<<20:
		return fmt.Errorf("--decode-seqs: must be in [0,%d], got %d", 1<<20, s.DecodeSeqs)
	case s.Context < 1 || s.Context > 1<<24:
		return fmt.Errorf("--context: must be in [1,%d] tokens, got %d", 1<<24, s.Context)
	case s.PrefillTokens < 0 || s.PrefillTokens > 1<<24:
		return fmt.Errorf("--prefill-tokens: must be in [0,%d], got %d", 1<<24, s.PrefillTokens)
	case s.PrefillSeqs < 1 || s.PrefillSeqs > 1<<20 || (s.PrefillTokens > 0 && s.PrefillSeqs > s.PrefillTokens):
		return fmt.Errorf("--prefill-seqs: must be in [1, --prefill-tokens], got %d", s.PrefillSeqs)
	case s.DecodeSeqs == 0 && s.PrefillTokens == 0:
		return errors.New("--decode-seqs, --prefill-tokens: the step is empty; give at least one")
	}
	return nil
}

// WriteStep prices spec on the setup's roofline and prints its phases and
// the KV cache the setup holds.
func WriteStep(w io.Writer, s *sim.Setup, spec StepSpec) error {
	rf, ok := s.Cost.(*cost.Roofline)
	if !ok {
		return errors.New("cost step: the scenario's cost model is not the roofline")
	}
	var b cost.Batch
	for i := range spec.PrefillSeqs {
		if spec.PrefillTokens == 0 {
			break
		}
		n := spec.PrefillTokens / spec.PrefillSeqs
		if i < spec.PrefillTokens%spec.PrefillSeqs {
			n++
		}
		b.AddPrefill(0, n)
	}
	for range spec.DecodeSeqs {
		b.AddDecode(spec.Context)
	}
	p := rf.Breakdown(&b)
	total := p.TotalNS()
	c := s.Config
	par := cost.Parallelism{TP: c.TP, DP: c.DP, ExpertParallel: c.EnableExpertParallel}
	fmt.Fprintf(w, "%s on %d× %s\n", rf.Name(), par.GPUs(), s.GPU.Name)
	fmt.Fprintf(w, "step: %d prefill tokens in %d prompts, %d decoding sequences at %d tokens of context (all ranks)\n\n",
		b.PrefillTokens, b.PrefillSeqs, b.DecodeSeqs, spec.Context)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tms\tshare\t")
	for _, ph := range []struct {
		name string
		ns   float64
	}{{"linear", p.LinearNS}, {"attention", p.AttentionNS}, {"elementwise", p.ElementwiseNS},
		{"all-reduce", p.AllReduceNS}, {"all-to-all", p.AllToAllNS}, {"overhead", p.OverheadNS}} {
		fmt.Fprintf(tw, "%s\t%.3f\t%.1f %%\t\n", ph.name, ph.ns/1e6, 100*ph.ns/total)
	}
	fmt.Fprintf(tw, "total\t%.3f\t\t\n", total/1e6)
	if err := tw.Flush(); err != nil {
		return err
	}
	bs := c.KVCache.BlockSize
	_, err := fmt.Fprintf(w, "\nKV cache: %d blocks of %d tokens (%d tokens) over %d data-parallel rank(s)\n", s.Blocks, bs, int64(s.Blocks)*int64(bs), par.Ranks())
	return err
}
