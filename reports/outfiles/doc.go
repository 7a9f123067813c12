// Package outfiles writes a command's output files all or nothing, and
// never over one of the files the command reads.
//
// Every file a flag names (--json, --streams, --timelines, --html, -o) is
// checked before the command does its work, so a bad path fails at once
// rather than after a long simulation; it is written to a temporary file
// beside its target while the work runs; and the temporary files are renamed
// over their targets only once every output of the invocation has been
// written. A failed or interrupted command leaves no output file behind, not
// even a partial one, and never half of its outputs.
//
// A path that is a symbolic link is written through: the link stays and its
// target is replaced. An existing FIFO or device (/dev/null, /dev/stdout, a
// named pipe) cannot be replaced and needs no protection from partial
// writes, so it is written in place, when its turn comes.
//
// Start with [NewTemps] (one per invocation), [New] (one set of outputs),
// [Outputs.Add], [Outputs.Check], [File.Write] and [Outputs.Commit];
// [CheckedWriter] does the same for stdout: a command whose printed answer
// did not all arrive fails.
package outfiles
