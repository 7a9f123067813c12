package record

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/itlsim/itlsim/reports/progress"
	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/workloads"
	"github.com/itlsim/itlsim/workloads/seed"
)

// Endpoints record can send to.
const (
	EndpointCompletions = "completions"
	EndpointChat        = "chat"
)

// Options configure a recording.
type Options struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:8000 (the /v1
	// paths are appended; a URL that already ends in /v1 is fine).
	URL string
	// Endpoint is completions (/v1/completions, what vLLM's benchmarks use)
	// or chat (/v1/chat/completions).
	Endpoint string
	// Model is the request's model field; empty asks /v1/models and takes
	// the first model listed.
	Model string
	// APIKey, when not empty, is sent as a bearer token.
	APIKey string
	// Concurrency caps the requests in flight; 0 means no cap. A request
	// due while the cap is reached waits; its arrival is when it was sent.
	Concurrency int
	// Timeout bounds one request from send to its last byte; 0: none.
	Timeout time.Duration
	// TimeScale divides the workload's arrival times and multiplies the
	// recorded times: simulated seconds per wall second. 1 for a real
	// server. > 0.
	TimeScale float64
	// ContinuousUsage asks for usage in every chunk
	// (stream_options.continuous_usage_stats, vLLM and SGLang), from which
	// each chunk's token count comes; without it, a chunk counts one token
	// and the final usage, when sent, gives the output's total.
	ContinuousUsage bool
	// Seed seeds the synthesised prompts.
	Seed uint64
	// Client sends the requests; nil: a client with no overall timeout.
	Client *http.Client
	// Counts, when not nil, counts the requests sent and finished as the
	// run goes, for a progress line on another goroutine.
	Counts *Counts
}

// Counts are a recording's requests sent and finished so far.
type Counts struct{ Sent, Finished atomic.Int64 }

// Watch shows on line, polled until line.Done, the requests o's run has
// finished of total and those sent; with total 0 (a run bounded by
// duration) the share done is the wall time gone by of span.
func Watch(line *progress.Line, o *Options, total int, span time.Duration) {
	if line == nil {
		return
	}
	c := new(Counts)
	o.Counts = c
	start := time.Now()
	line.Poll(func() progress.Status {
		st := progress.Status{Done: c.Finished.Load(), Total: int64(total), Unit: "requests", Note: fmt.Sprintf("%d sent", c.Sent.Load())}
		if total <= 0 && span > 0 {
			st.Fraction = float64(time.Since(start)) / float64(span)
		}
		return st
	})
}

// Outcomes: how a request ended. Every request is recorded with one.
const (
	OutcomeOK        = "ok"        // the stream reached [DONE] with output
	OutcomeRejected  = "rejected"  // the server refused it: 429, or a refusal naming a scheduler reason
	OutcomeError     = "error"     // another HTTP status, an error event in the stream, no connection
	OutcomeReset     = "reset"     // the connection broke or closed before [DONE]
	OutcomeTimeout   = "timeout"   // Options.Timeout cut it
	OutcomeMalformed = "malformed" // bytes that are not a stream of chunks, or usage that contradicts itself
	OutcomeCancelled = "cancelled" // the run was stopped (the context ended)
)

// Stream is one request as the client saw it. Times are ns from the
// start of the run, in the workload's time (wall time × TimeScale).
type Stream struct {
	ID           int
	Arrival      int64
	InputTokens  int // the server's prompt_tokens when it sent usage, else the requested length
	OutputTokens int // from usage when the server sent it, else the chunks' tokens
	// ChunkTimes are the visible chunks' times, failed streams' included:
	// the chunks a stream showed before it failed are kept.
	ChunkTimes []int64
	// ChunkTokens are the chunks' token counts, from continuous usage;
	// nil when the server did not send usage with every visible chunk (the
	// count per chunk is then unknown).
	ChunkTokens []int
	// Outcome is one of the Outcome constants.
	Outcome string
	// Err says why the request failed ("http 500", "timeout", "connection
	// reset", ...); empty for a stream that completed or was rejected.
	Err string
	// Rejected is the scheduler reason a refused request counts under
	// (rate-limited for a bare 429, the reason itlsim serve names).
	Rejected string
	// HTTPStatus is the response's status code, 0 when none came.
	HTTPStatus int
	// ResponseID is the id the server gave the response (cmpl-7), to
	// match a stream with the server's own records.
	ResponseID string
}

// Result is a recording.
type Result struct {
	Streams []Stream // in request id order
	// Sent counts requests sent; Failed those that failed, by Err;
	// Rejected those the server refused, by reason.
	Sent     int
	Failed   map[string]int
	Rejected map[string]int
	// Stopped is set when the context ended the run before the workload did.
	Stopped bool
}

// Completed counts the streams whose outcome is ok.
func (r *Result) Completed() int {
	n := 0
	for i := range r.Streams {
		if r.Streams[i].Outcome == OutcomeOK {
			n++
		}
	}
	return n
}

// Validate checks the options as Run does, so that a command can refuse
// them before any work.
func (o *Options) Validate() error { return o.validate() }

func (o *Options) validate() error {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("URL %q: expected http://HOST:PORT or https://HOST:PORT", o.URL)
	}
	switch o.Endpoint {
	case EndpointCompletions, EndpointChat:
	default:
		return fmt.Errorf("endpoint: expected %s or %s, got %q", EndpointCompletions, EndpointChat, o.Endpoint)
	}
	if o.Concurrency < 0 {
		return fmt.Errorf("concurrency: must be ≥ 0 (0: no cap), got %d", o.Concurrency)
	}
	if o.Timeout < 0 {
		return fmt.Errorf("timeout: must be ≥ 0 (0: none), got %v", o.Timeout)
	}
	if !(o.TimeScale > 0) || o.TimeScale > 1e6 {
		return fmt.Errorf("time scale: must be in (0, 1e6], got %g", o.TimeScale)
	}
	return nil
}

// base is the server's URL up to and including /v1.
func (o *Options) base() string {
	b := strings.TrimRight(o.URL, "/")
	if !strings.HasSuffix(b, "/v1") {
		b += "/v1"
	}
	return b
}

// recorder is one run in progress.
type recorder struct {
	o      Options
	client *http.Client
	t0     time.Time
	path   string
}

func (r *recorder) now() int64 { return int64(float64(time.Since(r.t0)) * r.o.TimeScale) }

// Run sends src's requests and records their streams until src is
// exhausted or ctx ends. A request the context cut short is recorded as
// cancelled; an error answering one request never stops the run. The
// error is for a run that could not start (a bad URL, no model listed).
func Run(ctx context.Context, src workloads.Source, o Options) (*Result, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	r := &recorder{o: o, client: o.Client, path: o.base() + "/completions"}
	if r.client == nil {
		r.client = &http.Client{}
	}
	if o.Endpoint == EndpointChat {
		r.path = o.base() + "/chat/completions"
	}
	if r.o.Model == "" {
		m, err := r.firstModel(ctx)
		if err != nil {
			return nil, err
		}
		r.o.Model = m
	}
	return r.run(ctx, src), nil
}

// FirstModel asks the server's /v1/models for the first model it lists,
// the one Run names when Options.Model is empty.
func FirstModel(ctx context.Context, o Options) (string, error) {
	if err := o.validate(); err != nil {
		return "", err
	}
	r := &recorder{o: o, client: o.Client}
	if r.client == nil {
		r.client = &http.Client{}
	}
	return r.firstModel(ctx)
}

// firstModel asks /v1/models for the model to name.
func (r *recorder) firstModel(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.o.base()+"/models", nil)
	if err != nil {
		return "", err
	}
	r.auth(req)
	resp, err := r.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("listing the server's models: %w", err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("listing the server's models: GET %s/models: %s (name one with --served-model-name)", r.o.base(), resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Data) == 0 || list.Data[0].ID == "" {
		return "", fmt.Errorf("listing the server's models: GET %s/models named none (name one with --served-model-name)", r.o.base())
	}
	return list.Data[0].ID, nil
}

func (r *recorder) auth(req *http.Request) {
	if r.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.o.APIKey)
	}
}

// done is a finished request, reported to the sending loop.
type done struct {
	id int
	at int64
}

func (r *recorder) run(ctx context.Context, src workloads.Source) *Result {
	res := &Result{Failed: map[string]int{}, Rejected: map[string]int{}}
	reactive, _ := src.(workloads.Reactive)
	var sem chan struct{}
	if r.o.Concurrency > 0 {
		sem = make(chan struct{}, r.o.Concurrency)
	}
	dones := make(chan done, 64)
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		inflight int
		streams  []Stream
	)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	r.t0 = time.Now()
	// wait sleeps until workload time at, handing ends to a reactive source
	// meanwhile; false when ctx ended or (reactive) an end changed what is due.
	wait := func(at int64, reactiveWake bool) (reached, ok bool) {
		for {
			d := time.Duration(float64(at-r.now()) / r.o.TimeScale)
			if d <= 0 {
				return true, true
			}
			timer.Reset(d)
			select {
			case <-timer.C:
				return true, true
			case dn := <-dones:
				timer.Stop()
				inflight--
				if reactive != nil {
					reactive.Done(dn.id, dn.at)
					if reactiveWake {
						return false, true
					}
				}
			case <-ctx.Done():
				timer.Stop()
				return false, false
			}
		}
	}
	var q workloads.Request
loop:
	for {
		if reactive != nil {
			at, due := reactive.NextAt()
			if !due {
				if reactive.Exhausted() || inflight == 0 {
					break
				}
				select {
				case dn := <-dones:
					inflight--
					reactive.Done(dn.id, dn.at)
				case <-ctx.Done():
					break loop
				}
				continue
			}
			reached, ok := wait(at, true)
			if !ok {
				break
			}
			if !reached {
				continue // an end may have made an earlier request due
			}
			if !reactive.Next(&q) {
				continue
			}
		} else {
			if !src.Next(&q) {
				break
			}
			if _, ok := wait(q.Arrival, false); !ok {
				break
			}
		}
		if sem != nil {
			acquired := false
			for !acquired {
				select {
				case sem <- struct{}{}:
					acquired = true
				case dn := <-dones:
					inflight--
					if reactive != nil {
						reactive.Done(dn.id, dn.at)
					}
				case <-ctx.Done():
					break loop
				}
			}
		}
		req := q
		inflight++
		res.Sent++
		if r.o.Counts != nil {
			r.o.Counts.Sent.Add(1)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := r.one(ctx, &req)
			mu.Lock()
			streams = append(streams, s)
			mu.Unlock()
			if r.o.Counts != nil {
				r.o.Counts.Finished.Add(1)
			}
			if sem != nil {
				<-sem
			}
			select {
			case dones <- done{id: req.ID, at: r.now()}:
			case <-ctx.Done():
			}
		}()
	}
	// Drain the ends while the requests in flight finish.
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	for waiting := true; waiting; {
		select {
		case <-dones:
		case <-finished:
			waiting = false
		}
	}
	slices.SortFunc(streams, func(a, b Stream) int { return cmp.Compare(a.ID, b.ID) })
	for _, s := range streams {
		switch {
		case s.Outcome == OutcomeRejected:
			res.Rejected[s.Rejected]++
		case s.Outcome != OutcomeOK:
			res.Failed[s.Err]++
		}
	}
	res.Streams = streams
	res.Stopped = ctx.Err() != nil
	return res
}

// one sends one request and records its stream.
func (r *recorder) one(ctx context.Context, q *workloads.Request) Stream {
	s := Stream{ID: q.ID, InputTokens: q.InputTokens}
	if r.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.o.Timeout)
		defer cancel()
	}
	body := r.body(q)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.path, bytes.NewReader(body))
	if err != nil {
		s.Outcome, s.Err = OutcomeError, "request: "+err.Error()
		return s
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	r.auth(req)
	s.Arrival = r.now()
	resp, err := r.client.Do(req)
	if err != nil {
		s.Outcome, s.Err = failure(ctx, err, false)
		return s
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.HTTPStatus = resp.StatusCode
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if why := refusal(resp.StatusCode, msg); why != "" {
			s.Outcome, s.Rejected = OutcomeRejected, why
			return s
		}
		s.Outcome, s.Err = OutcomeError, "http "+strconv.Itoa(resp.StatusCode)
		return s
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		s.Outcome, s.Err = OutcomeMalformed, "malformed: a JSON answer, not an event stream"
		return s
	}
	s.Outcome, s.Err = r.read(ctx, resp.Body, &s)
	return s
}

// refusal is the scheduler reason an HTTP answer counts under when it is
// a refusal, "" when it is an error: 429 is a refusal (rate-limited unless
// the body names another reason), and so is any status whose error message
// ends in a scheduler reason's name, as itlsim serve's do ("request
// rejected by the simulated server: kv-full"), so that record counts
// rejections as serve does.
func refusal(status int, body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil {
		if _, name, ok := strings.Cut(e.Error.Message, "rejected by the simulated server: "); ok {
			if _, known := scheduler.ReasonNamed(name); known {
				return name
			}
		}
	}
	if status == http.StatusTooManyRequests {
		return scheduler.ReasonRateLimited.String()
	}
	return ""
}

// failure names a transport error: its outcome and message. midStream is
// set once the response's headers came.
func failure(ctx context.Context, err error, midStream bool) (outcome, msg string) {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return OutcomeTimeout, "timeout"
	case ctx.Err() != nil:
		return OutcomeCancelled, "cancelled"
	case errors.Is(err, syscall.ECONNRESET):
		return OutcomeReset, "connection reset"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return OutcomeReset, "connection closed mid-response"
	case errors.Is(err, syscall.ECONNREFUSED):
		return OutcomeError, "connection refused"
	}
	if midStream {
		return OutcomeReset, "connection: " + firstLine(err.Error())
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return OutcomeError, "connection: " + firstLine(err.Error())
}

// chunk is the part of a streamed chunk record reads.
type chunk struct {
	ID      string `json:"id"`
	Choices []struct {
		Text  *string `json:"text"`
		Delta *struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// maxLine bounds one line of a server's stream (a chunk's JSON).
const maxLine = 16 << 20

// read reads the server-sent events of one response into s and says how
// the stream ended. A chunk is visible when it carries text; its time is
// when its line was read. With continuous usage, a chunk's tokens are the
// rise in completion_tokens since the previous visible chunk (tokens that
// showed no text count in the next chunk that does, trailing ones in the
// last); usage that goes down is malformed. Whatever the outcome, the
// chunks seen before it stay in s.
func (r *recorder) read(ctx context.Context, body io.Reader, s *Stream) (outcome, msg string) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 4<<10), maxLine)
	usage, lastUsage, prompt := -1, 0, 0
	counted := r.o.ContinuousUsage // every visible chunk carried usage
	complete := false
	defer func() {
		if !counted {
			s.ChunkTokens = nil
		}
		for _, n := range s.ChunkTokens {
			s.OutputTokens += n
		}
		if s.ChunkTokens == nil {
			s.OutputTokens = len(s.ChunkTimes)
			if outcome == OutcomeOK && usage >= 0 {
				s.OutputTokens = usage
			}
		}
	}()
	for sc.Scan() {
		at := r.now()
		line := sc.Bytes()
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			complete = true
			break
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return OutcomeMalformed, "malformed: a chunk that is not JSON"
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			return OutcomeError, "error in stream"
		}
		if s.ResponseID == "" {
			s.ResponseID = c.ID[:min(len(c.ID), 256)]
		}
		visible := false
		for _, ch := range c.Choices {
			if ch.Text != nil && *ch.Text != "" {
				visible = true
			}
			if d := ch.Delta; d != nil && (d.Content != nil && *d.Content != "" || d.ReasoningContent != nil && *d.ReasoningContent != "") {
				visible = true
			}
		}
		if c.Usage != nil {
			if c.Usage.CompletionTokens < max(usage, 0) || c.Usage.CompletionTokens < 0 {
				return OutcomeMalformed, "malformed: completion_tokens went down"
			}
			usage, prompt = c.Usage.CompletionTokens, c.Usage.PromptTokens
		}
		if !visible {
			continue
		}
		n := 1
		if c.Usage != nil {
			n = max(1, c.Usage.CompletionTokens-lastUsage)
			lastUsage = c.Usage.CompletionTokens
		} else {
			counted = false
		}
		s.ChunkTimes = append(s.ChunkTimes, at)
		s.ChunkTokens = append(s.ChunkTokens, n)
	}
	if err := sc.Err(); err != nil && !complete {
		if errors.Is(err, bufio.ErrTooLong) {
			return OutcomeMalformed, "malformed: a line over 16 MiB"
		}
		return failure(ctx, err, true)
	}
	if !complete {
		if ctx.Err() != nil {
			return failure(ctx, ctx.Err(), true)
		}
		return OutcomeReset, "stream ended before [DONE]"
	}
	if len(s.ChunkTimes) == 0 {
		return OutcomeMalformed, "no output"
	}
	if counted && usage > lastUsage {
		// Trailing tokens that showed no text: the last chunk ended them.
		s.ChunkTokens[len(s.ChunkTokens)-1] += usage - lastUsage
	}
	if prompt > 0 { // the server's count of the synthesised prompt
		s.InputTokens = prompt
	}
	return OutcomeOK, ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// body is the request's JSON: a prompt of the request's length in words,
// its output length as max_tokens with ignore_eos (as vLLM's benchmarks
// send it), streamed with usage.
func (r *recorder) body(q *workloads.Request) []byte {
	prompt := Prompt(q.Seed, q.InputTokens)
	m := map[string]any{
		"model":      r.o.Model,
		"max_tokens": q.OutputTokens,
		"ignore_eos": true,
		"stream":     true,
		"stream_options": map[string]any{
			"include_usage": true, "continuous_usage_stats": r.o.ContinuousUsage,
		},
	}
	if r.o.Endpoint == EndpointChat {
		m["messages"] = []any{map[string]any{"role": "user", "content": prompt}}
	} else {
		m["prompt"] = prompt
	}
	if !r.o.ContinuousUsage {
		m["stream_options"] = map[string]any{"include_usage": true}
	}
	b, _ := json.Marshal(m)
	return b
}

// Prompt synthesises a prompt of n words, one token each in the usual
// tokenizers (common short English words), drawn from the stream "prompt"
// under the request's seed so prompts differ and a server's prefix cache
// does not share them by accident.
func Prompt(reqSeed uint64, n int) string {
	rng := seed.Stream(reqSeed, "prompt")
	var b strings.Builder
	b.Grow(n * 5)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(promptWords[rng.IntN(len(promptWords))])
	}
	return b.String()
}

var promptWords = strings.Fields("time year people way day man thing woman life child world school state family student group country problem hand part place case week company system program question work government number night point home water room mother area money story fact month lot right study book eye job word business issue side kind head house service friend father power hour game line end member law car city community name president team minute idea kid body information back parent face others level office door health person art war history party result change morning reason research girl guy moment air teacher force education")
