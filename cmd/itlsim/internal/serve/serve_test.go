package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	dto "github.com/prometheus/client_model/go"

	"github.com/itlsim/itlsim/sim"
)

// start serves cfg (after mutate) on a loopback port until the test ends.
func start(t *testing.T, mutate func(*sim.Config), opt Options) (*Server, string) {
	t.Helper()
	cfg := sim.DefaultConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if opt.ModelName == "" {
		opt.ModelName = "sim-model"
	}
	if opt.TimeScale == 0 {
		opt.TimeScale = 1
	}
	srv, err := New(setup, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv, listen(t, srv)
}

func listen(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return listenOn(t, srv, ln)
}

// listenOn serves srv on ln until the test ends.
func listenOn(t *testing.T, srv *Server, ln net.Listener) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, 5*time.Second, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func sdk(base string) openai.Client {
	return openai.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey("test"), option.WithMaxRetries(0))
}

// The official OpenAI Go SDK consumes serve's streams and bodies on both
// endpoints: every chunk parses, the text has one word per token, the
// usage chunk (include_usage) counts the tokens, finish_reason is length.
func TestOpenAISDKConsumesBothEndpoints(t *testing.T) {
	_, base := start(t, nil, Options{TimeScale: 20})
	client := sdk(base)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 12
	ignoreEOS := option.WithJSONSet("ignore_eos", true)

	cs := client.Completions.NewStreaming(ctx, openai.CompletionNewParams{
		Model:         "sim-model",
		Prompt:        openai.CompletionNewParamsPromptUnion{OfString: openai.String("one two three four")},
		MaxTokens:     openai.Int(n),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}, ignoreEOS)
	var text strings.Builder
	var usage openai.CompletionUsage
	finish := ""
	for cs.Next() {
		c := cs.Current()
		for _, ch := range c.Choices {
			text.WriteString(ch.Text)
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
		if c.Usage.CompletionTokens > 0 {
			usage = c.Usage
		}
	}
	if err := cs.Err(); err != nil {
		t.Fatalf("completions stream: %v", err)
	}
	if got := len(strings.Fields(text.String())); got != n || usage.CompletionTokens != n || usage.PromptTokens != 4 || finish != "length" {
		t.Fatalf("completions stream: %d words, usage %d/%d, finish %q; want %d words, usage 4/%d, length", got, usage.PromptTokens, usage.CompletionTokens, finish, n, n)
	}

	ch := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:         "sim-model",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello there")},
		MaxTokens:     openai.Int(n),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}, ignoreEOS)
	var acc openai.ChatCompletionAccumulator
	for ch.Next() {
		acc.AddChunk(ch.Current())
	}
	if err := ch.Err(); err != nil {
		t.Fatalf("chat stream: %v", err)
	}
	if len(acc.Choices) != 1 || len(strings.Fields(acc.Choices[0].Message.Content)) != n || acc.Usage.CompletionTokens != n || acc.Usage.PromptTokens != 2 {
		t.Fatalf("chat stream accumulated %+v, usage %+v; want %d words", acc.Choices, acc.Usage, n)
	}
	if acc.Choices[0].FinishReason != "length" {
		t.Fatalf("chat stream finish_reason %q, want length", acc.Choices[0].FinishReason)
	}

	c, err := client.Completions.New(ctx, openai.CompletionNewParams{
		Model:     "sim-model",
		Prompt:    openai.CompletionNewParamsPromptUnion{OfArrayOfTokens: []int64{1, 2, 3, 4, 5, 6, 7}},
		MaxTokens: openai.Int(5),
	}, ignoreEOS)
	if err != nil {
		t.Fatalf("completion: %v", err)
	}
	if len(strings.Fields(c.Choices[0].Text)) != 5 || c.Usage.PromptTokens != 7 || c.Usage.CompletionTokens != 5 {
		t.Fatalf("completion %q usage %+v; want 5 words, 7 prompt tokens (ids)", c.Choices[0].Text, c.Usage)
	}
	cc, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:     "sim-model",
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("a b c")},
		MaxTokens: openai.Int(3),
	}, ignoreEOS)
	if err != nil {
		t.Fatalf("chat completion: %v", err)
	}
	if len(strings.Fields(cc.Choices[0].Message.Content)) != 3 || cc.Usage.CompletionTokens != 3 || cc.Choices[0].Message.Role != "assistant" {
		t.Fatalf("chat completion %+v usage %+v", cc.Choices[0].Message, cc.Usage)
	}

	models, err := client.Models.List(ctx)
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != "sim-model" {
		t.Fatalf("models: %+v, %v", models, err)
	}
	_, err = client.Completions.New(ctx, openai.CompletionNewParams{
		Model: "other", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("x")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown model: %v, want a 404", err)
	}
}

// A rejection reaches the client as an HTTP error with a JSON body: with
// max-queue admission and a one-request queue, requests beyond the batch
// and the queue get 429.
func TestRejectionIsAnHTTPError(t *testing.T) {
	_, base := start(t, func(c *sim.Config) {
		c.Scheduler.MaxNumSeqs = 1
		c.Scheduler.Admission.Rule = "max-queue"
		c.Scheduler.Admission.MaxQueue = 1
	}, Options{TimeScale: 0.5})
	client := sdk(base)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	codes := make(chan int, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := client.Completions.New(ctx, openai.CompletionNewParams{
				Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("hello")},
				MaxTokens: openai.Int(40),
			}, option.WithJSONSet("ignore_eos", true))
			var apiErr *openai.Error
			switch {
			case err == nil:
				codes <- 200
			case errors.As(err, &apiErr):
				if !strings.Contains(apiErr.Message, "queue-full") {
					t.Errorf("rejection message %q does not name the reason", apiErr.Message)
				}
				codes <- apiErr.StatusCode
			default:
				t.Errorf("request: %v", err)
				codes <- 0
			}
		}()
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[200] != 2 || count[429] != 2 {
		t.Fatalf("statuses %v; want two 200 (one running, one queued) and two 429", count)
	}
}

// /metrics parses with the Prometheus text parser, under vLLM's names, and
// its gauges follow the simulated state: five long requests with room for
// two in the batch show 2 running and 3 waiting, then none of either; the
// counters and histograms count what was served.
func TestMetricsFollowTheSimulation(t *testing.T) {
	_, base := start(t, func(c *sim.Config) { c.Scheduler.MaxNumSeqs = 2 }, Options{TimeScale: 1})
	client := sdk(base)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	const reqs, out = 5, 30
	for range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := client.Completions.New(ctx, openai.CompletionNewParams{
				Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("a b c d e f g h")},
				MaxTokens: openai.Int(out),
			}, option.WithJSONSet("ignore_eos", true)); err != nil {
				t.Errorf("request: %v", err)
			}
		}()
	}
	// The five are sent at once: the gauges must reach 2 running and 3
	// waiting (bounded wait) and never show more than 2 running.
	var fam map[string]*dto.MetricFamily
	deadline := time.Now().Add(5 * time.Second)
	for {
		fam = scrape(t, base)
		r, w := gauge(fam, metricRunning), gauge(fam, metricWaiting)
		if r > 2 {
			t.Fatalf("running %g with max_num_seqs 2", r)
		}
		if r == 2 && w == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with 5 requests and max_num_seqs 2: running %g, waiting %g; want 2 and 3", r, w)
		}
		time.Sleep(time.Millisecond)
	}
	if kv := gauge(fam, metricKVUsage); !(kv > 0 && kv < 1) {
		t.Fatalf("kv_cache_usage_perc %g with two requests running; want in (0, 1)", kv)
	}
	wg.Wait()
	// The last response can reach its client a moment before the driver
	// publishes the state after the step that ended it: poll (bounded).
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(time.Millisecond) {
		fam = scrape(t, base)
		r, w := gauge(fam, metricRunning), gauge(fam, metricWaiting)
		if r == 0 && w == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the requests: running %g, waiting %g; want 0", r, w)
		}
	}
	if g := counter(fam, metricGeneration); g != reqs*out {
		t.Fatalf("generation_tokens_total %g, want %d", g, reqs*out)
	}
	if p := counter(fam, metricPrompt); p != reqs*8 {
		t.Fatalf("prompt_tokens_total %g, want %d", p, reqs*8)
	}
	if n := histCount(fam, metricTTFT); n != reqs {
		t.Fatalf("time_to_first_token_seconds count %d, want %d", n, reqs)
	}
	if n := histCount(fam, metricITL); n != reqs*(out-1) {
		t.Fatalf("inter_token_latency_seconds count %d, want %d", n, reqs*(out-1))
	}
	if n := histCount(fam, metricE2E); n != reqs {
		t.Fatalf("e2e_request_latency_seconds count %d, want %d", n, reqs)
	}
	// The per-request phase times, one sample per request; the per-token
	// histogram under its previous name too.
	for _, name := range []string{metricQueue, metricPrefill, metricDecode, metricInference, metricReqTPOT} {
		if n := histCount(fam, name); n != reqs {
			t.Errorf("%s count %d, want %d", name, n, reqs)
		}
	}
	if a, b := histCount(fam, metricTPOTOld), histCount(fam, metricITL); a != b {
		t.Errorf("time_per_output_token_seconds count %d, inter_token_latency_seconds %d: the same histogram", a, b)
	}
	// With two of five in the batch, three waited: the queue time's sum is
	// more than zero, and the prefill and decode times add up to the
	// inference time.
	hsum := func(name string) float64 { return fam[name].Metric[0].Histogram.GetSampleSum() }
	if hsum(metricQueue) <= 0 {
		t.Errorf("request_queue_time_seconds sum %g with three requests queued", hsum(metricQueue))
	}
	if d := hsum(metricPrefill) + hsum(metricDecode) - hsum(metricInference); d > 1e-9 || d < -1e-9 {
		t.Errorf("prefill %g + decode %g != inference %g", hsum(metricPrefill), hsum(metricDecode), hsum(metricInference))
	}
	// Every step's tokens: each request's prompt and its generated tokens.
	if got := hsum(metricIterTokens); got != reqs*(8+out) {
		t.Errorf("iteration_tokens_total sum %g, want %d (prompts and generated tokens)", got, reqs*(8+out))
	}
	if q := counter(fam, metricPCQueries); q != reqs*8 {
		t.Errorf("prefix_cache_queries_total %g, want %d (every prompt token looked up once)", q, reqs*8)
	}
	if p := counter(fam, metricPreemptions); p != 0 {
		t.Errorf("num_preemptions_total %g with KV to spare", p)
	}
	for _, m := range fam[metricRunning].Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		if len(labels) != 2 || labels["model_name"] != "sim-model" || labels["engine"] != "0" {
			t.Fatalf("labels %v, want vLLM's model_name=sim-model and engine=0", m.Label)
		}
	}
}

// Preemptions under KV pressure count in vllm:num_preemptions_total, as
// in the simulation's own result.
func TestMetricsCountPreemptions(t *testing.T) {
	_, base := start(t, func(c *sim.Config) {
		c.KVCache.NumGPUBlocks = 12
		c.KVCache.BlockSize = 16
	}, Options{TimeScale: 20})
	client := sdk(base)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := client.Completions.New(ctx, openai.CompletionNewParams{
				Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("a b c d e f g h")},
				MaxTokens: openai.Int(60),
			}, option.WithJSONSet("ignore_eos", true)); err != nil {
				t.Errorf("request: %v", err)
			}
		}()
	}
	wg.Wait()
	fam := scrape(t, base)
	if p := counter(fam, metricPreemptions); p <= 0 {
		t.Fatalf("num_preemptions_total %g: four 68-token requests in 12 blocks of 16 must preempt", p)
	}
}

func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return parseMetrics(t, resp)
}

func gauge(fam map[string]*dto.MetricFamily, name string) float64 {
	f := fam[name]
	if f == nil || len(f.Metric) != 1 || f.Metric[0].Gauge == nil {
		return -1
	}
	return f.Metric[0].Gauge.GetValue()
}

func counter(fam map[string]*dto.MetricFamily, name string) float64 {
	f := fam[name]
	if f == nil || len(f.Metric) != 1 || f.Metric[0].Counter == nil {
		return -1
	}
	return f.Metric[0].Counter.GetValue()
}

func histCount(fam map[string]*dto.MetricFamily, name string) uint64 {
	f := fam[name]
	if f == nil || len(f.Metric) != 1 || f.Metric[0].Histogram == nil {
		return 0
	}
	return f.Metric[0].Histogram.GetSampleCount()
}

// Bad requests get 400 with a JSON error naming the field.
func TestBadRequests(t *testing.T) {
	_, base := start(t, nil, Options{TimeScale: 10})
	for _, c := range []struct{ path, body, want string }{
		{"/v1/completions", `{"prompt":`, "request body"},
		{"/v1/completions", `{"max_tokens":3}`, "prompt: required"},
		{"/v1/completions", `{"prompt":["a","b"]}`, "one prompt per request"},
		{"/v1/completions", `{"prompt":"a","max_tokens":0}`, "max_tokens"},
		{"/v1/completions", `{"prompt":"a","n":2}`, "n: only n = 1"},
		{"/v1/chat/completions", `{"messages":[]}`, "messages"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":5}]}`, "messages[0].content"},
	} {
		resp, err := http.Post(base+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct {
				Message string `json:"message"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 400 || body.Error.Code != 400 || !strings.Contains(body.Error.Message, c.want) {
			t.Errorf("%s %s: %d %+v (%v); want 400 naming %q", c.path, c.body, resp.StatusCode, body, err, c.want)
		}
	}
	if resp, err := http.Get(base + "/health"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/health: %v %v", resp, err)
	}
}

// The scenario's flush window holds tokens on the server: the first chunk
// goes out at once, then one write per window carrying every token since.
func TestFlushWindowBatchesChunks(t *testing.T) {
	_, base := start(t, nil, Options{TimeScale: 1, FlushWindow: sim.FromMS(50)})
	resp, err := http.Post(base+"/v1/completions", "application/json", strings.NewReader(
		`{"prompt":"a b c","max_tokens":60,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tokens []int
	last := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []json.RawMessage `json:"choices"`
			Usage   struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Choices) > 0 {
			tokens = append(tokens, c.Usage.CompletionTokens-last)
			last = c.Usage.CompletionTokens
		}
	}
	if last != 60 || len(tokens) < 3 || tokens[0] != 1 {
		t.Fatalf("writes carried %v tokens; want 60 in all, the first write one token", tokens)
	}
	// Decode steps take about 8 ms: 60 tokens span about ten 50 ms windows.
	// A chunk the engine emits at a boundary can miss its write when the
	// process waits for a CPU and go out alone in the next one, so the
	// bound leaves room for that; unbatched, there would be 60 writes.
	if len(tokens) > 25 {
		t.Fatalf("%d writes carried %v tokens; want about one per 50 ms window", len(tokens), tokens)
	}
}

// A client that goes away aborts its simulated request, as vLLM aborts on
// disconnect: it leaves the batch and its KV blocks are freed.
func TestDisconnectAborts(t *testing.T) {
	_, base := start(t, nil, Options{TimeScale: 1})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/completions", strings.NewReader(
		`{"prompt":"a b c","max_tokens":100000,"ignore_eos":true,"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for n := 0; n < 5 && sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "data: ") {
			n++
		}
	}
	if fam := scrape(t, base); gauge(fam, metricRunning) != 1 || !(gauge(fam, metricKVUsage) > 0) {
		t.Fatalf("while streaming: running %g, kv %g; want 1 and > 0", gauge(fam, metricRunning), gauge(fam, metricKVUsage))
	}
	cancel()
	resp.Body.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		fam := scrape(t, base)
		if gauge(fam, metricRunning) == 0 && gauge(fam, metricKVUsage) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after the disconnect: running %g, kv %g; want 0", gauge(fam, metricRunning), gauge(fam, metricKVUsage))
		}
	}
}

// A stream tells proxies not to hold it: nginx reads X-Accel-Buffering,
// caches and most proxies Cache-Control (issue 29 reports haproxy 2.6 with
// a default configuration delivering 30 tokens in 2 bursts without them).
func TestStreamHeadersDisableProxyBuffering(t *testing.T) {
	_, base := start(t, nil, Options{TimeScale: 10})
	resp, err := http.Post(base+"/v1/completions", "application/json",
		strings.NewReader(`{"prompt":"hello","max_tokens":3,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}
