package sim_test

import (
	"reflect"
	"testing"

	"github.com/itlsim/itlsim/sim"
)

// TestReusedHistogramsAreNewOnes: a run whose series and by-position
// histograms and request slots come from the spares of other, released
// runs (of other scenarios, clusters among them) has the result of a run
// that allocated them, and gives them back.
func TestReusedHistogramsAreNewOnes(t *testing.T) {
	var sp sim.Spares
	run := func(cfg sim.Config, spares *sim.Spares) (*sim.Engine, *sim.Result, *sim.Result) {
		e, err := sim.NewReusing(cfg, spares)
		if err != nil {
			t.Fatal(err)
		}
		res := e.Run()
		return e, res, e.ServerResult()
	}
	for seed := range uint64(8) {
		cfg, desc := randomScenario(seed + 9100)
		if seed%2 == 1 {
			cfg, desc = randomCluster(seed + 9100)
		}
		t.Run(desc, func(t *testing.T) {
			_, want, wantSrv := run(cfg, nil)
			before := sp.Len()
			e, got, gotSrv := run(cfg, &sp)
			sim.ForgetSpares(got)
			sim.ForgetSpares(gotSrv)
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotSrv, wantSrv) {
				t.Fatal("a run on reused histograms differs from one on new ones")
			}
			mid, slots := sp.Len(), sim.SpareRequests(&sp)
			if before > 0 && mid >= before {
				t.Errorf("the run took none of the %d spares", before)
			}
			e.Release()
			if sim.SpareRequests(&sp) <= slots {
				t.Errorf("Release gave back none of the run's request slots (%d spare)", slots)
			}
			if after := sp.Len(); after < before || after <= mid {
				t.Errorf("Release gave back %d of the histograms (%d spares before the run, %d during it)", after-mid, before, mid)
			}
		})
	}
}
