package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
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
	// MaxModelLen is the context in tokens: /v1/models reports it and a
	// request for more (prompt + max_tokens) is refused with 400, as vLLM
	// refuses it. New takes the scenario's when 0; a replay checks none.
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
	// Limits bound what a client can make the server hold; zero fields
	// take DefaultLimits' values.
	Limits Limits
	// MaxScheduleLag is the p99 schedule lag (how late chunks are released
	// against their scheduled wall time) above which Lag warns that the
	// latencies clients record are inflated; 0 takes
	// DefaultMaxScheduleLag. Chunks later than 10 times it, one after
	// another for 25 times it, mean the host cannot hold the time scale.
	MaxScheduleLag time.Duration
	// SpinWait is how much of each wait for the engine's next event is
	// spent polling the clock instead of sleeping (0: none). Go's timers
	// wake about 1 ms late for waits under 1 ms on Linux; 1ms here releases
	// chunks within microseconds, at the cost of a core busy up to 1 ms per
	// event (all the time when events come less than 1 ms apart).
	SpinWait time.Duration
	// Warn, when not nil, is told at once when the schedule first falls
	// behind that bound during the run (Lag says it again at the end).
	Warn func(msg string)
}

// Limits are what one connection may make the server hold, and for how
// long: a client that sends slowly, or stops reading, is cut off.
type Limits struct {
	// HeaderTimeout bounds the wait for a request's headers.
	HeaderTimeout time.Duration
	// BodyTimeout bounds the wait for a request's body once its headers
	// are in: a half-sent body is answered 408 when it runs out.
	BodyTimeout time.Duration
	// WriteTimeout bounds each write of a response: a client that stops
	// reading for longer has its stream aborted, as a disconnect is.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes int
	// MaxBodyReaders bounds the requests whose bodies are being read at
	// once, over all ports: one more is answered 503 with Retry-After at
	// once, so that many half-sent bodies hold at most this many buffers.
	MaxBodyReaders int
	// MaxBody bounds a request body in bytes; 0 takes 1 MiB + 32 bytes per
	// token of the context (max_model_len), or 16 MiB without one.
	MaxBody int64
}

// DefaultLimits are serve's limits.
func DefaultLimits() Limits {
	return Limits{HeaderTimeout: 10 * time.Second, BodyTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10, MaxBodyReaders: 64}
}

// withDefaults fills the zero fields of l from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	for _, f := range []struct{ v, def *time.Duration }{
		{&l.HeaderTimeout, &d.HeaderTimeout}, {&l.BodyTimeout, &d.BodyTimeout},
		{&l.WriteTimeout, &d.WriteTimeout}, {&l.IdleTimeout, &d.IdleTimeout},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	if l.MaxBodyReaders <= 0 {
		l.MaxBodyReaders = d.MaxBodyReaders
	}
	return l
}

// maxBody is the largest request body served: room for a prompt that
// fills the context, as words or as token ids.
func (s *Server) maxBody() int64 {
	switch {
	case s.lim.MaxBody > 0:
		return s.lim.MaxBody
	case s.opt.MaxModelLen > 0:
		return 1<<20 + 32*int64(s.opt.MaxModelLen)
	}
	return 16 << 20
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
	if o.SpinWait < 0 || o.SpinWait > time.Second {
		return fmt.Errorf("spin wait: must be in [0, 1s], got %v", o.SpinWait)
	}
	if o.MaxScheduleLag < 0 {
		return fmt.Errorf("max schedule lag: must be ≥ 0 (0: %v), got %v", DefaultMaxScheduleLag, o.MaxScheduleLag)
	}
	return nil
}

// Server answers OpenAI-compatible requests with simulated or replayed
// streams.
type Server struct {
	opt      Options
	lim      Limits
	b        backend
	drv      *driver // nil for a replay
	lag      *lagTracker
	metrics  []*metrics // one per port
	created  int64
	answered atomic.Int64
	enough   chan struct{} // closed once ExitAfter requests were answered
	cut      atomic.Bool   // the drain ran out: responses still going are cut (abortDrain)
	bodies   chan struct{} // one token per body being read (MaxBodyReaders)
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
	if o.MaxModelLen == 0 {
		o.MaxModelLen = setup.Config.MaxModelLen
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
	d.lag = newLagTracker(o.MaxScheduleLag, o.TimeScale, o.Warn)
	d.spin = o.SpinWait
	s.b, s.drv, s.lag = d, d, d.lag
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
	p := newReplayer(scripts, o.TimeScale, s.metrics[0])
	p.lag = newLagTracker(o.MaxScheduleLag, o.TimeScale, o.Warn)
	s.b, s.lag = p, p.lag
	return s, nil
}

func newServer(o Options) *Server {
	lim := o.Limits.withDefaults()
	return &Server{opt: o, lim: lim, metrics: []*metrics{newMetrics(o.ModelName)}, created: time.Now().Unix(),
		enough: make(chan struct{}), bodies: make(chan struct{}, lim.MaxBodyReaders)}
}

// Result is the simulation's server-side result once Serve has returned
// (nil for a replay).
func (s *Server) Result() *sim.Result {
	if s.drv == nil {
		return nil
	}
	return s.drv.result()
}

// Lag is how late the server released chunks against their schedule;
// call it once Serve has returned.
func (s *Server) Lag() Lag { return s.lag.summary() }

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
	// Any other method on these paths is 405, any other path 404, each with
	// OpenAI's JSON error object (Go's mux would answer in plain text).
	for path, allow := range map[string]string{"/v1/completions": "POST", "/v1/chat/completions": "POST",
		"/v1/models": "GET, HEAD", "/health": "GET, HEAD", "/metrics": "GET, HEAD"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			apiError(w, http.StatusMethodNotAllowed, "invalid_request_error", fmt.Sprintf("Method Not Allowed (%s %s): use %s", r.Method, r.URL.Path, allow))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "invalid_request_error", fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path))
	})
	return s.guard(mux)
}

// guard gives every request its deadlines: the body must arrive within
// BodyTimeout (generate lifts it once read), and a response's writes each
// get WriteTimeout (the streaming writers renew it per write).
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		now := time.Now()
		_ = rc.SetReadDeadline(now.Add(s.lim.BodyTimeout))
		_ = rc.SetWriteDeadline(now.Add(s.lim.WriteTimeout))
		h.ServeHTTP(w, r)
	})
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
		hs := &http.Server{Handler: s.handler(i), ReadHeaderTimeout: s.lim.HeaderTimeout,
			IdleTimeout: s.lim.IdleTimeout, MaxHeaderBytes: s.lim.MaxHeaderBytes}
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
				s.cut.Store(true) // before the connections close: their responses were cut
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

// generate answers a completion (chat false) or a chat completion. The
// body is read whole (at most maxBody bytes, within the body timeout) and
// checked (decodeRequest) before the request joins the simulation.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, chat bool, replica int) {
	defer s.answeredOne()
	rc := http.NewResponseController(w)
	if ct := r.Header.Get("Content-Type"); ct != "" && !isJSON(ct) {
		apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("Content-Type %q: expected application/json", ct))
		return
	}
	if r.ContentLength > s.maxBody() {
		// Refused from the headers, and the connection closes after the
		// answer. A body a little over the limit is read and dropped
		// first (bounded in bytes and time), so the client reads the 413
		// instead of a reset while it is still sending; a larger one is
		// not read at all.
		if r.ContentLength <= s.maxBody()+maxDrain {
			drainBody(rc, r)
		}
		refuseBody(w, rc)
		apiError(w, http.StatusRequestEntityTooLarge, "BadRequestError", fmt.Sprintf("request body: more than %d bytes (Content-Length %d)", s.maxBody(), r.ContentLength))
		return
	}
	select {
	case s.bodies <- struct{}{}:
	default:
		refuseBody(w, rc)
		w.Header().Set("Retry-After", "1")
		apiError(w, http.StatusServiceUnavailable, "server_overloaded", fmt.Sprintf("request body: %d bodies are being received already; retry later", cap(s.bodies)))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody()))
	<-s.bodies
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			drainBody(rc, r)
			apiError(w, http.StatusRequestEntityTooLarge, "BadRequestError", fmt.Sprintf("request body: more than %d bytes", tooBig.Limit))
		case errors.Is(err, os.ErrDeadlineExceeded):
			apiError(w, http.StatusRequestTimeout, "BadRequestError", fmt.Sprintf("request body: not received within %v", s.lim.BodyTimeout))
		default:
			apiError(w, http.StatusBadRequest, "BadRequestError", "request body: "+err.Error())
		}
		return
	}
	// The body is in: no read deadline from here on (the server's
	// background read, which notices a client going away, must not time
	// out during a long stream).
	_ = rc.SetReadDeadline(time.Time{})
	req, berr := decodeRequest(body, chat, s.opt.MaxModelLen)
	body = nil
	if berr != nil {
		apiError(w, berr.code, "BadRequestError", berr.msg)
		return
	}
	if req.model != "" && req.model != s.opt.ModelName {
		apiError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.model))
		return
	}
	a := ask{prompt: req.prompt, maxTokens: req.maxTokens, ignoreEOS: req.ignoreEOS, replica: replica}
	st, err := s.b.start(r.Context(), a)
	if err != nil {
		if errors.Is(err, errStopped) {
			apiError(w, http.StatusServiceUnavailable, "server_overloaded", err.Error())
		}
		return // the client went away
	}
	rw := &responder{s: s, w: w, rc: rc, st: st, chat: chat, model: s.opt.ModelName}
	rw.id = "cmpl-" + strconv.Itoa(st.id)
	if chat {
		rw.id = "chatcmpl-" + strconv.Itoa(st.id)
	}
	if req.stream {
		rw.usage, rw.continuous = req.usage, req.continuous
		rw.stream(r.Context())
	} else {
		rw.whole(r.Context())
	}
	if !rw.ended { // the client went away, or stopped reading (the write deadline), or the drain ran out, first
		s.b.abort(st.id, rw.abortReason())
	}
}

// refuseBody answers without reading the request body: the connection
// closes after the answer, and net/http's read of what is left (to keep
// the connection) fails at once instead of waiting for a slow client.
// maxDrain and drainTime bound what drainBody reads of a refused body.
const (
	maxDrain  = 1 << 20
	drainTime = time.Second
)

// drainBody reads and drops up to maxDrain more bytes of a refused body,
// for at most drainTime, so a client still sending it reads the answer.
func drainBody(rc *http.ResponseController, r *http.Request) {
	_ = rc.SetReadDeadline(time.Now().Add(drainTime))
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxDrain))
}

func refuseBody(w http.ResponseWriter, rc *http.ResponseController) {
	_ = rc.SetReadDeadline(time.Now())
	w.Header().Set("Connection", "close")
}

// isJSON reports whether a Content-Type names JSON: application/json or
// application/*+json, as vLLM's FastAPI reads a body as JSON (it reads
// a body without one as JSON too; anything else fails its validation).
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	sub, ok := strings.CutPrefix(mt, "application/")
	return ok && (sub == "json" || strings.HasSuffix(sub, "+json"))
}

// words make up the generated text: one word per token.
var words = strings.Fields("the of and to in is that it for as with was on be at by this had not are but from or have an they which one you were her all she there would their we him been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three")

// responder writes one response.
type responder struct {
	s          *Server
	w          http.ResponseWriter
	rc         *http.ResponseController
	st         *stream
	chat       bool
	model      string
	id         string
	usage      bool  // stream_options.include_usage: a last chunk with the usage
	continuous bool  // stream_options.continuous_usage_stats: usage in every chunk
	sent       int   // tokens written so far
	ended      bool  // the stream's end was seen
	writeErr   error // the write that failed, if one did
	buf        []byte
	prefix     []byte    // every chunk event's bytes up to its choices (ssePrefix)
	renewed    time.Time // when the write deadline was last moved (renew)
	evs        []event   // scratch for the mailbox's events
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

// abortReason says why a response left before its stream's end: the
// server cut it when the drain ran out (cut) or a write timed out (the
// client stopped reading), else the client went away.
func (rw *responder) abortReason() string {
	var ne net.Error
	switch {
	case rw.s.cut.Load():
		return abortDrain
	case errors.Is(rw.writeErr, os.ErrDeadlineExceeded), errors.As(rw.writeErr, &ne) && ne.Timeout():
		return abortWriteTimeout
	}
	return abortCancelled
}

// renewSlack is the share of WriteTimeout a write may find already spent:
// the deadline is moved when it is that much older, not at every write
// (moving it is a timer update in the runtime, a tenth of a chunk's CPU).
const renewSlack = 64

// renew gives the next write WriteTimeout to complete, or at least
// (renewSlack − 1) / renewSlack of it.
func (rw *responder) renew() {
	now := time.Now()
	if !rw.renewed.IsZero() && now.Sub(rw.renewed) < rw.s.lim.WriteTimeout/renewSlack {
		return
	}
	rw.renewed = now
	_ = rw.rc.SetWriteDeadline(now.Add(rw.s.lim.WriteTimeout))
}

// fail answers a stream that ended without output: rejected or aborted.
func (rw *responder) fail(ev event) {
	rw.renew()
	if ev.status == sim.StatusRejected {
		code, typ := rejection(ev.reason)
		apiError(rw.w, code, typ, "request rejected by the simulated server: "+ev.reason.String())
		return
	}
	apiError(rw.w, http.StatusServiceUnavailable, "server_overloaded", "request aborted by the simulated server")
}

// whole answers a non-streaming request once its stream ends: it counts
// the tokens as they come and writes the text once (bounded by the
// context length).
func (rw *responder) whole(ctx context.Context) {
	n := 0
	for !rw.ended {
		select {
		case <-rw.st.box.ready:
		case <-ctx.Done():
			return
		}
		rw.evs = rw.st.box.take(rw.evs[:0])
		for _, ev := range rw.evs {
			if ev.end {
				rw.ended = true
				if ev.status != sim.StatusFinished {
					rw.fail(ev)
					return
				}
				break
			}
			n += ev.tokens
		}
	}
	text := rw.text(make([]byte, 0, 8*n), n)
	choice := map[string]any{"index": 0, "finish_reason": rw.st.finish, "logprobs": nil}
	object := "text_completion"
	if rw.chat {
		object = "chat.completion"
		choice["message"] = map[string]any{"role": "assistant", "content": string(text)}
	} else {
		choice["text"] = string(text)
	}
	rw.renew()
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
//
// Each write must complete within the write timeout: a client that stops
// reading is cut off then, and its stream aborted. Until then the engine
// goes on producing and the mailbox merges what the response cannot take,
// so a stalled client costs a bounded amount of memory.
func (rw *responder) stream(ctx context.Context) {
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
	// add appends a chunk's event (the last one's usage and [DONE] too) to
	// rw.buf; flush writes what was added in one write and one flush.
	add := func(n int, last bool) {
		if !started {
			h := rw.w.Header()
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Accel-Buffering", "no") // nginx and others: pass each event on at once
			started = true
		}
		rw.chunk(n, last)
		if last && rw.usage {
			rw.usageChunk()
		}
		if last {
			rw.buf = append(rw.buf, "data: [DONE]\n\n"...)
		}
	}
	flush := func() bool {
		if len(rw.buf) == 0 {
			return true
		}
		rw.renew()
		_, err := rw.w.Write(rw.buf)
		rw.buf = rw.buf[:0]
		if err == nil {
			err = rw.rc.Flush()
		}
		rw.writeErr = err
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
	open := true
	for open || timerC != nil {
		var ready <-chan struct{}
		if open {
			ready = rw.st.box.ready
		}
		select {
		case <-ready:
			// Every chunk taken is due: they go out in one write, and the
			// stream's end (ended) counts once that write is out.
			rw.evs = rw.st.box.take(rw.evs[:0])
			ended := false
			for _, ev := range rw.evs {
				switch {
				case ev.end:
					ended, open = true, false
					if ev.status != sim.StatusFinished && !started {
						rw.ended = true
						rw.fail(ev)
						return
					}
				case window == 0 || !started:
					add(ev.tokens, ev.last)
					tick = ev.at + window
				default:
					if timerC == nil {
						arm(ev.at)
					}
					if n := len(held); n > 0 && held[n-1].at <= tick && ev.at <= tick {
						// Both go out in the same write: one entry, so that
						// a long window holds no more than its boundaries.
						held[n-1].tokens += ev.tokens
						held[n-1].at, held[n-1].last = ev.at, held[n-1].last || ev.last
					} else {
						held = append(held, ev)
					}
				}
			}
			if !flush() {
				return
			}
			rw.ended = rw.ended || ended
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
			if n > 0 {
				add(n, last)
				if !flush() {
					return
				}
			}
			if len(held) > 0 {
				arm(held[0].at)
			}
		case <-ctx.Done():
			return
		}
	}
}
