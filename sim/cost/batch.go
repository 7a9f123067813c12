package cost

// Batch is the composition of one engine step. The engine fills it
// incrementally while it plans a step (AddPrefill, AddDecode) and reuses it
// across steps (Reset), so planning allocates nothing. All counts are per
// replica, i.e. for the whole tensor-parallel group; a [Model] divides the
// work among the GPUs itself.
//
// For a prefill chunk of c tokens that starts after p tokens already in the
// KV cache (p > 0 for the second and later chunks of a chunked prefill, or
// after a prefix-cache hit), the chunk's queries attend to p + c keys in a
// causal pattern.
type Batch struct {
	// PrefillSeqs counts sequences that run a prefill chunk this step.
	PrefillSeqs int
	// PrefillTokens is Σ c, the chunk tokens over those sequences.
	PrefillTokens int64
	// PrefillAttn is Σ c·p + c·(c+1)/2, the causal (query, key) pairs the
	// chunks compute: the attention FLOPs are proportional to it.
	PrefillAttn int64
	// PrefillTokCtx is Σ c·(p+c), tokens × context attended, the feature of
	// [LinearConfig]'s c4 term.
	PrefillTokCtx int64
	// PrefillContext is Σ (p+c), the KV entries the prefill chunks read: the
	// attention bytes of short chunks over long contexts (speculative
	// verification, small chunks) are proportional to it.
	PrefillContext int64
	// DecodeSeqs counts sequences decoding one token this step.
	DecodeSeqs int
	// DecodeContext is Σ context length over decoding sequences: the tokens
	// already in the KV cache including the one being decoded.
	DecodeContext int64
	// DecodeExtraTokens is Σ (query length − 1) over decoding sequences: the
	// draft positions a speculative verification scores beside the one
	// decoded token. They cost compute like any token; their attention reads
	// the same KV as the decode they belong to.
	DecodeExtraTokens int64
	// DecodeExtraPairs is Σ (query length − 1) × context over verifying
	// sequences: the (query, key) pairs of the draft positions.
	DecodeExtraPairs int64
}

// AddPrefill adds a prefill chunk of tokens tokens whose first token sits at
// position start (start = tokens already in the KV cache before the chunk).
// A chunk of zero or fewer tokens adds nothing.
func (b *Batch) AddPrefill(start, tokens int) {
	if tokens <= 0 {
		return
	}
	p, c := int64(max(start, 0)), int64(tokens)
	b.PrefillSeqs++
	b.PrefillTokens += c
	b.PrefillAttn += c*p + c*(c+1)/2
	b.PrefillTokCtx += c * (p + c)
	b.PrefillContext += p + c
}

// AddDecode adds one sequence decoding one token with context tokens in the
// KV cache, counting the new one.
func (b *Batch) AddDecode(context int) {
	b.DecodeSeqs++
	b.DecodeContext += int64(max(context, 0))
}

// AddVerify adds one sequence that verifies queryLen − 1 draft tokens: a
// decode with query length queryLen over context tokens of KV (speculative
// decoding's target step). queryLen 1 is a plain decode.
func (b *Batch) AddVerify(context, queryLen int) {
	b.AddDecode(context)
	if extra := int64(queryLen - 1); extra > 0 {
		b.DecodeExtraTokens += extra
		b.DecodeExtraPairs += extra * int64(max(context, 0))
	}
}

// Reset empties the batch for the next step.
func (b *Batch) Reset() { *b = Batch{} }

// Tokens is the number of tokens the step computes: every prefill chunk token
// plus one per decoding sequence.
func (b *Batch) Tokens() int64 {
	return b.PrefillTokens + int64(b.DecodeSeqs) + b.DecodeExtraTokens
}

// Seqs is the number of sequences in the step.
func (b *Batch) Seqs() int { return b.PrefillSeqs + b.DecodeSeqs }

// Empty reports whether the step computes nothing.
func (b *Batch) Empty() bool { return b.Tokens() == 0 }

// DecodeOnly returns a copy with the prefill fields zeroed: the step the
// decoding sequences would have run without the prefill work. The engine
// uses it to attribute a slow step to the prefill it carried. Keep the result
// in a long-lived scratch Batch: the address of a local passed through the
// Model interface escapes to the heap, one allocation per call.
func (b Batch) DecodeOnly() Batch {
	return Batch{DecodeSeqs: b.DecodeSeqs, DecodeContext: b.DecodeContext,
		DecodeExtraTokens: b.DecodeExtraTokens, DecodeExtraPairs: b.DecodeExtraPairs}
}

// PlainDecode returns a copy with only the plain decode work: every
// decoding sequence computing one token, no prefill and no draft positions.
// The engine prices speculative work against it.
func (b Batch) PlainDecode() Batch {
	return Batch{DecodeSeqs: b.DecodeSeqs, DecodeContext: b.DecodeContext}
}

// Model prices a step. Implementations must not allocate in StepNS and must
// be safe for concurrent use by many runs: they are immutable after
// construction.
type Model interface {
	// StepNS is the duration of the step in nanoseconds: 0 for an empty
	// batch, at least 1 otherwise.
	StepNS(b *Batch) int64
	// Name identifies the model in reports, e.g.
	// "roofline(llama-3.1-8b, h100-sxm-80gb, tp=1)".
	Name() string
}
