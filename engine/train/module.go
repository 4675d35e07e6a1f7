package train

import (
	"fmt"
	"strings"

	"github.com/kiln-ai/kiln/engine/llama"
)

// Module is a projection of a decoder block that LoRA can target.
type Module uint8

// The projections, in the order adapters list them.
const (
	ModQ Module = iota
	ModK
	ModV
	ModO
	ModGate
	ModUp
	ModDown
	// A hybrid's Gated DeltaNet projections (linear layers only): the
	// queries, keys and values before the convolution, the output gate z,
	// and the output projection.
	ModLinQKV
	ModLinZ
	ModLinOut
	numModules
)

var moduleNames = [numModules]struct{ short, peft string }{
	ModQ: {"q", "self_attn.q_proj"}, ModK: {"k", "self_attn.k_proj"}, ModV: {"v", "self_attn.v_proj"},
	ModO: {"o", "self_attn.o_proj"}, ModGate: {"gate", "mlp.gate_proj"}, ModUp: {"up", "mlp.up_proj"},
	ModDown: {"down", "mlp.down_proj"}, ModLinQKV: {"qkv", "linear_attn.in_proj_qkv"},
	ModLinZ: {"z", "linear_attn.in_proj_z"}, ModLinOut: {"out", "linear_attn.out_proj"},
}

// DefaultModules are the projections targeted when a job names none.
func DefaultModules() []Module { return []Module{ModQ, ModK, ModV, ModO} }

// DefaultModulesFor are the default projections on a model of shape c: on
// a hybrid, whose attention projections exist only on every
// FullAttnInterval-th layer, the linear layers' mixer projections (qkv, z,
// out) too, so that every layer's mixer is adapted.
func DefaultModulesFor(c llama.Config) []Module {
	if c.Hybrid() {
		return []Module{ModQ, ModK, ModV, ModO, ModLinQKV, ModLinZ, ModLinOut}
	}
	return DefaultModules()
}

// attention reports whether m is a projection of a full-attention mixer.
func (m Module) attention() bool { return m <= ModO }

// linear reports whether m is a projection of a Gated DeltaNet mixer.
func (m Module) linear() bool { return m >= ModLinQKV && m < numModules }

// hasModule reports whether layer l of c has projection m: attention
// projections on attention layers, linear ones on Gated DeltaNet layers,
// the feed-forward's on every layer.
func hasModule(c llama.Config, l int, m Module) bool {
	switch {
	case m.attention():
		return !c.IsLinear(l)
	case m.linear():
		return c.IsLinear(l)
	}
	return m < numModules
}

func (m Module) String() string {
	if m < numModules {
		return moduleNames[m].short
	}
	return fmt.Sprintf("Module(%d)", uint8(m))
}

// PEFTPath is the module's path inside a layer in PEFT tensor names
// ("self_attn.q_proj").
func (m Module) PEFTPath() string { return moduleNames[m].peft }

// TargetName is the module's name in adapter_config.json's target_modules
// ("q_proj").
func (m Module) TargetName() string {
	p := moduleNames[m].peft
	return p[strings.IndexByte(p, '.')+1:]
}

// ParseModule accepts a short name ("q", "gate") or a PEFT module name
// ("q_proj", "gate_proj").
func ParseModule(s string) (Module, error) {
	for m := range numModules {
		if s == m.String() || s == m.TargetName() {
			return m, nil
		}
	}
	return 0, fieldErr("target_modules", "unknown target module %q (want q, k, v, o, gate, up, down, qkv, z or out)", s)
}

// ParseModules parses a list of module names, in any order and without
// repeats; the result is in canonical order.
func ParseModules(names []string) ([]Module, error) {
	var seen [numModules]bool
	for _, n := range names {
		m, err := ParseModule(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		if seen[m] {
			return nil, fieldErr("target_modules", "%q listed twice", n)
		}
		seen[m] = true
	}
	if len(names) == 0 {
		return nil, fieldErr("target_modules", "no target modules")
	}
	var out []Module
	for m := range numModules {
		if seen[m] {
			out = append(out, m)
		}
	}
	return out, nil
}
