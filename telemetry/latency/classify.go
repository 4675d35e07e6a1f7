package latency

import (
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// Attribution is the classification of one inter-token gap (docs/latency-guide.md#stall-reasons).
type Attribution struct {
	Gap         time.Duration // this ready - previous ready
	Reason      Reason        // the chosen reason, or ReasonUnexplained
	Candidate   time.Duration // the chosen candidate's duration, kept when Reason fell back to unexplained
	Chosen      Reason        // the chosen candidate before the fallback rule
	Unexplained time.Duration // gap - max(actor sum, response delivery, largest backend phase), at least 0
}

// StallThreshold is the fixed minimum stall threshold, and the fixed
// threshold of the Prometheus stall counter.
const StallThreshold = 250 * time.Millisecond

// stallThresholdMs is the adaptive stall threshold of docs/latency-guide.md#stalls for gaps whose median is p50 (ms): max(250 ms, 5 x p50). A
// request's summary and the rolling window both count stalls with it.
func stallThresholdMs(p50 float64) float64 { return max(timing.Ms(StallThreshold), 5*p50) }

// Classify attributes a gap to a reason.
//
// Candidates, in the closed order: actor_queue, actor_admission,
// actor_prefill, actor_decode (decode minus the largest observed backend
// phase, at least 0), actor_cycle_idle, response_delivery, then each
// observed backend phase, gpu_lock_wait's being the wait minus the largest
// observed maintenance phase (resize, trim, adapter, training), at least 0:
// those intervals sit inside the wait as the backend phases sit inside decode, so
// the narrower cause wins and only the part of a wait that no typed phase
// explains is charged gpu_lock_wait. handler_queue and client_delivery happen after
// the token is ready and are never candidates; "unexplained" is not a
// candidate either, only the fallback (the literal reading of the rule:
// "the reason falls back to unexplained"). An unobserved backend phase is
// not a candidate (null is not zero). The largest candidate wins and a tie
// goes to the later one. If the winner is shorter than min(250 ms, gap/2)
// the reason is unexplained, and Candidate keeps the winner's duration.
func Classify(gap time.Duration, p *timing.Phases) Attribution {
	gap = max(gap, 0)
	var maxSlot time.Duration
	for s := range NumBackendPhases {
		if p.Has(s) {
			maxSlot = max(maxSlot, max(p.Backend[s], 0))
		}
	}
	queue, adm, pre := max(p.ActorQueue, 0), max(p.Admission, 0), max(p.Prefill, 0)
	dec, idle, del := max(p.Decode, 0), max(p.CycleIdle, 0), max(p.ResponseDelivery, 0)
	covered := max(queue+adm+pre+dec+idle, del, maxSlot)

	a := Attribution{Gap: gap, Unexplained: max(gap-covered, 0)}
	best, bestD := ReasonActorQueue, queue
	pick := func(r Reason, d time.Duration) {
		if d >= bestD {
			best, bestD = r, d
		}
	}
	pick(ReasonActorAdmission, adm)
	pick(ReasonActorPrefill, pre)
	pick(ReasonActorDecode, max(dec-maxSlot, 0))
	pick(ReasonActorCycleIdle, idle)
	pick(ReasonResponseDelivery, del)
	maint := maxMaintenance(p)
	for s := range NumBackendPhases {
		if !p.Has(s) {
			continue
		}
		d := max(p.Backend[s], 0)
		if s == BackendGPULockWait {
			d = max(d-maint, 0)
		}
		pick(BackendReason(s), d)
	}
	a.Chosen, a.Reason, a.Candidate = best, best, bestD
	if bestD < min(StallThreshold, gap/2) {
		a.Reason = ReasonUnexplained
	}
	return a
}

// maxMaintenance is the largest observed maintenance phase (resize, trim,
// adapter, training): what explains an ownership wait. 0 when none was
// observed.
func maxMaintenance(p *timing.Phases) time.Duration {
	var m time.Duration
	for s := BackendResize; s <= BackendTraining; s++ {
		if p.Has(s) {
			m = max(m, max(p.Backend[s], 0))
		}
	}
	return m
}
