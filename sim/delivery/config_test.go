package delivery

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(c *Config)
		want string // "" = valid
	}{
		{"default", func(c *Config) {}, ""},
		{"every profile", func(c *Config) { c.Network.Profile = "flaky-wifi"; c.Coalescing.Preset = "nagle" }, ""},
		{"unknown profile", func(c *Config) { c.Network.Profile = "5g" }, `delivery.network.profile: unknown profile "5g"; valid: broadband, datacenter, flaky-wifi, mobile-4g`},
		{"unknown preset", func(c *Config) { c.Coalescing.Preset = "envoy" }, `delivery.coalescing.preset: unknown preset "envoy"; valid: nagle, proxy-buffer`},
		{"base", func(c *Config) { c.Network.BaseMS = -1 }, "delivery.network.base_ms: must be in [0, 60000] ms, got -1"},
		{"loss", func(c *Config) { c.Network.Loss = 0.7 }, "delivery.network.loss: must be a probability in [0, 0.5], got 0.7"},
		{"rto", func(c *Config) { c.Network.RTOMS = 0 }, "delivery.network.rto_ms: must be in [1, 60000] ms, got 0"},
		{"drops", func(c *Config) { c.Network.DropsPerS = 11 }, "delivery.network.drops_per_s: must be in [0, 10] drops per stream-second, got 11"},
		{"on_drop", func(c *Config) { c.Network.OnDrop = "retry" }, `delivery.network.on_drop: must be resume or fail, got "retry"`},
		{"mode", func(c *Config) { c.Coalescing.Mode = "tcp" }, `delivery.coalescing.mode: must be none, buffer or nagle, got "tcp"`},
		{"size", func(c *Config) { c.Coalescing.SizeBytes = -1 }, "delivery.coalescing.size_bytes: must be in [0, 1073741824] bytes, got -1"},
		{"flush_ms", func(c *Config) { c.Coalescing.FlushMS = 1e9 }, "delivery.coalescing.flush_ms: must be in [0, 60000] ms, got 1e+09"},
		{"frame", func(c *Config) { c.Render.FrameMS = -16.7 }, "delivery.render.frame_ms: must be 0 (off) or in [1, 1000] ms, got -16.7"},
		{"window", func(c *Config) { c.Flush.WindowMS = 20000 }, "delivery.flush.window_ms: must be 0 (off) or in [1, 10000] ms, got 20000"},
		{"cadence", func(c *Config) { c.Smoothing.CadenceMS = -33 }, "delivery.smoothing.cadence_ms: must be 0 (off) or in [1, 10000] ms, got -33"},
		// A sub-millisecond cadence would cost a tick per microsecond of
		// every stream (and below a nanosecond would round to off).
		{"tiny cadence", func(c *Config) { c.Smoothing.CadenceMS = 1e-6 }, "delivery.smoothing.cadence_ms: must be 0 (off) or in [1, 10000] ms, got 1e-06"},
		{"tiny frame", func(c *Config) { c.Render.FrameMS = 0.01 }, "delivery.render.frame_ms: must be 0 (off) or in [1, 1000] ms, got 0.01"},
		{"depth", func(c *Config) { c.Smoothing.CadenceMS = 33; c.Smoothing.DepthMS = 0 }, "delivery.smoothing.depth_ms: must be in (0, 60000] ms when smoothing is on, got 0"},
		{"depth unused", func(c *Config) { c.Smoothing.DepthMS = 0 }, ""},
		{"watchdog", func(c *Config) { c.Failover.WatchdogMS = -1 }, "delivery.failover.watchdog_ms: must be in [0, 3600000] ms, got -1"},
		{"backup model", func(c *Config) { c.Failover.WatchdogMS = 1500; c.Failover.Backup.Model = "gpt-5" }, `delivery.failover.backup.model: unknown model preset "gpt-5"`},
		{"backup gpu", func(c *Config) { c.Failover.WatchdogMS = 1500; c.Failover.Backup.GPU = "tpu" }, `delivery.failover.backup.gpu: unknown GPU preset "tpu"`},
		{"backup fit", func(c *Config) { c.Failover.WatchdogMS = 1500; c.Failover.Backup.Model = "llama-3.1-70b" }, "delivery.failover.backup: llama-3.1-70b needs 131.4 GiB of weights per GPU at tp=1"},
		{"backup tp split", func(c *Config) {
			c.Failover.WatchdogMS = 1500
			c.Failover.Backup.Model, c.Failover.Backup.TP = "llama-3.1-70b", 3
		}, "delivery.failover.backup: tensor_parallel: 3 does not divide"},
		{"backup budget", func(c *Config) { c.Failover.Backup.MaxNumBatchedTokens = 32 }, "delivery.failover.backup.max_num_batched_tokens: must be greater than backup.batch (32)"},
		{"NaN", func(c *Config) { c.Network.Loss = nan() }, "delivery.network.loss: must be a probability in [0, 0.5], got NaN"},
	} {
		cfg := DefaultConfig()
		c.set(&cfg)
		err := cfg.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q…", c.name, err, c.want)
		}
		if _, nerr := New(cfg); (nerr == nil) != (err == nil) {
			t.Errorf("%s: New and Validate disagree: %v, %v", c.name, nerr, err)
		}
	}
}

func nan() float64 { var z float64; return z / z }

// A profile fills the fields left at zero; given fields override it.
func TestProfileFill(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Network.Profile = "mobile-4g"
	cfg.Network.Loss = 0.05
	r, err := cfg.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	n := r.Network
	if n.BaseMS != 35 || n.Loss != 0.05 || n.JitterMS.String() != "lognormal:10,15,2000" || n.RTOMS != 200 || n.Profile != "mobile-4g" {
		t.Errorf("resolved %+v", n)
	}
	if !cfg.Enabled() || DefaultConfig().Enabled() {
		t.Error("Enabled: a profile turns the path on; the default is off")
	}
	for _, p := range Profiles() {
		c := DefaultConfig()
		c.Network.Profile = p.Name
		if err := c.Validate(); err != nil || p.Description == "" || p.Source == "" {
			t.Errorf("profile %s: %v", p.Name, err)
		}
	}
	for _, p := range CoalescingPresets() {
		c := DefaultConfig()
		c.Coalescing.Preset = p.Name
		if err := c.Validate(); err != nil || p.Description == "" || p.Source == "" || !c.Enabled() {
			t.Errorf("preset %s: %v", p.Name, err)
		}
	}
}

func TestCauseNames(t *testing.T) {
	var names []string
	for _, c := range Causes() {
		names = append(names, c.String())
	}
	if got := strings.Join(names, ","); got != "server,network,packet-loss,connection,smoothing-delay,failover" {
		t.Errorf("causes %s", got)
	}
}
