package cost

import (
	"fmt"
	"strings"
)

// QuantizationBits maps a quantization name to bits per weight (0: the
// checkpoint's).
func QuantizationBits(q string) (int, error) {
	switch strings.ToLower(q) {
	case "", "auto", "none":
		return 0, nil
	case "fp8":
		return 8, nil
	case "int4", "awq", "gptq", "mxfp4", "nvfp4":
		return 4, nil
	}
	return 0, fmt.Errorf("quantization: %q is not one of fp8, mxfp4, nvfp4, int4, awq, gptq (or empty for the checkpoint's)", q)
}

// KVElementBytes maps a KV cache dtype name to bytes per element (0: auto).
func KVElementBytes(d string) (int, error) {
	switch strings.ToLower(d) {
	case "", "auto":
		return 0, nil
	case "fp8", "fp8_e4m3", "fp8_e5m2":
		return 1, nil
	}
	return 0, fmt.Errorf("kv_cache_dtype: %q is not auto or fp8 (fp8_e4m3, fp8_e5m2)", d)
}

// Quantize applies a quantization and a KV cache dtype (sim.Config's
// Quantization and KVCacheDType, validated already) to m.
func Quantize(m ModelSpec, quantization, kvCacheDType string) ModelSpec {
	if bits, _ := QuantizationBits(quantization); bits > 0 {
		m.WeightBits, m.ExpertWeightBits = bits, 0
		q := strings.ToLower(quantization)
		m.WeightFP4 = q == "mxfp4" || q == "nvfp4"
		m.DTypeBytes = max(m.DTypeBytes, 2)
	}
	if b, _ := KVElementBytes(kvCacheDType); b > 0 {
		m.KVDTypeBytes = b
	}
	return m
}
