package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"
)

// docs/proxies.md's sequence through the CLI: serve a two-replica cluster
// one port per replica, put haproxy and then nginx (docs/proxies.md's
// configurations, internal/serve/testdata/proxies) in front, round-robin,
// and record 8 streams through each. Every stream completes with its 40
// chunks apart (the median recorded gap is a decode step, not the ~0 of
// a batching proxy), and serve's table shows each port got half of them.
// Skipped where haproxy or nginx is not installed, unless
// ITLSIM_REQUIRE_PROXIES is set (CI installs both and sets it).
func TestRecordThroughHaproxyAndNginx(t *testing.T) {
	bins := map[string]string{}
	for _, name := range []string{"haproxy", "nginx"} {
		bin, err := exec.LookPath(name)
		if err != nil {
			if _, serr := os.Stat("/usr/sbin/" + name); serr == nil {
				bin, err = "/usr/sbin/"+name, nil
			}
		}
		if err != nil {
			if os.Getenv("ITLSIM_REQUIRE_PROXIES") != "" {
				t.Fatalf("ITLSIM_REQUIRE_PROXIES is set but %s is not installed", name)
			}
			t.Skipf("%s is not installed (Debian: apt-get install haproxy nginx)", name)
		}
		bins[name] = bin
	}
	w := []string{"--requests", "8", "--rate", "20", "--input-len", "fixed:16", "--output-len", "fixed:40", "--seed", "1"}
	s := startServe(t, append([]string{"--replicas", "2", "--time-scale", "0.4", "--exit-after", "16", "--format", "json"}, w...)...)
	var backends []string
	for _, p := range s.ports(t, 2) {
		backends = append(backends, strings.TrimPrefix(p, "http://"))
	}
	tmpl := func(name string) *template.Template {
		b, err := os.ReadFile(filepath.Join("internal", "serve", "testdata", "proxies", name))
		if err != nil {
			t.Fatal(err)
		}
		return template.Must(template.New(name).Option("missingkey=error").Parse(string(b)))
	}
	for _, proxy := range []string{"haproxy", "nginx"} {
		dir := t.TempDir()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listen := ln.Addr().String()
		ln.Close()
		var conf bytes.Buffer
		data := map[string]any{"Listen": listen, "Backends": backends, "Buffering": "off", "Extra": "", "Gzip": "off", "NoDelayOff": false}
		var cmd *exec.Cmd
		if proxy == "haproxy" {
			if err := tmpl("haproxy.cfg.tmpl").Execute(&conf, data); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "haproxy.cfg")
			writeFile(t, path, conf.String())
			cmd = exec.Command(bins[proxy], "-f", path, "-db")
		} else {
			conf.WriteString("pid nginx.pid;\nerror_log error.log warn;\nevents {}\nhttp {\n    access_log off;\n" +
				"    client_body_temp_path body;\n    proxy_temp_path proxy;\n    fastcgi_temp_path fastcgi;\n" +
				"    uwsgi_temp_path uwsgi;\n    scgi_temp_path scgi;\n")
			if err := tmpl("nginx-http.conf.tmpl").Execute(&conf, data); err != nil {
				t.Fatal(err)
			}
			conf.WriteString("}\n")
			path := filepath.Join(dir, "nginx.conf")
			writeFile(t, path, conf.String())
			cmd = exec.Command(bins[proxy], "-p", dir, "-c", path, "-g", "daemon off;")
		}
		logf, err := os.Create(filepath.Join(dir, "output.log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kill := func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			logf.Close()
		}
		t.Cleanup(kill) // a second Kill and Wait are harmless
		base := "http://" + listen
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			resp, err := http.Get(base + "/health")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				b, _ := os.ReadFile(logf.Name())
				t.Fatalf("%s never answered /health: %v\n%s", proxy, err, b)
			}
		}
		rec := filepath.Join(dir, "rec.jsonl")
		mustRunCLI(t, append([]string{"record", base, "--time-scale", "0.4", "-o", rec}, w...)...)
		kill()
		f, err := os.Open(rec)
		if err != nil {
			t.Fatal(err)
		}
		var gaps []float64
		n := 0
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l streamLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			if l.Outcome != "ok" || len(l.ChunkTimes) != 40 {
				t.Fatalf("%s: stream %d %s with %d chunks; want ok with 40", proxy, l.ID, l.Outcome, len(l.ChunkTimes))
			}
			for k := 1; k < len(l.ChunkTimes); k++ {
				gaps = append(gaps, 1e3*(l.ChunkTimes[k]-l.ChunkTimes[k-1]))
			}
			n++
		}
		f.Close()
		if n != 8 {
			t.Fatalf("%s: %d streams recorded, want 8", proxy, n)
		}
		slices.Sort(gaps)
		// A decode step of a few streams takes about 8 simulated ms; chunks
		// a proxy holds and sends together are recorded ~0 ms apart.
		if med := gaps[len(gaps)/2]; med < 4 {
			t.Errorf("%s: median recorded gap %.2f simulated ms; want a decode step (~8 ms), not a burst", proxy, med)
		} else {
			t.Logf("%s: median recorded gap %.2f simulated ms over %d gaps", proxy, med, len(gaps))
		}
	}
	if code := s.wait(t); code != 0 {
		t.Fatalf("serve exited %d: %s", code, s.stderr.String())
	}
	var doc struct {
		Runs []struct {
			Replicas []struct {
				Routed int `json:"routed"`
			} `json:"replicas"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(s.stdout.String()), &doc); err != nil || len(doc.Runs) != 1 || len(doc.Runs[0].Replicas) != 2 {
		t.Fatalf("serve's summary: %v\n%s", err, s.stdout.String())
	}
	for i, r := range doc.Runs[0].Replicas {
		if r.Routed != 8 {
			t.Errorf("replica %d's port got %d requests, want 8 (every other one through each proxy)", i, r.Routed)
		}
	}
}
