// Package scenario reads scenario YAML files into sim.Config and applies
// overrides and comparisons to them.
//
// Start with [Load]: it decodes a file strictly over sim.DefaultConfig (an
// unknown or mistyped field is an error naming the file and line), then
// [Set] applies `path=value` overrides by YAML field path (the CLI's flags
// are such overrides), and [Expand] turns `path=v1,v2` comparisons into one
// [Variant] per combination, each a full configuration that differs from
// the others only in the compared fields.
package scenario
