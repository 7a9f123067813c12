package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/cmd/itlsim/internal/serve"
	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/delivery"
)

type serveOptions struct {
	temps         *tempFiles
	scenario      singleScenario
	addr          string
	timeScale     float64
	modelName     string
	exitAfter     int
	drain         time.Duration
	timelinesPath string
	format        string
	replay        string
	replayFormat  string
	pauses        int
	pauseMS       string
	pauseAt       string
	route         bool
}

func newServeCmd(stdout, stderr io.Writer, temps *tempFiles) *cobra.Command {
	o := &serveOptions{temps: temps}
	cmd := &cobra.Command{
		Use:   "serve [SCENARIO.yaml]",
		Short: "Serve simulated streams over an OpenAI-compatible HTTP API, in real time",
		Long: `Serve the scenario's replica behind an OpenAI-compatible API: /v1/completions
and /v1/chat/completions (streamed as server-sent events, or one JSON body),
/v1/models, /health, and Prometheus /metrics under vLLM's metric names. A
request joins the simulated replica at its wall-clock arrival and its chunks
are released when the simulation emits them, so queueing, batching, KV
pressure, speculative decoding and hiccups all show in the timing a real
client sees. A rejection is an HTTP 429 (queue full, rate limited), 503 (KV
pressure) or 400 (the request can never fit) with a JSON body.

The output length is max_tokens with ignore_eos (as vLLM's benchmarks send
it), otherwise drawn from the scenario's output lengths and capped by
max_tokens. The prompt length is the prompt's token ids, or its
whitespace-separated words (see README, Live endpoints).

--time-scale S runs S simulated seconds per wall second. --replay FILE serves
recorded streams instead (anything analyze reads that has gaps), request k
getting stream k of the file, with --pauses injected as in itlsim replay.
Ctrl-C (or --exit-after N answered requests) stops the server: it lets the
responses in flight finish, prints the served streams' table and writes
--timelines.

  itlsim serve --addr 127.0.0.1:8000
  itlsim serve scenario.yaml --time-scale 10 --timelines served.jsonl
  itlsim serve --replay profile_export.jsonl --pauses 1 --pause-ms 800 --pause-at middle`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args)
		},
	}
	o.scenario.bind(cmd, false)
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:8000", "address to listen on (port 0: any free port, printed on stderr)")
	f.Float64Var(&o.timeScale, "time-scale", 1, "simulated seconds per wall-clock second (2: twice as fast as real time)")
	f.StringVar(&o.modelName, "served-model-name", "", "model name listed and accepted (default: the scenario's model)")
	f.IntVar(&o.exitAfter, "exit-after", 0, "stop after answering this many requests (0: run until Ctrl-C)")
	f.DurationVar(&o.drain, "drain", 30*time.Second, "on stopping, how long responses in flight may take to finish")
	f.StringVar(&o.timelinesPath, "timelines", "", "on stopping, write every served stream's simulated chunk times (itlsim's stream format) to this file")
	f.StringVar(&o.format, "format", "table", "stdout form of the served streams' summary: table, markdown or json")
	f.BoolVar(&o.route, "route", false, "serve a cluster scenario behind the simulator's own router on one port (one port per replica is not built yet)")
	f.StringVar(&o.replay, "replay", "", "serve the recorded streams of this file instead of simulating")
	f.StringVar(&o.replayFormat, "replay-format", "auto", "format of --replay: auto, "+strings.Join(ingest.Formats(), ", "))
	f.IntVar(&o.pauses, "pauses", 0, "with --replay: pauses to inject per stream")
	f.StringVar(&o.pauseMS, "pause-ms", "500", "with --replay: pause length distribution in ms (as itlsim replay)")
	f.StringVar(&o.pauseAt, "pause-at", pauseAtRandom, "with --replay: where pauses go: start, middle, end or random")
	return cmd
}

func (o *serveOptions) run(cmd *cobra.Command, args []string) error {
	stderr := cmd.ErrOrStderr()
	format, err := stdoutFormat("format", o.format)
	if err != nil {
		return err
	}
	if !(o.timeScale > 0) || o.timeScale > 1e6 || math.IsInf(o.timeScale, 0) {
		return fmt.Errorf("--time-scale: must be in (0, 1e6] simulated seconds per second, got %g", o.timeScale)
	}
	if o.exitAfter < 0 {
		return fmt.Errorf("--exit-after: must be ≥ 0 requests, got %d", o.exitAfter)
	}
	cfg, err := o.scenario.loadOne(cmd, args)
	if err != nil {
		return err
	}
	if n := cfg.Cluster.Size(); n > 1 && !o.route {
		return fmt.Errorf("the scenario has %d replicas: add --route to serve them behind the simulator's router (%s) on one port; one port per replica is not built yet (run one serve per replica for that)", n, cfg.Cluster.Router.Policy)
	}
	files := newOutputs(o.temps)
	defer files.discard()
	timelines := files.add("--timelines", o.timelinesPath)
	if err := files.check(); err != nil {
		return err
	}
	opt := serve.Options{ModelName: o.modelName, TimeScale: o.timeScale, ExitAfter: o.exitAfter}
	if opt.ModelName == "" {
		opt.ModelName = cfg.Model
	}
	var srv *serve.Server
	var tw *reports.TimelineWriter
	var setup *sim.Setup
	var scratch *os.File
	if o.replay != "" {
		if timelines != nil {
			return fmt.Errorf("--timelines: a replay serves the file's streams; there is no simulation to write")
		}
		scripts, err := o.replayScripts(cfg.Seed)
		if err != nil {
			return err
		}
		if srv, err = serve.NewReplay(scripts, opt); err != nil {
			return err
		}
	} else {
		// The real network and client replace the simulated delivery path;
		// the server's own flush window stays.
		opt.FlushWindow = sim.FromMS(cfg.Delivery.Flush.WindowMS)
		rest := cfg.Delivery
		rest.Flush = delivery.Flush{}
		if rest.Enabled() {
			fmt.Fprintln(stderr, "itlsim serve: the scenario's network, coalescing, smoothing, render and failover are not simulated: the real network and client take their place (the flush window is kept)")
		}
		cfg.Delivery = delivery.DefaultConfig()
		if setup, err = cfg.Resolve(); err != nil {
			return err
		}
		opt.MaxModelLen = setup.Config.MaxModelLen
		var sink sim.TimelineSink
		if timelines != nil {
			if scratch, err = timelines.scratchFile(".itlsim-served-"); err != nil {
				return err
			}
			defer timelines.removeScratch(scratch)
			tw = reports.NewTimelineWriter(scratch, runName(setup.Config))
			sink = tw
		}
		if srv, err = serve.New(setup, opt, sink); err != nil {
			return err
		}
	}
	if err := o.serveAndReport(cmd, srv, setup, format, stderr); err != nil {
		return err
	}
	if tw == nil {
		return nil
	}
	if err := tw.Flush(); err != nil {
		return timelines.fail(err)
	}
	err = timelines.write(func(f *os.File) error {
		if _, err := scratch.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := io.Copy(f, scratch)
		return err
	})
	if err != nil {
		return err
	}
	return files.commit()
}

// runName names the served run in files: the scenario's name or "served".
func runName(c sim.Config) string {
	if c.Name != "" {
		return c.Name
	}
	return "served"
}

// serveAndReport listens, serves until stopped, and prints the served
// streams' summary (a simulation's; nothing for a replay).
func (o *serveOptions) serveAndReport(cmd *cobra.Command, srv *serve.Server, setup *sim.Setup, format reports.Format, stderr io.Writer) error {
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", o.addr, err)
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	undo := o.temps.stopGracefully(cancel)
	defer undo()
	what := "simulating " + o.scenarioLabel(setup)
	if o.replay != "" {
		what = "replaying " + o.replay
	}
	fmt.Fprintf(stderr, "itlsim serve: listening on http://%s (%s, time scale %g)\n", ln.Addr(), what, o.timeScale)
	if err := srv.Serve(ctx, ln, o.drain); err != nil {
		return err
	}
	res := srv.Result()
	if res == nil {
		return nil
	}
	run := reports.NewRunOptions(runName(setup.Config), nil, setup.Config, res, format == reports.FormatJSON)
	fmt.Fprintf(stderr, "itlsim serve: stopped after %d requests (%d finished)\n", res.Requests, res.Finished)
	return (runOutputs{files: newOutputs(o.temps), format: format}).write(cmd.OutOrStdout(), []reports.Run{run})
}

func (o *serveOptions) scenarioLabel(s *sim.Setup) string {
	if s == nil {
		return ""
	}
	return s.Config.Model + " on " + s.Config.GPU
}

// replayScripts reads --replay and injects the pauses: one script per
// stream, offsets from its arrival.
func (o *serveOptions) replayScripts(seed uint64) ([]serve.Script, error) {
	in, err := ingest.ParseFormat(o.replayFormat)
	if err != nil {
		return nil, fmt.Errorf("--replay-format: %w", err)
	}
	ro := replayOptions{pauses: o.pauses, pauseMS: o.pauseMS, pauseAt: o.pauseAt, seed: seed,
		smoothing: []string{"none"}, flush: []string{"none"}, network: []string{"none"}}
	plan, err := ro.pausePlan()
	if err != nil {
		return nil, err
	}
	mits, err := ro.mitigations()
	if err != nil {
		return nil, err
	}
	recs, err := readRecordings([]string{o.replay}, in)
	if err != nil {
		return nil, err
	}
	var scripts []serve.Script
	for ri := range recs {
		rec := &recs[ri]
		if rec.NoGaps {
			return nil, fmt.Errorf("%s: %s records only each request's first and last token times: there are no chunks to replay", rec.File, rec.Format)
		}
		r := replayRecording(rec, uint64(ri), plan, mits[0])
		for si := range r.Streams {
			s := &r.Streams[si]
			sc := serve.Script{Prompt: s.InputTokens}
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
	if len(scripts) == 0 {
		return nil, fmt.Errorf("--replay %s: no stream with output to serve", o.replay)
	}
	return scripts, nil
}
