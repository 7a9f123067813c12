// Package delivery models what happens to a stream between the server's
// output and the user's screen — the network, proxies, the renderer — and
// the mitigations that trade latency for steadiness: a client smoothing
// buffer, a server that flushes on a fixed cadence, and failing over to a
// backup mid-stream. It turns one finished stream's server-side chunks into
// the chunks the client rendered, and splits every client gap by cause.
//
// Start with [Config] (the scenario's delivery section; every mechanism is
// off in [DefaultConfig]), [New], which builds an immutable [Path], and
// [Path.Deliver], which takes a [Request] (the request's seed, arrival,
// prompt length and server chunks) and fills a [Result]. A [Stream] holds
// the per-delivery scratch: keep one per goroutine and reuse it; once its
// lists have grown, Deliver allocates nothing. The package is a leaf: it
// imports sim/cost (to price the backup's steps) and the standard library,
// never the engine.
//
// # The path
//
// A stream passes these stages in order (stages.go), each optional:
//
//  1. Failover (gateway watchdog). When the primary shows nothing for
//     failover.watchdog_ms — from the arrival, or from its last chunk — the
//     stream is cancelled and the rest re-issued to the backup, with the
//     prompt plus the tokens generated so far as context. The backup's first
//     token comes after its TTFT overhead and a chunked prefill of that
//     context priced by the roofline for its model, GPU and TP beside its
//     batch of decodes; every later token after one decode step of that
//     batch. At most once per stream. Deliver finds the silence in the
//     server's chunks itself, or is told the server already aborted the
//     stream when the watchdog fired (Request.CancelledAt, as the simulator
//     does unless failover.keep_primary): both give the client the same
//     result.
//  2. Accept-then-flush (server). The first chunk goes at once; later tokens
//     are sent at first + k × flush.window_ms.
//  3. Coalescing (proxy or TCP send buffer). buffer mode releases at a size
//     (bytes or tokens), a timer after the first pending byte, or the end of
//     the response; nagle mode sends when nothing is in flight and otherwise
//     holds small writes until the previous one's ACK (2 × base latency plus
//     the delayed-ACK timer) or a full segment. Wire sizes: an event's
//     framing plus bytes per token.
//  4. Network. Each packet takes base latency plus a jitter draw; a lost
//     transmission (probability network.loss) waits an RTO that doubles on
//     each repeated loss; packets arrive in order, so a late one holds back
//     those behind it (head-of-line blocking). Connection drops form a
//     Poisson process per stream-second; after a drop the stream resumes
//     after a reconnect delay (re-sending everything not yet delivered), or
//     fails (network.on_drop: fail) with what arrived, reported as Failed.
//  5. Smoothing buffer (client), below.
//  6. Renderer. A release becomes visible at the next frame boundary (phase
//     drawn per stream); releases in one frame are one chunk.
//
// Tokens that become visible at the same instant form one client chunk, as
// in the metric contract.
//
// # The smoothing buffer
//
// It holds the first tokens for smoothing.initial_ms (default: the depth)
// or until smoothing.initial_tokens have arrived, then releases every
// cadence C. With r the stream's arrival rate so far (tokens arrived over
// the time from the first arrival to the latest, each interval counted at
// most 4× the mean interval before it, so that a pause does not slow the
// releases after it), depth d the tokens buffered and D the
// target depth in time, each tick adds
//
//	n = r·C + (d − r·D)·C / (4·D)
//
// tokens of credit and releases the whole tokens of it that are buffered:
// the buffer follows the arrival rate and works a deviation from holding D
// of tokens off over 4·D. While tokens are buffered the release rate never
// falls below ¾ of the arrival rate, so a pause shorter than about D drains
// the buffer without a visible gap, and a longer one shows as roughly its
// excess; a buffer that has grown releases faster, so it never grows
// without bound. When it starves it waits for the next arrival; after the
// last token has arrived it drains at r·C + d·C/D per tick. The added
// start-up delay is [Result.StartupDelay].
//
// # Attribution
//
// Every delivered token (attribution.go) has a server time — when the
// primary emitted it, or the watchdog instant for a token the backup
// produced — and a delay from there to its visible time, split by stage: failover (backup time after
// the watchdog), smoothing-delay (accept-then-flush hold plus the smoothing
// buffer's hold), network (coalescing, latency and jitter, the renderer's
// frame wait), packet-loss (retransmission timeouts), connection (waiting
// for a reconnect); head-of-line blocking behind an earlier packet goes to
// the causes that made that packet later than this one, in proportion to
// how much later each made it.
//
// The gap before client chunk k is the wait from the last token the user
// saw (the last of chunk k−1) to the next token (the first of chunk k), so
//
//	gap = (server time of the next token − server time of the last one)
//	    + Σ over stages (delay of the next token − delay of the last one)
//
// exactly. The first term is the server part ([CauseServer]): the server's
// own gap between two consecutive tokens, so it is a share of exactly one
// server gap ([Result.ServerFirst] says which). A stage's term is negative
// when its delay shrank (a smoothing buffer absorbing a pause, a burst
// catching up); then the positive parts are scaled down in proportion, by
// gap / Σ positive parts, in exact integer arithmetic (largest remainder,
// ties to the earlier cause), so every part is ≥ 0 and the parts still sum
// to the gap to the nanosecond. [Result.TTFTParts] splits the client's TTFT
// the same way from the arrival: the server's TTFT plus the first token's
// delay by stage.
//
// # Determinism
//
// Each request carries its own seed; each mechanism draws from its own
// stream under it, seed.Stream(request seed, "delivery/latency") and
// likewise delivery/loss, delivery/connection and delivery/frame, so
// turning one mechanism on never shifts another's draws, and the same
// request sees the same luck in every compared run. Same seed and configuration, same result.
//
// # Not modelled
//
// The backup's load is a fixed batch: failed-over streams do not add to it. The
// watchdog sits at the gateway, before the network: it reacts to a stalled
// server, not to a stalled connection. Loss is per chunk and recovered by
// timeout (no fast retransmit, which needs three later segments a sparse
// token stream rarely has). Resuming after a drop assumes the server keeps
// the stream (a resumable stream, e.g. SSE with Last-Event-ID); with
// network.on_drop: fail the stream ends at the drop.
package delivery
