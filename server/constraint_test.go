package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/telemetry"
)

// Constrained decoding over HTTP on kiln-tiny, which cannot follow an
// instruction and rambles inside any string: every output must still
// parse and fit its schema, whatever the seed, streamed or not.

const weatherSchema = `{"type":"object","properties":{"city":{"type":"string","maxLength":24},"days":{"type":"integer","minimum":1,"maximum":14},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","days"],"additionalProperties":false}`

const timeSchema = `{"type":"object","properties":{"zone":{"type":"string","enum":["utc","cet","pst"]}},"required":["zone"],"additionalProperties":false}`

// nestedSchema uses what structured outputs commonly do: $defs and $ref,
// nested objects, arrays with bounds, anyOf with null, enums, ranges and
// string lengths.
const nestedSchema = `{
  "type": "object",
  "$defs": {"item": {"type": "object", "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 12},
    "qty": {"type": "integer", "minimum": 0, "maximum": 99},
    "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3}
  }, "required": ["name", "qty", "tags"], "additionalProperties": false}},
  "properties": {
    "title": {"type": "string", "maxLength": 30},
    "items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 1, "maxItems": 3},
    "note": {"anyOf": [{"type": "string", "maxLength": 10}, {"type": "null"}]},
    "score": {"type": "number", "minimum": 0, "maximum": 10},
    "ok": {"type": "boolean"}
  },
  "required": ["title", "items", "note", "score", "ok"],
  "additionalProperties": false
}`

func compileSchema(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fits fails unless doc is JSON valid under s.
func fits(t *testing.T, s *jsonschema.Schema, doc string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Errorf("not JSON: %v: %q", err, doc)
		return
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("does not fit the schema: %v: %q", err, doc)
	}
}

func weatherTools() []map[string]any {
	return []map[string]any{
		{"type": "function", "function": map[string]any{"name": "get_weather", "description": "Weather forecast", "parameters": json.RawMessage(weatherSchema)}},
		{"type": "function", "function": map[string]any{"name": "get_time", "parameters": json.RawMessage(timeSchema)}},
	}
}

type wireCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type constrainedReply struct {
	content      string
	calls        []wireCall
	finish       string
	constraint   map[string]any
	performance  map[string]any
	streamedRaws []json.RawMessage
}

// constrained posts body, streamed or not, checks the reply against the
// published schemas, and returns its content or calls.
func constrained(t *testing.T, h *harness, body map[string]any, stream bool) constrainedReply {
	t.Helper()
	check := validator(t)
	body["stream"] = stream
	body["include_performance"] = true
	status, _, raw := h.do(http.MethodPost, chatPath, body, nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, raw)
	}
	var r constrainedReply
	if !stream {
		check("chat_completion", raw)
		var resp struct {
			Choices []struct {
				Message struct {
					Content   *string    `json:"content"`
					ToolCalls []wireCall `json:"tool_calls"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Metadata struct {
				Performance map[string]any `json:"performance"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatal(err)
		}
		c := resp.Choices[0]
		if c.Message.Content != nil {
			r.content = *c.Message.Content
		}
		r.calls, r.finish, r.performance = c.Message.ToolCalls, c.FinishReason, resp.Metadata.Performance
	} else {
		p := parseStream(t, raw)
		for i, rec := range p.raw {
			if p.order[i] != "timing" {
				check("stream_chunk", rec)
			}
		}
		r.content = p.content()
		r.calls = streamedCalls(t, p)
		ch := p.terminal["choices"].([]any)[0].(map[string]any)
		r.finish, _ = ch["finish_reason"].(string)
		md, _ := p.terminal["metadata"].(map[string]any)
		r.performance, _ = md["performance"].(map[string]any)
		r.streamedRaws = p.raw
	}
	r.constraint, _ = r.performance["constraint"].(map[string]any)
	return r
}

// streamedCalls assembles the tool_calls deltas: id, type and name first,
// then argument fragments, by index.
func streamedCalls(t *testing.T, p streamParts) []wireCall {
	t.Helper()
	var calls []wireCall
	for _, rec := range p.raw {
		var ch struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index int `json:"index"`
						wireCall
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(rec, &ch); err != nil || len(ch.Choices) == 0 {
			continue
		}
		for _, d := range ch.Choices[0].Delta.ToolCalls {
			switch {
			case d.Index == len(calls):
				if d.ID == "" || d.Type != "function" || d.Function.Name == "" {
					t.Fatalf("call %d's first delta lacks id, type or name: %+v", d.Index, d)
				}
				calls = append(calls, d.wireCall)
			case d.Index == len(calls)-1:
				if d.ID != "" || d.Function.Name != "" {
					t.Fatalf("call %d: id or name repeated in a later delta", d.Index)
				}
				calls[d.Index].Function.Arguments += d.Function.Arguments
			default:
				t.Fatalf("delta for call %d after %d calls", d.Index, len(calls))
			}
		}
	}
	return calls
}

func checkCalls(t *testing.T, r constrainedReply, schemas map[string]*jsonschema.Schema, only string) {
	t.Helper()
	if len(r.calls) == 0 {
		t.Fatalf("no tool calls (finish %s, content %q)", r.finish, r.content)
	}
	if r.finish != "tool_calls" {
		t.Errorf("finish_reason %q, want tool_calls", r.finish)
	}
	for i, c := range r.calls {
		s, ok := schemas[c.Function.Name]
		if !ok || only != "" && c.Function.Name != only {
			t.Errorf("calls[%d] is to %q", i, c.Function.Name)
			continue
		}
		fits(t, s, c.Function.Arguments)
	}
}

func checkConstraint(t *testing.T, r constrainedReply, kind string) {
	t.Helper()
	c := r.constraint
	if c == nil {
		t.Fatalf("no metadata.performance.constraint: %v", r.performance)
	}
	if c["kind"] != kind || c["truncated"] != false {
		t.Errorf("constraint %v, want kind %s, not truncated", c, kind)
	}
	if ms := num(t, c["mask_ms"]); ms <= 0 {
		t.Errorf("mask_ms %v: the masks' time is not counted", c["mask_ms"])
	}
}

// TestForcedToolCalls: under tool_choice required each seed's output is
// calls to the offered tools with arguments that fit their schemas;
// named, one call to that tool.
func TestForcedToolCalls(t *testing.T) {
	h := newHarness(t)
	schemas := map[string]*jsonschema.Schema{"get_weather": compileSchema(t, weatherSchema), "get_time": compileSchema(t, timeSchema)}
	for _, stream := range []bool{false, true} {
		for seed := range 3 {
			body := h.chatBody(map[string]any{"tools": weatherTools(), "tool_choice": "required", "max_tokens": 160, "temperature": 1, "seed": seed})
			r := constrained(t, h, body, stream)
			checkCalls(t, r, schemas, "")
			checkConstraint(t, r, constraintToolRequired)

			body = h.chatBody(map[string]any{"tools": weatherTools(), "max_tokens": 160, "temperature": 1, "seed": seed,
				"tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "get_time"}}})
			r = constrained(t, h, body, stream)
			checkCalls(t, r, schemas, "get_time")
			if len(r.calls) != 1 {
				t.Errorf("a named tool_choice made %d calls", len(r.calls))
			}
			checkConstraint(t, r, constraintToolNamed)
		}
	}
}

// TestJSONResponseFormats: json_schema output fits the schema and
// json_object output is a JSON object, for several seeds, streamed or not.
func TestJSONResponseFormats(t *testing.T) {
	h := newHarness(t)
	nested := compileSchema(t, nestedSchema)
	object := compileSchema(t, `{"type":"object"}`)
	for _, stream := range []bool{false, true} {
		for seed := range 3 {
			body := h.chatBody(map[string]any{"max_tokens": 400, "temperature": 1, "seed": seed,
				"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "order", "strict": true, "schema": json.RawMessage(nestedSchema)}}})
			r := constrained(t, h, body, stream)
			fits(t, nested, r.content)
			checkConstraint(t, r, constraintJSONSchema)
			if r.finish != "stop" && r.finish != "length" {
				t.Errorf("finish_reason %q", r.finish)
			}

			body = h.chatBody(map[string]any{"max_tokens": 120, "temperature": 1, "seed": seed, "response_format": map[string]any{"type": "json_object"}})
			r = constrained(t, h, body, stream)
			fits(t, object, r.content)
			checkConstraint(t, r, constraintJSONObject)
		}
	}
}

// TestConstraintClosesWithinBudget: a budget just above the shortest
// document still yields a complete one, closed by the grammar (the
// budget forced it); below the shortest, the response says the document
// is incomplete.
func TestConstraintClosesWithinBudget(t *testing.T) {
	h := newHarness(t)
	s := compileSchema(t, weatherSchema)
	format := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "w", "schema": json.RawMessage(weatherSchema)}}
	// {"city":"","days":1} is 21 bytes; kiln-tiny writes about a token a
	// byte, so 40 tokens leave it room to ramble and then be cut short.
	for _, budget := range []int{30, 40} {
		for seed := range 3 {
			r := constrained(t, h, h.chatBody(map[string]any{"max_tokens": budget, "temperature": 1, "seed": seed, "response_format": format}), false)
			fits(t, s, r.content)
			if r.constraint["truncated"] != false {
				t.Errorf("budget %d: truncated %v", budget, r.constraint)
			}
		}
	}
	r := constrained(t, h, h.chatBody(map[string]any{"max_tokens": 5, "response_format": format}), false)
	if r.finish != "length" || r.constraint["truncated"] != true {
		t.Errorf("a budget below the shortest document: finish %s, constraint %v", r.finish, r.constraint)
	}
}

// TestGrammarCache: the second request with the same schema finds the
// grammar compiled; the span names the compile.
func TestGrammarCache(t *testing.T) {
	h, exp := tracedHarness(t)
	body := func() map[string]any {
		return h.chatBody(map[string]any{"tools": weatherTools(), "tool_choice": "required", "max_tokens": 160})
	}
	first := constrained(t, h, body(), false)
	second := constrained(t, h, body(), false)
	if first.constraint["cache_hit"] != false || second.constraint["cache_hit"] != true {
		t.Errorf("cache_hit %v then %v, want false then true", first.constraint["cache_hit"], second.constraint["cache_hit"])
	}
	spans := waitSpans(t, exp, telemetry.SpanGrammarCompile)
	var compiles int
	for _, s := range spans {
		if s.Name != telemetry.SpanGrammarCompile {
			continue
		}
		compiles++
		attrs := map[string]any{}
		for _, a := range s.Attributes {
			attrs[string(a.Key)] = a.Value.AsInterface()
		}
		if attrs[telemetry.AttrGrammarKind] != constraintToolRequired {
			t.Errorf("%s attributes %v", s.Name, attrs)
		}
	}
	if compiles == 0 {
		t.Error("no kiln.grammar_compile span")
	}
}

// TestHostileSchemas: schemas built to hurt are refused with a 400 that
// names the parameter, quickly, and the server serves the next request.
func TestHostileSchemas(t *testing.T) {
	h := newHarness(t)
	deep := strings.Repeat(`{"type":"array","items":`, 5000) + `{"type":"string"}` + strings.Repeat("}", 5000)
	var enum bytes.Buffer
	enum.WriteString(`{"enum":[`)
	for i := range 100_000 {
		if i > 0 {
			enum.WriteByte(',')
		}
		fmt.Fprintf(&enum, `"value-%d"`, i)
	}
	enum.WriteString(`]}`)
	cases := []struct {
		name, schema, code string
	}{
		{"5000 deep", deep, "schema_too_complex"},
		{"recursion without end", `{"$ref":"#/$defs/a","$defs":{"a":{"type":"object","properties":{"next":{"$ref":"#/$defs/a"}},"required":["next"]}}}`, "unsupported_schema"},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, "unsupported_schema"},
		{"unsupported keyword", `{"type":"object","not":{}}`, "unsupported_schema"},
	}
	for _, c := range cases {
		body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"x"}],"max_tokens":8,"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":%s}}}`, h.model.ID, c.schema)
		start := time.Now()
		status, _, raw := h.do(http.MethodPost, chatPath, body, nil)
		took := time.Since(start)
		var e struct {
			Error struct{ Param, Code, Message string }
		}
		_ = json.Unmarshal(raw, &e)
		if status != http.StatusBadRequest || e.Error.Code != c.code || e.Error.Param != "response_format.json_schema.schema" {
			t.Errorf("%s: %d %s, want 400 %s", c.name, status, raw, c.code)
		}
		t.Logf("%s: refused in %v: %s", c.name, took, e.Error.Message)
	}
	// An enum of 100,000 values fits the limits: it compiles in bounded
	// time, and the output is one of the values.
	start := time.Now()
	r := constrained(t, h, h.chatBody(map[string]any{"max_tokens": 24, "temperature": 1, "seed": 5,
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "e", "schema": json.RawMessage(enum.Bytes())}}}), false)
	t.Logf("100k enum: %q in %v (compile %v ms)", r.content, time.Since(start), r.constraint["compile_ms"])
	var v string
	var n int
	if err := json.Unmarshal([]byte(r.content), &v); err != nil {
		t.Errorf("100k enum: %q is not a JSON string", r.content)
	} else if _, err := fmt.Sscanf(v, "value-%d", &n); err != nil || n < 0 || n >= 100_000 || fmt.Sprintf("value-%d", n) != v {
		t.Errorf("100k enum: %q is not a value of the enum", v)
	}

	r = constrained(t, h, h.chatBody(map[string]any{"max_tokens": 60, "response_format": map[string]any{"type": "json_object"}}), false)
	fits(t, compileSchema(t, `{"type":"object"}`), r.content)
}

// TestUnenforceableSchemas: a schema keyword the grammar cannot enforce
// is a 400 naming where it is, never ignored: in the response format or
// in the tool whose parameters hold it (by its index in tools, also when
// tool_choice names it).
func TestUnenforceableSchemas(t *testing.T) {
	h := newHarness(t)
	const msgs = `"messages":[{"role":"user","content":"x"}],"max_tokens":4`
	cases := []struct {
		name, body, param, code string
	}{
		{"not", `"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","not":{"type":"string"}}}}`, "response_format.json_schema.schema", "unsupported_schema"},
		{"unknown keyword", `"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"string","frobnicate":1}}}`, "response_format.json_schema.schema", "unsupported_schema"},
		{"uniqueItems in a tool", `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}},{"type":"function","function":{"name":"g","parameters":{"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}}}}],"tool_choice":"required"`, "tools[1].function.parameters", "unsupported_schema"},
		{"in the named tool", `"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g","parameters":{"type":"object","properties":{"a":{"not":{}}}}}}],"tool_choice":{"type":"function","function":{"name":"g"}}`, "tools[1].function.parameters", "unsupported_schema"},
		{"under auto", `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"number","multipleOf":3}}}}}]`, "tools[0].function.parameters", "unsupported_schema"},
	}
	for _, c := range cases {
		body := fmt.Sprintf(`{"model":%q,%s,%s}`, h.model.ID, msgs, c.body)
		status, _, raw := h.do(http.MethodPost, chatPath, body, nil)
		var e struct {
			Error struct{ Type, Param, Code, Message string }
		}
		_ = json.Unmarshal(raw, &e)
		if status != http.StatusBadRequest || e.Error.Param != c.param || e.Error.Code != c.code || e.Error.Type != "invalid_request_error" {
			t.Errorf("%s: %d %s, want 400 %s at %s", c.name, status, raw, c.code, c.param)
		}
	}
}

// slowMask holds one mask of each constrained request for stallHold: a
// grammar whose mask is slow (a cold state of a huge grammar).
type slowMask struct{ generator }

func (g slowMask) Submit(ctx context.Context, r engine.Request) (generation, error) {
	if r.Constraint != nil {
		r.Constraint = &slowConstraint{Constraint: r.Constraint}
	}
	return g.generator.Submit(ctx, r)
}

type slowConstraint struct {
	engine.Constraint
	calls int
}

func (c *slowConstraint) Mask(logits []float32, remaining int) {
	c.calls++
	if c.calls == 2 {
		time.Sleep(stallHold) // the slow mask under test
	}
	c.Constraint.Mask(logits, remaining)
}

// TestSlowMaskStallIsSampling: the mask runs inside the sampling phase,
// so a stall it causes is attributed to sampling in every place a stall
// is counted.
func TestSlowMaskStallIsSampling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, withSpans(tracetest.NewInMemoryExporter()), withFakeTime(), func(s *harnessSetup) {
			s.gen = func(g generator) generator { return slowMask{g} }
		})
		// A long enough document that one slow gap stands out of the median.
		schema := `{"type":"object","properties":{"a":{"type":"string","minLength":30,"maxLength":40}},"required":["a"]}`
		body := h.chatBody(map[string]any{"stream": true, "include_performance": true, "max_tokens": 80,
			"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "long", "schema": json.RawMessage(schema)}}})
		_, result := h.streamAsync(body)
		ev := h.stallEvidence(t, <-result, "sampling")
		if ev.sse != 1 || ev.sse != ev.summary || ev.sse != ev.window || ev.sse != ev.metric || ev.sse != ev.span {
			t.Errorf("sampling stalls: sse %d summary %d window %d metric %d span %d; want 1 everywhere", ev.sse, ev.summary, ev.window, ev.metric, ev.span)
		}
	})
}
