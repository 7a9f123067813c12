// Package memory sizes an engine before it allocates: its estimated peak
// memory from the requests it will keep and the KV blocks it will table
// (Estimate), and the byte sizes users give and read (ParseBytes,
// FormatBytes). Package sim refuses a scenario over the cap with it.
package memory
