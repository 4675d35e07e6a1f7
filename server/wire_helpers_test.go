package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/kiln-ai/kiln/schemas"
)

// namedEvent is one record of a Responses or Messages stream.
type namedEvent struct {
	name string
	raw  json.RawMessage
	m    map[string]any
}

// namedEvents splits a stream of typed events, checking the framing:
// every record is "event: <name>", "data: <json>", a blank line, and its
// data's type is its name.
func namedEvents(t testing.TB, body []byte) []namedEvent {
	t.Helper()
	var out []namedEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, ok := strings.CutPrefix(sc.Text(), "event: ")
		if !ok {
			t.Fatalf("record %d opens with %q, not an event line", len(out), sc.Text())
		}
		if !sc.Scan() {
			t.Fatalf("event %s has no data line", name)
		}
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			t.Fatalf("event %s: %q is not a data line", name, sc.Text())
		}
		if !sc.Scan() || sc.Text() != "" {
			t.Fatalf("event %s is not followed by a blank line", name)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event %s: %v in %s", name, err, data)
		}
		if m["type"] != name {
			t.Errorf("event %s carries type %v", name, m["type"])
		}
		out = append(out, namedEvent{name: name, raw: json.RawMessage(data), m: m})
	}
	return out
}

// names lists the events' names, with runs of one name folded ("x*").
func names(evs []namedEvent) []string {
	var out []string
	for _, e := range evs {
		n := len(out)
		switch {
		case n > 0 && (out[n-1] == e.name || out[n-1] == e.name+"*"):
			out[n-1] = e.name + "*"
		default:
			out = append(out, e.name)
		}
	}
	return out
}

// validate checks body against the inference schema's definition def.
func validate(t testing.TB, def string, body []byte) {
	t.Helper()
	v, err := inferenceValidator()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(schemas.InferenceID, def, body); err != nil {
		t.Errorf("%s does not match the schema: %v\n%s", def, err, body)
	}
}

// inferenceValidator compiles the schemas once for the package's tests.
var inferenceValidator = sync.OnceValues(schemas.NewValidator)

// cityUnitSchema is the arguments' schema of the get_weather tool.
func cityUnitSchema() map[string]any {
	return map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"city", "unit"},
		"properties": map[string]any{
			"city": map[string]any{"type": "string", "maxLength": 8},
			"unit": map[string]any{"enum": []string{"celsius", "fahrenheit"}},
		},
	}
}

// checkArgs checks a call's arguments against cityUnitSchema.
func checkArgs(t testing.TB, args string) {
	t.Helper()
	var a struct {
		City *string `json:"city"`
		Unit string  `json:"unit"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil || a.City == nil || (a.Unit != "celsius" && a.Unit != "fahrenheit") {
		t.Errorf("arguments %q do not fit the schema (%v)", args, err)
	}
}

// validateError checks an OpenAI-shaped error body against the schema.
func validateError(t testing.TB, body []byte) {
	t.Helper()
	v, err := inferenceValidator()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(schemas.ObservabilityID, "error", body); err != nil {
		t.Errorf("the error does not match the schema: %v\n%s", err, body)
	}
}
