package grammar

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzSchema checks that Schema never panics, fails only with its own
// error types, and that what it returns compiles (or hits a limit) to a
// grammar whose shortest document is valid JSON.
func FuzzSchema(f *testing.F) {
	for _, c := range schemaCases {
		f.Add(c.schema)
	}
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#"}}}`,
		`{"anyOf":[{"type":"string","pattern":"^a+$"},{"enum":[1,"x",null]}]}`,
		`{"allOf":[{"$ref":"#/$defs/a"}],"$defs":{"a":{"type":"integer","maximum":3}}}`,
		`{"type":"number","exclusiveMinimum":-5,"maximum":0}`,
		`false`,
	} {
		f.Add(s)
	}
	lim := DefaultLimits()
	lim.MaxStates = 30_000
	lim.MaxDepth = 16
	lim.MaxAnyDepth = 3
	f.Fuzz(func(t *testing.T, schema string) {
		x, err := Schema([]byte(schema), lim)
		if err != nil {
			var se *SchemaError
			var le *LimitError
			if !errors.As(err, &se) && !errors.As(err, &le) {
				t.Fatalf("error %T: %v", err, err)
			}
			return
		}
		g, err := Compile(nil, x, lim)
		if err != nil {
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("compile error %T: %v", err, err)
			}
			return
		}
		if g.MinBytes() < 0 {
			return
		}
		doc := g.Shortest("")
		if !g.MatchString(doc) || !json.Valid([]byte(doc)) {
			t.Fatalf("shortest document %q is not valid JSON", doc)
		}
	})
}
