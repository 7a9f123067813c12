package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/workloads"
)

func newPresetsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "presets",
		Short: "List the built-in models, GPUs, policies, admission rules, arrival processes, traffic classes and mixes, one line each",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writePresets(cmd.OutOrStdout())
		},
	}
}

func writePresets(w io.Writer) error {
	var b strings.Builder
	b.WriteString("MODELS (--model NAME, or the path of a Hugging Face config.json)\n")
	for _, n := range cost.ModelNames() {
		m, _ := cost.LookupModel(n)
		fmt.Fprintf(&b, "  %-16s %6.1fB params, %3d layers, %2d/%-2d heads (q/kv), %6d ctx  %s\n",
			n, float64(m.Params)/1e9, m.Layers, m.Heads, m.KVHeads, m.MaxContext, m.Description)
	}
	// The header names the source most prices share; a price from another
	// source names its own.
	priceSource, uses := "", map[string]int{}
	for _, n := range cost.GPUNames() {
		if p, ok := cost.GPUPrice(n); ok {
			uses[p.Source]++
			if uses[p.Source] > uses[priceSource] {
				priceSource = p.Source
			}
		}
	}
	b.WriteString("GPUS (--gpu NAME; on-demand prices: " + priceSource + ")\n")
	for _, n := range cost.GPUNames() {
		g, _ := cost.LookupGPU(n)
		price := "no price (--gpu-price)"
		if p, ok := cost.GPUPrice(n); ok {
			price = fmt.Sprintf("$%.2f/GPU-hour", p.USDPerGPUHour)
			if p.Source != priceSource {
				price += " (" + p.Source + ")"
			}
		}
		fmt.Fprintf(&b, "  %-16s %5.0f GiB, %6.0f TFLOP/s bf16 dense, %5.2f TB/s HBM, %4.0f GB/s interconnect, %3.0f GB/s host link, %s\n",
			n, float64(g.MemoryBytes)/(1<<30), g.PeakFLOPS/1e12, g.MemBandwidth/1e12, g.InterconnectBW/1e9, g.HostLinkBW/1e9, price)
	}

	section := func(title string, names []string) {
		b.WriteString(title + "\n")
		for _, n := range names {
			d, _ := scheduler.Describe(n)
			fmt.Fprintf(&b, "  %-22s %s\n", n, d)
		}
	}
	section("BATCHING POLICIES (--policy)", scheduler.BatcherNames())
	section("ADMISSION RULES (--admission)", scheduler.AdmissionNames())
	section("QUEUE ORDERS (--queue)", scheduler.OrderNames())
	section("PREEMPTION VICTIMS (--victim)", scheduler.VictimNames())
	b.WriteString("PREEMPTION MODES (--preemption)\n")
	b.WriteString("  recompute              free the blocks; the stream re-prefills prompt + output later (vLLM v1)\n")
	b.WriteString("  swap                   copy the blocks to CPU swap space over the host link and back (vLLM v0); recompute when swap is full\n")
	b.WriteString("  pause                  the stream that cannot grow keeps its blocks and skips steps until blocks free; when all are paused the victim is recomputed\n")
	b.WriteString("COST MODELS (--cost-model)\n")
	b.WriteString("  roofline               per-phase max(FLOPs/compute, bytes/bandwidth) + TP all-reduce + per-step overhead (default)\n")
	b.WriteString("  linear                 c0 + c1·prefill tokens + c2·decode seqs + c3·Σ decode context + c4·Σ prefill tokens×context\n")
	b.WriteString("ARRIVAL PROCESSES (--arrival)\n")
	for _, n := range workloads.ArrivalNames() {
		d, _ := workloads.DescribeArrival(n)
		fmt.Fprintf(&b, "  %-22s %s\n", n, d)
	}
	b.WriteString("TRAFFIC CLASSES (workload.classes[].preset)\n")
	for _, n := range workloads.ClassPresets() {
		d, _ := workloads.DescribeClass(n)
		fmt.Fprintf(&b, "  %-22s %s\n", n, d)
	}
	b.WriteString("WORKLOAD MIXES (workload.mix, --set workload.mix=NAME)\n")
	for _, n := range workloads.MixPresets() {
		d, _ := workloads.DescribeMix(n)
		fmt.Fprintf(&b, "  %-22s %s\n", n, d)
	}
	b.WriteString("LENGTH DISTRIBUTIONS (--input-len, --output-len)\n")
	b.WriteString("  fixed:N | uniform:MIN,MAX | normal:MEAN,SD,MIN,MAX | lognormal:MEAN,SD[,MIN,MAX] | pareto:MIN,ALPHA[,MAX] | table:LEN=P,… | empirical:FILE:COLUMN\n")
	_, err := io.WriteString(w, b.String())
	return err
}
