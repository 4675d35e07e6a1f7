package anthropic

import (
	"net/http"
	"strings"

	"github.com/kiln-ai/kiln/server/wire"
)

// Anthropic's error shape: {"type":"error","error":{"type","message"}},
// for every route under /v1/messages, whatever refused the request (the
// access check, the body limit, the drain gate, the handler). The status
// is the same as the OpenAI routes'; the type is Anthropic's name for it.

// IsRoute reports whether the matched route pattern speaks
// Anthropic's shape.
func IsRoute(pattern string) bool {
	return pattern == MessagesPath || strings.HasPrefix(pattern, MessagesPath+"/")
}

// anthropicType is Anthropic's error type for a status.
func anthropicType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// appendAnthropicErrorBody appends `,"error":{"type","message"}`, the
// rest of an object that opened with "type":"error". Anthropic's error
// has no param field: the message names the parameter when it does not
// already.
func appendAnthropicErrorBody(b []byte, e *wire.Error) []byte {
	b = append(b, `,"error":{"type":`...)
	b = wire.AppendJSONString(b, anthropicType(e.Status))
	b = append(b, `,"message":`...)
	msg := e.Message
	if e.Param != "" && !strings.Contains(msg, e.Param) {
		msg = e.Param + ": " + msg
	}
	b = wire.AppendJSONString(b, msg)
	return append(b, '}')
}

// AppendError appends the whole error body, with a newline.
func AppendError(b []byte, e *wire.Error) []byte {
	b = append(b, `{"type":"error"`...)
	b = appendAnthropicErrorBody(b, e)
	return append(b, "}\n"...)
}
