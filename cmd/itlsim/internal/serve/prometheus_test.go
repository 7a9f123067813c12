package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// A real Prometheus (Debian's package) scrapes serve's /metrics and finds
// every vLLM family a dashboard queries, with the counts serve reports.
// Skipped where prometheus is not installed, unless
// ITLSIM_REQUIRE_PROMETHEUS is set (CI installs it and sets it).
func TestRealPrometheusScrapes(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("ITLSIM_REQUIRE_PROMETHEUS") != "" {
			t.Fatal("ITLSIM_REQUIRE_PROMETHEUS is set but prometheus is not installed")
		}
		t.Skip("prometheus is not installed (Debian: apt-get install prometheus)")
	}
	_, base := start(t, nil, Options{TimeScale: 20})
	client := sdk(base)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const reqs = 4
	for range reqs {
		if _, err := client.Completions.New(ctx, openai.CompletionNewParams{
			Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("a b c d e f g h")},
			MaxTokens: openai.Int(20),
		}, option.WithJSONSet("ignore_eos", true)); err != nil {
			t.Fatal(err)
		}
	}
	target := strings.TrimPrefix(base, "http://")
	dir := t.TempDir()
	conf := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(
		"global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: itlsim\n    static_configs:\n      - targets: [%q]\n", target)), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	web := ln.Addr().String()
	ln.Close()
	cmd := exec.CommandContext(ctx, bin, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+web, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	query := func(q string) (map[string]float64, error) {
		resp, err := http.Get("http://" + web + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var r struct {
			Status string `json:"status"`
			Data   struct {
				Result []struct {
					Metric map[string]string `json:"metric"`
					Value  [2]any            `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
			return nil, fmt.Errorf("query %s: %v (status %q)", q, err, r.Status)
		}
		out := map[string]float64{}
		for _, s := range r.Data.Result {
			var v float64
			fmt.Sscan(fmt.Sprint(s.Value[1]), &v)
			out[s.Metric["__name__"]] = v
		}
		return out, nil
	}
	want := []string{metricRunning, metricWaiting, metricKVUsage, metricPrompt, metricGeneration, metricPreemptions,
		metricPCQueries, metricPCHits, metricSuccess}
	for _, h := range []string{metricTTFT, metricITL, metricTPOTOld, metricReqTPOT, metricE2E, metricQueue, metricPrefill,
		metricDecode, metricInference, metricIterTokens} {
		want = append(want, h+"_count", h+"_sum", h+"_bucket")
	}
	var got map[string]float64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		got, err = query(`{__name__=~"vllm:.*",job="itlsim"}`)
		if err == nil && len(got) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus scraped nothing from %s in 30 s (last error %v)", target, err)
		}
	}
	var missing []string
	for _, name := range want {
		if _, ok := got[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		names := make([]string, 0, len(got))
		for n := range got {
			names = append(names, n)
		}
		slices.Sort(names)
		t.Fatalf("prometheus lacks %v; it has %v", missing, names)
	}
	for _, name := range []string{metricQueue + "_count", metricE2E + "_count"} {
		v, err := query(name)
		if err != nil || v[name] != reqs {
			t.Errorf("%s = %v (%v), want %d", name, v[name], err, reqs)
		}
	}
}
