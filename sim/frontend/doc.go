// Package frontend models the serving front end a request passes before
// the scheduler sees it (vLLM's OpenAI API server: HTTP handling, request
// validation, tokenization, the hand-off to the engine core): its
// configuration and per-version profiles (Config, Profiles), and the
// source that delays each request's readiness by it (New). Start at Config.
package frontend
