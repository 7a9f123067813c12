package serve

import (
	"context"
	"sync"
	"time"

	"github.com/itlsim/itlsim/sim"
)

// Script is one recorded stream to replay: each chunk's offset from the
// request's arrival (simulated ns, not decreasing) and its tokens.
type Script struct {
	Offsets []sim.Time
	Tokens  []int
	Prompt  int // the recorded prompt length, reported in usage when the request has none
}

// replayer is the backend of itlsim serve --replay: request k gets script
// k mod len(scripts) (file order), its chunks at their recorded offsets
// from the request's arrival. max_tokens does not shorten a script.
type replayer struct {
	scripts []Script
	scale   float64
	t0      time.Time
	metrics *metrics
	lag     *lagTracker

	mu      sync.Mutex
	next    int
	running int
	gone    map[int]chan struct{} // per stream playing: closed when its client went away
	stopped chan struct{}
}

var _ backend = (*replayer)(nil)

func newReplayer(scripts []Script, scale float64, m *metrics) *replayer {
	return &replayer{scripts: scripts, scale: scale, t0: time.Now(), metrics: m, gone: map[int]chan struct{}{}, stopped: make(chan struct{})}
}

func (p *replayer) now() sim.Time { return sim.Time(float64(time.Since(p.t0)) * p.scale) }

func (p *replayer) wall(at sim.Time) time.Time {
	return p.t0.Add(time.Duration(float64(at) / p.scale))
}

// abort stops playing a stream whose client went away, as a server aborts
// the request: it leaves the running gauge at once and counts nowhere else
// (why it ended does not matter: a replay writes no timelines).
func (p *replayer) abort(id int, _ string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.gone[id]; ok {
		close(c)
		delete(p.gone, id)
	}
}

func (p *replayer) run(ctx context.Context) {
	<-ctx.Done()
	close(p.stopped)
}

func (p *replayer) start(ctx context.Context, a ask) (*stream, error) {
	select {
	case <-p.stopped:
		return nil, errStopped
	default:
	}
	p.mu.Lock()
	id := p.next
	sc := &p.scripts[id%len(p.scripts)]
	p.next++
	p.running++
	gone := make(chan struct{})
	p.gone[id] = gone
	p.publish()
	p.mu.Unlock()
	out := 0
	for _, n := range sc.Tokens {
		out += n
	}
	prompt := a.prompt
	if prompt == 0 {
		prompt = sc.Prompt
	}
	s := &stream{id: id, prompt: prompt, output: out, arrival: p.now(), finish: "length", box: newMailbox()}
	go p.play(s, sc, gone)
	return s, nil
}

// publish sets the gauges: a replay has no queue and no cache.
func (p *replayer) publish() {
	if p.metrics != nil {
		p.metrics.state(p.running, 0, 0)
	}
}

// play releases the script's chunks at their times, until the end or
// until gone is closed (the client went away: abort).
func (p *replayer) play(s *stream, sc *Script, gone chan struct{}) {
	t := time.NewTimer(0)
	<-t.C
	for i, off := range sc.Offsets {
		at := s.arrival + off
		if d := time.Until(p.wall(at)); d > 0 {
			t.Reset(d)
			select {
			case <-t.C:
			case <-gone:
				t.Stop()
				p.aborted(s)
				return
			}
		}
		s.box.put(event{tokens: sc.Tokens[i], at: at, last: i == len(sc.Offsets)-1})
		now := time.Now()
		lag := now.Sub(p.wall(at))
		if p.lag != nil {
			p.lag.observe(lag, now)
		}
		if p.metrics != nil {
			p.metrics.scheduleLag(lag)
			if i == 0 {
				p.metrics.ttft(off)
			} else {
				p.metrics.itl(off - sc.Offsets[i-1])
			}
			p.metrics.generated(sc.Tokens[i])
		}
	}
	end := s.arrival
	if n := len(sc.Offsets); n > 0 {
		end += sc.Offsets[n-1]
	}
	s.box.close(event{end: true, at: end, status: sim.StatusFinished})
	p.mu.Lock()
	p.running--
	delete(p.gone, s.id)
	p.publish()
	p.mu.Unlock()
	if p.metrics != nil {
		p.metrics.ended(&sim.StreamSummary{Status: sim.StatusFinished, E2EL: end - s.arrival}, s.prompt, "length", -1)
	}
}

// aborted ends a stream whose client went away before its end.
func (p *replayer) aborted(s *stream) {
	s.box.close(event{end: true, at: p.now(), status: sim.StatusFailed})
	p.mu.Lock()
	p.running--
	p.publish()
	p.mu.Unlock()
}
