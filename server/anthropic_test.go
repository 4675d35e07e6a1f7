package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/server/anthropic"
)

func (h *harness) messagesBody(extra map[string]any) map[string]any {
	b := map[string]any{"model": h.model.ID, "max_tokens": 6, "temperature": 0,
		"messages": []any{map[string]any{"role": "user", "content": "Tell me about the sun."}}}
	return withFields(b, extra)
}

func weatherClientTool() map[string]any {
	return map[string]any{"name": "get_weather", "description": "Get the weather", "input_schema": cityUnitSchema()}
}

// anthropicMessage is a message object, checked against the schema.
type anthropicMessage struct {
	ID      string           `json:"id"`
	Content []map[string]any `json:"content"`
	Stop    *string          `json:"stop_reason"`
	StopSeq *string          `json:"stop_sequence"`
	Usage   struct {
		Input     int `json:"input_tokens"`
		CacheRead int `json:"cache_read_input_tokens"`
		Output    int `json:"output_tokens"`
	} `json:"usage"`
	Metadata *struct {
		Performance map[string]any `json:"performance"`
	} `json:"metadata"`
}

func decodeAnthropic(t *testing.T, body []byte) anthropicMessage {
	t.Helper()
	validate(t, "anthropic_message", body)
	var m anthropicMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	return m
}

func blockText(m anthropicMessage) string {
	var b strings.Builder
	for _, c := range m.Content {
		if c["type"] == "text" {
			b.WriteString(c["text"].(string))
		}
	}
	return b.String()
}

// TestMessagesStream: the named events of a streamed message with
// per-token timing: message_start, ping, one text block with a delta and
// a timing event per token, message_delta with the stop reason and the
// final usage, and message_stop with the performance object.
func TestMessagesStream(t *testing.T) {
	h := newHarness(t)
	status, _, body := h.do(http.MethodPost, anthropic.MessagesPath, h.messagesBody(map[string]any{"stream": true, "include_performance": true}), nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	evs := namedEvents(t, body)
	var text strings.Builder
	timings := 0
	for i, e := range evs {
		validate(t, "anthropic_event", e.raw)
		switch e.name {
		case "content_block_delta":
			text.WriteString(e.m["delta"].(map[string]any)["text"].(string))
			if evs[i+1].name != "kiln.token_timing" {
				t.Errorf("a delta is followed by %s, not its timing event", evs[i+1].name)
			}
		case "kiln.token_timing":
			timings++
		}
	}
	got := names(evs)
	want := []string{"message_start", "ping", "content_block_start"}
	if !slices.Equal(got[:3], want) || !slices.Equal(got[len(got)-3:], []string{"content_block_stop", "message_delta", "message_stop"}) {
		t.Fatalf("events %v", got)
	}
	delta := evs[len(evs)-2].m
	usage := delta["usage"].(map[string]any)
	if delta["delta"].(map[string]any)["stop_reason"] != "max_tokens" || num(t, usage["output_tokens"]) != 6 || timings != 6 {
		t.Errorf("message_delta %v after %d timing events, want max_tokens after 6", delta, timings)
	}
	start := evs[0].m["message"].(map[string]any)
	prompt := num(t, start["usage"].(map[string]any)["input_tokens"])
	if num(t, usage["input_tokens"])+num(t, usage["cache_read_input_tokens"]) != prompt {
		t.Errorf("message_delta's input %v + cache read %v != message_start's prompt %v", usage["input_tokens"], usage["cache_read_input_tokens"], prompt)
	}
	perf, _ := evs[len(evs)-1].m["metadata"].(map[string]any)["performance"].(map[string]any)
	if perf == nil || num(t, perf["completion_tokens"]) != 6 || text.Len() == 0 {
		t.Errorf("message_stop %v, text %q", evs[len(evs)-1].m, text.String())
	}
}

// TestMessagesWhole: a message that is not streamed, with and without the
// performance object; a stop sequence ends it with stop_sequence named;
// count_tokens counts the prompt the message used.
func TestMessagesWhole(t *testing.T) {
	h := newHarness(t)
	var first anthropicMessage
	for _, perf := range []bool{false, true} {
		status, _, body := h.do(http.MethodPost, anthropic.MessagesPath, h.messagesBody(map[string]any{"include_performance": perf, "system": "Be brief."}), nil)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		m := decodeAnthropic(t, body)
		if (m.Metadata != nil) != perf || m.Stop == nil || *m.Stop != "max_tokens" || m.Usage.Output != 6 {
			t.Errorf("include_performance %v: %s", perf, body)
		}
		first = m
	}
	words := strings.Fields(blockText(first))
	if len(words) < 3 {
		t.Fatalf("too few words to pick a stop sequence: %q", blockText(first))
	}
	stop := " " + words[2]
	_, _, body := h.do(http.MethodPost, anthropic.MessagesPath, h.messagesBody(map[string]any{"system": "Be brief.", "stop_sequences": []string{stop}}), nil)
	m := decodeAnthropic(t, body)
	if m.Stop == nil || *m.Stop != "stop_sequence" || m.StopSeq == nil || *m.StopSeq != stop || strings.Contains(blockText(m), stop) {
		t.Errorf("stop sequence %q: %s", stop, body)
	}
	status, _, body := h.do(http.MethodPost, anthropic.CountTokensPath, map[string]any{"model": h.model.ID, "system": "Be brief.",
		"messages": []any{map[string]any{"role": "user", "content": "Tell me about the sun."}}}, nil)
	validate(t, "anthropic_count_tokens", body)
	var n struct {
		InputTokens int `json:"input_tokens"`
	}
	_ = json.Unmarshal(body, &n)
	if status != http.StatusOK || n.InputTokens != first.Usage.Input+first.Usage.CacheRead {
		t.Errorf("count_tokens %d %s, the message's prompt %d", status, body, first.Usage.Input+first.Usage.CacheRead)
	}
}

// TestMessagesTools: tool_choice any gives tool_use blocks whose input
// fits the schema, streamed (input_json_delta) and not; the tool_result
// round trip answers in text.
func TestMessagesTools(t *testing.T) {
	h := newHarness(t)
	tools := []any{weatherClientTool()}
	question := map[string]any{"role": "user", "content": "What is the weather in Paris?"}
	for _, stream := range []bool{false, true} {
		status, _, body := h.do(http.MethodPost, anthropic.MessagesPath, h.messagesBody(map[string]any{
			"tools": tools, "tool_choice": map[string]any{"type": "any"}, "max_tokens": 120, "stream": stream,
			"messages": []any{question},
		}), nil)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		if !stream {
			m := decodeAnthropic(t, body)
			if m.Stop == nil || *m.Stop != "tool_use" || len(m.Content) == 0 || m.Content[len(m.Content)-1]["type"] != "tool_use" {
				t.Fatalf("not a tool_use: %s", body)
			}
			use := m.Content[len(m.Content)-1]
			args, _ := json.Marshal(use["input"])
			checkArgs(t, string(args))
			result := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": use["id"], "content": "sunny"}}}
			status, _, body = h.do(http.MethodPost, anthropic.MessagesPath, h.messagesBody(map[string]any{
				"tools": tools, "messages": []any{question, map[string]any{"role": "assistant", "content": m.Content}, result},
				"tool_choice": map[string]any{"type": "none"},
			}), nil)
			if a := decodeAnthropic(t, body); status != http.StatusOK || blockText(a) == "" {
				t.Errorf("after the tool result: %d %s", status, body)
			}
			continue
		}
		evs := namedEvents(t, body)
		partial := ""
		for _, e := range evs {
			validate(t, "anthropic_event", e.raw)
			if d, _ := e.m["delta"].(map[string]any); d["type"] == "input_json_delta" {
				partial += d["partial_json"].(string)
			}
		}
		checkArgs(t, partial)
		if d := evs[len(evs)-2].m["delta"].(map[string]any); d["stop_reason"] != "tool_use" {
			t.Errorf("stop_reason %v", d["stop_reason"])
		}
	}
}

// TestMessagesBadInput: each malformed request gets Anthropic's error
// shape and the status of the same rule on the other routes, whatever
// refused it (the decoder, the model check, the method check, the access
// check); then the server serves the next request. The key may come as
// x-api-key.
func TestMessagesBadInput(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.AccessToken = "s3cret" }))
	key := map[string]string{"x-api-key": "s3cret", "anthropic-version": "2023-06-01"}
	tests := []struct {
		name, method, path string
		body               any
		hdr                map[string]string
		status             int
		typ, mention       string
	}{
		{"no key", "POST", anthropic.MessagesPath, h.messagesBody(nil), nil, 401, "authentication_error", "x-api-key"},
		{"wrong key", "POST", anthropic.MessagesPath, h.messagesBody(nil), map[string]string{"x-api-key": "nope"}, 401, "authentication_error", "token"},
		{"GET", "GET", anthropic.MessagesPath, nil, key, 405, "invalid_request_error", "POST"},
		{"not JSON", "POST", anthropic.MessagesPath, `{`, key, 400, "invalid_request_error", "JSON"},
		{"no max_tokens", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"max_tokens": nil}), key, 400, "invalid_request_error", "max_tokens"},
		{"zero max_tokens", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"max_tokens": 0}), key, 400, "invalid_request_error", "max_tokens"},
		{"no messages", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"messages": nil}), key, 400, "invalid_request_error", "messages"},
		{"system role in messages", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"messages": []any{map[string]any{"role": "system", "content": "x"}}}), key, 400, "invalid_request_error", "messages[0].role"},
		{"image block", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "image"}}}}}), key, 400, "invalid_request_error", "messages[0].content[0].type"},
		{"tool_use from the user", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_use", "id": "a", "name": "f", "input": map[string]any{}}}}}}), key, 400, "invalid_request_error", "tool_use"},
		{"tool_use input not an object", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"messages": []any{map[string]any{"role": "user", "content": "q"}, map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "a", "name": "f", "input": "x"}}}}}), key, 400, "invalid_request_error", "input"},
		{"tool_result without id", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "content": "x"}}}}}), key, 400, "invalid_request_error", "tool_use_id"},
		{"temperature too high", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"temperature": 5}), key, 400, "invalid_request_error", "temperature"},
		{"stop_sequences a string", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"stop_sequences": "x"}), key, 400, "invalid_request_error", "stop_sequences"},
		{"empty stop sequence", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"stop_sequences": []string{""}}), key, 400, "invalid_request_error", "stop_sequences[0]"},
		{"server tool", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"tools": []any{map[string]any{"type": "web_search_20250305", "name": "web_search"}}}), key, 400, "invalid_request_error", "tools[0].type"},
		{"tool without input_schema", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"tools": []any{map[string]any{"name": "f"}}}), key, 400, "invalid_request_error", "input_schema"},
		{"unsupported input_schema", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"tool_choice": map[string]any{"type": "any"}, "tools": []any{map[string]any{"name": "f", "input_schema": map[string]any{"type": "object", "patternProperties": map[string]any{"a": map[string]any{}}}}}}), key, 400, "invalid_request_error", "tools[0].input_schema"},
		{"tool choice unknown", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"tools": []any{weatherClientTool()}, "tool_choice": map[string]any{"type": "some"}}), key, 400, "invalid_request_error", "tool_choice.type"},
		{"named tool missing", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"tools": []any{weatherClientTool()}, "tool_choice": map[string]any{"type": "tool", "name": "other"}}), key, 400, "invalid_request_error", "other"},
		{"any without tools", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"tool_choice": map[string]any{"type": "any"}}), key, 400, "invalid_request_error", "tools"},
		{"unknown model", "POST", anthropic.MessagesPath, h.messagesBody(map[string]any{"model": "claude-9"}), key, 404, "not_found_error", "claude-9"},
		{"count_tokens without messages", "POST", anthropic.CountTokensPath, map[string]any{"model": h.model.ID}, key, 400, "invalid_request_error", "messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := h.do(tt.method, tt.path, tt.body, tt.hdr)
			validate(t, "anthropic_error", body)
			var e struct {
				Type  string `json:"type"`
				Error struct{ Type, Message string }
			}
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatal(err)
			}
			if status != tt.status || e.Type != "error" || e.Error.Type != tt.typ || !strings.Contains(e.Error.Message, tt.mention) {
				t.Errorf("%d %s, want %d %s mentioning %q", status, body, tt.status, tt.typ, tt.mention)
			}
		})
	}
	if status, _, body := h.do(http.MethodPost, anthropic.MessagesPath, h.messagesBody(nil), key); status != http.StatusOK {
		t.Fatalf("after the bad requests: %d %s", status, body)
	}
	if status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(nil), map[string]string{"Authorization": "Bearer s3cret"}); status != http.StatusOK {
		t.Fatalf("chat after the bad requests: %d %s", status, body)
	}
}
