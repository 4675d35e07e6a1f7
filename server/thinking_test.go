package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/server/anthropic"
	"github.com/kiln-ai/kiln/server/openai"
	"github.com/kiln-ai/kiln/server/responses"
	"github.com/kiln-ai/kiln/server/wire"
)

// TestThinkingSwitches: Anthropic's thinking, Responses' reasoning.effort
// and chat_template_kwargs all become the template's enable_thinking
// (chat_template_kwargs wins when both are given), and reach the
// template: a prompt rendered with thinking off is the one that closes
// the think section.
func TestThinkingSwitches(t *testing.T) {
	off, on := map[string]any{"enable_thinking": false}, map[string]any{"enable_thinking": true}
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, tt := range []struct {
		name  string
		parse func([]byte) (*wire.Request, error)
		body  string
		want  map[string]any
	}{
		{"messages disabled", anthropicParse, `{"model":"m","max_tokens":1,` + msgs + `,"thinking":{"type":"disabled"}}`, off},
		{"messages enabled", anthropicParse, `{"model":"m","max_tokens":1,` + msgs + `,"thinking":{"type":"enabled","budget_tokens":1024}}`, on},
		{"messages adaptive", anthropicParse, `{"model":"m","max_tokens":1,` + msgs + `,"thinking":{"type":"adaptive"}}`, nil},
		{"kwargs win", anthropicParse, `{"model":"m","max_tokens":1,` + msgs + `,"thinking":{"type":"disabled"},"chat_template_kwargs":{"enable_thinking":true}}`, on},
		{"responses none", responsesParse, `{"model":"m","input":"hi","reasoning":{"effort":"none"}}`, off},
		{"responses high", responsesParse, `{"model":"m","input":"hi","reasoning":{"effort":"high"}}`, on},
		{"responses no effort", responsesParse, `{"model":"m","input":"hi","reasoning":{"summary":"auto"}}`, nil},
		{"chat kwargs", openai.ParseChat, `{"model":"m",` + msgs + `,"chat_template_kwargs":{"enable_thinking":false,"x":[1]}}`, map[string]any{"enable_thinking": false, "x": []any{1.0}}},
	} {
		req, err := tt.parse([]byte(tt.body))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if d := cmp.Diff(tt.want, req.TemplateKwargs); d != "" {
			t.Errorf("%s: kwargs (-want +got):\n%s", tt.name, d)
		}
	}
	for _, body := range []string{
		`{"model":"m",` + msgs + `,"chat_template_kwargs":{"messages":[]}}`,
		`{"model":"m",` + msgs + `,"chat_template_kwargs":[1]}`,
	} {
		if _, err := openai.ParseChat([]byte(body)); err == nil {
			t.Errorf("%s: accepted", body)
		}
	}
	if _, err := anthropicParse([]byte(`{"model":"m","max_tokens":1,` + msgs + `,"thinking":{"type":"maybe"}}`)); err == nil {
		t.Error("thinking type maybe accepted")
	}

	// The switch reaches the template.
	h := newHarness(t)
	tmpl, err := chat.Parse(`{% for m in messages %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endfor %}<|im_start|>assistant
{% if enable_thinking is defined and not enable_thinking %}<think>

</think>

{% endif %}`)
	if err != nil {
		t.Fatal(err)
	}
	h.srv.tmpl = tmpl
	count := func(extra string) int {
		t.Helper()
		status, _, body := h.do(http.MethodPost, anthropic.CountTokensPath, `{"model":"`+h.model.ID+`",`+msgs+extra+`}`, nil)
		var n struct {
			InputTokens int `json:"input_tokens"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &n) != nil {
			t.Fatalf("count_tokens %s: %d %s", extra, status, body)
		}
		return n.InputTokens
	}
	if plain, closed := count(""), count(`,"thinking":{"type":"disabled"}`); closed <= plain {
		t.Errorf("thinking disabled renders %d tokens, the default %d: the switch did not reach the template", closed, plain)
	}
}

func anthropicParse(b []byte) (*wire.Request, error) { return anthropic.Parse(b) }

func responsesParse(b []byte) (*wire.Request, error) {
	req, _, err := responses.Parse(b, responses.NewStore(nil, 0))
	return req, err
}
