// Package html renders compared runs as one self-contained HTML page: the
// scenario in words, the summary table the terminal prints, and charts of
// where in time and where in the stream the stalls are, each chart's
// numbers repeated in plain HTML tables so the page is useful where no
// script runs.
//
// Start with [Write]: it takes the runs of a reports.Document (what
// `itlsim run --json` writes) and [Options]. The charts' options are built
// with go-echarts and embedded as JSON data blocks; the page draws them
// with ECharts, either inlined from a file the user names (offline) or
// loaded from the public URL go-echarts uses ([CDNURL]).
//
// Output is deterministic: fixed chart ids, no timestamps, maps walked in
// sorted order, so the same runs give byte-identical pages. Every name that
// comes from a scenario or an imported result is escaped for its context:
// html/template escapes the page's text and attributes, and the embedded
// JSON escapes '<', '>' and '&' so no value can close a script element.
//
// Per-stream distributions (the CDF of per-stream p99 ITL, jitter ratios,
// TTFT and E2EL) are computed exactly from every stream and emitted with a
// bounded number of points, so a report for a million streams stays a few
// hundred kilobytes; the worst streams are the simulator's exact choice.
package html
