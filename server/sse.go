package server

import (
	"net/http"
)

// sseWriter frames server-sent events: each event is one "data: <json>\n\n"
// record, written and flushed at once so the client sees every token as it
// is produced. It reuses one buffer; only the handler goroutine uses it.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf []byte
}

func newSSEWriter(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	return &sseWriter{w: w, rc: http.NewResponseController(w), buf: make([]byte, 0, 1024)}
}

// start writes the status line and headers.
func (s *sseWriter) start() error {
	s.w.WriteHeader(http.StatusOK)
	return s.rc.Flush()
}

// event writes one data record built by fill (which appends the payload to
// its argument) and flushes it.
func (s *sseWriter) event(fill func([]byte) []byte) error {
	return s.write(append(s.buf[:0], "data: "...), fill)
}

// write completes the record b with fill's payload and a blank line,
// writes and flushes it.
func (s *sseWriter) write(b []byte, fill func([]byte) []byte) error {
	b = fill(b)
	b = append(b, '\n', '\n')
	s.buf = b
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// named writes one record of the named event type ("event: <name>"
// before its data line), as Responses and Anthropic Messages streams
// type their events.
func (s *sseWriter) named(name string, fill func([]byte) []byte) error {
	b := append(s.buf[:0], "event: "...)
	b = append(b, name...)
	return s.write(append(b, "\ndata: "...), fill)
}

// done writes the terminating "data: [DONE]" record.
func (s *sseWriter) done() error {
	if _, err := s.w.Write([]byte("data: [DONE]\n\n")); err != nil {
		return err
	}
	return s.rc.Flush()
}
