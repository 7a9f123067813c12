package sim

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/sim/delivery"
	"github.com/itlsim/itlsim/sim/frontend"
	"github.com/itlsim/itlsim/sim/metrics"
	"github.com/itlsim/itlsim/specdecode"
	"github.com/itlsim/itlsim/workloads"
)

// Config is a whole scenario: what is served, on what, how it is scheduled,
// the traffic, and how results are measured. A scenario YAML file maps onto
// it field by field (see package scenario); zero values mean "the default".
type Config struct {
	// Name labels the run in tables and JSON. Default: derived from the variant.
	Name string `yaml:"name" json:"name"`
	// Seed seeds every random stream of the run. Default 1.
	Seed uint64 `yaml:"seed" json:"seed"`
	// MaxMemoryBytes caps the engine's estimated memory (MemoryEstimate):
	// an engine over it is refused before it allocates. 0 means
	// DefaultMaxMemory. Set by --max-memory; not part of a scenario.
	MaxMemoryBytes int64 `yaml:"-" json:"-"`
	// Model is a preset name (see `itlsim presets`) or the path of a Hugging
	// Face config.json. Default llama-3.1-8b.
	Model string `yaml:"model" json:"model"`
	// GPU is a GPU preset name. Default h100-sxm-80gb.
	GPU string `yaml:"gpu" json:"gpu"`
	// TP is the tensor-parallel degree: GPUs per replica. Default 1.
	TP int `yaml:"tp" json:"tp"`
	// DP is the data-parallel attention degree of a MoE model (vLLM
	// --data-parallel-size): DP ranks of TP GPUs each, each with its own
	// batch, token budget, max_num_seqs and KV cache, sharing the experts
	// and stepping in lockstep. 0 or 1: none. A dense model's DP ranks are
	// independent replicas: give them as cluster.replicas.
	DP int `yaml:"dp,omitempty" json:"dp,omitempty"`
	// EnableExpertParallel places whole routed experts on the TP×DP GPUs
	// (vLLM --enable-expert-parallel) instead of splitting each over them.
	EnableExpertParallel bool `yaml:"enable_expert_parallel,omitempty" json:"enable_expert_parallel,omitempty"`
	// MaxModelLen is the context limit in tokens (vLLM --max-model-len);
	// 0 takes the model's. A request whose prompt + output exceeds it is rejected.
	MaxModelLen int `yaml:"max_model_len" json:"max_model_len"`
	// Quantization overrides the weights' format (vLLM --quantization):
	// "" keeps the checkpoint's (its quantization_config), fp8 stores
	// weights in 8 bits (run at the GPU's fp8 peak where it has one), int4
	// (or awq, gptq) in 4 bits at the bf16 peak, mxfp4 and nvfp4 in 4 bits
	// at the fp4 peak where the GPU has one (Blackwell, MI355X).
	Quantization string `yaml:"quantization,omitempty" json:"quantization,omitempty"`
	// KVCacheDType is the KV cache's element type (vLLM --kv-cache-dtype):
	// auto ("": the model's activation dtype) or fp8 (also fp8_e4m3,
	// fp8_e5m2), one byte per element, which doubles the blocks.
	KVCacheDType string `yaml:"kv_cache_dtype,omitempty" json:"kv_cache_dtype,omitempty"`

	Cost      CostConfig       `yaml:"cost" json:"cost"`
	Scheduler scheduler.Config `yaml:"scheduler" json:"scheduler"`
	KVCache   kvcache.Config   `yaml:"kvcache" json:"kvcache"`
	Workload  workloads.Config `yaml:"workload" json:"workload"`
	// SpecDecode configures speculative decoding; off by default.
	SpecDecode specdecode.Config `yaml:"spec_decode" json:"spec_decode"`
	// Delivery models the path from server to client and the client-side
	// mitigations; off by default (the client sees what the server emits).
	Delivery delivery.Config `yaml:"delivery" json:"delivery"`
	// Server models the front end before the scheduler; by default its
	// serial tokenization only (DefaultServer).
	Server  ServerConfig  `yaml:"server" json:"server"`
	Metrics MetricsConfig `yaml:"metrics" json:"metrics"`
	// Cluster puts several replicas of the configuration above (or pools
	// of other ones) behind a router; one replica by default.
	Cluster ClusterConfig `yaml:"cluster" json:"cluster"`

	// Files is where a Model (or draft model) given as the path of a
	// Hugging Face config.json is read from; the engine opens no files, so
	// the caller supplies it (cmd/itlsim reads the host's files). Nil: only
	// presets resolve.
	Files fs.FS `yaml:"-" json:"-"`

	// Reference runs the engine's straightforward step instead of its
	// specialised one: every gap accumulates its split and is recorded as
	// it closes, every entry goes through the general case and the
	// scheduler plans every decode through scheduleRunning. The results
	// are byte-identical; tests set it to hold the two equal (see
	// docs/architecture.md). Not part of a scenario, and no flag sets it.
	Reference bool `yaml:"-" json:"-"`
}

// CostConfig is the scenario's cost section: the step cost model and the
// server-side jitter sources (cost.Settings).
type CostConfig = cost.Settings

// DefaultConfig is the built-in scenario: Llama-3.1-8B on one H100-SXM-80GB
// under vLLM-v1-style chunked prefill, serving a chat workload with Poisson
// arrivals at about 80 % of that setup's capacity (DefaultRate).
func DefaultConfig() Config {
	w := workloads.DefaultConfig()
	w.Rate = DefaultRate
	return Config{
		Seed:       1,
		Model:      "llama-3.1-8b",
		GPU:        "h100-sxm-80gb",
		TP:         1,
		Cost:       CostConfig{Model: "roofline", Roofline: cost.DefaultRoofline(), HiccupMS: 500, StepTimeScale: 1, EnforceEager: true},
		Scheduler:  scheduler.DefaultConfig(),
		KVCache:    kvcache.DefaultConfig(),
		Workload:   w,
		SpecDecode: specdecode.DefaultConfig(),
		Delivery:   delivery.DefaultConfig(),
		Server:     DefaultServer(),
		Cluster:    DefaultCluster(),
		Metrics: MetricsConfig{
			StallThresholdMS:    250,
			ITLGoodputMS:        400,
			UnstableJitter:      5,
			SLO:                 SLO{TTFTMS: 2000, TPOTMS: 100},
			Percentiles:         Percentiles{50, 90, 95, 99},
			QoE:                 DefaultQoE(),
			TimeseriesIntervalS: 1,
			WorstStreams:        10,
		},
	}
}

// DefaultLinear returns linear coefficients that approximate the default
// roofline for Llama-3.1-8B on one H100-SXM-80GB: c0 the per-step fixed
// cost plus reading 16 GB of weights at 85 % of 3.35 TB/s; c1 2·8e9 FLOPs per
// prefill token at 70 % of 989 TFLOP/s; c3 131 kB of KV per context token
// read at 85 % of the bandwidth; c4 the attention FLOPs per token pair. They
// are a starting point: fit them to your own deployment's step times.
func DefaultLinear() cost.LinearConfig {
	return cost.LinearConfig{
		C0US:                       7100,
		C1USPerPrefillToken:        23,
		C2USPerDecodeSeq:           5,
		C3USPerDecodeContextToken:  0.046,
		C4USPerPrefillTokenContext: 0.00076,
	}
}

// DefaultRate is the default scenario's arrival rate in requests per
// second: 80 % of the saturated throughput of the default setup, measured
// with `itlsim run --rate 1000 --requests 5000` (README, "Default scenario").
const DefaultRate = 17

// Validate checks the fields that need no lookup; Resolve checks the rest.
func (c *Config) Validate() error {
	var errs []error
	if c.Model == "" {
		errs = append(errs, errors.New("model: must name a preset or a config.json"))
	}
	if c.GPU == "" {
		errs = append(errs, errors.New("gpu: must name a GPU preset"))
	}
	if c.TP < 1 {
		errs = append(errs, fmt.Errorf("tp: must be ≥ 1, got %d", c.TP))
	}
	if c.DP < 0 || c.DP > 1024 {
		errs = append(errs, fmt.Errorf("dp: must be in [1,1024] (0: 1), got %d", c.DP))
	}
	if _, err := cost.QuantizationBits(c.Quantization); err != nil {
		errs = append(errs, err)
	}
	if _, err := cost.KVElementBytes(c.KVCacheDType); err != nil {
		errs = append(errs, err)
	}
	if c.MaxModelLen < 0 {
		errs = append(errs, fmt.Errorf("max_model_len: must be ≥ 0 (0 takes the model's), got %d", c.MaxModelLen))
	}
	if err := c.Cost.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Scheduler.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.KVCache.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Workload.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.SpecDecode.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Delivery.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Server.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Metrics.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Cluster.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// TierSetup is one resolved offload tier of a replica.
type TierSetup struct {
	Name    string
	Blocks  int     // capacity in KV blocks per replica
	ReadBW  float64 // tier→GPU bytes/s per replica
	WriteBW float64 // GPU→tier bytes/s per replica
	Swap    bool    // the cpu tier: it is the swap space
}

// Setup is a resolved, immutable configuration: presets looked up, the cost
// model built, the cache sized and the scheduler's limits filled. One Setup
// may drive many engines at once.
type Setup struct {
	Config Config // with every default filled in
	Model  cost.ModelSpec
	GPU    cost.GPUSpec
	Cost   cost.Model
	// Work counts each step's model FLOPs and bytes moved for MFU and MBU:
	// Cost itself when it counts them (the roofline), else a roofline of
	// the same model and GPU used for counting only; nil when none can be
	// built.
	Work   cost.Counter
	Blocks int // KV blocks per replica (all its data-parallel ranks)
	// DP is the data-parallel ranks the replica's scheduler stands for (1
	// without): its token budget and max_num_seqs are DP times the
	// configured per-rank ones.
	DP         int
	SwapBlocks int     // CPU swap blocks per replica
	BlockBytes int64   // bytes of one block across the replica's GPUs
	HostBW     float64 // GPU↔CPU bytes/s per replica (all TP GPUs copy in parallel)
	// Tiers are the KV offload tiers, top first (kvcache.tiers).
	Tiers []TierSetup
	// Spec draws speculative acceptances; nil when speculation is off.
	Spec *specdecode.Model
	// Classes are the workload's resolved classes (nil without classes);
	// ClassSpec[i] draws class i's acceptances when it has its own profile.
	Classes   []workloads.Class
	ClassSpec []*specdecode.Model
	// Delivery carries streams from server to client; nil when off (for
	// the run and every class).
	Delivery *delivery.Path
	// ClassDelivery[i] carries class i's streams when the class has its
	// own delivery settings (nil: Delivery).
	ClassDelivery []*delivery.Path
	// DraftCost prices one draft step of the draft-model proposer (same
	// GPUs, no per-step overhead: the target's step carries it); nil otherwise.
	DraftCost cost.Model
	// Pools are the cluster's replicas by pool; without a cluster, one
	// pool of one replica whose setup is this one.
	Pools []Pool
}

// lookupModel finds a preset or reads a Hugging Face config.json from files.
func lookupModel(files fs.FS, name string) (cost.ModelSpec, error) {
	if m, ok := cost.LookupModel(name); ok {
		return m, nil
	}
	if !strings.HasSuffix(name, ".json") {
		return cost.ModelSpec{}, fmt.Errorf("unknown preset %q; valid: %s (or the path of a Hugging Face config.json)", name, strings.Join(cost.ModelNames(), ", "))
	}
	if files == nil {
		return cost.ModelSpec{}, fmt.Errorf("%s: no file system to read a Hugging Face config.json from (Config.Files is nil)", name)
	}
	data, err := fs.ReadFile(files, name)
	if err != nil {
		return cost.ModelSpec{}, err
	}
	return cost.ParseHFConfig(name, data)
}

// Resolve validates c, looks up its presets and derives what the engine
// needs, for every pool of its cluster. Errors say which field is wrong
// and why.
func (c Config) Resolve() (*Setup, error) {
	c.Cluster = c.Cluster.expanded() // a prefill_decode split is two pools
	s, err := c.resolve()
	if err != nil {
		return nil, err
	}
	if s.Pools, err = resolvePools(c, s); err != nil {
		return nil, err
	}
	if len(c.Cluster.Pools) > 0 { // the resolved scenario spells out every pool
		pools := make([]PoolConfig, len(s.Pools))
		for i, p := range s.Pools {
			pc := &p.Setup.Config
			pools[i] = PoolConfig{Name: p.Name, Replicas: p.Replicas, Model: pc.Model, GPU: pc.GPU, TP: pc.TP,
				Scheduler: &pc.Scheduler, KVCache: &pc.KVCache, Cost: &pc.Cost, Role: p.Role}
		}
		s.Config.Cluster.Pools = pools
	}
	if cl := &s.Config.Cluster; cl.Disaggregated() { // the resolved scenario spells out the decode router and the link
		cl.DecodeRouter = cl.DecodeRouterConfig()
		if cl.DecodeRouter.StalenessMS < 0 {
			cl.DecodeRouter.StalenessMS = cl.DecodeRouter.Staleness()
		}
		cl.KVLink = cl.KVLink.Resolved()
	}
	if s.Config.Cluster.Router.StalenessMS < 0 {
		s.Config.Cluster.Router.StalenessMS = s.Config.Cluster.Router.Staleness()
	}
	return s, nil
}

// resolve is Resolve for one replica's configuration.
func (c Config) resolve() (*Setup, error) {
	if c.Cost.Linear == (cost.LinearConfig{}) {
		// No coefficient given: the built-in ones. Given any, the others
		// are 0 (a ported three-term model must not silently keep c3, c4).
		c.Cost.Linear = DefaultLinear()
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m, err := lookupModel(c.Files, c.Model)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	m = cost.Quantize(m, c.Quantization, c.KVCacheDType)
	g, ok := cost.LookupGPU(c.GPU)
	if !ok {
		return nil, fmt.Errorf("gpu: unknown preset %q; valid: %s", c.GPU, strings.Join(cost.GPUNames(), ", "))
	}
	if c.MaxModelLen == 0 {
		c.MaxModelLen = m.MaxContext
	}
	if c.MaxModelLen > m.MaxContext {
		return nil, fmt.Errorf("max_model_len: %d exceeds %s's context of %d tokens", c.MaxModelLen, m.Name, m.MaxContext)
	}
	c.Scheduler = c.Scheduler.WithDefaults(g.Name, g.MemoryBytes)

	par := cost.Parallelism{TP: c.TP, DP: c.DP, ExpertParallel: c.EnableExpertParallel}
	if err := par.Validate(m); err != nil {
		return nil, err
	}
	var cm cost.Model
	if c.Cost.Model == "linear" {
		cm, err = cost.NewLinear(c.Cost.Linear)
	} else {
		var rf *cost.Roofline
		if rf, err = cost.NewRooflineParallel(m, g, par, c.Cost.Roofline); err == nil {
			cm, err = rf.WithCUDAGraphs(c.graphSizes())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cost: %w", err)
	}
	// The work of a step is the model's, whatever prices its time: the
	// linear regression has no FLOP model, so the roofline's shapes count
	// its steps' FLOPs and bytes. A model the roofline cannot split over
	// tp leaves them uncounted (MFU and MBU n/a).
	work, _ := cm.(cost.Counter)
	if work == nil {
		if rf, err := cost.NewRooflineParallel(m, g, par, cost.DefaultRoofline()); err == nil {
			work = rf
		}
	}
	if c.Server, err = c.Server.Resolved(); err != nil {
		return nil, err
	}
	if sv := c.Server; sv.DetokenizeInEngine && sv.DetokenizeUSPerOutputToken > 0 {
		cm = frontend.EngineDetokenization{M: cm, NS: sv.DetokenizeUSPerOutputToken * 1e3}
	}

	reserve := int64(c.KVCache.ActivationReserveGiB * (1 << 30))
	if reserve == 0 {
		reserve = cost.DefaultActivationReserve(m, c.Scheduler.MaxNumBatchedTokens, c.Scheduler.MaxNumSeqs, c.TP)
		c.KVCache.ActivationReserveGiB = float64(reserve) / (1 << 30)
	}
	blocks := c.KVCache.NumGPUBlocks
	// Sliding-window layers hold at most their window's blocks per
	// sequence: set aside for max_num_seqs sequences, so the blocks count
	// the full-attention layers' KV alone.
	window := int64(c.Scheduler.MaxNumSeqs) * m.SlidingKVBytesPerSeqPerGPU(c.TP, c.KVCache.BlockSize)
	derived, err := cost.KVBlocksParallel(m, g, par, c.KVCache.BlockSize, c.KVCache.GPUMemoryUtilization, reserve+window)
	if err != nil {
		return nil, fmt.Errorf("model: %s does not fit %d× %s: %w; try a larger tp or a GPU with more memory", m.Name, par.GPUs(), g.Name, err)
	}
	derived = min(derived*par.Ranks(), math.MaxInt32) // every rank its own cache
	if blocks == 0 {
		blocks = derived
		c.KVCache.NumGPUBlocks = blocks
	}
	blockBytes := int64(c.KVCache.BlockSize) * m.KVBytesPerToken()
	if m.IsMLA() { // every rank holds the whole latent
		blockBytes *= int64(c.TP)
	}
	swapBlocks := int(c.KVCache.SwapSpaceGiB * (1 << 30) * float64(par.GPUs()) / float64(blockBytes))
	if c.KVCache.HostLinkGBps == 0 {
		c.KVCache.HostLinkGBps = g.HostLinkBW / 1e9
	}
	var tiers []TierSetup
	for i, t := range c.KVCache.Tiers {
		n := int(t.CapacityGiB * (1 << 30) * float64(c.TP) / float64(blockBytes))
		if n < 1 {
			return nil, fmt.Errorf("kvcache.tiers[%d].capacity_gib: %g GiB holds no KV block of %d bytes", i, t.CapacityGiB, blockBytes/int64(c.TP))
		}
		tiers = append(tiers, TierSetup{Name: t.Name, Blocks: n, ReadBW: t.ReadGBps * 1e9 * float64(c.TP), WriteBW: t.WriteGBps * 1e9 * float64(c.TP), Swap: t.Name == "cpu"})
		if t.Name == "cpu" {
			swapBlocks = n
		}
	}
	if c.Scheduler.Policy != scheduler.PrefillFirstName && c.Scheduler.Policy != scheduler.StaticName &&
		c.Scheduler.MaxNumBatchedTokens < c.KVCache.BlockSize {
		return nil, fmt.Errorf("scheduler.max_num_batched_tokens: a budget of %d tokens is below one KV block of %d tokens", c.Scheduler.MaxNumBatchedTokens, c.KVCache.BlockSize)
	}
	c.Workload = c.Workload.CapAtContext(c.MaxModelLen)
	if lo, hi := c.Workload.InputLen.Min(), c.Workload.OutputLen.Min(); c.Workload.DrawsLengths() && lo+hi > c.MaxModelLen {
		return nil, fmt.Errorf("workload.input_len: every request needs at least %d prompt + %d output tokens, more than max_model_len %d", lo, hi, c.MaxModelLen)
	}
	var spec *specdecode.Model
	var draftCost cost.Model
	if c.SpecDecode.Enabled() {
		spec = specdecode.New(c.SpecDecode)
		if c.SpecDecode.Method == specdecode.DraftModel {
			dm, err := lookupModel(c.Files, c.SpecDecode.DraftModel)
			if err != nil {
				return nil, fmt.Errorf("spec_decode.draft_model: %w", err)
			}
			if dm.Params >= m.Params {
				return nil, fmt.Errorf("spec_decode.draft_model: %s (%.1fB parameters) is not smaller than the target %s (%.1fB); a draft model must be cheaper than the model it drafts for",
					dm.Name, float64(dm.Params)/1e9, m.Name, float64(m.Params)/1e9)
			}
			if dm.Vocab != m.Vocab {
				return nil, fmt.Errorf("spec_decode.draft_model: %s has a vocabulary of %d tokens, the target %s %d; they must share a tokenizer", dm.Name, dm.Vocab, m.Name, m.Vocab)
			}
			rc := c.Cost.Roofline
			rc.OverheadUS = 0
			dr, err := cost.NewRoofline(dm, g, c.TP, rc)
			if err == nil {
				draftCost, err = dr.WithCUDAGraphs(c.graphSizes())
			}
			if err != nil {
				return nil, fmt.Errorf("spec_decode.draft_model: %w", err)
			}
		}
	}
	classes, err := c.Workload.ResolveClasses()
	if err != nil {
		return nil, err
	}
	var classSpec []*specdecode.Model
	if spec != nil {
		for i, cl := range classes {
			var m *specdecode.Model
			if cl.Acceptance != "" {
				cs := c.SpecDecode
				if err := cs.Acceptance.UnmarshalText([]byte(cl.Acceptance)); err != nil {
					return nil, fmt.Errorf("workload.classes[%d].acceptance: %w", i, err)
				}
				m = specdecode.New(cs)
			}
			classSpec = append(classSpec, m)
		}
	}
	var path *delivery.Path
	var classDelivery []*delivery.Path
	for i, cl := range classes {
		if cl.Delivery.IsZero() {
			classDelivery = append(classDelivery, nil)
			continue
		}
		dc := c.Delivery
		dc.Failover.PrimaryModel = m.Name
		d := cl.Delivery
		for _, o := range []struct {
			from *float64
			to   *float64
		}{{d.SmoothingCadenceMS, &dc.Smoothing.CadenceMS}, {d.SmoothingDepthMS, &dc.Smoothing.DepthMS},
			{d.FlushWindowMS, &dc.Flush.WindowMS}, {d.FrameMS, &dc.Render.FrameMS}} {
			if o.from != nil {
				*o.to = *o.from
			}
		}
		p, err := delivery.New(dc)
		if err != nil {
			return nil, fmt.Errorf("workload.classes[%d].delivery: %w", i, err)
		}
		classDelivery = append(classDelivery, p)
	}
	if c.Delivery.Enabled() || slices.ContainsFunc(classDelivery, func(p *delivery.Path) bool { return p != nil }) {
		dc := c.Delivery
		dc.Failover.PrimaryModel = m.Name
		if path, err = delivery.New(dc); err != nil {
			return nil, err
		}
	}
	return &Setup{
		Delivery:      path,
		ClassDelivery: classDelivery,
		Classes:       classes,
		ClassSpec:     classSpec,
		Spec:          spec,
		DraftCost:     draftCost,
		Config:        c,
		Model:         m,
		GPU:           g,
		Cost:          cm,
		Work:          work,
		Blocks:        blocks,
		DP:            par.Ranks(),
		SwapBlocks:    swapBlocks,
		BlockBytes:    blockBytes,
		HostBW:        c.KVCache.HostLinkGBps * 1e9 * float64(c.TP),
		Tiers:         tiers,
	}, nil
}

// graphSizes are the CUDA-graph capture sizes steps are priced with: nil
// under enforce_eager, else the configured sizes or vLLM's default for the
// scheduler (whose defaults must already be filled in).
func (c *Config) graphSizes() []int {
	if c.Cost.EnforceEager {
		return nil
	}
	if len(c.Cost.CUDAGraphCaptureSizes) > 0 {
		return c.Cost.CUDAGraphCaptureSizes
	}
	return cost.DefaultCaptureSizes(c.Scheduler.MaxNumSeqs, c.Scheduler.MaxNumBatchedTokens)
}

// The thresholds results are judged by (package metrics).
type (
	MetricsConfig = metrics.Config
	SLO           = metrics.SLO
	QoE           = metrics.QoE
	Percentiles   = metrics.Percentiles
)

// DefaultQoE is the expectation of a person reading a chat answer.
func DefaultQoE() QoE { return metrics.DefaultQoE() }

// ParsePercentiles reads "50,90,95,99" (metrics.ParsePercentiles).
func ParsePercentiles(s string) (Percentiles, error) { return metrics.ParsePercentiles(s) }

// Scaled is s with every priced step's duration multiplied by k on top of
// s's own cost.step_time_scale: the same cost model and presets, for a
// sensitivity analysis that reruns the same seeds with slower or faster
// steps. s is not changed.
func (s *Setup) Scaled(k float64) *Setup {
	c := *s
	base := c.Config.Cost.StepTimeScale
	if base <= 0 {
		base = 1
	}
	c.Config.Cost.StepTimeScale = base * k
	// The pools' setups are what the replicas run: scale each (a lone
	// configuration's one pool is s itself).
	c.Pools = make([]Pool, len(s.Pools))
	for i, p := range s.Pools {
		if p.Setup == s {
			p.Setup = &c
		} else if p.Setup != nil {
			p.Setup = p.Setup.Scaled(k)
		}
		c.Pools[i] = p
	}
	return &c
}
