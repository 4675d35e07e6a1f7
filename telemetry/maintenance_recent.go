package telemetry

import (
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// MaintenanceRecord is one recent maintenance operation as the dashboard
// shows it. A training job is one record for all its steps.
type MaintenanceRecord struct {
	ID      uint64    // the engine's operation identity
	Parent  uint64    // a training step's job
	Kind    string    // trim, resize, adapter_swap, training_job (training_step: OperationRecord only)
	Reason  string    // why it ran (maintenance, automatic_memory_policy, ...)
	Start   time.Time // when it began holding the device (when it was asked for, while it waits)
	End     time.Time // zero while it runs
	Hold    time.Duration
	Outcome string // empty while it runs
	Summary string // for a job, its latest step's
	Steps   int    // a training job's steps ended
}

// Duration is the operation's hold of the device (0 while it runs).
func (r MaintenanceRecord) Duration() time.Duration {
	if r.End.IsZero() {
		return 0
	}
	return timing.Elapsed(r.Start, r.End)
}

func (op *maintOp) record() MaintenanceRecord {
	return MaintenanceRecord{ID: op.id, Parent: op.parent, Kind: op.kind.String(), Reason: op.reason, Start: op.from, End: op.to,
		Hold: op.hold, Outcome: op.outcome, Summary: op.summary, Steps: op.steps}
}

// RecentMaintenance returns up to n of the latest maintenance operations
// (at most 64 are kept; a training job's steps are its one record), newest
// first.
func (t *Telemetry) RecentMaintenance(n int) []MaintenanceRecord {
	g := t.maint
	g.mu.Lock()
	defer g.mu.Unlock()
	r := &g.ops
	n = max(min(n, len(r.ops)), 0)
	if r.n < uint64(n) {
		n = int(r.n)
	}
	out := make([]MaintenanceRecord, 0, n)
	for i := r.n; len(out) < n; i-- {
		out = append(out, r.ops[(i-1)%uint64(len(r.ops))].record())
	}
	return out
}

// OperationRecord returns operation id (any kind, a training step too)
// while it is among the recent ones.
func (t *Telemetry) OperationRecord(id uint64) (MaintenanceRecord, bool) {
	g := t.maint
	g.mu.Lock()
	defer g.mu.Unlock()
	if op := g.find(id); op != nil {
		return op.record(), true
	}
	return MaintenanceRecord{}, false
}
