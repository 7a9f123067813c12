package serve

import (
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/delivery"
)

// LiveDelivery takes the simulated delivery path out of cfg: the real
// network and client replace it, and only the server's own flush window
// stays, returned. dropped tells whether cfg simulated anything else
// (network, coalescing, smoothing, render, failover).
func LiveDelivery(cfg *sim.Config) (flush sim.Time, dropped bool) {
	flush = sim.FromMS(cfg.Delivery.Flush.WindowMS)
	rest := cfg.Delivery
	rest.Flush = delivery.Flush{}
	dropped = rest.Enabled()
	cfg.Delivery = delivery.DefaultConfig()
	return flush, dropped
}

// RunName names the served run in files: the scenario's name or "served".
func RunName(c sim.Config) string {
	if c.Name != "" {
		return c.Name
	}
	return "served"
}
