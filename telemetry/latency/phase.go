package latency

import (
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// Phase is one of the twenty request phases of docs/latency-guide.md#phases, in its
// fixed order. String gives the name without the "_ms" suffix, which is
// also the value of the `phase` metric label.
type Phase uint8

// The phases, in the documented order.
const (
	PhaseActorQueue Phase = iota
	PhaseActorAdmission
	PhaseTokenization
	PhasePrefill
	PhaseDecode
	PhaseActorCycleIdle
	PhaseSampling
	PhaseReadback
	PhaseResponseDelivery
	PhaseHandlerQueue
	PhaseClientDelivery
	PhaseGPULockWait
	PhaseGraphCapture
	PhaseGraphReplay
	PhaseSynchronization
	PhaseResize
	PhaseTrim
	PhaseAdapter
	PhaseTraining
	PhaseUnexplained
	NumPhases
)

var phaseNames = [NumPhases]string{
	"actor_queue", "actor_admission", "tokenization", "prefill", "decode",
	"actor_cycle_idle", "sampling", "readback", "response_delivery",
	"handler_queue", "client_delivery", "gpu_lock_wait", "graph_capture",
	"graph_replay", "synchronization", "resize", "trim", "adapter", "training",
	"unexplained",
}

var phaseKeys = func() (k [NumPhases]string) {
	for i, n := range phaseNames {
		k[i] = n + "_ms"
	}
	return k
}()

// String returns the phase name without "_ms", or "unknown".
func (p Phase) String() string {
	if p < NumPhases {
		return phaseNames[p]
	}
	return "unknown"
}

// Key returns the JSON key of the phase ("decode_ms"), or "unknown".
func (p Phase) Key() string {
	if p < NumPhases {
		return phaseKeys[p]
	}
	return "unknown"
}

// ParsePhase returns the phase with the given name (without "_ms").
func ParsePhase(name string) (Phase, bool) {
	for i, n := range phaseNames {
		if n == name {
			return Phase(i), true
		}
	}
	return 0, false
}

// backendPhases maps a backend phase to its phase.
var backendPhases = [NumBackendPhases]Phase{
	PhaseSampling, PhaseReadback, PhaseGPULockWait, PhaseGraphCapture,
	PhaseGraphReplay, PhaseSynchronization, PhaseResize, PhaseTrim,
	PhaseAdapter, PhaseTraining,
}

// PhaseTotals are the phase totals of one request: a value per phase,
// null when the path never observed it. It marshals as the `phases` object
// with all twenty keys.
type PhaseTotals [NumPhases]NullFloat

// MarshalJSON implements json.Marshaler.
func (p PhaseTotals) MarshalJSON() ([]byte, error) { return p.AppendJSON(nil), nil }

// AppendJSON appends the JSON object to b.
func (p *PhaseTotals) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, v := range p {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKey(b, phaseKeys[i])
		b = v.appendJSON(b)
	}
	return append(b, '}')
}

// phaseAcc accumulates phase durations with an observed mask.
type phaseAcc struct {
	d        [NumPhases]time.Duration
	observed uint32
}

func (a *phaseAcc) add(p Phase, d time.Duration) {
	a.d[p] += max(d, 0)
	a.observed |= 1 << p
}

func (a *phaseAcc) totals() (t PhaseTotals) {
	for i := range t {
		if a.observed&(1<<i) != 0 {
			t[i] = Float(timing.Ms(a.d[i]))
		}
	}
	return t
}
