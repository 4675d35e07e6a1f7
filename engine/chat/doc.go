// Package chat renders chat conversations into prompt text with the Jinja
// chat templates that models carry (tokenizer.chat_template in GGUF, the
// chat_template of a Hugging Face tokenizer_config.json), as
// transformers' apply_chat_template does: trim_blocks and lstrip_blocks on,
// and the variables messages (a list of {role, content}), bos_token,
// eos_token, add_generation_prompt, tools and documents (none), the
// functions raise_exception and strftime_now (on an injectable clock,
// Options.Now: Llama 3.x dates its system header), and any extra variables
// a request passes (Options.Kwargs: enable_thinking for Qwen3).
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
// and safe for concurrent Render calls. ChatML is the default for models
// without a template.
//
// RenderSpans (spans.go) also reports where the messages' contents lie in
// the rendered prompt, so that the server tokenizes them as plain text and
// a user cannot forge control tokens (tokenizer.EncodeTemplated).
// EncodePrompt (prompt.go) renders and tokenizes a conversation's prompt
// that way: the one encoding the server's chat route, kiln generate --chat
// and the trainer share.
//
// The package starts no goroutines.
package chat
