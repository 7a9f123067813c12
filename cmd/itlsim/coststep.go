package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports/calibrate"
	"github.com/itlsim/itlsim/sim"
)

// stepOptions are the flags of `itlsim cost step`.
type stepOptions struct {
	model, gpu, quant, kvDType string
	tp, dp                     int
	ep                         bool
	zipf                       float64
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
	f.Float64Var(&o.zipf, "moe-routing-zipf", 0, "MoE routing skew: Zipf exponent of the experts' shares of routed rows, in expert order (0: uniform)")
	f.IntVar(&o.decodeSeqs, "decode-seqs", 64, "sequences decoding one token in the step (all ranks)")
	f.IntVar(&o.context, "context", 2048, "tokens of context of each decoding sequence")
	f.IntVar(&o.prefillTokens, "prefill-tokens", 0, "prefill chunk tokens in the step (all ranks), split evenly over --prefill-seqs fresh prompts")
	f.IntVar(&o.prefillSeqs, "prefill-seqs", 1, "prompts the prefill tokens belong to")
	return cmd
}

func (o *stepOptions) run(w io.Writer) error {
	spec := calibrate.StepSpec{DecodeSeqs: o.decodeSeqs, Context: o.context, PrefillTokens: o.prefillTokens, PrefillSeqs: o.prefillSeqs}
	if err := spec.Validate(); err != nil {
		return err
	}
	c := sim.DefaultConfig()
	c.Model, c.GPU, c.TP, c.DP, c.EnableExpertParallel = o.model, o.gpu, o.tp, o.dp, o.ep
	c.Quantization, c.KVCacheDType, c.Cost.Roofline.MoERoutingZipf = o.quant, o.kvDType, o.zipf
	c.Files = hostFS{}
	s, err := c.Resolve()
	if err != nil {
		return err
	}
	return calibrate.WriteStep(w, s, spec)
}
