package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kiln-ai/kiln/telemetry"
)

// namedOp is an operation a diagnosis record's stalled gap names.
type namedOp struct {
	reason  string // the gap's reason
	blocker string // the blocker's kind: operation, gpu_lock_wait
	id      int64
	kind    string
	summary string
	panel   int64
}

// opJSON is an operation as a diagnosis record names it.
type opJSON struct {
	ID      int64  `json:"id"`
	Kind    string `json:"kind"`
	Summary string `json:"summary"`
	PanelID int64  `json:"panel_id"`
}

// blockerJSON is a blocker of a diagnosis record.
type blockerJSON struct {
	Kind       string  `json:"kind"`
	Operation  *opJSON `json:"operation"`
	DurationMs float64 `json:"duration_ms"`
}

// diagnosisOf fetches request id's diagnosis record: its stalled gaps'
// reasons and blockers, and what it waited behind for admission.
func (h *harness) diagnosisOf(t *testing.T, id string) (stalls []struct {
	Reason   string        `json:"reason"`
	Blockers []blockerJSON `json:"blockers"`
}, queued []blockerJSON) {
	t.Helper()
	code, _, raw := h.do(http.MethodGet, "/v1/stats/recent-requests/"+id, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("detail of %s: HTTP %d: %s", id, code, raw)
	}
	var d struct {
		Diagnosis struct {
			Stalls []struct {
				Reason   string        `json:"reason"`
				Blockers []blockerJSON `json:"blockers"`
			} `json:"stalls"`
			QueuedBehind []blockerJSON `json:"queued_behind"`
		} `json:"diagnosis"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("detail: %v: %s", err, raw)
	}
	return d.Diagnosis.Stalls, d.Diagnosis.QueuedBehind
}

// diagnosisOps returns the operations request id's stalled gaps name.
func (h *harness) diagnosisOps(t *testing.T, id string) []namedOp {
	t.Helper()
	stalls, _ := h.diagnosisOf(t, id)
	var out []namedOp
	for _, s := range stalls {
		for _, b := range s.Blockers {
			if op := b.Operation; op != nil {
				out = append(out, namedOp{reason: s.Reason, blocker: b.Kind, id: op.ID, kind: op.Kind, summary: op.Summary, panel: op.PanelID})
			}
		}
	}
	return out
}

// opID is the engine's operation identity on a maintenance span.
func opID(s tracetest.SpanStub) int64 {
	for _, kv := range s.Attributes {
		if string(kv.Key) == telemetry.AttrOperationID {
			return kv.Value.AsInt64()
		}
	}
	return 0
}

// linkedOpIDs are the operation identities a span's links carry.
func linkedOpIDs(s tracetest.SpanStub) []int64 {
	var ids []int64
	for _, l := range s.Links {
		for _, kv := range l.Attributes {
			if string(kv.Key) == telemetry.AttrOperationID {
				ids = append(ids, kv.Value.AsInt64())
			}
		}
	}
	return ids
}

// checkNamed asserts that every stalled gap of reason in the diagnosis
// record names, by identity, one of the operations spans (of the one kind
// reason is charged for), with a summary that starts with prefix, as
// operation blockers and as the lock wait's operation; and that every
// stall span of reason links to such an operation by the same identity.
func checkNamed(t *testing.T, h *harness, id, reason, kind, prefix string, ops tracetest.SpanStubs) {
	t.Helper()
	ids := map[int64]bool{}
	for _, s := range ops {
		ids[opID(s)] = true
	}
	named := 0
	for _, n := range h.diagnosisOps(t, id) {
		if n.reason != reason {
			continue
		}
		named++
		if !ids[n.id] || n.kind != kind || !strings.HasPrefix(n.summary, prefix) || n.panel == 0 {
			t.Errorf("a %s gap names %+v; want a %s among %v, summary %q...", reason, n, kind, ids, prefix)
		}
	}
	if named == 0 {
		t.Errorf("no %s gap of the diagnosis record names an operation", reason)
	}
	for _, st := range stallsWithReason(h.spans.GetSpans(), reason) {
		got := linkedOpIDs(st)
		if len(got) != 1 || !ids[got[0]] {
			t.Errorf("a %s stall span links to operations %v; want one of %v", reason, got, ids)
		}
	}
}

// checkQueuedBehind asserts that request id's diagnosis record names
// operation op (its span), of kind, as what the request waited behind for
// admission.
func checkQueuedBehind(t *testing.T, h *harness, id, kind string, op tracetest.SpanStub) {
	t.Helper()
	_, q := h.diagnosisOf(t, id)
	if len(q) != 1 || q[0].Kind != "operation" || q[0].Operation == nil || q[0].Operation.ID != opID(op) ||
		q[0].Operation.Kind != kind || q[0].DurationMs <= 0 {
		t.Errorf("queued_behind of %s: %+v; want the %s %d", id, q, kind, opID(op))
	}
}
