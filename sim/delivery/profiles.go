package delivery

import (
	"slices"
	"strings"
)

// Profile is a named network preset.
type Profile struct {
	Name        string
	Description string
	// Source says where the figures come from, or that they are assumptions.
	Source  string
	Network Network
}

// profileAssumption is the honest provenance of the profiles' figures.
const profileAssumption = "assumption of typical magnitude, not a measurement"

// profiles are the network presets. Latencies are one-way (half a round
// trip). The figures are assumptions of typical magnitude: fixed-line round
// trips of 20–30 ms and loss well under 1 % are the order the FCC's
// Measuring Broadband America reports publish, 4G round trips of 50–80 ms
// the order of Opensignal's mobile experience reports; drop rates and
// reconnect delays are guesses (a TCP and TLS 1.3 handshake is two round
// trips, a client's retry back-off and a radio's reattach add the rest).
// Replace them with your own telemetry for real decisions.
var profiles = map[string]Profile{
	"datacenter": {
		Description: "client in the same region: 0.25 ms one way, tiny jitter, no loss, no drops",
		Source:      "same-zone round trips of 0.3–1 ms; " + profileAssumption,
		Network:     Network{BaseMS: 0.25, JitterMS: MustParseDist("exp:0.05")},
	},
	"broadband": {
		Description: "fixed-line home connection: 12 ms one way, exp 2 ms jitter, 0.1 % loss, a drop per ~2.8 h",
		Source:      "FCC Measuring Broadband America order of magnitude (RTT 20–30 ms, loss < 1 %); " + profileAssumption,
		Network: Network{BaseMS: 12, JitterMS: MustParseDist("exp:2"), Loss: 0.001,
			DropsPerS: 1e-4, ReconnectMS: MustParseDist("lognormal:500,300,10000")},
	},
	"mobile-4g": {
		Description: "LTE phone: 35 ms one way, lognormal jitter (mean 10 ms), 1 % loss, a drop per ~8 min, reconnect ~1.5 s",
		Source:      "Opensignal 4G latency order of magnitude (RTT 50–80 ms); loss, drops and reconnects: " + profileAssumption,
		Network: Network{BaseMS: 35, JitterMS: MustParseDist("lognormal:10,15,2000"), Loss: 0.01,
			DropsPerS: 0.002, ReconnectMS: MustParseDist("lognormal:1500,1000,30000")},
	},
	"flaky-wifi": {
		Description: "congested Wi-Fi: 8 ms one way, heavy-tailed jitter (Pareto), 3 % loss, a drop per ~100 s, reconnect ~3 s",
		Source:      profileAssumption,
		Network: Network{BaseMS: 8, JitterMS: MustParseDist("pareto:1,1.2,2000"), Loss: 0.03,
			DropsPerS: 0.01, ReconnectMS: MustParseDist("lognormal:3000,2000,60000")},
	},
}

// LookupProfile returns the network profile named name (case-insensitive).
func LookupProfile(name string) (Profile, bool) {
	key := strings.ToLower(strings.TrimSpace(name))
	p, ok := profiles[key]
	p.Name = key
	return p, ok
}

// ProfileNames lists the network profiles, sorted.
func ProfileNames() []string { return sortedKeys(profiles) }

// Profiles lists the network profiles, sorted by name.
func Profiles() []Profile {
	var out []Profile
	for _, n := range ProfileNames() {
		p, _ := LookupProfile(n)
		out = append(out, p)
	}
	return out
}

// CoalescingPreset is a named coalescing buffer.
type CoalescingPreset struct {
	Name        string
	Description string
	Source      string
	Coalescing  Coalescing
}

// coalescingPresets are the named buffers between server and client.
var coalescingPresets = map[string]CoalescingPreset{
	"nagle": {
		Description: "TCP without TCP_NODELAY: a small segment waits for the previous one's ACK (a round trip plus the 40 ms delayed ACK) or a full 1448-byte segment",
		Source:      "RFC 896 (Nagle); Linux TCP_DELACK_MIN = HZ/25 = 40 ms; MSS 1448 = 1500 − 20 IP − 20 TCP − 12 timestamp option bytes",
		Coalescing:  Coalescing{Mode: ModeNagle, SizeBytes: 1448, AckDelayMS: 40},
	},
	"proxy-buffer": {
		Description: "a reverse proxy buffering the response (nginx proxy_buffering on): releases when a 4 KiB buffer fills or the response ends",
		Source:      "nginx proxy_buffer_size default 4k|8k, one memory page; no flush timer (what X-Accel-Buffering: no turns off)",
		Coalescing:  Coalescing{Mode: ModeBuffer, SizeBytes: 4096},
	},
}

// LookupCoalescing returns the coalescing preset named name (case-insensitive).
func LookupCoalescing(name string) (CoalescingPreset, bool) {
	key := strings.ToLower(strings.TrimSpace(name))
	p, ok := coalescingPresets[key]
	p.Name = key
	return p, ok
}

// CoalescingNames lists the coalescing presets, sorted.
func CoalescingNames() []string { return sortedKeys(coalescingPresets) }

// CoalescingPresets lists the coalescing presets, sorted by name.
func CoalescingPresets() []CoalescingPreset {
	var out []CoalescingPreset
	for _, n := range CoalescingNames() {
		p, _ := LookupCoalescing(n)
		out = append(out, p)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
