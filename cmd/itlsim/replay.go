package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/reports/slo"
	"github.com/itlsim/itlsim/sim/delivery"
)

type replayOptions struct {
	temps *tempFiles
	measuredFlags
	metrics metricFlags
	slo     sloFlags
	replay  ingest.ReplayOptions
}

func newReplayCmd(temps *tempFiles) *cobra.Command {
	o := &replayOptions{temps: temps}
	cmd := &cobra.Command{
		Use:   "replay FILE...",
		Short: "Replay measured streams with injected pauses through client mitigations and score what the client sees",
		Long: `Read measured streams (anything itlsim analyze reads), inject synthetic pauses
into each stream, deliver the result through a client mitigation — a smoothing
buffer, a server flush window, a network profile — and print the same table
and JSON as itlsim analyze for what the client sees, one column per
mitigation compared. The pauses and the network's draws are seeded per stream
and identical in every column, so the columns differ only by the mitigation.

Pauses (--pauses N per stream, each drawn from --pause-ms) go into the gaps
between chunks: start puts them in the first gaps, end in the last, middle
around the middle one, random in gaps drawn uniformly. A pause adds to the
gap it lands in. A stream with one chunk has no gap and gets none.

Mitigations, comma-separated lists compared side by side:
  --smoothing none|CADENCE[/DEPTH]  client smoothing buffer releasing every
                                    CADENCE and holding DEPTH of tokens
                                    (default depth 250ms), e.g. 33ms/500ms
  --flush none|WINDOW               server accept-then-flush window, e.g. 50ms
  --network none|PROFILE            network profile: ` + strings.Join(delivery.ProfileNames(), ", ") + `
Durations take a unit (33ms, 0.5s) or are milliseconds.

  itlsim replay serving_qps_16.json --pauses 1 --pause-ms 300 --pause-at middle --smoothing none,33ms/500ms
  itlsim replay profile_export.jsonl --network none,mobile-4g --smoothing none,33ms`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args)
		},
	}
	o.measuredFlags.bind(cmd)
	f := cmd.Flags()
	f.IntVar(&o.replay.Pauses, "pauses", 0, "pauses to inject per stream")
	f.StringVar(&o.replay.PauseMS, "pause-ms", "500", "pause length distribution in ms: a number, fixed:MS, uniform:MIN,MAX, exp:MEAN, normal:…, lognormal:…, pareto:…")
	f.StringVar(&o.replay.PauseAt, "pause-at", ingest.PauseAtRandom, "where pauses go: start, middle, end or random")
	f.Uint64Var(&o.replay.Seed, "seed", 1, "seeds the pauses and the network's draws")
	f.StringSliceVar(&o.replay.Smoothing, "smoothing", []string{"none"}, "client smoothing buffers to compare: none or CADENCE[/DEPTH]")
	f.StringSliceVar(&o.replay.Flush, "flush", []string{"none"}, "server flush windows to compare: none or WINDOW")
	f.StringSliceVar(&o.replay.Network, "network", []string{"none"}, "network profiles to compare: none, "+strings.Join(delivery.ProfileNames(), ", "))
	f.Var(newMS(&o.replay.FrameMS), "frame-ms", "renderer frame period, ms or with a unit (16.7 or 16.7ms for 60 Hz); 0 shows chunks on arrival")
	o.metrics.bind(cmd)
	o.slo.bind(cmd)
	return cmd
}

func (o *replayOptions) run(cmd *cobra.Command, args []string) error {
	in, out, err := o.formats(cmd)
	if err != nil {
		return err
	}
	m, err := o.metrics.config()
	if err != nil {
		return err
	}
	if err := o.slo.applyGoodput(cmd, &m); err != nil {
		return err
	}
	terms, err := o.slo.parse("", nil, nil)
	if err != nil {
		return err
	}
	plan, err := o.replay.PausePlan()
	if err != nil {
		return err
	}
	if o.replay.Pauses == 0 {
		for _, name := range []string{"pause-ms", "pause-at"} {
			if cmd.Flags().Changed(name) {
				return fmt.Errorf("--%s: applies to injected pauses, and --pauses is 0: give --pauses N (per stream) or drop --%s", name, name)
			}
		}
	}
	mits, err := o.replay.Mitigations()
	if err != nil {
		return err
	}
	files := newOutputs(o.temps)
	defer files.Discard()
	outs := runOutputs{files: files, json: files.Add("--json", o.jsonPath), summaryCSV: files.Add("--summary-csv", o.summaryCSV), format: out}
	files.Reads("FILE", args...)
	if err := files.Check(); err != nil {
		return err
	}
	recs, err := ingest.ReadFiles(args, in)
	if err != nil {
		return err
	}
	replayed, err := ingest.ReplayAll(recs, plan, mits)
	if err != nil {
		return err
	}
	runs := ingest.Runs(replayed, m, true)
	slo.Judge(runs, terms)
	return outs.write(cmd.OutOrStdout(), runs)
}
