package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine/sampling"
	"github.com/kiln-ai/kiln/server/openai"
	"github.com/kiln-ai/kiln/server/wire"
)

func ptr[T any](v T) *T { return &v }

// plainAgent are the agent fields of a request that asks for none.
var plainAgent = wire.AgentFields{ToolChoice: wire.ToolChoiceNone, Parallel: true, N: 1}

func TestParseChatRequestValid(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *wire.Request
	}{
		{
			name: "minimal",
			body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			want: &wire.Request{Agent: plainAgent, Model: "m", Messages: []wire.Message{{Role: "user", Content: "hi"}}},
		},
		{
			name: "every field",
			body: `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"assistant","content":"ok","name":"x"}],
				"max_tokens":5,"temperature":0.5,"top_p":0.9,"top_k":3,"seed":42,"stop":["x","y"],"stream":true,
				"stream_options":{"include_usage":true},"user":"u1","n":1,"include_performance":true,"presence_penalty":0.1,"unknown":{"a":[1]}}`,
			want: &wire.Request{
				Agent: plainAgent,
				Model: "m",
				Messages: []wire.Message{
					{Role: "system", Content: "be brief"}, {Role: "user", Content: "ab"}, {Role: "assistant", Content: "ok", Name: "x"},
				},
				MaxTokens: 5, Temperature: ptr(0.5), TopP: ptr(0.9), TopK: 3, Seed: ptr[int64](42), Stop: []string{"x", "y"},
				Stream: true, IncludeUsage: true, User: "u1", IncludePerformance: ptr(true),
				Penalties: wire.Penalties{PresencePenalty: 0.1},
			},
		},
		{
			name: "nulls are absent",
			body: `{"model":"m","messages":[{"role":"developer","content":"s"}],"max_tokens":null,"temperature":null,"top_p":null,"seed":null,"stop":null,"stream":null,"stream_options":null,"user":null,"n":null,"include_performance":null}`,
			want: &wire.Request{Agent: plainAgent, Model: "m", Messages: []wire.Message{{Role: "system", Content: "s"}}},
		},
		{
			name: "max_completion_tokens wins, integral float, single stop",
			body: `{"model":"m","messages":[{"role":"user","content":""}],"max_tokens":9,"max_completion_tokens":3.0,"stop":"END","include_performance":false}`,
			want: &wire.Request{Agent: plainAgent, Model: "m", Messages: []wire.Message{{Role: "user", Content: ""}}, MaxTokens: 3, Stop: []string{"END"}, IncludePerformance: ptr(false)},
		},
		{
			name: "the off forms of the agent fields",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"logprobs":false,"top_logprobs":0,"tools":[],"functions":null,"response_format":{"type":"text"}}`,
			want: &wire.Request{Agent: wire.AgentFields{ToolChoice: wire.ToolChoiceNone, Parallel: true, N: 1, Format: wire.ResponseFormat{Type: "text"}},
				Model: "m", Messages: []wire.Message{{Role: "user", Content: "x"}}},
		},
		{
			name: "tools, logprobs and n",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],
				"tools":[{"type":"function","function":{"name":"get_weather","description":"d","parameters":{ "type": "object" },"strict":true}}],
				"tool_choice":"auto","parallel_tool_calls":false,"logprobs":true,"top_logprobs":5,"n":3}`,
			want: &wire.Request{Model: "m", Messages: []wire.Message{{Role: "user", Content: "x"}}, Agent: wire.AgentFields{
				Tools:      []wire.Tool{{Name: "get_weather", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`), Strict: true}},
				ToolChoice: wire.ToolChoiceAuto, Logprobs: true, TopLogprobs: 5, N: 3,
			}},
		},
		{
			name: "a tool round trip",
			body: `{"model":"m","messages":[{"role":"user","content":"x"},
				{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},
				{"role":"tool","tool_call_id":"call_1","content":"sunny"}]}`,
			want: &wire.Request{Model: "m", Messages: []wire.Message{
				{Role: "user", Content: "x"},
				{Role: "assistant", ContentNull: true, ToolCalls: []wire.ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":1}`}}},
				{Role: "tool", Content: "sunny", ToolCallID: "call_1"},
			}, Agent: wire.AgentFields{ToolChoice: wire.ToolChoiceNone, Parallel: true, N: 1}},
		},
		{
			name: "logit adjustments",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"frequency_penalty":-2,"presence_penalty":2,"repetition_penalty":1.3,"min_p":0.05,"logit_bias":{"50":-100,"7":100,"3":0.5}}`,
			want: &wire.Request{Agent: plainAgent, Model: "m", Messages: []wire.Message{{Role: "user", Content: "x"}}, Penalties: wire.Penalties{
				FrequencyPenalty: -2, PresencePenalty: 2, RepetitionPenalty: 1.3, MinP: 0.05,
				LogitBias: []sampling.LogitBias{{ID: 3, Bias: 0.5}, {ID: 7, Bias: 100}, {ID: 50, Bias: -100}},
			}},
		},
		{
			name: "temperature bounds",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":2,"top_p":1}`,
			want: &wire.Request{Agent: plainAgent, Model: "m", Messages: []wire.Message{{Role: "user", Content: "x"}}, Temperature: ptr(2.0), TopP: ptr(1.0)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := openai.ParseChat([]byte(tt.body))
			if err != nil {
				t.Fatalf("ParseChat: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(wire.Request{}, wire.Message{})); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

type badRequest struct {
	name   string
	body   string
	status int
	param  string
	code   string
}

// badRequests are malformed chat bodies with the param and code the error
// must name. The end-to-end test sends them over HTTP too.
var badRequests = []badRequest{
	{"empty body", ``, 400, "", "invalid_json"},
	{"logprobs wrong type", `{"model":"m","messages":[{"role":"user","content":"x"}],"logprobs":"yes"}`, 400, "logprobs", "invalid_type"},
	{"tools wrong type", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":{}}`, 400, "tools", "invalid_type"},
	{"functions requested", `{"model":"m","messages":[{"role":"user","content":"x"}],"functions":[{"name":"f"}]}`, 400, "functions", "unsupported_parameter"},
	{"not json", `hello`, 400, "", "invalid_json"},
	{"truncated json", `{"model":"m","messages":[`, 400, "", "invalid_json"},
	{"array body", `[1,2]`, 400, "", "invalid_json"},
	{"null body", `null`, 400, "", "invalid_json"},
	{"trailing data", `{"model":"m","messages":[{"role":"user","content":"x"}]} {}`, 400, "", "invalid_json"},
	{"missing model", `{"messages":[{"role":"user","content":"x"}]}`, 400, "model", "missing_required_parameter"},
	{"model not string", `{"model":7,"messages":[{"role":"user","content":"x"}]}`, 400, "model", "invalid_type"},
	{"missing messages", `{"model":"m"}`, 400, "messages", "missing_required_parameter"},
	{"messages not array", `{"model":"m","messages":"hi"}`, 400, "messages", "invalid_type"},
	{"empty messages", `{"model":"m","messages":[]}`, 400, "messages", "empty_array"},
	{"message not object", `{"model":"m","messages":["hi"]}`, 400, "messages[0]", "invalid_type"},
	{"missing role", `{"model":"m","messages":[{"content":"x"}]}`, 400, "messages[0].role", "missing_required_parameter"},
	{"bad role", `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, 400, "messages[0].role", "invalid_value"},
	{"role not string", `{"model":"m","messages":[{"role":1,"content":"x"}]}`, 400, "messages[0].role", "invalid_type"},
	{"missing content", `{"model":"m","messages":[{"role":"user"}]}`, 400, "messages[0].content", "missing_required_parameter"},
	{"content number", `{"model":"m","messages":[{"role":"user","content":5}]}`, 400, "messages[0].content", "invalid_type"},
	{"image part", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "messages[0].content[0].type", "invalid_value"},
	{"part text missing", `{"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]}`, 400, "messages[0].content[0].text", "missing_required_parameter"},
	{"part text number", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":1}]}]}`, 400, "messages[0].content[0].text", "invalid_type"},
	{"max_tokens zero", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":0}`, 400, "max_tokens", "invalid_value"},
	{"max_tokens string", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":"5"}`, 400, "max_tokens", "invalid_type"},
	{"max_tokens decimal", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":1.5}`, 400, "max_tokens", "invalid_type"},
	{"max_completion_tokens negative", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_completion_tokens":-1}`, 400, "max_completion_tokens", "invalid_value"},
	{"temperature high", `{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":2.5}`, 400, "temperature", "invalid_value"},
	{"temperature negative", `{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":-0.1}`, 400, "temperature", "invalid_value"},
	{"temperature string", `{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":"hot"}`, 400, "temperature", "invalid_type"},
	{"top_p zero", `{"model":"m","messages":[{"role":"user","content":"x"}],"top_p":0}`, 400, "top_p", "invalid_value"},
	{"top_p zero in float32", `{"model":"m","messages":[{"role":"user","content":"x"}],"top_p":1e-46}`, 400, "top_p", "invalid_value"},
	{"top_p above one", `{"model":"m","messages":[{"role":"user","content":"x"}],"top_p":1.01}`, 400, "top_p", "invalid_value"},
	{"seed string", `{"model":"m","messages":[{"role":"user","content":"x"}],"seed":"s"}`, 400, "seed", "invalid_type"},
	{"top_logprobs without logprobs", `{"model":"m","messages":[{"role":"user","content":"x"}],"top_logprobs":3}`, 400, "top_logprobs", "invalid_value"},
	{"top_logprobs above 20", `{"model":"m","messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":21}`, 400, "top_logprobs", "invalid_value"},
	{"top_logprobs negative", `{"model":"m","messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":-1}`, 400, "top_logprobs", "invalid_value"},
	{"tool of another type", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"retrieval"}]}`, 400, "tools[0].type", "invalid_value"},
	{"tool without function", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]}`, 400, "tools[0].function", "missing_required_parameter"},
	{"tool without name", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"description":"d"}}]}`, 400, "tools[0].function.name", "missing_required_parameter"},
	{"tool name with a space", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"get weather"}}]}`, 400, "tools[0].function.name", "invalid_value"},
	{"tool parameters not an object", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":"x"}}]}`, 400, "tools[0].function.parameters", "invalid_type"},
	{"tool given twice", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"f"}}]}`, 400, "tools[1].function.name", "invalid_value"},
	{"tool_choice required without tools", `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"required"}`, 400, "tool_choice", "invalid_value"},
	{"tool_choice unknown word", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"maybe"}`, 400, "tool_choice", "invalid_value"},
	{"tool_choice names an unknown function", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`, 400, "tool_choice.function.name", "invalid_value"},
	{"tool_choice number", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":1}`, 400, "tool_choice", "invalid_type"},
	{"parallel_tool_calls string", `{"model":"m","messages":[{"role":"user","content":"x"}],"parallel_tool_calls":"yes"}`, 400, "parallel_tool_calls", "invalid_type"},
	{"function_call given", `{"model":"m","messages":[{"role":"user","content":"x"}],"function_call":"auto"}`, 400, "function_call", "unsupported_parameter"},
	{"response_format of another type", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"xml"}}`, 400, "response_format.type", "invalid_value"},
	{"response_format not an object", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":"json"}`, 400, "response_format", "invalid_type"},
	{"json_schema missing", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema"}}`, 400, "response_format.json_schema", "missing_required_parameter"},
	{"json_schema without name", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`, 400, "response_format.json_schema.name", "missing_required_parameter"},
	{"json_schema schema a string", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":"{}"}}}`, 400, "response_format.json_schema.schema", "invalid_type"},
	{"json format with a forced tool", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required","response_format":{"type":"json_object"}}`, 400, "response_format", "invalid_value"},
	{"n zero", `{"model":"m","messages":[{"role":"user","content":"x"}],"n":0}`, 400, "n", "invalid_value"},
	{"n above 16", `{"model":"m","messages":[{"role":"user","content":"x"}],"n":17}`, 400, "n", "invalid_value"},
	{"tool message without tool_call_id", `{"model":"m","messages":[{"role":"tool","content":"x"}]}`, 400, "messages[0].tool_call_id", "missing_required_parameter"},
	{"function role", `{"model":"m","messages":[{"role":"function","content":"x"}]}`, 400, "messages[0].role", "invalid_value"},
	{"tool_calls not an array", `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":{}}]}`, 400, "messages[0].tool_calls", "invalid_type"},
	{"tool call without name", `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}]}`, 400, "messages[0].tool_calls[0].function.name", "missing_required_parameter"},
	{"tool call arguments not JSON", `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{city"}}]}]}`, 400, "messages[0].tool_calls[0].function.arguments", "invalid_value"},
	{"tool call arguments an object", `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{}}}]}]}`, 400, "messages[0].tool_calls[0].function.arguments", "invalid_type"},
	{"assistant null content without calls", `{"model":"m","messages":[{"role":"assistant","content":null}]}`, 400, "messages[0].content", "missing_required_parameter"},
	{"stop number", `{"model":"m","messages":[{"role":"user","content":"x"}],"stop":5}`, 400, "stop", "invalid_type"},
	{"stop element number", `{"model":"m","messages":[{"role":"user","content":"x"}],"stop":["a",1]}`, 400, "stop[1]", "invalid_type"},
	{"stop too many", `{"model":"m","messages":[{"role":"user","content":"x"}],"stop":["a","b","c","d","e"]}`, 400, "stop", "invalid_value"},
	{"stop empty", `{"model":"m","messages":[{"role":"user","content":"x"}],"stop":""}`, 400, "stop", "invalid_value"},
	{"stream string", `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":"yes"}`, 400, "stream", "invalid_type"},
	{"stream_options without stream", `{"model":"m","messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}}`, 400, "stream_options", "invalid_value"},
	{"include_usage string", `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":"y"}}`, 400, "stream_options.include_usage", "invalid_type"},
	{"include_performance string", `{"model":"m","messages":[{"role":"user","content":"x"}],"include_performance":"true"}`, 400, "include_performance", "invalid_type"},
	{"user number", `{"model":"m","messages":[{"role":"user","content":"x"}],"user":5}`, 400, "user", "invalid_type"},
	{"frequency_penalty high", `{"model":"m","messages":[{"role":"user","content":"x"}],"frequency_penalty":2.5}`, 400, "frequency_penalty", "invalid_value"},
	{"presence_penalty string", `{"model":"m","messages":[{"role":"user","content":"x"}],"presence_penalty":"a"}`, 400, "presence_penalty", "invalid_type"},
	{"presence_penalty low", `{"model":"m","messages":[{"role":"user","content":"x"}],"presence_penalty":-3}`, 400, "presence_penalty", "invalid_value"},
	{"repetition_penalty zero", `{"model":"m","messages":[{"role":"user","content":"x"}],"repetition_penalty":0}`, 400, "repetition_penalty", "invalid_value"},
	{"repetition_penalty huge", `{"model":"m","messages":[{"role":"user","content":"x"}],"repetition_penalty":50}`, 400, "repetition_penalty", "invalid_value"},
	{"min_p above one", `{"model":"m","messages":[{"role":"user","content":"x"}],"min_p":1.5}`, 400, "min_p", "invalid_value"},
	{"logit_bias array", `{"model":"m","messages":[{"role":"user","content":"x"}],"logit_bias":[1]}`, 400, "logit_bias", "invalid_type"},
	{"logit_bias word key", `{"model":"m","messages":[{"role":"user","content":"x"}],"logit_bias":{"the":1}}`, 400, "logit_bias", "invalid_value"},
	{"logit_bias value high", `{"model":"m","messages":[{"role":"user","content":"x"}],"logit_bias":{"5":101}}`, 400, "logit_bias.5", "invalid_value"},
	{"logit_bias value string", `{"model":"m","messages":[{"role":"user","content":"x"}],"logit_bias":{"5":"x"}}`, 400, "logit_bias.5", "invalid_type"},
}

func TestParseChatRequestInvalid(t *testing.T) {
	for _, tt := range badRequests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openai.ParseChat([]byte(tt.body))
			var e *wire.Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseChat error = %v, want *Error", err)
			}
			got := struct {
				Status      int
				Param, Code string
			}{e.Status, e.Param, e.Code}
			want := struct {
				Status      int
				Param, Code string
			}{tt.status, tt.param, tt.code}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s\nmessage: %s", diff, e.Message)
			}
			if e.Type != wire.TypeInvalidRequest || e.Message == "" {
				t.Errorf("type %q message %q: want invalid_request_error and a message", e.Type, e.Message)
			}
		})
	}
}

// checkErrorBody asserts b is exactly the OpenAI error shape.
func checkErrorBody(t testing.TB, b []byte) {
	t.Helper()
	var body map[string]map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("error body %q is not a JSON object of objects: %v", b, err)
	}
	if len(body) != 1 || body["error"] == nil {
		t.Fatalf("error body %q: want exactly the key \"error\"", b)
	}
	e := body["error"]
	if len(e) != 4 {
		t.Fatalf("error object %q: want exactly message, type, param, code", b)
	}
	for _, k := range []string{"message", "type"} {
		if s, ok := e[k].(string); !ok || s == "" {
			t.Errorf("error.%s = %v: want a non-empty string", k, e[k])
		}
	}
	for _, k := range []string{"param", "code"} {
		if v, ok := e[k]; !ok {
			t.Errorf("error.%s missing", k)
		} else if _, isStr := v.(string); v != nil && !isStr {
			t.Errorf("error.%s = %v: want a string or null", k, v)
		}
	}
}

// FuzzParseChatRequest: whatever the body, the decoder never panics, and it
// either accepts a request that satisfies every documented bound or returns
// a 4xx *Error whose serialized body is exactly the OpenAI error shape.
func FuzzParseChatRequest(f *testing.F) {
	for _, tt := range badRequests {
		f.Add([]byte(tt.body))
	}
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stop":["a"],"max_tokens":3}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"\u00e9"}]}],"temperature":0}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := openai.ParseChat(body)
		if err != nil {
			var e *wire.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not *Error", err)
			}
			if e.Status < 400 || e.Status >= 500 {
				t.Fatalf("status %d: want 4xx", e.Status)
			}
			checkErrorBody(t, openai.AppendError(nil, e))
			return
		}
		if req.Model == "" || len(req.Messages) == 0 || req.MaxTokens < 0 || len(req.Stop) > wire.MaxStopSequences {
			t.Fatalf("accepted an out-of-bounds request: %+v", req)
		}
		if tp := req.Temperature; tp != nil && (*tp < 0 || *tp > 2) {
			t.Fatalf("accepted temperature %v", *tp)
		}
		if p := req.TopP; p != nil && (*p <= 0 || *p > 1 || float32(*p) == 0) {
			t.Fatalf("accepted top_p %v", *p)
		}
		for _, m := range req.Messages {
			if !parsedRoles[m.Role] {
				t.Fatalf("accepted role %q", m.Role)
			}
		}
		if req.IncludeUsage && !req.Stream {
			t.Fatal("include_usage without stream")
		}
	})
}

func TestAppendJSONString(t *testing.T) {
	tests := []string{"", "plain", "quote\" back\\ nl\n tab\t cr\r", "\x00\x1f", "é漢字🙂", "bad \xff utf8", "\u2028\u2029", "</script>"}
	for _, s := range tests {
		t.Run(s, func(t *testing.T) {
			b := wire.AppendJSONString(nil, s)
			var got string
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%q -> %s: not JSON: %v", s, b, err)
			}
			want := strings.ToValidUTF8(s, "\uFFFD")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			if strings.ContainsAny(string(b), "\n\r\u2028\u2029") {
				t.Errorf("%s: raw line separators in output", b)
			}
		})
	}
}

func TestErrorFor(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
		wantRetry  bool
	}{
		{"too large", &http.MaxBytesError{Limit: 10}, 413, "request_too_large", false},
		{"queue full", wrap(errQueueFull()), 429, "rate_limit_exceeded", true},
		{"stopping", errStopping, 503, "service_unavailable", true},
		{"too long", wrap(errTooLong()), 400, "context_length_exceeded", false},
		{"internal", errors.New("boom: secret detail"), 500, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := errorFor(tt.err, 2e9)
			if e.Status != tt.wantStatus || e.Code != tt.wantCode || (e.RetryAfter > 0) != tt.wantRetry {
				t.Errorf("errorFor = %d %q retry %v, want %d %q retry %v", e.Status, e.Code, e.RetryAfter, tt.wantStatus, tt.wantCode, tt.wantRetry)
			}
			if strings.Contains(e.Message, "secret") {
				t.Errorf("message %q leaks the internal error", e.Message)
			}
			checkErrorBody(t, openai.AppendError(nil, e))
		})
	}
}

// TestWithParam: naming the parameter of a decoder error never panics on
// an error that is not a client *Error (the handler maps it to a 500), and
// reaches a wrapped *Error.
func TestWithParam(t *testing.T) {
	plain := errors.New("read failed")
	if got := wire.WithParam(plain, "p"); got != plain { //nolint:errorlint // identity is the point
		t.Errorf("withParam(plain) = %v, want the same error", got)
	}
	e := wire.Invalid("x", "invalid_type", "bad")
	wrapped := fmt.Errorf("context: %w", e)
	if got := wire.WithParam(wrapped, "stream_options.include_usage"); got != wrapped || e.Param != "stream_options.include_usage" { //nolint:errorlint // identity is the point
		t.Errorf("withParam(wrapped) = %v with param %q, want the same error naming stream_options.include_usage", got, e.Param)
	}
	if wire.WithParam(nil, "p") != nil {
		t.Error("withParam(nil) is not nil")
	}
}

// parsedRoles are the roles a parsed message may have (developer is
// system).
var parsedRoles = map[string]bool{"system": true, "user": true, "assistant": true, "tool": true}
