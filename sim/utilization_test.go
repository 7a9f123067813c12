package sim_test

import (
	"testing"

	"github.com/itlsim/itlsim/sim"
)

func runWork(t *testing.T, cfg sim.Config) sim.WorkStats {
	t.Helper()
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e.Run().Work
}

// On the default scenario MFU rises with load. MBU rises while the
// replica idles between steps, then falls once steps carry enough prompt
// tokens to be compute-bound; busy share is near 1 long before either.
func TestUtilizationRisesWithLoad(t *testing.T) {
	rates := []float64{0.5, 1, 2, 8, 30}
	var mfu, mbu, busy []float64
	for _, rate := range rates {
		cfg := sim.DefaultConfig()
		cfg.Workload.Rate = rate
		cfg.Workload.Requests = 400
		w := runWork(t, cfg)
		f, ok1 := w.MFU()
		b, ok2 := w.MBU()
		if !ok1 || !ok2 {
			t.Fatalf("rate %g: the roofline counted no work: %+v", rate, w)
		}
		if !(f > 0 && f <= 1 && b > 0 && b <= 1) {
			t.Fatalf("rate %g: MFU %g, MBU %g outside (0, 1]", rate, f, b)
		}
		mfu, mbu, busy = append(mfu, f), append(mbu, b), append(busy, w.BusyShare())
	}
	t.Logf("rates %v: MFU %.3f, MBU %.3f, busy %.3f", rates, mfu, mbu, busy)
	for i := 1; i < len(rates); i++ {
		if !(mfu[i] > mfu[i-1]) {
			t.Errorf("MFU %.4f at %g req/s does not exceed %.4f at %g", mfu[i], rates[i], mfu[i-1], rates[i-1])
		}
	}
	if !(mbu[0] < mbu[1] && mbu[1] < mbu[2]) {
		t.Errorf("MBU %.3f does not rise over %v", mbu[:3], rates[:3])
	}
	if !(mbu[4] < mbu[2]) {
		t.Errorf("MBU %.3f at %g req/s (compute-bound prefill) not below %.3f at %g", mbu[4], rates[4], mbu[2], rates[2])
	}
	if !(busy[3] > 0.99 && mfu[3] < 0.2) {
		t.Errorf("at %g req/s busy %.3f, MFU %.3f: want busy near 1 with MFU low", rates[3], busy[3], mfu[3])
	}
}

// The linear model knows step times, not operations: its steps' work is
// counted from the model spec (the roofline's shapes), so MFU and MBU are
// reported and equal the roofline's for the same steps' work per second.
func TestUtilizationLinearCountsFromSpec(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Cost.Model = "linear"
	cfg.Workload.Requests = 100
	w := runWork(t, cfg)
	mfu, ok := w.MFU()
	if !ok || !(mfu > 0 && mfu <= 1) {
		t.Errorf("linear model's MFU %g (ok %v): want in (0, 1]", mfu, ok)
	}
	mbu, ok := w.MBU()
	if !ok || !(mbu > 0 && mbu <= 1) {
		t.Errorf("linear model's MBU %g (ok %v): want in (0, 1]", mbu, ok)
	}
	if !(w.BusyShare() > 0) {
		t.Errorf("busy share %g", w.BusyShare())
	}
}
