package server

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"

	"go.opentelemetry.io/otel/trace"
)

// requestIDHeader names every response with an id a user can quote and
// an operator can search for: the request's trace id (32 lowercase hex
// digits, the trace-id field of a W3C traceparent), so it finds the trace
// in the tracing back end and the log lines that carry trace_id. Untraced
// routes (probes, scrapes, the dashboard) get a random id of the same form.
const requestIDHeader = "X-Request-Id"

// requestID wraps h, which runs inside the route's HTTP server span (when
// it has one), to set the X-Request-Id response header.
func requestID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var id string
		if sc := trace.SpanContextFromContext(r.Context()); sc.HasTraceID() {
			id = sc.TraceID().String()
		} else {
			var b [16]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set(requestIDHeader, id)
		h.ServeHTTP(w, r)
	})
}
