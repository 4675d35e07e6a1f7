package server

import (
	"net/http"

	"github.com/kiln-ai/kiln/internal/timing"
)

// recentMaintenanceShown is how many operations GET /v1/maintenance/recent
// lists (the telemetry ring keeps 64).
const recentMaintenanceShown = 20

// maintenanceOpJSON is one operation of GET /v1/maintenance/recent.
type maintenanceOpJSON struct {
	ID         uint64   `json:"id"`     // the engine's operation identity (a diagnosis record's blockers name it)
	Kind       string   `json:"kind"`   // trim, resize, adapter_swap, training_job
	Reason     string   `json:"reason"` // maintenance, automatic_memory_policy, ...
	Start      string   `json:"start"`  // RFC 3339 with milliseconds
	DurationMs *float64 `json:"duration_ms"`
	Running    bool     `json:"running"`
	Outcome    string   `json:"outcome"` // "" while running
	Summary    string   `json:"summary"`
	HoldMs     float64  `json:"hold_ms"` // exclusive ownership held (a job's: its steps')
	Steps      int      `json:"steps"`   // a training job's steps ended; 0 for the other kinds
}

// maintenanceRecentJSON is the reply of GET /v1/maintenance/recent.
type maintenanceRecentJSON struct {
	Object     string              `json:"object"` // "kiln.maintenance.recent"
	Operations []maintenanceOpJSON `json:"operations"`
}

// maintenanceRecent serves GET /v1/maintenance/recent: the latest
// maintenance operations (trims, resizes, adapter swaps, training steps),
// newest first, for the dashboard's maintenance panel.
func (s *Server) maintenanceRecent(w http.ResponseWriter, _ *http.Request) error {
	recs := s.tel.RecentMaintenance(recentMaintenanceShown)
	out := maintenanceRecentJSON{Object: "kiln.maintenance.recent", Operations: make([]maintenanceOpJSON, 0, len(recs))}
	for _, r := range recs {
		op := maintenanceOpJSON{ID: r.ID, Kind: r.Kind, Reason: r.Reason, Start: r.Start.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
			Running: r.End.IsZero(), Outcome: r.Outcome, Summary: r.Summary, HoldMs: timing.Ms(r.Hold), Steps: r.Steps}
		if !op.Running {
			d := timing.Ms(r.Duration())
			op.DurationMs = &d
		}
		out.Operations = append(out.Operations, op)
	}
	return marshalJSON(w, http.StatusOK, out)
}
