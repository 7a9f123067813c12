package benchalias

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/itlsim/itlsim/workloads"
)

// benchAlias is a flag of vLLM's benchmark (vllm bench serve) or
// GuideLLM that itlsim accepts under that name. It sets an itlsim field
// flag, so an invocation written with the alias runs exactly what the
// native flag runs; given with its itlsim name and another value, it is
// an error. docs/vllm-bench-aliases.md lists them.
type benchAlias struct {
	name, target, usage string
}

// simpleAliases set their target flag to their own value.
var simpleAliases = []benchAlias{
	{"request-rate", "rate", "vLLM bench: alias of --rate (requests/s)"},
	{"num-prompts", "requests", "vLLM bench: alias of --requests"},
	{"max-requests", "requests", "GuideLLM: alias of --requests"},
	{"max-seconds", "duration", "GuideLLM: alias of --duration (seconds of arrivals)"},
	{"metric-percentiles", "percentiles", "vLLM bench: alias of --percentiles, e.g. 25,50,99"},
}

// vLLM's random dataset defaults (vllm bench serve --dataset-name random).
const (
	vllmRandomInputLen  = 1024
	vllmRandomOutputLen = 128
)

// Flags holds the values of the alias flags a command binds.
type Flags struct {
	simple            map[string]*string
	inputLen          int
	outputLen         int
	rangeRatio        float64
	datasetName       string
	datasetPath       string
	ignoreEOS         bool
	percentileMetrics string
	burstiness        float64
	rateType          string
	maxConcurrency    string
}

// Bind registers the aliases whose targets cmd has (sweep and capacity
// leave --rate out, and so its alias); skip names the targets it lacks.
func Bind(cmd *cobra.Command, skip []string) *Flags {
	a := &Flags{simple: map[string]*string{}}
	f := cmd.Flags()
	for _, s := range simpleAliases {
		if slices.Contains(skip, s.target) {
			continue
		}
		a.simple[s.name] = f.String(s.name, "", s.usage)
	}
	f.IntVar(&a.inputLen, "random-input-len", vllmRandomInputLen, "vLLM bench: prompt length of the random dataset (sets --input-len)")
	f.IntVar(&a.outputLen, "random-output-len", vllmRandomOutputLen, "vLLM bench: output length of the random dataset (sets --output-len)")
	f.Float64Var(&a.rangeRatio, "random-range-ratio", 0, "vLLM bench: lengths uniform in [len·(1−r), len·(1+r)], r in [0, 1)")
	f.StringVar(&a.datasetName, "dataset-name", "", "vLLM bench: random (generated lengths, vLLM's defaults 1024/128) or sharegpt (with --dataset-path)")
	f.StringVar(&a.datasetPath, "dataset-path", "", "vLLM bench: sharegpt's token lengths, a CSV with num_prefill_tokens,num_decode_tokens (sets --lengths-file, keeping the pairs vLLM's ShareGPT sampler keeps)")
	f.BoolVar(&a.ignoreEOS, "ignore-eos", false, "vLLM bench: accepted; itlsim always generates each request's output length")
	f.StringVar(&a.percentileMetrics, "percentile-metrics", "", "vLLM bench: accepted (ttft,tpot,itl,e2el); itlsim reports every metric")
	f.Float64Var(&a.burstiness, "burstiness", 1, "vLLM bench: gamma arrivals with shape B (1: Poisson, < 1 burstier)")
	f.StringVar(&a.maxConcurrency, "max-concurrency", "", "vLLM bench: cap on requests in flight, as its semaphore (sets workload.max_concurrency; record: alias of --concurrency)")
	if !slices.Contains(skip, "rate") {
		f.StringVar(&a.rateType, "rate-type", "", "GuideLLM: constant, poisson or synchronous (one user, closed loop)")
	}
	return a
}

// Apply turns the aliases given on cmd's command line into their itlsim
// flags, and appends the scenario fields they set to *sets (as --set
// PATH=VALUE), before the flags are read. A nil a applies nothing.
func (a *Flags) Apply(cmd *cobra.Command, sets *[]string) error {
	if a == nil {
		return nil
	}
	f := cmd.Flags()
	set := func(alias, target, v string) error {
		if fl := f.Lookup(target); fl != nil && fl.Changed && fl.Value.String() != v {
			return fmt.Errorf("--%s %s and --%s %s disagree: give one", alias, v, target, fl.Value.String())
		}
		return f.Set(target, v)
	}
	for _, s := range simpleAliases {
		p, ok := a.simple[s.name]
		if !ok || !f.Changed(s.name) {
			continue
		}
		if s.name == "request-rate" && strings.EqualFold(strings.TrimSpace(*p), "inf") {
			return fmt.Errorf("--request-rate inf: itlsim needs a finite rate (requests/s); use --arrival closed with --set workload.users=N for a fixed concurrency")
		}
		if err := set(s.name, s.target, *p); err != nil {
			return err
		}
	}
	if f.Changed("max-concurrency") {
		n, err := strconv.Atoi(strings.TrimSpace(a.maxConcurrency))
		switch {
		case err != nil || n < 1 || n > 1_000_000:
			return fmt.Errorf("--max-concurrency %q: expected a cap on requests in flight, a whole number in [1, 1000000]", a.maxConcurrency)
		case f.Lookup("concurrency") != nil: // record's own flag
			if err := set("max-concurrency", "concurrency", strconv.Itoa(n)); err != nil {
				return err
			}
		case cmd.Name() == "serve":
			return fmt.Errorf("--max-concurrency: serve takes its requests from clients; cap them in the client (record --max-concurrency)")
		default:
			*sets = append(*sets, "workload.max_concurrency="+strconv.Itoa(n))
		}
	}
	switch a.datasetName {
	case "", "random":
		if f.Changed("dataset-path") {
			return fmt.Errorf("--dataset-path %s: needs --dataset-name sharegpt (the random dataset has no file)", a.datasetPath)
		}
	case "sharegpt":
		if err := a.shareGPT(f, set, sets); err != nil {
			return err
		}
	default:
		return fmt.Errorf("--dataset-name %q: expected random or sharegpt", a.datasetName)
	}
	if a.datasetName == "random" || f.Changed("random-input-len") || f.Changed("random-output-len") || f.Changed("random-range-ratio") {
		r := a.rangeRatio
		if r < 0 || r >= 1 || math.IsNaN(r) {
			return fmt.Errorf("--random-range-ratio %v: expected a ratio in [0, 1)", r)
		}
		for _, l := range []struct {
			alias, target string
			n             int
		}{{"random-input-len", "input-len", a.inputLen}, {"random-output-len", "output-len", a.outputLen}} {
			if l.n < 1 {
				return fmt.Errorf("--%s %d: expected a length ≥ 1 token", l.alias, l.n)
			}
			if err := set(l.alias, l.target, RandomLen(l.n, r)); err != nil {
				return err
			}
		}
	}
	if f.Changed("percentile-metrics") {
		for _, m := range strings.Split(a.percentileMetrics, ",") {
			switch strings.TrimSpace(m) {
			case "ttft", "tpot", "itl", "e2el":
			default:
				return fmt.Errorf("--percentile-metrics: %q: expected ttft, tpot, itl or e2el", m)
			}
		}
	}
	if f.Changed("burstiness") {
		b := a.burstiness
		if !(b > 0) || math.IsInf(b, 0) {
			return fmt.Errorf("--burstiness %v: expected a shape > 0", b)
		}
		if b != 1 {
			if err := set("burstiness", "arrival", "gamma"); err != nil {
				return err
			}
			*sets = append(*sets, "workload.shape="+strconv.FormatFloat(b, 'g', -1, 64))
		}
	}
	if f.Changed("rate-type") {
		switch a.rateType {
		case "constant", "poisson":
			return set("rate-type", "arrival", a.rateType)
		case "synchronous":
			if err := set("rate-type", "arrival", "closed"); err != nil {
				return err
			}
			*sets = append(*sets, "workload.users=1")
		default:
			return fmt.Errorf("--rate-type %q: expected constant, poisson or synchronous", a.rateType)
		}
	}
	return nil
}

// RandomLen is vLLM's random dataset length as an itlsim distribution:
// an integer uniform in [⌊n·(1−r)⌋, ⌈n·(1+r)⌉], fixed when r is 0.
func RandomLen(n int, r float64) string {
	if r == 0 {
		return "fixed:" + strconv.Itoa(n)
	}
	lo := max(1, int(math.Floor(float64(n)*(1-r))))
	hi := int(math.Ceil(float64(n) * (1 + r)))
	return fmt.Sprintf("uniform:%d,%d", lo, hi)
}

// shareGPT maps --dataset-name sharegpt --dataset-path FILE: FILE holds
// the dataset's token lengths (a CSV with num_prefill_tokens and
// num_decode_tokens, as Sarathi-Serve's processed ShareGPT trace), sampled
// as --lengths-file with vLLM's ShareGPT filter (workload.lengths_filter:
// vllm-sharegpt). itlsim has no tokenizer, so the raw ShareGPT JSON, whose
// lengths depend on the model's tokenizer, is refused with that advice.
func (a *Flags) shareGPT(f *pflag.FlagSet, set func(alias, target, v string) error, sets *[]string) error {
	p := a.datasetPath
	switch {
	case !f.Changed("dataset-path") || p == "":
		return fmt.Errorf("--dataset-name sharegpt: needs --dataset-path, a CSV of the dataset's token lengths (num_prefill_tokens,num_decode_tokens)")
	case strings.EqualFold(filepath.Ext(p), ".json") || strings.EqualFold(filepath.Ext(p), ".jsonl"):
		return fmt.Errorf("--dataset-path %s: itlsim does not tokenize ShareGPT's conversations (their lengths depend on the model's tokenizer); "+
			"give their token lengths as a CSV with columns num_prefill_tokens,num_decode_tokens, e.g. Sarathi-Serve's processed ShareGPT trace", p)
	}
	if f.Lookup("lengths-file") == nil {
		return fmt.Errorf("--dataset-name sharegpt: this command does not sample lengths from a file")
	}
	if err := set("dataset-path", "lengths-file", p); err != nil {
		return err
	}
	*sets = append(*sets, "workload.lengths_filter="+workloads.LengthFilterVLLMShareGPT)
	return nil
}
