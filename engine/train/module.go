package train

import (
	"fmt"
	"strings"
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
	numModules
)

var moduleNames = [numModules]struct{ short, peft string }{
	ModQ: {"q", "self_attn.q_proj"}, ModK: {"k", "self_attn.k_proj"}, ModV: {"v", "self_attn.v_proj"},
	ModO: {"o", "self_attn.o_proj"}, ModGate: {"gate", "mlp.gate_proj"}, ModUp: {"up", "mlp.up_proj"},
	ModDown: {"down", "mlp.down_proj"},
}

// DefaultModules are the projections targeted when a job names none.
func DefaultModules() []Module { return []Module{ModQ, ModK, ModV, ModO} }

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
	return 0, fieldErr("target_modules", "unknown target module %q (want q, k, v, o, gate, up or down)", s)
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
