package latency

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The closed sets, copied from docs/latency-guide.md#phases and #stall-reasons.
const (
	specReasons = `actor_queue, actor_admission,
actor_prefill, actor_decode, actor_cycle_idle, response_delivery,
handler_queue, client_delivery, sampling, readback, gpu_lock_wait,
graph_capture, graph_replay, synchronization, resize, trim, adapter,
training, unexplained`
	specPhases = "`actor_queue_ms`,\n`actor_admission_ms`, `tokenization_ms`, `prefill_ms`, `decode_ms`,\n`actor_cycle_idle_ms`, `sampling_ms`, `readback_ms`, `response_delivery_ms`,\n`handler_queue_ms`, `client_delivery_ms`, `gpu_lock_wait_ms`,\n`graph_capture_ms`, `graph_replay_ms`, `synchronization_ms`, `resize_ms`,\n`trim_ms`, `adapter_ms`, `training_ms`, `unexplained_ms`"
)

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		out = append(out, strings.Trim(strings.TrimSpace(f), "`"))
	}
	return out
}

func TestNamesFollowSPECOrder(t *testing.T) {
	var reasons, phases []string
	for r := range NumReasons {
		reasons = append(reasons, r.String())
		if got, ok := ParseReason(r.String()); !ok || got != r {
			t.Errorf("ParseReason(%q) = %v, %v", r, got, ok)
		}
	}
	for p := range NumPhases {
		phases = append(phases, p.Key())
		if got, ok := ParsePhase(p.String()); !ok || got != p {
			t.Errorf("ParsePhase(%q) = %v, %v", p, got, ok)
		}
	}
	if diff := cmp.Diff(splitList(specReasons), reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(splitList(specPhases), phases); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if NumReasons != 19 || NumPhases != 20 || NumBackendPhases != 10 {
		t.Errorf("set sizes %d %d %d, want 19 20 10", NumReasons, NumPhases, NumBackendPhases)
	}
	for s := range NumBackendPhases {
		if backendPhases[s].String() != s.String() || BackendReason(s).String() != s.String() {
			t.Errorf("backend phase %d: phase %v reason %v name %v disagree", s, backendPhases[s], BackendReason(s), s)
		}
	}
	// The engine's blocker kinds (shared through internal/timing) name
	// the stall reasons the latency core classifies their work under.
	for k, want := range map[BlockerKind]Reason{BlockerPrefill: ReasonActorPrefill, BlockerLockWait: ReasonGPULockWait} {
		if k.String() != want.String() {
			t.Errorf("blocker kind %d is %q, want the reason %q", k, k, want)
		}
	}
	if Reason(200).String() != "unknown" || Phase(200).String() != "unknown" {
		t.Error("out-of-range names are not unknown")
	}
}
