package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports/study"
)

type mergeOptions struct {
	temps *tempFiles
	out   outputFlags
}

func newMergeCmd(temps *tempFiles) *cobra.Command {
	o := &mergeOptions{temps: temps}
	cmd := &cobra.Command{
		Use:   "merge DIR",
		Short: "Write the results of a sweep or capacity study whose shards wrote their points into DIR",
		Long: `Read the point files the shards of 'itlsim sweep --out DIR' or 'itlsim
capacity --out DIR' wrote, check that every point of the study is there (and
name the ones missing), and write the results exactly as one machine running
the whole study would: the same table, --json, --csv and --html, byte for
byte.

The study is rebuilt from DIR/plan.json, the command line the shards ran;
its scenario file, if any, must be readable from here under the same path.

  itlsim sweep --rate 4:24:4 --out /results --shard-count 3 --shard-index 0   # and 1, 2
  itlsim merge /results --json sweep.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	o.out.bind(cmd.Flags())
	return cmd
}

func (o *mergeOptions) run(cmd *cobra.Command, path string) error {
	dir := study.Dir{Path: path}
	m, err := dir.Plan()
	if err != nil {
		return err
	}
	if _, err := stdoutFormat("format", o.out.format); err != nil {
		return err
	}
	// Every file merge reads is an input: the manifest and the point files
	// of the plan (present or not), so no output may replace one.
	o.temps.Reads("DIR/"+study.PlanFile, filepath.Join(path, study.PlanFile))
	readsPoints := func(keys []string) error {
		for _, k := range keys {
			o.temps.Reads("a point file of DIR", dir.File(k))
		}
		return checkOutputs(o.temps, o.out)
	}
	switch m.Command {
	case "sweep":
		c, sw := sweepCommand(o.temps)
		args, err := parseManifest(c, m.Args)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, study.PlanFile, err)
		}
		p, keys, labels, err := sw.plan(c, args)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, study.PlanFile, err)
		}
		if err := readsPoints(keys); err != nil {
			return err
		}
		pts, err := study.LoadAll[study.Point](dir, keys, labels, m.ShardCount)
		if err != nil {
			return err
		}
		return sw.render(cmd.OutOrStdout(), p, pts, o.out)
	case "capacity":
		c, co := capacityCommand(o.temps)
		args, err := parseManifest(c, m.Args)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, study.PlanFile, err)
		}
		p, err := co.plan(c, args)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, study.PlanFile, err)
		}
		if err := readsPoints(p.keys); err != nil {
			return err
		}
		cs, err := study.LoadAll[study.ConfigSearch](dir, p.keys, p.labels, m.ShardCount)
		if err != nil {
			return err
		}
		return co.render(cmd.OutOrStdout(), p, cs, o.out)
	}
	return fmt.Errorf("%s: %s: command %q: expected sweep or capacity", path, study.PlanFile, m.Command)
}

// parseManifest parses a manifest's arguments with the command's own flags.
func parseManifest(c *cobra.Command, args []string) ([]string, error) {
	if err := c.ParseFlags(args); err != nil {
		return nil, err
	}
	return c.Flags().Args(), nil
}
