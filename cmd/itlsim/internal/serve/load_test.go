package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// loadStreams is how many concurrent streams TestLoadAbortedAndStalled
// opens: a third read to the end, a third abort after their first token,
// a third send their request and never read.
const loadStreams = 300

// heapMiB is the live heap after a collection, in MiB.
func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// Hundreds of concurrent streams, some aborted mid-stream and some never
// read, on loopback: while they run the heap stays bounded, and once the
// stalled clients hang up every goroutine the server started is gone.
// The figures it logs (-v) are the ones docs/bad-input-serve.md quotes.
func TestLoadAbortedAndStalled(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test")
	}
	base0 := heapMiB()
	goroutines0 := runtime.NumGoroutine()
	srv, base := start(t, nil, Options{TimeScale: 20, Limits: Limits{WriteTimeout: 5 * time.Second}})
	_ = srv
	addr := strings.TrimPrefix(base, "http://")
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	body := `{"prompt":"a b c d","max_tokens":400,"ignore_eos":true,"stream":true}`
	// A stalled client asks for more than the loopback socket buffers
	// hold, so that its response really blocks (checked below: were it
	// refused, its goroutines would be gone).
	long := `{"prompt":"a b c d","max_tokens":30000,"ignore_eos":true,"stream":true}`

	var wg sync.WaitGroup
	errs := make(chan error, loadStreams)
	var stalled []net.Conn
	var mu sync.Mutex
	for i := range loadStreams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 3 {
			case 0: // read to the end
				resp, err := client.Post(base+"/v1/completions", "application/json", strings.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				defer resp.Body.Close()
				data, err := io.ReadAll(resp.Body)
				if err != nil || resp.StatusCode != 200 || !strings.Contains(string(data), "data: [DONE]") {
					errs <- fmt.Errorf("full stream: %d %v, %d bytes", resp.StatusCode, err, len(data))
				}
			case 1: // abort after the first token
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/completions", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() && !strings.HasPrefix(sc.Text(), "data: ") {
				}
				cancel()
				resp.Body.Close()
			case 2: // send the request, never read
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					errs <- err
					return
				}
				fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(long), long)
				mu.Lock()
				stalled = append(stalled, conn)
				mu.Unlock()
			}
		}()
	}
	// Sample the heap while the streams run.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	peak := 0.0
	for sampling := true; sampling; {
		select {
		case <-done:
			sampling = false
		case <-time.After(50 * time.Millisecond):
		}
		peak = max(peak, heapMiB())
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	time.Sleep(200 * time.Millisecond) // let the stalled responses fill their buffers
	held := runtime.NumGoroutine()
	if held < goroutines0+loadStreams/3 {
		t.Errorf("%d goroutines with %d clients stalled, %d before: the stalled responses did not block", held, loadStreams/3, goroutines0)
	}
	heldHeap := heapMiB()
	for _, c := range stalled {
		c.Close()
	}
	client.CloseIdleConnections()
	// The server's goroutines end once the stalled connections are closed:
	// wait for them (bounded), then compare with the count before start.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(20 * time.Second); after > goroutines0+8 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	afterHeap := heapMiB()
	t.Logf("%d streams (%d read, %d aborted, %d stalled): heap %.1f MiB before, peak %.1f MiB, %.1f MiB with the stalled held, %.1f MiB after; goroutines %d before, %d with the stalled held, %d after",
		loadStreams, (loadStreams+2)/3, (loadStreams+1)/3, loadStreams/3, base0, peak, heldHeap, afterHeap, goroutines0, held, after)
	if after > goroutines0+8 {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after every client left, %d before:\n%s", after, goroutines0, buf[:runtime.Stack(buf, true)])
	}
	if peak-base0 > 256 {
		t.Errorf("heap peaked %.1f MiB over its %.1f MiB start with %d streams; want ≤ 256 MiB", peak-base0, base0, loadStreams)
	}
	if afterHeap-base0 > 32 {
		t.Errorf("heap %.1f MiB over its start once every client left; want ≤ 32 MiB", afterHeap-base0)
	}
}
