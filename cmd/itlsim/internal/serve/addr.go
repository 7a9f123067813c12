package serve

import (
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
)

// Scripts are the streams of recs replayed with the pauses of plan through
// mit: one script per stream, offsets from its arrival.
func Scripts(recs []ingest.Recording, plan ingest.PausePlan, mit ingest.Mitigation) ([]Script, error) {
	var scripts []Script
	for ri := range recs {
		rec := &recs[ri]
		if err := rec.CheckReplayable(); err != nil {
			return nil, err
		}
		r := ingest.Replay(rec, uint64(ri), plan, mit)
		for si := range r.Streams {
			s := &r.Streams[si]
			sc := Script{Prompt: s.InputTokens}
			t := s.TTFT
			for c := range s.Chunks {
				if c > 0 {
					t += s.Gaps[c-1]
				}
				sc.Offsets = append(sc.Offsets, sim.Time(math.Round(t)))
				sc.Tokens = append(sc.Tokens, ingest.ChunkTokens(s, c, s.Chunks))
			}
			scripts = append(scripts, sc)
		}
	}
	return scripts, nil
}

// PortAddrs are the addresses to listen on: --addr alone, or with a port
// per replica (perPort) the host of --addr with the --ports list (one per
// replica) or --addr's port + the replica's index (port 0: any free port
// for each).
func PortAddrs(addr, ports string, replicas int, perPort bool) ([]string, error) {
	if !perPort {
		return []string{addr}, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %s: %w", addr, err)
	}
	if ports != "" {
		list := strings.Split(ports, ",")
		if len(list) != replicas {
			return nil, fmt.Errorf("--ports %s: %d ports for %d replicas; give one per replica, in order", ports, len(list), replicas)
		}
		out := make([]string, len(list))
		seen := map[int]bool{}
		for i, p := range list {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 0 || n > 65535 {
				return nil, fmt.Errorf("--ports %s: item %d: %q is not a port (0–65535)", ports, i+1, p)
			}
			if n != 0 && seen[n] {
				return nil, fmt.Errorf("--ports %s: port %d is listed twice", ports, n)
			}
			seen[n] = true
			out[i] = net.JoinHostPort(host, strconv.Itoa(n))
		}
		return out, nil
	}
	base, err := strconv.Atoi(port)
	if err != nil || base < 0 || base > 65535 {
		return nil, fmt.Errorf("--addr %s: port %q is not a number (0–65535)", addr, port)
	}
	if base != 0 && base+replicas-1 > 65535 {
		return nil, fmt.Errorf("--addr %s: %d replicas need ports %d–%d, beyond 65535; give --ports", addr, replicas, base, base+replicas-1)
	}
	out := make([]string, replicas)
	for i := range out {
		p := base
		if base != 0 {
			p += i
		}
		out[i] = net.JoinHostPort(host, strconv.Itoa(p))
	}
	return out, nil
}

// ListenAll listens on every address, or on none: one that fails closes
// those already open and is named (the flag is --ports when it was given).
func ListenAll(addrs []string, fromPorts bool) ([]net.Listener, error) {
	var lns []net.Listener
	for i, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			flag := "--addr"
			if fromPorts {
				flag = "--ports"
			}
			if len(addrs) > 1 {
				return nil, fmt.Errorf("%s: replica %d's address %s: %w", flag, i, a, err)
			}
			return nil, fmt.Errorf("%s %s: %w", flag, a, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// CheckTimeScale checks --time-scale, simulated seconds per wall second
// (serve and record).
func CheckTimeScale(v float64) error {
	if !(v > 0) || v > 1e6 || math.IsInf(v, 0) {
		return fmt.Errorf("--time-scale: must be in (0, 1e6] simulated seconds per second, got %g", v)
	}
	return nil
}
