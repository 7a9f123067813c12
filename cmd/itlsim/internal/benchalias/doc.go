// Package benchalias gives itlsim's commands the flag names of vLLM's
// benchmark (vllm bench serve) and GuideLLM: each alias sets an itlsim flag
// or scenario field, so an invocation written with the alias runs exactly
// what the native flags run. docs/vllm-bench-aliases.md maps them. Start
// at Bind (register the aliases a command has targets for) and Apply (turn
// the ones given into itlsim flags and --set fields, before flags are read).
package benchalias
