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
)

// Error is an error the client sees: an HTTP status and the OpenAI error
// object {"error":{"message","type","param","code"}}. Handlers return it (or
// any error wrapping it); handle maps every other error to a 500 with a
// generic message, never leaking internal text.
type Error struct {
	Status     int
	Type       string // invalid_request_error, authentication_error, ...
	Message    string
	Param      string        // "" serializes as null
	Code       string        // "" serializes as null
	RetryAfter time.Duration // > 0 sets the Retry-After header (whole seconds, at least 1)
	Err        error         // the cause, for logs and errors.Is; never sent
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.Status, e.Type, e.Message, e.Err)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Error types of the OpenAI error object.
const (
	typeInvalidRequest = "invalid_request_error"
	typeAuthentication = "authentication_error"
	typePermission     = "permission_error"
	typeNotFound       = "not_found_error"
	typeRateLimit      = "rate_limit_error"
	typeServer         = "server_error"
)

// invalid is a 400 about one request parameter.
func invalid(param, code, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: param, Code: code,
		Message: fmt.Sprintf(format, args...)}
}

// errorFor maps any error a handler returned to the client-facing Error.
func errorFor(err error, retryAfter time.Duration) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if be := bodyError(err, retryAfter); be != nil {
		return be
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Type: typeInvalidRequest, Code: "request_too_large",
			Message: fmt.Sprintf("request body exceeds the limit of %d bytes (--max-body-bytes)", mbe.Limit), Err: err}
	}
	if e := fromDomain(err, retryAfter); e != nil {
		if errors.Is(err, engine.ErrTooLong) && e.Param == "" {
			e.Param = "messages"
		}
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Type: typeServer,
		Message: "internal server error", Err: err}
}

// errStopping is returned while the server drains for shutdown.
var errStopping = errors.New("server: stopping")

// appendError appends the OpenAI error body for e, with a newline.
func appendError(b []byte, e *Error) []byte {
	return append(appendErrorObject(b, e), '\n')
}

// appendErrorObject appends the OpenAI error object for e.
func appendErrorObject(b []byte, e *Error) []byte {
	b = append(b, `{"error":{"message":`...)
	b = appendJSONString(b, e.Message)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, e.Type)
	b = append(b, `,"param":`...)
	b = appendNullableString(b, e.Param)
	b = append(b, `,"code":`...)
	b = appendNullableString(b, e.Code)
	return append(b, "}}"...)
}

func appendNullableString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendJSONString(b, s)
}

// writeError writes e as the response, in the shape of the route r
// matched: Anthropic's under /v1/messages, OpenAI's elsewhere. The
// caller has not written yet.
func writeError(w http.ResponseWriter, r *http.Request, e *Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	if e.RetryAfter > 0 {
		secs := int((e.RetryAfter + time.Second - 1) / time.Second)
		h.Set("Retry-After", strconv.Itoa(max(secs, 1)))
	}
	w.WriteHeader(e.Status)
	if anthropicRoute(r.Pattern) {
		_, _ = w.Write(appendAnthropicError(nil, e))
		return
	}
	_, _ = w.Write(appendError(nil, e))
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

func (s *Server) logError(r *http.Request, e *Error) {
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
	ev.Int("status", e.Status).Str("method", clip(r.Method)).Str("path", clip(r.URL.Path)).
		Str("type", e.Type).Str("error_message", e.Message).AnErr("cause", e.Err).Msg("request failed")
}

// notFound answers any path the server does not serve.
func notFound(_ http.ResponseWriter, r *http.Request) error {
	return &Error{Status: http.StatusNotFound, Type: typeNotFound, Code: "not_found",
		Message: fmt.Sprintf("no such endpoint: %s %s", clip(r.Method), clip(r.URL.Path))}
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
		return &Error{Status: http.StatusMethodNotAllowed, Type: typeInvalidRequest, Code: "method_not_allowed",
			Message: fmt.Sprintf("method %s is not allowed on %s; use %s", clip(r.Method), clip(r.URL.Path), allow)}
	}
}
