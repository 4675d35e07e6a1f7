package latency

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/internal/timing"
)

const msD = time.Millisecond

func slots(kv ...any) timing.Phases {
	var p timing.Phases
	for i := 0; i < len(kv); i += 2 {
		p.Observe(kv[i].(BackendPhase), kv[i+1].(time.Duration))
	}
	return p
}

func TestClassify(t *testing.T) {
	withSlots := func(p timing.Phases, q timing.Phases) timing.Phases {
		p.Backend, p.Observed = q.Backend, q.Observed
		return p
	}
	tests := []struct {
		name   string
		gap    time.Duration
		phases timing.Phases
		want   Attribution
	}{
		{
			name:   "largest actor phase wins; unexplained is the uncovered rest",
			gap:    1000 * msD,
			phases: timing.Phases{Prefill: 600 * msD, Decode: 300 * msD},
			want:   Attribution{Gap: 1000 * msD, Reason: ReasonActorPrefill, Chosen: ReasonActorPrefill, Candidate: 600 * msD, Unexplained: 100 * msD},
		},
		{
			name:   "actor_decode candidate is decode minus the largest slot, so the slot wins",
			gap:    400 * msD,
			phases: withSlots(timing.Phases{Decode: 380 * msD}, slots(BackendSampling, 300*msD)),
			// candidates: actor_decode 80, sampling 300; covered = max(380, 0, 300)
			want: Attribution{Gap: 400 * msD, Reason: ReasonSampling, Chosen: ReasonSampling, Candidate: 300 * msD, Unexplained: 20 * msD},
		},
		{
			name:   "actor_decode residual wins over a small slot",
			gap:    600 * msD,
			phases: withSlots(timing.Phases{Decode: 500 * msD}, slots(BackendReadback, 100*msD)),
			want:   Attribution{Gap: 600 * msD, Reason: ReasonActorDecode, Chosen: ReasonActorDecode, Candidate: 400 * msD, Unexplained: 100 * msD},
		},
		{
			name:   "tie goes to the later reason (prefill vs decode)",
			gap:    600 * msD,
			phases: timing.Phases{Prefill: 300 * msD, Decode: 300 * msD},
			want:   Attribution{Gap: 600 * msD, Reason: ReasonActorDecode, Chosen: ReasonActorDecode, Candidate: 300 * msD},
		},
		{
			name:   "tie goes to the later reason (decode residual vs slot)",
			gap:    600 * msD,
			phases: withSlots(timing.Phases{Decode: 600 * msD}, slots(BackendReadback, 300*msD)),
			want:   Attribution{Gap: 600 * msD, Reason: ReasonReadback, Chosen: ReasonReadback, Candidate: 300 * msD},
		},
		{
			name:   "tie between two slots goes to the later slot",
			gap:    1000 * msD,
			phases: withSlots(timing.Phases{Decode: 1000 * msD}, slots(BackendGPULockWait, 500*msD, BackendTraining, 500*msD)),
			// actor_decode 500 ties too; training is last
			want: Attribution{Gap: 1000 * msD, Reason: ReasonTraining, Chosen: ReasonTraining, Candidate: 500 * msD},
		},
		{
			name:   "maintenance: a trim as wide as the ownership wait wins the tie (the narrower phase)",
			gap:    320 * msD,
			phases: withSlots(timing.Phases{Decode: 320 * msD}, slots(BackendGPULockWait, 300*msD, BackendTrim, 300*msD)),
			want:   Attribution{Gap: 320 * msD, Reason: ReasonTrim, Chosen: ReasonTrim, Candidate: 300 * msD},
		},
		{
			name:   "maintenance: a trim inside a wider wait wins: the wait's candidate is the wait minus the trim",
			gap:    420 * msD,
			phases: withSlots(timing.Phases{Decode: 420 * msD}, slots(BackendGPULockWait, 400*msD, BackendTrim, 300*msD)),
			want:   Attribution{Gap: 420 * msD, Reason: ReasonTrim, Chosen: ReasonTrim, Candidate: 300 * msD},
		},
		{
			name:   "maintenance: a training step a few ms shorter than the wait is training",
			gap:    920 * msD,
			phases: withSlots(timing.Phases{Decode: 915 * msD}, slots(BackendGPULockWait, 905*msD, BackendTraining, 903*msD)),
			want:   Attribution{Gap: 920 * msD, Reason: ReasonTraining, Chosen: ReasonTraining, Candidate: 903 * msD, Unexplained: 5 * msD},
		},
		{
			name:   "maintenance: the unexplained part of a wait larger than the typed phase is gpu_lock_wait",
			gap:    760 * msD,
			phases: withSlots(timing.Phases{Decode: 750 * msD}, slots(BackendGPULockWait, 700*msD, BackendTrim, 300*msD)),
			want:   Attribution{Gap: 760 * msD, Reason: ReasonGPULockWait, Chosen: ReasonGPULockWait, Candidate: 400 * msD, Unexplained: 10 * msD},
		},
		{
			name:   "maintenance: the largest typed phase is subtracted, never their sum",
			gap:    1000 * msD,
			phases: withSlots(timing.Phases{Decode: 990 * msD}, slots(BackendGPULockWait, 980*msD, BackendTrim, 300*msD, BackendTraining, 400*msD)),
			want:   Attribution{Gap: 1000 * msD, Reason: ReasonGPULockWait, Chosen: ReasonGPULockWait, Candidate: 580 * msD, Unexplained: 10 * msD},
		},
		{
			name:   "maintenance: a wait with no typed phase is gpu_lock_wait whole",
			gap:    600 * msD,
			phases: withSlots(timing.Phases{Decode: 590 * msD}, slots(BackendGPULockWait, 580*msD)),
			want:   Attribution{Gap: 600 * msD, Reason: ReasonGPULockWait, Chosen: ReasonGPULockWait, Candidate: 580 * msD, Unexplained: 10 * msD},
		},
		{
			name:   "long gap: a candidate under 250 ms falls back to unexplained, keeping its duration",
			gap:    2000 * msD,
			phases: timing.Phases{Prefill: 240 * msD},
			want:   Attribution{Gap: 2000 * msD, Reason: ReasonUnexplained, Chosen: ReasonActorPrefill, Candidate: 240 * msD, Unexplained: 1760 * msD},
		},
		{
			name:   "long gap: exactly 250 ms explains it",
			gap:    2000 * msD,
			phases: timing.Phases{Prefill: 250 * msD},
			want:   Attribution{Gap: 2000 * msD, Reason: ReasonActorPrefill, Chosen: ReasonActorPrefill, Candidate: 250 * msD, Unexplained: 1750 * msD},
		},
		{
			name:   "short gap: under half the gap is unexplained",
			gap:    100 * msD,
			phases: timing.Phases{Decode: 49 * msD},
			want:   Attribution{Gap: 100 * msD, Reason: ReasonUnexplained, Chosen: ReasonActorDecode, Candidate: 49 * msD, Unexplained: 51 * msD},
		},
		{
			name:   "short gap: exactly half the gap explains it",
			gap:    100 * msD,
			phases: timing.Phases{Decode: 50 * msD},
			want:   Attribution{Gap: 100 * msD, Reason: ReasonActorDecode, Chosen: ReasonActorDecode, Candidate: 50 * msD, Unexplained: 50 * msD},
		},
		{
			name:   "an unobserved slot is no candidate and covers nothing",
			gap:    1000 * msD,
			phases: timing.Phases{Decode: 600 * msD, Backend: [NumBackendPhases]time.Duration{BackendTraining: 900 * msD}},
			want:   Attribution{Gap: 1000 * msD, Reason: ReasonActorDecode, Chosen: ReasonActorDecode, Candidate: 600 * msD, Unexplained: 400 * msD},
		},
		{
			name:   "response delivery is a candidate and covers alone, not summed with actor phases",
			gap:    500 * msD,
			phases: timing.Phases{ResponseDelivery: 400 * msD, Decode: 100 * msD},
			want:   Attribution{Gap: 500 * msD, Reason: ReasonResponseDelivery, Chosen: ReasonResponseDelivery, Candidate: 400 * msD, Unexplained: 100 * msD},
		},
		{
			name:   "actor phases are summed for coverage",
			gap:    1000 * msD,
			phases: timing.Phases{ActorQueue: 100 * msD, Admission: 100 * msD, Prefill: 300 * msD, Decode: 200 * msD, CycleIdle: 100 * msD},
			want:   Attribution{Gap: 1000 * msD, Reason: ReasonActorPrefill, Chosen: ReasonActorPrefill, Candidate: 300 * msD, Unexplained: 200 * msD},
		},
		{
			name:   "coverage beyond the gap leaves no negative residual",
			gap:    100 * msD,
			phases: timing.Phases{Decode: 300 * msD},
			want:   Attribution{Gap: 100 * msD, Reason: ReasonActorDecode, Chosen: ReasonActorDecode, Candidate: 300 * msD},
		},
		{
			name:   "negative inputs count as zero",
			gap:    -5 * msD,
			phases: timing.Phases{Prefill: -7 * msD},
			// everything is 0: the last actor candidate wins the tie, and 0 >= min(250, 0)
			want: Attribution{Reason: ReasonResponseDelivery, Chosen: ReasonResponseDelivery},
		},
		{
			name: "nothing measured on a real gap is unexplained",
			gap:  300 * msD,
			want: Attribution{Gap: 300 * msD, Reason: ReasonUnexplained, Chosen: ReasonResponseDelivery, Unexplained: 300 * msD},
		},
		{
			name:   "cycle idle",
			gap:    800 * msD,
			phases: timing.Phases{CycleIdle: 700 * msD, Decode: 20 * msD},
			want:   Attribution{Gap: 800 * msD, Reason: ReasonActorCycleIdle, Chosen: ReasonActorCycleIdle, Candidate: 700 * msD, Unexplained: 80 * msD},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.gap, &tc.phases)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Classify(%v) mismatch (-want +got):\n%s", tc.gap, diff)
			}
		})
	}
}

func TestClassifyNeverPicksHandlerOrClientDelivery(t *testing.T) {
	// Every slot observed with the same duration as every actor phase:
	// the tie goes to training, and the two post-ready reasons never win.
	p := timing.Phases{ActorQueue: msD, Admission: msD, Prefill: msD, Decode: 2 * msD, CycleIdle: msD, ResponseDelivery: msD}
	for s := range NumBackendPhases {
		p.Observe(s, msD)
	}
	got := Classify(2*msD, &p)
	if got.Reason == ReasonHandlerQueue || got.Reason == ReasonClientDelivery || got.Reason != ReasonTraining {
		t.Errorf("Classify chose %v, want training", got.Reason)
	}
}
