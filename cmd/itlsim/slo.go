package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports/slo"
	"github.com/itlsim/itlsim/sim"
)

// sloFlags binds --slo (repeatable SLO terms) and --goodput (vLLM's
// per-request limits). Every command that judges runs registers them with
// bind, so they read and mean the same everywhere.
type sloFlags struct {
	terms   []string
	goodput []string
}

func (s *sloFlags) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&s.terms, "slo", nil, "SLO term to judge (repeatable): METRIC:STAT<=LIMIT or >= (ttft:p95<=200ms, tpot:mean<=15ms, e2el:p99<=3s, "+
		"stream-max-gap:p99<=2s, qoe:p10>=0.9), or a share (itl-goodput>=99%@400ms, slo-goodput>=90%, unstable<=5%); metrics: "+strings.Join(slo.Metrics(), ", "))
	f.StringSliceVar(&s.goodput, "goodput", nil, "per-request SLO limits for SLO goodput in vLLM's spelling, ms: --goodput ttft:200 tpot:15 e2el:3000 (only the limits given apply)")
}

// parse reads the terms of a scenario file (file, with their lines) and
// of --slo, in that order.
func (s *sloFlags) parse(file string, fileTerms []string, lines []int) ([]slo.Term, error) {
	var out []slo.Term
	var errs []error
	for i, t := range fileTerms {
		term, err := slo.Parse(t)
		if err != nil {
			where := file
			if i < len(lines) {
				where += ":" + strconv.Itoa(lines[i])
			}
			errs = append(errs, fmt.Errorf("%s: slo[%d]: %w", where, i, err))
			continue
		}
		out = append(out, term)
	}
	for _, t := range s.terms {
		term, err := slo.Parse(t)
		if err != nil {
			errs = append(errs, fmt.Errorf("--slo: %w", err))
			continue
		}
		out = append(out, term)
	}
	return out, errors.Join(errs...)
}

// goodputLimits reads --goodput into limits: those given, the others 0
// (no limit), as vLLM's benchmark applies them. ok is false when the flag
// was not given.
func (s *sloFlags) goodputLimits() (sim.SLO, bool, error) {
	if len(s.goodput) == 0 {
		return sim.SLO{}, false, nil
	}
	var l sim.SLO
	seen := map[string]bool{}
	for _, kv := range s.goodput {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), ":")
		k = strings.ToLower(strings.TrimSpace(k))
		ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil || !(ms > 0 && ms <= 1e12) {
			return l, true, fmt.Errorf("--goodput %q: expected KEY:MILLISECONDS with KEY ttft, tpot or e2el and a limit > 0, e.g. ttft:200", kv)
		}
		if seen[k] {
			return l, true, fmt.Errorf("--goodput: %s given twice", k)
		}
		seen[k] = true
		switch k {
		case "ttft":
			l.TTFTMS = ms
		case "tpot":
			l.TPOTMS = ms
		case "e2el":
			l.E2ELMS = ms
		default:
			return l, true, fmt.Errorf("--goodput %q: unknown metric %q; vLLM's are ttft, tpot and e2el", kv, k)
		}
	}
	return l, true, nil
}

// applyGoodput sets m.SLO from --goodput, refusing it beside --slo-ttft,
// --slo-tpot or --slo-e2el.
func (s *sloFlags) applyGoodput(cmd *cobra.Command, m *sim.MetricsConfig) error {
	l, ok, err := s.goodputLimits()
	if err != nil || !ok {
		return err
	}
	for _, f := range []string{"slo-ttft", "slo-tpot", "slo-e2el"} {
		if fl := cmd.Flags().Lookup(f); fl != nil && fl.Changed {
			return fmt.Errorf("--goodput and --%s both set SLO limits: give one of them", f)
		}
	}
	m.SLO.TTFTMS, m.SLO.TPOTMS, m.SLO.E2ELMS = l.TTFTMS, l.TPOTMS, l.E2ELMS
	return nil
}

// goodputArg matches one of vLLM's --goodput values (ttft:200).
var goodputArg = regexp.MustCompile(`^(?i)(ttft|tpot|e2el):`)

// vllmGoodputArgs rewrites vLLM's spelling --goodput ttft:200 tpot:15
// (several values after one flag) into --goodput=ttft:200,tpot:15, which
// the flag library reads.
func vllmGoodputArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			return append(out, args[i:]...)
		}
		if args[i] != "--goodput" {
			out = append(out, args[i])
			continue
		}
		var vals []string
		for i+1 < len(args) && goodputArg.MatchString(args[i+1]) {
			vals = append(vals, args[i+1])
			i++
		}
		if len(vals) == 0 {
			out = append(out, args[i])
			continue
		}
		out = append(out, "--goodput="+strings.Join(vals, ","))
	}
	return out
}
