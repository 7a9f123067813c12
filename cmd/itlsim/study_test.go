package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/itlsim/itlsim/reports/study"
)

// sweepArgs is a small sweep: two configurations, two rates, two seeds.
var sweepArgs = []string{"sweep", "--requests", "300", "--rate", "6,14", "--seeds", "2",
	"--vary", "scheduler.max_num_batched_tokens=512,8192", "--slo", "stream-p99-itl:p99<=150ms"}

// outputs runs args with --json, --csv and --html into dir and returns
// stdout and the three files.
func studyOutputs(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	a := append(slices.Clone(args), "--json", filepath.Join(dir, "r.json"), "--csv", filepath.Join(dir, "r.csv"), "--html", filepath.Join(dir, "r.html"))
	r := mustRunCLI(t, a...)
	out := []string{r.stdout}
	for _, f := range []string{"r.json", "r.csv", "r.html"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func TestSweepSameBytesForAnyWorkers(t *testing.T) {
	one := studyOutputs(t, t.TempDir(), append(slices.Clone(sweepArgs), "-j", "1")...)
	eight := studyOutputs(t, t.TempDir(), append(slices.Clone(sweepArgs), "-j", "8")...)
	for i, name := range []string{"stdout", "--json", "--csv", "--html"} {
		if one[i] != eight[i] {
			t.Errorf("%s differs between -j 1 and -j 8", name)
		}
	}
	var doc struct {
		Points  []map[string]any `json:"points"`
		Configs []struct {
			Config         string  `json:"config"`
			SaturationRate float64 `json:"saturation_rate"`
			Words          string  `json:"words"`
		} `json:"configs"`
	}
	if err := json.Unmarshal([]byte(one[1]), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Points) != 8 || len(doc.Configs) != 2 {
		t.Fatalf("%d points and %d configs, want 8 and 2", len(doc.Points), len(doc.Configs))
	}
	for _, k := range []string{"config", "rate", "seed", "summary", "arrived_req_per_s", "achieved_req_per_s", "output_tokens_per_s",
		"tokens_per_s_per_user", "stable", "pass", "limiting_term", "slo"} {
		if _, ok := doc.Points[0][k]; !ok {
			t.Errorf("points[0] has no %q", k)
		}
	}
	if u := doc.Points[0]["tokens_per_s_per_user"].(map[string]any); u["mean"] == nil || u["p10"] == nil {
		t.Errorf("tokens_per_s_per_user: %v, want mean and p10", u)
	}
	for _, c := range doc.Configs {
		if !strings.HasPrefix(c.Words, c.Config+": ") || !strings.Contains(c.Words, "req/s") {
			t.Errorf("config %s: words %q", c.Config, c.Words)
		}
	}
	if !strings.Contains(one[0], doc.Configs[0].Words) {
		t.Errorf("the table does not state the saturation point:\n%s", one[0])
	}
	csvRows := strings.Split(strings.TrimSpace(one[2]), "\n")
	if len(csvRows) != 9 || !strings.HasPrefix(csvRows[0], "config,rate,seed,") {
		t.Errorf("CSV: %d rows, header %q; want 9 and config,rate,seed,...", len(csvRows), csvRows[0])
	}
	for _, id := range []string{"chart-sweep-ttft", "chart-sweep-itl", "chart-sweep-goodput", "chart-sweep-user", "chart-sweep-frontier"} {
		if !strings.Contains(one[3], `id="`+id+`"`) {
			t.Errorf("HTML has no chart %s", id)
		}
	}
}

// TestShardsMergeToTheOneMachineBytes runs a sweep and a capacity study
// in 3 shards (one twice, as a retried pod would) and merges them.
func TestShardsMergeToTheOneMachineBytes(t *testing.T) {
	capArgs := []string{"capacity", "--requests", "300", "--seeds", "2", "--gpu", "h100-sxm-80gb,h200-141gb,a100-80gb",
		"--slo", "stream-p99-itl:p99<=150ms"}
	for _, args := range [][]string{sweepArgs, capArgs} {
		t.Run(args[0], func(t *testing.T) {
			want := studyOutputs(t, t.TempDir(), args...)
			dir := t.TempDir()
			for k, i := range []string{"0", "1", "2", "1"} {
				r := mustRunCLI(t, append(slices.Clone(args), "--out", dir, "--shard-count", "3", "--shard-index", i)...)
				if r.stdout != "" {
					t.Errorf("shard %s wrote to stdout: %q", i, r.stdout)
				}
				if k == 3 && !strings.Contains(r.stderr, "0 of this shard's") {
					t.Errorf("shard 1 again: %q, want every unit skipped", r.stderr)
				}
			}
			got := studyOutputs(t, t.TempDir(), "merge", dir)
			for i, name := range []string{"stdout", "--json", "--csv", "--html"} {
				if got[i] != want[i] {
					t.Errorf("merge: %s differs from the one-machine run", name)
				}
			}
		})
	}
}

func TestMergeNamesMissingPoints(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("JOB_COMPLETION_INDEX", "1")
	mustRunCLI(t, append(slices.Clone(sweepArgs), "--out", dir, "--shard-count", "2")...)
	r := execCLI(t, "merge", dir)
	if r.code == 0 || !strings.Contains(r.stderr, "4 of 8 point(s) missing") || !strings.Contains(r.stderr, "max_num_batched_tokens=512 at 6 req/s, seed 1") {
		t.Errorf("merge of half the shards: exit %d, stderr %q; want the missing points named", r.code, r.stderr)
	}
	if r := execCLI(t, "merge", t.TempDir()); r.code == 0 || !strings.Contains(r.stderr, "no plan.json") {
		t.Errorf("merge of an empty directory: exit %d, %q", r.code, r.stderr)
	}
	if r := execCLI(t, append(slices.Clone(sweepArgs[:5]), "--rate", "6", "--out", dir, "--shard-index", "0")...); r.code == 0 || !strings.Contains(r.stderr, "another study") {
		t.Errorf("a second study into the same directory: exit %d, %q", r.code, r.stderr)
	}
}

func TestEmitK8sJobIsABatchV1IndexedJob(t *testing.T) {
	r := mustRunCLI(t, append(slices.Clone(sweepArgs), "--emit-k8s-job", "--shard-count", "4", "--out", "/results", "--k8s-image", "example.org/itlsim:1")...)
	docs := strings.Split(r.stdout, "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("%d YAML documents, want a claim and a Job:\n%s", len(docs), r.stdout)
	}
	var claim corev1.PersistentVolumeClaim
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &claim); err != nil {
		t.Fatalf("not a v1 PersistentVolumeClaim (strict): %v\n%s", err, docs[0])
	}
	if claim.Kind != "PersistentVolumeClaim" || claim.Name != "itlsim-results" || len(claim.Spec.AccessModes) != 1 ||
		claim.Spec.AccessModes[0] != corev1.ReadWriteMany || claim.Spec.Resources.Requests.Storage().String() != "1Gi" {
		t.Errorf("claim %+v: want itlsim-results, ReadWriteMany, 1Gi", claim)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil {
		t.Fatalf("not a batch/v1 Job (strict): %v\n%s", err, docs[1])
	}
	spec := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion ||
		spec.Completions == nil || *spec.Completions != 4 || spec.Parallelism == nil || *spec.Parallelism != 4 {
		t.Fatalf("job %+v: want an Indexed Job of 4 completions", job)
	}
	pod := spec.Template.Spec
	if pod.RestartPolicy != "Never" || len(pod.Containers) != 1 || len(pod.Volumes) != 1 || pod.Volumes[0].PersistentVolumeClaim == nil {
		t.Fatalf("pod spec %+v", pod)
	}
	c := pod.Containers[0]
	if pod.Volumes[0].PersistentVolumeClaim.ClaimName != claim.Name || c.Resources.Requests.Memory().String() != "1Gi" || c.Resources.Requests.Cpu().String() != "1" {
		t.Errorf("pod claims %q with requests %v; want the manifest's claim and the default requests", pod.Volumes[0].PersistentVolumeClaim.ClaimName, c.Resources.Requests)
	}
	if c.Image != "example.org/itlsim:1" || len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/results" {
		t.Errorf("container %+v", c)
	}
	// The pods run the same study: the command with its flags, the shard
	// count and --out, the index from JOB_COMPLETION_INDEX.
	cmd := append(slices.Clone(c.Command), c.Args...)
	if cmd[0] != "itlsim" || cmd[1] != "sweep" || !slices.Contains(cmd, "--shard-count=4") || !slices.Contains(cmd, "--out=/results") ||
		!slices.Contains(cmd, "--rate=6,14") || slices.ContainsFunc(cmd, func(s string) bool { return strings.HasPrefix(s, "--shard-index") || strings.HasPrefix(s, "--emit") }) {
		t.Errorf("pod command %q", cmd)
	}
	// Run one pod's command here: it must be a valid invocation.
	dir := t.TempDir()
	t.Setenv("JOB_COMPLETION_INDEX", "3")
	args := slices.Clone(cmd[1:])
	for i, a := range args {
		if a == "--out=/results" {
			args[i] = "--out=" + dir
		}
	}
	mustRunCLI(t, args...)
	if files, _ := filepath.Glob(filepath.Join(dir, "sweep-*.json")); len(files) != 2 {
		t.Errorf("pod 3 of 4 wrote %d point files, want 2 of the 8", len(files))
	}
	for _, bad := range [][]string{{"--emit-k8s-job", "--out", "/r"}, {"--emit-k8s-job", "--shard-count", "2"}, {"--emit-k8s-job", "--shard-count", "2", "--out", "rel"}} {
		if r := execCLI(t, append(slices.Clone(sweepArgs), bad...)...); r.code == 0 {
			t.Errorf("%v: exit 0", bad)
		}
	}
}

func TestCapacityAnswersFirst(t *testing.T) {
	dir := t.TempDir()
	out := studyOutputs(t, dir, "capacity", "--requests", "300", "--seeds", "3", "--gpu", "h100-sxm-80gb,h200-141gb",
		"--slo", "stream-p99-itl:p99<=150ms", "--gpu-price", "h200-141gb=3.5")
	first := strings.SplitN(out[0], "\n", 2)[0]
	if !strings.HasPrefix(first, "h100-sxm-80gb: ") || !strings.Contains(first, "req/s (95 % CI ") || !strings.Contains(first, " over 3 seeds, ") ||
		!strings.Contains(first, "limited by ") || !strings.Contains(first, "h200-141gb: ") ||
		!(strings.Contains(first, "than h100-sxm-80gb") || strings.Contains(first, "as dear as h100-sxm-80gb")) {
		t.Errorf("first line %q: want each configuration's rate, limiting term and relative cost", first)
	}
	var doc struct {
		Answer   string           `json:"answer"`
		Capacity []map[string]any `json:"capacity"`
		Points   []map[string]any `json:"points"`
	}
	if err := json.Unmarshal([]byte(out[1]), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Answer != first || len(doc.Capacity) != 2 || len(doc.Points) < 2*3*3 {
		t.Fatalf("answer %q, %d configurations, %d probes", doc.Answer, len(doc.Capacity), len(doc.Points))
	}
	for _, k := range []string{"config", "max_rate", "ci_low", "ci_high", "ci_method", "seeds", "probes", "min_rate", "per_seed", "limiting_term", "gpus", "tokens_per_s_per_gpu", "usd_per_million_tokens", "pareto", "pareto_itl"} {
		if _, ok := doc.Capacity[0][k]; !ok {
			t.Errorf("capacity[0] has no %q", k)
		}
	}
	if p := doc.Capacity[1]["usd_per_gpu_hour"]; p != 3.5 {
		t.Errorf("--gpu-price h200-141gb=3.5: price %v", p)
	}
	if n := len(doc.Capacity[0]["per_seed"].([]any)); n != 3 {
		t.Errorf("%d per-seed results, want 3", n)
	}
	// The CSV carries the interval and the sample beside max_rate, as the JSON does.
	rows, err := csv.NewReader(strings.NewReader(out[2])).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("CSV: %d rows, %v", len(rows), err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, k := range []string{"max_rate", "ci_low", "ci_high", "seeds", "probes"} {
		if _, ok := col[k]; !ok {
			t.Fatalf("CSV header %v has no %s", rows[0], k)
		}
	}
	for i, row := range rows[1:] {
		c := doc.Capacity[i]
		for _, k := range []string{"max_rate", "ci_low", "ci_high", "seeds", "probes"} {
			want := ""
			if v, ok := c[k].(float64); ok {
				want = strconv.FormatFloat(v, 'g', -1, 64)
			}
			if row[col[k]] != want {
				t.Errorf("CSV row %d %s = %q, the JSON's %v", i+1, k, row[col[k]], c[k])
			}
		}
	}
	for _, id := range []string{"chart-capacity", "chart-pareto-user", "chart-pareto-itl"} {
		if !strings.Contains(out[3], `id="`+id+`"`) {
			t.Errorf("HTML has no chart %s", id)
		}
	}
}

func TestCapacityTargetRate(t *testing.T) {
	r := mustRunCLI(t, "capacity", "--requests", "600", "--seeds", "1", "--target-rate", "30", "--slo", "stream-p99-itl:p99<=150ms",
		"--tp", "1,2", "--format", "json")
	var doc struct {
		Answer   string `json:"answer"`
		Capacity []struct {
			Config string `json:"config"`
			GPUs   int    `json:"gpus"`
			Target struct {
				Value int  `json:"value"`
				Holds bool `json:"holds"`
			} `json:"target"`
		} `json:"capacity"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.Answer, "Cheapest holding 30 req/s: ") {
		t.Errorf("answer %q", doc.Answer)
	}
	for _, c := range doc.Capacity {
		if !c.Target.Holds || c.Target.Value < 1 {
			t.Errorf("%s: target %+v", c.Config, c.Target)
		}
	}
}

func TestStudyBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep"}, "--rate: expected"},
		{[]string{"sweep", "--rate", "5:1:1"}, "below the first"},
		{[]string{"sweep", "--rate", "1,2", "--seed", "1,2"}, "seed is compared"},
		{[]string{"sweep", "--rate", "1", "-j", "-1"}, "-j: expected"},
		{[]string{"sweep", "--rate", "1", "--shard-count", "2"}, "need --out DIR"},
		{[]string{"sweep", "--rate", "1", "--out", "/nonexistent/dir"}, "--out /nonexistent/dir"},
		{[]string{"sweep", "--rate", "1", "--arrival", "closed", "--set", "workload.users=4"}, "closed"},
		{[]string{"capacity", "--slo", "ttft:q42<=1s"}, "statistic \"q42\""},
		{[]string{"capacity", "--slo", "latency<=1s"}, "unknown metric"},
		{[]string{"capacity", "--tolerance", "2"}, "--tolerance"},
		{[]string{"capacity", "--gpu-price", "h100"}, "NAME=USD"},
		{[]string{"capacity", "--target-rate", "10", "--target-field", "no.such"}, "--target-field"},
		{[]string{"capacity", "--warm-up", "0.95"}, "warm-up"},
		{[]string{"capacity", "--warm-up", "soon"}, "--warm-up: expected auto"},
		{[]string{"capacity", "--seeds", "many"}, "--seeds: expected auto or"},
		{[]string{"sweep", "--rate", "1", "--seeds", "auto"}, "--seeds: expected 1 to 1000"},
		{[]string{"capacity", "--seeds", "auto", "--precision", "0"}, "--precision"},
		{[]string{"capacity", "--seeds", "auto", "--max-seeds", "2"}, "--max-seeds"},
		{[]string{"capacity", "--max-extend", "3"}, "--max-extend"},
		{[]string{"capacity", "--seeds", "auto", "--target-rate", "10"}, "--seeds auto: with --target-rate"},
		{[]string{"merge"}, "accepts 1 arg"},
	} {
		r := execCLI(t, c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "panic") {
			t.Errorf("itlsim %s: exit %d, stderr %q; want an error containing %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
	}
}

func TestCapacitySameBytesForAnyWorkers(t *testing.T) {
	args := []string{"capacity", "--requests", "300", "--seeds", "2", "--slo", "stream-p99-itl:p99<=120ms", "--format", "json"}
	one := mustRunCLI(t, append(slices.Clone(args), "-j", "1")...)
	eight := mustRunCLI(t, append(slices.Clone(args), "-j", "8")...)
	if one.stdout != eight.stdout {
		t.Error("capacity JSON differs between -j 1 and -j 8")
	}
}

// TestCapacityNeverAnswersWhatItCouldNotJudge: 79 requests never show a
// backlog, so a target of 1e9 req/s must not hold on one replica; a start
// rate far above capacity brackets down to the rate that holds; when
// nothing holds the answer is n/a, not 0.
func TestCapacityNeverAnswersWhatItCouldNotJudge(t *testing.T) {
	r := mustRunCLI(t, "capacity", "--requests", "79", "--seeds", "1", "--target-rate", "1e9", "--target-max", "4")
	if first := strings.SplitN(r.stdout, "\n", 2)[0]; !strings.Contains(first, "does not hold 1000000000 req/s") {
		t.Errorf("--requests 79 --target-rate 1e9: %q; want it not to hold", first)
	}
	r = mustRunCLI(t, "capacity", "--requests", "400", "--seeds", "1", "--start-rate", "1e12", "--tolerance", "0.05", "--format", "json")
	var doc study.CapacityResult
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if c := doc.Capacity[0]; !(c.MaxRate > 5 && c.MaxRate < 40) {
		t.Errorf("--start-rate 1e12: max rate %g, want the 5-40 req/s one H100 holds (%s)", c.MaxRate, doc.Answer)
	}
	r = mustRunCLI(t, "capacity", "--requests", "10", "--seeds", "1")
	if !strings.Contains(r.stdout, "no rate holds") || !strings.Contains(r.stdout, "n/a") || strings.Contains(r.stdout, "│ 0.00") {
		t.Errorf("10 requests: %q; want no rate holds and n/a", r.stdout)
	}
	r = mustRunCLI(t, "capacity", "--requests", "10", "--seeds", "1", "--format", "json")
	if !strings.Contains(r.stdout, `"max_rate": null`) {
		t.Errorf("10 requests, JSON: want max_rate null")
	}
}

// TestCapacityDefaultsAgreeWithATenTimesLongerRun holds the default run
// length: capacity with its defaults on the default scenario answers
// within 5 % of a search whose probes are 10 times as long.
func TestCapacityDefaultsAgreeWithATenTimesLongerRun(t *testing.T) {
	if testing.Short() {
		t.Skip("about 30 s of simulation")
	}
	rate := func(args ...string) float64 {
		r := mustRunCLI(t, append([]string{"capacity", "--format", "json"}, args...)...)
		var doc study.CapacityResult
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Capacity[0].MaxRate
	}
	short, long := rate(), rate("--requests", "10000", "--max-extend", "1")
	if math.Abs(short-long) > 0.05*long {
		t.Errorf("capacity with defaults %g req/s, with 10x longer probes %g: want within 5 %%", short, long)
	}
}

// TestCapacityExamplesAgreeWithATenTimesLongerRun holds the run length on
// two documented examples: the first of `capacity --help` (1,000 requests
// per probe, extended up to 8×) against 10,000-request probes, and the
// first of docs/capacity.md (formerly the README's: 240 s of arrivals)
// against 2,400 s probes, both never extended; each within 5 %.
//
// About 20 s of CPU (48 s wall on the loaded 2-core machine): not skipped
// under -short.
func TestCapacityExamplesAgreeWithATenTimesLongerRun(t *testing.T) {
	rate := func(args ...string) float64 {
		r := mustRunCLI(t, append([]string{"capacity", "--format", "json"}, args...)...)
		var doc study.CapacityResult
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Capacity[0].MaxRate
	}
	for _, c := range []struct {
		name         string
		args, longer []string
	}{
		{"capacity --help", []string{"--slo", "stream-p99-itl:p99<=200ms", "--slo", "ttft:p99<=1s"}, []string{"--requests", "10000", "--max-extend", "1"}},
		{"docs/capacity.md", []string{"--duration", "240", "--slo", "stream-p99-itl:p99<=150ms", "--slo", "ttft:p99<=500ms"}, []string{"--duration", "2400", "--max-extend", "1"}},
	} {
		short := rate(c.args...)
		long := rate(append(slices.Clone(c.args), c.longer...)...)
		if math.Abs(short-long) > 0.05*long {
			t.Errorf("%s example: %g req/s, with 10x longer probes %g: want within 5 %%", c.name, short, long)
		}
	}
}
