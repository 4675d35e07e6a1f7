package toolcall

import "strings"

// Family is a way models write tool calls.
type Family int

const (
	// Hermes is the JSON call of Qwen2.5, Qwen3 and generic ChatML
	// models: <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>,
	// possibly several, with text before and after.
	Hermes Family = iota
	// QwenXML is the XML call of Qwen3.5 and Qwen3-Coder:
	// <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>
	// ...\n</function>\n</tool_call>, the values raw text that the tool's
	// JSON Schema types.
	QwenXML
	// Llama3 is the JSON call of Llama 3.1, 3.2 and 3.3:
	// {"name": ..., "parameters": {...}}, possibly after <|python_tag|>,
	// several separated by ';'.
	Llama3
)

// String is the family's name: "hermes", "qwen_xml" or "llama3".
func (f Family) String() string {
	switch f {
	case QwenXML:
		return "qwen_xml"
	case Llama3:
		return "llama3"
	}
	return "hermes"
}

// Detect is the family of the calls a model writes, read from its chat
// template, which shows the model the format: Qwen3.5's and
// Qwen3-Coder's write <function=, Hermes templates <tool_call>, Llama
// 3.x's <|python_tag|>, or "parameters" with the ipython role or
// <|eom_id|>. Hermes, the layout of the default ChatML template, is the
// default.
func Detect(chatTemplateSource string) Family {
	has := func(s string) bool { return strings.Contains(chatTemplateSource, s) }
	switch {
	case has("<function="):
		return QwenXML
	case has("<tool_call>"):
		return Hermes
	case has("<|python_tag|>"), has(`"parameters"`) && (has("<|eom_id|>") || has("ipython")):
		return Llama3
	}
	return Hermes
}

// Markers the parser reads.
const (
	toolCallOpen  = "<tool_call>"
	toolCallClose = "</tool_call>"
	pythonTag     = "<|python_tag|>"
	llamaOpen     = `{"name"`
	thinkOpen     = "<think>"
	thinkClose    = "</think>"
	functionOpen  = "<function="
	functionClose = "</function>"
	paramOpen     = "<parameter="
	paramClose    = "</parameter>"
)

// Openers are the strings that begin a call in the family's output, for a
// grammar that constrains the output only once one appears (a lazy
// grammar's trigger): "<tool_call>" for Hermes and QwenXML, `{"name"` and
// "<|python_tag|>" for Llama3.
func (f Family) Openers() []string {
	if f == Llama3 {
		return []string{llamaOpen, pythonTag}
	}
	return []string{toolCallOpen}
}
