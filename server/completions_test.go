package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/server/openai"
	"github.com/kiln-ai/kiln/server/wire"
)

// chatOnly are the parameters of chat's bad-input table that a legacy
// completion does not have (messages) or reads with another type
// (logprobs is an integer there) or ignores (tools, response_format).
var chatOnly = []string{"messages", "logprobs", "top_logprobs", "tools", "functions", "function_call", "response_format", "tool_choice", "parallel_tool_calls"}

// legacyBadRequests are the malformed bodies of /v1/completions alone.
var legacyBadRequests = []badRequest{
	{"missing prompt", `{"model":"m"}`, 400, "prompt", "missing_required_parameter"},
	{"prompt number", `{"model":"m","prompt":5}`, 400, "prompt", "invalid_type"},
	{"prompt empty", `{"model":"m","prompt":""}`, 400, "prompt", "invalid_value"},
	{"two prompts", `{"model":"m","prompt":["a","b"]}`, 400, "prompt", "invalid_value"},
	{"token-id prompt", `{"model":"m","prompt":[[1,2]]}`, 400, "prompt[0]", "invalid_type"},
	{"logprobs above 5", `{"model":"m","prompt":"x","logprobs":6}`, 400, "logprobs", "invalid_value"},
	{"logprobs negative", `{"model":"m","prompt":"x","logprobs":-1}`, 400, "logprobs", "invalid_value"},
	{"best_of other than n", `{"model":"m","prompt":"x","n":2,"best_of":3}`, 400, "best_of", "invalid_value"},
	{"echo requested", `{"model":"m","prompt":"x","echo":true}`, 400, "echo", "unsupported_parameter"},
	{"suffix requested", `{"model":"m","prompt":"x","suffix":"end"}`, 400, "suffix", "unsupported_parameter"},
	{"best_of two", `{"model":"m","prompt":"x","best_of":2}`, 400, "best_of", "invalid_value"},
}

// badRequestsFor derives a route's bad-input table from chat's: every
// body-level mistake applies to every route; the parameter mistakes apply
// to /v1/completions with the messages swapped for a prompt; the
// tokenize routes add their own.
func badRequestsFor(path string) []badRequest {
	const msgs = `"messages":[{"role":"user","content":"x"}]`
	var out []badRequest
	for _, b := range badRequests {
		switch {
		case path == chatPath:
			out = append(out, b)
		case b.param == "":
			out = append(out, b) // not JSON, not an object: the same everywhere
		case path == completionsPath && !isChatOnly(b.param) && strings.Contains(b.body, msgs):
			b.body = strings.Replace(b.body, msgs, `"prompt":"x"`, 1)
			out = append(out, b)
		}
	}
	switch path {
	case completionsPath:
		out = append(out, legacyBadRequests...)
	case "/tokenize":
		out = append(out,
			badRequest{"missing content", `{"add_special":true}`, 400, "content", "missing_required_parameter"},
			badRequest{"content number", `{"content":5}`, 400, "content", "invalid_type"},
			badRequest{"add_special string", `{"content":"x","add_special":"yes"}`, 400, "add_special", "invalid_type"})
	case "/detokenize":
		out = append(out,
			badRequest{"missing tokens", `{}`, 400, "tokens", "missing_required_parameter"},
			badRequest{"tokens string", `{"tokens":"1 2"}`, 400, "tokens", "invalid_type"},
			badRequest{"token string", `{"tokens":[1,"2"]}`, 400, "tokens[1]", "invalid_type"},
			badRequest{"token decimal", `{"tokens":[1.5]}`, 400, "tokens[0]", "invalid_type"},
			badRequest{"token negative", `{"tokens":[3,-1]}`, 400, "tokens[1]", "invalid_value"},
			badRequest{"token outside the vocabulary", `{"tokens":[99999999]}`, 400, "tokens[0]", "invalid_value"})
	}
	return out
}

func isChatOnly(param string) bool {
	for _, p := range chatOnly {
		if param == p || strings.HasPrefix(param, p+"[") || strings.HasPrefix(param, p+".") {
			return true
		}
	}
	return false
}

func TestParseCompletionRequestInvalid(t *testing.T) {
	cases := badRequestsFor(completionsPath)
	if len(cases) < 35 {
		t.Fatalf("only %d bad legacy requests derived", len(cases))
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openai.ParseCompletion([]byte(tt.body))
			var e *wire.Error
			if !errors.As(err, &e) {
				t.Fatalf("parseCompletionRequest error = %v, want *Error", err)
			}
			got := badRequest{tt.name, tt.body, e.Status, e.Param, e.Code}
			if diff := cmp.Diff(tt, got, cmp.AllowUnexported(badRequest{})); diff != "" {
				t.Errorf("error (-want +got):\n%s\nmessage: %s", diff, e.Message)
			}
		})
	}
}

func TestParseCompletionRequestValid(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *wire.Request
	}{
		{"string prompt, OpenAI's default max_tokens", `{"model":"m","prompt":"Once"}`,
			&wire.Request{Agent: plainAgent, Legacy: true, API: wire.APICompletions, Model: "m", Prompt: "Once", MaxTokens: openai.DefaultLegacyMaxTokens}},
		{"array of one prompt and the shared options", `{"model":"m","prompt":["Once"],"max_tokens":3,"stream":true,"stop":"\n","top_k":5,"min_p":0.1,"echo":false,"logprobs":null,"best_of":1,"suffix":""}`,
			&wire.Request{Agent: plainAgent, Legacy: true, API: wire.APICompletions, Model: "m", Prompt: "Once", MaxTokens: 3, Stream: true, Stop: []string{"\n"}, TopK: 5, Penalties: wire.Penalties{MinP: 0.1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := openai.ParseCompletion([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(wire.Request{}, wire.Message{}, wire.Penalties{})); d != "" {
				t.Errorf("request (-want +got):\n%s", d)
			}
		})
	}
}

// TestCompletions: /v1/completions answers text_completion objects, whole
// or streamed, with the same text both ways, and include_performance as
// chat does.
func TestCompletions(t *testing.T) {
	h := newHarness(t)
	body := func(extra map[string]any) map[string]any {
		b := map[string]any{"model": h.model.ID, "prompt": "The sun is", "max_tokens": 8, "temperature": 0}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	status, _, raw := h.do(http.MethodPost, completionsPath, body(map[string]any{"include_performance": true}), nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, raw)
	}
	var whole struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Text         string  `json:"text"`
			Index        int     `json:"index"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
		Metadata struct {
			Performance map[string]any `json:"performance"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &whole); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if !strings.HasPrefix(whole.ID, "cmpl-") || whole.Object != "text_completion" || whole.Model != h.model.ID {
		t.Errorf("id %q object %q model %q", whole.ID, whole.Object, whole.Model)
	}
	if len(whole.Choices) != 1 || whole.Choices[0].FinishReason == nil || *whole.Choices[0].FinishReason != "length" {
		t.Fatalf("choices %+v: want one that ended by length", whole.Choices)
	}
	if whole.Usage.CompletionTokens != 8 || whole.Usage.PromptTokens < 2 {
		t.Errorf("usage %v", whole.Usage)
	}
	if whole.Metadata.Performance == nil {
		t.Error("include_performance: true gave no metadata.performance")
	}

	_, _, sraw := h.do(http.MethodPost, completionsPath, body(map[string]any{"stream": true, "include_performance": true,
		"stream_options": map[string]any{"include_usage": true}}), nil)
	p := parseStream(t, sraw)
	if got := p.content(); got != whole.Choices[0].Text {
		t.Errorf("streamed text %q, whole %q", got, whole.Choices[0].Text)
	}
	if len(p.events) != 8 {
		t.Errorf("%d timing events, want 8", len(p.events))
	}
	if p.terminal == nil || p.order[len(p.order)-1] != "usage" {
		t.Errorf("stream order %v: want a finish chunk and a usage chunk last", p.order)
	}
	for _, c := range p.chunks {
		if c["object"] != "text_completion" {
			t.Errorf("chunk object %v", c["object"])
		}
	}
}

// TestTokenizeRoundTrip: /detokenize inverts /tokenize, and add_special
// adds BOS only when asked.
func TestTokenizeRoundTrip(t *testing.T) {
	h := newHarness(t)
	text := "The sun rose over the quiet sea."
	var plain, special struct{ Tokens []int }
	for _, c := range []struct {
		add bool
		out *struct{ Tokens []int }
	}{{false, &plain}, {true, &special}} {
		status, _, raw := h.do(http.MethodPost, "/tokenize", map[string]any{"content": text, "add_special": c.add}, nil)
		if status != http.StatusOK {
			t.Fatalf("tokenize: %d %s", status, raw)
		}
		if err := json.Unmarshal(raw, c.out); err != nil {
			t.Fatal(err)
		}
	}
	if len(plain.Tokens) == 0 {
		t.Fatal("no tokens")
	}
	if d := cmp.Diff(h.model.Tokenizer.EncodeSpecial(text), plain.Tokens); d != "" {
		t.Errorf("tokens (-want +got):\n%s", d)
	}
	if bos := h.model.Tokenizer.BOS(); h.model.Tokenizer.AddBOS() && (len(special.Tokens) != len(plain.Tokens)+1 || special.Tokens[0] != bos) {
		t.Errorf("add_special: %v, want BOS %d then %v", special.Tokens, bos, plain.Tokens)
	}
	status, _, raw := h.do(http.MethodPost, "/detokenize", map[string]any{"tokens": plain.Tokens}, nil)
	var back struct{ Content string }
	if err := json.Unmarshal(raw, &back); status != http.StatusOK || err != nil {
		t.Fatalf("detokenize: %d %s", status, raw)
	}
	if back.Content != text {
		t.Errorf("detokenize(tokenize(%q)) = %q", text, back.Content)
	}
}
