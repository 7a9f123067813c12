package cost

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// A ctScheme is what one compressed-tensors config group stores its
// weights as, in the terms the cost model prices: bits per weight (0:
// left at the checkpoint's dtype) and whether 4-bit weights are an FP4
// block format whose GEMMs run with FP4 inputs (W4A4).
type ctScheme struct {
	bits int
	fp4  bool
}

// The module classes a compressed-tensors target or ignore entry may name.
// The cost model stores routed experts (ExpertWeightBits) apart from the
// other weights (WeightBits); attention projections and the non-routed
// MLPs (dense layers', shared experts) share WeightBits.
const (
	ctAll       = "all"       // the class name "Linear": every linear layer
	ctAttention = "attention" // q/k/v/o projections, MLA's
	ctMLP       = "mlp"       // dense MLPs and shared experts
	ctExperts   = "experts"   // routed experts
	ctOther     = "other"     // lm_head, embeddings, router gates, vision tower, projector
)

// Activation-quantizing formats, as vLLM's is_activation_quantization_format
// (vllm/model_executor/layers/quantization/compressed_tensors/utils.py):
// only these carry input_activations into a W8A8 or W4A4 scheme.
var ctActivationFormats = map[string]bool{
	"naive-quantized": true, "int-quantized": true, "float-quantized": true, "nvfp4-pack-quantized": true,
}

// ctFormats is every format value read; "mixed-precision" says each group
// carries its own format.
var ctFormats = map[string]bool{
	"naive-quantized": true, "int-quantized": true, "float-quantized": true, "nvfp4-pack-quantized": true,
	"pack-quantized": true, "mixed-precision": true,
}

var ctLayerIndex = regexp.MustCompile(`layers\.(\d+)\.`)

// compressedTensors reads a quant_method "compressed-tensors" config (what
// llm-compressor writes) into bits per non-routed weight, per routed-expert
// weight and the FP4 flag, mapping each config group's weights and
// input_activations onto a scheme as vLLM's CompressedTensorsConfig.
// _get_scheme_from_parts does
// (vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py):
//
//   - float 8-bit weights (strategy tensor, channel or block) with float
//     8-bit input_activations in an activation format: _is_fp8_w8a8, the
//     CompressedTensorsW8A8Fp8 scheme: 8 bits, priced as fp8 (W8A8 at the
//     fp8 peak where the GPU has one, as vLLM falls back to W8A16 without).
//   - int 4-bit weights (strategy group or channel), no input_activations,
//     format pack-quantized: _is_wNa16_group_channel, CompressedTensorsWNA16:
//     4 bits at the bf16 peak (W4A16), as AWQ/GPTQ.
//   - float 4-bit weights, strategy tensor_group, group_size 16 (NVFP4)
//     with the same 4-bit float input_activations in an activation format:
//     _is_fp4a4_nvfp4, CompressedTensorsW4A4Fp4: 4 bits at the fp4 peak
//     where the GPU has one (vLLM runs CompressedTensorsW4A16Fp4 without).
//   - the same NVFP4 weights without input_activations: _is_fp4a16_nvfp4,
//     CompressedTensorsW4A16Fp4: 4 bits at the bf16 peak.
//
// Every other scheme (int8 W8A8, fp8 W8A16, W4A8, 2/3/8-bit integer
// weights, 2:4 sparsity) is an error naming the field.
//
// Targets and ignore entries are classed by module name (see ctClass):
// a group targeting "Linear" covers every class, one naming routed experts
// (e.g. "re:.*mlp.experts.*") only those, and a group naming a class
// outranks "Linear" for it (vLLM's find_matched_target prefers a layer
// name or regex to a class name). An ignore entry leaves its class
// unquantized when it names no layer or names more than half of the
// layers; llm-compressor recipes that keep a few layers in bf16 still
// count as quantized. lm_head, embeddings, router gates and the vision
// tower do not change the result. The non-routed weights take the scheme
// of the non-routed MLPs when the model has any (dense layers or shared
// experts) and of the attention projections otherwise; where the two
// differ (Llama 4 Scout FP8-dynamic leaves attention in bf16) the
// attention projections are counted at the MLPs' bits. kv_cache_scheme is
// not read: the KV cache dtype is --kv-cache-dtype's.
func (p *hfParser) compressedTensors(qc map[string]any, m *ModelSpec) (weight, expert int, fp4 bool) {
	const field = "quantization_config"
	if v, ok := qc["sparsity_config"]; ok && v != nil {
		if sc, isMap := v.(map[string]any); !isMap || len(sc) > 0 {
			p.fail(field+".sparsity_config", "sparse compressed-tensors checkpoints are not supported")
			return 0, 0, false
		}
	}
	format := ""
	if v, ok := qc["format"]; ok && v != nil {
		s, isStr := v.(string)
		if !isStr || !ctFormats[s] {
			p.fail(field+".format", fmt.Sprintf("%v is not supported (%s)", v, ctFormatList()))
			return 0, 0, false
		}
		format = s
	}
	groups, ok := qc["config_groups"].(map[string]any)
	if !ok || len(groups) == 0 {
		p.fail(field+".config_groups", "missing or not a non-empty object")
		return 0, 0, false
	}
	names := make([]string, 0, len(groups))
	for name := range groups {
		names = append(names, name)
	}
	sort.Strings(names)

	// The scheme of each class: one targeting "Linear" and one naming the
	// class more narrowly.
	type pick struct {
		s     ctScheme
		group string
		set   bool
	}
	var broad pick
	narrow := map[string]pick{}
	for _, name := range names {
		gf := field + ".config_groups." + name
		g, ok := groups[name].(map[string]any)
		if !ok {
			p.fail(gf, "not an object")
			return 0, 0, false
		}
		s, ok := p.ctGroupScheme(gf, g, format)
		if !ok {
			return 0, 0, false
		}
		targets, ok := g["targets"].([]any)
		if !ok || len(targets) == 0 {
			p.fail(gf+".targets", "missing or not a non-empty list")
			return 0, 0, false
		}
		for i, t := range targets {
			ts, isStr := t.(string)
			class := ""
			if isStr {
				class = ctClass(ts)
			}
			if class == "" {
				p.fail(fmt.Sprintf("%s.targets[%d]", gf, i), fmt.Sprintf("%v is not a module class itlsim can place (Linear, or a name or re: regex of attention, mlp, experts, lm_head, router gate or vision modules)", t))
				return 0, 0, false
			}
			var prev pick
			if class == ctAll {
				prev = broad
			} else {
				prev = narrow[class]
			}
			if prev.set && prev.s != s {
				p.fail(gf+".targets", fmt.Sprintf("%q is also targeted by %s with another scheme", ts, prev.group))
				return 0, 0, false
			}
			if class == ctAll {
				broad = pick{s, name, true}
			} else {
				narrow[class] = pick{s, name, true}
			}
		}
	}
	scheme := func(class string) ctScheme {
		if n, ok := narrow[class]; ok {
			return n.s
		}
		return broad.s
	}
	attn, mlp, experts := scheme(ctAttention), scheme(ctMLP), scheme(ctExperts)

	ignored, ok := p.ctIgnored(qc, m.Layers)
	if !ok {
		return 0, 0, false
	}
	if ignored[ctAttention] {
		attn = ctScheme{}
	}
	if ignored[ctMLP] {
		mlp = ctScheme{}
	}
	if ignored[ctExperts] {
		experts = ctScheme{}
	}

	rest := attn
	if !m.IsMoE() || m.DenseLayers > 0 || m.SharedExperts > 0 {
		rest = mlp
	}
	if !m.IsMoE() {
		experts = rest
	}
	if rest.bits == 4 && experts.bits == 4 && rest.fp4 != experts.fp4 {
		p.fail(field+".config_groups", "FP4 routed experts with integer 4-bit other weights (or the reverse) are not supported")
		return 0, 0, false
	}
	if rest.bits == 0 && experts.bits == 0 {
		p.fail(field+".config_groups", "quantizes none of the language model's linear layers (check targets and ignore)")
		return 0, 0, false
	}
	weight = rest.bits
	switch {
	case experts.bits == rest.bits:
	case experts.bits == 0:
		expert = 8 * m.DTypeBytes // the experts are left at the checkpoint's dtype
	default:
		expert = experts.bits
	}
	return weight, expert, rest.fp4 || experts.fp4
}

// ctGroupScheme maps one config group (at field gf) onto a scheme; format
// is the top-level format, which a group's own "format" overrides.
func (p *hfParser) ctGroupScheme(gf string, g map[string]any, format string) (ctScheme, bool) {
	if v, ok := g["format"]; ok && v != nil {
		s, isStr := v.(string)
		if !isStr || !ctFormats[s] || s == "mixed-precision" {
			p.fail(gf+".format", fmt.Sprintf("%v is not supported (%s)", v, ctFormatList()))
			return ctScheme{}, false
		}
		format = s
	}
	w, ok := p.ctArgs(gf+".weights", g["weights"], true)
	if !ok {
		return ctScheme{}, false
	}
	a, ok := p.ctArgs(gf+".input_activations", g["input_activations"], false)
	if !ok {
		return ctScheme{}, false
	}
	const supported = "read are fp8 W8A8 (8-bit float weights and input_activations), int4 W4A16 (4-bit int weights, group or channel, pack-quantized, no input_activations) and NVFP4 W4A4 or W4A16 (4-bit float weights, tensor_group, group_size 16)"
	fail := func(f, why string) (ctScheme, bool) {
		p.fail(f, why+"; "+supported)
		return ctScheme{}, false
	}
	if w.dynamic {
		return fail(gf+".weights.dynamic", "dynamically quantized weights are not supported")
	}
	actFormat := ctActivationFormats[format]
	switch {
	case w.typ == "float" && w.bits == 8:
		if !a.set {
			return fail(gf+".input_activations", "fp8 weights without input_activations (W8A16) are not supported")
		}
		if a.typ != "float" || a.bits != 8 {
			return fail(gf+".input_activations", fmt.Sprintf("%d-bit %s activations with fp8 weights are not supported", a.bits, a.typ))
		}
		if w.strategy != "tensor" && w.strategy != "channel" && w.strategy != "block" {
			return fail(gf+".weights.strategy", fmt.Sprintf("%q is not supported for fp8 weights (tensor, channel or block)", w.strategy))
		}
		if !actFormat {
			return fail(gf+".format", fmt.Sprintf("%q does not quantize activations, so vLLM finds no fp8 W8A8 scheme", format))
		}
		return ctScheme{bits: 8}, true
	case w.typ == "int" && w.bits == 4:
		if a.set {
			return fail(gf+".input_activations", fmt.Sprintf("%d-bit %s activations with int4 weights (W4A8) are not supported", a.bits, a.typ))
		}
		if w.strategy != "group" && w.strategy != "channel" {
			return fail(gf+".weights.strategy", fmt.Sprintf("%q is not supported for int4 weights (group or channel)", w.strategy))
		}
		if format != "pack-quantized" {
			return fail(gf+".format", fmt.Sprintf("%q is not supported for int4 weights (pack-quantized)", format))
		}
		return ctScheme{bits: 4}, true
	case w.typ == "float" && w.bits == 4:
		if w.strategy != "tensor_group" || w.groupSize != 16 {
			return fail(gf+".weights", fmt.Sprintf("4-bit float weights with strategy %q and group_size %d are not NVFP4 (tensor_group, 16)", w.strategy, w.groupSize))
		}
		if !a.set {
			return ctScheme{bits: 4}, true // W4A16 FP4 (Marlin): the bf16 peak
		}
		if a.typ != "float" || a.bits != 4 || a.strategy != "tensor_group" || a.groupSize != 16 {
			return fail(gf+".input_activations", fmt.Sprintf("%d-bit %s activations (strategy %q, group_size %d) with NVFP4 weights are not supported", a.bits, a.typ, a.strategy, a.groupSize))
		}
		if !actFormat {
			return fail(gf+".format", fmt.Sprintf("%q does not quantize activations, so vLLM finds no NVFP4 W4A4 scheme", format))
		}
		return ctScheme{bits: 4, fp4: true}, true
	}
	return fail(gf+".weights.num_bits", fmt.Sprintf("%d-bit %s weights are not supported", w.bits, w.typ))
}

// ctQuantArgs is the part of compressed-tensors' QuantizationArgs read.
type ctQuantArgs struct {
	set       bool
	bits      int
	typ       string // "int" or "float"
	strategy  string
	groupSize int // 0: null
	dynamic   bool
}

// ctArgs reads a QuantizationArgs object at field f; null or absent is
// allowed unless required.
func (p *hfParser) ctArgs(f string, v any, required bool) (ctQuantArgs, bool) {
	if v == nil {
		if required {
			p.fail(f, "missing")
			return ctQuantArgs{}, false
		}
		return ctQuantArgs{}, true
	}
	o, ok := v.(map[string]any)
	if !ok {
		p.fail(f, "not an object")
		return ctQuantArgs{}, false
	}
	a := ctQuantArgs{set: true}
	n, ok := o["num_bits"].(json.Number)
	bits, err := n.Int64()
	if !ok || err != nil || bits < 1 || bits > 64 {
		p.fail(f+".num_bits", fmt.Sprintf("%v is not an integer in [1,64]", o["num_bits"]))
		return ctQuantArgs{}, false
	}
	a.bits = int(bits)
	a.typ = "int" // QuantizationArgs' default
	if t, ok := o["type"]; ok && t != nil {
		s, isStr := t.(string)
		if !isStr || (s != "int" && s != "float") {
			p.fail(f+".type", fmt.Sprintf("%v is not int or float", t))
			return ctQuantArgs{}, false
		}
		a.typ = s
	}
	if s, ok := o["strategy"]; ok && s != nil {
		str, isStr := s.(string)
		if !isStr {
			p.fail(f+".strategy", "not a string")
			return ctQuantArgs{}, false
		}
		a.strategy = str
	}
	if gs, ok := o["group_size"]; ok && gs != nil {
		n, isNum := gs.(json.Number)
		size, err := n.Int64()
		if !isNum || err != nil || size < 1 || size > maxDim {
			p.fail(f+".group_size", fmt.Sprintf("%v is not a positive integer up to %d", gs, maxDim))
			return ctQuantArgs{}, false
		}
		a.groupSize = int(size)
	}
	if d, ok := o["dynamic"]; ok && d != nil {
		switch d := d.(type) {
		case bool:
			a.dynamic = d
		case string: // "local" (NVFP4 activations' global scale)
			a.dynamic = true
		default:
			p.fail(f+".dynamic", "not true, false or a string")
			return ctQuantArgs{}, false
		}
	}
	return a, true
}

// ctIgnored reads quantization_config.ignore into the classes it leaves
// unquantized: a class named without a layer index, or in more than half
// of the layers.
func (p *hfParser) ctIgnored(qc map[string]any, layers int) (map[string]bool, bool) {
	const f = "quantization_config.ignore"
	out := map[string]bool{}
	v, ok := qc["ignore"]
	if !ok || v == nil {
		return out, true
	}
	list, ok := v.([]any)
	if !ok {
		p.fail(f, "not a list of module names")
		return nil, false
	}
	perLayer := map[string]map[string]bool{}
	for i, e := range list {
		s, isStr := e.(string)
		class := ""
		if isStr {
			class = ctClass(s)
		}
		if class == "" || class == ctAll {
			p.fail(fmt.Sprintf("%s[%d]", f, i), fmt.Sprintf("%v is not a module itlsim can place (a name or re: regex of attention, mlp, experts, lm_head, router gate or vision modules)", e))
			return nil, false
		}
		if class == ctOther {
			continue
		}
		idx := ctLayerIndex.FindStringSubmatch(s)
		if idx == nil {
			out[class] = true
			continue
		}
		if perLayer[class] == nil {
			perLayer[class] = map[string]bool{}
		}
		perLayer[class][idx[1]] = true
	}
	for class, set := range perLayer {
		if 2*len(set) > layers {
			out[class] = true
		}
	}
	return out, true
}

// ctClass classes a compressed-tensors target or ignore entry (a module
// class name, a module name, or "re:" and a regex over module names) by
// the names Hugging Face models give their modules; "" if none fits.
func ctClass(s string) string {
	if s == "Linear" {
		return ctAll
	}
	name := strings.ToLower(strings.TrimPrefix(s, "re:"))
	last := name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		last = name[i+1:]
	}
	last = strings.TrimFunc(last, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	})
	has := func(subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(name, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case has("vision", "visual", "multi_modal_projector", "mm_projector", "audio"):
		return ctOther
	case has("lm_head", "embed"):
		return ctOther
	case last == "gate" || last == "router" || last == "shared_expert_gate":
		return ctOther
	case has("shared_expert"):
		return ctMLP
	case has("expert"):
		return ctExperts
	case has("attn", "attention") || ctAttentionProj[last]:
		return ctAttention
	case has("mlp", "feed_forward") || ctMLPProj[last]:
		return ctMLP
	}
	return ""
}

var ctAttentionProj = map[string]bool{
	"q_proj": true, "k_proj": true, "v_proj": true, "o_proj": true, "qkv_proj": true,
	"q_a_proj": true, "q_b_proj": true, "kv_a_proj_with_mqa": true, "kv_b_proj": true,
}

var ctMLPProj = map[string]bool{
	"gate_proj": true, "up_proj": true, "down_proj": true, "gate_up_proj": true,
}

func ctFormatList() string {
	list := make([]string, 0, len(ctFormats))
	for f := range ctFormats {
		list = append(list, f)
	}
	sort.Strings(list)
	return strings.Join(list, ", ")
}
