package toolcall

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/engine/grammar"
)

var grammarTools = []Tool{
	{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","maxLength":12},"days":{"type":"integer","minimum":1,"maximum":7},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","days"],"additionalProperties":false}`)},
	{Name: "get_time"},
	{Name: "search", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","maxLength":20},"tags":{"type":"array","items":{"type":"string","maxLength":5},"maxItems":2}},"required":["q"]}`)},
}

// walk is a random string of g: random bytes that keep it a prefix,
// closed by the shortest completion past a length.
func walk(g *grammar.Grammar, rng *rand.Rand, maxLen int) string {
	var b []byte
	for len(b) < maxLen {
		if g.MatchString(string(b)) && rng.IntN(4) == 0 {
			return string(b)
		}
		var next []byte
		for c := range 256 {
			if g.Prefix(string(append(b, byte(c)))) {
				next = append(next, byte(c))
			}
		}
		if len(next) == 0 {
			break
		}
		// Prefer printable ASCII, as models do; the rest stays possible.
		c := next[rng.IntN(len(next))]
		for range 3 {
			if c >= 0x20 && c < 0x7f {
				break
			}
			c = next[rng.IntN(len(next))]
		}
		b = append(b, c)
	}
	return string(b) + g.Shortest(string(b))
}

// TestCallGrammarsParse: every string a family's required-call grammar
// allows is, for its parser, calls of the offered tools with arguments
// that are JSON objects with the required properties, and nothing else.
func TestCallGrammarsParse(t *testing.T) {
	for _, f := range []Family{Hermes, QwenXML, Llama3} {
		for _, parallel := range []bool{false, true} {
			x, err := RequiredExpr(f, grammarTools, parallel, false, grammar.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			g, err := grammar.Compile(nil, x, grammar.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(f), 9))
			for trial := range 40 {
				out := walk(g, rng, 160)
				if !g.MatchString(out) {
					t.Fatalf("%s: the walk %q is not in the grammar", f, out)
				}
				p := NewParser(f, grammarTools, Options{})
				evs := append(p.Push(out), p.Flush()...)
				for _, e := range evs {
					if e.Kind == Content && strings.TrimSpace(e.Text) != "" {
						t.Errorf("%s trial %d: content %q beside the calls in %q", f, trial, e.Text, out)
					}
				}
				calls := p.Calls()
				if len(calls) == 0 || !parallel && len(calls) != 1 {
					t.Fatalf("%s parallel=%v trial %d: %d calls from %q", f, parallel, trial, len(calls), out)
				}
				for _, c := range calls {
					var args map[string]any
					if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
						t.Fatalf("%s trial %d: arguments %q of %q: %v", f, trial, c.Arguments, out, err)
					}
					switch c.Name {
					case "get_weather":
						if _, ok := args["city"].(string); !ok {
							t.Errorf("%s: get_weather without a city: %s", f, c.Arguments)
						}
						if d, ok := args["days"].(float64); !ok || d < 1 || d > 7 {
							t.Errorf("%s: get_weather days %v: %s", f, args["days"], c.Arguments)
						}
					case "get_time":
						if len(args) != 0 {
							t.Errorf("%s: get_time with arguments %s", f, c.Arguments)
						}
					case "search":
						if _, ok := args["q"].(string); !ok {
							t.Errorf("%s: search without q: %s", f, c.Arguments)
						}
					default:
						t.Errorf("%s: a call to %q", f, c.Name)
					}
				}
			}
		}
	}
}

// TestCallGrammarTemplates: the calls the chat templates show the models
// are in their family's grammar.
func TestCallGrammarTemplates(t *testing.T) {
	for _, c := range []struct {
		f    Family
		call string
	}{
		{Hermes, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\", \"days\": 3}}\n</tool_call>"},
		{QwenXML, "<tool_call>\n<function=get_weather>\n<parameter=city>\nZürich\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"},
		{Llama3, `{"name": "get_weather", "parameters": {"city": "Zürich", "days": 3}}`},
	} {
		x, err := RequiredExpr(c.f, grammarTools, true, false, grammar.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		g, _ := grammar.Compile(nil, x, grammar.DefaultLimits())
		if !g.MatchString(c.call) {
			t.Errorf("%s: %q is not in the grammar", c.f, c.call)
		}
		think, _ := RequiredExpr(c.f, grammarTools, false, true, grammar.DefaultLimits())
		tg, _ := grammar.Compile(nil, think, grammar.DefaultLimits())
		if !tg.MatchString("Paris is a city.\n</think>\n\n"+c.call) || tg.MatchString(c.call) {
			t.Errorf("%s: the think section is not required before the call", c.f)
		}
	}
}

// tenTools are ten tools of five mixed parameters each: a bounded string,
// an enum, an integer range, a nested object and an array.
func tenTools() []Tool {
	var tools []Tool
	for i := range 10 {
		tools = append(tools, Tool{Name: fmt.Sprintf("tool_%d", i), Parameters: json.RawMessage(`{"type":"object","properties":{
			"query":{"type":"string","maxLength":64},
			"mode":{"type":"string","enum":["fast","balanced","thorough"]},
			"limit":{"type":"integer","minimum":1,"maximum":100},
			"filter":{"type":"object","properties":{"field":{"type":"string"},"value":{"type":["string","number","null"]}},"required":["field"]},
			"ids":{"type":"array","items":{"type":"integer"},"maxItems":20}
		},"required":["query"],"additionalProperties":false}`)})
	}
	return tools
}

// BenchmarkCallGrammarCompile is a cold compile of ten tools' call
// grammar as the server builds it for tool_choice auto (the lazy
// grammar after the opener) and required.
func BenchmarkCallGrammarCompile(b *testing.B) {
	tools := tenTools()
	for _, f := range []Family{Hermes, QwenXML} {
		b.Run(f.String()+"/auto", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				x, err := CallExpr(f, tools, grammar.DefaultLimits())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := grammar.CompileLazy(nil, grammar.Lazy{Triggers: f.Openers()[:1], After: []*grammar.Expr{x}}, grammar.DefaultLimits()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(f.String()+"/required", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				x, err := RequiredExpr(f, tools, true, false, grammar.DefaultLimits())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := grammar.Compile(nil, x, grammar.DefaultLimits()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
