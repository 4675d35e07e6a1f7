package server

import (
	"encoding/json"
	"net/http"

	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry"
)

// writeJSON writes body with status.
func writeJSON(w http.ResponseWriter, status int, body []byte) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err := w.Write(body)
	return err
}

func marshalJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeJSON(w, status, append(b, '\n'))
}

// decodeStats serves GET /v1/stats/decode: the rolling 60 s window.
func (s *Server) decodeStats(w http.ResponseWriter, _ *http.Request) error {
	return marshalJSON(w, http.StatusOK, s.tel.DecodeStats())
}

// recentRequests serves GET /v1/stats/recent-requests, newest first.
func (s *Server) recentRequests(w http.ResponseWriter, _ *http.Request) error {
	recs := s.recent.newestFirst()
	b := make([]byte, 0, 256+len(recs)*1536)
	b = append(b, `{"object":"list","capacity":`...)
	b = wire.AppendInt(b, int64(s.recent.capacity()))
	b = append(b, `,"text_capture":`...)
	if s.cfg.RecentRequestText {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	b = append(b, `,"data":[`...)
	for i := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		b = recs[i].appendJSON(b)
	}
	b = append(b, "]}\n"...)
	return writeJSON(w, http.StatusOK, b)
}

// countRejected counts a chat request refused before it started.
func (s *Server) countRejected() {
	s.countOutcome(telemetry.OutcomeRejected)
	s.tel.CountRejected()
}

// countOutcome counts a request's outcome for /health; telemetry owns the
// outcome set, and a value outside it counts as an error, as its label
// does.
func (s *Server) countOutcome(o telemetry.Outcome) {
	if o >= telemetry.NumOutcomes {
		o = telemetry.OutcomeError
	}
	s.outcomes[o].Add(1)
}
