package wire

import (
	"fmt"
	"net/http"
	"time"
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

// Error describes the error for logs: the status, type, message and cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.Status, e.Type, e.Message, e.Err)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message)
}

// Unwrap is the cause.
func (e *Error) Unwrap() error { return e.Err }

// Error types of the OpenAI error object.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeAuthentication = "authentication_error"
	TypePermission     = "permission_error"
	TypeNotFound       = "not_found_error"
	TypeRateLimit      = "rate_limit_error"
	TypeServer         = "server_error"
)

// Invalid is a 400 about one request parameter.
func Invalid(param, code, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Param: param, Code: code,
		Message: fmt.Sprintf(format, args...)}
}

// ErrCut is what a request cut at the end of the shutdown grace gets: a
// stream gets it in its wire's error event (wire.cut).
var ErrCut = &Error{Status: http.StatusServiceUnavailable, Type: TypeServer, Code: "service_unavailable",
	Message: "the server shut down before the request completed; retry it"}
