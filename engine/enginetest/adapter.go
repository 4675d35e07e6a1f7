package enginetest

import (
	"time"

	"github.com/kiln-ai/kiln/engine"
)

// Adapter is a fake engine.Adapter: swapping it in sets the fake Backend's
// variant (Backend.SetVariant) to Variant.
type Adapter struct {
	Name    string
	Variant uint64
}

// AdapterName implements engine.Adapter.
func (a *Adapter) AdapterName() string { return a.Name }

// Swapper is a fake engine.AdapterSwapper over b: each swap sleeps Delay
// (exact under testing/synctest), returns Err when set, else sets b's
// variant to the adapter's (0 for the base model), and records
// "<name>/<reason>" in Log ("base" for nil).
type Swapper struct {
	B     *Backend
	Delay time.Duration
	Err   error
	Log   *Log
}

// Swap is the engine.AdapterSwapper.
func (s *Swapper) Swap(to engine.Adapter, reason string) engine.Mutation {
	name, v := "base", uint64(0)
	if a, ok := to.(*Adapter); ok && a != nil {
		name, v = a.Name, a.Variant
	}
	return &Mutation{Name: name + "/" + reason, Slot: engine.PhaseAdapter, Delay: s.Delay, Err: s.Err, Log: s.Log,
		OnApply: func(engine.Backend) {
			if s.Err == nil {
				s.B.SetVariant(v)
			}
		}}
}
