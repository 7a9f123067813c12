package sim

// Measured carries what a result imported from measured streams (`itlsim
// analyze`) knows more precisely than the simulator's whole nanoseconds, or
// knows only in part. Benchmark tools record float seconds or milliseconds;
// rounding them to nanoseconds would move a 20 ms gap by up to 2.5e-8 of
// itself, more than the floating-point agreement the importers promise with
// the tools' own summaries. Simulations leave Result.Measured nil, and
// Result.Merge does not combine it.
type Measured struct {
	// Streams is parallel to Result.Streams: entry i holds the exact times
	// of stream i (rejected streams have zero entries).
	Streams []MeasuredStream
	// Failed counts requests that ended in an error, by the error's kind.
	// They count in Result.Requests but are not streams.
	Failed map[string]int
	// NoGaps is set when the source recorded only each stream's first and
	// last token times: gaps, and every statistic of them, are unknown.
	NoGaps bool
}

// MeasuredStream is one stream's measured times in float64 nanoseconds.
type MeasuredStream struct {
	TTFT   float64 // first chunk − arrival
	E2EL   float64 // last chunk − arrival
	GapMax float64 // largest gap; 0 without gaps
	// Gaps lists the stream's gaps in order. It may be nil when pooled ITL
	// is not wanted (the bootstrap of `itlsim gate` drops it for speed).
	Gaps []float64
}

// TPOTOf is vLLM's time per output token: the decode span E2EL − TTFT over
// n − 1 tokens, in the span's unit; 0 for a stream of fewer than two tokens.
func TPOTOf(decodeSpan float64, outputTokens int) float64 {
	if outputTokens < 2 {
		return 0
	}
	return decodeSpan / float64(outputTokens-1)
}
