package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tests of serve and record run in real time (scaled): a process that
// waits long for a CPU (the whole suite runs beside them on a shared
// machine) releases whole steps late, which a check of milliseconds sees.
// realTime runs such a test's body up to twice: a failure repeated on the
// second attempt fails the test with every message of both; a single late
// attempt is logged, with why, and the second decides. The body's checks
// are unchanged: a wrong schedule fails twice.
//
// While an attempt runs, a probe measures how late the host wakes a timer
// (2 ms sleeps). When both attempts fail and in both the timer's p99
// lateness exceeded hostLateLimit, the host could not hold real time, so
// the test cannot judge the schedule: it is skipped with the figures, not
// passed. A host that wakes timers on time and still fails fails.
func realTime(t *testing.T, body func(t testing.TB)) {
	t.Helper()
	var logs []string
	loaded := 0
	for attempt := 1; attempt <= 2; attempt++ {
		a := &attemptTB{TB: t}
		done := make(chan struct{})
		late := make(chan time.Duration, 1)
		go func() { late <- timerLateness(done) }()
		go func() {
			defer close(done)
			body(a)
		}()
		<-done
		p99 := <-late
		if !a.failed {
			if attempt > 1 {
				t.Logf("attempt 1 failed, attempt 2 passed: %s", strings.Join(logs, "; "))
			}
			return
		}
		if p99 > hostLateLimit {
			loaded++
		}
		logs = append(logs, fmt.Sprintf("attempt %d (timer p99 lateness %v): %s", attempt, p99.Round(10*time.Microsecond), strings.Join(a.msgs, "; ")))
	}
	if loaded == 2 {
		t.Skipf("the host could not hold real time (timer p99 lateness above %v in both attempts), so the schedule cannot be judged: %s", hostLateLimit, strings.Join(logs, "; "))
	}
	for _, m := range logs {
		t.Error(m)
	}
}

// hostLateLimit is the timer lateness (p99 over an attempt) above which a
// real-time test's failure is put down to the host. With load 5 on two
// cores a 2 ms sleep woke 1.05 ms late at p99 (0.2 ms at the median), and
// the router story's recorded TTFT came out 35 % long.
const hostLateLimit = time.Millisecond

// timerLateness sleeps 2 ms at a time until done closes and returns the
// p99 of how late each sleep woke.
func timerLateness(done <-chan struct{}) time.Duration {
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

// attemptTB is one attempt of a real-time test: its failures are recorded,
// not reported, and a fatal one ends the attempt's goroutine.
type attemptTB struct {
	testing.TB
	mu     sync.Mutex
	failed bool
	msgs   []string
}

func (a *attemptTB) fail(msg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failed = true
	if msg != "" {
		a.msgs = append(a.msgs, msg)
	}
}

func (a *attemptTB) Error(args ...any)                 { a.fail(fmt.Sprint(args...)) }
func (a *attemptTB) Errorf(format string, args ...any) { a.fail(fmt.Sprintf(format, args...)) }
func (a *attemptTB) Fail()                             { a.fail("") }
func (a *attemptTB) FailNow()                          { a.fail(""); runtime.Goexit() }
func (a *attemptTB) Fatal(args ...any)                 { a.fail(fmt.Sprint(args...)); runtime.Goexit() }
func (a *attemptTB) Fatalf(format string, args ...any) {
	a.fail(fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (a *attemptTB) Failed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.failed
}

// TestRealTimeRetriesOnlyOnce: a body that always fails fails the test,
// and one that fails only its first time passes.
func TestRealTimeRetriesOnlyOnce(t *testing.T) {
	calls := 0
	ok := t.Run("flaky-once", func(t *testing.T) {
		realTime(t, func(t testing.TB) {
			calls++
			if calls == 1 {
				t.Fatalf("late")
			}
		})
	})
	if !ok || calls != 2 {
		t.Errorf("a body failing once: passed %v after %d calls; want a pass after 2", ok, calls)
	}
	a := &attemptTB{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); a.Fatalf("always") }()
	<-done
	if !a.Failed() || len(a.msgs) != 1 {
		t.Errorf("a fatal attempt: failed %v, messages %v", a.Failed(), a.msgs)
	}
}
