package ingest

import (
	"fmt"
	"testing"
)

// TestLoad: the request schedule each importer reads (Recording.Load).
func TestLoad(t *testing.T) {
	const vllm = `{"request_rate": %s, "max_concurrency": %s, "burstiness": 1.0, "ttfts": [0.1], "itls": [[0.02]], "input_lens": [5], "output_lens": [2]}`
	const guide = `{"benchmarks": [{"args": {"strategy": %s}, "requests": {"successful": [{"start_time": 1, "first_token_time": 1.1, "last_token_time": 1.2, "prompt_tokens": 3, "output_tokens": 2}]}}]}`
	cases := []struct {
		name, data string
		f          Format
		want       Load
	}{
		{"vllm rate", fmt.Sprintf(vllm, "4.0", "null"), FormatVLLM, Load{Strategy: StrategyPoisson, Rate: 4, Burstiness: 1}},
		{"vllm inf", fmt.Sprintf(vllm, `"inf"`, "null"), FormatVLLM, Load{Strategy: StrategyAllAtOnce, Burstiness: 1}},
		{"vllm inf capped", fmt.Sprintf(vllm, `"inf"`, "8"), FormatVLLM, Load{Strategy: StrategyAllAtOnce, Concurrency: 8, Burstiness: 1}},
		{"guidellm synchronous", fmt.Sprintf(guide, `{"type_": "synchronous"}`), FormatGuideLLM, Load{Strategy: StrategyConcurrent, Concurrency: 1}},
		{"guidellm concurrent", fmt.Sprintf(guide, `{"type_": "concurrent", "streams": 4}`), FormatGuideLLM, Load{Strategy: StrategyConcurrent, Concurrency: 4}},
		{"guidellm throughput", fmt.Sprintf(guide, `{"type_": "throughput"}`), FormatGuideLLM, Load{Strategy: StrategyAllAtOnce}},
		{"guidellm constant", fmt.Sprintf(guide, `{"type_": "constant", "rate": 2.5}`), FormatGuideLLM, Load{Strategy: StrategyConstant, Rate: 2.5}},
		{"guidellm poisson", fmt.Sprintf(guide, `{"type_": "poisson", "rate": 3}`), FormatGuideLLM, Load{Strategy: StrategyPoisson, Rate: 3}},
		{"guidellm unknown", fmt.Sprintf(guide, `{"type_": "sweep"}`), FormatGuideLLM, Load{}},
	}
	for _, c := range cases {
		recs, err := Parse(c.name+".json", []byte(c.data), c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := recs[0].Load; got != c.want {
			t.Errorf("%s: load %+v, want %+v", c.name, got, c.want)
		}
	}
}
