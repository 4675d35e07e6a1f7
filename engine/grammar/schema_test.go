package grammar

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func schemaGrammar(t testing.TB, schema string) *Grammar {
	t.Helper()
	x, err := Schema([]byte(schema), DefaultLimits())
	if err != nil {
		t.Fatalf("Schema(%s): %v", schema, err)
	}
	g, err := Compile(nil, x, DefaultLimits())
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	return g
}

// oracle is a JSON Schema validator for the schema, formats asserted.
func oracle(t testing.TB, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validUnder(s *jsonschema.Schema, doc string) error {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

const toolSchema = `{
  "type": "object",
  "properties": {
    "location": {"type": "string", "description": "a city", "minLength": 1, "maxLength": 40},
    "unit": {"type": "string", "enum": ["celsius", "fahrenheit", "kelvin"]},
    "days": {"type": "integer", "minimum": 1, "maximum": 14},
    "detail": {"type": ["boolean", "null"]},
    "when": {"type": "string", "format": "date"},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3},
    "geo": {"type": "object", "properties": {"lat": {"type": "number", "minimum": -90, "maximum": 90}, "lon": {"type": "number", "minimum": -180, "maximum": 180}}, "required": ["lat", "lon"], "additionalProperties": false}
  },
  "required": ["location", "unit"],
  "additionalProperties": false
}`

var schemaCases = []struct {
	name   string
	schema string
	yes    []string
	no     []string
	noOrc  bool // the validator reads the schema differently (nullable)
}{
	{"tool", toolSchema,
		[]string{`{"location":"Paris","unit":"celsius"}`, `{"location": "Oslo", "unit": "kelvin", "days": 14, "detail": null, "when": "2024-02-29", "tags": ["a", "b"], "geo": {"lat": -90, "lon": 179.5}}`},
		[]string{`{"unit":"celsius"}`, `{"location":"Paris"}`, `{"location":"","unit":"celsius"}`, `{"location":"Paris","unit":"rankine"}`,
			`{"location":"Paris","unit":"celsius","days":0}`, `{"location":"Paris","unit":"celsius","days":15}`, `{"location":"Paris","unit":"celsius","extra":1}`,
			`{"location":"Paris","unit":"celsius","when":"2023-02-29"}`, `{"location":"Paris","unit":"celsius","tags":["a","b","c","d"]}`,
			`{"location":"Paris","unit":"celsius","tags":["toolongtag"]}`, `{"location":"Paris","unit":"celsius","geo":{"lat":90.5,"lon":0}}`,
			`{"location":"Paris","unit":"celsius","geo":{"lat":1}}`, `{"location":1,"unit":"celsius"}`, `{"location":"Paris","unit":"celsius","days":"3"}`}, false},
	{"int range", `{"type":"integer","minimum":13,"maximum":205}`,
		[]string{"13", "19", "20", "99", "100", "199", "200", "205"},
		[]string{"12", "206", "013", "-13", "1e2", "13.0", "300", "0"}, false},
	{"int negative", `{"type":"integer","minimum":-15,"exclusiveMaximum":3}`,
		[]string{"-15", "-9", "-1", "0", "2"},
		[]string{"-16", "3", "-0", "--1", "-015"}, false},
	{"int exclusive min fraction", `{"type":"integer","exclusiveMinimum":1.5,"maximum":4.9}`,
		[]string{"2", "3", "4"}, []string{"1", "5"}, false},
	{"int draft4 exclusive", `{"type":"integer","minimum":0,"exclusiveMinimum":true,"maximum":10,"exclusiveMaximum":true}`,
		[]string{"1", "9"}, []string{"0", "10"}, true},
	{"number bounds", `{"type":"number","minimum":-1,"maximum":2}`,
		[]string{"-1", "-0.5", "0", "0.25", "1.999", "2", "2.0", "-1.00"},
		[]string{"-1.5", "2.5", "2.01", "-0", "3", "1e0"}, false},
	{"number exclusive", `{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}`,
		[]string{"0.5", "0.001"}, []string{"0", "1", "0.0", "1.0", "-0.5"}, false},
	{"int beyond 16 digits", `{"type":"integer","minimum":-1e300,"maximum":-9999999999999998}`,
		[]string{"-9999999999999999", "-9999999999999998"}, []string{"-9999999999999997", "-10000000000000000"}, false},
	{"int huge maximum", `{"type":"integer","maximum":1e30,"minimum":9999999999999998}`,
		[]string{"9999999999999998", "9999999999999999"}, []string{"10000000000000000"}, false},
	{"number from 0", `{"type":"number","minimum":0}`,
		[]string{"0", "12.5", "9999999999999999"}, []string{"-0.1", "-3", "1e3"}, false},
	{"string len", `{"type":"string","minLength":2,"maxLength":4}`,
		[]string{`"ab"`, `"abcd"`, `"é\n"`}, []string{`"a"`, `"abcde"`, `12`}, false},
	{"enum mixed", `{"enum":["a","ab","abc",1,2.50,true,null,{"x":[1,"y"]},[1,2]]}`,
		[]string{`"a"`, `"ab"`, `"abc"`, `1`, `2.50`, `true`, `null`, `{"x":[1,"y"]}`, `[1,2]`},
		[]string{`"abcd"`, `2.5`, `false`, `"b"`, `[2,1]`}, false},
	{"enum typed", `{"type":"string","enum":["x","y",3]}`, []string{`"x"`, `"y"`}, []string{`3`, `"z"`}, false},
	{"enum escaped", `{"enum":["a\"b","<tag>","é\n"]}`, []string{`"a\"b"`, `"<tag>"`, `"é\n"`}, []string{`"\u003ctag>"`}, false},
	{"enum with length", `{"type":"string","enum":["a","abc","abcdef"],"maxLength":3}`, []string{`"a"`, `"abc"`}, []string{`"abcdef"`}, false},
	{"const", `{"const":{"a":[1,{"b":null}]}}`, []string{`{"a":[1,{"b":null}]}`}, []string{`{"a":[1]}`, `{}`}, false},
	{"nullable", `{"type":"string","nullable":true,"maxLength":1}`, []string{`"x"`, `null`}, []string{`"xy"`, `1`}, true},
	{"type array", `{"type":["integer","string"]}`, []string{`1`, `"1"`}, []string{`1.5`, `null`}, false},
	{"integer or number", `{"type":["integer","number"]}`, []string{`1`, `1.5`}, []string{`"1"`}, false},
	{"untyped", `{}`, []string{`1`, `"x"`, `{"a":[null]}`, `[]`}, []string{``, `x`}, false},
	{"true", `true`, []string{`1`, `[{}]`}, nil, false},
	{"inferred object", `{"properties":{"a":{"type":"integer"}},"required":["a"]}`, []string{`{"a":1}`}, []string{`1`, `{}`}, false},
	{"optional members", `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}}}`,
		[]string{`{}`, `{"a":1}`, `{"b":2}`, `{"c":3}`, `{"a":1,"c":3}`, `{"a":1,"b":2,"c":3}`, "{\n  \"a\": 1,\n  \"b\": 2\n}"},
		[]string{`{"b":2,"a":1}`, `{"a":1,}`, `{,"a":1}`, `{"a":1,"a":1}`, `{"d":1}`}, false},
	{"members around required", `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"},"d":{"type":"integer"},"e":{"type":"integer"}},"required":["c","d"]}`,
		[]string{`{"c":3,"d":4}`, `{"a":1,"c":3,"d":4}`, `{"b":2,"c":3,"d":4,"e":5}`, `{"a":1,"b":2,"c":3,"d":4,"e":5}`, `{"a":1 , "c":3,"d":4}`},
		[]string{`{"c":3}`, `{"a":1,"b":2,"d":4}`, `{"a":1,,"c":3,"d":4}`, `{,"c":3,"d":4}`, `{"c":3,"d":4,}`, `{"a":1"c":3,"d":4}`, `{"d":4,"c":3}`}, false},
	{"free object", `{"type":"object"}`, []string{`{}`, `{"x":{"y":[1]}}`}, []string{`[]`, `{"x"}`}, false},
	{"map", `{"type":"object","additionalProperties":{"type":"integer"},"maxProperties":2}`,
		[]string{`{}`, `{"a":1}`, `{"a":1,"b":2}`}, []string{`{"a":"x"}`, `{"a":1,"b":2,"c":3}`}, false},
	{"empty object", `{"type":"object","additionalProperties":false}`, []string{`{}`, `{ }`}, []string{`{"a":1}`}, false},
	{"array", `{"type":"array","items":{"type":"integer","minimum":0,"maximum":9},"minItems":1,"maxItems":3}`,
		[]string{`[1]`, `[1,2,3]`, `[ 0 , 9 ]`}, []string{`[]`, `[1,2,3,4]`, `[10]`, `[1,]`}, false},
	{"array unbounded", `{"type":"array","items":{"type":"string"},"minItems":2}`,
		[]string{`["a","b"]`, `["a","b","c","d"]`}, []string{`["a"]`, `[]`}, false},
	{"free array", `{"type":"array"}`, []string{`[]`, `[1,{"a":[]},"x"]`}, []string{`[1,]`}, false},
	{"tuple", `{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":false,"minItems":1}`,
		[]string{`[1]`, `[1,"a"]`}, []string{`[]`, `["a"]`, `[1,2]`, `[1,"a",3]`}, false},
	{"tuple rest", `{"type":"array","prefixItems":[{"type":"integer"}],"items":{"type":"boolean"}}`,
		[]string{`[]`, `[1]`, `[1,true,false]`}, []string{`[true]`, `[1,2]`}, false},
	{"anyOf", `{"anyOf":[{"type":"integer"},{"type":"object","properties":{"k":{"const":"v"}},"required":["k"]}]}`,
		[]string{`1`, `{"k":"v"}`}, []string{`"v"`, `{"k":"w"}`, `{}`}, false},
	{"oneOf siblings", `{"type":"object","properties":{"kind":{"type":"string"}},"required":["kind"],"oneOf":[{"properties":{"kind":{"const":"a"},"x":{"type":"integer"}},"required":["x"]},{"properties":{"kind":{"const":"b"}}}]}`,
		[]string{`{"kind":"a","x":1}`, `{"kind":"b"}`}, []string{`{"kind":"a"}`, `{"kind":"c"}`, `{"x":1}`}, false},
	{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]}]}`,
		[]string{`{"a":1,"b":"x"}`}, []string{`{"a":1}`, `{"b":"x"}`}, false},
	{"allOf ranges", `{"allOf":[{"type":"integer","minimum":3},{"maximum":5},{"minimum":4}]}`, []string{"4", "5"}, []string{"3", "6"}, false},
	{"ref", `{"$defs":{"pos":{"type":"integer","minimum":1}},"type":"object","properties":{"a":{"$ref":"#/$defs/pos"},"b":{"$ref":"#/$defs/pos","description":"d"}},"required":["a"]}`,
		[]string{`{"a":1,"b":2}`}, []string{`{"a":0}`, `{"b":1}`}, false},
	{"ref escapes", `{"definitions":{"a/b":{"type":"string","maxLength":1},"c~d":{"type":"null"}},"anyOf":[{"$ref":"#/definitions/a~1b"},{"$ref":"#/definitions/c~0d"}]}`,
		[]string{`"x"`, `null`}, []string{`"xy"`, `1`}, false},
	{"ref with siblings", `{"$defs":{"o":{"type":"object","properties":{"a":{"type":"integer"}}}},"$ref":"#/$defs/o","required":["a"]}`,
		[]string{`{"a":1}`}, []string{`{}`}, false},
	{"recursive", `{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#"}},"required":["v"]}`,
		[]string{`{"v":1}`, `{"v":1,"next":{"v":2,"next":{"v":3}}}`}, []string{`{"next":{"v":1}}`, `{"v":1,"next":{}}`}, false},
	{"recursive defs", `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name"]}},"$ref":"#/$defs/node"}`,
		[]string{`{"name":"a","kids":[{"name":"b","kids":[]},{"name":"c"}]}`}, []string{`{"kids":[]}`, `{"name":"a","kids":[{}]}`}, false},
	{"formats", `{"type":"array","prefixItems":[{"type":"string","format":"date-time"},{"type":"string","format":"time"},{"type":"string","format":"uuid"},{"type":"string","format":"email"}],"items":false}`,
		[]string{`["2024-01-31T23:59:59.123+05:30","00:00:00Z","123e4567-e89b-12d3-a456-426614174000","jane.doe@mail.example.com"]`},
		[]string{`["2024-13-01T00:00:00Z"]`, `["2024-04-31T00:00:00Z"]`, `["2024-01-01T24:00:00Z"]`, `["2024-01-01","00:00:00"]`, `["2024-01-01T00:00:00Z","00:00:00Z","123e4567e89b12d3a456426614174000"]`, `["2024-01-01T00:00:00Z","00:00:00Z","123e4567-e89b-12d3-a456-426614174000","jane@"]`}, false},
	{"leap years", `{"type":"string","format":"date"}`,
		[]string{`"2000-02-29"`, `"2024-02-29"`, `"1996-02-29"`, `"0000-02-29"`, `"2023-12-31"`},
		[]string{`"1900-02-29"`, `"2023-02-29"`, `"2023-02-30"`, `"2023-06-31"`, `"2023-00-10"`, `"2023-01-00"`}, false},
	{"pattern anchored", `{"type":"string","pattern":"^[A-Z]{2}-[0-9]{3,4}$"}`,
		[]string{`"AB-123"`, `"XY-9999"`}, []string{`"ab-123"`, `"AB-12"`, `"AB-12345"`, `"xAB-123"`}, false},
	{"pattern contains", `{"type":"string","pattern":"foo|ba+r"}`,
		[]string{`"foo"`, `"xxfooyy"`, `"baaar!"`}, []string{`"fo"`, `"br"`}, false},
	{"pattern classes", `{"type":"string","pattern":"^(?i:ab)[^a-z\"]é\\.$"}`,
		[]string{`"aBXé."`, `"AB\\é."`, `"ab\né."`}, []string{`"abxé."`, `"abXe."`, `"abXé!"`}, false},
}

func TestSchemaMatch(t *testing.T) {
	for _, c := range schemaCases {
		t.Run(c.name, func(t *testing.T) {
			g := schemaGrammar(t, c.schema)
			var orc *jsonschema.Schema
			if !c.noOrc {
				orc = oracle(t, c.schema)
			}
			for _, s := range c.yes {
				if !g.MatchString(s) {
					t.Errorf("%s should match", s)
				}
				if orc != nil {
					if err := validUnder(orc, s); err != nil {
						t.Errorf("test bug: %s is not valid: %v", s, err)
					}
				}
			}
			for _, s := range c.no {
				if g.MatchString(s) {
					t.Errorf("%s should not match", s)
				}
			}
		})
	}
}

// TestSchemaRandomValid walks each schema's grammar at random and checks
// every document it makes with a JSON Schema validator: the grammar
// never allows more than the schema.
func TestSchemaRandomValid(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, c := range schemaCases {
		t.Run(c.name, func(t *testing.T) {
			g := schemaGrammar(t, c.schema)
			var orc *jsonschema.Schema
			if !c.noOrc {
				orc = oracle(t, c.schema)
			}
			for i := 0; i < 30; i++ {
				doc := randomDoc(g, r, 80)
				if !g.MatchString(doc) {
					t.Fatalf("walk made %q, which does not match", doc)
				}
				if !json.Valid([]byte(doc)) {
					t.Fatalf("walk made invalid JSON %q", doc)
				}
				if orc != nil {
					if err := validUnder(orc, doc); err != nil {
						t.Fatalf("walk made %q, invalid under the schema: %v", doc, err)
					}
				}
			}
		})
	}
}

// TestIntRangeExhaustive checks integer ranges against every number
// in a window.
func TestIntRangeExhaustive(t *testing.T) {
	for _, b := range [][2]int64{{13, 205}, {-205, -13}, {-7, 7}, {0, 0}, {0, 1000}, {99, 101}, {-1, 0}, {5, 5}, {1, 9}, {10, 99}} {
		g := mustCompile(t, intRange(b[0], b[1]))
		for v := int64(-1200); v <= 1200; v++ {
			want := b[0] <= v && v <= b[1]
			if got := g.MatchString(fmt.Sprint(v)); got != want {
				t.Errorf("[%d,%d]: %d matched %v", b[0], b[1], v, got)
			}
		}
		for _, s := range []string{"-0", "00", "01", "-01", "+1", ""} {
			if g.MatchString(s) {
				t.Errorf("[%d,%d]: %q matched", b[0], b[1], s)
			}
		}
	}
}

func TestSchemaErrors(t *testing.T) {
	cases := []struct {
		schema, keyword, path string
	}{
		{`{"type":"object","properties":{"x":{"type":"object","minProperties":2,"properties":{"a":{}}}}}`, "minProperties", "/properties/x"},
		{`{"type":"object","patternProperties":{"^a":{}}}`, "patternProperties", ""},
		{`{"type":"object","propertyNames":{"maxLength":3}}`, "propertyNames", ""},
		{`{"type":"object","properties":{"a":{}},"dependentRequired":{"a":["b"]}}`, "dependentRequired", ""},
		{`{"type":"array","uniqueItems":true}`, "uniqueItems", ""},
		{`{"type":"array","contains":{"type":"integer"}}`, "contains", ""},
		{`{"type":"array","items":[{"type":"integer"}]}`, "items", ""},
		{`{"type":"string","format":"hostname"}`, "format", ""},
		{`{"type":"integer","multipleOf":2}`, "multipleOf", ""},
		{`{"type":"number","multipleOf":0.5}`, "multipleOf", ""},
		{`{"type":"number","minimum":0.5}`, "minimum", ""},
		{`{"type":"number","exclusiveMaximum":2.5}`, "exclusiveMaximum", ""},
		{`{"not":{"type":"string"}}`, "not", ""},
		{`{"if":{"type":"string"},"then":{"minLength":1}}`, "if", ""},
		{`{"properties":{"a":{"type":"string","frobnicate":1}}}`, "frobnicate", "/properties/a"},
		{`{"type":"object","properties":{"a":{}},"required":["a","b"]}`, "required", ""},
		{`{"$ref":"https://example.com/s.json"}`, "$ref", ""},
		{`{"$ref":"#/$defs/missing"}`, "$ref", ""},
		{`{"type":"object","properties":{"n":{"$ref":"#"}},"required":["n"]}`, "$ref", ""},
		{`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, "$ref", ""},
		{`{"allOf":[{"type":"string","pattern":"a"},{"pattern":"b"}]}`, "allOf", ""},
		{`{"type":"string","pattern":"\\bword\\b"}`, "pattern", ""},
		{`{"type":"string","pattern":"a^b"}`, "pattern", ""},
		{`{"type":"string","pattern":"(unclosed"}`, "pattern", ""},
		{`{"type":"strin"}`, "type", ""},
		{`{"anyOf":[]}`, "anyOf", ""},
		{`{"type":"array","items":{"type":"array","items":{"unevaluatedItems":false}}}`, "unevaluatedItems", "/items/items"},
		{`{"$defs":{"x":{"type":"string","format":"ipv4"}},"properties":{"p":{"$ref":"#/$defs/x"}}}`, "format", "/$defs/x"},
	}
	for _, c := range cases {
		_, err := Schema([]byte(c.schema), DefaultLimits())
		var se *SchemaError
		if !errors.As(err, &se) {
			t.Errorf("%s: err = %v, want a SchemaError", c.schema, err)
			continue
		}
		if se.Keyword != c.keyword || se.Path != c.path {
			t.Errorf("%s: keyword %q at %q (%v), want %q at %q", c.schema, se.Keyword, se.Path, err, c.keyword, c.path)
		}
	}
	e := &SchemaError{Keyword: "minProperties", Path: "/properties/x", Message: "minProperties is not supported"}
	if got := e.Error(); got != "grammar: schema at /properties/x: minProperties is not supported" {
		t.Errorf("Error() = %q", got)
	}
	for _, none := range []string{`false`, `{"type":"integer","minimum":1e300}`, `{"type":"number","exclusiveMaximum":-1e20}`, `{"type":[]}`, `{"type":"string","enum":[1]}`} {
		if _, err := Schema([]byte(none), DefaultLimits()); err == nil || !strings.Contains(err.Error(), "no document") {
			t.Errorf("%s: err = %v, want no document", none, err)
		}
	}
	for _, bad := range []string{``, `{`, `[1]`, `{"a":1} x`, `{"type":"string","type":"integer"}`} {
		if _, err := Schema([]byte(bad), DefaultLimits()); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// elapsed logs how long f ran. The bound itself is the state limit the
// test asserts; speed is measured by the benchmarks, not by wall-clock
// thresholds, which fail under the race detector on a loaded machine.
func elapsed(t *testing.T, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	t.Logf("%s took %v", what, time.Since(start))
}

func isLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}

func TestSchemaLimits(t *testing.T) {
	lim := DefaultLimits()
	t.Run("deep", func(t *testing.T) {
		s := strings.Repeat(`{"type":"array","items":`, 5000) + `{"type":"integer"}` + strings.Repeat("}", 5000)
		elapsed(t, "5000-deep schema", func() {
			if _, err := Schema([]byte(s), lim); !isLimit(err) {
				t.Errorf("err = %v, want a LimitError", err)
			}
		})
		// 64 levels are fine.
		s = strings.Repeat(`{"type":"array","items":`, 60) + `{"type":"integer"}` + strings.Repeat("}", 60)
		if _, err := Schema([]byte(s), lim); err != nil {
			t.Errorf("60 levels: %v", err)
		}
	})
	t.Run("big enum", func(t *testing.T) { limitBigEnum(t, lim) })
	t.Run("enum trie", func(t *testing.T) {
		var vals []string
		for i := range 2000 {
			vals = append(vals, fmt.Sprintf(`"item-%04d"`, i))
		}
		g := schemaGrammar(t, `{"enum":[`+strings.Join(vals, ",")+`]}`)
		if n := int(g.d.n.size); n > 8000 {
			t.Errorf("2000 shared-prefix values: %d states", n)
		}
		if !g.MatchString(`"item-1234"`) || g.MatchString(`"item-2000"`) {
			t.Error("trie matched wrongly")
		}
	})
	t.Run("pattern blowup", func(t *testing.T) {
		for _, p := range []string{`(a{100}){100}`, `\\p{L}{1000}`, `(((a{30}){30}){30})`} {
			elapsed(t, p, func() {
				_, err := Schema([]byte(`{"type":"string","pattern":"`+p+`"}`), lim)
				if !isLimit(err) {
					t.Errorf("%s: err = %v, want a LimitError", p, err)
				}
			})
		}
	})
	t.Run("1000 tools", func(t *testing.T) { limitManyTools(t, lim) })
	t.Run("exponential refs", func(t *testing.T) {
		defs := []string{`"d0":{"type":"integer"}`}
		for i := 1; i <= 40; i++ {
			defs = append(defs, fmt.Sprintf(`"d%d":{"type":"array","prefixItems":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i-1, i-1))
		}
		s := `{"$defs":{` + strings.Join(defs, ",") + `},"$ref":"#/$defs/d40"}`
		elapsed(t, "2^40 refs", func() {
			if _, err := Schema([]byte(s), lim); !isLimit(err) {
				t.Errorf("err = %v, want a LimitError", err)
			}
		})
	})
	t.Run("long string", func(t *testing.T) {
		if _, err := Schema([]byte(`{"type":"string","maxLength":100000000}`), lim); !isLimit(err) {
			t.Errorf("err = %v, want a LimitError", err)
		}
	})
}

// limitBigEnum checks that a 100k-value enum compiles or hits a limit,
// quickly.
func limitBigEnum(t *testing.T, lim Limits) {
	var b strings.Builder
	b.WriteString(`{"type":"string","enum":[`)
	for i := range 100_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"value-%d"`, i)
	}
	b.WriteString("]}")
	elapsed(t, "100k enum", func() {
		x, err := Schema([]byte(b.String()), lim)
		if err == nil {
			_, err = Compile(nil, x, lim)
		}
		if err != nil && !isLimit(err) {
			t.Errorf("err = %v, want a LimitError or none", err)
		}
	})
}

// limitManyTools checks that an anyOf of 1000 tool schemas compiles or
// hits a limit, quickly.
func limitManyTools(t *testing.T, lim Limits) {
	var tools []string
	for i := range 1000 {
		tools = append(tools, strings.ReplaceAll(toolSchema, `"location"`, fmt.Sprintf(`"location%d"`, i)))
	}
	s := `{"anyOf":[` + strings.Join(tools, ",") + `]}`
	elapsed(t, "1000 tools", func() {
		x, err := Schema([]byte(s), lim)
		if err == nil {
			_, err = Compile(nil, x, lim)
		}
		if err != nil && !isLimit(err) {
			t.Errorf("err = %v, want a LimitError or none", err)
		}
	})
}

func TestSchemaPropertyOrder(t *testing.T) {
	g := schemaGrammar(t, `{"type":"object","properties":{"z":{"const":1},"a":{"const":2},"m":{"const":3}},"required":["z","a","m"]}`)
	if got := g.Shortest(""); got != `{"z":1,"a":2,"m":3}` {
		t.Errorf("Shortest = %s", got)
	}
}

func TestSchemaObject(t *testing.T) {
	props, err := SchemaObject([]byte(`{"type":"object","$defs":{"u":{"type":"string","enum":["c","f"]}},
		"properties":{"city":{"type":"string","maxLength":5},"unit":{"$ref":"#/$defs/u"},"n":{"type":"integer"},"when":{"type":"string","format":"date"}},
		"required":["city"]}`), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name string
		req  bool
		raw  bool
	}{{"city", true, true}, {"unit", false, true}, {"n", false, false}, {"when", false, true}}
	if len(props) != len(want) {
		t.Fatalf("%d props", len(props))
	}
	for i, w := range want {
		p := props[i]
		if p.Name != w.name || p.Required != w.req || (p.Raw != nil) != w.raw || p.Value == nil {
			t.Errorf("prop %d = %+v, want %+v", i, p, w)
		}
	}
	raw := mustCompile(t, props[0].Raw)
	for s, ok := range map[string]bool{"Paris": true, "": true, "a<b": false, "a\nb": true, "a\x01b": false, "toolong": false, "é€𝄞": true, `a"b`: true} {
		if raw.MatchString(s) != ok {
			t.Errorf("raw city %q: match %v", s, !ok)
		}
	}
	val := mustCompile(t, props[0].Value)
	if !val.MatchString(`"a\"b"`) || val.MatchString(`a`) {
		t.Error("city value wrong")
	}
	unit := mustCompile(t, props[1].Raw)
	if !unit.MatchString("c") || unit.MatchString(`"c"`) || unit.MatchString("x") {
		t.Error("unit raw wrong")
	}
	for _, empty := range []string{``, `{}`, `true`, `{"type":"object"}`} {
		if props, err := SchemaObject([]byte(empty), DefaultLimits()); err != nil || len(props) != 0 {
			t.Errorf("%q: %v, %v", empty, props, err)
		}
	}
	for _, bad := range []string{`{"type":"string"}`, `{"type":"object","properties":{"a":{}},"required":["b"]}`, `{"anyOf":[{"type":"object"}]}`} {
		if _, err := SchemaObject([]byte(bad), DefaultLimits()); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// tenTools is a realistic tool set: ten tools, each an object of five
// arguments of mixed types with an enum, a nested object and an array.
func tenTools() []byte {
	var tools []string
	for i := range 10 {
		tools = append(tools, fmt.Sprintf(`{"type":"object","properties":{
			"name":{"type":"const","const":"tool_%d"},
			"arguments":{"type":"object","properties":{
				"query":{"type":"string","maxLength":64},
				"mode":{"type":"string","enum":["fast","balanced","thorough"]},
				"limit":{"type":"integer","minimum":1,"maximum":100},
				"filter":{"type":"object","properties":{"field":{"type":"string"},"value":{"type":["string","number","null"]}},"required":["field"]},
				"ids":{"type":"array","items":{"type":"integer"},"maxItems":20}
			},"required":["query"],"additionalProperties":false}},
			"required":["name","arguments"]}`, i))
	}
	return []byte(strings.ReplaceAll(`{"anyOf":[`+strings.Join(tools, ",")+`]}`, `"type":"const",`, ""))
}

// TestTenToolsStates pins the size of the benchmark's grammar: about
// 61,000 states, under a third of DefaultLimits().MaxStates (most of it
// the 64-character string and the 20-item array of each tool).
func TestTenToolsStates(t *testing.T) {
	schema := tenTools()
	if !json.Valid(schema) {
		t.Fatal("bad schema")
	}
	g := schemaGrammar(t, string(schema))
	n := int(g.d.n.size)
	t.Logf("ten tools: %d states", n)
	if n > 70_000 {
		t.Errorf("ten tools: %d states", n)
	}
	if !g.MatchString(`{"name":"tool_3","arguments":{"query":"x","mode":"fast","ids":[1,2]}}`) || g.MatchString(`{"name":"tool_10","arguments":{"query":"x"}}`) {
		t.Error("ten tools matched wrongly")
	}
}

func BenchmarkSchemaCompile(b *testing.B) {
	schema := tenTools()
	b.ReportAllocs()
	for b.Loop() {
		x, err := Schema(schema, DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Compile(nil, x, DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
}
