package delivery

import (
	"fmt"
	"strings"

	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/workloads/seed"
)

// Chunk is one visible update of a stream: Tokens tokens at At, integer
// nanoseconds on the caller's clock (the simulator's, or a recording's).
type Chunk struct {
	At     int64
	Tokens int
}

// Request is one finished stream as the server emitted it.
type Request struct {
	// Seed is the request's own seed; every draw Deliver makes for this
	// stream comes from streams derived from it (one per mechanism), so the
	// same request sees the same luck whatever else is compared.
	Seed uint64
	// Arrival is when the request was sent, ns. The failover watchdog and
	// the connection-drop process start here; TTFTParts is measured from it.
	Arrival int64
	// PromptTokens is the prompt's length: a failover re-issues it, with
	// the tokens generated so far, to the backup.
	PromptTokens int
	// Chunks are the server-side chunks, times non-decreasing and not
	// before Arrival. A chunk of fewer than one token counts as one.
	Chunks []Chunk
	// CancelledAt, when not 0, is when the server cancelled the stream
	// because the failover watchdog fired (ns): the chunks end before it
	// and the backup produces the rest, up to Output tokens, from then on.
	// The simulator sets it when it aborts the primary; Deliver's own
	// watchdog handles streams the server ran to the end.
	CancelledAt int64
	// Output is the stream's whole length in tokens, for a cancelled stream
	// (CancelledAt); otherwise the chunks' tokens are the whole stream.
	Output int
	// PartsOver limits the split by cause to the client gaps longer than
	// it, ns: the simulator splits only stalls, and skipping the rest saves
	// most of the attribution's work. 0 splits every gap (client gaps are
	// positive).
	PartsOver int64
}

// Result is what the client saw of one stream. Deliver overwrites it,
// reusing its slices: once they have grown, delivering allocates nothing.
type Result struct {
	// Client is what the client rendered, in order: the tokens that became
	// visible at the same instant are one chunk, so times strictly increase.
	Client []Chunk
	// Parts has one row per client gap (len(Client)−1): Parts[k] splits
	// Client[k+1].At − Client[k].At by cause; every row's parts are ≥ 0 and
	// sum exactly to the gap (see the package documentation for the rule).
	// Rows of gaps not longer than Request.PartsOver are all zero.
	Parts [][NumCauses]int64
	// ServerFirst and ServerLast give, for each client chunk, the index in
	// Request.Chunks of the server chunks holding its first and last token,
	// or −1 for a token the backup produced. The server part of Parts[k] is
	// a share of one server gap: the gap before Request.Chunks[j] with
	// j = ServerFirst[k+1], or nothing when j == ServerLast[k] (both tokens
	// in one server chunk). At a failover (ServerFirst[k+1] == −1) it is a
	// share of the gap before Request.Chunks[FailoverBefore], the chunk the
	// watchdog gave up waiting for. The engine splits the server part by the
	// causes of that gap, in proportion.
	ServerFirst, ServerLast []int32
	// TTFTParts splits the client's time to first token, Client[0].At −
	// Arrival, by cause: CauseServer is the server's time to the first
	// token (the server's TTFT, or the watchdog time after a failover
	// before the first token); the rest is what the path added to it.
	TTFTParts [NumCauses]int64
	// Tokens is the number of tokens delivered: every token of the stream
	// unless it Failed.
	Tokens int
	// Failed is set when a connection drop ended the stream (network.on_drop
	// fail, or a chunk that maxDropsPerChunk connections in a row dropped
	// before it got through); Client holds what arrived before FailedAt.
	Failed   bool
	FailedAt int64
	// Losses counts lost transmissions (a chunk lost twice counts twice);
	// Reconnects counts connection drops.
	Losses, Reconnects int
	// Failovers is 1 when the watchdog moved the stream to the backup, at
	// FailoverAt, instead of waiting for Request.Chunks[FailoverBefore]. FailoverSaved is the primary's last server chunk minus the
	// backup's: positive when failing over finished the stream sooner,
	// negative when it cost time; 0 when the server cancelled the primary
	// (Request.CancelledAt), which never finished to compare with. CoherenceBreak is set when the primary
	// had produced tokens and the backup is a different model.
	Failovers      int
	FailoverAt     int64
	FailoverBefore int
	FailoverSaved  int64
	CoherenceBreak bool
	// StartupDelay is how long the smoothing buffer held the first tokens
	// before its first release, ns (0 without smoothing).
	StartupDelay int64
}

func (r *Result) reset() {
	*r = Result{Client: r.Client[:0], Parts: r.Parts[:0], ServerFirst: r.ServerFirst[:0], ServerLast: r.ServerLast[:0]}
}

// Path delivers streams under one configuration. It is immutable after New
// and safe for concurrent use; each goroutine brings its own Stream.
type Path struct {
	cfg Config
	on  bool

	baseNS, rtoNS int64
	jitter        Dist
	loss          float64
	dropPerNS     float64
	reconnect     Dist
	failOnDrop    bool

	mode                   string
	sizeBytes, sizeTokens  int
	bufFlushNS, ackWaitNS  int64
	eventBytes, tokenBytes int

	frameNS  int64
	windowNS int64

	cadenceNS, depthNS, initialNS int64
	initialTokens                 int

	watchdogNS       int64
	backup           *cost.Roofline
	backupBatch      int
	backupContext    int
	backupChunk      int
	backupOverheadNS int64
	sameModel        bool
}

// The per-request random streams, one per mechanism.
const (
	streamLatency = iota
	streamLoss
	streamConnection
	streamFrame
	numStreams
)

var streamNames = [numStreams]string{"delivery/latency", "delivery/loss", "delivery/connection", "delivery/frame"}

// Retransmission limits: the timeout doubles up to Linux's TCP_RTO_MAX,
// and a chunk lost this many times in a row is delivered on the next try
// (Linux gives up on a connection after tcp_retries2 = 15 timeouts).
const (
	rtoMaxNS    = 120 * 1e9
	maxAttempts = 15
)

// maxDropsPerChunk is how many connections in a row may drop before one
// chunk gets through; then the client gives up and the stream fails. (With
// drops faster than a chunk's trip, resuming would never end.)
const maxDropsPerChunk = 50

// New builds the path for cfg, applying its network profile and
// coalescing preset. It fails when cfg is invalid.
func New(cfg Config) (*Path, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r, err := cfg.Resolved()
	if err != nil {
		return nil, err
	}
	n, k, s, f := r.Network, r.Coalescing, r.Smoothing, r.Failover
	p := &Path{
		cfg: r, on: r.Enabled(),
		baseNS: msToNS(n.BaseMS), rtoNS: msToNS(n.RTOMS), jitter: n.JitterMS, loss: n.Loss,
		dropPerNS: n.DropsPerS / 1e9, reconnect: n.ReconnectMS, failOnDrop: n.OnDrop == OnDropFail,
		mode: k.Mode, sizeBytes: k.SizeBytes, sizeTokens: k.SizeTokens, bufFlushNS: msToNS(k.FlushMS),
		ackWaitNS: 2*msToNS(n.BaseMS) + msToNS(k.AckDelayMS), eventBytes: k.EventBytes, tokenBytes: k.TokenBytes,
		frameNS: msToNS(r.Render.FrameMS), windowNS: msToNS(r.Flush.WindowMS),
		watchdogNS: msToNS(f.WatchdogMS),
	}
	if p.mode == "" {
		p.mode = ModeNone
	}
	if s.CadenceMS > 0 {
		p.cadenceNS, p.depthNS = max(msToNS(s.CadenceMS), 1), max(msToNS(s.DepthMS), 1)
		p.initialNS, p.initialTokens = msToNS(s.InitialMS), s.InitialTokens
		if s.InitialMS == 0 {
			p.initialNS = p.depthNS
		}
	}
	if p.watchdogNS > 0 {
		b := f.Backup
		if p.backup, err = newBackup(b); err != nil {
			return nil, err
		}
		p.backupBatch, p.backupContext = b.Batch, b.ContextTokens
		p.backupChunk = b.MaxNumBatchedTokens - b.Batch
		p.backupOverheadNS = msToNS(b.TTFTOverheadMS)
		p.sameModel = f.PrimaryModel != "" && strings.EqualFold(f.PrimaryModel, b.Model)
	}
	return p, nil
}

// Config returns the resolved configuration (profile and preset applied).
func (p *Path) Config() Config { return p.cfg }

// Enabled reports whether any mechanism is on. When it is not, Deliver
// returns the server's chunks unchanged (equal times merged) and the engine
// may skip it.
func (p *Path) Enabled() bool { return p.on }

// BackupTTFT is the time from a failover's watchdog to the backup's first
// token for a context of contextTokens (prompt plus generated tokens), ns:
// the TTFT overhead plus the prefill, in chunks of the backup's token budget
// beside its batch of decodes, priced by the roofline. 0 without failover.
func (p *Path) BackupTTFT(contextTokens int) int64 {
	if p.backup == nil {
		return 0
	}
	var b cost.Batch
	return p.backupOverheadNS + p.backupPrefill(&b, contextTokens)
}

// BackupStepNS is one backup decode step with the failed-over stream at
// contextTokens of context, beside the backup's batch, ns. 0 without
// failover.
func (p *Path) BackupStepNS(contextTokens int) int64 {
	if p.backup == nil {
		return 0
	}
	var b cost.Batch
	return p.backupStep(&b, contextTokens)
}

func (p *Path) backupPrefill(b *cost.Batch, ctx int) int64 {
	ctx = max(ctx, 1)
	var t int64
	for start := 0; start < ctx; start += p.backupChunk {
		b.Reset()
		b.AddPrefill(start, min(p.backupChunk, ctx-start))
		b.DecodeSeqs = p.backupBatch
		b.DecodeContext = int64(p.backupBatch) * int64(p.backupContext)
		t += p.backup.StepNS(b)
	}
	return t
}

func (p *Path) backupStep(b *cost.Batch, ctx int) int64 {
	b.Reset()
	b.DecodeSeqs = p.backupBatch + 1
	b.DecodeContext = int64(p.backupBatch)*int64(p.backupContext) + int64(max(ctx, 1))
	return p.backup.StepNS(b)
}

// Stream is the scratch state of one delivery: the request's random
// streams and every stage's chunk list. Keep one per goroutine and reuse
// it; Deliver overwrites it and allocates nothing once its lists have grown
// to the longest stream delivered.
type Stream struct {
	lat, loss, conn, frame seed.Rand
	batch                  cost.Batch

	merged   []serverUnit
	sent     []sentUnit
	packets  []packet
	released []release
}

// serverUnit is a server chunk after failover: emitted at at, explained by
// the server up to ref (at for the primary; the watchdog for the backup).
type serverUnit struct {
	at, ref int64
	cum     int   // tokens up to and including this chunk
	idx     int32 // index in Request.Chunks, −1 for the backup
}

// sentUnit is a write after accept-then-flush.
type sentUnit struct {
	at     int64
	cum    int
	events int32 // server chunks in the write
}

// packet is a release of the coalescing buffer and its trip to the client.
type packet struct {
	rel, at int64
	cum     int
	// parts splits at − rel: network (latency, jitter), packet loss
	// (retransmission timeouts), connection (waiting to reconnect), each
	// with its share of head-of-line blocking.
	parts [3]int64
}

const (
	partNetwork = iota
	partLoss
	partConnection
)

// release is a release of the client smoothing buffer.
type release struct {
	at  int64
	cum int
}

// Deliver takes one stream's server-side chunks through the path and
// writes what the client saw into out. st is scratch state, reused; out's
// slices are reused too. Deliver panics when the server chunks go back in
// time or precede the arrival (a broken invariant of the caller).
func (p *Path) Deliver(st *Stream, req Request, out *Result) {
	out.reset()
	if len(req.Chunks) == 0 && (req.CancelledAt == 0 || p.watchdogNS == 0) {
		return
	}
	last := req.Arrival
	for i, c := range req.Chunks {
		if c.At < last {
			panic(fmt.Sprintf("delivery: server chunk %d at %d ns precedes %d ns (arrival %d)", i, c.At, last, req.Arrival))
		}
		last = c.At
	}
	if req.CancelledAt != 0 && req.CancelledAt < last {
		panic(fmt.Sprintf("delivery: stream cancelled at %d ns, before its last chunk at %d ns", req.CancelledAt, last))
	}
	// One stream per mechanism under the request's seed, so turning one
	// mechanism on or off never shifts another's draws.
	st.lat = seed.Stream(req.Seed, streamNames[streamLatency])
	st.loss = seed.Stream(req.Seed, streamNames[streamLoss])
	st.conn = seed.Stream(req.Seed, streamNames[streamConnection])
	st.frame = seed.Stream(req.Seed, streamNames[streamFrame])

	p.failover(st, &req, out)
	p.flush(st)
	p.coalesce(st)
	p.transmit(st, &req, out)
	if len(st.packets) == 0 {
		return
	}
	p.smooth(st, out)
	p.render(st, out)
	p.attribute(st, &req, out)
}
