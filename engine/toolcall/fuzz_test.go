package toolcall

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParserHermes, FuzzParserQwenXML and FuzzParserLlama3: whatever the
// model writes, however the stream splits it, the parser does not panic,
// the events read the same as for the whole text at once, every call
// opens, fills with a JSON object and closes in order, Calls holds what
// the events say, and what the parser holds between fragments stays
// bounded.
func FuzzParserHermes(f *testing.F)  { fuzzParser(f, Hermes) }
func FuzzParserQwenXML(f *testing.F) { fuzzParser(f, QwenXML) }
func FuzzParserLlama3(f *testing.F)  { fuzzParser(f, Llama3) }

func fuzzParser(f *testing.F, family Family) {
	for _, tc := range parseCases {
		if tc.family == family {
			f.Add(tc.output, []byte{3, 1, 4, 1, 5, 9, 2, 6}, tc.thinking)
		}
	}
	f.Fuzz(func(t *testing.T, output string, cuts []byte, thinking bool) {
		whole, wholeCalls := parse(family, thinking, output)
		checkCalls(t, whole, wholeCalls)

		p := newTestParser(family, thinking)
		var evs []Event
		rest := output
		for _, c := range cuts {
			n := min(int(c%16), len(rest))
			evs = append(evs, p.Push(rest[:n])...)
			rest = rest[n:]
			checkBounded(t, p)
		}
		evs = append(evs, p.Push(rest)...)
		checkBounded(t, p)
		evs = append(evs, p.Flush()...)
		if diff := cmp.Diff(whole, merge(evs)); diff != "" {
			t.Fatalf("split %v: events differ from the whole text's (-whole +split):\n%s", cuts, diff)
		}
		if diff := cmp.Diff(wholeCalls, p.Calls()); diff != "" {
			t.Fatalf("split %v: calls differ from the whole text's (-whole +split):\n%s", cuts, diff)
		}
	})
}

// checkBounded checks that between fragments the parser holds no more
// than its limits allow.
func checkBounded(t *testing.T, p *Parser) {
	t.Helper()
	if len(p.buf) > 32 {
		t.Fatalf("the parser holds back %d bytes: %q", len(p.buf), p.buf)
	}
	if len(p.held) > maxBuffered+1 || len(p.xml.val) > maxBuffered || len(p.xml.name) > maxName || len(p.json.raw) > maxBuffered+1 || len(p.json.pending) > maxBuffered {
		t.Fatalf("held %d, xml value %d, name %d, json raw %d, pending %d bytes", len(p.held), len(p.xml.val), len(p.xml.name), len(p.json.raw), len(p.json.pending))
	}
}

// fragments are the pieces FuzzParserFragments builds outputs of: the
// families' markup, names, JSON and XML bits, so that the fuzzer reaches
// deep into calls rather than stopping at the first unexpected byte.
var fragments = []string{
	"<tool_call>", "</tool_call>", "<think>", "</think>", "<|python_tag|>", `{"name"`, "\n", " ", ";",
	"<function=get_weather>", "<function=get_time>", "<function=nope>", "</function>", "<parameter=city>", "<parameter=days>",
	"<parameter=metric>", "<parameter=units>", "</parameter>", "Paris", "3", "True", `{"a": [1, "x"]}`, "é", "\xe2\x82", "\xac",
	`{"name": "get_weather", "arguments": `, `{"name": "get_time", "parameters": `, `{"name": "nope", "arguments": `, `{"arguments": `,
	`"name": "get_time"`, "{", "}", "[", "]", `"city"`, `: `, `, `, `"Pa\"ris\u00e9"`, "-1.5e3", "null", "tru", "\\", `"`, "<", ">",
}

// FuzzParserFragments: outputs made of the families' markup, parsed by
// every family, keep FuzzParser's properties.
func FuzzParserFragments(f *testing.F) {
	f.Add([]byte{0, 25, 18, 27, 7, 1})
	f.Add([]byte{4, 26, 21, 37, 8, 4, 26, 30})
	f.Add([]byte{3, 9, 13, 6, 18, 6, 17, 14, 19, 16, 12, 1})
	f.Fuzz(func(t *testing.T, picks []byte) {
		var b []byte
		for _, c := range picks {
			b = append(b, fragments[int(c)%len(fragments)]...)
		}
		output := string(b)
		for _, family := range []Family{Hermes, QwenXML, Llama3} {
			for _, thinking := range []bool{false, true} {
				whole, wholeCalls := parse(family, thinking, output)
				checkCalls(t, whole, wholeCalls)
				var pieces []string
				rest := output
				for _, c := range picks {
					n := min(int(c>>3)%9, len(rest))
					pieces, rest = append(pieces, rest[:n]), rest[n:]
				}
				split, splitCalls := parse(family, thinking, append(pieces, rest)...)
				if diff := cmp.Diff(whole, split); diff != "" {
					t.Fatalf("%s %q split %q: events differ (-whole +split):\n%s", family, output, pieces, diff)
				}
				if diff := cmp.Diff(wholeCalls, splitCalls); diff != "" {
					t.Fatalf("%s %q: calls differ (-whole +split):\n%s", family, output, diff)
				}
			}
		}
	})
}
