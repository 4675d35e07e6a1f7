// Package chat renders chat conversations into prompt text with the Jinja
// chat templates that models carry (tokenizer.chat_template in GGUF, the
// chat_template of a Hugging Face tokenizer_config.json), as
// transformers' apply_chat_template does: trim_blocks and lstrip_blocks on,
// and the variables messages (a list of {role, content}, with tool_calls,
// tool_call_id and name where a message has them), bos_token, eos_token,
// add_generation_prompt, tools (Options.Tools; none without), documents
// (none), the functions raise_exception and strftime_now (on an
// injectable clock, Options.Now: Llama 3.x dates its system header), and
// any extra variables a request passes (Options.Kwargs: enable_thinking
// for Qwen3).
//
// Tool calling (tools.go) reaches the template in the OpenAI shape that
// the models' authors wrote their templates for, as transformers and vLLM
// give it: a tool is {type: "function", function: {name, description,
// parameters}}, an assistant's call {id, type: "function", function:
// {name, arguments}}, with the parameters and the arguments dicts parsed
// from their JSON text (keys in the order written), and a tool message
// carries tool_call_id. Parsing a model's calls out of its output is
// engine/toolcall's work.
//
// Parse is the constructor model loaders use. Besides compiling the
// template it renders a probe conversation (system, user, assistant, user,
// generation prompt; without the system message for templates that refuse
// one) and refuses a template that fails or drops the user's message, so
// a template the engine cannot render stops the server at start-up, not at
// the first request.
//
// Templates are evaluated by github.com/ardanlabs/jinja, a pure-Go Jinja
// engine written for LLM chat templates. A Template is immutable after Parse
// and safe for concurrent Render calls. ChatML (chatml.go) is the default
// for models without a template; it renders tools in Qwen2.5's Hermes
// layout.
//
// RenderSpans (spans.go) also reports where the request's strings lie in
// the rendered prompt (contents, tool results, calls' arguments, tools'
// descriptions and schemas), so that the server tokenizes them as plain
// text and a user cannot forge control tokens (tokenizer.EncodeTemplated).
// EncodePrompt (prompt.go) renders and tokenizes a conversation's prompt
// that way: the one encoding the server's chat route, kiln generate --chat
// and the trainer share.
//
// The package starts no goroutines.
package chat
