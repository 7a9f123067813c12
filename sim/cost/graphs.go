package cost

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CUDA graphs, as vLLM V1 runs them (vLLM docs/design/cuda_graphs.md,
// cudagraph_mode FULL_AND_PIECEWISE, the default): a step whose token count
// is at most the largest captured size replays the graph captured for the
// next captured size up, so its layers run on that many tokens (the padding
// rows are computed and thrown away), and the GPU runs the graph's kernels
// back to back without the host launching each one. A decode-only step
// replays a full graph, attention included; a step with prefill work
// replays piecewise graphs, attention launched eagerly between them. The
// logits GEMM runs after the graph on the real sequences. A step with more
// tokens than the largest size runs eagerly, as with --enforce-eager.

// MaxCaptureSize bounds a capture size: vLLM's own default stops at 512;
// larger lists are accepted up to this.
const MaxCaptureSize = 1 << 16

// DefaultCaptureSizes is vLLM's default cudagraph_capture_sizes for a
// scheduler of maxNumSeqs sequences and a budget of maxNumBatchedTokens
// tokens (vllm/config/vllm.py, _set_cudagraph_sizes, vLLM 0.11): the
// largest size is min(2·max_num_seqs, 512, max_num_batched_tokens), and the
// sizes are 1, 2, 4, then every multiple of 8 below 256, then every multiple
// of 16 from 256, up to it.
func DefaultCaptureSizes(maxNumSeqs, maxNumBatchedTokens int) []int {
	top := min(2*maxNumSeqs, 512)
	if maxNumBatchedTokens > 0 {
		top = min(top, maxNumBatchedTokens)
	}
	var s []int
	for _, v := range []int{1, 2, 4} {
		if v <= top {
			s = append(s, v)
		}
	}
	for v := 8; v < 256 && v <= top; v += 8 {
		s = append(s, v)
	}
	for v := 256; v <= top; v += 16 {
		s = append(s, v)
	}
	return s
}

// ParseCaptureSizes reads "1,2,4,8": positive sizes up to MaxCaptureSize,
// returned sorted without repeats. An empty list is an error.
func ParseCaptureSizes(text string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(text, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 || v > MaxCaptureSize {
			return nil, fmt.Errorf("capture size %q: expected a whole number of tokens in [1,%d]", f, MaxCaptureSize)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("expected a comma-separated list of token counts such as 1,2,4,8, got %q", text)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ValidateCaptureSizes reports the first size out of [1, MaxCaptureSize].
func ValidateCaptureSizes(sizes []int) error {
	for i, v := range sizes {
		if v < 1 || v > MaxCaptureSize {
			return fmt.Errorf("[%d]: must be in [1,%d] tokens, got %d", i, MaxCaptureSize, v)
		}
	}
	return nil
}

// WithCUDAGraphs returns a copy of r that prices steps of at most the
// largest of sizes tokens as CUDA-graph replays (see the comment at the top
// of graphs.go): padded to the next captured size, each GEMM and elementwise
// kernel of the layers paying [RooflineConfig.GraphKernelOverheadUS]
// instead of KernelOverheadUS, and, in a decode-only step, each attention
// call paying AttentionOverheadUS less the same saving. Nil or empty sizes
// return r itself (eager).
func (r *Roofline) WithCUDAGraphs(sizes []int) (*Roofline, error) {
	if len(sizes) == 0 {
		return r, nil
	}
	if err := ValidateCaptureSizes(sizes); err != nil {
		return nil, fmt.Errorf("cudagraph_capture_sizes%w", err)
	}
	s := slices.Clone(sizes)
	slices.Sort(s)
	g := *r
	g.graphSizes = slices.Compact(s)
	g.name = r.name[:len(r.name)-1] + ", cuda graphs)"
	return &g, nil
}

// GraphSizes are the captured sizes the roofline pads to; nil when eager.
func (r *Roofline) GraphSizes() []int { return r.graphSizes }

// PaddedTokens is the token count the layers of a step of tokens tokens
// run on: the next captured size up under graphs, tokens itself when eager
// or beyond the largest size.
func (r *Roofline) PaddedTokens(tokens int64) int64 {
	n := len(r.graphSizes)
	if n == 0 || tokens <= 0 || tokens > int64(r.graphSizes[n-1]) {
		return tokens
	}
	lo, hi := 0, n-1 // binary search: no allocation on the step path
	for lo < hi {
		mid := (lo + hi) / 2
		if int64(r.graphSizes[mid]) >= tokens {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return int64(r.graphSizes[lo])
}

// CaptureSizes are CUDA-graph capture sizes in tokens. In YAML they are a
// comma-separated scalar ("1,2,4,8") or a sequence.
type CaptureSizes []int

// String is the comma-separated form.
func (s CaptureSizes) String() string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

// MarshalText writes the comma-separated form (YAML's scalar).
func (s CaptureSizes) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the comma-separated form; empty text is the default.
func (s *CaptureSizes) UnmarshalText(b []byte) error {
	if strings.TrimSpace(string(b)) == "" {
		*s = nil
		return nil
	}
	v, err := ParseCaptureSizes(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalJSON writes a JSON array of numbers.
func (s CaptureSizes) MarshalJSON() ([]byte, error) { return json.Marshal([]int(s)) }

// UnmarshalJSON reads a JSON array of numbers.
func (s *CaptureSizes) UnmarshalJSON(b []byte) error {
	var xs []int
	if err := json.Unmarshal(b, &xs); err != nil {
		return err
	}
	*s = xs
	return nil
}
