package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/cmd/itlsim/internal/record"
	"github.com/itlsim/itlsim/cmd/itlsim/internal/serve"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/workloads"
	"github.com/itlsim/itlsim/workloads/seed"
)

type recordOptions struct {
	temps       *tempFiles
	scenario    singleScenario
	endpoint    string
	modelName   string
	apiKeyEnv   string
	concurrency int
	timeout     time.Duration
	timeScale   float64
	continuous  bool
	outPath     string
	jsonPath    string
	format      string
	failOnError bool
	save        saveResult
	timerProbe  int
	quiet       bool
}

func newRecordCmd(temps *tempFiles) *cobra.Command {
	o := &recordOptions{temps: temps}
	cmd := &cobra.Command{
		Use:   "record URL [SCENARIO.yaml]",
		Short: "Send a scenario's load to an OpenAI-compatible server and record every stream's chunk times",
		Long: `Send the scenario's requests to an OpenAI-compatible server (vLLM, SGLang,
TGI, itlsim serve) at the scenario's arrival times (a closed loop included),
with its prompt and output lengths: a synthesised prompt of one word per
token, max_tokens with ignore_eos, streamed. Every chunk's arrival time and
token count (from the usage the server sends) is recorded; errors, HTTP
rejections, timeouts and cancellations are counted as failed requests, never
dropped. The streams are written in itlsim's stream format (-o) and the same
summary as itlsim analyze is printed, so itlsim gate works on recorded runs.

Before the run, record measures how late its host wakes from 1 ms sleeps
(--timer-probe) and states it on stderr and in the results' notes, warning
when p99 exceeds 1 ms: a loaded host's lateness is what recorded gaps may be
off by.

The run is bounded by the scenario (--requests or --duration). Ctrl-C stops
sending, cancels the requests in flight and still writes what was recorded
(exit status 130).

  itlsim record http://127.0.0.1:8000 --rate 4 --requests 200 --input-len fixed:512 --output-len fixed:256 -o vllm.jsonl
  OPENAI_API_KEY=... itlsim record https://host/v1 scenario.yaml --concurrency 64 --endpoint chat -o run.jsonl`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args)
		},
	}
	o.scenario.bind(cmd, false)
	f := cmd.Flags()
	f.StringVar(&o.endpoint, "endpoint", record.EndpointCompletions, "API to send to: completions (/v1/completions) or chat (/v1/chat/completions)")
	f.StringVar(&o.modelName, "served-model-name", "", "model name to send (default: the first one the server's /v1/models lists)")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the API key sent as a bearer token (unset or empty: none)")
	f.IntVar(&o.concurrency, "concurrency", 0, "cap on requests in flight (0: no cap)")
	f.DurationVar(&o.timeout, "timeout", 10*time.Minute, "limit on one request, send to last byte (0: none)")
	f.Float64Var(&o.timeScale, "time-scale", 1, "simulated seconds per wall-clock second: arrivals come this much faster and recorded times are multiplied by it (match itlsim serve --time-scale; 1 for a real server)")
	f.BoolVar(&o.continuous, "continuous-usage", true, "ask for usage in every chunk (stream_options.continuous_usage_stats, vLLM and SGLang) to count each chunk's tokens")
	f.StringVarP(&o.outPath, "out", "o", "", "write the recorded streams (itlsim's stream format) to this file")
	f.StringVar(&o.jsonPath, "json", "", "write the full results (runs, streams, time series) as JSON to this file")
	f.StringVar(&o.format, "format", "table", "stdout form: table, markdown or json")
	o.save.bind(f)
	f.IntVar(&o.timerProbe, "timer-probe", 200, "before the run, measure how late this host wakes from this many 1 ms sleeps and state it beside the results, warning when p99 exceeds 1 ms (0: do not measure)")
	bindQuiet(cmd, &o.quiet)
	f.BoolVar(&o.failOnError, "fail-on-error", false, "exit 1 when any request did not complete (failed or rejected); without it record exits 1 only when none completed")
	return cmd
}

func (o *recordOptions) run(cmd *cobra.Command, args []string) error {
	stderr := cmd.ErrOrStderr()
	format, err := stdoutFormat("format", o.format)
	if err != nil {
		return err
	}
	if err := serve.CheckTimeScale(o.timeScale); err != nil {
		return err
	}
	cfg, err := o.scenario.loadOne(cmd, args[1:])
	if err != nil {
		return err
	}
	if o.timerProbe < 0 {
		return fmt.Errorf("--timer-probe: must be ≥ 0 sleeps (0: none), got %d", o.timerProbe)
	}
	if err := cfg.Workload.Validate(); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	if err := cfg.Metrics.Validate(); err != nil {
		return err
	}
	src, err := workloads.New(cfg.Workload, seed.Derive(cfg.Seed, "workload"))
	if err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	opt := record.Options{
		URL: args[0], Endpoint: o.endpoint, Model: o.modelName, Concurrency: o.concurrency,
		Timeout: o.timeout, TimeScale: o.timeScale, ContinuousUsage: o.continuous, Seed: cfg.Seed,
	}
	if opt.Concurrency == 0 { // the scenario's cap (workload.max_concurrency), as run applies it
		opt.Concurrency = cfg.Workload.MaxConcurrency
	}
	if o.apiKeyEnv != "" {
		opt.APIKey = os.Getenv(o.apiKeyEnv)
	}
	if err := opt.Validate(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	if err := o.save.check(cmd); err != nil {
		return err
	}
	if o.save.on() && opt.Model == "" {
		// The default result file is named after the model, before any work.
		if opt.Model, err = record.FirstModel(ctx, opt); err != nil {
			return err
		}
	}
	files := newOutputs(o.temps)
	defer files.Discard()
	out := files.Add("-o", o.outPath)
	outs := runOutputs{files: files, json: files.Add("--json", o.jsonPath), format: format}
	saved := o.save.add(files, &cfg.Workload, opt, time.Now())
	files.Reads("SCENARIO", args[1:]...)
	readsConfig(files, cfg)
	if err := files.Check(); err != nil {
		return err
	}
	// The host's own timer, measured just before the run: what the
	// recorded times may be off by.
	var timerNotes []string
	if o.timerProbe > 0 {
		j := record.MeasureJitter(o.timerProbe, time.Millisecond)
		timerNotes = append(timerNotes, j.Line())
		if w := j.Warning(record.DefaultJitterLimit, o.timeScale); w != "" {
			timerNotes = append(timerNotes, w)
		}
		for _, n := range timerNotes {
			fmt.Fprintln(stderr, "itlsim record: "+n)
		}
	}
	undo := o.temps.StopGracefully(cancel)
	line := progressLine(cmd, "record", o.quiet)
	record.Watch(line, &opt, cfg.Workload.Requests, time.Duration(cfg.Workload.DurationS/o.timeScale*float64(time.Second)))
	res, err := record.Run(ctx, src, opt)
	line.Done()
	undo()
	if err != nil {
		return err
	}
	if err := workloads.Err(src); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	nFailed, nRejected := res.Counts()
	fmt.Fprintf(stderr, "itlsim record: %s\n", res.Tally())
	if res.Sent == 0 {
		return fmt.Errorf("no request was sent")
	}
	name := cfg.Name
	if name == "" {
		name = "recorded"
	}
	var buf bytes.Buffer
	if err := record.WriteStreams(&buf, name, res.Streams); err != nil {
		return err
	}
	if out != nil {
		if err := out.Write(func(f *os.File) error { _, err := f.Write(buf.Bytes()); return err }); err != nil {
			return err
		}
	}
	// The summary is analyze's, read back from the very lines written.
	label := o.outPath
	if label == "" {
		label = "recorded streams"
	}
	recs, err := ingest.Parse(label, buf.Bytes(), ingest.FormatStreams)
	if err != nil {
		return err
	}
	runs := ingest.Runs(recs, cfg.Metrics, true)
	for i := range runs {
		runs[i].Source.Notes = append(runs[i].Source.Notes, fmt.Sprintf("recorded from %s (%s endpoint, time scale %g)", args[0], o.endpoint, o.timeScale))
		runs[i].Source.Notes = append(runs[i].Source.Notes, timerNotes...)
	}
	if saved != nil { // written before outs commits every file
		if err := saved.write(res, runs[0].VLLM); err != nil {
			return err
		}
	}
	if err := outs.write(cmd.OutOrStdout(), runs); err != nil {
		return err
	}
	if res.Stopped {
		return &exitError{code: 130, err: fmt.Errorf("stopped by a signal after %d requests; what was recorded is written", res.Sent)}
	}
	// Every stream is written whatever its outcome; the exit status says
	// whether the recording is one to trust.
	where := "every stream is written"
	if o.outPath != "" {
		where += " to " + o.outPath
	}
	switch done := res.Completed(); {
	case done == 0:
		return fmt.Errorf("no request of %d completed (%d failed, %d rejected); %s", res.Sent, nFailed, nRejected, where)
	case o.failOnError && done < res.Sent:
		return fmt.Errorf("--fail-on-error: %d of %d requests did not complete (%d failed, %d rejected); %s", res.Sent-done, res.Sent, nFailed, nRejected, where)
	}
	return nil
}
