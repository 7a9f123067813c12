// Package gate decides whether a candidate's streams are worse than a
// baseline's: for each chosen [Metric] (a figure of reports.Summary, by
// default the p99 across streams of each stream's p99 ITL) it computes the
// change from baseline to candidate and a bootstrap confidence interval of
// that change, resampling streams with replacement and re-summarizing each
// resample with reports.Summarize — the metric definitions are never
// copied. A metric fails only when its whole interval lies beyond the
// tolerance in the bad direction, so noise passes and a real regression
// does not.
//
// Start with [Compare]; [FromRun] turns a run of an itlsim JSON document
// into a [Sample], and an analyzed measured file gives one directly
// (ingest.Recording.Result).
package gate
