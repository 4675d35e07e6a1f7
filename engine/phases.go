package engine

import (
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// counters are the actor's cumulative phase durations. Each advances by the
// length of a segment when the segment ends; segments never overlap, so the
// difference of two snapshots taken at segment boundaries is the work that
// happened between those instants, and no phase (nor their sum) exceeds it.
type counters struct {
	admission, prefill, decode, idle, delivery time.Duration
	sampling, lockWait                         time.Duration
	maint                                      MaintTimes // maintenance phases inside ownership waits
}

// observedSlots are the backend phases the CPU path always measures.
// Readback, graph capture and replay and synchronization do not exist on
// it; the maintenance slots are observed only when such an operation
// overlapped the interval (a non-zero duration).
const observedSlots = 1<<timing.BackendSampling | 1<<timing.BackendGPULockWait

// phasesSince returns the work between mark and now (now's values minus
// mark's).
func (now *counters) phasesSince(mark *counters) timing.Phases {
	var p timing.Phases
	p.Admission = now.admission - mark.admission
	p.Prefill = now.prefill - mark.prefill
	p.Decode = now.decode - mark.decode
	p.CycleIdle = now.idle - mark.idle
	p.ResponseDelivery = now.delivery - mark.delivery
	p.Backend[timing.BackendSampling] = now.sampling - mark.sampling
	p.Backend[timing.BackendGPULockWait] = now.lockWait - mark.lockWait
	p.Observed = observedSlots
	var m MaintTimes
	for i := range m {
		m[i] = now.maint[i] - mark.maint[i]
	}
	m.AddTo(&p)
	return p
}
