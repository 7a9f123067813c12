// Package progress draws one line of progress on a terminal: what is
// done out of the total, the share, the rate, the time elapsed and the
// time left. It redraws the line in place (carriage return, erase to the
// end of the line) at most Every, and erases it when the work ends, so
// that nothing of it stays in the terminal or reaches a file: on a
// writer that is not a terminal, or when asked to be quiet, New returns
// nil and every method of a nil *Line does nothing.
//
// The simulation never reads the wall clock; only this line does.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// ForceEnv is the environment variable that, set to 1, makes New treat
// any writer as a terminal. It is for tests, which run without one.
const ForceEnv = "ITLSIM_FORCE_PROGRESS"

// Every is the default shortest time between two redraws: five a second.
const Every = 200 * time.Millisecond

// EveryEnv is the environment variable that, set to a Go duration (e.g.
// 10ms), replaces Every as the default: for tests, whose runs on a fast
// machine end before a second redraw at five a second.
const EveryEnv = "ITLSIM_PROGRESS_EVERY"

// Status is what a line shows.
type Status struct {
	// Done and Total count Unit; Total <= 0 when it is not known.
	Done, Total int64
	Unit        string
	// Note follows the counts, e.g. "37 probes".
	Note string
	// Fraction, when Total is not known and Fraction > 0, is the share
	// of the work done (e.g. wall time against a run's length): it gives
	// the percentage and the time left.
	Fraction float64
}

// Options tune a Line; the zero value is what commands use.
type Options struct {
	Quiet bool             // draw nothing
	Every time.Duration    // shortest time between redraws; 0: Every
	Now   func() time.Time // the clock; nil: time.Now
	Force bool             // draw even when w is not a terminal
	// Width is the terminal's width in columns, read at each redraw (a
	// line wider than the terminal would wrap, and the next redraw would
	// not overwrite it); nil: asked of w's terminal, 0 when not known.
	Width func() int
}

// Line is one progress line. Its methods are safe to call from several
// goroutines; all of them are no-ops on a nil *Line.
type Line struct {
	w     io.Writer
	what  string
	every time.Duration
	now   func() time.Time
	width func() int

	mu     sync.Mutex
	start  time.Time
	last   time.Time // last redraw
	drawn  bool      // a line is on the terminal
	closed bool
	stop   chan struct{}
	polled chan struct{}
}

// IsTerminal reports whether w is a terminal, or ForceEnv is set to 1.
func IsTerminal(w io.Writer) bool {
	if os.Getenv(ForceEnv) == "1" {
		return true
	}
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// New returns a line labelled what on w, or nil when o.Quiet is set or w
// is not a terminal (see IsTerminal). The clock starts now.
func New(w io.Writer, what string, o Options) *Line {
	if o.Quiet || (!o.Force && !IsTerminal(w)) {
		return nil
	}
	if o.Every <= 0 {
		o.Every = Every
		if d, err := time.ParseDuration(os.Getenv(EveryEnv)); err == nil && d > 0 {
			o.Every = d
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Width == nil {
		o.Width = func() int { return 0 }
		if f, ok := w.(*os.File); ok {
			o.Width = func() int { return termWidth(f.Fd()) }
		}
	}
	return &Line{w: w, what: what, every: o.Every, now: o.Now, width: o.Width, start: o.Now()}
}

// Update shows s, unless the line was redrawn less than Every ago (the
// first update always draws).
func (l *Line) Update(s Status) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	now := l.now()
	if l.drawn && now.Sub(l.last) < l.every {
		return
	}
	l.last, l.drawn = now, true
	io.WriteString(l.w, "\r\033[K"+FormatWidth(l.what, s, now.Sub(l.start), l.width()-1))
}

// Poll calls f every Every on its own goroutine, and once at once, and
// shows what it returns, until Done.
func (l *Line) Poll(f func() Status) {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.stop != nil || l.closed {
		l.mu.Unlock()
		return
	}
	stop, polled := make(chan struct{}), make(chan struct{})
	l.stop, l.polled = stop, polled
	l.mu.Unlock()
	l.Update(f())
	go func() {
		defer close(polled)
		tick := time.NewTicker(l.every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				l.Update(f())
			}
		}
	}()
}

// Done stops any polling, erases the line and returns the time elapsed
// since New. Later updates draw nothing.
func (l *Line) Done() time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	stop, polled := l.stop, l.polled
	l.stop = nil
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-polled
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drawn && !l.closed {
		io.WriteString(l.w, "\r\033[K")
	}
	l.closed = true
	return l.now().Sub(l.start)
}

// Counter is a callback that shows done of total unit on l: the form
// the libraries' progress hooks take. nil when l is nil.
func Counter(l *Line, unit string) func(done, total int) {
	if l == nil {
		return nil
	}
	return func(done, total int) {
		l.Update(Status{Done: int64(done), Total: int64(total), Unit: unit})
	}
}

// ClearOnWrite returns w with the line erased (Done) before the first
// write to it, so that output to the same terminal never lands after the
// line. w itself when l is nil.
func (l *Line) ClearOnWrite(w io.Writer) io.Writer {
	if l == nil {
		return w
	}
	return &clearing{w: w, l: l}
}

type clearing struct {
	w    io.Writer
	l    *Line
	once sync.Once
}

func (c *clearing) Write(p []byte) (int, error) {
	c.once.Do(func() { c.l.Done() })
	return c.w.Write(p)
}

// Format is the text of a line (without the redraw codes) for s after
// elapsed: "what: done/total unit (p%), note, rate/s, elapsed, ETA".
func Format(what string, s Status, elapsed time.Duration) string {
	return FormatWidth(what, s, elapsed, 0)
}

// FormatWidth is Format in at most width bytes (width <= 0: any): it
// leaves out the rate, then the time elapsed, then the note, and cuts
// what is still too long.
func FormatWidth(what string, s Status, elapsed time.Duration, width int) string {
	var head strings.Builder
	head.WriteString(what)
	head.WriteString(": ")
	unit := s.Unit
	if unit != "" {
		unit = " " + unit
	}
	frac := -1.0
	if s.Total > 0 {
		fmt.Fprintf(&head, "%d/%d%s", s.Done, s.Total, unit)
		frac = float64(s.Done) / float64(s.Total)
	} else {
		fmt.Fprintf(&head, "%d%s", s.Done, unit)
		if s.Fraction > 0 {
			frac = min(s.Fraction, 1)
		}
	}
	if frac >= 0 {
		fmt.Fprintf(&head, " (%d%%)", int(frac*100))
	}
	// parts in the order shown; drop lists which go first when too wide.
	const note, rt, el, eta = 0, 1, 2, 3
	parts := make([]string, 4)
	if s.Note != "" {
		parts[note] = s.Note
	}
	if sec := elapsed.Seconds(); sec >= 0.05 && s.Done > 0 {
		parts[rt] = rate(float64(s.Done)/sec) + "/s"
	}
	parts[el] = clock(elapsed) + " elapsed"
	if d, ok := ETA(frac, elapsed); ok {
		parts[eta] = "ETA " + clock(d)
	}
	join := func() string {
		out := head.String()
		for _, p := range parts {
			if p != "" {
				out += ", " + p
			}
		}
		return out
	}
	line := join()
	for _, drop := range []int{rt, el, note} {
		if width <= 0 || len(line) <= width {
			break
		}
		parts[drop] = ""
		line = join()
	}
	if width > 0 && len(line) > width {
		line = line[:width]
	}
	return line
}

// ETA is the time left when a share frac of the work took elapsed, at the
// same pace; false when it cannot be told (nothing done yet).
func ETA(frac float64, elapsed time.Duration) (time.Duration, bool) {
	if frac <= 0 || elapsed <= 0 {
		return 0, false
	}
	if frac >= 1 {
		return 0, true
	}
	return time.Duration(float64(elapsed) * (1 - frac) / frac), true
}

func rate(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	case r >= 10:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// clock writes d to the second: 7s, 2m05s, 1h02m05s.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
}
