package progress

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newLine(w *bytes.Buffer, c *fakeClock) *Line {
	return New(w, "sweep", Options{Force: true, Now: c.now})
}

func TestFormat(t *testing.T) {
	cases := []struct {
		s       Status
		elapsed time.Duration
		want    string
	}{
		{Status{Done: 0, Total: 40, Unit: "points"}, 0, "sweep: 0/40 points (0%), 0s elapsed"},
		{Status{Done: 10, Total: 40, Unit: "points"}, 5 * time.Second, "sweep: 10/40 points (25%), 2.00/s, 5s elapsed, ETA 15s"},
		{Status{Done: 2, Total: 5, Unit: "configurations", Note: "37 probes"}, 100 * time.Second,
			"sweep: 2/5 configurations (40%), 37 probes, 0.02/s, 1m40s elapsed, ETA 2m30s"},
		{Status{Done: 1234, Unit: "requests"}, 2 * time.Second, "sweep: 1234 requests, 617/s, 2s elapsed"},
		{Status{Done: 30, Unit: "requests", Note: "40 sent", Fraction: 0.5}, 10 * time.Second,
			"sweep: 30 requests (50%), 40 sent, 3.00/s, 10s elapsed, ETA 10s"},
		{Status{Done: 40, Total: 40, Unit: "points"}, 2 * time.Hour, "sweep: 40/40 points (100%), 0.01/s, 2h00m00s elapsed, ETA 0s"},
		{Status{Done: 300, Total: 20, Unit: "x"}, 20 * time.Second, "sweep: 300/20 x (1500%), 15.0/s, 20s elapsed, ETA 0s"},
	}
	for _, c := range cases {
		if got := Format("sweep", c.s, c.elapsed); got != c.want {
			t.Errorf("Format(%+v, %v)\n got %q\nwant %q", c.s, c.elapsed, got, c.want)
		}
	}
}

// TestFormatWidth: a line too wide for the terminal drops the rate, then
// the time elapsed, then the note, and is cut as a last resort.
func TestFormatWidth(t *testing.T) {
	s := Status{Done: 12, Total: 40, Unit: "configurations", Note: "1234 probes"}
	el := 100 * time.Second
	full := "capacity: 12/40 configurations (30%), 1234 probes, 0.12/s, 1m40s elapsed, ETA 3m53s"
	for _, c := range []struct {
		width int
		want  string
	}{
		{0, full},
		{len(full), full},
		{79, "capacity: 12/40 configurations (30%), 1234 probes, 1m40s elapsed, ETA 3m53s"},
		{60, "capacity: 12/40 configurations (30%), 1234 probes, ETA 3m53s"},
		{50, "capacity: 12/40 configurations (30%), ETA 3m53s"},
		{20, "capacity: 12/40 conf"},
	} {
		if got := FormatWidth("capacity", s, el, c.width); got != c.want {
			t.Errorf("width %d:\n got %q\nwant %q", c.width, got, c.want)
		}
	}
	var w bytes.Buffer
	l := New(&w, "capacity", Options{Force: true, Width: func() int { return 51 }, Now: (&fakeClock{t: time.Unix(0, 0)}).now})
	l.Update(s)
	if got := w.String(); got != "\r\033[Kcapacity: 12/40 configurations (30%), 1234 probes" {
		t.Errorf("a line on a 51-column terminal: %q", got)
	}
}

func TestETA(t *testing.T) {
	if _, ok := ETA(0, time.Second); ok {
		t.Error("ETA with nothing done should be unknown")
	}
	if d, ok := ETA(0.25, 30*time.Second); !ok || d != 90*time.Second {
		t.Errorf("ETA(0.25, 30s) = %v %v, want 1m30s", d, ok)
	}
	if d, ok := ETA(1, 30*time.Second); !ok || d != 0 {
		t.Errorf("ETA(1, 30s) = %v %v, want 0", d, ok)
	}
}

// TestThrottle: the first update draws; later ones within Every do not;
// one Every later draws again, each redraw starting with \r and the erase.
func TestThrottle(t *testing.T) {
	var w bytes.Buffer
	c := &fakeClock{t: time.Unix(1000, 0)}
	l := newLine(&w, c)
	l.Update(Status{Done: 1, Total: 10, Unit: "points"})
	for i := 2; i <= 5; i++ {
		c.add(40 * time.Millisecond) // 160 ms in all: under Every
		l.Update(Status{Done: int64(i), Total: 10, Unit: "points"})
	}
	c.add(40 * time.Millisecond) // 200 ms since the first draw
	l.Update(Status{Done: 6, Total: 10, Unit: "points"})
	got := w.String()
	if n := strings.Count(got, "\r\033[K"); n != 2 {
		t.Fatalf("%d redraws, want 2: %q", n, got)
	}
	if !strings.HasPrefix(got, "\r\033[Ksweep: 1/10 points (10%)") || !strings.Contains(got, "\r\033[Ksweep: 6/10 points (60%), 30.0/s, 0s elapsed, ETA 0s") {
		t.Errorf("lines: %q", got)
	}
	if strings.Contains(got, "\n") {
		t.Errorf("a progress line never ends a line: %q", got)
	}
}

// TestDoneClears: Done erases the line once, reports the time elapsed, and
// nothing is drawn after it.
func TestDoneClears(t *testing.T) {
	var w bytes.Buffer
	c := &fakeClock{t: time.Unix(1000, 0)}
	l := newLine(&w, c)
	l.Update(Status{Done: 1, Total: 2})
	c.add(3 * time.Second)
	if d := l.Done(); d != 3*time.Second {
		t.Errorf("Done = %v, want 3s", d)
	}
	if !strings.HasSuffix(w.String(), "\r\033[K") {
		t.Errorf("not erased at the end: %q", w.String())
	}
	n := w.Len()
	c.add(time.Second)
	l.Update(Status{Done: 2, Total: 2})
	l.Done()
	if w.Len() != n {
		t.Errorf("drawn after Done: %q", w.String()[n:])
	}
}

// TestDoneWithoutDraw: a line never drawn writes nothing at all.
func TestDoneWithoutDraw(t *testing.T) {
	var w bytes.Buffer
	l := newLine(&w, &fakeClock{t: time.Unix(0, 0)})
	l.Done()
	if w.Len() != 0 {
		t.Errorf("wrote %q", w.String())
	}
}

// TestNotTerminal: a buffer is no terminal, so New returns nil (unless
// forced) and a nil line's methods are no-ops; Quiet wins over Force.
func TestNotTerminal(t *testing.T) {
	t.Setenv(ForceEnv, "")
	var w bytes.Buffer
	l := New(&w, "run", Options{})
	if l != nil {
		t.Fatal("a line on a buffer")
	}
	l.Update(Status{Done: 1})
	l.Poll(func() Status { return Status{} })
	l.Done()
	if New(&w, "run", Options{Quiet: true, Force: true}) != nil {
		t.Error("Quiet should win over Force")
	}
	t.Setenv(ForceEnv, "1")
	if New(&w, "run", Options{}) == nil {
		t.Errorf("%s=1 should force a line", ForceEnv)
	}
	if New(&w, "run", Options{Quiet: true}) != nil {
		t.Errorf("Quiet should win over %s", ForceEnv)
	}
	if w.Len() != 0 {
		t.Errorf("wrote %q", w.String())
	}
}

// TestPoll: Poll draws at once, Done stops it and erases the line.
func TestPoll(t *testing.T) {
	var w bytes.Buffer
	l := New(&w, "run", Options{Force: true, Every: time.Millisecond})
	n := int64(0)
	l.Poll(func() Status { n++; return Status{Done: n, Unit: "requests"} })
	l.Done()
	got := w.String()
	if !strings.HasPrefix(got, "\r\033[Krun: 1 requests") || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("poll output: %q", got)
	}
}

// TestClearOnWrite: output to the same terminal erases the line first;
// Counter draws done/total unit.
func TestClearOnWrite(t *testing.T) {
	var w bytes.Buffer
	c := &fakeClock{t: time.Unix(1000, 0)}
	l := newLine(&w, c)
	Counter(l, "simulations")(3, 300)
	io.WriteString(l.ClearOnWrite(&w), "table\n")
	if got, want := w.String(), "\r\033[Ksweep: 3/300 simulations (1%), 0s elapsed\r\033[Ktable\n"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	var nl *Line
	if Counter(nl, "x") != nil || nl.ClearOnWrite(&w) != io.Writer(&w) {
		t.Error("a nil line should give no counter and w itself")
	}
}
