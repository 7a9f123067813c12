package serve

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/itlsim/itlsim/sim"
)

// metrics is /metrics under vLLM's names (vllm/v1/metrics/loggers.py), so
// routers and dashboards that score vLLM replicas on them (llm-d's
// inference scheduler, production-stack's router) work against a simulated
// one. Every series carries vLLM's model_name and engine labels (engine
// "0": each port is one engine). Latencies are in simulated seconds: at
// --time-scale 2 a 20 ms simulated gap is released 10 ms apart but
// observed as 0.02. The bucket bounds are vLLM's. Beside them,
// itlsim:schedule_lag_seconds is serve's own, in wall seconds: how late
// each chunk left against its schedule.
type metrics struct {
	reg        *prometheus.Registry
	running    prometheus.Gauge
	waiting    prometheus.Gauge
	kvUsage    prometheus.Gauge
	ttftH      prometheus.Observer
	itlH       prometheus.Observer
	tpotOldH   prometheus.Observer // the per-token histogram under its previous name
	reqTPOTH   prometheus.Observer
	e2eH       prometheus.Observer
	queueH     prometheus.Observer
	prefillH   prometheus.Observer
	decodeH    prometheus.Observer
	inferH     prometheus.Observer
	iterH      prometheus.Observer
	prompt     prometheus.Counter
	generation prometheus.Counter
	preempted  prometheus.Counter
	pcQueries  prometheus.Counter
	pcHits     prometheus.Counter
	success    *prometheus.CounterVec
	// lagH is serve's own: how late each chunk was released against its
	// scheduled wall time (wall seconds, not simulated).
	lagH prometheus.Observer
}

// Metric names, as vLLM exposes them.
const (
	metricRunning    = "vllm:num_requests_running"
	metricWaiting    = "vllm:num_requests_waiting"
	metricKVUsage    = "vllm:kv_cache_usage_perc"
	metricTTFT       = "vllm:time_to_first_token_seconds"
	metricITL        = "vllm:inter_token_latency_seconds"
	metricE2E        = "vllm:e2e_request_latency_seconds"
	metricPrompt     = "vllm:prompt_tokens_total"
	metricGeneration = "vllm:generation_tokens_total"
	metricSuccess    = "vllm:request_success_total"
	// The per-output-token histogram under vLLM's previous name (before
	// the rename to inter_token_latency_seconds), and per request.
	metricTPOTOld     = "vllm:time_per_output_token_seconds"
	metricReqTPOT     = "vllm:request_time_per_output_token_seconds"
	metricQueue       = "vllm:request_queue_time_seconds"
	metricPrefill     = "vllm:request_prefill_time_seconds"
	metricDecode      = "vllm:request_decode_time_seconds"
	metricInference   = "vllm:request_inference_time_seconds"
	metricIterTokens  = "vllm:iteration_tokens_total"
	metricPreemptions = "vllm:num_preemptions_total"
	metricPCQueries   = "vllm:prefix_cache_queries_total"
	metricPCHits      = "vllm:prefix_cache_hits_total"
	// metricScheduleLag is itlsim's own family, beside vLLM's.
	metricScheduleLag = "itlsim:schedule_lag_seconds"
)

// vLLM's bucket bounds (vllm/v1/metrics/loggers.py).
var (
	bucketsTTFT = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	// per output token: inter_token_latency, time_per_output_token and
	// request_time_per_output_token share them.
	bucketsToken = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	// request latencies: e2e, queue, prefill, decode and inference times.
	bucketsRequest    = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	bucketsIterTokens = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	// schedule lag, wall seconds: 10 µs (a timer's wake-up) to 1 s (a
	// server far behind its schedule).
	bucketsLag = []float64{1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}
)

func newMetrics(model string) *metrics {
	reg := prometheus.NewRegistry()
	labels := prometheus.Labels{"model_name": model, "engine": "0"}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels})
		reg.MustRegister(g)
		return g
	}
	hist := func(name, help string, buckets []float64) prometheus.Observer {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets, ConstLabels: labels})
		reg.MustRegister(h)
		return h
	}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
		reg.MustRegister(c)
		return c
	}
	m := &metrics{
		reg:     reg,
		running: gauge(metricRunning, "Number of requests in model execution batches."),
		waiting: gauge(metricWaiting, "Number of requests waiting to be processed."),
		kvUsage: gauge(metricKVUsage, "KV-cache usage. 1 means 100 percent usage."),
		ttftH:   hist(metricTTFT, "Histogram of time to first token in seconds.", bucketsTTFT),
		itlH:    hist(metricITL, "Histogram of inter-token latency in seconds.", bucketsToken),
		tpotOldH: hist(metricTPOTOld, "Histogram of time per output token in seconds (the previous name of vllm:inter_token_latency_seconds).",
			bucketsToken),
		reqTPOTH:   hist(metricReqTPOT, "Histogram of time_per_output_token_seconds per request.", bucketsToken),
		e2eH:       hist(metricE2E, "Histogram of e2e request latency in seconds.", bucketsRequest),
		queueH:     hist(metricQueue, "Histogram of time spent in WAITING phase for request.", bucketsRequest),
		prefillH:   hist(metricPrefill, "Histogram of time spent in PREFILL phase for request.", bucketsRequest),
		decodeH:    hist(metricDecode, "Histogram of time spent in DECODE phase for request.", bucketsRequest),
		inferH:     hist(metricInference, "Histogram of time spent in RUNNING phase for request.", bucketsRequest),
		iterH:      hist(metricIterTokens, "Histogram of number of tokens per engine_step.", bucketsIterTokens),
		prompt:     counter(metricPrompt, "Number of prefill tokens processed."),
		generation: counter(metricGeneration, "Number of generation tokens processed."),
		preempted:  counter(metricPreemptions, "Cumulative number of preemption from the engine."),
		pcQueries:  counter(metricPCQueries, "Prefix cache queries, in terms of number of queried tokens."),
		pcHits:     counter(metricPCHits, "Prefix cache hits, in terms of number of cached tokens."),
		lagH: hist(metricScheduleLag, "Histogram of how late each chunk was released against its scheduled wall time, in wall seconds (itlsim serve's own; a client's recorded latencies are inflated by about this much).",
			bucketsLag),
	}
	m.success = prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricSuccess,
		Help: "Count of successfully processed requests.", ConstLabels: labels}, []string{"finished_reason"})
	reg.MustRegister(m.success)
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (m *metrics) state(running, waiting int, kv float64) {
	m.running.Set(float64(running))
	m.waiting.Set(float64(waiting))
	m.kvUsage.Set(kv)
}

func (m *metrics) ttft(d sim.Time) { m.ttftH.Observe(d.Seconds()) }
func (m *metrics) itl(d sim.Time) {
	m.itlH.Observe(d.Seconds())
	m.tpotOldH.Observe(d.Seconds())
}

// step counts an engine step: its tokens and preemptions.
func (m *metrics) step(s *sim.StepReport) {
	m.iterH.Observe(float64(s.Tokens))
	if s.Preempted > 0 {
		m.preempted.Add(float64(s.Preempted))
	}
}

// scheduled counts a request's first scheduling: its prompt tokens looked
// up in the prefix cache and those found there.
func (m *metrics) scheduled(prompt, cached int) {
	m.pcQueries.Add(float64(prompt))
	m.pcHits.Add(float64(cached))
}
func (m *metrics) generated(n int) { m.generation.Add(float64(n)) }

// scheduleLag counts a chunk released lag late (wall time).
func (m *metrics) scheduleLag(lag time.Duration) { m.lagH.Observe(max(lag, 0).Seconds()) }

// ended counts a finished stream's prompt and latency; a rejected one
// counts nowhere but in the HTTP status its client got.
//
// The phase times are vLLM's: queue from arrival to the first scheduling,
// prefill from there to the first token, decode from the first token to
// the last, inference from the first scheduling to the last token; the
// per-request TPOT is decode/(tokens−1). sched < 0: never scheduled (not
// observed).
func (m *metrics) ended(s *sim.StreamSummary, prompt int, finish string, sched sim.Time) {
	if s.Status != sim.StatusFinished {
		return
	}
	m.prompt.Add(float64(prompt))
	m.e2eH.Observe(s.E2EL.Seconds())
	m.success.WithLabelValues(finish).Inc()
	if sched < 0 {
		return
	}
	first, last := s.Arrival+s.TTFT, s.Arrival+s.E2EL
	m.queueH.Observe((sched - s.Arrival).Seconds())
	m.prefillH.Observe((first - sched).Seconds())
	m.decodeH.Observe((last - first).Seconds())
	m.inferH.Observe((last - sched).Seconds())
	if s.OutputTokens > 1 {
		m.reqTPOTH.Observe((last - first).Seconds() / float64(s.OutputTokens-1))
	}
}
