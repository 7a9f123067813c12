package sim

import "github.com/itlsim/itlsim/sim/frontend"

// ServerConfig is the serving front end a request passes before the
// scheduler sees it (package frontend: its fields, profiles and sources).
type ServerConfig = frontend.Config

// DefaultSerialUSPerPromptToken is the default serial tokenization cost, µs
// per prompt token (frontend.DefaultSerialUSPerPromptToken).
const DefaultSerialUSPerPromptToken = frontend.DefaultSerialUSPerPromptToken

// DefaultServer is the default front end (frontend.Default).
func DefaultServer() ServerConfig { return frontend.Default() }
