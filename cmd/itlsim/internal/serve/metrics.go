package serve

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/itlsim/itlsim/sim"
)

// metrics is /metrics under vLLM's names (vllm/v1/metrics/loggers.py), so
// routers and dashboards that score vLLM replicas on them (llm-d's
// inference scheduler, production-stack's router) work against a simulated
// one. Every series carries vLLM's model_name label. Latencies are in
// simulated seconds: at --time-scale 2 a 20 ms simulated gap is released
// 10 ms apart but observed as 0.02. The bucket bounds are vLLM's.
type metrics struct {
	reg        *prometheus.Registry
	running    prometheus.Gauge
	waiting    prometheus.Gauge
	kvUsage    prometheus.Gauge
	ttftH      prometheus.Observer
	itlH       prometheus.Observer
	e2eH       prometheus.Observer
	prompt     prometheus.Counter
	generation prometheus.Counter
	success    *prometheus.CounterVec
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
)

func newMetrics(model string) *metrics {
	reg := prometheus.NewRegistry()
	labels := prometheus.Labels{"model_name": model}
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
		ttftH: hist(metricTTFT, "Histogram of time to first token in seconds.",
			[]float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}),
		itlH: hist(metricITL, "Histogram of inter-token latency in seconds.",
			[]float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
		e2eH: hist(metricE2E, "Histogram of e2e request latency in seconds.",
			[]float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}),
		prompt:     counter(metricPrompt, "Number of prefill tokens processed."),
		generation: counter(metricGeneration, "Number of generation tokens processed."),
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
func (m *metrics) itl(d sim.Time)  { m.itlH.Observe(d.Seconds()) }
func (m *metrics) generated(n int) { m.generation.Add(float64(n)) }

// ended counts a finished stream's prompt and latency; a rejected one
// counts nowhere but in the HTTP status its client got.
func (m *metrics) ended(s *sim.StreamSummary, prompt int, finish string) {
	if s.Status != sim.StatusFinished {
		return
	}
	m.prompt.Add(float64(prompt))
	m.e2eH.Observe(s.E2EL.Seconds())
	m.success.WithLabelValues(finish).Inc()
}
