package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/itlsim/itlsim/reports/progress"
)

// openPTY opens a pseudo-terminal of cols columns: the side a program
// writes to (a terminal to isatty) and the side that reads what it shows.
func openPTY(t *testing.T, cols uint16) (term, screen *os.File) {
	t.Helper()
	screen, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(screen.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		screen.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		screen.Close()
		t.Skipf("ptsname: %v", err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		screen.Close()
		t.Skipf("open the terminal side: %v", err)
	}
	if err := unix.IoctlSetWinsize(int(term.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: cols}); err != nil {
		t.Fatalf("set the window size: %v", err)
	}
	t.Cleanup(func() { term.Close(); screen.Close() })
	return term, screen
}

// onTerminal runs the command line args with stderr on a real
// pseudo-terminal (no ForceEnv) and returns its exit code, stdout and what
// the terminal showed.
func onTerminal(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	term, screen := openPTY(t, 120)
	shown := make(chan []byte)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, screen) // until the terminal side is closed (EIO)
		shown <- b.Bytes()
	}()
	var stdout bytes.Buffer
	code := Main(args, &stdout, term)
	term.Close()
	select {
	case b := <-shown:
		return code, stdout.String(), string(b)
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal was not drained within 10 s")
		return 0, "", ""
	}
}

// onPipe runs args with stderr on a pipe: an *os.File that is no terminal.
func onPipe(t *testing.T, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	shown := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); shown <- b }()
	var stdout bytes.Buffer
	code := Main(args, &stdout, w)
	w.Close()
	return code, string(<-shown)
}

// On a real terminal (a pseudo-terminal, detected by isatty as a user's
// is, with no ForceEnv), run, sweep, capacity, calibrate and record draw a
// progress line with a percentage and an ETA, redrawn in place and erased
// at the end (a last line such as sweep's "done in" may follow the erase);
// with --quiet on the same terminal, and on a pipe, nothing of it is
// written. stdout is the same in all three, except record's: recorded
// times differ run to run. record sends to a local server on 127.0.0.1
// that answers at once, so each of its runs lasts about 0.3 s.
func TestProgressOnARealTerminal(t *testing.T) {
	t.Setenv(progress.ForceEnv, "")
	// Redraw every 10 ms: at the default five a second, a run that ends
	// in 0.2 s on a quiet machine is drawn once.
	t.Setenv(progress.EveryEnv, "10ms")
	files := vllm70B(t)
	url := hostileServer(t)
	for _, c := range []struct {
		prefix string
		args   []string
	}{
		{"run: ", []string{"run", "--requests", "3000", "--vary", "scheduler.max_num_seqs=32,64,128,256"}},
		{"sweep: ", []string{"sweep", "--requests", "600", "--rate", "4,8,12,16,20,24", "--seeds", "1"}},
		{"capacity: ", []string{"capacity", "--requests", "300", "--seeds", "2", "-j", "1", "--slo", "ttft:p99<=1s"}},
		{"calibrate: ", []string{"calibrate", files[0], "--model", "llama-3.3-70b", "--gpu", "a100-40gb", "--tp", "8", "--evals", "4"}},
		{"record: ", []string{"record", url, "--served-model-name", "m", "--requests", "60", "--rate", "200", "--arrival", "constant",
			"--input-len", "fixed:4", "--output-len", "fixed:2", "--timer-probe", "0"}},
	} {
		t.Run(strings.TrimSuffix(c.prefix, ": "), func(t *testing.T) {
			code, stdout, shown := onTerminal(t, c.args...)
			if code != 0 {
				t.Fatalf("exit %d on a terminal: %q", code, shown)
			}
			const redraw = "\r\033[K"
			lines, last := 0, -1
			eta := false
			segs := strings.Split(shown, redraw)
			for i, seg := range segs {
				if strings.HasPrefix(seg, c.prefix) && strings.Contains(seg, " elapsed") {
					lines, last = lines+1, i
					eta = eta || (strings.Contains(seg, "%), ") && strings.Contains(seg, "ETA "))
					if len(strings.TrimRight(seg, "\r\n")) > 119 {
						t.Errorf("a progress line wider than the 120-column terminal: %q", seg)
					}
				}
			}
			if lines < 2 || !eta {
				t.Errorf("on a terminal: %d progress lines (want a line redrawn at least once), ETA shown %v:\n%q", lines, eta, shown)
			}
			if last == len(segs)-1 || strings.Contains(segs[max(last, 0)], "\n") {
				t.Errorf("the progress line is not erased at the end: %q", shown[max(0, len(shown)-200):])
			}
			if strings.Contains(stdout, "\r") || strings.Contains(stdout, "ETA ") {
				t.Errorf("progress on stdout: %q", stdout)
			}

			qcode, qstdout, qshown := onTerminal(t, append(c.args, "--quiet")...)
			if qcode != 0 || strings.Contains(qshown, "\r\033[K") || strings.Contains(qshown, "ETA ") {
				t.Errorf("--quiet on a terminal: exit %d, the terminal showed %q", qcode, qshown)
			}
			pcode, pshown := onPipe(t, c.args...)
			if pcode != 0 || strings.Contains(pshown, "\r") || strings.Contains(pshown, "ETA ") {
				t.Errorf("stderr on a pipe: exit %d, stderr %q", pcode, pshown)
			}
			if c.prefix != "record: " && qstdout != stdout {
				t.Errorf("stdout changed with the progress line:\non a terminal\n%s\nquiet\n%s", stdout, qstdout)
			}
		})
	}
}
