package record

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/itlsim/itlsim/cmd/itlsim/internal/serve"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/specdecode"
	"github.com/itlsim/itlsim/workloads"
)

// serveSim serves the default scenario (after mutate) on loopback.
func serveSim(t *testing.T, mutate func(*sim.Config), scale float64) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(setup, serve.Options{ModelName: "m", TimeScale: scale}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, 5*time.Second, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}

func requests(n, in, out int, gapNS int64) *workloads.Slice {
	s := &workloads.Slice{}
	for i := range n {
		s.Requests = append(s.Requests, workloads.Request{ID: i, Arrival: int64(i) * gapNS, InputTokens: in, OutputTokens: out})
	}
	return s
}

// Against itlsim serve with speculative decoding, continuous usage gives
// each chunk's token count: chunks carry several tokens and they add up to
// the requested output; the model comes from /v1/models; both endpoints.
func TestRecordCountsTokensPerChunk(t *testing.T) {
	base := serveSim(t, func(c *sim.Config) {
		c.SpecDecode.Method = "ngram"
		c.SpecDecode.K = 3
		a, err := specdecode.ParseAcceptance("iid:0.8")
		if err != nil {
			t.Fatal(err)
		}
		c.SpecDecode.Acceptance = a
	}, 10)
	for _, ep := range []string{EndpointCompletions, EndpointChat} {
		res, err := Run(context.Background(), requests(4, 20, 40, 1e6), Options{
			URL: base, Endpoint: ep, TimeScale: 10, ContinuousUsage: true, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		multi := false
		for _, s := range res.Streams {
			if s.Err != "" {
				t.Fatalf("%s: stream %d: %s", ep, s.ID, s.Err)
			}
			sum := 0
			for _, n := range s.ChunkTokens {
				sum += n
				multi = multi || n > 1
			}
			if sum != 40 || s.OutputTokens != 40 || len(s.ChunkTimes) != len(s.ChunkTokens) {
				t.Fatalf("%s: stream %d: %d tokens over %d chunks, output %d; want 40", ep, s.ID, sum, len(s.ChunkTokens), s.OutputTokens)
			}
		}
		if !multi {
			t.Fatalf("%s: no chunk of several tokens with speculative decoding", ep)
		}
	}
}

// A closed loop's next request follows the previous one's end: record
// tells the reactive source every end, and the run ends when the source
// is exhausted.
func TestRecordClosedLoop(t *testing.T) {
	base := serveSim(t, nil, 10)
	wc := workloads.DefaultConfig()
	wc.Arrival = workloads.ArrivalClosed
	wc.Users, wc.ThinkS, wc.Requests = 3, 0.01, 9
	wc.InputLen = workloads.MustParseDist("fixed:16")
	wc.OutputLen = workloads.MustParseDist("fixed:10")
	src, err := workloads.New(wc, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), src, Options{URL: base, Endpoint: EndpointCompletions, TimeScale: 10, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 9 || len(res.Streams) != 9 || len(res.Failed) != 0 {
		t.Fatalf("sent %d, %d streams, failed %v; want 9, 9, none", res.Sent, len(res.Streams), res.Failed)
	}
	// No more than 3 users' requests overlap.
	for _, s := range res.Streams {
		overlap := 0
		end := s.ChunkTimes[len(s.ChunkTimes)-1]
		for _, o := range res.Streams {
			if o.Arrival <= s.Arrival && o.ChunkTimes[len(o.ChunkTimes)-1] > s.Arrival && o.ID != s.ID {
				overlap++
			}
		}
		if overlap > 2 || end < s.Arrival {
			t.Fatalf("request %d arrived with %d others in flight (3 users)", s.ID, overlap)
		}
	}
}

// Errors are counted, never dropped: a timeout, a server error, a stream
// cut before [DONE]; the concurrency cap holds; the API key is sent.
func TestRecordCountsFailures(t *testing.T) {
	var inFlight, most atomic.Int32
	var keys atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer secret" {
			keys.Add(1)
		}
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		var body bytes.Buffer
		body.ReadFrom(r.Body)
		switch {
		case strings.Contains(body.String(), `"max_tokens":1,`): // a slow one: times out
			time.Sleep(300 * time.Millisecond)
		case strings.Contains(body.String(), `"max_tokens":2,`):
			http.Error(w, `{"error":{"message":"boom"}}`, http.StatusInternalServerError)
			return
		case strings.Contains(body.String(), `"max_tokens":3,`): // cut short
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: {\"id\":\"x\",\"choices\":[{\"text\":\" a\"}]}\n\n"))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"id\":\"ok\",\"choices\":[{\"text\":\" a\"}]}\n\ndata: {\"id\":\"ok\",\"choices\":[{\"text\":\" b\"}]}\n\ndata: {\"id\":\"ok\",\"choices\":[],\"usage\":{\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"))
	})
	ts := httptest.NewServer(h) // listens on 127.0.0.1
	defer ts.Close()
	src := &workloads.Slice{}
	for i, out := range []int{1, 2, 3, 9, 9, 9} {
		src.Requests = append(src.Requests, workloads.Request{ID: i, InputTokens: 4, OutputTokens: out})
	}
	res, err := Run(context.Background(), src, Options{URL: ts.URL + "/v1", Endpoint: EndpointCompletions, Model: "m",
		APIKey: "secret", Concurrency: 2, Timeout: 100 * time.Millisecond, TimeScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"timeout": 1, "http 500": 1, "stream ended before [DONE]": 1}
	if len(res.Failed) != len(want) {
		t.Fatalf("failed %v, want %v", res.Failed, want)
	}
	for k, n := range want {
		if res.Failed[k] != n {
			t.Fatalf("failed %v, want %v", res.Failed, want)
		}
	}
	if len(res.Streams) != 6 || most.Load() > 2 || keys.Load() != 6 {
		t.Fatalf("%d streams, %d at once (cap 2), %d with the key; want 6, ≤ 2, 6", len(res.Streams), most.Load(), keys.Load())
	}
	// The file holds all six, and analyze's reader takes it.
	var buf bytes.Buffer
	if err := WriteStreams(&buf, "r", res.Streams); err != nil {
		t.Fatal(err)
	}
	recs, err := ingest.Parse("rec.jsonl", buf.Bytes(), ingest.FormatStreams)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || len(recs[0].Streams) != 3 || recs[0].Failed["timeout"] != 1 {
		t.Fatalf("read back %d recordings: %+v", len(recs), recs)
	}
}

// A cancelled context stops the run: requests in flight end as cancelled
// and are kept; Stopped is set.
func TestRecordCancel(t *testing.T) {
	base := serveSim(t, nil, 1)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	res, err := Run(ctx, requests(50, 16, 5000, 1e6), Options{URL: base, Endpoint: EndpointCompletions, TimeScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || res.Sent == 0 || res.Failed["cancelled"] != res.Sent || len(res.Streams) != res.Sent {
		t.Fatalf("stopped %v, sent %d, %d streams, failed %v; want every sent request kept as cancelled", res.Stopped, res.Sent, len(res.Streams), res.Failed)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{URL: "ftp://x", Endpoint: "chat", TimeScale: 1}, "URL"},
		{Options{URL: "http://x", Endpoint: "embeddings", TimeScale: 1}, "endpoint"},
		{Options{URL: "http://x", Endpoint: "chat", TimeScale: 0}, "time scale"},
		{Options{URL: "http://x", Endpoint: "chat", TimeScale: 1, Concurrency: -1}, "concurrency"},
	} {
		if _, err := Run(context.Background(), &workloads.Slice{}, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.o, err, c.want)
		}
	}
}
