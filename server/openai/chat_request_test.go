package openai

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/server/wire"
)

// TestParseDefaults: the smallest bodies of chat and legacy completions
// and the request they make, every default spelled out.
func TestParseDefaults(t *testing.T) {
	agent := wire.AgentFields{N: 1, ToolChoice: wire.ToolChoiceNone, Parallel: true}
	tests := []struct {
		name  string
		parse func([]byte) (*wire.Request, error)
		body  string
		want  *wire.Request
	}{
		{"chat", ParseChat, `{"model":"m","messages":[{"role":"developer","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`,
			&wire.Request{Model: "m", Messages: []wire.Message{{Role: "system", Content: "ab"}}, Agent: agent}},
		{"completion", ParseCompletion, `{"model":"m","prompt":["hi"]}`,
			&wire.Request{Model: "m", Prompt: "hi", Legacy: true, API: wire.APICompletions, MaxTokens: DefaultLegacyMaxTokens, Agent: agent}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.parse([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("request (-want +got):\n%s", d)
			}
		})
	}
}

// TestAppendError: the OpenAI error body, an empty param or code null.
func TestAppendError(t *testing.T) {
	e := &wire.Error{Status: 400, Type: wire.TypeInvalidRequest, Param: "n", Message: `'n' must be "small"`}
	want := `{"error":{"message":"'n' must be \"small\"","type":"invalid_request_error","param":"n","code":null}}` + "\n"
	if got := string(AppendError(nil, e)); got != want {
		t.Errorf("AppendError = %s, want %s", got, want)
	}
}
