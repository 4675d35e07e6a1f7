package telemetry

import (
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// MaintenanceRecord is one recent maintenance operation as the dashboard
// shows it.
type MaintenanceRecord struct {
	Kind    string    // trim, resize, adapter_swap, training_step
	Reason  string    // why it ran (maintenance, automatic_memory_policy, ...)
	Start   time.Time // when it began holding the device (or was asked for, while it waits)
	End     time.Time // zero while it runs
	Outcome string    // empty while it runs
	Summary string
}

// Duration is the operation's hold of the device (0 while it runs).
func (r MaintenanceRecord) Duration() time.Duration {
	if r.End.IsZero() {
		return 0
	}
	return timing.Elapsed(r.Start, r.End)
}

// RecentMaintenance returns up to n of the latest maintenance operations
// (at most 64 are kept), newest first.
func (t *Telemetry) RecentMaintenance(n int) []MaintenanceRecord {
	g := t.maint
	g.mu.Lock()
	defer g.mu.Unlock()
	n = max(min(n, recentMaintenance), 0)
	if g.n < uint64(n) {
		n = int(g.n)
	}
	out := make([]MaintenanceRecord, 0, n)
	for gen := g.n; len(out) < n; gen-- {
		op := &g.ops[gen%recentMaintenance]
		out = append(out, MaintenanceRecord{Kind: op.kind, Reason: op.reason, Start: op.from, End: op.to,
			Outcome: op.outcome, Summary: op.summary})
	}
	return out
}
