// Package slo parses service-level objectives written the way people state
// them and judges them on a run's summary.
//
// A term is a population term, METRIC:STAT<=LIMIT (or >=): "ttft:p95<=200ms",
// "tpot:mean<=15ms", "e2el:p99<=3s", "stream-max-gap:p99<=2s",
// "tokens-per-s-per-user:p10>=20/s"; or a share term: "itl-goodput>=99%@400ms"
// (streams whose largest gap is at most 400 ms), "slo-goodput>=90%" (requests
// meeting every per-request limit), "unstable<=5%". Parse reads one term,
// ParseAll several; Evaluate judges terms on a reports.Summary into Outcomes
// (an undefined value fails), Pass says whether all passed and Limiting
// names the term closest to failing (or failing worst), which a capacity
// search reports as what limits the load.
package slo
