package html_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	nethtml "golang.org/x/net/html"

	"github.com/itlsim/itlsim/reports"
	reporthtml "github.com/itlsim/itlsim/reports/html"
	"github.com/itlsim/itlsim/sim"
)

type htmlNode = nethtml.Node

// hostile is a run name that would inject markup if any context failed to
// escape it.
const hostile = `</script><h1 id="injected">x</h1><script>window.injected=1</script>`

var (
	simOnce sync.Once
	simRuns []reports.Run
	simErr  error
)

// simulated returns two small runs of a KV-pressure scenario (so there are
// preemptions, stalls and several causes to draw): chunked prefill and
// prefill-first, the second with a hostile name and model.
func simulated(t testing.TB) []reports.Run {
	t.Helper()
	simOnce.Do(func() {
		for i, policy := range []string{"chunked", "prefill-first"} {
			cfg := sim.DefaultConfig()
			cfg.Seed = 3
			cfg.KVCache.NumGPUBlocks = 1500
			cfg.Workload.Rate = 20
			cfg.Workload.Requests = 150
			cfg.Cost.HiccupRatePerS = 0.2
			cfg.Scheduler.Policy = policy
			e, err := sim.New(cfg)
			if err != nil {
				simErr = err
				return
			}
			res := e.Run()
			name := policy
			if i == 1 {
				name = hostile
			}
			simRuns = append(simRuns, reports.NewRun(name, map[string]string{"scheduler.policy": policy}, e.Setup().Config, res))
		}
	})
	if simErr != nil {
		t.Fatal(simErr)
	}
	return cloneRuns(simRuns)
}

func cloneRuns(runs []reports.Run) []reports.Run {
	out := make([]reports.Run, len(runs))
	copy(out, runs)
	return out
}

func render(t testing.TB, runs []reports.Run, o reporthtml.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := reporthtml.Write(&buf, runs, o); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

func parse(t testing.TB, page []byte) *nethtml.Node {
	t.Helper()
	doc, err := nethtml.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc
}

// walk calls f on every element node under n, in document order.
func walk(n *nethtml.Node, f func(*nethtml.Node)) {
	if n.Type == nethtml.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *nethtml.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *nethtml.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

func text(n *nethtml.Node) string {
	var b strings.Builder
	var rec func(*nethtml.Node)
	rec = func(n *nethtml.Node) {
		if n.Type == nethtml.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}

// chartIDs lists the ids of the page's chart containers.
func chartIDs(doc *nethtml.Node) []string {
	var ids []string
	walk(doc, func(n *nethtml.Node) {
		if n.Data == "div" && hasClass(n, "chart") {
			ids = append(ids, attr(n, "id"))
		}
	})
	return ids
}
