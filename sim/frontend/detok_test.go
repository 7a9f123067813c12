package frontend

import (
	"testing"

	"github.com/itlsim/itlsim/sim/cost"
)

// Pricing a step with the engine loop's detokenization allocates nothing
// (it runs once a step).
func TestEngineDetokenizationAllocatesNothing(t *testing.T) {
	lin, err := cost.NewLinear(cost.LinearConfig{C0US: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var m cost.Model = EngineDetokenization{M: lin, NS: 30e3}
	var b cost.Batch
	b.AddDecode(10)
	b.AddDecode(20)
	if got := m.StepNS(&b); got != 1000e3+60e3 {
		t.Errorf("StepNS %d, want 1,060,000", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = m.StepNS(&b) }); n != 0 {
		t.Errorf("StepNS allocates %v times", n)
	}
	var empty cost.Batch
	if got := m.StepNS(&empty); got != 0 {
		t.Errorf("an empty step costs %d", got)
	}
}
