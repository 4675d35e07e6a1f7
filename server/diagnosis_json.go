package server

import (
	"net/http"
	"strconv"

	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// backendName is the backend the diagnosis reports; its phases are the
// ones the CPU engine can produce.
const backendName = "cpu"

// notApplicablePhases are the phases the CPU backend can never produce:
// it has no device readback, no graphs and no host/device
// synchronization. They are always null in its summaries; the dashboard
// lists them once, collapsed, rather than as missing values. The
// maintenance phases (resize, trim, adapter, training) are not among them:
// the engine measures each whenever such an operation overlapped the
// request (engine.MaintTimes), so a null there means "not observed in this
// request", not "cannot happen" (TestNotApplicablePhasesNeverObserved).
var notApplicablePhases = []latency.Phase{
	latency.PhaseReadback, latency.PhaseGraphCapture, latency.PhaseGraphReplay,
	latency.PhaseSynchronization,
}

// recentRequest serves GET /v1/stats/recent-requests/{id}: the record of
// the list plus its "diagnosis" object (docs/http-api.md).
func (s *Server) recentRequest(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	rec, ok := s.recent.find(id)
	if !ok {
		return &wire.Error{Status: http.StatusNotFound, Type: wire.TypeInvalidRequest, Param: "id", Code: "request_not_found",
			Message: "no request " + quoteID(id) + " in the recent-requests ring (it may have been evicted, or --recent-requests is 0)"}
	}
	b := make([]byte, 0, 2048+len(rec.diag.tokens)*420)
	b = rec.appendJSON(b)
	b = b[:len(b)-1] // reopen the object
	b = append(b, `,"diagnosis":`...)
	b = rec.diag.appendJSON(b)
	b = append(b, "}\n"...)
	return writeJSON(w, http.StatusOK, b)
}

// quoteID bounds an id echoed in an error message.
func quoteID(id string) string {
	if len(id) > 64 {
		id = id[:64] + "…"
	}
	return `"` + id + `"`
}

func (d *diagnosis) appendJSON(b []byte) []byte {
	b = append(b, `{"backend":"`+backendName+`","not_applicable_phases":[`...)
	for i, p := range notApplicablePhases {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendJSONString(b, p.Key())
	}
	b = append(b, `],"own_prefill_ms":`...)
	b = wire.AppendNullFloat(b, d.ownPrefillMs)
	b = append(b, `,"tokens_released":`...)
	b = appendBool(b, d.tokensReleased)
	b = append(b, `,"tokens":[`...)
	for i := range d.tokens {
		if i > 0 {
			b = append(b, ',')
		}
		e := d.tokens[i].event(d.firstIndex + i)
		b = e.AppendJSON(b)
	}
	b = append(b, `],"stalls_dropped":`...)
	b = wire.AppendInt(b, int64(d.stallsDropped))
	b = append(b, `,"stalls":[`...)
	for i := range d.stalls {
		if i > 0 {
			b = append(b, ',')
		}
		b = d.stalls[i].appendJSON(b)
	}
	b = append(b, `],"queued_behind":[`...)
	for i := range d.queuedBehind {
		if i > 0 {
			b = append(b, ',')
		}
		b = d.queuedBehind[i].appendJSON(b)
	}
	return append(b, "]}"...)
}

func (s *stallRow) appendJSON(b []byte) []byte {
	b = append(b, `{"token_index":`...)
	b = wire.AppendInt(b, int64(s.index))
	b = append(b, `,"gap_ms":`...)
	b = latency.AppendFloat(b, s.gapMs)
	b = append(b, `,"reason":`...)
	b = wire.AppendJSONString(b, s.reason.String())
	b = append(b, `,"candidate_ms":`...)
	b = latency.AppendFloat(b, s.candidateMs)
	b = append(b, `,"blockers":[`...)
	for i := range s.blockers {
		if i > 0 {
			b = append(b, ',')
		}
		b = s.blockers[i].appendJSON(b)
	}
	return append(b, "]}"...)
}

// appendJSON writes a blocker: for a prefill, the blocking request's
// public id (null when it is no longer known) and whether it is the
// stalled request itself; for a lock wait, the operation that held the
// device (null: the engine does not name maintenance operations yet).
func (bl *blockerRow) appendJSON(b []byte) []byte {
	b = append(b, `{"kind":`...)
	b = wire.AppendJSONString(b, bl.kind.String())
	switch bl.kind {
	case latency.BlockerPrefill:
		b = append(b, `,"request_id":`...)
		if bl.requestID != "" {
			b = wire.AppendJSONString(b, bl.requestID)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"self":`...)
		b = appendBool(b, bl.self)
	case latency.BlockerLockWait, latency.BlockerOperation:
		b = append(b, `,"operation":`...)
		b = bl.appendOperation(b)
	}
	b = append(b, `,"start_offset_ms":`...)
	b = latency.AppendFloat(b, bl.startOffsetMs)
	b = append(b, `,"duration_ms":`...)
	b = latency.AppendFloat(b, bl.durationMs)
	return append(b, '}')
}

// appendOperation writes the blocker's operation as the Maintenance panel
// lists it (panel_id: its row there, a training step's job), or null.
func (bl *blockerRow) appendOperation(b []byte) []byte {
	r := bl.opRec
	if r == nil {
		return append(b, "null"...)
	}
	panel := r.ID
	if r.Parent != 0 {
		panel = r.Parent
	}
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, r.ID, 10)
	b = append(b, `,"kind":`...)
	b = wire.AppendJSONString(b, r.Kind)
	b = append(b, `,"reason":`...)
	b = wire.AppendJSONString(b, r.Reason)
	b = append(b, `,"summary":`...)
	b = wire.AppendJSONString(b, r.Summary)
	b = append(b, `,"outcome":`...)
	b = wire.AppendJSONString(b, r.Outcome)
	b = append(b, `,"panel_id":`...)
	b = strconv.AppendUint(b, panel, 10)
	return append(b, '}')
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}
