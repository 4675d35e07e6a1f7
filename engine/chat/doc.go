// Package chat renders chat conversations into prompt text with the Jinja
// chat templates that models carry (tokenizer.chat_template in GGUF, the
// chat_template of a Hugging Face tokenizer_config.json), as
// transformers' apply_chat_template does: trim_blocks and lstrip_blocks on,
// and the variables messages (a list of {role, content}), bos_token,
// eos_token, add_generation_prompt and the function raise_exception.
//
// Templates are evaluated by github.com/ardanlabs/jinja, a pure-Go Jinja
// engine written for LLM chat templates. A Template is immutable after Parse
// and safe for concurrent Render calls. ChatML is the default for models
// without a template.
//
// The package starts no goroutines.
package chat
