package toolcall_test

import (
	"fmt"

	"github.com/kiln-ai/kiln/engine/toolcall"
)

// A Qwen2.5 model's output arrives a token at a time; the parser streams
// the text, then the call as its arguments arrive (a key waits for its
// value, so that the arguments so far can always be closed).
func ExampleParser() {
	tools := []toolcall.Tool{{Name: "get_weather"}}
	p := toolcall.NewParser(toolcall.Hermes, tools, toolcall.Options{NewID: func() string { return "call_1" }})
	for _, tok := range []string{"Checking", ".\n", "<tool", "_call>\n", `{"name": "get_weather", `, `"arguments": {"city": `, `"Paris"}}`, "\n</tool_call>"} {
		for _, e := range p.Push(tok) {
			fmt.Printf("%s %d %q %q\n", e.Kind, e.Index, e.Name, e.Text)
		}
	}
	p.Flush()
	fmt.Printf("%+v\n", p.Calls())
	// Output:
	// content 0 "" "Checking"
	// content 0 "" ".\n"
	// call_begin 0 "get_weather" ""
	// call_args 0 "" "{"
	// call_args 0 "" "\"city\": \"Paris\"}"
	// call_end 0 "" ""
	// [{ID:call_1 Name:get_weather Arguments:{"city": "Paris"}}]
}

func ExampleDetect() {
	f := toolcall.Detect("... <tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1> ...")
	fmt.Println(f, f.Openers())
	// Output: qwen_xml [<tool_call>]
}
