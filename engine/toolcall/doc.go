// Package toolcall parses a model's output, as it is generated, into
// OpenAI tool calls: content, reasoning, and for each call a CallBegin
// (index, id, name), CallArgs fragments that make its JSON arguments,
// and a CallEnd, the order of the stream deltas of OpenAI's chat API.
//
// Each model family writes calls its own way (family.go): Hermes (Qwen2.5,
// Qwen3, the default ChatML template) a JSON object within <tool_call>
// tags, QwenXML (Qwen3.5, Qwen3-Coder) <function=...> and <parameter=...>
// elements whose raw values the tool's JSON Schema types (schema.go),
// Llama3 (Llama 3.1 to 3.3) a bare JSON object, after <|python_tag|> or
// not, several separated by ';'. Detect reads the family from a chat
// template; Openers are what begins a call, for a lazy grammar's trigger.
//
// A Parser reads fragments split anywhere (text.go reads content and
// finds the markers, jsoncall.go and xmlcall.go read the calls, a byte at
// a time where JSON is checked, by scanner.go). It holds back only what
// may still begin a marker or end a value, and what the events say is the
// same however the output is split. Its choices:
//
//   - A call begins (CallBegin) once its name is read and is one of the
//     request's tools. Before that, text that turns out not to be a call
//     (an unknown name, a body that is not JSON or XML, the end of the
//     output) is content, and is read again for markers from where it
//     failed.
//   - Once begun, a call stays a call: arguments stream while they are
//     complete-able JSON, and if the JSON breaks off or turns malformed
//     they are closed there (an open string, the open objects and arrays)
//     so that Arguments is always a JSON object; the text from the fault
//     on is content.
//   - <think> at the very start of the output, or Options.Thinking (the
//     prompt opened it), makes the text reasoning until </think>. A call
//     inside a think section is a call, not reasoning (a model that calls
//     before closing its reasoning still calls): reasoning resumes after
//     it.
//   - White space after </think> and after a call is dropped: it is the
//     layout of the markup, not text for the client.
//   - Inside <tool_call>, Hermes and QwenXML read both bodies, JSON and
//     XML, whichever the model wrote.
//
// Memory is bounded whatever the model writes (the limits in parser.go):
// names, held text and buffered values have caps past which the text is
// not a call, or a value is a string. A Parser is not safe for concurrent
// use; the package starts no goroutines.
package toolcall
