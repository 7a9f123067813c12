package serve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/itlsim/itlsim/sim"
)

// manyStreams is the real-time test's stream count: issue 31's target is
// 1,000 concurrent streams at p99 schedule lag ≤ manyStreamsLag.
const (
	manyStreams    = 1000
	manyTokens     = 40
	manyStreamsLag = 5 * time.Millisecond
)

// A thousand concurrent streams on loopback in real time: every stream
// gets its 40 events and [DONE], and serve releases the chunks on
// schedule (p99 lag ≤ 5 ms). Run twice at most; when both attempts miss
// the lag and a timer probe beside them saw the host wake 2 ms sleeps more
// than 1 ms late at p99, the host cannot hold real time and the test is
// skipped with the figures (as cmd/itlsim's real-time tests are). A wrong
// or incomplete stream fails at once.
func TestThousandStreamsInRealTime(t *testing.T) {
	if testing.Short() {
		t.Skip("a thousand streams in real time")
	}
	var logs []string
	noisy := 0
	for attempt := 1; attempt <= 2; attempt++ {
		done := make(chan struct{})
		late := make(chan time.Duration, 1)
		go func() { late <- sleepLateness(done) }()
		l := thousandStreams(t)
		close(done)
		p99 := <-late
		if t.Failed() {
			return
		}
		msg := fmt.Sprintf("attempt %d: %s (host timer p99 lateness %v)", attempt, l.Line(), p99.Round(10*time.Microsecond))
		if l.P99 <= manyStreamsLag {
			t.Log(msg)
			return
		}
		if p99 > time.Millisecond {
			noisy++
		}
		logs = append(logs, msg)
	}
	if noisy == 2 {
		t.Skipf("the host could not hold real time, so the schedule cannot be judged: %s", strings.Join(logs, "; "))
	}
	t.Errorf("p99 schedule lag over %v with %d streams: %s", manyStreamsLag, manyStreams, strings.Join(logs, "; "))
}

// thousandStreams serves manyStreams streams of manyTokens tokens at time
// scale 1 and returns the server's schedule lag.
func thousandStreams(t *testing.T) Lag {
	cfg := sim.DefaultConfig()
	cfg.Scheduler.MaxNumSeqs = 1024
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(setup, Options{ModelName: "sim-model", TimeScale: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, 5*time.Second, ln) }()
	addr := ln.Addr().String()
	body := fmt.Sprintf(`{"prompt":"a b c d","max_tokens":%d,"ignore_eos":true,"stream":true}`, manyTokens)
	req := fmt.Sprintf("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	var wg sync.WaitGroup
	errs := make(chan error, manyStreams)
	for range manyStreams {
		wg.Go(func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
			if _, err := conn.Write([]byte(req)); err != nil {
				errs <- err
				return
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			n, done := 0, false
			for sc.Scan() {
				if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					if d == "[DONE]" {
						done = true
						break
					}
					n++
				}
			}
			if resp.StatusCode != 200 || !done || n != manyTokens {
				errs <- fmt.Errorf("status %d, %d events, [DONE] %v; want 200, %d events and [DONE]", resp.StatusCode, n, done, manyTokens)
			}
		})
	}
	wg.Wait()
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	close(errs)
	for err := range errs {
		t.Errorf("a stream: %v", err)
		break
	}
	return srv.Lag()
}

// sleepLateness sleeps 2 ms at a time until done closes and returns the
// p99 of how late each sleep woke.
func sleepLateness(done <-chan struct{}) time.Duration {
	const d = 2 * time.Millisecond
	var lates []time.Duration
	for {
		select {
		case <-done:
			if len(lates) == 0 {
				return 0
			}
			slices.Sort(lates)
			return lates[min(len(lates)-1, len(lates)*99/100)]
		default:
		}
		t0 := time.Now()
		time.Sleep(d)
		lates = append(lates, time.Since(t0)-d)
	}
}

// stepBackend is a backend whose streams' chunks the benchmark puts in
// their mailboxes itself, one per stream per step: the cost of serving a
// chunk without the engine's.
type stepBackend struct {
	mu      sync.Mutex
	streams []*stream
	t0      time.Time
}

func (b *stepBackend) start(_ context.Context, a ask) (*stream, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &stream{id: len(b.streams), prompt: a.prompt, output: a.maxTokens, finish: "length", sched: -1, box: newMailbox()}
	b.streams = append(b.streams, s)
	return s, nil
}
func (b *stepBackend) abort(int, string)          {}
func (b *stepBackend) run(ctx context.Context)    { <-ctx.Done() }
func (b *stepBackend) wall(at sim.Time) time.Time { return b.t0.Add(time.Duration(at)) }

// BenchmarkServeChunk is the CPU (user + system, getrusage: the machine's
// load moves wall time) of serving one chunk on loopback: S streams, each
// step a one-token chunk put in every stream's mailbox, written by its
// response (event, write, flush) and read by its client, a goroutine in the
// same process that reads up to the event's end (its CPU is counted too).
// cpu-ns/chunk is the figure; ns/op is a step of all S streams.
func BenchmarkServeChunk(b *testing.B) {
	for _, S := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("streams=%d", S), func(b *testing.B) {
			be := &stepBackend{t0: time.Now()}
			s := newServer(Options{ModelName: "sim-model", TimeScale: 1})
			s.b = be
			s.lag = newLagTracker(0, 1, nil)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- s.Serve(ctx, 5*time.Second, ln) }()
			body := `{"prompt":"a b c d","max_tokens":1000000000,"ignore_eos":true,"stream":true,"stream_options":{"continuous_usage_stats":true}}`
			req := fmt.Sprintf("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			read := make(chan struct{}, S)
			steps := make([]chan struct{}, S)
			conns := make([]net.Conn, S)
			var wg sync.WaitGroup
			for i := range S {
				conn, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				conns[i] = conn
				if _, err := conn.Write([]byte(req)); err != nil {
					b.Fatal(err)
				}
				steps[i] = make(chan struct{}, 1)
				wg.Go(func() {
					// The status line and headers come before the first event.
					br := bufio.NewReaderSize(conn, 64<<10)
					for range steps[i] {
						for {
							line, err := br.ReadSlice('\n')
							if err != nil {
								return
							}
							if bytes.HasPrefix(line, []byte("data: ")) {
								break
							}
						}
						read <- struct{}{}
					}
				})
			}
			for { // every request admitted
				be.mu.Lock()
				n := len(be.streams)
				be.mu.Unlock()
				if n == S {
					break
				}
				time.Sleep(time.Millisecond)
			}
			step := func(at sim.Time) {
				for i, st := range be.streams {
					steps[i] <- struct{}{}
					st.box.put(event{tokens: 1, at: at})
				}
				for range S {
					<-read
				}
			}
			step(0) // the headers
			cpu0 := cpuNS()
			at := sim.Time(0)
			b.ResetTimer()
			for b.Loop() {
				at++
				step(at)
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuNS()-cpu0)/float64(b.N*S), "cpu-ns/chunk")
			for _, c := range conns {
				c.Close()
			}
			for _, c := range steps {
				close(c)
			}
			wg.Wait()
			cancel()
			<-served
		})
	}
}

// cpuNS is the process's CPU time so far, user and system.
func cpuNS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
