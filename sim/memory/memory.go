package memory

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// An engine's memory is mostly two things that grow with the scenario: a
// summary of every request (kept to the end of the run for the reports)
// and the block tables of every replica's KV cache. Both are sized before
// the engine allocates them, so a scenario that would need more than the
// cap is refused up front with what it would need, instead of running the
// process out of memory.
const (
	// DefaultMax is the cap on an engine's estimated memory when
	// sim.Config.MaxMemoryBytes is 0: 8 GiB.
	DefaultMax = 8 << 30
	// The estimate's terms, measured as peak RSS over runs of 10^4 to
	// 3·10^5 requests and 10^6 to 10^7 blocks (about 3.4 KiB per request
	// and 27 B per block), rounded up.
	perRequest = 4 << 10
	perBlock   = 32
	base       = 64 << 20
)

// Estimate is an engine's estimated peak memory in bytes with requests
// requests and blocks KV blocks (every replica's GPU, swap and offload
// tier blocks).
func Estimate(requests, blocks float64) float64 {
	return base + perRequest*requests + perBlock*blocks
}

// Check refuses an estimate over limit (0: DefaultMax), naming what it
// counted.
func Check(requests, blocks float64, limit float64) error {
	if limit <= 0 {
		limit = DefaultMax
	}
	if est := Estimate(requests, blocks); est > limit {
		return fmt.Errorf("this scenario would need about %s of memory (%.3g requests, %.3g KV blocks), over the %s cap: "+
			"lower the request count or num_gpu_blocks, or raise the cap with --max-memory",
			FormatBytes(est), requests, blocks, FormatBytes(limit))
	}
	return nil
}

// FormatBytes writes n bytes with a binary unit: "8 GiB", "1.5 TiB".
func FormatBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for i < len(units)-1 && math.Abs(n) >= 1024 {
		n /= 1024
		i++
	}
	return fmt.Sprintf("%.3g %s", n, units[i])
}

// ParseBytes reads a size: a number with an optional unit B, KB, MB, GB,
// TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024); "8GiB",
// "512 MiB", "1e9".
func ParseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
	}
	num, mult := strings.TrimSpace(s), 1.0
	for _, u := range units {
		if n := len(num) - len(u.suffix); n > 0 && strings.EqualFold(num[n:], u.suffix) {
			num, mult = strings.TrimSpace(num[:n]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: expected a size such as 8GiB, 512MiB or 4e9 (bytes)", s)
	}
	b := v * mult
	if !(b >= 1) || b > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q: expected a size from 1 B to 4 EiB", s)
	}
	return int64(b), nil
}
