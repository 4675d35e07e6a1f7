package anthropic

import (
	"net/http"
	"testing"

	"github.com/kiln-ai/kiln/server/wire"
)

// TestIsRoute: the Messages routes and only they speak Anthropic's
// error shape.
func TestIsRoute(t *testing.T) {
	for pattern, want := range map[string]bool{MessagesPath: true, CountTokensPath: true, "/v1/messagesx": false, "/v1/chat/completions": false, "": false} {
		if got := IsRoute(pattern); got != want {
			t.Errorf("IsRoute(%q) = %t, want %t", pattern, got, want)
		}
	}
}

// TestAppendError: Anthropic's type for the status, and a message that
// names the parameter when it does not already.
func TestAppendError(t *testing.T) {
	tests := []struct {
		e    *wire.Error
		want string
	}{
		{&wire.Error{Status: http.StatusBadRequest, Param: "max_tokens", Message: "must be at least 1"},
			`{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be at least 1"}}` + "\n"},
		{&wire.Error{Status: http.StatusBadRequest, Param: "max_tokens", Message: "missing required parameter: 'max_tokens'"},
			`{"type":"error","error":{"type":"invalid_request_error","message":"missing required parameter: 'max_tokens'"}}` + "\n"},
		{&wire.Error{Status: http.StatusTooManyRequests, Message: "busy"},
			`{"type":"error","error":{"type":"rate_limit_error","message":"busy"}}` + "\n"},
	}
	for _, tt := range tests {
		if got := string(AppendError(nil, tt.e)); got != tt.want {
			t.Errorf("AppendError(%d) = %s, want %s", tt.e.Status, got, tt.want)
		}
	}
}
