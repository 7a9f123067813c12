package study

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/reports"
)

// ResolveShard is which shard of how many this process computes:
// --shard-index (−1: not given) or, without it, the Indexed Job's
// JOB_COMPLETION_INDEX (env, when set), of --shard-count (0: one). Errors
// name the flag or the variable and the range expected.
func ResolveShard(shardIndex, shardCount int, env string, envSet bool) (index, count int, err error) {
	count = shardCount
	if count == 0 {
		count = 1
	}
	if count < 1 || count > MaxShards {
		return 0, 0, fmt.Errorf("--shard-count: expected 1 to %d shards, got %d", MaxShards, shardCount)
	}
	index = shardIndex
	if index < -1 {
		return 0, 0, fmt.Errorf("--shard-index %d: expected 0 to %d (--shard-count %d)", index, count-1, count)
	}
	if index < 0 {
		if s := env; envSet {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 0 || n >= count {
				return 0, 0, fmt.Errorf("JOB_COMPLETION_INDEX=%q: expected the pod's index in its Indexed Job, a whole number from 0 to %d (--shard-count %d)",
					reports.Printable(s), count-1, count)
			}
			index = n
		} else {
			index = 0
			if count > 1 {
				return 0, 0, fmt.Errorf("--shard-count %d: which shard is this? give --shard-index I (0 to %d) or set JOB_COMPLETION_INDEX", count, count-1)
			}
		}
	}
	if index >= count {
		return 0, 0, fmt.Errorf("--shard-index %d: expected 0 to %d (--shard-count %d)", index, count-1, count)
	}
	return index, count, nil
}
