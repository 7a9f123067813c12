package cost_test

import (
	"fmt"

	"github.com/itlsim/itlsim/sim/cost"
)

// Price a decode-only step and the same step carrying a 512-token prefill
// chunk, as a chunked-prefill scheduler would plan it.
func ExampleRoofline() {
	m, _ := cost.LookupModel("llama-3.1-8b")
	g, _ := cost.LookupGPU("h100-sxm-80gb")
	model, err := cost.NewRoofline(m, g, 1, cost.DefaultRoofline())
	if err != nil {
		fmt.Println(err)
		return
	}

	var b cost.Batch
	for range 16 {
		b.AddDecode(1200)
	}
	fmt.Printf("%s\n", model.Name())
	fmt.Printf("16 decodes:             %5.2f ms\n", float64(model.StepNS(&b))/1e6)

	b.AddPrefill(1024, 512) // second chunk of a 1536-token prompt
	fmt.Printf("16 decodes + 512 chunk: %5.2f ms\n", float64(model.StepNS(&b))/1e6)

	d := b.DecodeOnly()
	fmt.Printf("without the chunk:      %5.2f ms\n", float64(model.StepNS(&d))/1e6)
	// Output:
	// roofline(llama-3.1-8b, h100-sxm-80gb, tp=1)
	// 16 decodes:              8.96 ms
	// 16 decodes + 512 chunk: 18.48 ms
	// without the chunk:       8.96 ms
}

// Size the KV cache of Llama 3.3 70B on eight A100-40GB the way vLLM does.
func ExampleKVBlocks() {
	m, _ := cost.LookupModel("llama-3.3-70b")
	g, _ := cost.LookupGPU("a100-40gb")
	reserve := cost.DefaultActivationReserve(m, 2048, 256, 8)
	blocks, err := cost.KVBlocks(m, g, 8, 16, 0.90, reserve)
	fmt.Println(blocks, err)

	_, err = cost.KVBlocks(m, g, 1, 16, 0.90, reserve)
	fmt.Println(err)
	// Output:
	// 27626 <nil>
	// llama-3.3-70b needs 131.4 GiB of weights per GPU at tp=1, a100-40gb has 36.0 GiB usable at gpu_memory_utilization 0.90
}
