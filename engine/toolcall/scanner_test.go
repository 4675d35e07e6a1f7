package toolcall

import (
	"encoding/json"
	"strings"
	"testing"
)

// scan feeds s to a scanner and reports whether it ends a complete value,
// checking at every safe point that closing what is open makes valid JSON.
func scan(t *testing.T, s string) bool {
	t.Helper()
	var sc scanner
	for i := 0; i < len(s); i++ {
		sc.step(s[i])
		if sc.failed() {
			return false
		}
		if sc.safe() {
			healed := s[:i+1] + sc.close(0, sc.state == scanString)
			if !json.Valid([]byte(healed)) {
				t.Fatalf("%q closed as %q is not valid JSON", s[:i+1], healed)
			}
		}
	}
	return sc.state == scanDone
}

func TestScanner(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, `{"a": 1}`, ` { "a" : [1, -2.5e+3, 0, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9"], "b": {} } `,
		`[0.5, 1E9, -0, 10]`, `{"": ""}`, `[[[]]]`,
		`{`, `{"a"}`, `{"a":}`, `{"a": 01}`, `{"a": 1.}`, `{"a": -}`, `{"a": tru}`, `{"a": 1,}`, `[1,]`, `{"a": "\x"}`,
		`{"a": "\u12G4"}`, "{\"a\": \"\n\"}", `{"a": 1}}`, `{"a": [}`, `{"a" 1}`, `[1 2]`, `{1: 2}`,
	} {
		trimmed := strings.TrimSpace(s)
		want := json.Valid([]byte(s)) && (trimmed[0] == '{' || trimmed[0] == '[')
		if got := scan(t, trimmed); got != want {
			t.Errorf("scan(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzScanner: the scanner accepts exactly the JSON objects and arrays
// that encoding/json does (up to its depth bound), and closing what is
// open at any safe point gives valid JSON.
func FuzzScanner(f *testing.F) {
	f.Add(`{"name": "f", "arguments": {"a": [1, 2.5, "x"]}}`)
	f.Add(`[{"a": -0.5e-7}, true, null, "\ud83d\ude00"]`)
	f.Add(`{"a": "b\u00`)
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.TrimRight(strings.TrimLeft(s, " \t\r\n"), " \t\r\n")
		if s == "" || (s[0] != '{' && s[0] != '[') || strings.Count(s, "[")+strings.Count(s, "{") >= maxDepth {
			return
		}
		if got, want := scan(t, s), json.Valid([]byte(s)); got != want {
			t.Fatalf("scan(%q) = %v, json.Valid = %v", s, got, want)
		}
	})
}
