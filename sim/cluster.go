package sim

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/scheduler/router"
	"github.com/itlsim/itlsim/sim/kvlink"
)

// ClusterConfig describes the replicas behind one router. Without it (or
// with one replica) a run is one replica, exactly as before clusters.
type ClusterConfig struct {
	// Replicas copies the top-level replica configuration (model, gpu, tp,
	// scheduler, kvcache, cost) this many times. Default 1. With pools,
	// leave it at 1: each pool says how many replicas it has.
	Replicas int `yaml:"replicas" json:"replicas"`
	// Router chooses the replica of each arriving request.
	Router router.Config `yaml:"router" json:"router"`
	// Pools describe a heterogeneous fleet (e.g. 4× H100 TP1 + 2× A100
	// TP2). A pool's omitted fields inherit the top-level configuration;
	// within scheduler, kvcache and cost, every field the pool leaves at
	// zero inherits the top-level value.
	Pools []PoolConfig `yaml:"pools,omitempty" json:"pools,omitempty"`
	// DecodeRouter chooses the decode replica of each prefilled request
	// when the pools are disaggregated (roles prefill and decode); the
	// same policies as Router. With policy left empty, it is Router's
	// whole configuration. Read only with prefill and decode pools.
	DecodeRouter router.Config `yaml:"decode_router,omitempty" json:"decode_router,omitzero"`
	// KVLink is the link the KV cache crosses from a prefill replica to a
	// decode replica. Read only with prefill and decode pools (disagg.go).
	KVLink kvlink.Config `yaml:"kv_link,omitempty" json:"kv_link,omitzero"`
	// PrefillDecode splits the replicas of the top-level configuration
	// into a prefill pool and a decode pool: "P:D" with P + D = replicas
	// (e.g. "1:3" of 4); "" or "mixed" keeps them mixed. A scalar, so a
	// compare or sweep --vary can vary the split at a fixed GPU count.
	PrefillDecode string `yaml:"prefill_decode,omitempty" json:"prefill_decode,omitempty"`
}

// split parses PrefillDecode: ok false when mixed.
func (c ClusterConfig) split() (prefill, decode int, ok bool, err error) {
	if c.PrefillDecode == "" || c.PrefillDecode == RoleMixed {
		return 0, 0, false, nil
	}
	a, b, found := strings.Cut(c.PrefillDecode, ":")
	p, errP := strconv.Atoi(strings.TrimSpace(a))
	d, errD := strconv.Atoi(strings.TrimSpace(b))
	if !found || errP != nil || errD != nil || p < 1 || d < 1 {
		return 0, 0, false, fmt.Errorf("cluster.prefill_decode: expected P:D (replicas of each role, both ≥ 1) or mixed, got %q", c.PrefillDecode)
	}
	if p+d != c.Replicas {
		return 0, 0, false, fmt.Errorf("cluster.prefill_decode: %q splits %d replicas, but cluster.replicas is %d", c.PrefillDecode, p+d, c.Replicas)
	}
	if len(c.Pools) > 0 {
		return 0, 0, false, errors.New("cluster.prefill_decode: splits cluster.replicas; with pools, give each pool a role instead")
	}
	return p, d, true, nil
}

// expanded turns a prefill_decode split into its two pools, named
// prefill and decode, of the top-level configuration.
func (c ClusterConfig) expanded() ClusterConfig {
	p, d, ok, err := c.split()
	if !ok || err != nil {
		return c
	}
	c.Pools = []PoolConfig{{Name: RolePrefill, Replicas: p, Role: RolePrefill}, {Name: RoleDecode, Replicas: d, Role: RoleDecode}}
	c.Replicas, c.PrefillDecode = 1, ""
	return c
}

// Pool roles. A mixed pool (the default) prefills and decodes its own
// requests; a prefill pool only prefills, then hands the request and its
// KV cache to a decode pool over the cluster's KV link.
const (
	RoleMixed   = "mixed"
	RolePrefill = "prefill"
	RoleDecode  = "decode"
)

// PoolConfig is one pool of identical replicas in a cluster.
type PoolConfig struct {
	// Name labels the pool; its replicas are NAME-0, NAME-1, …
	Name string `yaml:"name" json:"name"`
	// Replicas is the number of replicas in the pool (≥ 1).
	Replicas int    `yaml:"replicas" json:"replicas"`
	Model    string `yaml:"model" json:"model,omitempty"`
	GPU      string `yaml:"gpu" json:"gpu,omitempty"`
	TP       int    `yaml:"tp" json:"tp,omitempty"`
	// Scheduler, KVCache and Cost override the top-level sections field
	// by field (fields left at zero inherit).
	Scheduler *scheduler.Config `yaml:"scheduler" json:"scheduler,omitempty"`
	KVCache   *kvcache.Config   `yaml:"kvcache" json:"kvcache,omitempty"`
	Cost      *CostConfig       `yaml:"cost" json:"cost,omitempty"`
	// Role is mixed (default), prefill or decode. A cluster either has
	// only mixed pools or has at least one prefill and one decode pool and
	// no mixed one.
	Role string `yaml:"role,omitempty" json:"role,omitempty"`
}

// MaxReplicas bounds a cluster's size.
const MaxReplicas = 4096

// DefaultCluster is one replica behind a round-robin router.
func DefaultCluster() ClusterConfig {
	return ClusterConfig{Replicas: 1, Router: router.DefaultConfig()}
}

// Validate names the first bad field.
func (c ClusterConfig) Validate() error {
	var errs []error
	if c.Replicas < 1 || c.Replicas > MaxReplicas {
		errs = append(errs, fmt.Errorf("cluster.replicas: must be in [1, %d], got %d", MaxReplicas, c.Replicas))
	}
	if _, _, _, err := c.split(); err != nil {
		errs = append(errs, err)
	} else if c.PrefillDecode != "" {
		c = c.expanded()
	}
	if len(c.Pools) > 0 && c.Replicas != 1 {
		errs = append(errs, fmt.Errorf("cluster.replicas: with pools, give each pool's replicas instead (got replicas %d and %d pools)", c.Replicas, len(c.Pools)))
	}
	total := 0
	names := map[string]int{}
	for i, p := range c.Pools {
		at := fmt.Sprintf("cluster.pools[%d]", i)
		if p.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: every pool needs a name", at))
		} else if j, ok := names[p.Name]; ok {
			errs = append(errs, fmt.Errorf("%s.name: %q is also the name of pool %d", at, p.Name, j))
		}
		names[p.Name] = i
		if p.Replicas < 1 || p.Replicas > MaxReplicas {
			errs = append(errs, fmt.Errorf("%s.replicas: must be in [1, %d], got %d", at, MaxReplicas, p.Replicas))
		}
		if p.TP < 0 {
			errs = append(errs, fmt.Errorf("%s.tp: must be ≥ 1 (0 inherits), got %d", at, p.TP))
		}
		switch p.Role {
		case "", RoleMixed, RolePrefill, RoleDecode:
		default:
			errs = append(errs, fmt.Errorf("%s.role: must be mixed, prefill or decode, got %q", at, p.Role))
		}
		total += p.Replicas
	}
	if total > MaxReplicas {
		errs = append(errs, fmt.Errorf("cluster.pools: %d replicas in all, more than %d", total, MaxReplicas))
	}
	if err := c.Router.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Disaggregated() {
		var prefill, decode, mixed bool
		for _, p := range c.Pools {
			prefill = prefill || p.Role == RolePrefill
			decode = decode || p.Role == RoleDecode
			mixed = mixed || p.Role == "" || p.Role == RoleMixed
		}
		switch {
		case !prefill:
			errs = append(errs, errors.New("cluster.pools: a decode pool needs at least one prefill pool to feed it"))
		case !decode:
			errs = append(errs, errors.New("cluster.pools: a prefill pool needs at least one decode pool to hand its requests to"))
		case mixed:
			errs = append(errs, errors.New("cluster.pools: with prefill and decode pools, every pool needs role prefill or decode (a mixed pool cannot share the router)"))
		}
	}
	// The decode router and the link are read only with prefill and
	// decode pools; given anyway, they must still be valid.
	if c.DecodeRouter.Policy != "" {
		if err := c.DecodeRouterConfig().Validate(); err != nil {
			// The router names its fields as cluster.router's.
			errs = append(errs, errors.New(strings.ReplaceAll(err.Error(), "cluster.router.", "cluster.decode_router.")))
		}
	}
	if err := c.KVLink.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// DecodeRouterConfig is the decode router's configuration: Router's with
// no decode policy given, else the given fields over the router defaults.
func (c ClusterConfig) DecodeRouterConfig() router.Config {
	if c.DecodeRouter.Policy == "" {
		return c.Router
	}
	d := router.DefaultConfig()
	overlay(reflect.ValueOf(&d).Elem(), reflect.ValueOf(&c.DecodeRouter).Elem())
	return d
}

// Size is the number of replicas the cluster has.
func (c ClusterConfig) Size() int {
	if len(c.Pools) == 0 {
		return max(1, c.Replicas)
	}
	n := 0
	for _, p := range c.Pools {
		n += p.Replicas
	}
	return n
}

// Disaggregated reports whether any pool has the role prefill or decode.
func (c ClusterConfig) Disaggregated() bool {
	for _, p := range c.Pools {
		if p.Role == RolePrefill || p.Role == RoleDecode {
			return true
		}
	}
	return false
}

// Pool is one resolved pool: its replicas share one immutable Setup.
type Pool struct {
	Name     string // "" for the copies of the top-level configuration
	Role     string // "" (mixed), RolePrefill or RoleDecode
	Replicas int
	Setup    *Setup
}

// poolConfig is the top-level configuration c with pool p's fields laid
// over it: a replica's whole configuration.
func poolConfig(c Config, p PoolConfig) Config {
	c.Cluster = DefaultCluster()
	if p.Model != "" {
		c.Model = p.Model
	}
	if p.GPU != "" {
		c.GPU = p.GPU
	}
	if p.TP != 0 {
		c.TP = p.TP
	}
	if p.Scheduler != nil {
		overlay(reflect.ValueOf(&c.Scheduler).Elem(), reflect.ValueOf(p.Scheduler).Elem())
	}
	if p.KVCache != nil {
		overlay(reflect.ValueOf(&c.KVCache).Elem(), reflect.ValueOf(p.KVCache).Elem())
	}
	if p.Cost != nil {
		overlay(reflect.ValueOf(&c.Cost).Elem(), reflect.ValueOf(p.Cost).Elem())
	}
	return c
}

// overlay sets every field of dst that src gives (is not zero), section by
// section.
func overlay(dst, src reflect.Value) {
	for i := range dst.NumField() {
		if !dst.Type().Field(i).IsExported() {
			continue
		}
		d, s := dst.Field(i), src.Field(i)
		if d.Kind() == reflect.Struct {
			overlay(d, s)
			continue
		}
		if !s.IsZero() {
			d.Set(s)
		}
	}
}

// resolvePools resolves every pool of c's cluster over the top-level
// configuration (raw: before its defaults were filled, since they depend
// on the GPU), or one pool of the top-level setup s itself.
func resolvePools(raw Config, s *Setup) ([]Pool, error) {
	cl := raw.Cluster
	if len(cl.Pools) == 0 {
		return []Pool{{Replicas: max(1, cl.Replicas), Setup: s}}, nil
	}
	var pools []Pool
	for i, p := range cl.Pools {
		ps, err := poolConfig(raw, p).resolve()
		if err != nil {
			return nil, fmt.Errorf("cluster.pools[%d] (%s): %w", i, p.Name, err)
		}
		role := p.Role
		if role == RoleMixed {
			role = ""
		}
		pools = append(pools, Pool{Name: p.Name, Role: role, Replicas: p.Replicas, Setup: ps})
	}
	return pools, nil
}
