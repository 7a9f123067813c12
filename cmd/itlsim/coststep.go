package main

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
)

// stepOptions are the flags of `itlsim cost step`.
type stepOptions struct {
	model, gpu, quant, kvDType string
	tp, dp                     int
	ep                         bool
	decodeSeqs, context        int
	prefillTokens, prefillSeqs int
}

func newCostStepCmd() *cobra.Command {
	o := &stepOptions{}
	cmd := &cobra.Command{
		Use:   "step",
		Short: "Print the roofline's time of one step, phase by phase",
		Long: `Price one engine step with the roofline and print its phases: the GEMMs
(linear), attention, elementwise kernels, tensor-parallel all-reduces, the MoE
layers' all-to-all dispatch and combine under --dp / --enable-expert-parallel,
and the fixed overhead. The step is the whole replica's: with --dp N the
sequences are those of all N ranks, which step in lockstep (a MoE model), and
each phase is the busiest rank's or GPU's.

  itlsim cost step --model deepseek-v3 --gpu h200-141gb --dp 8 --enable-expert-parallel --decode-seqs 256`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	def := sim.DefaultConfig()
	f.StringVar(&o.model, "model", def.Model, "model preset or path of a Hugging Face config.json")
	f.StringVar(&o.gpu, "gpu", def.GPU, "GPU preset")
	f.IntVar(&o.tp, "tp", 1, "tensor-parallel degree (GPUs per data-parallel rank)")
	f.IntVar(&o.dp, "dp", 1, "data-parallel attention ranks of a MoE model (vLLM --data-parallel-size)")
	f.BoolVar(&o.ep, "enable-expert-parallel", false, "place whole experts on the tp×dp GPUs (vLLM --enable-expert-parallel)")
	f.StringVar(&o.quant, "quantization", "", "weight format (vLLM --quantization): fp8, mxfp4, nvfp4, int4 (awq, gptq); empty keeps the checkpoint's")
	f.StringVar(&o.kvDType, "kv-cache-dtype", "", "KV cache element type: auto or fp8")
	f.IntVar(&o.decodeSeqs, "decode-seqs", 64, "sequences decoding one token in the step (all ranks)")
	f.IntVar(&o.context, "context", 2048, "tokens of context of each decoding sequence")
	f.IntVar(&o.prefillTokens, "prefill-tokens", 0, "prefill chunk tokens in the step (all ranks), split evenly over --prefill-seqs fresh prompts")
	f.IntVar(&o.prefillSeqs, "prefill-seqs", 1, "prompts the prefill tokens belong to")
	return cmd
}

func (o *stepOptions) run(w io.Writer) error {
	switch {
	case o.decodeSeqs < 0 || o.decodeSeqs > 1<<20:
		return fmt.Errorf("--decode-seqs: must be in [0,%d], got %d", 1<<20, o.decodeSeqs)
	case o.context < 1 || o.context > 1<<24:
		return fmt.Errorf("--context: must be in [1,%d] tokens, got %d", 1<<24, o.context)
	case o.prefillTokens < 0 || o.prefillTokens > 1<<24:
		return fmt.Errorf("--prefill-tokens: must be in [0,%d], got %d", 1<<24, o.prefillTokens)
	case o.prefillSeqs < 1 || o.prefillSeqs > 1<<20 || (o.prefillTokens > 0 && o.prefillSeqs > o.prefillTokens):
		return fmt.Errorf("--prefill-seqs: must be in [1, --prefill-tokens], got %d", o.prefillSeqs)
	case o.decodeSeqs == 0 && o.prefillTokens == 0:
		return errors.New("--decode-seqs, --prefill-tokens: the step is empty; give at least one")
	}
	c := sim.DefaultConfig()
	c.Model, c.GPU, c.TP, c.DP, c.EnableExpertParallel = o.model, o.gpu, o.tp, o.dp, o.ep
	c.Quantization, c.KVCacheDType = o.quant, o.kvDType
	c.Files = hostFS{}
	s, err := c.Resolve()
	if err != nil {
		return err
	}
	rf, ok := s.Cost.(*cost.Roofline)
	if !ok {
		return errors.New("cost step: the scenario's cost model is not the roofline")
	}
	var b cost.Batch
	for i := range o.prefillSeqs {
		if o.prefillTokens == 0 {
			break
		}
		n := o.prefillTokens / o.prefillSeqs
		if i < o.prefillTokens%o.prefillSeqs {
			n++
		}
		b.AddPrefill(0, n)
	}
	for range o.decodeSeqs {
		b.AddDecode(o.context)
	}
	p := rf.Breakdown(&b)
	total := p.TotalNS()
	par := cost.Parallelism{TP: c.TP, DP: c.DP, ExpertParallel: c.EnableExpertParallel}
	fmt.Fprintf(w, "%s on %d× %s\n", rf.Name(), par.GPUs(), s.GPU.Name)
	fmt.Fprintf(w, "step: %d prefill tokens in %d prompts, %d decoding sequences at %d tokens of context (all ranks)\n\n",
		b.PrefillTokens, b.PrefillSeqs, b.DecodeSeqs, o.context)
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
	bs := s.Config.KVCache.BlockSize
	_, err = fmt.Fprintf(w, "\nKV cache: %d blocks of %d tokens (%d tokens) over %d data-parallel rank(s)\n", s.Blocks, bs, int64(s.Blocks)*int64(bs), par.Ranks())
	return err
}
