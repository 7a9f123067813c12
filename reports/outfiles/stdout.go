package outfiles

import (
	"io"
	"sync"
)

// CheckedWriter is stdout as the commands see it: it keeps the first
// write error (and refuses every later write with it), so that a command's
// main exits non-zero when what the command printed did not all arrive,
// whatever the command did with the error.
type CheckedWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (c *CheckedWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.err = err
	}
	return n, err
}

// Failed is the first write error, after flushing a buffered stdout.
func (c *CheckedWriter) Failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fl, ok := c.w.(interface{ Flush() error }); ok && c.err == nil {
		c.err = fl.Flush()
	}
	return c.err
}

// NewCheckedWriter checks the writes to w.
func NewCheckedWriter(w io.Writer) *CheckedWriter { return &CheckedWriter{w: w} }
