package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/cmd/itlsim/internal/serve"
	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/reports/qoe"
	"github.com/itlsim/itlsim/sim"
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
	ports         string
	maxLag        time.Duration
	spinWait      time.Duration
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

A cluster scenario (--replicas, a cluster section) is served one port per
replica, so that a real router can be put in front: replica i listens on
--addr's port + i (or the i-th of --ports), each port with its own /v1,
/health and /metrics, and a request that comes in on replica i's port runs
on replica i. With --route the cluster is served on --addr alone, behind the
scenario's router, and /metrics sum the replicas.

--time-scale S runs S simulated seconds per wall second. serve measures how
late it releases each chunk against its scheduled wall time (/metrics:
itlsim:schedule_lag_seconds), prints the lag's p50/p99/max on stopping and
warns when p99 exceeds --max-schedule-lag (clients' latencies are inflated by
about that much) or when it falls so far behind that the host cannot hold the
time scale (at once, and again on stopping). --replay FILE serves
recorded streams instead (anything analyze reads that has gaps), request k
getting stream k of the file, with --pauses injected as in itlsim replay.
Ctrl-C (or --exit-after N answered requests) stops the server: it lets the
responses in flight finish, prints the served streams' table and writes
--timelines.

  itlsim serve --addr 127.0.0.1:8000
  itlsim serve scenario.yaml --time-scale 10 --timelines served.jsonl
  itlsim serve --replicas 2 --addr 127.0.0.1:8000     # replicas on 8000 and 8001
  itlsim serve --replay profile_export.jsonl --pauses 1 --pause-ms 800 --pause-at middle`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args)
		},
	}
	o.scenario.bind(cmd, false)
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:8000", "address to listen on (port 0: any free port, printed on stderr); a cluster scenario's replica i listens on its port + i")
	f.Float64Var(&o.timeScale, "time-scale", 1, "simulated seconds per wall-clock second (2: twice as fast as real time)")
	f.StringVar(&o.modelName, "served-model-name", "", "model name listed and accepted (default: the scenario's model)")
	f.IntVar(&o.exitAfter, "exit-after", 0, "stop after answering this many requests (0: run until Ctrl-C)")
	f.DurationVar(&o.drain, "drain", 30*time.Second, "on stopping, how long responses in flight may take to finish")
	f.StringVar(&o.timelinesPath, "timelines", "", "on stopping, write every served stream's simulated chunk times (itlsim's stream format; a stream aborted before its end says why: cancelled, write-timeout or drain) to this file")
	f.StringVar(&o.format, "format", "table", "stdout form of the served streams' summary: table, markdown or json")
	f.BoolVar(&o.route, "route", false, "serve a cluster scenario behind the simulator's own router on one port (default: one port per replica, for a router in front)")
	f.StringVar(&o.ports, "ports", "", "a cluster scenario's ports, one per replica in order, comma-separated, on --addr's host (default: --addr's port + the replica's index)")
	f.DurationVar(&o.maxLag, "max-schedule-lag", serve.DefaultMaxScheduleLag, "warn when the p99 of how late chunks are released against their schedule (wall time) exceeds this: clients' recorded latencies are inflated by about that much")
	f.DurationVar(&o.spinWait, "spin-wait", 0, "poll the clock for this much of each wait for the engine's next event instead of sleeping (1ms releases chunks within microseconds, where Go's timers wake about 1 ms late, at the cost of CPU; 0: sleep only)")
	f.StringVar(&o.replay, "replay", "", "serve the recorded streams of this file instead of simulating")
	f.StringVar(&o.replayFormat, "replay-format", "auto", "format of --replay: auto, "+strings.Join(ingest.Formats(), ", "))
	f.IntVar(&o.pauses, "pauses", 0, "with --replay: pauses to inject per stream")
	f.StringVar(&o.pauseMS, "pause-ms", "500", "with --replay: pause length distribution in ms (as itlsim replay)")
	f.StringVar(&o.pauseAt, "pause-at", ingest.PauseAtRandom, "with --replay: where pauses go: start, middle, end or random")
	return cmd
}

func (o *serveOptions) run(cmd *cobra.Command, args []string) error {
	stderr := cmd.ErrOrStderr()
	format, err := stdoutFormat("format", o.format)
	if err != nil {
		return err
	}
	if err := serve.CheckTimeScale(o.timeScale); err != nil {
		return err
	}
	if o.exitAfter < 0 {
		return fmt.Errorf("--exit-after: must be ≥ 0 requests, got %d", o.exitAfter)
	}
	if o.maxLag <= 0 {
		return fmt.Errorf("--max-schedule-lag: must be > 0, got %v", o.maxLag)
	}
	if o.spinWait < 0 || o.spinWait > time.Second {
		return fmt.Errorf("--spin-wait: must be in [0, 1s], got %v", o.spinWait)
	}
	cfg, err := o.scenario.loadOne(cmd, args)
	if err != nil {
		return err
	}
	n := cfg.Cluster.Size()
	perReplica := n > 1 && !o.route
	if o.ports != "" && o.route {
		return fmt.Errorf("--ports: --route serves the cluster on one port (--addr); drop one of them")
	}
	if o.replay != "" && (perReplica || o.ports != "") {
		return fmt.Errorf("--replay serves recorded streams on one port: the scenario has %d replicas (drop --replicas or the cluster section, or add --route)", n)
	}
	addrs, err := serve.PortAddrs(o.addr, o.ports, max(1, n), perReplica || o.ports != "")
	if err != nil {
		return err
	}
	files := newOutputs(o.temps)
	defer files.Discard()
	timelines := files.Add("--timelines", o.timelinesPath)
	files.Reads("SCENARIO", args...)
	files.Reads("--replay", o.replay)
	readsConfig(files, cfg)
	if err := files.Check(); err != nil {
		return err
	}
	opt := serve.Options{ModelName: o.modelName, TimeScale: o.timeScale, ExitAfter: o.exitAfter, PerReplica: perReplica,
		MaxScheduleLag: o.maxLag, SpinWait: o.spinWait, Warn: func(msg string) { fmt.Fprintln(stderr, "itlsim serve: "+msg) }}
	if opt.ModelName == "" {
		opt.ModelName = cfg.Model
	}
	var srv *serve.Server
	var tw *reports.TimelineWriter
	var setup *sim.Setup
	var scratch *os.File
	var scores *qoe.Sink
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
		var dropped bool
		if opt.FlushWindow, dropped = serve.LiveDelivery(&cfg); dropped {
			fmt.Fprintln(stderr, "itlsim serve: the scenario's network, coalescing, smoothing, render and failover are not simulated: the real network and client take their place (the flush window is kept)")
		}
		if setup, err = cfg.Resolve(); err != nil {
			return err
		}
		opt.MaxModelLen = setup.Config.MaxModelLen
		// 20 sleeps of 100 µs: about 3 ms before listening. A spin wait
		// that covers the granularity polls instead: a microsecond's.
		g := serve.TimerGranularity(20)
		if o.spinWait >= g {
			g = time.Microsecond
		}
		if w := serve.ScaleWarning(setup, o.timeScale, g); w != "" {
			fmt.Fprintln(stderr, "itlsim serve: "+w)
		}
		var next sim.TimelineSink
		if timelines != nil {
			if scratch, err = timelines.ScratchFile(".itlsim-served-"); err != nil {
				return err
			}
			defer timelines.RemoveScratch(scratch)
			tw = reports.NewTimelineWriter(scratch, serve.RunName(setup.Config))
			next = tw
		}
		// Every served stream is scored (QoE, fluidity) from its timeline,
		// as run and analyze score theirs.
		scores = qoe.NewSink(setup.Config.Metrics.QoE, reports.ClassQoEs(setup.Config), next)
		if srv, err = serve.New(setup, opt, scores); err != nil {
			return err
		}
	}
	if err := o.serveAndReport(cmd, srv, addrs, setup, scores, format, stderr); err != nil {
		return err
	}
	if tw == nil {
		return nil
	}
	if err := tw.Flush(); err != nil {
		return timelines.Fail(err)
	}
	err = timelines.Write(func(f *os.File) error {
		if _, err := scratch.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := io.Copy(f, scratch)
		return err
	})
	if err != nil {
		return err
	}
	return files.Commit()
}

// serveAndReport listens, serves until stopped, and prints the served
// streams' summary (a simulation's; nothing for a replay).
func (o *serveOptions) serveAndReport(cmd *cobra.Command, srv *serve.Server, addrs []string, setup *sim.Setup, scores *qoe.Sink, format reports.Format, stderr io.Writer) error {
	lns, err := serve.ListenAll(addrs, o.ports != "")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	undo := o.temps.StopGracefully(cancel)
	defer undo()
	what := "simulating " + o.scenarioLabel(setup)
	if o.replay != "" {
		what = "replaying " + o.replay
	}
	// One write, so that whoever waits for the first address sees them all.
	var msg strings.Builder
	names := srv.PortNames()
	if len(lns) == 1 {
		fmt.Fprintf(&msg, "itlsim serve: listening on http://%s (%s, time scale %g)\n", lns[0].Addr(), what, o.timeScale)
	} else {
		for i, ln := range lns {
			fmt.Fprintf(&msg, "itlsim serve: %s listening on http://%s\n", names[i], ln.Addr())
		}
		fmt.Fprintf(&msg, "itlsim serve: %s, time scale %g, a port per replica: each port's requests run on its replica (the scenario's router is not used)\n", what, o.timeScale)
	}
	io.WriteString(stderr, msg.String())
	if err := srv.Serve(ctx, o.drain, lns...); err != nil {
		return err
	}
	lag := srv.Lag()
	notes := append([]string{lag.Line()}, lag.Warnings()...)
	res := srv.Result()
	if res != nil {
		fmt.Fprintf(stderr, "itlsim serve: stopped after %d requests (%s)\n", res.Requests, serve.Counts(res))
	}
	for _, n := range notes {
		fmt.Fprintln(stderr, "itlsim serve: "+n)
	}
	if res == nil {
		return nil
	}
	scores.Apply(res)
	run := reports.NewRunOptions(serve.RunName(setup.Config), nil, setup.Config, res, format == reports.FormatJSON)
	run.AddCluster(srv.Cluster())
	run.Realtime = &reports.Realtime{TimeScale: o.timeScale, Events: lag.Events,
		ScheduleLagP50S: lag.P50.Seconds(), ScheduleLagP99S: lag.P99.Seconds(), ScheduleLagMaxS: lag.Max.Seconds(),
		MaxScheduleLagS: lag.Threshold.Seconds(), Held: lag.Held(), Notes: notes}
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
	return serve.ReplayScripts(o.replay, o.replayFormat, ingest.ReplayOptions{Pauses: o.pauses, PauseMS: o.pauseMS, PauseAt: o.pauseAt, Seed: seed})
}
