package serve

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/itlsim/itlsim/sim"
)

// startPorts serves a two-replica cluster one port per replica on loopback
// until the test ends; the reports come after Serve returned.
func startPorts(t *testing.T, mutate func(*sim.Config)) (srv *Server, bases []string, stop func()) {
	t.Helper()
	return startPortsWith(t, mutate, Options{ModelName: "sim-model", TimeScale: 1, PerReplica: true}, nil)
}

// startPortsWith is startPorts with serve's options and a timeline sink.
func startPortsWith(t *testing.T, mutate func(*sim.Config), opt Options, sink sim.TimelineSink) (srv *Server, bases []string, stop func()) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Cluster.Replicas = 2
	cfg.Cluster.Router.Policy = "round-robin"
	if mutate != nil {
		mutate(&cfg)
	}
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	srv, err = New(setup, opt, sink)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Ports() != 2 {
		t.Fatalf("%d ports for 2 replicas", srv.Ports())
	}
	var lns []net.Listener
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		bases = append(bases, "http://"+ln.Addr().String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, 5*time.Second, lns...) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return srv, bases, stop
}

// A cluster served one port per replica: requests sent to port i run on
// replica i whatever the scenario's router would have done (three to
// replica 0, one to replica 1, where round-robin would split them two and
// two); each port's /metrics is its replica's alone (running and waiting
// while they stream, then its own token counts); the official OpenAI SDK
// works against each port; the report counts each replica's requests as
// sent to it and none as the router's.
func TestPortPerReplica(t *testing.T) {
	srv, bases, stop := startPorts(t, func(c *sim.Config) { c.Scheduler.MaxNumSeqs = 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const out = 40
	var wg sync.WaitGroup
	for _, port := range []int{0, 0, 0, 1} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := sdk(bases[port])
			if _, err := client.Completions.New(ctx, openai.CompletionNewParams{
				Model:     "sim-model",
				Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("a b c d e f g h")},
				MaxTokens: openai.Int(out),
			}, option.WithJSONSet("ignore_eos", true)); err != nil {
				t.Errorf("port %d: %v", port, err)
			}
		}()
	}
	// Replica 0 holds three (two running, one waiting: max_num_seqs 2),
	// replica 1 one.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		f0, f1 := scrape(t, bases[0]), scrape(t, bases[1])
		r0, w0, r1, w1 := gauge(f0, metricRunning), gauge(f0, metricWaiting), gauge(f1, metricRunning), gauge(f1, metricWaiting)
		if r0 > 2 || r1 > 1 || w1 > 0 {
			t.Fatalf("replica 0 running %g waiting %g, replica 1 running %g waiting %g: more than was sent to it", r0, w0, r1, w1)
		}
		if r0 == 2 && w0 == 1 && r1 == 1 {
			if kv0, kv1 := gauge(f0, metricKVUsage), gauge(f1, metricKVUsage); !(kv0 > kv1 && kv1 > 0) {
				t.Fatalf("kv usage: replica 0 %g with two running, replica 1 %g with one; want 0 < replica 1 < replica 0", kv0, kv1)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica 0 running %g waiting %g, replica 1 running %g waiting %g; want 2, 1, 1", r0, w0, r1, w1)
		}
	}
	wg.Wait()
	for i, want := range []int{3, 1} {
		f := scrape(t, bases[i])
		if g := counter(f, metricGeneration); g != float64(want*out) {
			t.Errorf("port %d: generation_tokens_total %g, want %d", i, g, want*out)
		}
		if n := histCount(f, metricTTFT); n != uint64(want) {
			t.Errorf("port %d: time_to_first_token_seconds count %d, want %d", i, n, want)
		}
	}

	// The SDK streams from each port, both endpoints.
	for i, base := range bases {
		client := sdk(base)
		cs := client.Completions.NewStreaming(ctx, openai.CompletionNewParams{
			Model:     "sim-model",
			Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("one two three")},
			MaxTokens: openai.Int(6),
		}, option.WithJSONSet("ignore_eos", true))
		var text strings.Builder
		for cs.Next() {
			for _, ch := range cs.Current().Choices {
				text.WriteString(ch.Text)
			}
		}
		if err := cs.Err(); err != nil || len(strings.Fields(text.String())) != 6 {
			t.Fatalf("port %d completions stream: %q, %v; want 6 words", i, text.String(), err)
		}
		ch := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:     "sim-model",
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
			MaxTokens: openai.Int(6),
		}, option.WithJSONSet("ignore_eos", true))
		var acc openai.ChatCompletionAccumulator
		for ch.Next() {
			acc.AddChunk(ch.Current())
		}
		if err := ch.Err(); err != nil || len(acc.Choices) != 1 || len(strings.Fields(acc.Choices[0].Message.Content)) != 6 {
			t.Fatalf("port %d chat stream: %+v, %v; want 6 words", i, acc.Choices, err)
		}
		if resp, err := http.Get(base + "/health"); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("port %d /health: %v %v", i, resp, err)
		} else {
			resp.Body.Close()
		}
	}
	stop()
	reps, routing := srv.Cluster()
	if len(reps) != 2 || reps[0].Routed != 5 || reps[1].Routed != 3 || reps[0].Server.Finished != 5 || reps[1].Server.Finished != 3 {
		t.Fatalf("replicas: %d, sent %d/%d finished %d/%d; want 5/3 and 5/3", len(reps), reps[0].Routed, reps[1].Routed, reps[0].Server.Finished, reps[1].Server.Finished)
	}
	if routing.Reasons != ([len(routing.Reasons)]int{}) || routing.Policy != "port-per-replica" {
		t.Fatalf("routing %+v; want no router decisions", routing)
	}
	if names := srv.PortNames(); names[0] != "replica-0" || names[1] != "replica-1" {
		t.Fatalf("port names %v", names)
	}
}

// A replayed stream whose client goes away stops playing: the running
// gauge falls to 0 long before the recorded stream would have ended.
func TestReplayDisconnectStops(t *testing.T) {
	sc := Script{Prompt: 3}
	for i := range 1000 { // 10 s of chunks, 10 ms apart
		sc.Offsets = append(sc.Offsets, sim.Time(i)*10*sim.Time(time.Millisecond))
		sc.Tokens = append(sc.Tokens, 1)
	}
	srv, err := NewReplay([]Script{sc}, Options{ModelName: "m", TimeScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	base := listen(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/completions", strings.NewReader(`{"prompt":"a b c","stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := bufio.NewScanner(resp.Body)
	for n := 0; n < 3 && s.Scan(); {
		if strings.HasPrefix(s.Text(), "data: ") {
			n++
		}
	}
	if r := gauge(scrape(t, base), metricRunning); r != 1 {
		t.Fatalf("while replaying: running %g, want 1", r)
	}
	cancel()
	resp.Body.Close()
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if gauge(scrape(t, base), metricRunning) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("3 s after the disconnect the replayed stream still runs; want it stopped")
		}
	}
	if n := histCount(scrape(t, base), metricE2E); n != 0 {
		t.Fatalf("e2e_request_latency_seconds count %d for an aborted stream, want 0", n)
	}
}
