package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/server/wire"
)

func (h *harness) responsesBody(extra map[string]any) map[string]any {
	b := map[string]any{"model": h.model.ID, "input": "Tell me about the sun.", "max_output_tokens": 6, "temperature": 0}
	return withFields(b, extra)
}

func weatherFunction() map[string]any {
	return map[string]any{"type": "function", "name": "get_weather", "description": "Get the weather", "parameters": cityUnitSchema()}
}

// decodeResponse decodes a response object, checking it against the
// schema.
func decodeResponse(t *testing.T, body []byte) map[string]any {
	t.Helper()
	validate(t, "response_object", body)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	return m
}

func outputItems(m map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, it := range m["output"].([]any) {
		if it := it.(map[string]any); it["type"] == typ {
			out = append(out, it)
		}
	}
	return out
}

func messageText(it map[string]any) string {
	return it["content"].([]any)[0].(map[string]any)["text"].(string)
}

// TestResponsesStream: the typed event sequence of a streamed response
// with per-token timing: created, in_progress, the message's item and
// part, a delta and a timing event per token, the .done events and the
// terminal event, numbered from 0, each valid; the deltas spell the final
// text, and the terminal response carries the performance object.
func TestResponsesStream(t *testing.T) {
	h := newHarness(t)
	status, hdr, body := h.do(http.MethodPost, responsesPath, h.responsesBody(map[string]any{"stream": true, "include_performance": true}), nil)
	if status != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d %s: %s", status, hdr.Get("Content-Type"), body)
	}
	evs := namedEvents(t, body)
	var text strings.Builder
	timings := 0
	for i, e := range evs {
		validate(t, "response_event", e.raw)
		if got := int(num(t, e.m["sequence_number"])); got != i {
			t.Errorf("event %d (%s) has sequence_number %d", i, e.name, got)
		}
		switch e.name {
		case "response.output_text.delta":
			text.WriteString(e.m["delta"].(string))
			if next := evs[i+1].name; next != "kiln.token_timing" {
				t.Errorf("a delta is followed by %s, not its timing event", next)
			}
		case "kiln.token_timing":
			timing := e.m["timing"].(map[string]any)
			if int(num(t, timing["token_index"])) != timings {
				t.Errorf("timing event %d has token_index %v", timings, timing["token_index"])
			}
			timings++
		}
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}
	if got := names(evs); !slices.Equal(got[:4], want) || !slices.Equal(got[len(got)-4:],
		[]string{"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.incomplete"}) {
		t.Fatalf("events %v", got)
	}
	final := evs[len(evs)-1].m["response"].(map[string]any)
	usage := final["usage"].(map[string]any)
	if n := int(num(t, usage["output_tokens"])); n != 6 || timings != 6 {
		t.Errorf("%d output tokens, %d timing events: want 6 each", n, timings)
	}
	msg := outputItems(final, "message")
	if len(msg) != 1 || messageText(msg[0]) != text.String() || text.Len() == 0 {
		t.Errorf("deltas %q, final message %v", text.String(), msg)
	}
	if final["status"] != "incomplete" || final["incomplete_details"].(map[string]any)["reason"] != "max_output_tokens" {
		t.Errorf("status %v %v, want incomplete at max_output_tokens", final["status"], final["incomplete_details"])
	}
	perf, _ := final["metadata"].(map[string]any)["performance"].(map[string]any)
	if perf == nil || num(t, perf["completion_tokens"]) != 6 || perf["finish_reason"] != "length" {
		t.Errorf("metadata.performance %v", perf)
	}
	created := evs[0].m["response"].(map[string]any)
	if created["id"] != final["id"] || created["usage"] != nil || len(created["output"].([]any)) != 0 {
		t.Errorf("response.created %v does not open the final response %v", created, final["id"])
	}
}

// TestResponsesWhole: a response that is not streamed, with and without
// the performance object, and its id in the recent requests.
func TestResponsesWhole(t *testing.T) {
	h := newHarness(t)
	for _, perf := range []bool{false, true} {
		status, _, body := h.do(http.MethodPost, responsesPath, h.responsesBody(map[string]any{
			"include_performance": perf, "instructions": "Be brief.", "metadata": map[string]any{"run": "7"},
		}), nil)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		m := decodeResponse(t, body)
		md := m["metadata"].(map[string]any)
		if _, has := md["performance"]; has != perf || md["run"] != "7" {
			t.Errorf("include_performance %v: metadata %v", perf, md)
		}
		if m["instructions"] != "Be brief." || !strings.HasPrefix(m["id"].(string), "resp_") {
			t.Errorf("instructions %v, id %v", m["instructions"], m["id"])
		}
		var rec map[string]any
		h.getJSON("/v1/stats/recent-requests/"+m["id"].(string), &rec)
		if rec["id"] != m["id"] {
			t.Errorf("the recent request is %v, want %v", rec["id"], m["id"])
		}
	}
}

// TestResponsesTools: tool_choice required gives function_call items
// whose arguments fit the schema, streamed and not; a named choice calls
// the named tool once; json_schema gives a document.
func TestResponsesTools(t *testing.T) {
	h := newHarness(t)
	tools := []any{weatherFunction()}
	for _, stream := range []bool{false, true} {
		status, _, body := h.do(http.MethodPost, responsesPath, h.responsesBody(map[string]any{
			"tools": tools, "tool_choice": "required", "max_output_tokens": 120, "stream": stream,
		}), nil)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		var final map[string]any
		if stream {
			evs := namedEvents(t, body)
			args := ""
			for _, e := range evs {
				validate(t, "response_event", e.raw)
				if e.name == "response.function_call_arguments.delta" {
					args += e.m["delta"].(string)
				}
			}
			final = evs[len(evs)-1].m["response"].(map[string]any)
			if calls := outputItems(final, "function_call"); len(calls) == 0 || calls[0]["arguments"] != args {
				t.Errorf("argument deltas %q, calls %v", args, calls)
			}
		} else {
			final = decodeResponse(t, body)
		}
		calls := outputItems(final, "function_call")
		if final["status"] != "completed" || len(calls) == 0 {
			t.Fatalf("stream %v: status %v, output %v", stream, final["status"], final["output"])
		}
		for _, c := range calls {
			if c["name"] != "get_weather" || !strings.HasPrefix(c["call_id"].(string), "call_") {
				t.Errorf("call %v", c)
			}
			checkArgs(t, c["arguments"].(string))
		}
	}
	status, _, body := h.do(http.MethodPost, responsesPath, h.responsesBody(map[string]any{
		"text":              map[string]any{"format": map[string]any{"type": "json_schema", "name": "w", "schema": cityUnitSchema(), "strict": true}},
		"max_output_tokens": 120,
	}), nil)
	m := decodeResponse(t, body)
	if status != http.StatusOK || m["status"] != "completed" {
		t.Fatalf("json_schema: %d %s", status, body)
	}
	checkArgs(t, messageText(outputItems(m, "message")[0]))
}

// TestResponsesStore: previous_response_id continues a stored
// conversation (the second prompt holds the first turn, most of it from
// the prefix cache); item_reference names a stored item; store false
// keeps nothing, and an expired response is a 404.
func TestResponsesStore(t *testing.T) {
	h := newHarness(t)
	_, _, body := h.do(http.MethodPost, responsesPath, h.responsesBody(nil), nil)
	first := decodeResponse(t, body)
	firstIn := num(t, first["usage"].(map[string]any)["input_tokens"])
	status, _, body := h.do(http.MethodPost, responsesPath, h.responsesBody(map[string]any{
		"previous_response_id": first["id"], "input": "And the moon?",
	}), nil)
	if status != http.StatusOK {
		t.Fatalf("continuation: %d %s", status, body)
	}
	second := decodeResponse(t, body)
	u := second["usage"].(map[string]any)
	if in := num(t, u["input_tokens"]); in <= firstIn+6 {
		t.Errorf("the continuation's prompt is %v tokens, want more than the first's %v and its 6-token answer", in, firstIn)
	}
	if second["previous_response_id"] != first["id"] {
		t.Errorf("previous_response_id %v", second["previous_response_id"])
	}
	ref := outputItems(first, "message")[0]["id"]
	status, _, body = h.do(http.MethodPost, responsesPath, h.responsesBody(map[string]any{
		"input": []any{map[string]any{"role": "user", "content": "Tell me about the sun."}, map[string]any{"type": "item_reference", "id": ref},
			map[string]any{"role": "user", "content": "And the moon?"}},
	}), nil)
	if got := decodeResponse(t, body)["usage"].(map[string]any)["input_tokens"]; status != http.StatusOK || num(t, got) != num(t, u["input_tokens"]) {
		t.Errorf("item_reference: %d, %v input tokens, want the continuation's %v", status, got, u["input_tokens"])
	}

	_, _, body = h.do(http.MethodPost, responsesPath, h.responsesBody(map[string]any{"store": false}), nil)
	unstored := decodeResponse(t, body)
	wantNotFound := func(prev any) {
		t.Helper()
		status, _, body := h.do(http.MethodPost, responsesPath, h.responsesBody(map[string]any{"previous_response_id": prev}), nil)
		var e struct{ Error wire.Error }
		_ = json.Unmarshal(body, &e)
		if status != http.StatusNotFound || e.Error.Param != "previous_response_id" || e.Error.Code != "previous_response_not_found" {
			t.Errorf("previous_response_id %v: %d %s", prev, status, body)
		}
	}
	wantNotFound(unstored["id"])

	// GET /v1/responses/{id} serves a stored response as it was answered.
	status, _, got := h.do(http.MethodGet, responsesPath+"/"+first["id"].(string), nil, nil)
	if d := cmp.Diff(first, decodeResponse(t, got)); status != http.StatusOK || d != "" {
		t.Errorf("GET the first response: %d (-answered +stored):\n%s", status, d)
	}
	if status, _, body := h.do(http.MethodGet, responsesPath+"/"+unstored["id"].(string), nil, nil); status != http.StatusNotFound {
		t.Errorf("GET an unstored response: %d %s", status, body)
	}
	// Expiry is the store's (server/responses: TestStoreExpires).
}

// TestResponsesBadInput: each malformed request is a 400 (or 404) in the
// OpenAI shape naming the Responses parameter, and the server serves the
// next request.
func TestResponsesBadInput(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"not an object", `[1]`, 400, ""},
		{"no input", h.responsesBody(map[string]any{"input": nil}), 400, "input"},
		{"empty input", h.responsesBody(map[string]any{"input": []any{}}), 400, "input"},
		{"input of numbers", h.responsesBody(map[string]any{"input": 3}), 400, "input"},
		{"unknown item", h.responsesBody(map[string]any{"input": []any{map[string]any{"type": "computer_call"}}}), 400, "input[0].type"},
		{"bad role", h.responsesBody(map[string]any{"input": []any{map[string]any{"role": "robot", "content": "x"}}}), 400, "input[0].role"},
		{"image part", h.responsesBody(map[string]any{"input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_image"}}}}}), 400, "input[0].content[0].type"},
		{"call without call_id", h.responsesBody(map[string]any{"input": []any{map[string]any{"type": "function_call", "name": "f", "arguments": "{}"}}}), 400, "input[0].call_id"},
		{"call arguments not an object", h.responsesBody(map[string]any{"input": []any{map[string]any{"type": "function_call", "call_id": "c", "name": "f", "arguments": "[1]"}}}), 400, "input[0].arguments"},
		{"unknown reference", h.responsesBody(map[string]any{"input": []any{map[string]any{"type": "item_reference", "id": "msg_nope"}}}), 404, "input[0].id"},
		{"zero max_output_tokens", h.responsesBody(map[string]any{"max_output_tokens": 0}), 400, "max_output_tokens"},
		{"temperature too high", h.responsesBody(map[string]any{"temperature": 3}), 400, "temperature"},
		{"hosted tool", h.responsesBody(map[string]any{"tools": []any{map[string]any{"type": "web_search"}}}), 400, "tools[0].type"},
		{"tool without name", h.responsesBody(map[string]any{"tools": []any{map[string]any{"type": "function"}}}), 400, "tools[0].name"},
		{"tool twice", h.responsesBody(map[string]any{"tools": []any{weatherFunction(), weatherFunction()}}), 400, "tools[1].name"},
		{"named choice not among tools", h.responsesBody(map[string]any{"tools": []any{weatherFunction()}, "tool_choice": map[string]any{"type": "function", "name": "other"}}), 400, "tool_choice.name"},
		{"required without tools", h.responsesBody(map[string]any{"tool_choice": "required"}), 400, "tool_choice"},
		{"unknown format", h.responsesBody(map[string]any{"text": map[string]any{"format": map[string]any{"type": "yaml"}}}), 400, "text.format.type"},
		{"json_schema without schema", h.responsesBody(map[string]any{"text": map[string]any{"format": map[string]any{"type": "json_schema", "name": "x"}}}), 400, "text.format.schema"},
		{"unsupported schema", h.responsesBody(map[string]any{"text": map[string]any{"format": map[string]any{"type": "json_schema", "name": "x", "schema": map[string]any{"type": "object", "patternProperties": map[string]any{"a": map[string]any{}}}}}}), 400, "text.format.schema"},
		{"unsupported tool schema", h.responsesBody(map[string]any{"tool_choice": "required", "tools": []any{map[string]any{"type": "function", "name": "f", "parameters": map[string]any{"type": "object", "patternProperties": map[string]any{"a": map[string]any{}}}}}}), 400, "tools[0].parameters"},
		{"unknown include", h.responsesBody(map[string]any{"include": []any{"file_search_call.results"}}), 400, "include[0]"},
		{"top_logprobs too high", h.responsesBody(map[string]any{"top_logprobs": 21}), 400, "top_logprobs"},
		{"unknown model", h.responsesBody(map[string]any{"model": "gpt-9"}), 404, "model"},
		{"previous not a string", h.responsesBody(map[string]any{"previous_response_id": 5}), 400, "previous_response_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := h.do(http.MethodPost, responsesPath, tt.body, nil)
			validateError(t, body)
			var e struct{ Error wire.Error }
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatal(err)
			}
			if status != tt.status || e.Error.Param != tt.param {
				t.Errorf("%d param %q, want %d %q: %s", status, e.Error.Param, tt.status, tt.param, body)
			}
		})
	}
	if status, _, body := h.do(http.MethodPost, responsesPath, h.responsesBody(nil), nil); status != http.StatusOK {
		t.Fatalf("after the bad requests: %d %s", status, body)
	}
}
