package ingest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// VLLMResult is a benchmark result in the form `vllm bench serve
// --save-result --save-detailed` writes (benchmark_serving.py before it),
// so that tools built on vLLM's result files read what itlsim recorded:
// the header, the summary figures and the per-request lists this package's
// reader takes back (ParseVLLM's fields). itlsim keeps no generated text, so
// "generated_texts" is not written.
type VLLMResult struct {
	Date        string // vLLM's %Y%m%d-%H%M%S
	Backend     string // "vllm" for /v1/completions, "openai-chat" for chat
	ModelID     string
	TokenizerID string // "" takes ModelID
	NumPrompts  int
	// RequestRate is the schedule's rate in requests/s; +Inf (or 0) is
	// written as vLLM's "inf".
	RequestRate    float64
	Burstiness     float64 // 0 writes 1.0, Poisson's
	MaxConcurrency int     // 0 writes null: no cap
	// Summary holds the summary figures under vLLM's keys (reports.VLLM:
	// duration, completed, the throughputs, mean_/median_/std_/pNN_*_ms).
	Summary  map[string]float64
	Requests []VLLMRequest // in request order
}

// VLLMRequest is one request's entry in the per-request lists. A failed
// request has Err set and, as vLLM writes it, no output: TTFT 0, no gaps,
// output length 0, latency 0.
type VLLMRequest struct {
	InputLen, OutputLen int
	TTFT                float64   // s
	ITLs                []float64 // s, one gap per streamed chunk after the first
	Latency             float64   // s, send to last chunk
	StartTime           float64   // s from the run's start
	Err                 string
}

// vllmHeadKeys are the summary keys vLLM writes before the per-request
// lists, in its order; integer counts among them are written as integers.
var vllmHeadKeys = []string{"duration", "completed", "total_input_tokens", "total_output_tokens",
	"request_throughput", "request_goodput", "output_throughput", "total_token_throughput"}

var vllmIntKeys = []string{"completed", "total_input_tokens", "total_output_tokens"}

// WriteVLLMResult writes r as one JSON object with vLLM's keys in vLLM's
// order: header, head figures, per-request lists, then the per-metric
// figures (ttft, tpot, itl, e2el; mean, median, std, then the percentiles
// in increasing order). Non-finite figures are refused: JSON has none.
func WriteVLLMResult(w io.Writer, r VLLMResult) error {
	bw := bufio.NewWriter(w)
	first := true
	key := func(k string) {
		if first {
			bw.WriteString("{")
			first = false
		} else {
			bw.WriteString(", ")
		}
		bw.WriteString(strconv.Quote(k))
		bw.WriteString(": ")
	}
	var bad error
	num := func(k string, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if bad == nil {
				bad = fmt.Errorf("vLLM result: %s is %v: expected a finite number", k, v)
			}
			v = 0
		}
		bw.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		if v == math.Trunc(v) && math.Abs(v) < 1e15 && !strings.ContainsAny(strconv.FormatFloat(v, 'g', -1, 64), ".e") {
			bw.WriteString(".0") // Python writes floats with a point
		}
	}
	str := func(s string) {
		b, _ := json.Marshal(s)
		bw.Write(b)
	}
	tok := r.TokenizerID
	if tok == "" {
		tok = r.ModelID
	}
	key("date")
	str(r.Date)
	key("backend")
	str(r.Backend)
	key("model_id")
	str(r.ModelID)
	key("tokenizer_id")
	str(tok)
	key("num_prompts")
	bw.WriteString(strconv.Itoa(r.NumPrompts))
	key("request_rate")
	if r.RequestRate <= 0 || math.IsInf(r.RequestRate, 1) {
		str("inf")
	} else {
		num("request_rate", r.RequestRate)
	}
	key("burstiness")
	b := r.Burstiness
	if b == 0 {
		b = 1
	}
	num("burstiness", b)
	key("max_concurrency")
	if r.MaxConcurrency > 0 {
		bw.WriteString(strconv.Itoa(r.MaxConcurrency))
	} else {
		bw.WriteString("null")
	}
	for _, k := range vllmHeadKeys {
		v, ok := r.Summary[k]
		key(k)
		switch {
		case !ok:
			bw.WriteString("null")
		case slices.Contains(vllmIntKeys, k):
			bw.WriteString(strconv.FormatInt(int64(math.Round(v)), 10))
		default:
			num(k, v)
		}
	}
	list := func(k string, n int, item func(i int)) {
		key(k)
		bw.WriteString("[")
		for i := range n {
			if i > 0 {
				bw.WriteString(", ")
			}
			item(i)
		}
		bw.WriteString("]")
	}
	rq := r.Requests
	list("input_lens", len(rq), func(i int) { bw.WriteString(strconv.Itoa(rq[i].InputLen)) })
	list("output_lens", len(rq), func(i int) { bw.WriteString(strconv.Itoa(rq[i].OutputLen)) })
	list("ttfts", len(rq), func(i int) { num("ttfts", rq[i].TTFT) })
	list("itls", len(rq), func(i int) {
		bw.WriteString("[")
		for j, g := range rq[i].ITLs {
			if j > 0 {
				bw.WriteString(", ")
			}
			num("itls", g)
		}
		bw.WriteString("]")
	})
	list("errors", len(rq), func(i int) { str(rq[i].Err) })
	list("latencies", len(rq), func(i int) { num("latencies", rq[i].Latency) })
	list("start_times", len(rq), func(i int) { num("start_times", rq[i].StartTime) })
	for _, m := range []string{"ttft", "tpot", "itl", "e2el"} {
		for _, stat := range []string{"mean", "median", "std"} {
			k := stat + "_" + m + "_ms"
			if v, ok := r.Summary[k]; ok {
				key(k)
				num(k, v)
			}
		}
		type pk struct {
			p float64
			k string
		}
		var ps []pk
		suffix := "_" + m + "_ms"
		for k := range r.Summary {
			if !strings.HasPrefix(k, "p") || !strings.HasSuffix(k, suffix) {
				continue
			}
			if p, err := strconv.ParseFloat(strings.TrimSuffix(k[1:], suffix), 64); err == nil {
				ps = append(ps, pk{p, k})
			}
		}
		slices.SortFunc(ps, func(a, b pk) int {
			if a.p < b.p {
				return -1
			}
			if a.p > b.p {
				return 1
			}
			return 0
		})
		for _, p := range ps {
			key(p.k)
			num(p.k, r.Summary[p.k])
		}
	}
	if first {
		bw.WriteString("{")
	}
	bw.WriteString("}\n")
	if bad != nil {
		return bad
	}
	return bw.Flush()
}
