package server

import (
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/server/anthropic"
	"github.com/kiln-ai/kiln/server/openai"
	"github.com/kiln-ai/kiln/server/wire"
)

// errorFor maps any error a handler returned to the client-facing Error.
func errorFor(err error, retryAfter time.Duration) *wire.Error {
	var e *wire.Error
	if errors.As(err, &e) {
		return e
	}
	if be := bodyError(err, retryAfter); be != nil {
		return be
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &wire.Error{Status: http.StatusRequestEntityTooLarge, Type: wire.TypeInvalidRequest, Code: "request_too_large",
			Message: fmt.Sprintf("request body exceeds the limit of %d bytes (--max-body-bytes)", mbe.Limit), Err: err}
	}
	if e := fromDomain(err, retryAfter); e != nil {
		if errors.Is(err, engine.ErrTooLong) && e.Param == "" {
			e.Param = "messages"
		}
		return e
	}
	return &wire.Error{Status: http.StatusInternalServerError, Type: wire.TypeServer,
		Message: "internal server error", Err: err}
}

// errStopping is returned while the server drains for shutdown.
var errStopping = errors.New("server: stopping")

// writeError writes e as the response, in the shape of the route r
// matched: Anthropic's under /v1/messages, OpenAI's elsewhere. The
// caller has not written yet.
func writeError(w http.ResponseWriter, r *http.Request, e *wire.Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	if e.RetryAfter > 0 {
		secs := int((e.RetryAfter + time.Second - 1) / time.Second)
		h.Set("Retry-After", strconv.Itoa(max(secs, 1)))
	}
	w.WriteHeader(e.Status)
	if anthropic.IsRoute(r.Pattern) {
		_, _ = w.Write(anthropic.AppendError(nil, e))
		return
	}
	_, _ = w.Write(openai.AppendError(nil, e))
}

// handlerFunc is an HTTP handler that returns its error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// trackingWriter remembers whether the handler started its response, so the
// wrapper knows whether an error can still become a status and body, and
// bounds every write: each WriteHeader and Write (and so the Flush that
// follows it) must complete within timeout, so a client that stops
// reading cannot hold its handler (and the handler's stream slot) beyond
// the engine's eviction grace.
type trackingWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	wrote   bool
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wrote = true
	t.bound()
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	t.bound()
	return t.ResponseWriter.Write(b)
}

// bound sets the deadline of the next write. A writer without deadlines
// (a test's recorder) is left as it is.
func (t *trackingWriter) bound() {
	if t.timeout > 0 {
		_ = t.rc.SetWriteDeadline(time.Now().Add(t.timeout))
	}
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// handle is the one place where handler errors become responses: it maps
// the error to the OpenAI shape and status, logs the detail with the trace
// id, and recovers panics (re-panicking http.ErrAbortHandler as net/http
// expects).
func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: s.writeTimeout}
		// A deadline a previous request left on a kept-alive connection
		// must not fail this one's first write (the server sets none).
		_ = tw.rc.SetWriteDeadline(time.Time{})
		err := func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler { //nolint:errorlint // sentinel compared as net/http does
						panic(p)
					}
					err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				}
			}()
			return h(tw, r)
		}()
		if err == nil {
			return
		}
		e := errorFor(err, s.cfg.RetryAfter)
		s.logError(r, e)
		if tw.wrote {
			return // the response (a stream) is under way; the handler ended it as it could
		}
		writeError(tw, r, e)
	})
}

func (s *Server) logError(r *http.Request, e *wire.Error) {
	var ev *zerolog.Event
	switch {
	case e.Status == http.StatusServiceUnavailable || e.Status == http.StatusTooManyRequests:
		ev = s.log.Info() // expected under load or shutdown
	case e.Status >= 500:
		ev = s.log.Error()
	default:
		ev = s.log.Debug()
	}
	if sc := trace.SpanContextFromContext(r.Context()); sc.HasTraceID() {
		ev = ev.Str("trace_id", sc.TraceID().String())
	}
	ev.Int("status", e.Status).Str("method", wire.Clip(r.Method)).Str("path", wire.Clip(r.URL.Path)).
		Str("type", e.Type).Str("error_message", e.Message).AnErr("cause", e.Err).Msg("request failed")
}

// notFound answers any path the server does not serve.
func notFound(_ http.ResponseWriter, r *http.Request) error {
	return &wire.Error{Status: http.StatusNotFound, Type: wire.TypeNotFound, Code: "not_found",
		Message: fmt.Sprintf("no such endpoint: %s %s", wire.Clip(r.Method), wire.Clip(r.URL.Path))}
}

// methods restricts h to the given methods (GET implies HEAD), answering 405
// with an Allow header otherwise.
func methods(h handlerFunc, allowed ...string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		for _, m := range allowed {
			if r.Method == m || (m == http.MethodGet && r.Method == http.MethodHead) {
				return h(w, r)
			}
		}
		allow := ""
		for i, m := range allowed {
			if i > 0 {
				allow += ", "
			}
			allow += m
		}
		w.Header().Set("Allow", allow)
		return &wire.Error{Status: http.StatusMethodNotAllowed, Type: wire.TypeInvalidRequest, Code: "method_not_allowed",
			Message: fmt.Sprintf("method %s is not allowed on %s; use %s", wire.Clip(r.Method), wire.Clip(r.URL.Path), allow)}
	}
}
