// Command itlsim simulates how an LLM inference server's token streams feel
// to the people watching them: per-stream inter-token latency, stalls and
// their causes. See the README for the commands and the metric definitions.
package main

import (
	"os"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}
