package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim"
)

// Options configure a Server.
type Options struct {
	// ModelName is the name /v1/models lists and responses carry (vLLM's
	// --served-model-name); a request naming another model gets 404.
	ModelName string
	// TimeScale is simulated seconds per wall second: 1 is real time, 10
	// runs the simulation ten times faster than the clock. > 0.
	TimeScale float64
	// FlushWindow is the server's accept-then-flush window in simulated ns
	// (the scenario's delivery.flush.window_ms): a response writes its
	// first chunk at once, then one write per window boundary carrying
	// every token produced up to it. 0 writes every chunk at once.
	FlushWindow sim.Time
	// MaxModelLen is reported by /v1/models (tokens; 0: not reported).
	MaxModelLen int
	// ExitAfter stops the server once this many requests have been
	// answered (rejections included); 0 never.
	ExitAfter int
	// PerReplica serves a cluster scenario one port per replica, as that
	// many vLLM servers, for a real router in front: each port's requests
	// run on its replica (the engine's router is bypassed) and each port's
	// /metrics follow its replica alone. Off, a cluster is served on one
	// port behind the engine's router and /metrics sum the replicas.
	PerReplica bool
}

func (o *Options) validate() error {
	if !(o.TimeScale > 0) || o.TimeScale > 1e6 {
		return fmt.Errorf("time scale: must be in (0, 1e6] simulated seconds per second, got %g", o.TimeScale)
	}
	if o.ModelName == "" {
		return errors.New("model name: empty")
	}
	if o.ExitAfter < 0 {
		return fmt.Errorf("exit after: must be ≥ 0 requests, got %d", o.ExitAfter)
	}
	return nil
}

// Server answers OpenAI-compatible requests with simulated or replayed
// streams.
type Server struct {
	opt      Options
	b        backend
	drv      *driver    // nil for a replay
	metrics  []*metrics // one per port
	created  int64
	answered atomic.Int64
	enough   chan struct{} // closed once ExitAfter requests were answered
	once     sync.Once
}

// New serves a scenario: every request joins the simulated replica of
// setup at its wall-clock arrival. The setup should have no delivery path
// (the real network is the client's); sink, when not nil, receives every
// served stream's simulated timeline.
func New(setup *sim.Setup, o Options, sink sim.TimelineSink) (*Server, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	s := newServer(o)
	d, err := newDriver(setup, o.TimeScale, nil, sink)
	if err != nil {
		return nil, err
	}
	if o.PerReplica {
		for len(s.metrics) < d.replicas() {
			s.metrics = append(s.metrics, newMetrics(o.ModelName))
		}
	}
	d.metrics = s.metrics
	s.b, s.drv = d, d
	return s, nil
}

// NewReplay serves recorded streams: request k gets scripts[k mod n].
func NewReplay(scripts []Script, o Options) (*Server, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if len(scripts) == 0 {
		return nil, errors.New("replay: no streams to serve")
	}
	s := newServer(o)
	if o.PerReplica {
		return nil, errors.New("replay: recorded streams are served on one port")
	}
	s.b = newReplayer(scripts, o.TimeScale, s.metrics[0])
	return s, nil
}

func newServer(o Options) *Server {
	return &Server{opt: o, metrics: []*metrics{newMetrics(o.ModelName)}, created: time.Now().Unix(), enough: make(chan struct{})}
}

// Result is the simulation's server-side result once Serve has returned
// (nil for a replay).
func (s *Server) Result() *sim.Result {
	if s.drv == nil {
		return nil
	}
	return s.drv.result()
}

// Cluster describes each replica's share of the simulation and what the
// engine's router did (nothing with PerReplica: the ports were routed
// outside); call it once Serve has returned. Nil for a replay.
func (s *Server) Cluster() ([]sim.ReplicaReport, sim.Routing) {
	if s.drv == nil {
		return nil, sim.Routing{}
	}
	reps := s.drv.eng.ReplicaReports()
	if s.opt.PerReplica {
		return reps, sim.Routing{Policy: "port-per-replica"}
	}
	return reps, s.drv.eng.Routing()
}

// PortNames names what each port serves: its replica's name with
// PerReplica, else "" (the one port serves the whole scenario).
func (s *Server) PortNames() []string {
	names := make([]string, s.Ports())
	if s.opt.PerReplica {
		for i, r := range s.drv.eng.Replicas() {
			names[i] = r.Name()
		}
	}
	return names
}

// Ports is how many ports the server answers on: one, or with PerReplica
// one per replica (Serve wants that many listeners).
func (s *Server) Ports() int { return len(s.metrics) }

// Handler is the HTTP API of the first port (the only one without
// PerReplica).
func (s *Server) Handler() http.Handler { return s.handler(0) }

// handler is port i's HTTP API; with PerReplica its requests run on
// replica i and its /metrics are replica i's.
func (s *Server) handler(i int) http.Handler {
	replica := -1
	if s.opt.PerReplica {
		replica = i
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, false, replica) })
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, true, replica) })
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.Handle("GET /metrics", s.metrics[i].handler())
	return mux
}

// Serve answers on lns, one listener per port (Ports), until ctx ends or
// ExitAfter requests were answered over all ports; responses in flight are
// let finish (up to drain), then the simulation stops.
func (s *Server) Serve(ctx context.Context, drain time.Duration, lns ...net.Listener) error {
	if len(lns) != s.Ports() {
		return fmt.Errorf("serve: %d listeners for %d ports", len(lns), s.Ports())
	}
	bctx, stopBackend := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); s.b.run(bctx) }()
	served := make(chan error, len(lns))
	var hss []*http.Server
	for i, ln := range lns {
		hs := &http.Server{Handler: s.handler(i), ReadHeaderTimeout: 10 * time.Second}
		hss = append(hss, hs)
		go func() { served <- hs.Serve(ln) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case <-s.enough:
	case err = <-served:
	}
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	var wg sync.WaitGroup
	for _, hs := range hss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if serr := hs.Shutdown(sctx); serr != nil {
				hs.Close()
			}
		}()
	}
	wg.Wait()
	cancel()
	stopBackend()
	<-ran
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (s *Server) answeredOne() {
	if n := s.answered.Add(1); s.opt.ExitAfter > 0 && n >= int64(s.opt.ExitAfter) {
		s.once.Do(func() { close(s.enough) })
	}
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	m := map[string]any{"id": s.opt.ModelName, "object": "model", "created": s.created, "owned_by": "itlsim", "root": s.opt.ModelName}
	if s.opt.MaxModelLen > 0 {
		m["max_model_len"] = s.opt.MaxModelLen
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{m}})
}

// apiError writes an OpenAI-style error body with status code.
func apiError(w http.ResponseWriter, code int, typ, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// rejection maps an admission or scheduling rejection to an HTTP status:
// a full queue or an empty token bucket is 429 (retry later), a request
// the model can never hold is 400 (as vLLM answers a prompt over the
// context length), KV pressure is 503.
func rejection(r scheduler.Reason) (int, string) {
	switch r {
	case scheduler.ReasonQueueFull, scheduler.ReasonRateLimited:
		return http.StatusTooManyRequests, "rate_limit_exceeded"
	case scheduler.ReasonTooLong, scheduler.ReasonExceedsKV:
		return http.StatusBadRequest, "invalid_request_error"
	}
	return http.StatusServiceUnavailable, "server_overloaded"
}

// request is the part of a completion or chat request the server reads.
type request struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []message       `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	N *int `json:"n"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// maxBody bounds a request body (a long prompt as text fits easily).
const maxBody = 64 << 20

func (s *Server) generate(w http.ResponseWriter, r *http.Request, chat bool, replica int) {
	defer s.answeredOne()
	var req request
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	if err := dec.Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "request body: "+err.Error())
		return
	}
	if req.Model != "" && req.Model != s.opt.ModelName {
		apiError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	if req.N != nil && *req.N != 1 {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "n: only n = 1 is served")
		return
	}
	var prompt int
	var err error
	if chat {
		prompt, err = messageTokens(req.Messages)
	} else {
		prompt, err = promptTokens(req.Prompt)
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	a := ask{prompt: prompt, ignoreEOS: req.IgnoreEOS, replica: replica}
	for _, mt := range []*int{req.MaxTokens, req.MaxCompletionTokens} {
		if mt != nil {
			if *mt < 1 {
				apiError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("max_tokens: must be at least 1, got %d", *mt))
				return
			}
			a.maxTokens = *mt
		}
	}
	st, err := s.b.start(r.Context(), a)
	if err != nil {
		if errors.Is(err, errStopped) {
			apiError(w, http.StatusServiceUnavailable, "server_overloaded", err.Error())
		}
		return // the client went away
	}
	rw := &responder{s: s, w: w, st: st, chat: chat, model: s.opt.ModelName}
	rw.id = "cmpl-" + strconv.Itoa(st.id)
	if chat {
		rw.id = "chatcmpl-" + strconv.Itoa(st.id)
	}
	if req.Stream {
		if o := req.StreamOptions; o != nil {
			rw.usage, rw.continuous = o.IncludeUsage, o.ContinuousUsageStats
		}
		rw.stream(r.Context())
	} else {
		rw.whole(r.Context())
	}
	if !rw.ended { // the client went away (or the write failed) first
		s.b.abort(st.id)
	}
}

// promptTokens counts a completion prompt: a string (words, see
// textTokens), token ids, or a batch of one of either.
func promptTokens(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, errors.New("prompt: required")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return textTokens(text), nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		return len(ids), nil
	}
	var batch []json.RawMessage
	if json.Unmarshal(raw, &batch) == nil {
		if len(batch) != 1 {
			return 0, fmt.Errorf("prompt: one prompt per request is served, got %d", len(batch))
		}
		return promptTokens(batch[0])
	}
	return 0, errors.New("prompt: expected a string, a list of token ids, or a list of one of either")
}

// messageTokens counts a chat's messages: each message's text (a string
// or text parts); the chat template's own tokens are not counted.
func messageTokens(ms []message) (int, error) {
	if len(ms) == 0 {
		return 0, errors.New("messages: at least one message expected")
	}
	n := 0
	for i, m := range ms {
		if len(m.Content) == 0 || string(m.Content) == "null" {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			n += textTokens(text)
			continue
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			return 0, fmt.Errorf("messages[%d].content: expected a string or a list of content parts", i)
		}
		for _, p := range parts {
			n += textTokens(p.Text)
		}
	}
	return n, nil
}

// textTokens approximates a text's token count by its whitespace-separated
// words, at least one: close to BPE counts for English prose of short
// words, and exact for the prompts itlsim record synthesises (one word per
// token).
func textTokens(s string) int { return max(1, len(strings.Fields(s))) }

// words make up the generated text: one word per token.
var words = strings.Fields("the of and to in is that it for as with was on be at by this had not are but from or have an they which one you were her all she there would their we him been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three")

// responder writes one response.
type responder struct {
	s          *Server
	w          http.ResponseWriter
	st         *stream
	chat       bool
	model      string
	id         string
	usage      bool // stream_options.include_usage: a last chunk with the usage
	continuous bool // stream_options.continuous_usage_stats: usage in every chunk
	sent       int  // tokens written so far
	ended      bool // the stream's end was seen
	buf        []byte
}

// text appends n generated words to b, continuing the stream's sequence.
func (rw *responder) text(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
		b = append(b, words[(rw.st.id+rw.sent)%len(words)]...)
		rw.sent++
	}
	return b
}

// fail answers a stream that ended without output: rejected or cancelled.
func (rw *responder) fail(ev event) {
	if ev.status == sim.StatusRejected {
		code, typ := rejection(ev.reason)
		apiError(rw.w, code, typ, "request rejected by the simulated server: "+ev.reason.String())
		return
	}
	apiError(rw.w, http.StatusServiceUnavailable, "server_overloaded", "request aborted by the simulated server")
}

// whole answers a non-streaming request once its stream ends.
func (rw *responder) whole(ctx context.Context) {
	var text []byte
	for !rw.ended {
		var ev event
		select {
		case ev = <-rw.st.events:
		case <-ctx.Done():
			return
		}
		if ev.end {
			rw.ended = true
			if ev.status != sim.StatusFinished {
				rw.fail(ev)
				return
			}
			break
		}
		text = rw.text(text, ev.tokens)
	}
	choice := map[string]any{"index": 0, "finish_reason": rw.st.finish, "logprobs": nil}
	object := "text_completion"
	if rw.chat {
		object = "chat.completion"
		choice["message"] = map[string]any{"role": "assistant", "content": string(text)}
	} else {
		choice["text"] = string(text)
	}
	writeJSON(rw.w, http.StatusOK, map[string]any{
		"id": rw.id, "object": object, "created": rw.s.created, "model": rw.model,
		"choices": []any{choice}, "usage": rw.usageOf(),
	})
}

func (rw *responder) usageOf() map[string]int {
	return map[string]int{"prompt_tokens": rw.st.prompt, "completion_tokens": rw.sent, "total_tokens": rw.st.prompt + rw.sent}
}

// flushGrace is how long after a flush boundary a held write goes out, so
// that chunks the engine emitted at or before the boundary, still on their
// way from its goroutine, are in it.
const flushGrace = time.Millisecond

// stream answers with server-sent events, one per written chunk, then
// data: [DONE]. The status line waits for the first chunk, so a request
// the scheduler rejects still gets its HTTP error. With a flush window,
// chunks after the first are held and written at the window boundaries
// (first chunk + k × window, simulated time), each write carrying every
// token emitted up to its boundary, as the simulated flush stage does.
func (rw *responder) stream(ctx context.Context) {
	fl, _ := rw.w.(http.Flusher)
	window := rw.s.opt.FlushWindow
	var (
		started bool
		held    []event  // chunks waiting for a flush boundary
		tick    sim.Time // the next flush boundary
		timer   *time.Timer
		timerC  <-chan time.Time
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	write := func(n int, last bool) bool {
		if !started {
			h := rw.w.Header()
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-cache")
			rw.w.WriteHeader(http.StatusOK)
			started = true
		}
		rw.chunk(n, last)
		if last && rw.usage {
			rw.usageChunk()
		}
		if last {
			rw.buf = append(rw.buf, "data: [DONE]\n\n"...)
		}
		_, err := rw.w.Write(rw.buf)
		rw.buf = rw.buf[:0]
		if fl != nil {
			fl.Flush()
		}
		return err == nil
	}
	// arm schedules the write at the first boundary at or after at.
	arm := func(at sim.Time) {
		if at > tick {
			tick += (at - tick + window - 1) / window * window
		}
		d := time.Until(rw.s.b.wall(tick).Add(flushGrace))
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		timerC = timer.C
	}
	events := rw.st.events
	for events != nil || timerC != nil {
		select {
		case ev, ok := <-events:
			switch {
			case !ok:
				events = nil
			case ev.end:
				rw.ended = true
				if ev.status != sim.StatusFinished && !started {
					rw.fail(ev)
					return
				}
			case window == 0 || !started:
				if !write(ev.tokens, ev.last) {
					return
				}
				tick = ev.at + window
			default:
				if timerC == nil {
					arm(ev.at)
				}
				held = append(held, ev)
			}
		case <-timerC:
			timerC = nil
			n, last, keep := 0, false, held[:0]
			for _, h := range held {
				if h.at <= tick {
					n, last = n+h.tokens, last || h.last
				} else {
					keep = append(keep, h)
				}
			}
			held = keep
			if n > 0 && !write(n, last) {
				return
			}
			if len(held) > 0 {
				arm(held[0].at)
			}
		case <-ctx.Done():
			return
		}
	}
}

// chunk appends one SSE event carrying n tokens to rw.buf.
func (rw *responder) chunk(n int, last bool) {
	first := rw.sent == 0
	var text []byte
	text = rw.text(text, n)
	var choice bytes.Buffer
	choice.WriteString(`{"index":0,`)
	content, _ := json.Marshal(string(text))
	if rw.chat {
		choice.WriteString(`"delta":{`)
		if first {
			choice.WriteString(`"role":"assistant",`)
		}
		choice.WriteString(`"content":`)
		choice.Write(content)
		choice.WriteString(`},`)
	} else {
		choice.WriteString(`"text":`)
		choice.Write(content)
		choice.WriteString(`,`)
	}
	choice.WriteString(`"logprobs":null,"finish_reason":`)
	if last {
		choice.WriteString(strconv.Quote(rw.st.finish))
	} else {
		choice.WriteString("null")
	}
	choice.WriteString("}")
	rw.event(`[`+choice.String()+`]`, rw.continuous)
}

// usageChunk appends include_usage's last chunk: no choices, the usage.
func (rw *responder) usageChunk() { rw.event(`[]`, true) }

func (rw *responder) event(choices string, usage bool) {
	object := "text_completion"
	if rw.chat {
		object = "chat.completion.chunk"
	}
	b := rw.buf
	b = append(b, `data: {"id":`...)
	b = strconv.AppendQuote(b, rw.id)
	b = append(b, `,"object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, rw.s.created, 10)
	b = append(b, `,"model":`...)
	b = strconv.AppendQuote(b, rw.model)
	b = append(b, `,"choices":`...)
	b = append(b, choices...)
	if usage {
		u, _ := json.Marshal(rw.usageOf())
		b = append(b, `,"usage":`...)
		b = append(b, u...)
	}
	b = append(b, "}\n\n"...)
	rw.buf = b
}
