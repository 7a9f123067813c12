package serve

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/itlsim/itlsim/sim"
)

// loadStreams is the load test's stream count, a third of each kind.
const loadStreams = 300

// Hundreds of concurrent streams, a third read to the end, a third
// aborted by the client mid-stream, a third never read: the finished
// ones are whole, the stalled ones are cut off by the write timeout, and
// afterwards the goroutines are back at their baseline, the simulation
// holds no request, and the heap stayed bounded all along.
func TestLoadAbortedAndStalledStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	cfg := sim.DefaultConfig()
	cfg.Scheduler.MaxNumSeqs = 512
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(setup, Options{ModelName: "sim-model", TimeScale: 20, Limits: Limits{WriteTimeout: time.Second}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A fixed 16 kB send buffer per connection, as a real network's path
	// holds little: on loopback the kernel would grow it to megabytes and
	// take a stalled client's whole stream off the server's hands.
	base := listenOn(t, srv, smallSendBuffers{ln})
	addr := strings.TrimPrefix(base, "http://")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap, baseG := ms.HeapInuse, runtime.NumGoroutine()

	t0 := time.Now()
	var peakHeap atomic.Uint64
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peakHeap.Load() {
				peakHeap.Store(m.HeapInuse)
			}
			select {
			case <-tick.C:
			case <-stopSampling:
				return
			}
		}
	}()

	dial := func(maxTokens int, small bool) (net.Conn, *bufio.Reader) {
		var d net.Dialer
		if small {
			// A small receive buffer from the handshake on: the server's
			// writes block after a few kB, as behind a stalled client.
			d.Control = func(_, _ string, c syscall.RawConn) error {
				return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
			}
		}
		conn, err := d.Dial("tcp", addr)
		if err != nil {
			t.Error(err)
			return nil, nil
		}
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		body := fmt.Sprintf(`{"prompt":"a b c d","max_tokens":%d,"ignore_eos":true,"stream":true}`, maxTokens)
		fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		return conn, bufio.NewReader(conn)
	}
	// events reads up to n data events of a response (all when n < 0).
	events := func(br *bufio.Reader, n int) (got int, done bool) {
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("stream: %v %v", resp, err)
			return 0, false
		}
		sc := bufio.NewScanner(resp.Body)
		for (n < 0 || got < n) && sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				if d == "[DONE]" {
					return got, true
				}
				got++
			}
		}
		return got, false
	}
	var (
		wg      sync.WaitGroup
		stalled []net.Conn
		whole   atomic.Int64
	)
	const readTokens = 40
	for i := range loadStreams {
		switch i % 3 {
		case 0: // reads to the end
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, br := dial(readTokens, false)
				if conn == nil {
					return
				}
				defer conn.Close()
				if n, done := events(br, -1); done && n == readTokens {
					whole.Add(1)
				} else {
					t.Errorf("a read stream ended after %d events (done %v), want %d and [DONE]", n, done, readTokens)
				}
			}()
		case 1: // aborts after a few events
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, br := dial(100000, false)
				if conn == nil {
					return
				}
				events(br, 5)
				conn.Close()
			}()
		case 2: // never reads: a small receive buffer, held open
			if conn, _ := dial(100000, true); conn != nil {
				stalled = append(stalled, conn)
			}
		}
	}
	wg.Wait()
	t.Logf("clients done after %v", time.Since(t0))
	if whole.Load() != loadStreams/3 {
		t.Errorf("%d of %d read streams whole", whole.Load(), loadStreams/3)
	}
	// The stalled streams are cut off by the write timeout and aborted:
	// the simulation ends up holding nothing, with the clients still
	// connected.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := client.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		fam := parseMetrics(t, resp)
		if gauge(fam, metricRunning) == 0 && gauge(fam, metricWaiting) == 0 {
			// Cut off, not finished: a stalled stream ran to its 100000
			// tokens only if nothing stopped it.
			if gen := counter(fam, metricGeneration); gen > float64(len(stalled))*100000/10 {
				t.Errorf("%g tokens generated: the stalled streams were not cut off", gen)
			}
			t.Logf("%g tokens generated in all", counter(fam, metricGeneration))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with %d stalled clients: running %g, waiting %g; want 0 once the write timeout cut them", len(stalled), gauge(fam, metricRunning), gauge(fam, metricWaiting))
		}
	}
	t.Logf("simulation empty after %v", time.Since(t0))
	for _, c := range stalled {
		c.Close()
	}
	close(stopSampling)
	<-sampled
	g := 0
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if g = runtime.NumGoroutine(); g <= baseG+2 {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, baseline %d:\n%s", g, baseG, buf[:runtime.Stack(buf, true)])
		}
	}
	peak := peakHeap.Load()
	t.Logf("%d streams (%d stalled): heap in use %.1f MiB at the start, %.1f MiB at the peak; goroutines %d, then %d",
		loadStreams, len(stalled), float64(baseHeap)/(1<<20), float64(peak)/(1<<20), baseG, g)
	// Each stalled stream may hold its mailbox (64 events) and one write
	// buffer; a server that kept a stream's whole output would hold
	// megabytes per stalled client.
	if grown := int64(peak) - int64(baseHeap); grown > 48<<20 {
		t.Errorf("heap in use grew by %.1f MiB under %d streams; want ≤ 48 MiB", float64(grown)/(1<<20), loadStreams)
	}
	goodRequest(t, client, base)
}

func parseMetrics(t *testing.T, resp *http.Response) map[string]*dto.MetricFamily {
	t.Helper()
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fam, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fam
}

type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}
