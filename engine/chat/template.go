package chat

import (
	"errors"
	"fmt"
	"time"

	"github.com/ardanlabs/jinja"
)

// Message is one turn of a conversation, as OpenAI's chat API carries it:
// a role (system, user, assistant, tool) and a content, and for tool
// calling the calls an assistant turn made and the call a tool message
// answers. The template sees it as transformers and vLLM give it (see
// tools.go): keys it does not have are not defined.
type Message struct {
	Role, Content string
	// NullContent says the content is null rather than text (an
	// assistant turn of only tool calls, "content": null): the template
	// sees none. Content is then "".
	NullContent bool
	// ToolCalls are the calls of an assistant turn (tool_calls).
	ToolCalls []ToolCall
	// ToolCallID is the id of the call a tool message answers
	// (tool_call_id).
	ToolCallID string
	// Name is the author's name (name); for a tool message, the
	// function's.
	Name string
}

// Options are the values a template sees besides the messages.
type Options struct {
	// BOS and EOS are the tokenizer's begin- and end-of-sequence strings
	// (bos_token, eos_token).
	BOS, EOS string
	// AddGenerationPrompt ends the prompt with the opening of an
	// assistant turn (add_generation_prompt).
	AddGenerationPrompt bool
	// Now is the time strftime_now reports (Llama 3.x puts today's date
	// in its system header); the zero value means time.Now().
	Now time.Time
	// Tools are the functions the model may call (tools); none when
	// empty, as transformers passes a request without tools.
	Tools []ToolSpec
	// Kwargs are extra template variables, as transformers'
	// apply_chat_template **kwargs and llama-server's
	// chat_template_kwargs pass them: for example enable_thinking false
	// for Qwen3. Values are strings, bools, numbers, nil, and slices and
	// maps of those. They cannot replace the variables above, messages,
	// tools or documents.
	Kwargs map[string]any
}

// ErrTemplate is wrapped by every error from Parse and Render that comes
// from the template itself: a syntax error, an undefined operation, or a
// failure inside the template engine. It is a defect of the model's
// template, not of the request.
var ErrTemplate = errors.New("chat template error")

// ErrRejected is wrapped when the template called raise_exception: it
// refuses the conversation (roles that do not alternate, a system message
// it does not support). It is a defect of the request; the error text is
// the template's message.
var ErrRejected = errors.New("chat template rejected the conversation")

// RejectedError carries the message a template passed to raise_exception.
type RejectedError struct {
	Message string
}

func (e *RejectedError) Error() string { return "chat template: " + e.Message }

// Unwrap makes a RejectedError match ErrRejected.
func (e *RejectedError) Unwrap() error { return ErrRejected }

// Template is a compiled chat template. It is immutable and safe for
// concurrent use.
type Template struct {
	src string
	t   *jinja.Template
}

// Parse compiles a Jinja chat template as stored in tokenizer.chat_template
// or a Hugging Face tokenizer_config.json, and renders a probe conversation
// with it (see probe.go), so that a template the engine cannot render is
// refused when the model loads rather than at its first request. Every
// error wraps ErrTemplate.
func Parse(src string) (*Template, error) {
	t, err := compile(src)
	if err != nil {
		return nil, err
	}
	if err := t.probe(); err != nil {
		return nil, err
	}
	return t, nil
}

// compile is Parse without the probe.
func compile(src string) (t *Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("chat: parse: template engine panicked: %v: %w", r, ErrTemplate)
		}
	}()
	jt, err := jinja.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("chat: parse: %w: %w", err, ErrTemplate)
	}
	return &Template{src: src, t: jt}, nil
}

// Source is the template's Jinja source.
func (t *Template) Source() string { return t.src }

// Render formats msgs with the template. A template that calls
// raise_exception yields an error wrapping ErrRejected (a *RejectedError);
// tool-call arguments or tool parameters that are not a JSON object an
// *InputError; any other failure wraps ErrTemplate. A panic inside the
// template engine is recovered and reported as an ErrTemplate error.
func (t *Template) Render(msgs []Message, opt Options) (string, error) {
	return t.render(msgs, opt, nil)
}

// render is Render with the request's strings going through r (see
// recorder).
func (t *Template) render(msgs []Message, opt Options, r *recorder) (out string, err error) {
	var raised *RejectedError
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("chat: render: template engine panicked: %v: %w", p, ErrTemplate)
		}
	}()
	data, err := variables(msgs, opt, r, &raised)
	if err != nil {
		return "", err
	}
	s, err := t.t.RenderValues(data)
	if raised != nil {
		return "", raised
	}
	if err != nil {
		return "", fmt.Errorf("chat: render: %w: %w", err, ErrTemplate)
	}
	return s, nil
}

// variables are the names a template sees, as transformers'
// apply_chat_template defines them, the request's strings going through r.
// raise_exception records its message in *raised.
func variables(msgs []Message, opt Options, r *recorder, raised **RejectedError) (map[string]jinja.Value, error) {
	messages, tools, err := input(msgs, opt.Tools, r)
	if err != nil {
		return nil, err
	}
	data := make(map[string]jinja.Value, len(opt.Kwargs)+8)
	for k, v := range opt.Kwargs {
		data[k] = jinja.FromGoValue(v)
	}
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	data["messages"] = messages
	data["bos_token"] = jinja.NewString(opt.BOS)
	data["eos_token"] = jinja.NewString(opt.EOS)
	data["add_generation_prompt"] = jinja.NewBool(opt.AddGenerationPrompt)
	// tools is none without tools, as transformers passes it.
	data["tools"] = tools
	data["documents"] = jinja.None()
	// Shadows the engine's builtin, which reads the wall clock.
	data["strftime_now"] = jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		if len(args) != 1 || !args[0].IsString() {
			return jinja.Undefined(), errors.New("strftime_now takes one format string")
		}
		return jinja.NewString(strftime(args[0].AsString(), now)), nil
	})
	// Shadows the engine's builtin so that a refusal can be told apart
	// from a broken template whatever the engine does with the error.
	data["raise_exception"] = jinja.NewCallable("raise_exception", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		msg := "raise_exception called"
		switch {
		case len(args) > 0 && args[0].IsString():
			msg = args[0].AsString()
		case len(args) > 0:
			msg = args[0].String()
		}
		*raised = &RejectedError{Message: msg}
		return jinja.Undefined(), *raised
	})
	return data, nil
}
